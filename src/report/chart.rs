//! Figures: line charts and box plots, alone or in a grid of panels, written as PNG
//! (bitmap, text in the embedded Ubuntu Light font) and SVG. The drawing rules every
//! figure follows:
//!
//! - a solver keeps its colour, dash and marker in every figure ([`super::style`]);
//! - ticks and labels come from [`super::axis`]: never repeated, log axes on decades;
//! - a curve is cut where it has no value (a NaN point, or a value ≤ 0 on a log axis):
//!   no line is drawn across steps without contacts;
//! - every segment is clipped to the plotting area in data space, and the title sits
//!   above the area, so that nothing is drawn over the title or the axes;
//! - curves that coincide (within 0.2 % of the axis spans) get markers at staggered
//!   points and a legend entry that says which curve they coincide with;
//! - the legend goes to the corner of the plot that hides no data, or outside it;
//! - top views can be drawn with equal aspect (one metre is as long on both axes).

use std::path::Path;
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::axis::{data_range, format_value, AxisLayout, Scale, TickedRange};
use super::style::{label_style, Dash, LineStyle, Marker};
use super::ReportError;

/// Font family every figure uses (registered from the embedded Ubuntu Light).
const FONT: &str = "sans-serif";
/// Default size of one panel (pixels).
pub const PANEL: (u32, u32) = (760, 480);
/// Height of the x tick labels and axis title (px).
const X_LABEL_AREA: u32 = 48;
/// Width of the y tick labels and axis title (px).
const Y_LABEL_AREA: u32 = 78;
/// Margin around a panel's chart (px).
const MARGIN: u32 = 10;
/// Largest number of points drawn per curve (min/max decimation beyond).
const MAX_POINTS: usize = 3000;
/// Two curves closer than this fraction of the axis spans everywhere coincide.
const COINCIDENCE: f64 = 2e-3;

/// Registers the embedded font once (ab_glyph has no system fonts).
fn ensure_font() -> Result<(), ReportError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, epaint_default_fonts::UBUNTU_LIGHT)
            .is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(ReportError::Plot {
            path: FONT.into(),
            message: "the embedded font could not be loaded".into(),
        })
    }
}

/// One curve of a line chart.
#[derive(Debug, Clone)]
pub struct Curve {
    /// Legend text.
    pub label: String,
    /// Points `(x, y)`; a non-finite coordinate cuts the line there.
    pub points: Vec<(f64, f64)>,
    /// Colour, dash, marker.
    pub style: LineStyle,
    /// Draw a marker at every point (sparse data such as a sweep).
    pub marked: bool,
}

impl Curve {
    /// A curve styled by its label (a solver's fixed style when the label names one).
    pub fn new(label: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        let label = label.into();
        Self {
            style: label_style(&label),
            label,
            points,
            marked: false,
        }
    }

    /// A curve with an explicit style.
    pub fn styled(label: impl Into<String>, points: Vec<(f64, f64)>, style: LineStyle) -> Self {
        Self {
            label: label.into(),
            points,
            style,
            marked: false,
        }
    }

    /// The same curve with a marker at every point.
    pub fn marked(mut self) -> Self {
        self.marked = true;
        self
    }
}

/// A line chart.
#[derive(Debug, Clone, Default)]
pub struct LineChart {
    /// Title, drawn above the plot.
    pub title: String,
    /// x axis title (with unit).
    pub x_label: String,
    /// y axis title (with unit).
    pub y_label: String,
    /// x scale.
    pub x_scale: Scale,
    /// y scale.
    pub y_scale: Scale,
    /// The curves.
    pub curves: Vec<Curve>,
    /// Same length per unit on both axes (top views).
    pub equal_aspect: bool,
    /// Fixed y range (data units); curves are clipped to it.
    pub y_range: Option<(f64, f64)>,
}

/// One box of a box plot.
#[derive(Debug, Clone)]
pub struct BoxSpec {
    /// Samples.
    pub samples: Vec<f64>,
    /// Colour.
    pub color: RGBColor,
    /// Filled (solid) or hollow.
    pub filled: bool,
}

/// Boxes that share a label on the x axis (a solver: its cold and warm boxes).
#[derive(Debug, Clone)]
pub struct BoxGroup {
    /// x label.
    pub label: String,
    /// Boxes, left to right.
    pub boxes: Vec<BoxSpec>,
}

/// Box plots: median, quartiles, whiskers at 1.5 interquartile ranges, points beyond.
#[derive(Debug, Clone, Default)]
pub struct BoxChart {
    /// Title.
    pub title: String,
    /// y axis title.
    pub y_label: String,
    /// y scale.
    pub y_scale: Scale,
    /// The groups.
    pub groups: Vec<BoxGroup>,
    /// Legend of the box kinds: text, colour, filled.
    pub legend: Vec<(String, RGBColor, bool)>,
}

/// A panel of a figure.
#[derive(Debug, Clone)]
pub enum Panel {
    /// Curves.
    Line(LineChart),
    /// Box plots.
    Box(BoxChart),
}

/// A figure: panels in a grid, with an optional overall title.
#[derive(Debug, Clone)]
pub struct Figure {
    /// Overall title.
    pub title: Option<String>,
    /// Panels per row.
    pub columns: usize,
    /// Panels, row by row.
    pub panels: Vec<Panel>,
    /// Size of one panel (px).
    pub panel_size: (u32, u32),
}

impl Figure {
    /// One panel.
    pub fn single(panel: Panel) -> Self {
        Self {
            title: None,
            columns: 1,
            panels: vec![panel],
            panel_size: (960, 600),
        }
    }

    /// Panels in a grid of `columns`.
    pub fn grid(title: impl Into<String>, columns: usize, panels: Vec<Panel>) -> Self {
        Self {
            title: Some(title.into()),
            columns: columns.max(1),
            panels,
            panel_size: PANEL,
        }
    }

    fn size(&self) -> (u32, u32) {
        let columns = self.columns.min(self.panels.len()).max(1) as u32;
        let rows = self.panels.len().div_ceil(self.columns.max(1)).max(1) as u32;
        let title = if self.title.is_some() { 40 } else { 0 };
        (
            columns * self.panel_size.0,
            rows * self.panel_size.1 + title,
        )
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let area = match &self.title {
            Some(title) => root.titled(title, (FONT, 24)).map_err(|e| e.to_string())?,
            None => root.clone(),
        };
        let columns = self.columns.min(self.panels.len()).max(1);
        let rows = self.panels.len().div_ceil(columns).max(1);
        for (panel, cell) in self.panels.iter().zip(area.split_evenly((rows, columns))) {
            match panel {
                Panel::Line(chart) => draw_line_chart(chart, &cell)?,
                Panel::Box(chart) => draw_box_chart(chart, &cell)?,
            }
        }
        Ok(())
    }
}

/// Draws `figure` into `dir/<stem>.png` and `dir/<stem>.svg`.
pub fn render(figure: &Figure, dir: &Path, stem: &str) -> Result<(), ReportError> {
    ensure_font()?;
    let png = dir.join(format!("{stem}.png"));
    let svg = dir.join(format!("{stem}.svg"));
    let fail = |path: &Path, message: String| ReportError::Plot {
        path: path.display().to_string(),
        message,
    };
    let size = figure.size();
    {
        let area = BitMapBackend::new(&png, size).into_drawing_area();
        figure.draw(&area).map_err(|e| fail(&png, e))?;
        area.present().map_err(|e| fail(&png, e.to_string()))?;
    }
    let area = SVGBackend::new(&svg, size).into_drawing_area();
    figure.draw(&area).map_err(|e| fail(&svg, e))?;
    area.present().map_err(|e| fail(&svg, e.to_string()))
}

/// A curve in plotted coordinates, split at its gaps, decimated.
struct Prepared {
    label: String,
    style: LineStyle,
    marked: bool,
    /// Runs of drawable points.
    runs: Vec<Vec<(f64, f64)>>,
    /// Index of the curve this one coincides with, if any.
    same_as: Option<usize>,
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

/// Marks every curve that coincides with an earlier one (same x samples, y within
/// [`COINCIDENCE`] of the spans).
fn mark_coincident(curves: &mut [Prepared], x_span: f64, y_span: f64) {
    for j in 1..curves.len() {
        for i in 0..j {
            if curves[i].same_as.is_some() {
                continue;
            }
            let (a, b) = (&curves[i].runs, &curves[j].runs);
            let close = a.len() == b.len()
                && !a.is_empty()
                && a.iter().zip(b).all(|(ra, rb)| {
                    ra.len() == rb.len()
                        && ra.iter().zip(rb).all(|(p, q)| {
                            (p.0 - q.0).abs() <= COINCIDENCE * x_span
                                && (p.1 - q.1).abs() <= COINCIDENCE * y_span
                        })
                });
            if close {
                curves[j].same_as = Some(i);
                break;
            }
        }
    }
}

fn shape_style(color: RGBColor, width: u32, filled: bool) -> ShapeStyle {
    ShapeStyle {
        color: color.to_rgba(),
        filled,
        stroke_width: width,
    }
}

/// Draws a marker of `style` at pixel `p` on `area`.
fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: (i32, i32),
    style: &LineStyle,
) -> Result<(), String> {
    let s = shape_style(style.color, 2, false);
    let r = 5;
    let result = match style.marker {
        Marker::Circle => area.draw(&Circle::new(p, r, s)),
        Marker::Square => area.draw(&Rectangle::new([(p.0 - r, p.1 - r), (p.0 + r, p.1 + r)], s)),
        Marker::Triangle => area
            .draw(&Polygon::new(
                vec![(p.0, p.1 - r - 1), (p.0 - r, p.1 + r), (p.0 + r, p.1 + r)],
                shape_style(style.color, 1, false),
            ))
            .and_then(|_| {
                area.draw(&PathElement::new(
                    vec![
                        (p.0, p.1 - r - 1),
                        (p.0 - r, p.1 + r),
                        (p.0 + r, p.1 + r),
                        (p.0, p.1 - r - 1),
                    ],
                    s,
                ))
            }),
        Marker::Cross => area
            .draw(&PathElement::new(
                vec![(p.0 - r, p.1 - r), (p.0 + r, p.1 + r)],
                s,
            ))
            .and_then(|_| {
                area.draw(&PathElement::new(
                    vec![(p.0 - r, p.1 + r), (p.0 + r, p.1 - r)],
                    s,
                ))
            }),
    };
    result.map_err(|e| e.to_string())
}

/// Draws a polyline in pixels with the style's dash pattern.
fn draw_pixel_path<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    pixels: &[(i32, i32)],
    style: &LineStyle,
) -> Result<(), String> {
    let s = shape_style(style.color, 2, false);
    match style.dash {
        Dash::Solid => {
            for piece in split_at_sharp_turns(pixels) {
                area.draw(&PathElement::new(piece, s))
                    .map_err(|e| e.to_string())?;
            }
            Ok(())
        }
        Dash::Dashed { on, off } => {
            for dash in dash_pieces(pixels, f64::from(on), f64::from(off)) {
                area.draw(&PathElement::new(dash, s))
                    .map_err(|e| e.to_string())?;
            }
            Ok(())
        }
    }
}

/// Splits a pixel polyline at its vertices where it turns by more than 90°: the bitmap
/// backend joins wide segments with mitres, and the mitre of a U-turn shoots far beyond
/// the point (lines across the title and axes). Consecutive repeated pixels are dropped.
fn split_at_sharp_turns(pixels: &[(i32, i32)]) -> Vec<Vec<(i32, i32)>> {
    let mut points = pixels.to_vec();
    points.dedup();
    let mut pieces = Vec::new();
    let mut current: Vec<(i32, i32)> = Vec::new();
    for (k, p) in points.iter().enumerate() {
        current.push(*p);
        if k + 1 < points.len() && current.len() >= 2 {
            let a = current[current.len() - 2];
            let n = points[k + 1];
            let (u, v) = ((p.0 - a.0, p.1 - a.1), (n.0 - p.0, n.1 - p.1));
            if i64::from(u.0) * i64::from(v.0) + i64::from(u.1) * i64::from(v.1) <= 0 {
                pieces.push(std::mem::replace(&mut current, vec![*p]));
            }
        }
    }
    if current.len() > 1 || (pieces.is_empty() && !current.is_empty()) {
        pieces.push(current);
    }
    pieces
}

/// Cuts a pixel polyline into dashes of `on` px separated by `off` px, the pattern
/// running on along the whole path (not restarted at each vertex).
fn dash_pieces(pixels: &[(i32, i32)], on: f64, off: f64) -> Vec<Vec<(i32, i32)>> {
    let mut pieces = Vec::new();
    let mut current: Vec<(i32, i32)> = Vec::new();
    let period = on + off;
    let mut phase = 0.0; // distance along the pattern
    for w in pixels.windows(2) {
        let (a, b) = (
            (f64::from(w[0].0), f64::from(w[0].1)),
            (f64::from(w[1].0), f64::from(w[1].1)),
        );
        let length = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
        let mut s = 0.0;
        while s < length {
            let in_dash = phase < on;
            let left = if in_dash { on - phase } else { period - phase };
            let step = left.min(length - s);
            let at = |t: f64| {
                let u = t / length.max(1e-12);
                (
                    (a.0 + u * (b.0 - a.0)).round() as i32,
                    (a.1 + u * (b.1 - a.1)).round() as i32,
                )
            };
            if in_dash {
                if current.is_empty() {
                    current.push(at(s));
                }
                current.push(at(s + step));
            }
            s += step;
            phase += step;
            if phase >= on && in_dash && current.len() > 1 {
                pieces.push(std::mem::take(&mut current));
            }
            if phase >= period {
                phase -= period;
            }
        }
    }
    if current.len() > 1 {
        pieces.push(current);
    }
    pieces
}

/// A legend entry.
struct LegendEntry {
    label: String,
    style: LineStyle,
    marker: bool,
    /// A filled or hollow box instead of a line.
    patch: Option<bool>,
}

const LEGEND_ROW: i32 = 20;
const LEGEND_SAMPLE: i32 = 34;

fn legend_size<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[LegendEntry],
) -> (i32, i32) {
    let font: TextStyle = (FONT, 14).into_font().into();
    let width = entries
        .iter()
        .map(|e| {
            area.estimate_text_size(&e.label, &font)
                .map_or(7 * e.label.len() as u32, |s| s.0) as i32
        })
        .max()
        .unwrap_or(0);
    (
        width + LEGEND_SAMPLE + 22,
        LEGEND_ROW * entries.len() as i32 + 10,
    )
}

/// Draws the legend with its top-left corner at `origin` (pixels of `area`).
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    origin: (i32, i32),
    entries: &[LegendEntry],
) -> Result<(), String> {
    if entries.is_empty() {
        return Ok(());
    }
    let (w, h) = legend_size(area, entries);
    let (x, y) = origin;
    area.draw(&Rectangle::new(
        [(x, y), (x + w, y + h)],
        shape_style(RGBColor(255, 255, 255), 1, true),
    ))
    .map_err(|e| e.to_string())?;
    area.draw(&Rectangle::new(
        [(x, y), (x + w, y + h)],
        shape_style(RGBColor(120, 120, 120), 1, false),
    ))
    .map_err(|e| e.to_string())?;
    for (k, e) in entries.iter().enumerate() {
        let row = y + 5 + LEGEND_ROW * k as i32 + LEGEND_ROW / 2;
        let (a, b) = ((x + 6, row), (x + 6 + LEGEND_SAMPLE - 6, row));
        match e.patch {
            Some(filled) => {
                area.draw(&Rectangle::new(
                    [(a.0, row - 6), (b.0, row + 6)],
                    shape_style(e.style.color, 2, filled),
                ))
                .map_err(|err| err.to_string())?;
            }
            None => {
                draw_pixel_path(area, &[a, b], &e.style)?;
                if e.marker {
                    draw_marker(area, ((a.0 + b.0) / 2, row), &e.style)?;
                }
            }
        }
        area.draw(&Text::new(
            e.label.clone(),
            (x + LEGEND_SAMPLE + 10, row - 8),
            (FONT, 14).into_font(),
        ))
        .map_err(|err| err.to_string())?;
    }
    Ok(())
}

/// Where the legend goes: the corner of the plot hiding the fewest points (normalized
/// plot coordinates), or outside on the right when every corner hides some.
enum LegendPlace {
    Inside(f64, f64),
    Outside,
}

fn place_legend(points: &[(f64, f64)], size: (f64, f64)) -> LegendPlace {
    let (w, h) = size;
    if w >= 0.6 || h >= 0.9 {
        return LegendPlace::Outside;
    }
    let corners = [
        (1.0 - w, 1.0),
        (0.0, 1.0),
        (1.0 - w, h),
        (0.0, h),
        ((1.0 - w) / 2.0, 1.0),
        ((1.0 - w) / 2.0, h),
    ];
    let hidden = |(x0, y1): (f64, f64)| {
        points
            .iter()
            .filter(|p| {
                p.0 >= x0 - 0.02 && p.0 <= x0 + w + 0.02 && p.1 <= y1 + 0.02 && p.1 >= y1 - h - 0.02
            })
            .count()
    };
    let best = corners
        .iter()
        .map(|c| (hidden(*c), *c))
        .min_by_key(|(n, _)| *n);
    match best {
        Some((0, (x, y))) => LegendPlace::Inside(x, y),
        _ => LegendPlace::Outside,
    }
}

fn draw_line_chart<DB: DrawingBackend>(
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
    let y_data = chart.y_range.or_else(|| {
        data_range(
            chart
                .curves
                .iter()
                .flat_map(|c| c.points.iter().map(|p| p.1)),
            chart.y_scale,
        )
    });
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
    let (w, h) = area.dim_in_pixel();
    let outside_entries = |prepared: &[Prepared]| -> Vec<LegendEntry> {
        prepared
            .iter()
            .filter(|p| !p.label.is_empty())
            .map(|p| LegendEntry {
                label: match p.same_as {
                    Some(i) => format!("{} (= {}, markers)", p.label, prepared[i].label),
                    None => p.label.clone(),
                },
                style: p.style,
                marker: p.marked || p.same_as.is_some(),
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
        mark_coincident(
            &mut prepared,
            x_axis.range.1 - x_axis.range.0,
            y_axis.range.1 - y_axis.range.0,
        );
    }
    let entries = outside_entries(&prepared);
    let (legend_w, legend_h) = legend_size(&area, &entries);
    let normalized: Vec<(f64, f64)> = prepared
        .iter()
        .flat_map(|p| p.runs.iter().flatten())
        .map(|(x, y)| {
            (
                (x - x_axis.range.0) / (x_axis.range.1 - x_axis.range.0),
                (y - y_axis.range.0) / (y_axis.range.1 - y_axis.range.0),
            )
        })
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
        _ => (area.clone(), None),
    };

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
    for p in &prepared {
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
        (_, Some(right)) => draw_legend(&right, (4, Y_LABEL_AREA as i32 / 4), &entries),
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

/// Median, quartiles and whisker ends (1.5 interquartile ranges, within the data).
fn box_stats(samples: &[f64]) -> Option<[f64; 5]> {
    let mut v: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let q = |p: f64| {
        let pos = p * (v.len() - 1) as f64;
        let (i, w) = (pos.floor() as usize, pos - pos.floor());
        v[i] * (1.0 - w) + v[(i + 1).min(v.len() - 1)] * w
    };
    let (q1, q2, q3) = (q(0.25), q(0.5), q(0.75));
    let iqr = q3 - q1;
    let lo = v
        .iter()
        .copied()
        .find(|x| *x >= q1 - 1.5 * iqr)
        .unwrap_or(q1);
    let hi = v
        .iter()
        .rev()
        .copied()
        .find(|x| *x <= q3 + 1.5 * iqr)
        .unwrap_or(q3);
    Some([lo, q1, q2, q3, hi])
}

fn draw_box_chart<DB: DrawingBackend>(
    chart: &BoxChart,
    cell: &DrawingArea<DB, Shift>,
) -> Result<(), String> {
    let area = if chart.title.is_empty() {
        cell.clone()
    } else {
        cell.titled(&chart.title, (FONT, 18))
            .map_err(|e| e.to_string())?
    };
    let area = area.margin(MARGIN, MARGIN, MARGIN, MARGIN + 6);
    let entries: Vec<LegendEntry> = chart
        .legend
        .iter()
        .map(|(label, color, filled)| LegendEntry {
            label: label.clone(),
            style: LineStyle {
                color: *color,
                dash: Dash::Solid,
                marker: Marker::Square,
            },
            marker: false,
            patch: Some(*filled),
        })
        .collect();
    // The legend sits in a strip on the right, so that no box or outlier hides under it.
    let (lw, _) = legend_size(&area, &entries);
    let (w, _) = area.dim_in_pixel();
    let (area, strip) = if entries.is_empty() {
        (area.clone(), None)
    } else {
        let (left, right) = area.split_horizontally(w as i32 - lw - 8);
        (left, Some(right))
    };
    let all = chart
        .groups
        .iter()
        .flat_map(|g| g.boxes.iter().flat_map(|b| b.samples.iter().copied()));
    let y_axis = AxisLayout::new(data_range(all, chart.y_scale), chart.y_scale);
    let n = chart.groups.len().max(1);
    let x_layout = AxisLayout {
        scale: Scale::Linear,
        range: (-0.6, n as f64 - 0.4),
        offset: 0.0,
        ticks: (0..n).map(|k| k as f64).collect(),
        minor: Vec::new(),
        step: 1.0,
    };
    let x_spec = TickedRange(x_layout);
    let y_spec = TickedRange(y_axis.clone());
    let mut ctx = ChartBuilder::on(&area)
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(x_spec, y_spec)
        .map_err(|e| e.to_string())?;
    let labels: Vec<String> = chart.groups.iter().map(|g| g.label.clone()).collect();
    ctx.configure_mesh()
        .disable_x_mesh()
        .y_desc(y_axis.title(&chart.y_label))
        .x_label_formatter(&|v| {
            labels
                .get(v.round().max(0.0) as usize)
                .cloned()
                .unwrap_or_default()
        })
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 15))
        .bold_line_style(RGBColor(205, 205, 205))
        .light_line_style(RGBColor(238, 238, 238))
        .draw()
        .map_err(|e| e.to_string())?;
    let inside = |v: f64| v.clamp(y_axis.range.0, y_axis.range.1);
    for (g, group) in chart.groups.iter().enumerate() {
        let k = group.boxes.len().max(1) as f64;
        let width = 0.7 / k;
        for (b, spec) in group.boxes.iter().enumerate() {
            let plotted: Vec<f64> = spec
                .samples
                .iter()
                .filter_map(|v| y_axis.to_plot(*v))
                .collect();
            let Some([lo, q1, q2, q3, hi]) = box_stats(&plotted) else {
                continue;
            };
            let centre = g as f64 - 0.35 + width * (b as f64 + 0.5);
            let (l, r) = (centre - 0.4 * width, centre + 0.4 * width);
            let stroke = shape_style(spec.color, 2, false);
            let area = ctx.plotting_area();
            if spec.filled {
                let light = RGBColor(
                    ((u16::from(spec.color.0) + 2 * 255) / 3) as u8,
                    ((u16::from(spec.color.1) + 2 * 255) / 3) as u8,
                    ((u16::from(spec.color.2) + 2 * 255) / 3) as u8,
                );
                area.draw(&Rectangle::new(
                    [(l, inside(q1)), (r, inside(q3))],
                    shape_style(light, 1, true),
                ))
                .map_err(|e| e.to_string())?;
            }
            area.draw(&Rectangle::new([(l, inside(q1)), (r, inside(q3))], stroke))
                .map_err(|e| e.to_string())?;
            area.draw(&PathElement::new(
                vec![(l, inside(q2)), (r, inside(q2))],
                shape_style(spec.color, 3, false),
            ))
            .map_err(|e| e.to_string())?;
            for (from, to) in [(q3, hi), (q1, lo)] {
                area.draw(&PathElement::new(
                    vec![(centre, inside(from)), (centre, inside(to))],
                    stroke,
                ))
                .map_err(|e| e.to_string())?;
                area.draw(&PathElement::new(
                    vec![
                        (centre - 0.2 * width, inside(to)),
                        (centre + 0.2 * width, inside(to)),
                    ],
                    stroke,
                ))
                .map_err(|e| e.to_string())?;
            }
            for v in plotted.iter().filter(|v| **v < lo || **v > hi) {
                area.draw(&Circle::new(
                    (centre, inside(*v)),
                    2,
                    shape_style(spec.color, 1, false),
                ))
                .map_err(|e| e.to_string())?;
            }
        }
    }
    match strip {
        Some(right) => draw_legend(&right, (4, 6), &entries),
        None => Ok(()),
    }
}

/// A caption line for figure files: `min … max` of a value, three digits.
pub fn span_text(lo: f64, hi: f64) -> String {
    format!("{} … {}", format_value(lo), format_value(hi))
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
        assert_eq!(curves[1].same_as, Some(0));
        assert_eq!(curves[0].same_as, None);
    }

    #[test]
    fn decimation_keeps_spikes() {
        let mut points: Vec<(f64, f64)> = (0..10_000).map(|k| (k as f64, 0.0)).collect();
        points[5003].1 = 7.0;
        let kept = decimate(&points, 100);
        assert!(kept.len() <= 400);
        assert!(kept.iter().any(|p| p.1 == 7.0));
    }

    #[test]
    fn u_turns_split_the_path() {
        let pieces = split_at_sharp_turns(&[(0, 0), (10, 0), (10, 0), (0, 1), (-5, 2)]);
        assert_eq!(
            pieces,
            vec![vec![(0, 0), (10, 0)], vec![(10, 0), (0, 1), (-5, 2)]]
        );
    }

    #[test]
    fn dashes_follow_the_path() {
        let pieces = dash_pieces(&[(0, 0), (100, 0)], 10.0, 5.0);
        assert_eq!(pieces.len(), 7);
        assert_eq!(pieces[0], vec![(0, 0), (10, 0)]);
        assert_eq!(pieces[1], vec![(15, 0), (25, 0)]);
    }
}
