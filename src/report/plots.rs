//! Plots of a scenario's runs (`contactbench report`), read in bounded memory: mechanical energy (as the
//! difference from the analytical curve when there is one), base trajectory (top view
//! with equal aspect, and height), NCP criterion on a log axis (only at steps with
//! contacts), total normal contact force and solver-time box plots on a log axis. Drawn
//! with [`super::chart`], so that every solver keeps its style.

use std::path::Path;

use super::axis::Scale;
use super::chart::{render, BoxChart, BoxGroup, BoxSpec, Curve, Figure, LineChart, Panel};
use super::stream::{CsvRows, Decimator, Quantiles};
use super::style::{label_style, ANALYTICAL};
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

/// The energy figure: `E − E_analytical` when the runs have an analytical curve (the
/// gap is what matters; `E` itself is dominated by the potential energy), else `E`.
pub fn energy_chart(title: String, data: &[RunData]) -> LineChart {
    let has_analytical = data.iter().any(|d| !d.energy_gap.is_empty());
    let curves = if has_analytical {
        let span = data.first().and_then(|d| d.time_span);
        data.iter()
            .map(|d| Curve::new(d.label.clone(), d.energy_gap.clone()))
            .chain(std::iter::once(Curve::styled(
                "analytical (0)",
                span.map(|(a, b)| vec![(a, 0.0), (b, 0.0)])
                    .unwrap_or_default(),
                ANALYTICAL,
            )))
            .collect()
    } else {
        data.iter()
            .map(|d| Curve::new(d.label.clone(), d.energy.clone()))
            .collect()
    };
    LineChart {
        title,
        x_label: "time (s)".into(),
        y_label: if has_analytical {
            "E − E_analytical (J)".into()
        } else {
            "mechanical energy (J)".into()
        },
        curves,
        ..Default::default()
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
        .map(|(r, label)| RunData::read(&results.join(&r.path), label, r.summary.dt))
        .collect::<Result<_, _>>()?;
    let stem = |what: &str| format!("{}_{what}", crate::simulation::output::sanitize(scenario));
    let mut files = Vec::new();
    let mut add = |title: String, what: &str, figure: Figure| -> Result<(), ReportError> {
        render(&figure, out, &stem(what))?;
        files.push((title, stem(what)));
        Ok(())
    };

    let title = format!("{scenario}: mechanical energy");
    add(
        title.clone(),
        "energy",
        Figure::single(Panel::Line(energy_chart(title, &data))),
    )?;

    let top = LineChart {
        title: "top view".into(),
        x_label: "x (m)".into(),
        y_label: "y (m)".into(),
        curves: data
            .iter()
            .map(|d| Curve::new(d.label.clone(), d.top_view.clone()))
            .collect(),
        equal_aspect: true,
        ..Default::default()
    };
    let height = LineChart {
        title: "height".into(),
        x_label: "time (s)".into(),
        y_label: "z (m)".into(),
        curves: data
            .iter()
            .map(|d| Curve::new(d.label.clone(), d.height.clone()))
            .collect(),
        ..Default::default()
    };
    let title = format!("{scenario}: base trajectory");
    add(
        title.clone(),
        "trajectory",
        Figure::grid(title, 2, vec![Panel::Line(top), Panel::Line(height)]),
    )?;

    let title = format!("{scenario}: NCP criterion (steps with contacts)");
    add(
        title.clone(),
        "residuals",
        Figure::single(Panel::Line(LineChart {
            title,
            x_label: "time (s)".into(),
            y_label: "NCP criterion".into(),
            y_scale: Scale::Log,
            curves: data
                .iter()
                .map(|d| Curve::new(d.label.clone(), d.ncp_criterion.clone()))
                .collect(),
            ..Default::default()
        })),
    )?;

    let title = format!("{scenario}: total normal contact force");
    add(
        title.clone(),
        "forces",
        Figure::single(Panel::Line(LineChart {
            title,
            x_label: "time (s)".into(),
            y_label: "Σ λ_N / Δt (N)".into(),
            curves: data
                .iter()
                .map(|d| Curve::new(d.label.clone(), d.normal_force.clone()))
                .collect(),
            ..Default::default()
        })),
    )?;

    let title = format!("{scenario}: solver time per step with contacts");
    add(
        title.clone(),
        "timings",
        Figure::single(Panel::Box(BoxChart {
            title,
            y_label: "solve time (µs)".into(),
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
