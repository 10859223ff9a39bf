//! Figures: line charts and box plots, alone or in a grid of panels, written as SVG, PNG
//! and PDF from one drawing, laid out and rendered with the embedded Ubuntu Light font
//! (`files.rs`). The drawing rules every figure follows:
//!
//! - a solver keeps its colour, dash and marker in every figure ([`super::style`]);
//! - ticks and labels come from [`super::axis`]: never repeated, log axes on decades;
//! - a curve is cut where it has no value (a NaN point, or a value ≤ 0 on a log axis):
//!   no line is drawn across steps without contacts;
//! - every segment is clipped to the plotting area in data space, and the title sits
//!   above the area, so that nothing is drawn over the title or the axes;
//! - curves that coincide (within 0.2 % of the axis spans) get markers at staggered
//!   points and a legend entry that says which curve they coincide with;
//! - the legend goes to the corner of the plot that hides no data, or outside it (right,
//!   or below a narrow panel): never over data;
//! - on a linear axis, a curve whose peak is 20 times the median curve's (a diverged run)
//!   is drawn off scale: clipped, marked where it leaves, its peak in the legend;
//! - on a log axis, values ≤ 0 are marked on the lower edge and counted in the legend;
//! - top views can be drawn with equal aspect (one metre is as long on both axes).
//!
//! The module's files: `lines.rs` (line charts: gaps, decimation, clipping, coincident
//! curves), `boxes.rs` (box plots), `legend.rs` (legend size and placement),
//! `strokes.rs` (dashed paths and markers in pixels), `files.rs` (the SVG rendered to PNG
//! and PDF). plotters (the maintained Rust
//! charting crate) gives the backends, axes and meshes; the curves are drawn as pixel
//! paths rather than with its line series, which have no gaps, no clipping in data space
//! and no markers staggered between coinciding curves.

use std::path::Path;
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;

mod boxes;
mod files;
mod legend;
mod lines;
mod strokes;

use super::axis::{format_value, Scale};
use super::style::{label_style, LineStyle};
use super::ReportError;
use boxes::draw_box_chart;
use lines::draw_line_chart;

pub use files::font_family;

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

/// Registers the embedded font once (ab_glyph has no system fonts).
fn ensure_font() -> Result<(), ReportError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, files::FONT_DATA).is_ok()
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
    /// Smallest spans of the x and y axes (data units, linear axes; 0: none), so that
    /// motion below what the figure resolves (round-off) is drawn flat, not magnified.
    pub min_span: (f64, f64),
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

/// Draws `figure` into `dir/<stem>.svg`, `.png` and `.pdf`: one SVG drawing, rendered to
/// PNG and PDF with the font it was laid out with ([`files`]).
pub fn render(figure: &Figure, dir: &Path, stem: &str) -> Result<(), ReportError> {
    ensure_font()?;
    let fail = |message: String| ReportError::Plot {
        path: dir.join(format!("{stem}.svg")).display().to_string(),
        message,
    };
    let mut svg = String::new();
    {
        let area = SVGBackend::with_string(&mut svg, figure.size()).into_drawing_area();
        figure.draw(&area).map_err(fail)?;
        area.present().map_err(|e| fail(e.to_string()))?;
    }
    let rendered = files::render_svg(&svg).map_err(fail)?;
    files::write_files(&rendered, dir, stem)
        .map_err(|(path, message)| ReportError::Plot { path, message })
}

/// A caption line for figure files: `min … max` of a value, three digits.
pub fn span_text(lo: f64, hi: f64) -> String {
    format!("{} … {}", format_value(lo), format_value(hi))
}
