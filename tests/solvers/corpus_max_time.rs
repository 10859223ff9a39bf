//! A corpus solve that cannot converge stops itself at the budget's timeout with status
//! `MaxTime` (the timeout is the solver's `max_time`) instead of running to its iteration cap.

use std::path::{Path, PathBuf};

use contactbench::corpus::runner::{run_task, Budget};
use contactbench::corpus::tasks::Task;
use contactbench::problem::io::read_problem;

fn problem_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fclib/Box_Stacks-i0122-82-5.hdf5")
}

fn task(solver: &str) -> Task {
    Task {
        problem: problem_path(),
        solver: solver.to_string(),
        solver_rank: 0,
        key: String::new(),
    }
}

#[test]
fn the_budget_timeout_stops_a_solver_that_cannot_converge() {
    let file = read_problem(&problem_path()).unwrap_or_else(|e| panic!("{e}"));
    let budget = Budget {
        max_iter: None,
        timeout: 0.05,
    };
    // eps_rel = 0 is never reached on Siconos's 82-contact box stack (ncp-admm's criterion
    // stalls at round-off, 5.6e-16 after 4,353 iterations), and a billion iterations would
    // take hours. (The 2-contact `contactbench_style.npz` is no longer a solve that cannot
    // converge: with the factor's reciprocal diagonals ncp-admm reaches criterion 0.0 on it
    // in 101 iterations.)
    let result = run_task(
        &task("ncp-admm:eps_rel=0,max_iter=1000000000"),
        Ok(&file),
        budget,
    );
    assert_eq!(result.status, "max time reached", "{result:?}");
    assert!(!result.converged);
    let iterations = result.iterations.unwrap_or(0);
    assert!(
        (1..1_000_000_000).contains(&iterations),
        "{iterations} iterations"
    );
    // The time is checked once per iteration: the solve ends soon after the timeout.
    let time = result.solve_time_s.unwrap_or(f64::INFINITY);
    assert!((0.05..0.5).contains(&time), "solve time {time} s");
}

#[test]
fn a_smaller_max_time_of_the_specification_is_kept() {
    let file = read_problem(&problem_path()).unwrap_or_else(|e| panic!("{e}"));
    let budget = Budget {
        max_iter: None,
        timeout: 60.0,
    };
    let result = run_task(
        &task("ncp-admm:eps_rel=0,max_iter=1000000000,max_time=0.05"),
        Ok(&file),
        budget,
    );
    assert_eq!(result.status, "max time reached", "{result:?}");
    let time = result.solve_time_s.unwrap_or(f64::INFINITY);
    assert!((0.05..0.5).contains(&time), "solve time {time} s");
}
