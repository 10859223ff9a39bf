//! Every solver's "converged" is checked against the ruler before it is reported: the
//! solver shell computes the criterion of the solver's model again from the returned `λ`,
//! and an answer that fails it is `refuted_by_ruler` (not converged), whatever the
//! solver's own stopping test said. Built-in solvers, a user's algorithm in the shell and
//! a user's solver framed by `solve_checked` alike.

use contactbench::metrics::model_criteria;
use contactbench::problem::{ContactModel, ContactProblem};
use contactbench::solvers::{
    solve_checked, Algorithm, ContactSolver, Shell, SolveCall, SolveReport, SolveStatus,
    SolverError, SolverId, SolverSettings,
};
use nalgebra::{DMatrix, DVector};
use serde_json::Map;

fn problem(g: DMatrix<f64>, free: &[f64]) -> ContactProblem {
    let n = free.len() / 3;
    ContactProblem::new(
        g,
        DVector::from_column_slice(free),
        DVector::from_element(n, 0.5),
        None,
    )
    .unwrap_or_else(|e| panic!("valid problem: {e}"))
}

fn solve(id: SolverId, p: &ContactProblem) -> SolveReport {
    let mut solver = id
        .build(SolverSettings::default(), &Map::new())
        .unwrap_or_else(|e| panic!("{id}: {e}"));
    solver
        .solve(p, None)
        .unwrap_or_else(|e| panic!("{id}: {e}"))
}

/// The hard CCP relative criterion of `report`'s answer on `p`.
fn ccp_criterion(p: &ContactProblem, report: &SolveReport) -> f64 {
    model_criteria(
        ContactModel::Ccp,
        p,
        &report.lambda,
        &p.velocity(&report.lambda),
    )
    .relative
}

#[test]
fn ccp_newton_is_not_converged_on_a_problem_without_solution() {
    // G = 0, g_N = −1: no force changes the velocity, the contact penetrates at 1 m/s
    // whatever λ. ccp-newton's Newton method needs a compliance and floors it at α: it
    // answered λ_N = 1000 and called it converged after 0 iterations.
    let p = problem(DMatrix::zeros(3, 3), &[0.0, 0.0, -1.0]);
    let report = solve(SolverId::CcpNewton, &p);
    assert_eq!(
        report.status,
        SolveStatus::RefutedByRuler,
        "{}",
        report.status
    );
    assert!(report.residual >= 1.0, "r = {:e}", report.residual);
    assert_eq!(report.velocity[2], -1.0);
}

#[test]
fn ccp_newton_is_not_converged_on_a_contact_without_normal_stiffness() {
    // Contact 0 is an ordinary contact; contact 1 has no stiffness at all (its rows of G
    // are 0) and g_N = −1: nothing can stop it penetrating.
    let mut g = DMatrix::zeros(6, 6);
    for k in 0..3 {
        g[(k, k)] = 1.0;
    }
    let p = problem(g, &[0.0, 0.0, -1.0, 0.0, 0.0, -1.0]);
    let report = solve(SolverId::CcpNewton, &p);
    assert_eq!(
        report.status,
        SolveStatus::RefutedByRuler,
        "{}",
        report.status
    );
    assert!(ccp_criterion(&p, &report) >= 1.0);
}

#[test]
fn ccp_newton_is_not_converged_when_its_floor_is_the_only_normal_stiffness() {
    // cond(G) = 1e16 within one contact: G = diag(1, 1, 1e-16). The Newton method floors
    // the normal compliance at 1e-9 max diag G, 1e7 times the model's α G_nn: on that
    // floor it answered λ_N ≈ 1e12 with the contact still penetrating at ~v_s.
    let p = problem(
        DMatrix::from_diagonal(&DVector::from_vec(vec![1.0, 1.0, 1e-16])),
        &[0.0, 0.0, -1.0],
    );
    let report = solve(SolverId::CcpNewton, &p);
    assert!(!report.status.is_converged(), "{}", report.status);
    let hard = ccp_criterion(&p, &report);
    println!(
        "ccp-newton on diag(1, 1, 1e-16): {} after {} iterations, ruler r = {:.3e}, hard CCP r = {hard:.3e}",
        report.status, report.iterations, report.residual
    );
}

/// Claims convergence at once with zero forces: its own test is wrong.
struct ClaimsZero;

impl Algorithm for ClaimsZero {
    fn solve(&mut self, call: SolveCall<'_>) -> Result<SolveReport, SolverError> {
        Ok(call.finish(
            DVector::zeros(call.problem.dim()),
            SolveStatus::Converged,
            0,
            None,
        ))
    }
}

#[test]
fn a_user_algorithm_that_claims_convergence_wrongly_is_refuted() {
    // One contact falling on the floor: λ = 0 leaves it penetrating at 1 m/s.
    let p = problem(DMatrix::identity(3, 3), &[0.0, 0.0, -1.0]);
    let mut solver = Shell::wrap(
        "claims-zero",
        ContactModel::Ncp,
        SolverSettings::default(),
        ClaimsZero,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let report = solver.solve(&p, None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.status, SolveStatus::RefutedByRuler);
    assert_eq!(report.status.name(), "refuted_by_ruler");
    assert!(!report.status.is_converged());
    assert_eq!(report.residual, 1.0);
    // On a take-off, zero forces are the answer: the same claim is confirmed.
    let take_off = problem(DMatrix::identity(3, 3), &[0.0, 0.0, 1.0]);
    let report = solver
        .solve(&take_off, None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.status, SolveStatus::Converged);
}

#[test]
fn a_report_with_invented_criteria_is_judged_on_its_forces() {
    // A solver framed by solve_checked (not the shell) that writes a residual of 0 into
    // its report: the ruler recomputes the criteria from λ.
    let p = problem(DMatrix::identity(3, 3), &[0.0, 0.0, -1.0]);
    let settings = SolverSettings::default();
    let report = solve_checked(&p, ContactModel::Ccp, &settings, None, |start| {
        let mut report = SolveReport::finish(
            &p,
            ContactModel::Ccp,
            &settings,
            DVector::from_vec(vec![0.0, 0.0, 0.5]),
            SolveStatus::Converged,
            3,
            start,
            None,
        );
        report.residual = 0.0;
        report.criteria.relative = 0.0;
        report.velocity.fill(0.0);
        Ok(report)
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.status, SolveStatus::RefutedByRuler);
    assert_eq!(report.residual, 0.5);
    assert_eq!(report.velocity[2], -0.5);
    // The wrong size of λ is an error, not a status.
    let wrong = solve_checked(&p, ContactModel::Ccp, &settings, None, |start| {
        let mut report = SolveReport::finish(
            &p,
            ContactModel::Ccp,
            &settings,
            DVector::zeros(3),
            SolveStatus::MaxIterations,
            3,
            start,
            None,
        );
        report.lambda = DVector::zeros(2);
        Ok(report)
    });
    assert!(matches!(wrong, Err(SolverError::Problem(_))));
}

#[test]
fn every_built_in_solver_converged_passes_the_ruler_on_random_problems() {
    for seed in 0..3 {
        let p = contactbench::problem::generators::random_problem(seed, 4, 18)
            .unwrap_or_else(|e| panic!("{e}"));
        for id in SolverId::ALL {
            let report = solve(id, &p);
            if report.status.is_converged() {
                assert!(
                    report.residual <= 1e-6,
                    "{id}, seed {seed}: {:e}",
                    report.residual
                );
            }
            println!(
                "seed {seed} {id}: {} ({} iterations)",
                report.status, report.iterations
            );
        }
    }
}
