//! Plots of a scenario's runs (`contactbench report`), read in bounded memory: mechanical
//! energy (as the difference from the analytical curve when there is one), base
//! trajectory (top view with equal aspect, and height; none for a fixed-base robot;
//! motion below 1 µm drawn flat and said to be round-off), the worst NCP criterion per
//! time window on a log axis (only at steps with contacts; round-off below 1e-16 drawn at
//! that floor), total normal contact force (variation below 0.1 % drawn flat and said
//! so) and solver-time box plots on a log axis. Drawn with [`super::chart`], so that
//! every solver keeps its style.

use std::path::Path;

use super::axis::{format_value, Scale};
use super::chart::{render, BoxChart, BoxGroup, BoxSpec, Curve, Figure, LineChart, Panel};
use super::stream::{CsvRows, Decimator, Quantiles};
use super::style::label_style;
use super::ReportError;
use crate::simulation::output::RunEntry;
use crate::simulation::recorder::columns;

/// What the plots need of one run, read in one pass over its CSV files and reduced as
/// it is read ([`super::stream`]): memory does not grow with the number of steps.
pub struct RunData {
    /// Legend label.
    pub label: String,
    /// Mechanical energy against time (J).
    pub energy: Vec<(f64, f64)>,
    /// Mechanical minus analytical energy against time (J); empty without an analytical
    /// energy.
    pub energy_gap: Vec<(f64, f64)>,
    /// Base position, top view (m).
    pub top_view: Vec<(f64, f64)>,
    /// Base height against time (m).
    pub height: Vec<(f64, f64)>,
    /// NCP criterion against time at steps with contacts, NaN elsewhere (a gap).
    pub ncp_criterion: Vec<(f64, f64)>,
    /// `Σ λ_N / Δt` (N) per step after the first, at the step's time (0 without contact).
    pub normal_force: Vec<(f64, f64)>,
    /// Solver wall times (µs) of the steps with contacts, as quantile samples.
    pub solve_times_us: Vec<f64>,
    /// First and last recorded time (s).
    pub time_span: Option<(f64, f64)>,
}

/// Quantile samples kept for a box plot.
const BOX_SAMPLES: usize = 2001;

impl RunData {
    /// Reads a run directory (`steps.csv`, `contacts.csv`; a missing file gives nothing)
    /// whose time step is `dt`.
    pub fn read(dir: &Path, label: String, dt: f64) -> Result<Self, ReportError> {
        let steps_path = dir.join("steps.csv");
        let mut data = Self {
            label,
            energy: Vec::new(),
            energy_gap: Vec::new(),
            top_view: Vec::new(),
            height: Vec::new(),
            ncp_criterion: Vec::new(),
            normal_force: Vec::new(),
            solve_times_us: Vec::new(),
            time_span: None,
        };
        if !steps_path.is_file() {
            return Ok(data);
        }
        let mut steps = CsvRows::open(
            &steps_path,
            &[
                columns::STEP,
                columns::TIME,
                columns::MECHANICAL_ENERGY,
                columns::ANALYTICAL_ENERGY,
                columns::BASE[0],
                columns::BASE[1],
                columns::BASE[2],
                "ncp_criterion",
                columns::NUM_CONTACTS,
                columns::SOLVE_TIME,
            ],
        )?;
        let mut forces = ContactForces::open(&dir.join("contacts.csv"))?;
        let mut curves: [Decimator; 6] = Default::default();
        let mut times = Quantiles::default();
        let mut row = [0.0; 10];
        let mut first = true;
        while steps.next_into(&mut row)? {
            let [step, t, energy, analytical, x, y, z, ncp, contacts, solve] = row;
            data.time_span = Some(data.time_span.map_or((t, t), |(a, _)| (a, t)));
            curves[0].push(t, energy);
            if analytical.is_finite() {
                curves[1].push(t, energy - analytical);
            }
            curves[2].push(x, y);
            curves[3].push(t, z);
            curves[4].push(t, if contacts > 0.0 { ncp } else { f64::NAN });
            if contacts > 0.0 {
                times.push(solve * 1e6);
            }
            let total = forces.total_of(step)?;
            if !first {
                curves[5].push(t, total / dt);
            }
            first = false;
        }
        let [energy, gap, top, height, ncp, force] = curves.map(|c| c.points());
        data.energy = energy;
        data.energy_gap = gap;
        data.top_view = top;
        data.height = height;
        data.ncp_criterion = ncp;
        data.normal_force = force;
        data.solve_times_us = times.samples(BOX_SAMPLES);
        Ok(data)
    }
}

/// `contacts.csv` read alongside `steps.csv`: the sum of `λ_N` of each step (the rows
/// come in step order).
struct ContactForces {
    rows: Option<CsvRows>,
    pending: Option<(f64, f64)>,
}

impl ContactForces {
    fn open(path: &Path) -> Result<Self, ReportError> {
        let rows = if path.is_file() {
            Some(CsvRows::open(path, &[columns::STEP, columns::LAMBDA[2]])?)
        } else {
            None
        };
        Ok(Self {
            rows,
            pending: None,
        })
    }

    /// `Σ λ_N` of the rows of `step` (rows of earlier steps are passed over).
    fn total_of(&mut self, step: f64) -> Result<f64, ReportError> {
        let Some(rows) = self.rows.as_mut() else {
            return Ok(0.0);
        };
        let mut total = 0.0;
        loop {
            let (s, lambda_n) = match self.pending.take() {
                Some(p) => p,
                None => {
                    let mut row = [0.0; 2];
                    if !rows.next_into(&mut row)? {
                        return Ok(total);
                    }
                    (row[0], row[1])
                }
            };
            if s > step {
                self.pending = Some((s, lambda_n));
                return Ok(total);
            }
            if s == step && lambda_n.is_finite() {
                total += lambda_n;
            }
        }
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

/// The energy figure: `|E − E_analytical|` on a log axis when the runs have an analytical
/// curve (the gap is what matters, and it spans decades between solvers that keep the
/// energy to round-off and solvers that dissipate it; `E` itself is dominated by the
/// potential energy; an exact zero is marked on the lower edge), else `E`.
pub fn energy_chart(title: String, data: &[RunData]) -> LineChart {
    let has_analytical = data.iter().any(|d| !d.energy_gap.is_empty());
    if has_analytical {
        let floor = ENERGY_ROUND_OFF * largest_energy(data);
        LineChart {
            title,
            x_label: "time (s)".into(),
            y_label: format!(
                "|mechanical − analytical energy| (J), round-off below {}",
                format_value(floor)
            ),
            y_scale: Scale::Log,
            curves: data
                .iter()
                .map(|d| {
                    let gap = d
                        .energy_gap
                        .iter()
                        .map(|(t, e)| (*t, e.abs().max(floor)))
                        .collect();
                    Curve::new(d.label.clone(), gap)
                })
                .collect(),
            ..Default::default()
        }
    } else {
        LineChart {
            title,
            x_label: "time (s)".into(),
            y_label: "mechanical energy (J)".into(),
            curves: data
                .iter()
                .map(|d| Curve::new(d.label.clone(), d.energy.clone()))
                .collect(),
            ..Default::default()
        }
    }
}

/// An energy gap below this fraction of the largest |E| is round-off: it is drawn at
/// that floor rather than as a trajectory through the decades of round-off.
const ENERGY_ROUND_OFF: f64 = 1e-10;

/// The largest |mechanical energy| of the runs (J).
fn largest_energy(data: &[RunData]) -> f64 {
    data.iter()
        .flat_map(|d| d.energy.iter().map(|p| p.1.abs()))
        .filter(|e| e.is_finite())
        .fold(0.0, f64::max)
}

/// The energy figure's title: what its axis shows.
pub fn energy_title(scenario: &str, data: &[RunData]) -> String {
    if data.iter().any(|d| !d.energy_gap.is_empty()) {
        format!("{scenario}: energy error, |mechanical − analytical|")
    } else {
        format!("{scenario}: mechanical energy")
    }
}

/// Base motion smaller than this (m) is below what a trajectory figure resolves: it is
/// drawn flat and the panel says so.
const STILL: f64 = 1e-6;
/// Smallest span of a position axis (m), so that motion below [`STILL`] is not magnified.
const POSITION_SPAN: f64 = 1e-3;

/// Largest span of the coordinate `pick` over the runs' points (0 without points).
fn largest_span(series: &[&[(f64, f64)]], pick: fn(&(f64, f64)) -> f64) -> f64 {
    series
        .iter()
        .map(|points| {
            let (lo, hi) = points
                .iter()
                .map(pick)
                .filter(|v| v.is_finite())
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                    (a.min(v), b.max(v))
                });
            if hi >= lo {
                hi - lo
            } else {
                0.0
            }
        })
        .fold(0.0, f64::max)
}

/// A fixed-base robot's runs record the base at the origin at every step: they have no
/// base trajectory to draw.
fn fixed_base(data: &[RunData]) -> bool {
    data.iter().all(|d| {
        d.top_view.iter().all(|p| p.0 == 0.0 && p.1 == 0.0) && d.height.iter().all(|p| p.1 == 0.0)
    })
}

/// A panel title with a note when the motion it shows is below [`STILL`].
fn still_note(title: &str, span: f64) -> String {
    if span < STILL {
        format!("{title} (moves by less than 1 µm: round-off, drawn flat)")
    } else {
        title.to_string()
    }
}

/// A total normal force that varies by less than this fraction of its largest value
/// varies at the solvers' tolerance or round-off: the force axis is at least this
/// fraction wide, so that such variation is drawn flat and not magnified into spikes.
const FORCE_RESOLUTION: f64 = 1e-3;

/// The largest |y| of the runs' points (0 without finite points).
fn largest_magnitude(series: &[&[(f64, f64)]]) -> f64 {
    series
        .iter()
        .flat_map(|points| points.iter().map(|p| p.1.abs()))
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max)
}

/// A force panel's title with a note when every run's force varies by less than
/// `resolution` (N), the axis's smallest span.
fn flat_force_note(title: &str, span: f64, resolution: f64) -> String {
    if span < resolution {
        format!(
            "{title} (varies by less than {} %: drawn flat)",
            format_value(FORCE_RESOLUTION * 100.0)
        )
    } else {
        title.to_string()
    }
}

/// The NCP criterion is relative: below the machine precision (2.2e-16) it is round-off,
/// drawn at this floor rather than through tens of decades of round-off.
const CRITERION_ROUND_OFF: f64 = 1e-16;

/// `points` with every finite value below `floor` (zero included) raised to it; NaN (a
/// gap) kept.
fn floored(points: &[(f64, f64)], floor: f64) -> Vec<(f64, f64)> {
    points
        .iter()
        .map(|&(t, v)| (t, if v.is_nan() { v } else { v.max(floor) }))
        .collect()
}

/// Bins per run of the residual figure's envelope.
const ENVELOPE_BINS: usize = 200;

/// The largest value per bin of `bins` equal time bins (NaN, a gap, where a bin has no
/// finite value): a residual that alternates between round-off and 1e-3 from one step to
/// the next reads as its worst level, not as a solid band.
fn upper_envelope(points: &[(f64, f64)], bins: usize) -> Vec<(f64, f64)> {
    let finite_x = points.iter().map(|p| p.0).filter(|x| x.is_finite());
    let (lo, hi) = finite_x.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    let spans_an_interval = hi > lo;
    if !spans_an_interval || bins == 0 {
        return points.to_vec();
    }
    let width = (hi - lo) / bins as f64;
    let mut top: Vec<Option<f64>> = vec![None; bins];
    for (x, y) in points.iter().filter(|p| p.0.is_finite() && p.1.is_finite()) {
        let k = (((x - lo) / width) as usize).min(bins - 1);
        top[k] = Some(top[k].map_or(*y, |t: f64| t.max(*y)));
    }
    top.iter()
        .enumerate()
        .map(|(k, t)| (lo + (k as f64 + 0.5) * width, t.unwrap_or(f64::NAN)))
        .collect()
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
        .map(|(r, label)| RunData::read(&results.join(&r.path), label, r.summary.dt))
        .collect::<Result<_, _>>()?;
    let stem = |what: &str| format!("{}_{what}", crate::simulation::output::sanitize(scenario));
    let mut files = Vec::new();
    let mut add = |title: String, what: &str, figure: Figure| -> Result<(), ReportError> {
        render(&figure, out, &stem(what))?;
        files.push((title, stem(what)));
        Ok(())
    };

    let title = energy_title(scenario, &data);
    add(
        title.clone(),
        "energy",
        Figure::single(Panel::Line(energy_chart(title, &data))),
    )?;

    if !fixed_base(&data) {
        let tops: Vec<&[(f64, f64)]> = data.iter().map(|d| d.top_view.as_slice()).collect();
        let heights: Vec<&[(f64, f64)]> = data.iter().map(|d| d.height.as_slice()).collect();
        let horizontal = largest_span(&tops, |p| p.0).max(largest_span(&tops, |p| p.1));
        let vertical = largest_span(&heights, |p| p.1);
        let top = LineChart {
            title: still_note("top view", horizontal),
            x_label: "x (m)".into(),
            y_label: "y (m)".into(),
            curves: data
                .iter()
                .map(|d| Curve::new(d.label.clone(), d.top_view.clone()))
                .collect(),
            equal_aspect: true,
            min_span: (POSITION_SPAN, POSITION_SPAN),
            ..Default::default()
        };
        let height = LineChart {
            title: still_note("base height", vertical),
            x_label: "time (s)".into(),
            y_label: "base height z (m)".into(),
            curves: data
                .iter()
                .map(|d| Curve::new(d.label.clone(), d.height.clone()))
                .collect(),
            min_span: (0.0, POSITION_SPAN),
            ..Default::default()
        };
        let title = format!("{scenario}: base trajectory");
        add(
            title.clone(),
            "trajectory",
            Figure::grid(title, 2, vec![Panel::Line(top), Panel::Line(height)]),
        )?;
    }

    // Without a step with contacts the contact figures would be empty panels.
    if !data
        .iter()
        .any(|d| d.ncp_criterion.iter().any(|p| p.1.is_finite()))
    {
        return Ok(files);
    }
    let title = format!("{scenario}: NCP criterion, worst per 1/{ENVELOPE_BINS} of the run");
    add(
        title.clone(),
        "residuals",
        Figure::single(Panel::Line(LineChart {
            title,
            x_label: "time (s)".into(),
            y_label: format!(
                "largest NCP criterion in the window, round-off below {}",
                format_value(CRITERION_ROUND_OFF)
            ),
            y_scale: Scale::Log,
            curves: data
                .iter()
                .map(|d| {
                    let envelope = upper_envelope(&d.ncp_criterion, ENVELOPE_BINS);
                    Curve::new(d.label.clone(), floored(&envelope, CRITERION_ROUND_OFF))
                })
                .collect(),
            ..Default::default()
        })),
    )?;

    let title = format!("{scenario}: total normal contact force");
    let forces: Vec<&[(f64, f64)]> = data.iter().map(|d| d.normal_force.as_slice()).collect();
    let force_span = FORCE_RESOLUTION * largest_magnitude(&forces);
    add(
        title.clone(),
        "forces",
        Figure::single(Panel::Line(LineChart {
            title: flat_force_note(&title, largest_span(&forces, |p| p.1), force_span),
            x_label: "time (s)".into(),
            y_label: "total normal contact force (N)".into(),
            curves: data
                .iter()
                .map(|d| Curve::new(d.label.clone(), d.normal_force.clone()))
                .collect(),
            min_span: (0.0, force_span),
            ..Default::default()
        })),
    )?;

    let title = format!("{scenario}: solver time per step with contacts");
    add(
        title.clone(),
        "timings",
        Figure::single(Panel::Box(BoxChart {
            title,
            y_label: "solver time per step (µs)".into(),
            y_scale: Scale::Log,
            groups: data
                .iter()
                .map(|d| BoxGroup {
                    label: d.label.clone(),
                    boxes: vec![BoxSpec {
                        samples: d.solve_times_us.clone(),
                        color: label_style(&d.label).color,
                        filled: true,
                    }],
                })
                .collect(),
            legend: Vec::new(),
        })),
    )?;
    Ok(files)
}
