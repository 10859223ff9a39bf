//! A user's own solver run through every runner of contactbench, with no change to the
//! library: the Solo-12 standing scenario, a time-step sweep, and a batch (beside a
//! built-in solver) whose results directory gets the usual report.
//!
//! The solver (`JacobiNcp`, a damped projected Jacobi method on the NCP) is defined in
//! this crate (`user-solver/src/lib.rs`), outside the library; what makes it runnable
//! everywhere is a [`UserSolver`] (`user_solver::factory`): a name, settings, and a
//! closure building a fresh solver from settings.
//!
//! Run with `cargo run --release -p user-solver --example user_solver [RESULTS_DIR]` (the
//! robots must be in the cache: `contactbench robots fetch`, or `CONTACTBENCH_CACHE`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use contactbench::report::{make_report, tables::summary_table};
use contactbench::simulation::batch::{jobs_with, run_batch, Runner};
use contactbench::simulation::output::Replace;
use contactbench::simulation::runner::simulate_into;
use contactbench::simulation::sweep::{sweep, SweepKind};
use contactbench::simulation::{simulate, Scenario, SolverFactory, UserSolver};
use contactbench::solvers::{SolverId, SolverSettings, SolverSpec};

/// The user's solver as a factory: every run gets a fresh `JacobiNcp` at the settings
/// the runner asks for (the tolerance sweep changes them).
fn jacobi() -> UserSolver {
    let settings = SolverSettings {
        eps_rel: 1e-6,
        max_iter: 500,
        ..SolverSettings::default()
    };
    user_solver::factory(settings, 0.3)
}

fn scenario(file: &str, duration: f64) -> anyhow::Result<Scenario> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(file);
    Ok(Scenario::load(
        &path,
        &[format!("simulation.duration={duration}")],
    )?)
}

fn main() -> anyhow::Result<()> {
    // 1. One run of the Solo-12 standing scenario, kept in memory.
    let solo = scenario("solo_standing.yaml", 0.5)?;
    let record = simulate(&solo, &jacobi())?;
    let summary = record.summary();
    println!(
        "solo_standing / {}: {} ({} steps, {} unconverged), base height {:.4} m -> {:.4} m",
        summary.solver,
        summary.outcome,
        summary.steps,
        summary.unconverged_steps,
        record.steps[0].base_position[2],
        summary.final_base_position[2],
    );

    // 2. A time-step sweep: consistency error against the same solver at Δt = 0.1 ms.
    let runner: &Runner = &|scenario, solver, recorder| {
        simulate_into(scenario, solver, recorder).map_err(|e| e.to_string())
    };
    let short = scenario("solo_standing.yaml", 0.1)?;
    let table = sweep(
        &short,
        &[jacobi()],
        SweepKind::TimeStep,
        &[1e-3, 2e-3],
        runner,
    );
    println!("\n{}", table.to_markdown());

    // 3. A batch: the user's solver beside a built-in one, on two scenarios, then the
    //    report of its results directory.
    let solvers: Vec<Arc<dyn SolverFactory>> = vec![
        jacobi().into_arc(),
        Arc::new(SolverSpec::new(SolverId::NcpAdmm)),
    ];
    let scenarios = vec![
        scenario("solo_standing.yaml", 0.2)?,
        scenario("cube_slide.yaml", 0.2)?,
    ];
    let out = std::env::args().nth(1).map_or_else(
        || std::env::temp_dir().join("user_solver_batch"),
        PathBuf::from,
    );
    let manifest = run_batch(
        &jobs_with(scenarios, &solvers),
        &out,
        runner,
        false,
        Replace::Ours,
    )?;
    let summaries: Vec<_> = manifest.runs.iter().map(|r| r.summary.clone()).collect();
    print!("{}", summary_table(&summaries));
    println!("report: {}", make_report(&out)?.display());
    Ok(())
}
