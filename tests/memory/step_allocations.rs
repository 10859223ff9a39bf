//! A settled simulation step allocates nothing: once the robot stands and
//! every buffer has grown to the number of contacts, `Simulator::advance` performs no heap
//! allocation outside the contact solver. Counted by the binary's allocator (`allocator`),
//! which counts the allocations of the current thread while counting is on; the
//! solver runs behind a wrapper that pauses counting, because the `ContactSolver` trait
//! returns an owned report (and the solvers' internals are another module's): its own
//! allocations are printed, not asserted.

use std::cell::Cell;
use std::path::Path;

use contactbench::problem::{ContactModel, ContactProblem};
use contactbench::simulation::{Scenario, Simulator, World};
use contactbench::solvers::{ContactSolver, SolveReport, SolverError, SolverSettings, SolverSpec};
use nalgebra::DVector;

use crate::allocator::{allocations_during, alone, not_counted};

thread_local! {
    static SOLVER_ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

/// A solver whose allocations are left out of the step's count and tallied apart
/// (`SOLVER_ALLOCATIONS`).
struct Uncounted(Box<dyn ContactSolver>);

impl Uncounted {
    fn paused<T>(&mut self, f: impl FnOnce(&mut Box<dyn ContactSolver>) -> T) -> T {
        let (out, n) = not_counted(|| f(&mut self.0));
        SOLVER_ALLOCATIONS.with(|c| c.set(c.get() + n));
        out
    }
}

impl ContactSolver for Uncounted {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn model(&self) -> ContactModel {
        self.0.model()
    }
    fn settings(&self) -> &SolverSettings {
        self.0.settings()
    }
    fn set_settings(&mut self, settings: SolverSettings) -> Result<(), SolverError> {
        self.0.set_settings(settings)
    }
    fn solve(
        &mut self,
        problem: &ContactProblem,
        warm_start: Option<&DVector<f64>>,
    ) -> Result<SolveReport, SolverError> {
        self.paused(|s| s.solve(problem, warm_start))
    }
    fn reset(&mut self) {
        self.paused(|s| s.reset())
    }
}

/// The scenario's simulator with ncp-admm behind [`Uncounted`], after `settle` steps.
fn settled(file: &str, overrides: &[&str], settle: usize) -> Simulator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(file);
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let scenario = Scenario::load(&path, &overrides).unwrap();
    let world = World::build(&scenario).unwrap();
    let spec: SolverSpec = "ncp-admm".parse().unwrap();
    let solver = Uncounted(spec.build().unwrap());
    let mut sim = Simulator::new(
        world,
        Box::new(solver),
        scenario.step_parameters(),
        scenario.external_forces.clone(),
    );
    for _ in 0..settle {
        sim.advance().unwrap();
    }
    sim
}

/// Takes `steps` steps and asserts that none allocates; each must have `contacts` contacts.
fn assert_allocation_free(name: &str, sim: &mut Simulator, steps: usize, contacts: usize) {
    let solver_before = SOLVER_ALLOCATIONS.with(Cell::get);
    for k in 0..steps {
        let (summary, n) = allocations_during(|| sim.advance().unwrap());
        assert_eq!(summary.contacts, contacts, "{name}: step {k} contacts");
        assert_eq!(n, 0, "{name}: step {k} allocated {n} times");
    }
    let solver = SOLVER_ALLOCATIONS.with(Cell::get) - solver_before;
    println!(
        "{name}: 0 allocations per step outside the solver; ncp-admm: {:.1} per solve",
        solver as f64 / steps as f64
    );
}

#[test]
fn settled_solo12_step_allocates_nothing() {
    let _alone = alone();
    let mut sim = settled("solo_standing.yaml", &[], 300);
    assert_allocation_free("solo12", &mut sim, 200, 4);
}

#[test]
fn settled_talos_step_allocates_nothing() {
    let _alone = alone();
    let mut sim = settled("talos_push.yaml", &["external_forces=[]"], 300);
    assert_allocation_free("talos", &mut sim, 200, 8);
}

#[test]
fn resting_cube_step_allocates_nothing() {
    let _alone = alone();
    let still = "initial_state.bodies.cube.velocity=[0, 0, 0, 0, 0, 0]";
    let mut sim = settled("cube_slide.yaml", &[still], 100);
    assert_allocation_free("cube", &mut sim, 200, 4);
}

#[test]
fn the_counter_sees_allocations() {
    let _alone = alone();
    let (v, n) = allocations_during(|| vec![1.0_f64; 16]);
    assert_eq!(v.len(), 16);
    assert_eq!(n, 1);
}
