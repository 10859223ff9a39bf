//! A sweep's memory does not grow with its runs' length beyond the reference trajectory:
//! every swept run is reduced to its consistency error as it goes (kept whole until the
//! table is computed, each run's trajectory would take 32 bytes per step).
//!
//! Measured as the peak of live heap bytes, counted by the binary's allocator over every
//! thread (the peak resident memory of the CLI would also count the allocator's arenas
//! and freed pages, and moves by several MB with the machine's load).

use std::path::Path;

use crate::allocator as heap;

use contactbench::simulation::recorder::Recorder;
use contactbench::simulation::runner::simulate_into;
use contactbench::simulation::sweep::{sweep, SweepKind};
use contactbench::simulation::{Scenario, SolverFactory};

/// The simulator as the sweep's runner, as the CLI's.
fn run(
    scenario: &Scenario,
    solver: &dyn SolverFactory,
    recorder: &mut dyn Recorder,
) -> Result<Option<String>, String> {
    simulate_into(scenario, solver, recorder).map_err(|e| e.to_string())
}

/// Peak live heap bytes above the starting point while a 4-tolerance ncp-admm sweep of
/// `ball_drop` with `steps` steps per run runs on four workers (four swept runs in flight).
fn sweep_peak_bytes(pool: &rayon::ThreadPool, steps: u32) -> usize {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/ball_drop.yaml");
    let duration = format!("simulation.duration={}", f64::from(steps) * 1e-3);
    let scenario = Scenario::load(&path, &[duration]).expect("shipped scenario");
    let solvers = [scenario
        .solver_override("ncp-admm")
        .expect("built-in solver")];
    let (table, peak) = heap::peak_during(|| {
        pool.install(|| {
            sweep(
                &scenario,
                &solvers,
                SweepKind::Tolerance,
                &[1e-2, 1e-3, 1e-4, 1e-5],
                &run,
            )
        })
    });
    for cell in &table.rows[0].cells {
        assert!(cell.failure.is_none(), "{cell:?}");
    }
    peak
}

#[test]
fn sweep_memory_is_the_reference_trajectory_only() {
    let _alone = crate::allocator::alone();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .expect("a 4-thread pool");
    let short = sweep_peak_bytes(&pool, 2_000);
    let long = sweep_peak_bytes(&pool, 100_000);
    // 98,000 more steps: the reference trajectory, reserved once, holds 32 bytes per step.
    // Keeping the four swept runs' trajectories as well (before) would add 4 × 3.1 MB.
    let reference = 32 * 98_000;
    let extra = long.saturating_sub(short);
    println!("peak live heap: {short} B for 2,000 steps, {long} B for 100,000 (+{extra} B)");
    assert!(
        extra.abs_diff(reference) < 64 * 1024,
        "peak live heap {short} B for 2,000 steps, {long} B for 100,000: +{extra} B, \
         the reference trajectory alone is {reference} B"
    );
}
