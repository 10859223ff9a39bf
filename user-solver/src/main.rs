//! A `contactbench` of one's own: the whole command line of contactbench, with this
//! crate's solver (`jacobi-ncp`, [`user_solver::JacobiNcp`]) beside the built-in ones in
//! `run`, `sweep`, `batch`, `solve` and `paper`:
//!
//! ```sh
//! cargo run --release -p user-solver -- solve problem.json --all
//! cargo run --release -p user-solver -- run scenarios/solo_standing.yaml --solver jacobi-ncp --solver ncp-admm
//! ```

use contactbench::solvers::SolverSettings;

fn main() -> std::process::ExitCode {
    let settings = SolverSettings {
        max_iter: 500,
        ..SolverSettings::default()
    };
    contactbench::cli::main_with(vec![user_solver::factory(settings, 0.3)])
}
