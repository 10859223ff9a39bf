//! Recording of a run, per step: state, contacts and forces, the metrics of design.md §5,
//! energy, iterations and wall times. Written as CSV (one row per step, `steps.csv`; one
//! row per contact and step, `contacts.csv`) plus a JSON summary (`summary.json`).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use nalgebra::DVector;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::collision::DetectionOutcomes;
use crate::metrics::energy::MechanicalEnergy;
use crate::metrics::ProblemMetrics;

/// Why a record could not be written or read.
#[derive(Debug, Error)]
pub enum RecordError {
    /// File system error.
    #[error("{path}: {error}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        error: std::io::Error,
    },
    /// CSV error.
    #[error("{path}: {error}")]
    Csv {
        /// The file.
        path: String,
        /// The error.
        error: csv::Error,
    },
    /// JSON error.
    #[error("{path}: {error}")]
    Json {
        /// The file.
        path: String,
        /// The error.
        error: serde_json::Error,
    },
    /// A value in a CSV file is not a number.
    #[error("{path}: row {row}, column {column}: '{value}' is not a number")]
    NotANumber {
        /// The file.
        path: String,
        /// Row (1-based, header excluded).
        row: usize,
        /// Column name.
        column: String,
        /// The text.
        value: String,
    },
}

/// Wall time (s) of each stage of a step, in pipeline order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct StageTimings {
    /// Kinematics, mass matrix and nonlinear effects.
    pub dynamics: f64,
    /// Collision detection and contact Jacobians.
    pub collision: f64,
    /// Assembly of `G` and `g`.
    pub assembly: f64,
    /// The contact solver.
    pub solve: f64,
    /// Velocity update, integration and metrics.
    pub integration: f64,
}

impl StageTimings {
    /// The whole step (s).
    pub fn total(&self) -> f64 {
        self.dynamics + self.collision + self.assembly + self.solve + self.integration
    }
}

/// One contact at one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContactRecord {
    /// The geometry pair, `A|B`.
    pub pair: String,
    /// Contact point (m, world).
    pub point: [f64; 3],
    /// Signed distance (m).
    pub signed_distance: f64,
    /// Impulse `λ = (λ_T1, λ_T2, λ_N)` (N·s, contact frame).
    pub lambda: [f64; 3],
    /// Contact velocity `c = (G + R)λ + g` (m/s, contact frame).
    pub velocity: [f64; 3],
}

/// One step of a run: the state after the step and what the step computed.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRecord {
    /// Step index (0 is the initial state, nothing solved).
    pub step: usize,
    /// Time (s) after the step.
    pub time: f64,
    /// Configuration `q` after the step (`nq`).
    pub q: DVector<f64>,
    /// Velocity `v` after the step (`nv`).
    pub v: DVector<f64>,
    /// Base (or first body) position (m, world).
    pub base_position: [f64; 3],
    /// Contacts of the step, with their forces.
    pub contacts: Vec<ContactRecord>,
    /// Contact metrics of the step's answer (default, all zero, without contacts).
    pub metrics: ProblemMetrics,
    /// Mechanical energy after the step.
    pub energy: MechanicalEnergy,
    /// Solver iterations.
    pub iterations: usize,
    /// Solver status (`converged`, `max iterations reached`, `failed: …`, `no contact`).
    pub status: String,
    /// True when the solver converged (or there was no contact).
    pub converged: bool,
    /// Wall time per stage.
    pub timings: StageTimings,
    /// Collision queries of the step, and those that hit an iteration cap.
    pub collision: DetectionOutcomes,
}

/// A whole run of one scenario with one solver.
#[derive(Debug, Clone, Default)]
pub struct RunRecord {
    /// Scenario name.
    pub scenario: String,
    /// Solver specification text.
    pub solver: String,
    /// Time step (s).
    pub dt: f64,
    /// Names of the configuration coordinates (`nq`).
    pub q_names: Vec<String>,
    /// Names of the velocity coordinates (`nv`).
    pub v_names: Vec<String>,
    /// The steps, from the initial state on.
    pub steps: Vec<StepRecord>,
    /// Why the run stopped early, if it did.
    pub failure: Option<String>,
    /// Analytical mechanical energy at each step's time, when the scenario has one (J).
    pub analytical_energy: Option<Vec<f64>>,
}

/// Statistics of a series: median, mean, max.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SeriesStats {
    /// Median.
    pub median: f64,
    /// Mean.
    pub mean: f64,
    /// Maximum.
    pub max: f64,
}

impl SeriesStats {
    /// Statistics of `values` (zeros when empty; NaN are ignored).
    pub fn of(values: impl Iterator<Item = f64>) -> Self {
        let mut v: Vec<f64> = values.filter(|x| !x.is_nan()).collect();
        if v.is_empty() {
            return Self::default();
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            0.5 * (v[n / 2 - 1] + v[n / 2])
        };
        Self {
            median,
            mean: v.iter().sum::<f64>() / n as f64,
            max: v[n - 1],
        }
    }
}

/// The JSON summary of a run (`summary.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// Scenario name.
    pub scenario: String,
    /// Solver specification.
    pub solver: String,
    /// `completed` or `failed`.
    pub outcome: String,
    /// Why it failed, if it did.
    pub failure: Option<String>,
    /// Time step (s).
    pub dt: f64,
    /// Steps simulated.
    pub steps: usize,
    /// Simulated time reached (s).
    pub final_time: f64,
    /// Final configuration.
    pub final_q: Vec<f64>,
    /// Final base position (m).
    pub final_base_position: [f64; 3],
    /// Initial mechanical energy (J).
    pub initial_energy: f64,
    /// Final mechanical energy (J).
    pub final_energy: f64,
    /// Largest NCP criterion over the run.
    pub max_ncp_criterion: f64,
    /// Largest Signorini complementarity violation `|λ_N c_N|` over the run.
    pub max_signorini_violation: f64,
    /// Largest normal velocity into an obstacle over the run (m/s).
    pub max_penetration_velocity: f64,
    /// Steps whose solver did not converge.
    pub unconverged_steps: usize,
    /// Iterations per step with contacts.
    pub iterations: SeriesStats,
    /// Solver wall time per step with contacts (s).
    pub solve_time: SeriesStats,
    /// Whole-step wall time (s).
    pub step_time: SeriesStats,
    /// Largest number of contacts in a step.
    pub max_contacts: usize,
}

impl RunRecord {
    /// The JSON summary.
    pub fn summary(&self) -> RunSummary {
        let last = self.steps.last();
        let solved = || self.steps.iter().skip(1).filter(|s| !s.contacts.is_empty());
        let max_of = |f: fn(&StepRecord) -> f64| self.steps.iter().map(f).fold(0.0, f64::max);
        RunSummary {
            scenario: self.scenario.clone(),
            solver: self.solver.clone(),
            outcome: if self.failure.is_some() {
                "failed"
            } else {
                "completed"
            }
            .into(),
            failure: self.failure.clone(),
            dt: self.dt,
            steps: self.steps.len().saturating_sub(1),
            final_time: last.map_or(0.0, |s| s.time),
            final_q: last.map_or_else(Vec::new, |s| s.q.iter().copied().collect()),
            final_base_position: last.map_or([0.0; 3], |s| s.base_position),
            initial_energy: self.steps.first().map_or(0.0, |s| s.energy.total()),
            final_energy: last.map_or(0.0, |s| s.energy.total()),
            max_ncp_criterion: max_of(|s| s.metrics.ncp_criterion),
            max_signorini_violation: max_of(|s| s.metrics.signorini_violation.complementarity),
            max_penetration_velocity: max_of(|s| {
                s.metrics.signorini_violation.penetration_velocity
            }),
            unconverged_steps: self.steps.iter().filter(|s| !s.converged).count(),
            iterations: SeriesStats::of(solved().map(|s| s.iterations as f64)),
            solve_time: SeriesStats::of(solved().map(|s| s.timings.solve)),
            step_time: SeriesStats::of(self.steps.iter().skip(1).map(|s| s.timings.total())),
            max_contacts: self
                .steps
                .iter()
                .map(|s| s.contacts.len())
                .max()
                .unwrap_or(0),
        }
    }

    /// Writes `steps.csv`, `contacts.csv` and `summary.json` into `dir` (created).
    pub fn write(&self, dir: &Path) -> Result<(), RecordError> {
        std::fs::create_dir_all(dir).map_err(|error| RecordError::Io {
            path: dir.display().to_string(),
            error,
        })?;
        self.write_steps(&dir.join("steps.csv"))?;
        self.write_contacts(&dir.join("contacts.csv"))?;
        write_json(&dir.join("summary.json"), &self.summary())
    }

    fn steps_header(&self) -> Vec<String> {
        let mut header: Vec<String> = ["step", "time", "base_x", "base_y", "base_z"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        header.extend(self.q_names.iter().map(|n| format!("q_{n}")));
        header.extend(self.v_names.iter().map(|n| format!("v_{n}")));
        header.push("num_contacts".into());
        header.extend(ProblemMetrics::COLUMNS.iter().map(|s| s.to_string()));
        header.extend(
            [
                "kinetic_energy",
                "potential_energy",
                "mechanical_energy",
                "analytical_energy",
                "iterations",
                "dynamics_time",
                "collision_time",
                "assembly_time",
                "solve_time",
                "integration_time",
                "step_time",
                "converged",
                "status",
            ]
            .iter()
            .map(|s| s.to_string()),
        );
        header
    }

    fn write_steps(&self, path: &Path) -> Result<(), RecordError> {
        let mut w = csv_writer(path)?;
        let csv_err = |error| RecordError::Csv {
            path: path.display().to_string(),
            error,
        };
        w.write_record(self.steps_header()).map_err(csv_err)?;
        for (k, s) in self.steps.iter().enumerate() {
            let mut row: Vec<String> = vec![s.step.to_string(), s.time.to_string()];
            row.extend(s.base_position.iter().map(f64::to_string));
            row.extend(s.q.iter().map(f64::to_string));
            row.extend(s.v.iter().map(f64::to_string));
            row.push(s.contacts.len().to_string());
            row.extend(s.metrics.column_values().iter().map(f64::to_string));
            let analytical = self
                .analytical_energy
                .as_ref()
                .and_then(|a| a.get(k))
                .map_or_else(|| "NaN".to_string(), f64::to_string);
            row.extend([
                s.energy.kinetic.to_string(),
                s.energy.potential.to_string(),
                s.energy.total().to_string(),
                analytical,
                s.iterations.to_string(),
                s.timings.dynamics.to_string(),
                s.timings.collision.to_string(),
                s.timings.assembly.to_string(),
                s.timings.solve.to_string(),
                s.timings.integration.to_string(),
                s.timings.total().to_string(),
                u8::from(s.converged).to_string(),
                s.status.clone(),
            ]);
            w.write_record(&row).map_err(csv_err)?;
        }
        w.flush().map_err(|error| RecordError::Io {
            path: path.display().to_string(),
            error,
        })
    }

    fn write_contacts(&self, path: &Path) -> Result<(), RecordError> {
        let mut w = csv_writer(path)?;
        let csv_err = |error| RecordError::Csv {
            path: path.display().to_string(),
            error,
        };
        w.write_record([
            "step",
            "time",
            "contact",
            "pair",
            "x",
            "y",
            "z",
            "signed_distance",
            "lambda_t1",
            "lambda_t2",
            "lambda_n",
            "c_t1",
            "c_t2",
            "c_n",
        ])
        .map_err(csv_err)?;
        for s in &self.steps {
            for (i, c) in s.contacts.iter().enumerate() {
                let mut row = vec![s.step.to_string(), s.time.to_string(), i.to_string()];
                row.push(c.pair.clone());
                row.extend(c.point.iter().map(f64::to_string));
                row.push(c.signed_distance.to_string());
                row.extend(c.lambda.iter().map(f64::to_string));
                row.extend(c.velocity.iter().map(f64::to_string));
                w.write_record(&row).map_err(csv_err)?;
            }
        }
        w.flush().map_err(|error| RecordError::Io {
            path: path.display().to_string(),
            error,
        })
    }
}

fn csv_writer(path: &Path) -> Result<csv::Writer<File>, RecordError> {
    csv::Writer::from_path(path).map_err(|error| RecordError::Csv {
        path: path.display().to_string(),
        error,
    })
}

/// Writes a value as pretty JSON.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), RecordError> {
    let io_err = |error| RecordError::Io {
        path: path.display().to_string(),
        error,
    };
    let file = File::create(path).map_err(io_err)?;
    let mut w = BufWriter::new(file);
    serde_json::to_writer_pretty(&mut w, value).map_err(|error| RecordError::Json {
        path: path.display().to_string(),
        error,
    })?;
    w.write_all(b"\n").map_err(io_err)?;
    w.flush().map_err(io_err)
}

/// Reads a JSON file.
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, RecordError> {
    let text = std::fs::read_to_string(path).map_err(|error| RecordError::Io {
        path: path.display().to_string(),
        error,
    })?;
    serde_json::from_str(&text).map_err(|error| RecordError::Json {
        path: path.display().to_string(),
        error,
    })
}

/// Reads the numeric columns of a CSV file by name (non-numeric columns, such as
/// `status`, are skipped when their first value is not a number).
pub fn read_columns(path: &Path) -> Result<BTreeMap<String, Vec<f64>>, RecordError> {
    let shown = path.display().to_string();
    let mut reader = csv::Reader::from_path(path).map_err(|error| RecordError::Csv {
        path: shown.clone(),
        error,
    })?;
    let header: Vec<String> = reader
        .headers()
        .map_err(|error| RecordError::Csv {
            path: shown.clone(),
            error,
        })?
        .iter()
        .map(str::to_string)
        .collect();
    let mut columns: Vec<Option<Vec<f64>>> = vec![Some(Vec::new()); header.len()];
    for (row, record) in reader.records().enumerate() {
        let record = record.map_err(|error| RecordError::Csv {
            path: shown.clone(),
            error,
        })?;
        for (k, field) in record.iter().enumerate() {
            let Some(Some(column)) = columns.get_mut(k) else {
                continue;
            };
            match field.parse::<f64>() {
                Ok(x) => column.push(x),
                Err(_) if row == 0 => columns[k] = None,
                Err(_) => {
                    return Err(RecordError::NotANumber {
                        path: shown,
                        row: row + 1,
                        column: header[k].clone(),
                        value: field.to_string(),
                    })
                }
            }
        }
    }
    Ok(header
        .into_iter()
        .zip(columns)
        .filter_map(|(name, col)| col.map(|c| (name, c)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_of_even_series() {
        let s = SeriesStats::of([4.0, 1.0, 3.0, 2.0].into_iter());
        assert_eq!(s.median, 2.5);
        assert_eq!(s.mean, 2.5);
        assert_eq!(s.max, 4.0);
    }
}
