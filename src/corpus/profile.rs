//! Dolan-Moré performance profiles (Dolan & Moré 2002; used for contact solvers by Acary,
//! Brémond & Huber 2018): with `t_{p,s}` the time solver `s` takes to solve problem `p`
//! (∞ when it does not), the ratio `r_{p,s} = t_{p,s} / min_s t_{p,s}` and the profile
//! `ρ_s(τ) = |{p : r_{p,s} ≤ τ}| / |P|`, the share of problems `s` solves within `τ` times
//! the best time. `ρ_s(1)` is the share where `s` is fastest; `ρ_s(∞)` the share it solves.

use std::path::Path;

use super::CorpusError;
use crate::report::axis::Scale;
use crate::report::chart::{render, Curve, Figure, LineChart, Panel};
use crate::report::style::distinct_styles;

/// Times below this (s) count as this, so that a zero-time answer keeps finite ratios.
const TIME_FLOOR: f64 = 1e-9;
/// Figure size (pixels).
const SIZE: (u32, u32) = (1200, 600);

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

/// Draws the profiles of `solvers` (ratios per solver) into `<stem>.svg`, `.png` and
/// `.pdf`: τ on a log axis, one curve per solver in its style of every other figure
/// ([`distinct_styles`]: two settings of one solver never look alike), the legend saying
/// how many problems each solved.
pub fn plot_profile(
    stem: &Path,
    title: &str,
    solvers: &[String],
    ratios: &[Vec<f64>],
) -> Result<(), CorpusError> {
    let largest = ratios
        .iter()
        .flatten()
        .copied()
        .filter(|r| r.is_finite())
        .fold(1.0, f64::max);
    let tau_max = (largest * 2.0).max(10.0);
    let curves = solvers
        .iter()
        .zip(ratios)
        .zip(distinct_styles(solvers))
        .map(|((name, r), style)| {
            let solved = r.iter().filter(|v| v.is_finite()).count();
            let label = format!("{name} ({solved}/{} solved)", r.len());
            Curve::styled(label, staircase(r, tau_max), style)
        })
        .collect();
    let chart = LineChart {
        title: title.to_string(),
        x_label: "τ, time within τ × the best solver's".into(),
        y_label: "share of problems solved".into(),
        x_scale: Scale::Log,
        y_scale: Scale::Linear,
        curves,
        y_range: Some((0.0, 1.02)),
        ..LineChart::default()
    };
    let mut figure = Figure::single(Panel::Line(chart));
    figure.panel_size = SIZE;
    let dir = stem.parent().unwrap_or(Path::new("."));
    let name = stem
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "profile".into());
    render(&figure, dir, &name).map_err(|e| CorpusError::Plot {
        path: stem.to_path_buf(),
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
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
