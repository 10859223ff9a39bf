//! Time-step and tolerance sweeps (paper Tab. III and IV): each solver runs the scenario
//! at every value, and its integral consistency error (design.md §5) is computed against
//! the same solver's reference run: `Δt = 0.1 ms` for the time-step study, `eps_abs =
//! 1e-9` (at the scenario's `Δt`) for the tolerance study. In the tolerance study every
//! run stops on the paper's absolute criterion (`stop = absolute`) with `eps_step = 0`,
//! so that `eps_abs` alone stops the solver.

use nalgebra::Vector3;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::batch::{spec_text, Runner};
use super::recorder::RunRecord;
use super::scenario::Scenario;
use crate::metrics::consistency::{consistency_error, Trajectory};
use crate::solvers::SolverSpec;

/// Time step of the reference run of the time-step study (s).
pub const REFERENCE_DT: f64 = 1e-4;
/// Tolerance of the reference run of the tolerance study.
pub const REFERENCE_EPS_ABS: f64 = 1e-9;

/// What a sweep varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SweepKind {
    /// The time step `Δt` (s).
    TimeStep,
    /// The solvers' `eps_abs`.
    Tolerance,
}

/// One cell of the table: a solver at one value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepCell {
    /// The swept value.
    pub value: f64,
    /// Integral consistency error (m·s), `None` if the run or the reference failed.
    pub consistency_error: Option<f64>,
    /// Steps whose solver did not converge.
    pub unconverged_steps: usize,
    /// Why there is no number.
    pub failure: Option<String>,
}

/// One solver's row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepRow {
    /// Solver text.
    pub solver: String,
    /// One cell per value.
    pub cells: Vec<SweepCell>,
}

/// The result of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepTable {
    /// Scenario name.
    pub scenario: String,
    /// What varies.
    pub kind: SweepKind,
    /// The swept values, in the order given.
    pub values: Vec<f64>,
    /// One row per solver.
    pub rows: Vec<SweepRow>,
}

/// The scenario and solver of one run of the sweep.
fn configure(
    scenario: &Scenario,
    spec: &SolverSpec,
    kind: SweepKind,
    value: f64,
) -> (Scenario, SolverSpec) {
    let mut scenario = scenario.clone();
    let mut spec = spec.clone();
    match kind {
        SweepKind::TimeStep => scenario.simulation.dt = value,
        SweepKind::Tolerance => {
            spec.settings.stop = crate::solvers::Criterion::Absolute;
            spec.settings.eps_abs = value;
            spec.settings.eps_step = 0.0;
        }
    }
    (scenario, spec)
}

fn base_trajectory(record: &RunRecord) -> (Vec<f64>, Vec<Vector3<f64>>) {
    record
        .steps
        .iter()
        .map(|s| (s.time, Vector3::from(s.base_position)))
        .unzip()
}

fn run_checked(
    runner: &Runner,
    scenario: &Scenario,
    spec: &SolverSpec,
) -> Result<RunRecord, String> {
    let record = runner(scenario, spec)?;
    match &record.failure {
        Some(reason) => Err(reason.clone()),
        None => Ok(record),
    }
}

/// Runs the sweep (in parallel over solvers × values).
pub fn sweep(
    scenario: &Scenario,
    specs: &[SolverSpec],
    kind: SweepKind,
    values: &[f64],
    runner: &Runner,
) -> SweepTable {
    let reference_value = match kind {
        SweepKind::TimeStep => REFERENCE_DT,
        SweepKind::Tolerance => REFERENCE_EPS_ABS,
    };
    let rows = specs
        .par_iter()
        .map(|spec| {
            let (ref_scenario, ref_spec) = configure(scenario, spec, kind, reference_value);
            let reference = run_checked(runner, &ref_scenario, &ref_spec);
            let cells = values
                .par_iter()
                .map(|&value| {
                    let (s, p) = configure(scenario, spec, kind, value);
                    cell(value, runner(&s, &p), &reference)
                })
                .collect();
            SweepRow {
                solver: spec_text(spec),
                cells,
            }
        })
        .collect();
    SweepTable {
        scenario: scenario.name.clone(),
        kind,
        values: values.to_vec(),
        rows,
    }
}

fn cell(
    value: f64,
    run: Result<RunRecord, String>,
    reference: &Result<RunRecord, String>,
) -> SweepCell {
    let failed = |failure: String, unconverged_steps| SweepCell {
        value,
        consistency_error: None,
        unconverged_steps,
        failure: Some(failure),
    };
    let reference = match reference {
        Ok(r) => r,
        Err(e) => return failed(format!("reference run failed: {e}"), 0),
    };
    let run = match run {
        Ok(r) => r,
        Err(e) => return failed(e, 0),
    };
    let unconverged = run.steps.iter().filter(|s| !s.converged).count();
    if let Some(reason) = &run.failure {
        return failed(reason.clone(), unconverged);
    }
    let (times, positions) = base_trajectory(&run);
    let (ref_times, ref_positions) = base_trajectory(reference);
    match consistency_error(
        Trajectory {
            times: &times,
            positions: &positions,
        },
        Trajectory {
            times: &ref_times,
            positions: &ref_positions,
        },
    ) {
        Ok(e) => SweepCell {
            value,
            consistency_error: Some(e),
            unconverged_steps: unconverged,
            failure: None,
        },
        Err(e) => failed(e.to_string(), unconverged),
    }
}

impl SweepTable {
    /// The table in Markdown: one row per solver, one column per value, consistency
    /// errors in m·s; `*` marks runs with unconverged steps (their count in the footnote).
    pub fn to_markdown(&self) -> String {
        let symbol = match self.kind {
            SweepKind::TimeStep => "Δt",
            SweepKind::Tolerance => "eps_abs",
        };
        let mut out = format!(
            "Integral consistency error (m·s) of `{}` against a reference run ({}).\n\n| solver |",
            self.scenario,
            match self.kind {
                SweepKind::TimeStep => format!("Δt = {REFERENCE_DT:.0e} s"),
                SweepKind::Tolerance => format!("eps_abs = {REFERENCE_EPS_ABS:.0e}"),
            }
        );
        for v in &self.values {
            out.push_str(&format!(" {symbol} = {v:.0e} |"));
        }
        out.push_str("\n|---|");
        out.push_str(&"---|".repeat(self.values.len()));
        out.push('\n');
        let mut notes = Vec::new();
        for row in &self.rows {
            out.push_str(&format!("| {} |", row.solver));
            for c in &row.cells {
                let text = match (&c.consistency_error, &c.failure) {
                    (Some(e), _) if c.unconverged_steps > 0 => {
                        notes.push(format!(
                            "{} at {symbol} = {:.0e}: {} steps did not converge",
                            row.solver, c.value, c.unconverged_steps
                        ));
                        format!("{e:.2e}*")
                    }
                    (Some(e), _) => format!("{e:.2e}"),
                    (None, Some(f)) => {
                        notes.push(format!("{} at {symbol} = {:.0e}: {f}", row.solver, c.value));
                        "failed".into()
                    }
                    (None, None) => "n/a".into(),
                };
                out.push_str(&format!(" {text} |"));
            }
            out.push('\n');
        }
        for note in notes {
            out.push_str(&format!("\n- {note}"));
        }
        out.push('\n');
        out
    }
}
