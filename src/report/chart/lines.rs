//! Line charts: curves cut at their gaps, decimated (min/max per bucket), clipped to the
//! plotting area in data space, coinciding curves marked, the legend placed where it hides
//! no data.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::legend::{draw_legend, legend_size, place_legend, LegendEntry, LegendPlace};
use super::strokes::{draw_marker, draw_pixel_path};
use super::{Curve, LineChart, FONT, MARGIN, X_LABEL_AREA, Y_LABEL_AREA};
use crate::report::axis::{data_range, format_value, AxisLayout, Scale, TickedRange};
use crate::report::style::{separate, LineStyle};

/// Largest number of points drawn per curve (min/max decimation beyond).
const MAX_POINTS: usize = 3000;
/// Two curves closer than this fraction of the axis spans everywhere coincide.
const COINCIDENCE: f64 = 2e-3;
/// Points at which a curve may leave another and still be drawn as coinciding with it.
const MAX_DIFFERING: usize = 2;

/// A curve in plotted coordinates, split at its gaps, decimated.
struct Prepared {
    label: String,
    style: LineStyle,
    marked: bool,
    /// Runs of drawable points.
    runs: Vec<Vec<(f64, f64)>>,
    /// The curve this one coincides with, if any: its index and how many of this
    /// curve's points differ from it (at most [`MAX_DIFFERING`] of them).
    same_as: Option<(usize, usize)>,
}

fn prepare(curve: &Curve, x: &AxisLayout, y: &AxisLayout) -> Prepared {
    let mut runs: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut run: Vec<(f64, f64)> = Vec::new();
    for &(px, py) in &curve.points {
        match (x.to_plot(px), y.to_plot(py)) {
            (Some(a), Some(b)) => run.push((a, b)),
            _ => {
                if !run.is_empty() {
                    runs.push(std::mem::take(&mut run));
                }
            }
        }
    }
    if !run.is_empty() {
        runs.push(run);
    }
    let total: usize = runs.iter().map(Vec::len).sum();
    if total > MAX_POINTS {
        let buckets_per_point = MAX_POINTS as f64 / total as f64;
        runs = runs
            .into_iter()
            .map(|r| {
                let buckets = ((r.len() as f64 * buckets_per_point).ceil() as usize).max(1);
                decimate(&r, buckets)
            })
            .collect();
    }
    Prepared {
        label: curve.label.clone(),
        style: curve.style,
        marked: curve.marked,
        runs,
        same_as: None,
    }
}

/// Keeps, per bucket of consecutive points, the first, lowest, highest and last ones (in
/// order), so that spikes survive.
fn decimate(points: &[(f64, f64)], buckets: usize) -> Vec<(f64, f64)> {
    let size = points.len().div_ceil(buckets.max(1)).max(1);
    let mut out = Vec::with_capacity(4 * buckets);
    for chunk in points.chunks(size) {
        let (mut lo, mut hi) = (0, 0);
        for (k, p) in chunk.iter().enumerate() {
            if p.1 < chunk[lo].1 {
                lo = k;
            }
            if p.1 > chunk[hi].1 {
                hi = k;
            }
        }
        let mut keep = vec![0, lo, hi, chunk.len() - 1];
        keep.sort_unstable();
        keep.dedup();
        out.extend(keep.into_iter().map(|k| chunk[k]));
    }
    out
}

/// Liang-Barsky: the part of segment `a → b` inside the rectangle, if any.
fn clip_segment(
    a: (f64, f64),
    b: (f64, f64),
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
) -> Option<((f64, f64), (f64, f64))> {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let mut t0: f64 = 0.0;
    let mut t1: f64 = 1.0;
    for (p, q) in [
        (-dx, a.0 - x0),
        (dx, x1 - a.0),
        (-dy, a.1 - y0),
        (dy, y1 - a.1),
    ] {
        if p == 0.0 {
            if q < 0.0 {
                return None;
            }
        } else {
            let r = q / p;
            if p < 0.0 {
                t0 = t0.max(r);
            } else {
                t1 = t1.min(r);
            }
        }
    }
    (t0 <= t1).then_some((
        (a.0 + t0 * dx, a.1 + t0 * dy),
        (a.0 + t1 * dx, a.1 + t1 * dy),
    ))
}

/// Splits runs at the rectangle's border, keeping only the inside parts.
fn clip_runs(runs: &[Vec<(f64, f64)>], xr: (f64, f64), yr: (f64, f64)) -> Vec<Vec<(f64, f64)>> {
    let inside = |p: &(f64, f64)| p.0 >= xr.0 && p.0 <= xr.1 && p.1 >= yr.0 && p.1 <= yr.1;
    let mut out = Vec::new();
    for run in runs {
        if run.len() == 1 {
            if inside(&run[0]) {
                out.push(run.clone());
            }
            continue;
        }
        let mut current: Vec<(f64, f64)> = Vec::new();
        for w in run.windows(2) {
            match clip_segment(w[0], w[1], xr, yr) {
                Some((p, q)) => {
                    if current.last() != Some(&p) {
                        if !current.is_empty() {
                            out.push(std::mem::take(&mut current));
                        }
                        current.push(p);
                    }
                    current.push(q);
                }
                None => {
                    if !current.is_empty() {
                        out.push(std::mem::take(&mut current));
                    }
                }
            }
        }
        if !current.is_empty() {
            out.push(current);
        }
    }
    out
}

/// A curve whose largest |y| is this many times the extent of the others' axis is off
/// scale.
const OFF_SCALE: f64 = 20.0;

/// Per curve, its largest |y| when it is off scale: on a linear axis with no fixed range,
/// a curve (a diverged run) whose peak exceeds [`OFF_SCALE`] times the extent
/// (`max(|lo|, |hi|, hi − lo)`) of the axis the other curves need, when such curves are
/// at most a quarter of the chart's. The axis is laid out without them, so that they do
/// not flatten the others; they are drawn clipped, marked where they leave the plot and
/// named in the legend with their peak.
fn off_scale_curves(chart: &LineChart) -> Vec<Option<f64>> {
    let none = vec![None; chart.curves.len()];
    if chart.y_scale != Scale::Linear || chart.y_range.is_some() || chart.curves.len() < 3 {
        return none;
    }
    let peak = |c: &Curve| {
        c.points
            .iter()
            .map(|p| p.1.abs())
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max)
    };
    let peaks: Vec<f64> = chart.curves.iter().map(peak).collect();
    let mut order: Vec<usize> = (0..peaks.len()).collect();
    order.sort_by(|a, b| peaks[*a].total_cmp(&peaks[*b]));
    let most = (chart.curves.len() / 4).max(1);
    // Drop the largest peaks one by one while each is off the scale of those left, so
    // that a curve is off scale only if every larger one is.
    let mut off = none;
    for k in (order.len() - most..order.len()).rev() {
        let kept = order[..k].iter().map(|&i| &chart.curves[i]);
        let range = data_range(
            kept.flat_map(|c| c.points.iter().map(|p| p.1)),
            Scale::Linear,
        );
        let range = widen(range, chart.min_span.1, Scale::Linear);
        let Some((lo, hi)) = range else { break };
        let extent = lo.abs().max(hi.abs()).max(hi - lo);
        let i = order[k];
        if extent > 0.0 && peaks[i] > OFF_SCALE * extent {
            off[i] = Some(peaks[i]);
        } else {
            break;
        }
    }
    off
}

/// The first plotted point above or below the y range.
fn first_beyond(runs: &[Vec<(f64, f64)>], (lo, hi): (f64, f64)) -> Option<(f64, f64)> {
    runs.iter()
        .flatten()
        .find(|p| p.1 > hi || p.1 < lo)
        .copied()
}

/// How many points of a curve a log axis cannot draw (finite and ≤ 0).
fn non_positive_count(curve: &Curve, scale: Scale) -> usize {
    match scale {
        Scale::Log => curve
            .points
            .iter()
            .filter(|p| p.0.is_finite() && p.1.is_finite() && p.1 <= 0.0)
            .count(),
        Scale::Linear => 0,
    }
}

/// Where (plotted x) a curve has values a log y axis cannot draw, at most one per 1 % of
/// the x axis: they are marked on the lower edge rather than dropped.
fn non_positive_xs(curve: &Curve, x: &AxisLayout, scale: Scale) -> Vec<f64> {
    if scale != Scale::Log {
        return Vec::new();
    }
    let bin = (x.range.1 - x.range.0) / 100.0;
    let mut xs: Vec<f64> = Vec::new();
    for p in curve
        .points
        .iter()
        .filter(|p| p.1.is_finite() && p.1 <= 0.0)
    {
        if let Some(px) = x.to_plot(p.0) {
            if px >= x.range.0
                && px <= x.range.1
                && xs.last().is_none_or(|last| (px - last).abs() >= bin)
            {
                xs.push(px);
            }
        }
    }
    xs
}

/// A curve's legend text: its label, what it coincides with, and whether it runs off
/// scale or has values a log axis marks on its lower edge.
fn entry_text(p: &Prepared, all: &[Prepared], off: Option<f64>, below: usize) -> String {
    let mut text = match p.same_as {
        Some((i, 0)) => format!("{} (= {}, markers)", p.label, all[i].label),
        Some((i, 1)) => format!("{} (= {} but at 1 point, markers)", p.label, all[i].label),
        Some((i, n)) => format!(
            "{} (= {} but at {n} points, markers)",
            p.label, all[i].label
        ),
        None => p.label.clone(),
    };
    if let Some(peak) = off {
        text.push_str(&format!(" (off scale, up to {})", format_value(peak)));
    }
    if below > 0 {
        let values = if below == 1 { "value" } else { "values" };
        text.push_str(&format!(" ({below} {values} ≤ 0 marked at the bottom)"));
    }
    text
}

/// A data range at least `min_span` wide (linear axes; 0 leaves it), centred as before.
fn widen(range: Option<(f64, f64)>, min_span: f64, scale: Scale) -> Option<(f64, f64)> {
    match (range, scale) {
        (Some((lo, hi)), Scale::Linear) if hi - lo < min_span => {
            let mid = (lo + hi) / 2.0;
            Some((mid - min_span / 2.0, mid + min_span / 2.0))
        }
        _ => range,
    }
}

/// No two curves of the chart's legend look alike ([`separate`]); curves without a
/// label (pieces of a labelled one) keep their style.
fn separate_looks(curves: &mut [Prepared]) {
    let mut labelled: Vec<&mut Prepared> =
        curves.iter_mut().filter(|c| !c.label.is_empty()).collect();
    let mut styles: Vec<LineStyle> = labelled.iter().map(|c| c.style).collect();
    separate(&mut styles);
    for (curve, style) in labelled.iter_mut().zip(styles) {
        curve.style = style;
    }
}

/// Marks every curve that coincides with an earlier one: the same x samples, y within
/// [`COINCIDENCE`] of the spans at all but at most [`MAX_DIFFERING`] of its points (a
/// curve hidden under another but for its first point is still said to be hidden).
fn mark_coincident(curves: &mut [Prepared], x_span: f64, y_span: f64) {
    for j in 1..curves.len() {
        for i in 0..j {
            if curves[i].same_as.is_some() {
                continue;
            }
            if let Some(differing) =
                differing_points(&curves[i].runs, &curves[j].runs, x_span, y_span)
            {
                curves[j].same_as = Some((i, differing));
                break;
            }
        }
    }
}

/// How many points of `b` lie off `a`, when the two have the same runs and at most
/// [`MAX_DIFFERING`] points differ; `None` otherwise.
fn differing_points(
    a: &[Vec<(f64, f64)>],
    b: &[Vec<(f64, f64)>],
    x_span: f64,
    y_span: f64,
) -> Option<usize> {
    let same_shape =
        !a.is_empty() && a.len() == b.len() && a.iter().zip(b).all(|(ra, rb)| ra.len() == rb.len());
    if !same_shape {
        return None;
    }
    let differing = a
        .iter()
        .flatten()
        .zip(b.iter().flatten())
        .filter(|(p, q)| {
            (p.0 - q.0).abs() > COINCIDENCE * x_span || (p.1 - q.1).abs() > COINCIDENCE * y_span
        })
        .count();
    (differing <= MAX_DIFFERING).then_some(differing)
}

pub(super) fn draw_line_chart<DB: DrawingBackend>(
    chart: &LineChart,
    cell: &DrawingArea<DB, Shift>,
) -> Result<(), String> {
    let area = if chart.title.is_empty() {
        cell.clone()
    } else {
        cell.titled(&chart.title, (FONT, 18))
            .map_err(|e| e.to_string())?
    };
    let area = area.margin(MARGIN, MARGIN, MARGIN, MARGIN + 6);

    let x_data = data_range(
        chart
            .curves
            .iter()
            .flat_map(|c| c.points.iter().map(|p| p.0)),
        chart.x_scale,
    );
    let x_data = widen(x_data, chart.min_span.0, chart.x_scale);
    let off_scale = off_scale_curves(chart);
    let y_data = chart.y_range.or_else(|| {
        data_range(
            chart
                .curves
                .iter()
                .zip(&off_scale)
                .filter(|(_, off)| off.is_none())
                .flat_map(|(c, _)| c.points.iter().map(|p| p.1)),
            chart.y_scale,
        )
    });
    let y_data = widen(y_data, chart.min_span.1, chart.y_scale);
    let mut x_axis = AxisLayout::new(x_data, chart.x_scale);
    let mut y_axis = match (chart.y_range, chart.y_scale) {
        (Some((lo, hi)), Scale::Linear) => AxisLayout::linear(lo, hi, false),
        _ => AxisLayout::new(y_data, chart.y_scale),
    };

    // Legend entries (coincident curves are known only after preparing the curves).
    let mut prepared: Vec<Prepared> = chart
        .curves
        .iter()
        .map(|c| prepare(c, &x_axis, &y_axis))
        .collect();
    separate_looks(&mut prepared);
    let (w, h) = area.dim_in_pixel();
    let below: Vec<usize> = chart
        .curves
        .iter()
        .map(|c| non_positive_count(c, chart.y_scale))
        .collect();
    let outside_entries = |prepared: &[Prepared]| -> Vec<LegendEntry> {
        prepared
            .iter()
            .zip(&off_scale)
            .zip(&below)
            .filter(|((p, _), _)| !p.label.is_empty())
            .map(|((p, off), below)| LegendEntry {
                label: entry_text(p, prepared, *off, *below),
                style: p.style,
                marker: p.marked || p.same_as.is_some() || off.is_some() || *below > 0,
                patch: None,
            })
            .collect()
    };
    let x_span = x_axis.range.1 - x_axis.range.0;
    let y_span = y_axis.range.1 - y_axis.range.0;
    mark_coincident(&mut prepared, x_span, y_span);

    let plot_w = (w as i32 - Y_LABEL_AREA as i32).max(50);
    let plot_h = (h as i32 - X_LABEL_AREA as i32).max(50);
    if chart.equal_aspect && chart.x_scale == Scale::Linear && chart.y_scale == Scale::Linear {
        let ux = (x_axis.range.1 - x_axis.range.0) / f64::from(plot_w);
        let uy = (y_axis.range.1 - y_axis.range.0) / f64::from(plot_h);
        let u = ux.max(uy);
        let grow = |axis: &AxisLayout, pixels: i32| {
            let mid = (axis.range.0 + axis.range.1) / 2.0 + axis.offset;
            let half = u * f64::from(pixels) / 2.0;
            AxisLayout::linear(mid - half, mid + half, false)
        };
        x_axis = grow(&x_axis, plot_w);
        y_axis = grow(&y_axis, plot_h);
        prepared = chart
            .curves
            .iter()
            .map(|c| prepare(c, &x_axis, &y_axis))
            .collect();
        separate_looks(&mut prepared);
        mark_coincident(
            &mut prepared,
            x_axis.range.1 - x_axis.range.0,
            y_axis.range.1 - y_axis.range.0,
        );
    }
    let entries = outside_entries(&prepared);
    let (legend_w, legend_h) = legend_size(&area, &entries);
    let normalize = |&(x, y): &(f64, f64)| {
        (
            (x - x_axis.range.0) / (x_axis.range.1 - x_axis.range.0),
            (y - y_axis.range.0) / (y_axis.range.1 - y_axis.range.0),
        )
    };
    let normalized: Vec<(f64, f64)> = prepared
        .iter()
        .flat_map(|p| p.runs.iter())
        .flat_map(|run| along_segments(&run.iter().map(normalize).collect::<Vec<_>>()))
        .collect();
    let place = if entries.is_empty() {
        LegendPlace::Inside(0.0, 1.0)
    } else {
        place_legend(
            &normalized,
            (
                f64::from(legend_w + 8) / f64::from(plot_w),
                f64::from(legend_h + 8) / f64::from(plot_h),
            ),
        )
    };
    let (plot_area, legend_area) = match place {
        LegendPlace::Outside if (w as i32) > legend_w + 260 => {
            let (left, right) = area.split_horizontally(w as i32 - legend_w - 8);
            (left, Some(right))
        }
        LegendPlace::Outside => {
            let (top, bottom) = area.split_vertically((h as i32 - legend_h - 8).max(120));
            (top, Some(bottom))
        }
        LegendPlace::Inside(..) => (area.clone(), None),
    };

    let drawn_w = i32::try_from(plot_area.dim_in_pixel().0).unwrap_or(i32::MAX);
    x_axis.keep_labels_apart(drawn_w - Y_LABEL_AREA as i32);
    let x_spec = TickedRange(x_axis.clone());
    let y_spec = TickedRange(y_axis.clone());
    let mut ctx = ChartBuilder::on(&plot_area)
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(x_spec, y_spec)
        .map_err(|e| e.to_string())?;
    let x_title = x_axis.title(&chart.x_label);
    let y_title = y_axis.title(&chart.y_label);
    ctx.configure_mesh()
        .x_desc(x_title)
        .y_desc(y_title)
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 15))
        .bold_line_style(RGBColor(205, 205, 205))
        .light_line_style(RGBColor(238, 238, 238))
        .draw()
        .map_err(|e| e.to_string())?;

    let plot = ctx.plotting_area().strip_coord_spec();
    let to_pixel = |p: (f64, f64)| {
        let b = ctx.backend_coord(&p);
        let o = plot.get_base_pixel();
        (b.0 - o.0, b.1 - o.1)
    };
    let n_marked = prepared
        .iter()
        .filter(|p| p.same_as.is_some())
        .count()
        .max(1);
    let mut marked_rank = 0;
    for ((p, curve), off) in prepared.iter().zip(&chart.curves).zip(&off_scale) {
        if off.is_some() {
            if let Some(q) = first_beyond(&p.runs, y_axis.range) {
                let edge = (q.0, q.1.clamp(y_axis.range.0, y_axis.range.1));
                if q.0 >= x_axis.range.0 && q.0 <= x_axis.range.1 {
                    draw_marker(&plot, to_pixel(edge), &p.style)?;
                }
            }
        }
        for x in non_positive_xs(curve, &x_axis, chart.y_scale) {
            draw_marker(&plot, to_pixel((x, y_axis.range.0)), &p.style)?;
        }
        let runs = clip_runs(&p.runs, x_axis.range, y_axis.range);
        for run in &runs {
            let pixels: Vec<(i32, i32)> = run.iter().map(|q| to_pixel(*q)).collect();
            draw_pixel_path(&plot, &pixels, &p.style)?;
            if p.marked {
                for px in &pixels {
                    draw_marker(&plot, *px, &p.style)?;
                }
            }
        }
        if p.same_as.is_some() {
            // Staggered markers: this curve's k-th of `n_marked` phases along its length.
            let all: Vec<(f64, f64)> = runs.iter().flatten().copied().collect();
            let count = 12;
            for m in 0..count {
                let t = (m as f64 + (marked_rank as f64 + 0.5) / n_marked as f64) / count as f64;
                if let Some(q) =
                    all.get(((t * all.len() as f64) as usize).min(all.len().saturating_sub(1)))
                {
                    draw_marker(&plot, to_pixel(*q), &p.style)?;
                }
            }
            marked_rank += 1;
        }
    }
    match (place, legend_area) {
        (_, Some(beside)) => draw_legend(&beside, (4, 4), &entries),
        (LegendPlace::Inside(x, y), None) => {
            let (pw, ph) = plot.dim_in_pixel();
            let px = (x * f64::from(pw)) as i32 + 4;
            let py = ((1.0 - y) * f64::from(ph)) as i32 + 4;
            draw_legend(
                &plot,
                (px.min(pw as i32 - legend_w - 4).max(4), py.max(4)),
                &entries,
            )
        }
        (LegendPlace::Outside, None) => draw_legend(&plot, (4, 4), &entries),
    }
}

/// A run's points with points added along each segment every 1 % of the plot, so a
/// legend is not placed over a line between two distant points (a reference level drawn
/// from its two ends).
fn along_segments(run: &[(f64, f64)]) -> Vec<(f64, f64)> {
    const STEP: f64 = 0.01;
    const MOST_PER_SEGMENT: usize = 100;
    let mut out: Vec<(f64, f64)> = run.first().copied().into_iter().collect();
    for pair in run.windows(2) {
        let ((x0, y0), (x1, y1)) = (pair[0], pair[1]);
        let length = (x1 - x0).hypot(y1 - y0);
        let pieces = if length.is_finite() {
            ((length / STEP).ceil() as usize).clamp(1, MOST_PER_SEGMENT)
        } else {
            1
        };
        out.extend((1..=pieces).map(|k| {
            let t = k as f64 / pieces as f64;
            (x0 + t * (x1 - x0), y0 + t * (y1 - y0))
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_clipped_to_the_box() {
        let clipped = clip_segment((-1.0, 0.5), (2.0, 0.5), (0.0, 1.0), (0.0, 1.0));
        assert_eq!(clipped, Some(((0.0, 0.5), (1.0, 0.5))));
        assert_eq!(
            clip_segment((2.0, 2.0), (3.0, 3.0), (0.0, 1.0), (0.0, 1.0)),
            None
        );
    }

    #[test]
    fn gaps_split_a_curve() {
        let curve = Curve::new(
            "ncp-pgs",
            vec![
                (0.0, 1.0),
                (1.0, 2.0),
                (2.0, f64::NAN),
                (3.0, 1.0),
                (4.0, 1.5),
            ],
        );
        let x = AxisLayout::linear(0.0, 4.0, true);
        let y = AxisLayout::linear(1.0, 2.0, true);
        let p = prepare(&curve, &x, &y);
        assert_eq!(p.runs.len(), 2);
        assert_eq!(p.runs[0].len(), 2);
    }

    #[test]
    fn log_axis_cuts_at_non_positive_values() {
        let curve = Curve::new("a", vec![(0.0, 1e-3), (1.0, 0.0), (2.0, 1e-2)]);
        let x = AxisLayout::linear(0.0, 2.0, true);
        let y = AxisLayout::log(1e-3, 1e-2);
        assert_eq!(prepare(&curve, &x, &y).runs.len(), 2);
    }

    #[test]
    fn identical_curves_are_detected() {
        let points: Vec<(f64, f64)> = (0..50).map(|k| (k as f64, (k as f64).sin())).collect();
        let x = AxisLayout::linear(0.0, 49.0, true);
        let y = AxisLayout::linear(-1.0, 1.0, true);
        let mut curves = vec![
            prepare(&Curve::new("ccp-pgs", points.clone()), &x, &y),
            prepare(&Curve::new("ccp-admm", points), &x, &y),
        ];
        mark_coincident(&mut curves, 49.0, 2.0);
        assert_eq!(curves[1].same_as, Some((0, 0)));
        assert_eq!(curves[0].same_as, None);
    }

    #[test]
    fn a_curve_hidden_but_for_one_point_is_said_to_be_hidden() {
        let floor: Vec<(f64, f64)> = (0..50).map(|k| (k as f64, 1e-16)).collect();
        let mut first_above = floor.clone();
        first_above[0].1 = 2.2e-16;
        let x = AxisLayout::linear(0.0, 49.0, true);
        let y = AxisLayout::log(1e-16, 1e-8);
        let mut curves = vec![
            prepare(&Curve::new("lcp-pgs", floor), &x, &y),
            prepare(&Curve::new("raisim", first_above.clone()), &x, &y),
        ];
        mark_coincident(&mut curves, 49.0, 8.0);
        assert_eq!(curves[1].same_as, Some((0, 1)));
        assert_eq!(
            entry_text(&curves[1], &curves, None, 0),
            "raisim (= lcp-pgs but at 1 point, markers)"
        );
        let mut three_above = first_above;
        three_above[1].1 = 2.2e-16;
        three_above[2].1 = 2.2e-16;
        let mut apart = vec![
            curves.swap_remove(0),
            prepare(&Curve::new("raisim", three_above), &x, &y),
        ];
        mark_coincident(&mut apart, 49.0, 8.0);
        assert_eq!(apart[1].same_as, None);
    }

    #[test]
    fn decimation_keeps_spikes() {
        let mut points: Vec<(f64, f64)> = (0..10_000).map(|k| (k as f64, 0.0)).collect();
        points[5003].1 = 7.0;
        let kept = decimate(&points, 100);
        assert!(kept.len() <= 400);
        assert!(kept.iter().any(|p| p.1 == 7.0));
    }
}
