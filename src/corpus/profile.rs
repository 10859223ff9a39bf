//! Dolan-Moré performance profiles (Dolan & Moré 2002; used for contact solvers by Acary,
//! Brémond & Huber 2018): with `t_{p,s}` the time solver `s` takes to solve problem `p`
//! (∞ when it does not), the ratio `r_{p,s} = t_{p,s} / min_s t_{p,s}` and the profile
//! `ρ_s(τ) = |{p : r_{p,s} ≤ τ}| / |P|`, the share of problems `s` solves within `τ` times
//! the best time. `ρ_s(1)` is the share where `s` is fastest; `ρ_s(∞)` the share it solves.

use std::path::Path;
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::CorpusError;

/// Times below this (s) count as this, so that a zero-time answer keeps finite ratios.
const TIME_FLOOR: f64 = 1e-9;
/// Figure size (pixels).
const SIZE: (u32, u32) = (1200, 600);
/// Font family of the figure (the embedded Ubuntu Light).
const FONT: &str = "sans-serif";

/// Performance ratios `r_{p,s}` from `times[p][s]` (`None`: not solved): one vector per
/// solver, one entry per problem, `f64::INFINITY` where not solved (also when no solver
/// solved the problem, which still counts in `|P|`).
pub fn performance_ratios(times: &[Vec<Option<f64>>], solvers: usize) -> Vec<Vec<f64>> {
    let mut ratios = vec![Vec::with_capacity(times.len()); solvers];
    for row in times {
        let best = row
            .iter()
            .flatten()
            .map(|t| t.max(TIME_FLOOR))
            .fold(f64::INFINITY, f64::min);
        for (s, ratio) in ratios.iter_mut().enumerate() {
            let r = match row.get(s).copied().flatten() {
                Some(t) => t.max(TIME_FLOOR) / best,
                None => f64::INFINITY,
            };
            ratio.push(r);
        }
    }
    ratios
}

/// `ρ(τ)`: the share of problems solved with ratio at most `τ` (an unsolved problem, ratio
/// ∞, never counts, even at `τ = ∞`).
pub fn share_within(ratios: &[f64], tau: f64) -> f64 {
    if ratios.is_empty() {
        return 0.0;
    }
    let within = ratios
        .iter()
        .filter(|r| r.is_finite() && **r <= tau)
        .count();
    within as f64 / ratios.len() as f64
}

/// The staircase of `ρ` from `τ = 1` to `tau_max`: one point before and after each jump.
pub fn staircase(ratios: &[f64], tau_max: f64) -> Vec<(f64, f64)> {
    let mut finite: Vec<f64> = ratios.iter().copied().filter(|r| r.is_finite()).collect();
    finite.sort_by(f64::total_cmp);
    let n = ratios.len().max(1) as f64;
    let mut points = vec![(1.0, 0.0)];
    for (k, r) in finite.iter().enumerate() {
        points.push((*r, k as f64 / n));
        points.push((*r, (k + 1) as f64 / n));
    }
    points.push((tau_max, finite.len() as f64 / n));
    points
}

/// Twelve distinguishable colours (matplotlib's tab10, black, dark goldenrod).
const COLORS: [RGBColor; 12] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(0, 0, 0),
    RGBColor(184, 134, 11),
];

/// Dash pattern (dash, gap in pixels) of solver `i`; `None` is a solid line. The pattern
/// shifts each time the colours wrap, so that solver 12 never looks like solver 0.
fn dash(i: usize) -> Option<(u32, u32)> {
    [None, Some((12, 6)), Some((3, 4))][(i + i / COLORS.len()) % 3]
}

/// Draws the profiles of `solvers` (ratios per solver) into `<stem>.png` and `<stem>.svg`.
pub fn plot_profile(
    stem: &Path,
    title: &str,
    solvers: &[String],
    ratios: &[Vec<f64>],
) -> Result<(), CorpusError> {
    ensure_font(stem)?;
    let png = stem.with_extension("png");
    let svg = stem.with_extension("svg");
    let fail = |path: &Path, e: String| CorpusError::Plot {
        path: path.to_path_buf(),
        message: e,
    };
    {
        let area = BitMapBackend::new(&png, SIZE).into_drawing_area();
        draw(&area, title, solvers, ratios).map_err(|e| fail(&png, e))?;
        area.present().map_err(|e| fail(&png, e.to_string()))?;
    }
    let area = SVGBackend::new(&svg, SIZE).into_drawing_area();
    draw(&area, title, solvers, ratios).map_err(|e| fail(&svg, e))?;
    area.present().map_err(|e| fail(&svg, e.to_string()))
}

fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    solvers: &[String],
    ratios: &[Vec<f64>],
) -> Result<(), String> {
    area.fill(&WHITE).map_err(|e| e.to_string())?;
    let (plot, legend) = area.split_horizontally(SIZE.0 - LEGEND_WIDTH);
    let largest = ratios
        .iter()
        .flatten()
        .copied()
        .filter(|r| r.is_finite())
        .fold(1.0, f64::max);
    let tau_max = (largest * 2.0).max(10.0);
    let mut chart = ChartBuilder::on(&plot)
        .caption(title, (FONT, 20))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d((1.0..tau_max).log_scale(), 0.0..1.02)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc("τ (within τ × the best solver's time, log scale)")
        .y_desc("share of problems solved")
        .label_style((FONT, 15))
        .axis_desc_style((FONT, 16))
        .draw()
        .map_err(|e| e.to_string())?;
    for (i, r) in ratios.iter().enumerate() {
        let style = line_style(i);
        let points = staircase(r, tau_max);
        match dash(i) {
            None => chart.draw_series(LineSeries::new(points, style)),
            Some((d, g)) => chart.draw_series(DashedLineSeries::new(points, d, g, style)),
        }
        .map_err(|e| e.to_string())?;
    }
    for (i, (name, r)) in solvers.iter().zip(ratios).enumerate() {
        let y = 50 + 26 * i as i32;
        let segment = vec![(8, y), (44, y)];
        match dash(i) {
            None => legend.draw(&PathElement::new(segment, line_style(i))),
            Some((d, g)) => legend.draw(&DashedPathElement::new(segment, d, g, line_style(i))),
        }
        .map_err(|e| e.to_string())?;
        let solved = r.iter().filter(|v| v.is_finite()).count();
        let text = format!("{name} ({solved}/{})", r.len());
        legend
            .draw(&Text::new(text, (52, y - 8), (FONT, 14)))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Width of the legend panel right of the plot (pixels).
const LEGEND_WIDTH: u32 = 300;

fn line_style(i: usize) -> ShapeStyle {
    ShapeStyle::from(&COLORS[i % COLORS.len()]).stroke_width(2)
}

/// Registers the embedded font once (ab_glyph has no system fonts).
fn ensure_font(path: &Path) -> Result<(), CorpusError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, epaint_default_fonts::UBUNTU_LIGHT)
            .is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(CorpusError::Plot {
            path: path.to_path_buf(),
            message: "the embedded font could not be loaded".into(),
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn no_two_of_the_first_36_solvers_look_alike() {
        let looks: Vec<_> = (0..36)
            .map(|i| (super::COLORS[i % super::COLORS.len()], super::dash(i)))
            .collect();
        for (i, a) in looks.iter().enumerate() {
            assert!(looks[..i].iter().all(|b| b != a), "solver {i}");
        }
    }

    use super::*;

    #[test]
    fn ratios_and_shares_by_hand() {
        // Problem 1: s0 in 1 s, s1 in 2 s. Problem 2: s0 fails, s1 in 3 s. Problem 3: none.
        let times = vec![
            vec![Some(1.0), Some(2.0)],
            vec![None, Some(3.0)],
            vec![None, None],
        ];
        let r = performance_ratios(&times, 2);
        assert_eq!(r[0], vec![1.0, f64::INFINITY, f64::INFINITY]);
        assert_eq!(r[1], vec![2.0, 1.0, f64::INFINITY]);
        assert_eq!(share_within(&r[0], 1.0), 1.0 / 3.0);
        assert_eq!(share_within(&r[1], 1.0), 1.0 / 3.0);
        assert_eq!(share_within(&r[1], 2.0), 2.0 / 3.0);
        assert_eq!(share_within(&r[1], f64::INFINITY), 2.0 / 3.0);
    }
}
