//! Plots of a scenario's runs (`contactbench report`): mechanical energy (as the
//! difference from the analytical curve when there is one), base trajectory (top view
//! with equal aspect, and height), NCP criterion on a log axis (only at steps with
//! contacts), total normal contact force and solver-time box plots on a log axis. Drawn
//! with [`super::chart`], so that every solver keeps its style.

use std::collections::BTreeMap;
use std::path::Path;

use super::axis::Scale;
use super::chart::{render, BoxChart, BoxGroup, BoxSpec, Curve, Figure, LineChart, Panel};
use super::style::{label_style, ANALYTICAL};
use super::ReportError;
use crate::simulation::output::RunEntry;
use crate::simulation::recorder::{columns, read_columns};

/// The recorded columns of one run.
pub struct RunData {
    /// Legend label.
    pub label: String,
    /// Columns of `steps.csv`.
    pub steps: BTreeMap<String, Vec<f64>>,
    /// Columns of `contacts.csv`.
    pub contacts: BTreeMap<String, Vec<f64>>,
}

impl RunData {
    /// Reads a run directory (`steps.csv`, `contacts.csv`; a missing file gives no column).
    pub fn read(dir: &Path, label: String) -> Result<Self, ReportError> {
        let read = |name: &str| {
            let path = dir.join(name);
            if path.is_file() {
                read_columns(&path)
            } else {
                Ok(BTreeMap::new())
            }
        };
        Ok(Self {
            label,
            steps: read("steps.csv")?,
            contacts: read("contacts.csv")?,
        })
    }

    /// A column of `steps.csv` (empty when absent).
    pub fn column(&self, name: &str) -> &[f64] {
        self.steps.get(name).map_or(&[], Vec::as_slice)
    }

    /// `(x, y)` pairs of two columns.
    pub fn curve(&self, x: &str, y: &str) -> Vec<(f64, f64)> {
        self.column(x)
            .iter()
            .zip(self.column(y))
            .map(|(a, b)| (*a, *b))
            .collect()
    }

    /// `(time, y)` at steps with contacts, NaN elsewhere (a gap in the plot).
    pub fn contact_curve(&self, y: &str) -> Vec<(f64, f64)> {
        self.column(columns::TIME)
            .iter()
            .zip(self.column(y))
            .zip(self.column(columns::NUM_CONTACTS))
            .map(|((t, v), n)| (*t, if *n > 0.0 { *v } else { f64::NAN }))
            .collect()
    }

    /// `Σ λ_N / Δt` (N) per step, at the step's time (0 at steps without contact).
    pub fn normal_force(&self, dt: f64) -> Vec<(f64, f64)> {
        let empty = Vec::new();
        let steps = self.contacts.get(columns::STEP).unwrap_or(&empty);
        let lambda_n = self.contacts.get(columns::LAMBDA[2]).unwrap_or(&empty);
        let mut total: BTreeMap<usize, f64> = BTreeMap::new();
        for (s, l) in steps.iter().zip(lambda_n) {
            *total.entry(*s as usize).or_default() += l / dt;
        }
        self.column(columns::STEP)
            .iter()
            .zip(self.column(columns::TIME))
            .skip(1)
            .map(|(s, t)| (*t, total.get(&(*s as usize)).copied().unwrap_or(0.0)))
            .collect()
    }

    /// Solver wall times (µs) of the steps with contacts.
    pub fn solve_times_us(&self) -> Vec<f64> {
        self.column(columns::SOLVE_TIME)
            .iter()
            .zip(self.column(columns::NUM_CONTACTS))
            .filter(|(_, n)| **n > 0.0)
            .map(|(t, _)| t * 1e6)
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

/// The energy figure: `E − E_analytical` when the runs have an analytical curve (the
/// gap is what matters; `E` itself is dominated by the potential energy), else `E`.
pub fn energy_chart(title: String, data: &[RunData]) -> LineChart {
    let has_analytical = data.iter().any(|d| {
        d.column(columns::ANALYTICAL_ENERGY)
            .iter()
            .any(|v| v.is_finite())
    });
    let curves = if has_analytical {
        data.iter()
            .map(|d| {
                let points = d
                    .column(columns::TIME)
                    .iter()
                    .zip(d.column(columns::MECHANICAL_ENERGY))
                    .zip(d.column(columns::ANALYTICAL_ENERGY))
                    .map(|((t, e), a)| (*t, e - a))
                    .collect();
                Curve::new(d.label.clone(), points)
            })
            .chain(std::iter::once(Curve::styled(
                "analytical (0)",
                data.first()
                    .map(|d| d.column(columns::TIME).iter().map(|t| (*t, 0.0)).collect())
                    .unwrap_or_default(),
                ANALYTICAL,
            )))
            .collect()
    } else {
        data.iter()
            .map(|d| {
                Curve::new(
                    d.label.clone(),
                    d.curve(columns::TIME, columns::MECHANICAL_ENERGY),
                )
            })
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
        .map(|(r, label)| RunData::read(&results.join(&r.path), label))
        .collect::<Result<_, _>>()?;
    let dt = runs.first().map_or(1e-3, |r| r.summary.dt);
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
            .map(|d| Curve::new(d.label.clone(), d.curve(columns::BASE[0], columns::BASE[1])))
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
            .map(|d| Curve::new(d.label.clone(), d.curve(columns::TIME, columns::BASE[2])))
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
                .map(|d| Curve::new(d.label.clone(), d.contact_curve("ncp_criterion")))
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
                .map(|d| Curve::new(d.label.clone(), d.normal_force(dt)))
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
                        samples: d.solve_times_us(),
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
