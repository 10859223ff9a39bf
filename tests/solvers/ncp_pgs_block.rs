//! ncp-pgs with `block = exact` (the per-contact NCP solved with the full 3×3 block,
//! src/solvers/ncp_pgs.rs) against the paper's diagonal step (Alg. 5) on an FCLIB problem
//! where the diagonal step does not reach the default tolerance (docs/problems.md,
//! "Method fixes").

use std::path::PathBuf;

use contactbench::problem::io::read_problem;
use contactbench::solvers::{SolveReport, SolveStatus, SolverSpec};

/// Solves the PerioBox problem (Siconos, LMGC90, 60 contacts; tests/data/fclib/README.md)
/// with the solver specification `spec`.
fn solve_periobox(spec: &str) -> SolveReport {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/fclib/LMGC_100_PR_PerioBox-i00361-60-03000.hdf5");
    let file = read_problem(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(file.problem.num_contacts(), 60);
    let spec: SolverSpec = spec.parse().unwrap_or_else(|e| panic!("{e}"));
    let mut solver = spec.build().unwrap_or_else(|e| panic!("{e}"));
    solver
        .solve(&file.problem, None)
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_diagonal_step_stalls_where_the_exact_block_solve_converges() {
    // Measured: the diagonal step ends its 1000 sweeps at relative criterion 2.10e-6.
    let diagonal = solve_periobox("ncp-pgs:max_iter=1000");
    assert_eq!(diagonal.status, SolveStatus::MaxIterations);
    assert!(
        diagonal.residual > 1e-6 && diagonal.residual < 2e-5,
        "diagonal: {}",
        diagonal.residual
    );
    // Measured: the exact block solve reaches 9.9e-7 ≤ 1e-6 after 576 sweeps.
    let exact = solve_periobox("ncp-pgs:max_iter=1000,block=exact");
    assert_eq!(exact.status, SolveStatus::Converged);
    assert!(exact.residual <= 1e-6, "exact: {}", exact.residual);
    assert!(
        (300..=900).contains(&exact.iterations),
        "exact: {} sweeps",
        exact.iterations
    );
    // After the same 300 sweeps the exact solve is ahead (measured 6.6e-5 against 1.8e-4).
    let diagonal = solve_periobox("ncp-pgs:max_iter=300");
    let exact = solve_periobox("ncp-pgs:max_iter=300,block=exact");
    assert!(
        exact.residual < 0.6 * diagonal.residual,
        "300 sweeps: exact {} vs diagonal {}",
        exact.residual,
        diagonal.residual
    );
}

#[test]
fn a_single_contact_is_solved_in_one_sweep_with_the_full_block() {
    // CubeH8: one contact with a full 3×3 block; the exact block solve is the answer
    // (measured relative criterion 1.5e-16 after one sweep).
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/fclib/CubeH8.hdf5");
    let file = read_problem(&path).unwrap_or_else(|e| panic!("{e}"));
    let spec: SolverSpec = "ncp-pgs:block=exact,eps_rel=1e-14"
        .parse()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut solver = spec.build().unwrap_or_else(|e| panic!("{e}"));
    let report = solver
        .solve(&file.problem, None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.status, SolveStatus::Converged);
    assert_eq!(report.iterations, 1);
    assert!(report.residual < 1e-14, "{}", report.residual);
}

#[test]
fn bad_inner_parameters_are_refused() {
    for spec in [
        "ncp-pgs:block=exact,inner_max_iter=0",
        "ncp-pgs:block=exact,inner_tol=0",
        "ncp-pgs:block=cholesky",
    ] {
        let built = spec.parse::<SolverSpec>().and_then(|s| s.build());
        assert!(built.is_err(), "{spec} was accepted");
    }
}
