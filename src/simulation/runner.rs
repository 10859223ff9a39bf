//! Running a scenario with one solver, from its initial state to its duration.

use thiserror::Error;

use super::batch::spec_text;
use super::recorder::RunRecord;
use super::scenario::{Analytical, Scenario, ScenarioError};
use super::step::Simulator;
use super::world::World;
use crate::metrics::energy::{bouncing_energy_fraction, sliding_kinetic_energy, GRAVITY};
use crate::solvers::{SolverError, SolverSpec};

/// Why a run could not start (a run that stops early is a record with a `failure`).
#[derive(Debug, Error)]
pub enum SimulationError {
    /// The scenario's world could not be built.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The solver could not be built.
    #[error("solver: {0}")]
    Solver(#[from] SolverError),
}

/// Checks what only the model knows (robot, frames, joints, bodies) and that every
/// solver builds, without simulating: bad input fails before anything runs.
pub fn check(scenario: &Scenario) -> Result<(), SimulationError> {
    World::build(scenario)?;
    for entry in &scenario.solvers {
        entry.spec()?.build()?;
    }
    Ok(())
}

/// A simulator for `scenario` with the solver `spec`, at its initial state.
pub fn simulator(scenario: &Scenario, spec: &SolverSpec) -> Result<Simulator, SimulationError> {
    let world = World::build(scenario)?;
    let solver = spec.build()?;
    Ok(Simulator::new(
        world,
        solver,
        scenario.step_parameters(),
        scenario.external_forces.clone(),
    ))
}

/// Runs `scenario` with `spec` for `scenario.num_steps()` steps (capped by the scenario's
/// validation), recording every step. A step that fails ends the run: the record keeps
/// the steps before and says why.
pub fn simulate(scenario: &Scenario, spec: &SolverSpec) -> Result<RunRecord, SimulationError> {
    let mut sim = simulator(scenario, spec)?;
    let mut record = RunRecord {
        scenario: scenario.name.clone(),
        solver: spec_text(spec),
        dt: scenario.simulation.dt,
        q_names: sim.world().q_names(),
        v_names: sim.world().v_names(),
        ..Default::default()
    };
    match sim.initial_record() {
        Ok(first) => record.steps.push(first),
        Err(e) => {
            record.failure = Some(e.to_string());
            return Ok(record);
        }
    }
    for _ in 0..scenario.num_steps() {
        match sim.step() {
            Ok(step) => record.steps.push(step),
            Err(e) => {
                record.failure = Some(e.to_string());
                break;
            }
        }
    }
    record.analytical_energy = analytical_energy(scenario, &record, sim.world().model.total_mass());
    Ok(record)
}

/// The analytical mechanical energy at each recorded time, when the scenario has one:
/// sliding, `U(q0) + ½ m (v0 − μ g t)²`; dropped ball, `E_rest + m g h e^{2k(t)}`.
pub fn analytical_energy(
    scenario: &Scenario,
    record: &RunRecord,
    total_mass: f64,
) -> Option<Vec<f64>> {
    let first = record.steps.first()?.energy;
    let energy_at = |t: f64| match scenario.analytical.as_ref()? {
        Analytical::Sliding { mass, v0, mu } => {
            Some(first.potential + sliding_kinetic_energy(*mass, *v0, *mu, t))
        }
        Analytical::Drop {
            height,
            restitution,
        } => {
            let drop = total_mass * GRAVITY * height;
            Some(first.total() - drop + drop * bouncing_energy_fraction(*height, *restitution, t))
        }
    };
    record.steps.iter().map(|s| energy_at(s.time)).collect()
}
