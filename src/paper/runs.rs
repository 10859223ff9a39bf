//! The paper's scenarios (`scenarios/paper/*.yaml`, embedded in the binary so that
//! `contactbench paper` runs from anywhere) and runs of them under a protocol.

use std::sync::Arc;

use nalgebra::DVector;
use rayon::prelude::*;

use super::names::metric;
use super::protocol::{self, Protocol};
use super::PaperError;
use crate::problem::ContactProblem;
use crate::simulation::factory::SolverFactory;
use crate::simulation::recorder::{RunRecord, StepRecord};
use crate::simulation::runner::drive;
use crate::simulation::{Scenario, Simulator, World};
use crate::solvers::{SolverError, SolverSettings, SolverSpec};

/// A scenario file of `scenarios/paper/`.
#[derive(Debug, Clone, Copy)]
pub struct PaperScenario {
    /// Its path in the repository (used in messages and on the pages).
    pub file: &'static str,
    /// Its text.
    pub text: &'static str,
}

macro_rules! scenario_file {
    ($name:literal) => {
        PaperScenario {
            file: concat!("scenarios/paper/", $name),
            text: include_str!(concat!("../../scenarios/paper/", $name)),
        }
    };
}

/// Cube sliding from 1 m/s (Fig. 9, 10, 14, 15; Tab. III, IV).
pub const CUBE_SLIDE: PaperScenario = scenario_file!("cube_slide.yaml");
/// Cube under a growing push (Fig. 11).
pub const CUBE_PUSH: PaperScenario = scenario_file!("cube_push.yaml");
/// Heavy cube on a light cube (Fig. 12).
pub const CUBE_STACK: PaperScenario = scenario_file!("cube_stack.yaml");
/// Solo-12 on four contact points per foot (Fig. 13).
pub const SOLO_FLAT_FEET: PaperScenario = scenario_file!("solo_flat_feet.yaml");
/// Solo-12 pushed (Fig. 16).
pub const SOLO_PUSH: PaperScenario = scenario_file!("solo_push.yaml");
/// Talos pushed (Fig. 16).
pub const TALOS_PUSH: PaperScenario = scenario_file!("talos_push.yaml");
/// A ball dropped into the closing Allegro hand (Fig. 16).
pub const ALLEGRO_BALL: PaperScenario = scenario_file!("allegro_ball.yaml");

impl PaperScenario {
    /// Parses the scenario with `path=value` overrides.
    pub fn load(&self, overrides: &[String]) -> Result<Scenario, PaperError> {
        Ok(Scenario::from_yaml(
            self.text,
            std::path::Path::new(self.file),
            overrides,
        )?)
    }

    /// The scenario's solvers, in file order.
    pub fn solvers(&self) -> Result<Vec<SolverSpec>, PaperError> {
        Ok(self.load(&[])?.solver_specs())
    }
}

/// One run of an experiment.
#[derive(Debug, Clone)]
pub struct Run {
    /// Label on plots and in tables.
    pub label: String,
    /// The scenario, overrides applied.
    pub scenario: Scenario,
    /// What builds the solver: a built-in spec or a user's
    /// [`crate::simulation::UserSolver`].
    pub solver: Arc<dyn SolverFactory>,
    /// How the solver is run.
    pub protocol: Protocol,
}

impl Run {
    /// A run of a built-in solver, labelled by the solver's text.
    pub fn new(scenario: Scenario, spec: SolverSpec, protocol: Protocol) -> Self {
        Self::with_solver(scenario, Arc::new(spec), protocol)
    }

    /// A run of any solver factory (a user's own solver included), labelled by its text.
    /// A user's solver runs under [`Protocol::Ours`] and [`Protocol::ResetState`];
    /// ContactBench's protocol re-runs built-in per-contact solvers sweep by sweep.
    pub fn with_solver(
        scenario: Scenario,
        solver: Arc<dyn SolverFactory>,
        protocol: Protocol,
    ) -> Self {
        Self {
            label: solver.label(),
            scenario,
            solver,
            protocol,
        }
    }

    /// The same run with another label.
    pub fn labelled(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }
}

/// The runs of a user's `extra` solvers on `scenario` ([`super::run_paper_with`]), each
/// at the experiment's `settings` (criterion, tolerance, iteration cap), under our
/// protocol, labelled by its name.
pub fn extra_runs(
    scenario: &Scenario,
    extra: &[Arc<dyn SolverFactory>],
    settings: &SolverSettings,
) -> Vec<Run> {
    extra
        .iter()
        .map(|factory| {
            Run::with_solver(
                scenario.clone(),
                factory.with_settings(settings.clone()),
                Protocol::Ours,
            )
            .labelled(factory.name())
        })
        .collect()
}

/// The simulator of a run: its world, its solver under its protocol, its step
/// parameters (ContactBench's protocol solves every step cold, as its `cube.py` does).
fn simulator(run: &Run) -> Result<Simulator, PaperError> {
    let scenario = &run.scenario;
    let world = World::build(scenario)?;
    let solver = match (run.solver.spec(), &run.protocol) {
        (Some(spec), protocol) => protocol::build(spec, protocol)?,
        (None, Protocol::Ours) => run.solver.build()?,
        (None, Protocol::ResetState) => Box::new(protocol::ResetEachSolve(run.solver.build()?)),
        (None, Protocol::ContactBench(_)) => {
            return Err(SolverError::InvalidSpec {
                spec: run.solver.label(),
                message: "ContactBench's protocol runs the built-in per-contact solvers only"
                    .into(),
            }
            .into())
        }
    };
    let mut params = scenario.step_parameters();
    if matches!(run.protocol, Protocol::ContactBench(_)) {
        params.warm_start = false;
    }
    Ok(Simulator::new(
        world,
        solver,
        params,
        scenario.external_forces.clone(),
    ))
}

/// Simulates a run to its duration. A step that fails ends the run: the record keeps the
/// steps before and says why (`failure`).
pub fn simulate(run: &Run) -> Result<RunRecord, PaperError> {
    let sim = simulator(run)?;
    let mut record = RunRecord::default();
    record.failure = drive(&run.scenario, sim, &run.label, &mut record)?;
    Ok(record)
}

/// What [`simulate_observed`] shows after each step: its record, and its problem (with
/// `J`) and the solver's `λ` when it had contacts.
pub type Observer<'a> = dyn FnMut(&StepRecord, Option<(&ContactProblem, &DVector<f64>)>) + 'a;

/// [`simulate`], calling `observe` after every step (every metric recorded; no interrupt
/// or divergence check: the paper's runs are short).
pub fn simulate_observed(run: &Run, observe: &mut Observer) -> Result<RunRecord, PaperError> {
    let mut sim = simulator(run)?;
    let mut record = RunRecord {
        scenario: run.scenario.name.clone(),
        solver: run.label.clone(),
        dt: run.scenario.simulation.dt,
        q_names: sim.world().q_names(),
        v_names: sim.world().v_names(),
        ..RunRecord::default()
    };
    match sim.initial_record() {
        Ok(first) => record.steps.push(first),
        Err(e) => record.failure = Some(e.to_string()),
    }
    for _ in 0..run.scenario.num_steps() {
        if record.failure.is_some() {
            break;
        }
        match sim.step() {
            Ok(step) => {
                observe(&step, sim.last_solution().map(|(p, l, _)| (p, l)));
                record.steps.push(step);
            }
            Err(e) => record.failure = Some(e.to_string()),
        }
    }
    Ok(record)
}

/// Simulates every run, in parallel unless `sequential` (timings), results in order.
pub fn simulate_all(runs: &[Run], sequential: bool) -> Vec<Result<RunRecord, PaperError>> {
    if sequential {
        runs.iter().map(simulate).collect()
    } else {
        runs.par_iter().map(simulate).collect()
    }
}

/// The steps after the initial state.
pub fn solved_steps(record: &RunRecord) -> &[StepRecord] {
    record.steps.get(1..).unwrap_or(&[])
}

/// `(t, metric)` per step, NaN at steps without contacts (a gap when plotted).
pub fn metric_series(record: &RunRecord, name: &str) -> Vec<(f64, f64)> {
    solved_steps(record)
        .iter()
        .map(|s| {
            let value = if s.contacts.is_empty() {
                f64::NAN
            } else {
                s.metrics
                    .as_ref()
                    .and_then(|m| metric(m, name))
                    .unwrap_or(f64::NAN)
            };
            (s.time, value)
        })
        .collect()
}

/// Steps whose solver did not converge.
pub fn unconverged(record: &RunRecord) -> usize {
    record.steps.iter().filter(|s| !s.converged).count()
}

/// The largest value of a metric over the steps with contacts (NaN if none).
pub fn max_metric(record: &RunRecord, name: &str) -> f64 {
    metric_series(record, name)
        .into_iter()
        .map(|(_, v)| v)
        .filter(|v| !v.is_nan())
        .fold(f64::NAN, f64::max)
}

/// The record's failure as an error, for experiments that need complete runs.
pub fn complete(record: RunRecord) -> Result<RunRecord, PaperError> {
    match &record.failure {
        Some(reason) => Err(PaperError::RunFailed {
            run: format!("{} / {}", record.scenario, record.solver),
            reason: reason.clone(),
        }),
        None => Ok(record),
    }
}
