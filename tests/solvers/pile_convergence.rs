//! The ADMMs on a pile: the contact problem of step 506 of
//! `scenarios/pile_spheres_box.yaml` (32 balls, 68 contacts), where ncp-admm without
//! acceleration reaches its 1000-iteration cap cold with the spectral and the linear ρ
//! rule (tests/data/piles/README.md). The OSQP ρ rule and Anderson acceleration (with any
//! rule) converge on it; the parameters
//! of both are checked; the safeguard of the Anderson acceleration rejects an
//! extrapolation whose fixed-point residual grew.

use std::path::Path;

use contactbench::problem::io::read_problem;
use contactbench::problem::ContactProblem;
use contactbench::solvers::admm::AdmmParams;
use contactbench::solvers::anderson::{Anderson, AndersonStep};
use contactbench::solvers::ncp_admm::NcpAdmmSolver;
use contactbench::solvers::{SolveStatus, SolverError, SolverId, SolverSettings};
use nalgebra::{DMatrix, DVector};
use serde_json::{json, Map, Value};

fn pile() -> ContactProblem {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/piles/balls32_step506.npz");
    match read_problem(&path) {
        Ok(file) => file.problem,
        Err(e) => panic!("{e}"),
    }
}

fn settings() -> SolverSettings {
    SolverSettings {
        eps_rel: 1e-6,
        max_iter: 1000,
        ..SolverSettings::default()
    }
}

/// The cold solve's status and iterations with the given ADMM parameters.
fn cold_solve(id: SolverId, params: Value, problem: &ContactProblem) -> (SolveStatus, usize) {
    let Value::Object(params) = params else {
        panic!("parameters must be a map")
    };
    let mut solver = id
        .build(settings(), &params)
        .unwrap_or_else(|e| panic!("{id}: {e}"));
    let report = solver
        .solve(problem, None)
        .unwrap_or_else(|e| panic!("{e}"));
    (report.status, report.iterations)
}

/// ncp-admm with `params`, cold, stops at its iteration cap on the ball pile.
fn assert_reaches_its_cap(params: Value) {
    let (status, iterations) = cold_solve(SolverId::NcpAdmm, params, &pile());
    assert_eq!(
        status,
        SolveStatus::MaxIterations,
        "{iterations} iterations"
    );
}

#[test]
fn the_spectral_rule_without_acceleration_reaches_its_cap_on_the_ball_pile() {
    assert_reaches_its_cap(json!({"anderson_memory": 0}));
}

#[test]
fn the_linear_rule_without_acceleration_reaches_its_cap_on_the_ball_pile() {
    assert_reaches_its_cap(json!({"rho_update": "linear", "anderson_memory": 0}));
}

#[test]
fn the_osqp_rule_converges_on_the_ball_pile() {
    let (status, iterations) = cold_solve(
        SolverId::NcpAdmm,
        json!({"rho_update": "osqp", "anderson_memory": 0}),
        &pile(),
    );
    assert_eq!(status, SolveStatus::Converged);
    // 457 measured.
    assert!(iterations < 600, "{iterations} iterations");
}

#[test]
fn anderson_acceleration_converges_on_the_ball_pile_with_every_rule() {
    let problem = pile();
    for rule in ["spectral", "linear", "osqp"] {
        let params = json!({"rho_update": rule, "anderson_memory": 5});
        let (status, iterations) = cold_solve(SolverId::NcpAdmm, params, &problem);
        assert_eq!(status, SolveStatus::Converged, "{rule}");
        // 78 to 107 measured.
        assert!(iterations < 200, "{rule}: {iterations} iterations");
    }
}

#[test]
fn anderson_acceleration_cuts_ccp_admm_iterations_on_the_ball_pile() {
    let problem = pile();
    let (plain_status, plain) =
        cold_solve(SolverId::CcpAdmm, json!({"anderson_memory": 0}), &problem);
    let (status, accelerated) =
        cold_solve(SolverId::CcpAdmm, json!({"anderson_memory": 5}), &problem);
    assert_eq!(plain_status, SolveStatus::Converged);
    assert_eq!(status, SolveStatus::Converged);
    // 150 and 53 measured.
    assert!(2 * accelerated < plain, "{accelerated} against {plain}");
}

fn build_error(params: Value) -> String {
    let Value::Object(params) = params else {
        panic!("parameters must be a map")
    };
    match SolverId::NcpAdmm.build(settings(), &params) {
        Err(SolverError::InvalidParameter { message, .. }) => message,
        Err(e) => panic!("not an invalid parameter: {e}"),
        Ok(_) => panic!("{params:?} accepted"),
    }
}

#[test]
fn bad_rho_rule_parameters_are_errors_naming_the_field() {
    for (params, field) in [
        (json!({"rho_update": "boyd"}), "rho_update"),
        (json!({"linear_factor": 1.0}), "linear_factor"),
        (json!({"linear_factor": -2.0}), "linear_factor"),
        (json!({"anderson_memory": 33}), "anderson_memory"),
    ] {
        let message = build_error(params.clone());
        assert!(message.contains(field), "{params}: {message}");
    }
    let typed = NcpAdmmSolver::new(
        settings(),
        AdmmParams {
            linear_factor: f64::NAN,
            ..AdmmParams::default()
        },
    );
    assert!(
        matches!(typed, Err(SolverError::InvalidParameter { message, .. }) if message.contains("linear_factor"))
    );
}

#[test]
fn the_new_parameters_are_read_from_a_map() {
    let mut params = Map::new();
    params.insert("rho_update".into(), json!("linear"));
    params.insert("linear_factor".into(), json!(3.0));
    params.insert("anderson_memory".into(), json!(4));
    let solver = SolverId::NcpAdmm.build(settings(), &params);
    assert!(solver.is_ok(), "{:?}", solver.err());
}

/// `T(u) = A u + b` with `A` symmetric of spectral radius 0.95: a slow linear contraction.
fn linear_map(u: &DVector<f64>) -> DVector<f64> {
    let a = DMatrix::from_fn(
        4,
        4,
        |i, j| if i == j { 0.95 - 0.2 * i as f64 } else { 0.0 },
    );
    a * u + DVector::from_element(4, 1.0)
}

#[test]
fn anderson_acceleration_solves_a_linear_contraction_faster_than_plain_iteration() {
    let fixed_point = DVector::from_iterator(4, (0..4).map(|i| 1.0 / (0.05 + 0.2 * i as f64)));
    let mut plain = DVector::zeros(4);
    let mut plain_steps = 0;
    while (&plain - &fixed_point).norm() > 1e-10 && plain_steps < 10_000 {
        plain = linear_map(&plain);
        plain_steps += 1;
    }
    let mut anderson = Anderson::new(4);
    let mut u = DVector::zeros(4);
    let mut next = DVector::zeros(4);
    let mut steps = 0;
    while (&u - &fixed_point).norm() > 1e-10 && steps < 10_000 {
        let image = linear_map(&u);
        anderson.step(&u, &image, &mut next);
        u.copy_from(&next);
        steps += 1;
    }
    // A linear map of 4 distinct eigenvalues: memory 4 ends in a few steps; plain
    // iteration needs ~ln(1e-11)/ln(0.95) ≈ 500.
    assert!(steps < 10, "{steps} accelerated steps");
    assert!(plain_steps > 400, "{plain_steps} plain steps");
}

#[test]
fn the_safeguard_rejects_an_extrapolation_whose_residual_grew() {
    let mut anderson = Anderson::new(3);
    let mut next = DVector::zeros(4);
    let u0 = DVector::zeros(4);
    let g0 = linear_map(&u0);
    assert_eq!(anderson.step(&u0, &g0, &mut next), AndersonStep::Plain);
    let u1 = next.clone();
    let g1 = linear_map(&u1);
    assert_eq!(
        anderson.step(&u1, &g1, &mut next),
        AndersonStep::Extrapolated
    );
    let extrapolated = next.clone();
    // An image far from the extrapolated point: its residual exceeds ‖g1 − u1‖.
    let bad_image = &extrapolated + DVector::from_element(4, 1e3);
    assert_eq!(
        anderson.step(&extrapolated, &bad_image, &mut next),
        AndersonStep::Rejected
    );
    assert_eq!(next, g1, "the plain image of the point it came from");
    assert_eq!(anderson.rejections(), 1);
    // The memory is cleared: the next step is plain.
    let g2 = linear_map(&g1);
    assert_eq!(anderson.step(&g1, &g2, &mut next), AndersonStep::Plain);
}
