//! Time-step and tolerance sweeps (paper Tab. III and IV): each solver runs the scenario
//! at every value, and its integral consistency error (design.md §5) is computed against
//! the same solver's reference run: `Δt = 0.1 ms` for the time-step study, `eps_abs =
//! 1e-9` (at the scenario's `Δt`) for the tolerance study. In the tolerance study every
//! run stops on the paper's absolute criterion (`stop = absolute`) with `eps_step = 0`,
//! so that `eps_abs` alone stops the solver.

use std::sync::Arc;

use nalgebra::Vector3;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::batch::Runner;
use super::factory::SolverFactory;
use super::recorder::{RecordError, Recorder, RunHeader, StepRecord};
use super::scenario::{Scenario, ScenarioError, MAX_STEPS};
use crate::metrics::consistency::{ConsistencySum, Trajectory};

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
    solver: &dyn SolverFactory,
    kind: SweepKind,
    value: f64,
) -> (Scenario, Arc<dyn SolverFactory>) {
    let mut scenario = scenario.clone();
    let mut settings = solver.settings().clone();
    match kind {
        SweepKind::TimeStep => {
            scenario.simulation.dt = value;
            scenario.overrides.push(format!("simulation.dt={value}"));
        }
        SweepKind::Tolerance => {
            settings.stop = crate::solvers::Criterion::Absolute;
            settings.eps_abs = value;
            settings.eps_step = 0.0;
        }
    }
    (scenario, solver.with_settings(settings))
}

/// What a sweep keeps of its reference run: the base trajectory (32 bytes per step),
/// needed to interpolate it at every other run's times.
#[derive(Debug, Default)]
struct TrajectoryRecorder {
    times: Vec<f64>,
    positions: Vec<Vector3<f64>>,
}

impl Recorder for TrajectoryRecorder {
    fn start(&mut self, _header: RunHeader) -> Result<(), RecordError> {
        Ok(())
    }

    fn record(&mut self, step: &StepRecord, _analytical: Option<f64>) -> Result<(), RecordError> {
        self.times.push(step.time);
        self.positions.push(Vector3::from(step.base_position));
        Ok(())
    }
}

/// What a sweep keeps of every other run: its consistency sum against the reference and
/// its count of unconverged steps, updated step by step (constant memory, whatever the
/// run's length).
struct ConsistencyRecorder<'a> {
    sum: ConsistencySum<'a>,
    unconverged: usize,
}

impl Recorder for ConsistencyRecorder<'_> {
    fn start(&mut self, _header: RunHeader) -> Result<(), RecordError> {
        Ok(())
    }

    fn record(&mut self, step: &StepRecord, _analytical: Option<f64>) -> Result<(), RecordError> {
        self.sum.add(step.time, &Vector3::from(step.base_position));
        if !step.converged {
            self.unconverged += 1;
        }
        Ok(())
    }
}

/// Why a run of `scenario` has no step, if it has none (`dt` more than twice the
/// duration): over the initial state alone its consistency error would be a perfect 0.
fn no_step(scenario: &Scenario) -> Option<String> {
    (scenario.num_steps() == 0).then(|| {
        format!(
            "0 steps: dt = {:e} s is more than twice the duration {:e} s",
            scenario.simulation.dt, scenario.simulation.duration
        )
    })
}

/// The reference run's trajectory, or why there is none.
fn reference_run(
    runner: &Runner,
    scenario: &Scenario,
    solver: &dyn SolverFactory,
) -> Result<TrajectoryRecorder, String> {
    if let Some(reason) = no_step(scenario) {
        return Err(reason);
    }
    // Reserved once: 32 bytes per step, and no doubling (and copying) as the run grows.
    let steps = scenario.num_steps() + 1;
    let mut trajectory = TrajectoryRecorder {
        times: Vec::with_capacity(steps),
        positions: Vec::with_capacity(steps),
    };
    match runner(scenario, solver, &mut trajectory)? {
        Some(reason) => Err(reason),
        None => Ok(trajectory),
    }
}

/// Refuses a sweep whose runs (the reference run included) would exceed the step cap of
/// a single run, [`MAX_STEPS`], naming the value.
pub fn check_limits(
    scenario: &Scenario,
    kind: SweepKind,
    values: &[f64],
) -> Result<(), ScenarioError> {
    let duration = scenario.simulation.duration;
    let dts: Vec<(String, f64)> = match kind {
        SweepKind::TimeStep => values
            .iter()
            .map(|&dt| (format!("--dt {dt:e}"), dt))
            .chain(std::iter::once((
                format!("the reference time step {REFERENCE_DT:e}"),
                REFERENCE_DT,
            )))
            .collect(),
        SweepKind::Tolerance => vec![("simulation.dt".to_string(), scenario.simulation.dt)],
    };
    for (what, dt) in dts {
        if !(dt.is_finite() && dt > 0.0) {
            return Err(scenario.invalid(
                "simulation.dt",
                format!("{what}: must be a positive time step (s)"),
            ));
        }
        if (duration / dt).round() < 1.0 {
            return Err(scenario.invalid(
                "simulation.dt",
                format!("{what}: more than twice the duration {duration:e} s, a run of 0 steps"),
            ));
        }
        if duration / dt > MAX_STEPS {
            return Err(scenario.invalid(
                "simulation.duration",
                format!(
                    "{what}: duration {duration} s / dt = {:.3e} steps exceeds the cap of {MAX_STEPS:e} steps per run",
                    duration / dt
                ),
            ));
        }
    }
    Ok(())
}

/// Runs the sweep (in parallel over solvers × values). `solvers` are built-in specs,
/// a user's [`super::factory::UserSolver`]s, or `Arc<dyn SolverFactory>` of either.
/// Only each solver's reference trajectory is kept (32 bytes per reference step); every
/// other run is reduced to its consistency error as it goes.
pub fn sweep<F: SolverFactory>(
    scenario: &Scenario,
    solvers: &[F],
    kind: SweepKind,
    values: &[f64],
    runner: &Runner,
) -> SweepTable {
    let reference_value = match kind {
        SweepKind::TimeStep => REFERENCE_DT,
        SweepKind::Tolerance => REFERENCE_EPS_ABS,
    };
    let rows = solvers
        .par_iter()
        .map(|solver| {
            let (ref_scenario, ref_solver) = configure(scenario, solver, kind, reference_value);
            let reference = reference_run(runner, &ref_scenario, ref_solver.as_ref());
            let cells = values
                .par_iter()
                .map(|&value| {
                    let (s, f) = configure(scenario, solver, kind, value);
                    cell(value, runner, &s, f.as_ref(), &reference)
                })
                .collect();
            SweepRow {
                solver: solver.label(),
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

/// Runs one cell's run against the reference and reduces it to its consistency error.
fn cell(
    value: f64,
    runner: &Runner,
    scenario: &Scenario,
    solver: &dyn SolverFactory,
    reference: &Result<TrajectoryRecorder, String>,
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
    if let Some(reason) = no_step(scenario) {
        return failed(reason, 0);
    }
    let sum = match ConsistencySum::new(Trajectory {
        times: &reference.times,
        positions: &reference.positions,
    }) {
        Ok(sum) => sum,
        Err(e) => return failed(format!("reference run: {e}"), 0),
    };
    let mut run = ConsistencyRecorder {
        sum,
        unconverged: 0,
    };
    match runner(scenario, solver, &mut run) {
        Err(e) => failed(e, 0),
        Ok(Some(reason)) => failed(reason, run.unconverged),
        Ok(None) => SweepCell {
            value,
            consistency_error: Some(run.sum.value()),
            unconverged_steps: run.unconverged,
            failure: None,
        },
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
