//! Single-contact problems with hand-derived answers for the global solvers (ADMM,
//! interior point, staggered projections, lcp-qp, Newton).
//!
//! All problems use `G = I` and `μ = 0.5`, so the answers follow by hand:
//! - sticking, `g = (0.1, 0, −1)`: `λ = −g = (−0.1, 0, 1)` is inside every cone, `c = 0`;
//! - taking off, `g = (0.3, 0.2, 1)`: `λ = 0`, `c = g`;
//! - sliding, `g = (2, 0, −1)`: NCP `λ = (−0.5, 0, 1)`, `c = (1.5, 0, 0)` (Signorini and
//!   MDP); CCP `λ = proj_K(−g) = (−0.8, 0, 1.6)`, `c = (1.2, 0, 0.6)`, `c_N = μ‖c_T‖`
//!   (eq. 18);
//! - sliding diagonally, `g = (2, 2, −1)`: NCP `λ_T = −0.5 (1, 1)/√2`; LCP `λ_T` at the
//!   pyramid corner `(−0.5, −0.5)` (Fig. 6), `c = (1.5, 1.5, 0)`.

use contactbench::metrics::residuals::{ccp_residual, lcp_residual, ncp_criterion};
use contactbench::problem::generators::single_contact;
use contactbench::problem::ContactProblem;
use contactbench::solvers::{SolveReport, SolverId, SolverSettings};
use nalgebra::{DVector, Matrix3, Vector3};
use serde_json::Map;

const MU: f64 = 0.5;
const EPS: f64 = 1e-9;

fn problem(g: [f64; 3]) -> ContactProblem {
    let Ok(p) = single_contact(MU, Matrix3::identity(), Vector3::from(g)) else {
        panic!("valid single-contact problem");
    };
    p
}

fn solve(id: SolverId, p: &ContactProblem) -> SolveReport {
    let settings = SolverSettings {
        eps_rel: EPS,
        eps_step: 0.0,
        ..SolverSettings::default()
    };
    let Ok(mut solver) = id.build(settings, &Map::new()) else {
        panic!("{id} builds");
    };
    let Ok(report) = solver.solve(p, None) else {
        panic!("{id} solves");
    };
    assert!(report.status.is_converged(), "{id}: {}", report.status);
    assert!(
        report.residual <= EPS,
        "{id}: residual {:e}",
        report.residual
    );
    report
}

fn assert_close(id: SolverId, what: &str, got: &DVector<f64>, want: [f64; 3], tol: f64) {
    let want = DVector::from_row_slice(&want);
    assert!(
        (got - &want).amax() <= tol,
        "{id} {what}: got {got:?}, want {want:?}"
    );
}

const HARD_SOLVERS: [SolverId; 6] = [
    SolverId::NcpAdmm,
    SolverId::CcpAdmm,
    SolverId::CcpIpm,
    SolverId::LcpQp,
    SolverId::LcpStagproj,
    SolverId::NcpStagproj,
];

#[test]
fn sticking_contact_has_zero_velocity_for_every_model() {
    let p = problem([0.1, 0.0, -1.0]);
    for id in HARD_SOLVERS {
        let r = solve(id, &p);
        assert_close(id, "lambda", &r.lambda, [-0.1, 0.0, 1.0], 1e-6);
        assert_close(id, "velocity", &r.velocity, [0.0, 0.0, 0.0], 1e-6);
        // A sticking contact satisfies all three models at once.
        for (name, value) in [
            ("ncp", ncp_criterion(&p, &r.lambda, &r.velocity)),
            ("ccp", ccp_residual(&p, &r.lambda, &r.velocity)),
            ("lcp", lcp_residual(&p, &r.lambda, &r.velocity)),
        ] {
            assert!(value < 1e-6, "{id}: {name} residual {value:e}");
        }
    }
}

#[test]
fn taking_off_contact_has_zero_force() {
    let p = problem([0.3, 0.2, 1.0]);
    for id in HARD_SOLVERS {
        let r = solve(id, &p);
        assert_close(id, "lambda", &r.lambda, [0.0, 0.0, 0.0], 1e-7);
        assert_close(id, "velocity", &r.velocity, [0.3, 0.2, 1.0], 1e-7);
    }
}

#[test]
fn ncp_sliding_contact_satisfies_signorini_and_mdp() {
    let p = problem([2.0, 0.0, -1.0]);
    for id in [SolverId::NcpAdmm, SolverId::NcpStagproj] {
        let r = solve(id, &p);
        assert_close(id, "lambda", &r.lambda, [-0.5, 0.0, 1.0], 1e-7);
        assert_close(id, "velocity", &r.velocity, [1.5, 0.0, 0.0], 1e-7);
        // MDP: λ_T = −μ λ_N c_T / ‖c_T‖.
        let c_t = r.velocity.rows(0, 2);
        let mdp = r.lambda.rows(0, 2) + c_t * (MU * r.lambda[2] / c_t.norm());
        assert!(mdp.norm() < 1e-7, "{id}: MDP violation {:e}", mdp.norm());
    }
}

#[test]
fn ccp_sliding_contact_has_normal_velocity_eq_18() {
    let p = problem([2.0, 0.0, -1.0]);
    for id in [SolverId::CcpAdmm, SolverId::CcpIpm] {
        let r = solve(id, &p);
        assert_close(id, "lambda", &r.lambda, [-0.8, 0.0, 1.6], 1e-6);
        assert_close(id, "velocity", &r.velocity, [1.2, 0.0, 0.6], 1e-6);
        let c = &r.velocity;
        let gap = c[2] - MU * c.rows(0, 2).norm();
        assert!(gap.abs() < 1e-6, "{id}: c_N − μ‖c_T‖ = {gap:e}");
        // The CCP answer violates Signorini: λ_N c_N = 1.6 · 0.6.
        assert!((r.lambda[2] * c[2] - 0.96).abs() < 1e-5);
        assert!(ncp_criterion(&p, &r.lambda, c) > 0.5);
    }
}

#[test]
fn lcp_diagonal_sliding_goes_to_the_pyramid_corner() {
    let p = problem([2.0, 2.0, -1.0]);
    for id in [SolverId::LcpQp, SolverId::LcpStagproj] {
        let r = solve(id, &p);
        assert_close(id, "lambda", &r.lambda, [-0.5, -0.5, 1.0], 1e-6);
        assert_close(id, "velocity", &r.velocity, [1.5, 1.5, 0.0], 1e-6);
    }
    let r = solve(SolverId::NcpAdmm, &p);
    let s = 0.5 / 2f64.sqrt();
    assert_close(SolverId::NcpAdmm, "lambda", &r.lambda, [-s, -s, 1.0], 1e-7);
    // The isotropic NCP answer is not the LCP's.
    assert!(lcp_residual(&p, &r.lambda, &r.velocity) > 0.1);
}

#[test]
fn ccp_newton_solves_the_soft_problem() {
    // R_soft = α diag(G) = α I: the soft CCP answer is the hard one divided by 1 + α.
    let alpha = 1e-3;
    let k = 1.0 / (1.0 + alpha);
    for (g, want) in [
        ([0.1, 0.0, -1.0], [-0.1 * k, 0.0, k]),
        ([0.3, 0.2, 1.0], [0.0, 0.0, 0.0]),
        ([2.0, 0.0, -1.0], [-0.8 * k, 0.0, 1.6 * k]),
    ] {
        let p = problem(g);
        let r = solve(SolverId::CcpNewton, &p);
        assert_close(SolverId::CcpNewton, "lambda", &r.lambda, want, 1e-8);
    }
}

#[test]
fn frictionless_contact_slides_freely() {
    // μ = 0, g = (2, 0, −1): λ = (0, 0, 1), c = (2, 0, 0) for every model.
    let Ok(p) = single_contact(0.0, Matrix3::identity(), Vector3::new(2.0, 0.0, -1.0)) else {
        panic!("valid frictionless problem");
    };
    for id in HARD_SOLVERS {
        let r = solve(id, &p);
        assert_close(id, "lambda", &r.lambda, [0.0, 0.0, 1.0], 1e-6);
        assert_close(id, "velocity", &r.velocity, [2.0, 0.0, 0.0], 1e-6);
    }
    let r = solve(SolverId::CcpNewton, &p);
    assert_close(
        SolverId::CcpNewton,
        "lambda",
        &r.lambda,
        [0.0, 0.0, 1.0 / 1.001],
        1e-8,
    );
}
