//! One contact with a known answer, for every solver: sticking, sliding, taking off, the
//! CCP's normal velocity while sliding (eq. 18) and RaiSim's MDP violation (eq. 21).

use crate::common::solvers as common;

use common::{build, model_residual, settings};
use contactbench::metrics::compute_metrics;
use contactbench::problem::generators::single_contact;
use contactbench::problem::{ContactModel, ContactProblem};
use contactbench::solvers::{SolveReport, SolverId};
use nalgebra::{DVector, Matrix3, Vector3};

const EPS: f64 = 1e-9;

fn problem(mu: f64, g: Matrix3<f64>, free: Vector3<f64>) -> ContactProblem {
    match single_contact(mu, g, free) {
        Ok(p) => p,
        Err(err) => panic!("invalid test problem: {err}"),
    }
}

/// `G` with a normal-tangential coupling `a` between `t1` and `n`.
fn coupled_delassus(a: f64) -> Matrix3<f64> {
    Matrix3::new(1.0, 0.0, a, 0.0, 1.0, 0.0, a, 0.0, 1.0)
}

/// Runs every implemented solver; checks the status, the solver's own residual and the
/// residual of its model recomputed by the metrics; hands each report to `check`.
fn for_every_solver(p: &ContactProblem, check: impl Fn(SolverId, ContactModel, &SolveReport)) {
    for id in SolverId::ALL {
        let mut solver = build(id, &settings(EPS, 5000));
        let report = match solver.solve(p, None) {
            Ok(r) => r,
            Err(err) => panic!("{id}: {err}"),
        };
        assert!(report.status.is_converged(), "{id}: {}", report.status);
        assert!(report.residual <= EPS, "{id}: residual {}", report.residual);
        // ccp-newton solves the soft problem G + α diag(G): its answer is not this
        // problem's, so only its own residual is checked.
        if id == SolverId::CcpNewton {
            continue;
        }
        let model = solver.model();
        let r = model_residual(model, p, &report.lambda);
        assert!(r <= 10.0 * EPS, "{id}: model residual {r}");
        check(id, model, &report);
    }
}

fn assert_close(id: SolverId, what: &str, got: &DVector<f64>, expected: &[f64], tol: f64) {
    let expected = DVector::from_column_slice(expected);
    assert!(
        (got - &expected).amax() <= tol,
        "{id}: {what} = {got:?}, expected {expected:?}"
    );
}

#[test]
fn sticking_contact_stops_dead_inside_the_cone() {
    // λ* = (−0.1, 0.05, 1) is inside both the cone and the pyramid (μ = 0.5); g = −G λ*.
    let g = coupled_delassus(0.3);
    let lambda_star = Vector3::new(-0.1, 0.05, 1.0);
    let p = problem(0.5, g, -(g * lambda_star));
    for_every_solver(&p, |id, _, report| {
        assert_close(id, "lambda", &report.lambda, lambda_star.as_slice(), 1e-7);
        assert!(
            report.velocity.amax() <= 1e-7,
            "{id}: c = {:?}",
            report.velocity
        );
        let m = compute_metrics(&p, &report.lambda);
        assert_eq!(m.sliding_contacts, 0, "{id}");
        assert!(m.ncp_criterion <= 1e-7, "{id}");
    });
}

#[test]
fn taking_off_contact_has_no_force() {
    // g_N > 0 and ‖g_T‖ = 0.36 ≤ g_N / μ = 1: λ = 0 for every model, c = g.
    let g = coupled_delassus(0.3);
    let p = problem(0.5, g, Vector3::new(0.3, -0.2, 0.5));
    for_every_solver(&p, |id, _, report| {
        assert_close(id, "lambda", &report.lambda, &[0.0, 0.0, 0.0], 1e-9);
        assert_close(id, "c", &report.velocity, &[0.3, -0.2, 0.5], 1e-9);
        let m = compute_metrics(&p, &report.lambda);
        assert!(m.signorini_violation.complementarity <= 1e-12, "{id}");
    });
}

#[test]
fn sliding_contact_answers_of_each_model() {
    // G = I, g = (2, 0, −1), μ = 0.5.
    // NCP (and LCP, RaiSim: G_NT = 0, sliding along a facet axis): λ = (−0.5, 0, 1),
    // c = (1.5, 0, 0): friction −μ λ_N opposes the slip, no normal velocity.
    // CCP: λ = proj_K(−g) = (−0.8, 0, 1.6), c = (1.2, 0, 0.6): c_N = μ ‖c_T‖ (eq. 18).
    let p = problem(0.5, Matrix3::identity(), Vector3::new(2.0, 0.0, -1.0));
    for_every_solver(&p, |id, model, report| {
        let m = compute_metrics(&p, &report.lambda);
        assert_eq!(m.sliding_contacts, 1, "{id}");
        match model {
            ContactModel::Ccp => {
                assert_close(id, "lambda", &report.lambda, &[-0.8, 0.0, 1.6], 1e-7);
                assert_close(id, "c", &report.velocity, &[1.2, 0.0, 0.6], 1e-7);
                // The CCP breaks Signorini by λ_N c_N = 1.6 · 0.6 and keeps the MDP.
                let s = m.signorini_violation.complementarity;
                assert!((s - 0.96).abs() < 1e-6, "{id}: {s}");
                assert!(m.mdp_violation < 1e-7, "{id}");
                // ε_c of the NCP: ⟨λ, c + (0, 0, μ‖c_T‖)⟩ = −0.96 + 1.6 · 1.2 = 0.96.
                assert!((m.ncp_criterion - 0.96).abs() < 1e-6, "{id}");
            }
            _ => {
                assert_close(id, "lambda", &report.lambda, &[-0.5, 0.0, 1.0], 1e-7);
                assert_close(id, "c", &report.velocity, &[1.5, 0.0, 0.0], 1e-7);
                assert!(m.mdp_violation < 1e-7, "{id}");
                assert!(m.signorini_violation.complementarity < 1e-7, "{id}");
            }
        }
    });
}

#[test]
fn raisim_violates_the_mdp_as_eq_21_says() {
    // Built backwards from RaiSim's sliding KKT point: G_NT = (a, 0), μ = 0.5,
    // λ* = (0, μ, 1) on the cone's boundary, d = λ_T + μ² λ_N G_NT / G_NN = (0.125, 0.5),
    // c = −d = (−0.125, −0.5, 0), g = c − G λ* = (−0.625, −1, −1).
    let (mu, a) = (0.5, 0.5);
    let p = problem(mu, coupled_delassus(a), Vector3::new(-0.625, -1.0, -1.0));
    let d = nalgebra::Vector2::<f64>::new(0.125, 0.5);
    // MDP violation ‖λ_T + μ λ_N c_T/‖c_T‖‖ = ‖(0, 0.5) − 0.5 d/‖d‖‖.
    let expected_mdp = (nalgebra::Vector2::<f64>::new(0.0, 0.5) - d * (0.5 / d.norm())).norm();
    for_every_solver(&p, |id, model, report| {
        let m = compute_metrics(&p, &report.lambda);
        match (id, model) {
            (SolverId::Raisim, _) => {
                assert_close(id, "lambda", &report.lambda, &[0.0, 0.5, 1.0], 1e-7);
                assert_close(id, "c", &report.velocity, &[-0.125, -0.5, 0.0], 1e-7);
                assert!((m.mdp_violation - expected_mdp).abs() < 1e-6, "{id}");
                assert!(m.mdp_violation > 0.1, "{id}");
            }
            (_, ContactModel::Ncp) => {
                // ε_c is quadratic in the angle between λ_T and −c_T, so an NCP criterion
                // of 1e-9 bounds the MDP violation only to about its square root.
                assert!(m.mdp_violation < 1e-3, "{id}: {}", m.mdp_violation);
                assert!(m.mdp_violation < 1e-2 * expected_mdp, "{id}");
                assert!(m.raisim_residual > 1e-3, "{id}: NCP answer is not RaiSim's");
            }
            _ => {}
        }
    });
}

#[test]
fn compliance_enters_every_solver_through_g_plus_r() {
    // G = I, R = (0, 0, 1), g = (0, 0, −1): the normal row of G + R is 2, so λ_N = 0.5 and
    // c_N = 2 · 0.5 − 1 = 0; without R the answer would be λ_N = 1.
    let p = match contactbench::problem::ContactProblem::new(
        nalgebra::DMatrix::identity(3, 3),
        DVector::from_vec(vec![0.0, 0.0, -1.0]),
        DVector::from_element(1, 0.5),
        Some(DVector::from_vec(vec![0.0, 0.0, 1.0])),
    ) {
        Ok(p) => p,
        Err(err) => panic!("{err}"),
    };
    for_every_solver(&p, |id, _, report| {
        assert_close(id, "lambda", &report.lambda, &[0.0, 0.0, 0.5], 1e-7);
        assert_close(id, "c", &report.velocity, &[0.0, 0.0, 0.0], 1e-7);
    });
}
