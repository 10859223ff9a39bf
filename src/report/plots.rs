//! Plots of a scenario's runs, each written as PNG (bitmap, text in the embedded Ubuntu
//! Light font) and SVG: mechanical energy with the analytical curve when there is one,
//! base trajectory, NCP criterion, total normal contact force, solver-time distribution.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::ReportError;
use crate::simulation::output::RunEntry;
use crate::simulation::recorder::{columns, read_columns};

/// Size of every figure (pixels).
const SIZE: (u32, u32) = (960, 600);
/// Residuals below this are drawn at this value on the log axis.
const RESIDUAL_FLOOR: f64 = 1e-16;
/// Font family every figure uses.
const FONT: &str = "sans-serif";

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

/// One curve.
#[derive(Debug, Clone)]
struct Series {
    label: String,
    points: Vec<(f64, f64)>,
    color: RGBColor,
    dashed: bool,
}

/// A figure that can be drawn on any plotters backend.
trait Figure {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String>;
}

/// Curves on linear axes.
struct LinePlot {
    title: String,
    x_label: String,
    y_label: String,
    series: Vec<Series>,
}

/// `[min, max]` of the data widened by 5 % of the span; a flat series (span below
/// `1e-9` of its magnitude: rounding noise) gets `±max(1 %, 1e-3)` around its value, so
/// that it is drawn flat rather than magnified.
fn padded_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let magnitude = lo.abs().max(hi.abs());
    let pad = if hi - lo > 1e-9 * magnitude + 1e-12 {
        0.05 * (hi - lo)
    } else {
        (0.01 * magnitude).max(1e-3)
    };
    (lo - pad, hi + pad)
}

impl Figure for LinePlot {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let points = || self.series.iter().flat_map(|s| s.points.iter());
        let (x0, x1) = padded_range(points().map(|p| p.0));
        let (y0, y1) = padded_range(points().map(|p| p.1));
        let mut chart = ChartBuilder::on(area)
            .caption(&self.title, (FONT, 22))
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(80)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc(self.x_label.as_str())
            .y_desc(self.y_label.as_str())
            .x_label_formatter(&tick)
            .y_label_formatter(&tick)
            .label_style((FONT, 15))
            .draw()
            .map_err(|e| e.to_string())?;
        for s in self.series.iter().filter(|s| !s.points.is_empty()) {
            let style = ShapeStyle {
                color: s.color.to_rgba(),
                filled: false,
                stroke_width: 2,
            };
            let legend =
                move |(x, y): (i32, i32)| PathElement::new(vec![(x, y), (x + 20, y)], style);
            if s.dashed {
                chart
                    .draw_series(DashedLineSeries::new(s.points.iter().copied(), 8, 6, style))
                    .map_err(|e| e.to_string())?
                    .label(s.label.as_str())
                    .legend(legend);
            } else {
                chart
                    .draw_series(LineSeries::new(s.points.iter().copied(), style))
                    .map_err(|e| e.to_string())?
                    .label(s.label.as_str())
                    .legend(legend);
            }
        }
        chart
            .configure_series_labels()
            .label_font((FONT, 15))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(|e| e.to_string())
    }
}

/// An axis label: scientific notation for very small or large values, else at most four
/// decimals without trailing zeros.
fn tick(v: &f64) -> String {
    let a = v.abs();
    if a != 0.0 && !(1e-3..1e5).contains(&a) {
        return format!("{v:.2e}");
    }
    let text = format!("{v:.4}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".into()
    } else {
        text.into()
    }
}

/// Two figures side by side.
struct SideBySide(LinePlot, LinePlot);

impl Figure for SideBySide {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let (left, right) = area.split_horizontally(area.dim_in_pixel().0 / 2);
        self.0.draw(&left)?;
        self.1.draw(&right)
    }
}

/// Box plots of samples, one per label (values drawn as `f32`, as plotters' box plots);
/// the axis spans the whiskers (1.5 interquartile ranges), outliers are not drawn.
struct BoxPlot {
    title: String,
    y_label: String,
    labels: Vec<String>,
    samples: Vec<Vec<f64>>,
}

impl Figure for BoxPlot {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let quartiles: Vec<Option<Quartiles>> = self
            .samples
            .iter()
            .map(|s| (!s.is_empty()).then(|| Quartiles::new(s)))
            .collect();
        let (y0, y1) = padded_range(
            quartiles
                .iter()
                .flatten()
                .flat_map(|q| q.values())
                .map(f64::from),
        );
        let n = self.labels.len().max(1) as i32;
        let labels = self.labels.clone();
        let mut chart = ChartBuilder::on(area)
            .caption(&self.title, (FONT, 22))
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(80)
            .build_cartesian_2d((0..n).into_segmented(), (y0.max(0.0) as f32)..(y1 as f32))
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .y_desc(self.y_label.as_str())
            .label_style((FONT, 14))
            .x_labels(labels.len().max(1))
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
                    labels.get(*i as usize).cloned().unwrap_or_default()
                }
                SegmentValue::Last => String::new(),
            })
            .draw()
            .map_err(|e| e.to_string())?;
        for (i, quartiles) in quartiles.iter().enumerate() {
            let Some(quartiles) = quartiles else {
                continue;
            };
            chart
                .draw_series(std::iter::once(
                    Boxplot::new_vertical(SegmentValue::CenterOf(i as i32), quartiles)
                        .width(30)
                        .style(Palette99::pick(i).stroke_width(2)),
                ))
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

/// Draws `figure` into `dir/<stem>.png` and `dir/<stem>.svg`.
fn render(figure: &impl Figure, dir: &Path, stem: &str) -> Result<(), ReportError> {
    ensure_font()?;
    let png = dir.join(format!("{stem}.png"));
    let svg = dir.join(format!("{stem}.svg"));
    let fail = |path: &Path, message: String| ReportError::Plot {
        path: path.display().to_string(),
        message,
    };
    {
        let area = BitMapBackend::new(&png, SIZE).into_drawing_area();
        area.fill(&WHITE).map_err(|e| fail(&png, e.to_string()))?;
        figure.draw(&area).map_err(|e| fail(&png, e))?;
        area.present().map_err(|e| fail(&png, e.to_string()))?;
    }
    let area = SVGBackend::new(&svg, SIZE).into_drawing_area();
    area.fill(&WHITE).map_err(|e| fail(&svg, e.to_string()))?;
    figure.draw(&area).map_err(|e| fail(&svg, e))?;
    area.present().map_err(|e| fail(&svg, e.to_string()))
}

/// The recorded columns of one run.
struct RunData {
    label: String,
    steps: BTreeMap<String, Vec<f64>>,
    contacts: BTreeMap<String, Vec<f64>>,
}

impl RunData {
    fn column(&self, name: &str) -> &[f64] {
        self.steps.get(name).map_or(&[], Vec::as_slice)
    }

    fn curve(&self, x: &str, y: &str) -> Vec<(f64, f64)> {
        self.column(x)
            .iter()
            .zip(self.column(y))
            .map(|(a, b)| (*a, *b))
            .filter(|(a, b)| a.is_finite() && b.is_finite())
            .collect()
    }

    /// `Σ λ_N / Δt` (N) per step, at the step's time.
    fn normal_force(&self, dt: f64) -> Vec<(f64, f64)> {
        let empty = Vec::new();
        let steps = self.contacts.get(columns::STEP).unwrap_or(&empty);
        let lambda_n = self.contacts.get(columns::LAMBDA[2]).unwrap_or(&empty);
        let mut total: BTreeMap<usize, f64> = BTreeMap::new();
        for (s, l) in steps.iter().zip(lambda_n) {
            *total.entry(*s as usize).or_default() += l / dt;
        }
        let times = self.column(columns::TIME);
        let step_index = self.column(columns::STEP);
        step_index
            .iter()
            .zip(times)
            .skip(1)
            .map(|(s, t)| (*t, total.get(&(*s as usize)).copied().unwrap_or(0.0)))
            .collect()
    }
}

/// Short legend labels: the solver ids, or the full texts when an id repeats.
fn labels(runs: &[&RunEntry]) -> Vec<String> {
    let id = |r: &RunEntry| {
        let text = &r.summary.solver;
        text.split(':').next().unwrap_or(text).to_string()
    };
    let ids: Vec<String> = runs.iter().map(|r| id(r)).collect();
    runs.iter()
        .zip(&ids)
        .map(|(r, i)| {
            if ids.iter().filter(|x| *x == i).count() > 1 {
                r.summary.solver.clone()
            } else {
                i.clone()
            }
        })
        .collect()
}

fn load(results: &Path, entry: &RunEntry, label: String) -> Result<RunData, ReportError> {
    let dir = results.join(&entry.path);
    let steps = if dir.join("steps.csv").is_file() {
        read_columns(&dir.join("steps.csv"))?
    } else {
        BTreeMap::new()
    };
    let contacts = if dir.join("contacts.csv").is_file() {
        read_columns(&dir.join("contacts.csv"))?
    } else {
        BTreeMap::new()
    };
    Ok(RunData {
        label,
        steps,
        contacts,
    })
}

fn series(i: usize, label: &str, points: Vec<(f64, f64)>) -> Series {
    let c = Palette99::pick(i).to_rgba();
    Series {
        label: label.to_string(),
        points,
        color: RGBColor(c.0, c.1, c.2),
        dashed: false,
    }
}

/// Draws every plot of one scenario into `out`; returns `(title, file stem)` pairs.
pub fn scenario_plots(
    results: &Path,
    scenario: &str,
    runs: &[&RunEntry],
    out: &Path,
) -> Result<Vec<(String, String)>, ReportError> {
    let data: Vec<RunData> = runs
        .iter()
        .zip(labels(runs))
        .map(|(r, label)| load(results, r, label))
        .collect::<Result<_, _>>()?;
    let dt = runs.first().map_or(1e-3, |r| r.summary.dt);
    let stem = |what: &str| format!("{}_{what}", crate::simulation::output::sanitize(scenario));
    let mut files = Vec::new();

    let mut energy: Vec<Series> = data
        .iter()
        .enumerate()
        .map(|(i, d)| {
            series(
                i,
                &d.label,
                d.curve(columns::TIME, columns::MECHANICAL_ENERGY),
            )
        })
        .collect();
    if let Some(analytical) = data
        .iter()
        .map(|d| d.curve(columns::TIME, columns::ANALYTICAL_ENERGY))
        .find(|c| !c.is_empty())
    {
        energy.push(Series {
            label: "analytical".into(),
            points: analytical,
            color: BLACK,
            dashed: true,
        });
    }
    let title = format!("{scenario}: mechanical energy");
    render(
        &LinePlot {
            title: title.clone(),
            x_label: "time (s)".into(),
            y_label: "energy (J)".into(),
            series: energy,
        },
        out,
        &stem("energy"),
    )?;
    files.push((title, stem("energy")));

    let title = format!("{scenario}: base trajectory");
    render(
        &SideBySide(
            LinePlot {
                title: "top view".into(),
                x_label: "x (m)".into(),
                y_label: "y (m)".into(),
                series: data
                    .iter()
                    .enumerate()
                    .map(|(i, d)| series(i, &d.label, d.curve(columns::BASE[0], columns::BASE[1])))
                    .collect(),
            },
            LinePlot {
                title: "height".into(),
                x_label: "time (s)".into(),
                y_label: "z (m)".into(),
                series: data
                    .iter()
                    .enumerate()
                    .map(|(i, d)| series(i, &d.label, d.curve(columns::TIME, columns::BASE[2])))
                    .collect(),
            },
        ),
        out,
        &stem("trajectory"),
    )?;
    files.push((title, stem("trajectory")));

    let title = format!("{scenario}: NCP criterion");
    render(
        &LinePlot {
            title: title.clone(),
            x_label: "time (s)".into(),
            y_label: "log10 NCP criterion".into(),
            series: data
                .iter()
                .enumerate()
                .map(|(i, d)| {
                    let points = d
                        .column(columns::TIME)
                        .iter()
                        .zip(d.column("ncp_criterion"))
                        .zip(d.column(columns::NUM_CONTACTS))
                        .filter(|(_, n)| **n > 0.0)
                        .map(|((t, r), _)| (*t, r.max(RESIDUAL_FLOOR).log10()))
                        .collect();
                    series(i, &d.label, points)
                })
                .collect(),
        },
        out,
        &stem("residuals"),
    )?;
    files.push((title, stem("residuals")));

    let title = format!("{scenario}: total normal contact force");
    render(
        &LinePlot {
            title: title.clone(),
            x_label: "time (s)".into(),
            y_label: "Σ λ_N / Δt (N)".into(),
            series: data
                .iter()
                .enumerate()
                .map(|(i, d)| series(i, &d.label, d.normal_force(dt)))
                .collect(),
        },
        out,
        &stem("forces"),
    )?;
    files.push((title, stem("forces")));

    let title = format!("{scenario}: solver time per step with contacts");
    render(
        &BoxPlot {
            title: title.clone(),
            y_label: "solve time (µs)".into(),
            labels: data.iter().map(|d| d.label.clone()).collect(),
            samples: data
                .iter()
                .map(|d| {
                    d.column(columns::SOLVE_TIME)
                        .iter()
                        .zip(d.column(columns::NUM_CONTACTS))
                        .filter(|(_, n)| **n > 0.0)
                        .map(|(t, _)| t * 1e6)
                        .collect()
                })
                .collect(),
        },
        out,
        &stem("timings"),
    )?;
    files.push((title, stem("timings")));
    Ok(files)
}
