//! A user-defined solver compared with the built-in ones, without touching contactbench.
//!
//! `JacobiNcp` (this crate, `user-solver/src/lib.rs`) is a damped projected Jacobi method
//! on the NCP in contactbench's solver shell, outside the library, and goes through
//! [`compare`] exactly like the registry's solvers; `examples/user_solver.rs` runs it on
//! a robot scenario, in a sweep and in a batch.
//!
//! Run with `cargo run --release -p user-solver --example custom_solver` (a debug build's
//! times are not the solvers': it says so).

use contactbench::problem::generators::random_problem;
use contactbench::solvers::compare::{builtin_solvers, compare, comparison_table};
use contactbench::solvers::{ContactSolver, SolverSettings};

fn main() -> anyhow::Result<()> {
    // 6 contacts, 36 dofs: a full-rank random problem, seeded.
    let problem = random_problem(5, 6, 36)?;
    let settings = SolverSettings {
        eps_rel: 1e-6,
        max_iter: 2000,
        ..SolverSettings::default()
    };
    let mut candidates = builtin_solvers(&settings);
    let user: Box<dyn ContactSolver> = user_solver::solver(settings.clone(), 0.3)?.boxed();
    candidates.push((user.name().to_string(), Ok(user)));
    let runs = compare(candidates, &problem, None);
    println!(
        "random problem: {} contacts, stop = {}, eps_rel = {:e}\n",
        problem.num_contacts(),
        settings.stop,
        settings.eps_rel
    );
    print!("{}", comparison_table(&runs));
    if cfg!(debug_assertions) {
        eprintln!(
            "warning: a debug build: these times are not the solvers' (10 to 1000x slower); \
             run with `cargo run --release -p user-solver --example custom_solver`"
        );
    }
    Ok(())
}
