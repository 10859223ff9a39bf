//! Running a scenario with one solver, from its initial state to its duration, each step
//! handed to a [`Recorder`] as it is computed (streamed to disk by the batch, kept in
//! memory by [`simulate`]).
//!
//! A run ends early, with its failure recorded, when a step fails, when the state
//! diverges (speeds or distances beyond [`DIVERGENCE_SPEED`] and [`DIVERGENCE_DISTANCE`]:
//! named as a divergence, not as the numerical error it would cause a few steps later),
//! or when the user interrupts the command.

use thiserror::Error;

use super::factory::SolverFactory;
use super::interrupt;
use super::recorder::{RecordError, Recorder, RunHeader, RunRecord, StepRecord};
use super::scenario::{
    Analytical, Scenario, ScenarioError, DIVERGENCE_DISTANCE, DIVERGENCE_SPEED, MAX_STEPS,
};
use super::step::Simulator;
use super::world::World;
use crate::metrics::energy::{bouncing_energy_fraction, sliding_kinetic_energy, GRAVITY};
use crate::solvers::SolverError;

/// Why a run could not start (a run that stops early is a record with a `failure`).
#[derive(Debug, Error)]
pub enum SimulationError {
    /// The scenario's world could not be built.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The solver could not be built.
    #[error("solver: {0}")]
    Solver(SolverError),
    /// The record could not be written.
    #[error(transparent)]
    Record(#[from] RecordError),
}

impl From<SolverError> for SimulationError {
    fn from(e: SolverError) -> Self {
        SimulationError::Solver(e)
    }
}

/// Checks what only the model knows (robot, frames, joints, bodies) and that every
/// solver builds, without simulating: bad input fails before anything runs.
pub fn check(scenario: &Scenario) -> Result<(), SimulationError> {
    World::build(scenario)?;
    for (i, entry) in scenario.solvers.iter().enumerate() {
        entry
            .spec()
            .and_then(|spec| spec.build().map(|_| ()))
            .map_err(|e| scenario.invalid(&format!("solvers[{i}]"), e.to_string()))?;
    }
    Ok(())
}

/// A simulator for `scenario` with a fresh solver of `solver`, at its initial state.
pub fn simulator(
    scenario: &Scenario,
    solver: &dyn SolverFactory,
) -> Result<Simulator, SimulationError> {
    let world = World::build(scenario)?;
    let solver = solver.build()?;
    let mut sim = Simulator::new(
        world,
        solver,
        scenario.step_parameters(),
        scenario.external_forces.clone(),
    );
    sim.set_metrics(scenario.simulation.step_metrics);
    Ok(sim)
}

/// Runs `scenario` with a solver of `solver` (a built-in [`crate::solvers::SolverSpec`]
/// or a user's [`super::factory::UserSolver`]) for `scenario.num_steps()` steps (capped
/// by the scenario's validation), keeping every step in memory: for tests and short runs
/// (a long run streams to disk through [`simulate_into`]).
///
/// ```
/// use contactbench::simulation::{simulate, Scenario};
/// use contactbench::solvers::{SolverId, SolverSpec};
///
/// let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/cube_slide.yaml");
/// let scenario = Scenario::load(&file, &["simulation.duration=0.05".to_string()])?;
/// let record = simulate(&scenario, &SolverSpec::new(SolverId::NcpAdmm))?;
/// assert!(record.failure.is_none());
/// // The initial state and one record per step.
/// assert_eq!(record.steps.len(), scenario.num_steps() + 1);
/// // The cube slides along x, away from where it started.
/// assert!(record.steps.last().map_or(0.0, |s| s.base_position[0]) > record.steps[0].base_position[0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn simulate(
    scenario: &Scenario,
    solver: &dyn SolverFactory,
) -> Result<RunRecord, SimulationError> {
    let mut record = RunRecord::default();
    record.failure = simulate_into(scenario, solver, &mut record)?;
    Ok(record)
}

/// Runs `scenario` with a solver of `solver`, handing every step to `recorder` as it is computed;
/// returns why the run stopped early, if it did (a failed step, a divergence, an
/// interruption).
pub fn simulate_into(
    scenario: &Scenario,
    solver: &dyn SolverFactory,
    recorder: &mut dyn Recorder,
) -> Result<Option<String>, SimulationError> {
    check_step_count(scenario)?;
    let sim = simulator(scenario, solver)?;
    drive(scenario, sim, &solver.label(), recorder)
}

/// Refuses a run of no step (`dt` more than twice the duration: it would "complete" with
/// the initial state only) or of more steps than the cap, [`MAX_STEPS`].
fn check_step_count(scenario: &Scenario) -> Result<(), SimulationError> {
    let steps = scenario.simulation.duration / scenario.simulation.dt;
    if steps.is_nan() || steps > MAX_STEPS {
        return Err(scenario
            .invalid(
                "simulation.duration",
                format!("duration / dt = {steps:.3e} steps exceeds the cap of {MAX_STEPS:e} steps per run"),
            )
            .into());
    }
    if scenario.num_steps() == 0 {
        return Err(scenario
            .invalid(
                "simulation.dt",
                format!("duration / dt = {steps:.3e} rounds to 0 steps: nothing would run"),
            )
            .into());
    }
    Ok(())
}

/// Runs an already built simulator of `scenario` (a solver or step parameters of the
/// caller's choosing, e.g. the paper's protocols) for `scenario.num_steps()` steps, under
/// `label`, with the same recording, interruption and divergence rules as
/// [`simulate_into`].
pub fn drive(
    scenario: &Scenario,
    mut sim: Simulator,
    label: &str,
    recorder: &mut dyn Recorder,
) -> Result<Option<String>, SimulationError> {
    check_step_count(scenario)?;
    recorder.start(RunHeader {
        scenario: scenario.name.clone(),
        solver: label.to_string(),
        dt: scenario.simulation.dt,
        q_names: sim.world().q_names(),
        v_names: sim.world().v_names(),
        task: sim.world().trot.is_some(),
        origin: Some(scenario.origin()),
    })?;
    let first = match sim.initial_record() {
        Ok(first) => first,
        Err(e) => return Ok(Some(e.to_string())),
    };
    let analytical = AnalyticalEnergy::new(scenario, &first, sim.world().model.total_mass());
    recorder.record(&first, analytical.at(first.time))?;
    for _ in 0..scenario.num_steps() {
        if interrupt::requested() {
            return Ok(Some(format!("interrupted at t = {} s", sim.time())));
        }
        let step = match sim.step() {
            Ok(step) => step,
            Err(e) => return Ok(Some(e.to_string())),
        };
        recorder.record(&step, analytical.at(step.time))?;
        if let Some(what) = divergence(&step) {
            return Ok(Some(format!(
                "diverged at step {} (t = {} s): {what}",
                step.step, step.time
            )));
        }
    }
    let warning = sim
        .world()
        .below_ground_warning(sim.state().0)
        .unwrap_or_else(|e| Some(format!("the final state's kinematics failed: {e}")));
    if let Some(warning) = warning {
        recorder.warn(&warning)?;
    }
    Ok(None)
}

/// What has diverged in a step's state, if anything.
fn divergence(step: &StepRecord) -> Option<String> {
    let largest = |v: &nalgebra::DVector<f64>| v.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    let speed = largest(&step.v);
    if speed > DIVERGENCE_SPEED {
        return Some(format!(
            "a velocity reached {speed:.3e} (limit {DIVERGENCE_SPEED:e} m/s or rad/s)"
        ));
    }
    let distance = largest(&step.q);
    if distance > DIVERGENCE_DISTANCE {
        return Some(format!(
            "a coordinate reached {distance:.3e} m (limit {DIVERGENCE_DISTANCE:e} m)"
        ));
    }
    None
}

/// The analytical mechanical energy of a scenario that has one: sliding,
/// `U(q0) + ½ m (v0 − μ g t)²`; dropped ball, `E_rest + m g h e^{2k(t)}`.
struct AnalyticalEnergy<'a> {
    analytical: Option<&'a Analytical>,
    potential0: f64,
    total0: f64,
    total_mass: f64,
}

impl<'a> AnalyticalEnergy<'a> {
    fn new(scenario: &'a Scenario, first: &StepRecord, total_mass: f64) -> Self {
        Self {
            analytical: scenario.analytical.as_ref(),
            potential0: first.energy.potential,
            total0: first.energy.total(),
            total_mass,
        }
    }

    fn at(&self, t: f64) -> Option<f64> {
        Some(match self.analytical? {
            Analytical::Sliding { mass, v0, mu } => {
                self.potential0 + sliding_kinetic_energy(*mass, *v0, *mu, t)
            }
            Analytical::Drop {
                height,
                restitution,
            } => {
                let drop = self.total_mass * GRAVITY * height;
                self.total0 - drop + drop * bouncing_energy_fraction(*height, *restitution, t)
            }
        })
    }
}
