//! Implicit derivatives of solvers' answers against central finite differences, on random
//! problems with a planted answer in each mode (take-off, stick, slide, and mixtures; 1 to
//! 20 contacts), for ncp-admm, ccp-admm, ccp-ipm, lcp-qp and raisim; the modes reported;
//! non-differentiable points (mode boundaries, unconverged solves, answers that are not
//! solutions, RaiSim's vanishing direction) flagged or refused with a typed error, never
//! NaN.
//!
//! The reference is the model's solution map, differenced with a solver that reaches
//! `1e-13`: the solver itself for ncp-admm and ccp-admm, ccp-admm for ccp-ipm, lcp-pgs for
//! lcp-qp. The interior-point answers are accurate to about `1e-7` on sliding contacts
//! (the complementarity criterion grows as the square of a friction direction's error,
//! so `r = 1.8e-12` leaves `λ_T` off by `3e-7`), which their own differences divide by
//! the step: against those, the agreement asked is `1e-4` (measured up to `2e-5`).

use std::f64::consts::TAU;

use contactbench::derivatives::{
    differentiate, differentiate_report, ContactMode, DerivativeError, DerivativeSettings,
    FiniteDifferences, LinearMethod, ProblemDirection, SolutionDerivative,
};
use contactbench::problem::ContactModel;
use contactbench::problem::ContactProblem;
use contactbench::solvers::{ContactSolver, SolverId, SolverSettings, SolverSpec};
use nalgebra::{DMatrix, DVector, Vector2, Vector3};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The agreement asked of every implicit Jacobian: `max |J − J_FD| ≤ 1e-6 s`, with `s`
/// the larger of `max |J_FD|` and the Jacobian's natural scale, `‖λ‖∞` per unit of the
/// field's scale (`‖g‖∞` for `g`, `‖μ‖∞` for `μ`, `‖g‖∞ / ‖λ‖∞` for `G` and `R`), so
/// that a Jacobian that is zero (a sticking contact's `∂λ/∂μ`) is held to the same
/// absolute standard as its neighbours.
const RELATIVE: f64 = 1e-6;

/// A problem whose answer is planted: per contact `(λ_i, c_i)` in the given mode of the
/// model, `G = I + B Bᵀ` (`B` uniform, coupling every contact), `g = c − (G + R) λ`.
fn planted(
    model: ContactModel,
    seed: u64,
    modes: &[ContactMode],
    compliance: bool,
) -> ContactProblem {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = modes.len();
    let dim = 3 * n;
    let coupling = 0.6 / (dim as f64).sqrt();
    let b = DMatrix::from_fn(dim, dim, |_, _| rng.random_range(-1.0..1.0) * coupling);
    let delassus = DMatrix::identity(dim, dim) + &b * b.transpose();
    let r = compliance.then(|| DVector::from_fn(dim, |_, _| rng.random_range(0.01..0.1)));
    let mu = DVector::from_fn(n, |_, _| rng.random_range(0.3..1.0));
    let mut effective = delassus.clone();
    if let Some(r) = &r {
        for k in 0..dim {
            effective[(k, k)] += r[k];
        }
    }
    let mut lambda = DVector::zeros(dim);
    let mut c = DVector::zeros(dim);
    for (i, mode) in modes.iter().enumerate() {
        let block = effective.fixed_view::<3, 3>(3 * i, 3 * i).into_owned();
        let (li, ci) = planted_contact(&mut rng, model, *mode, mu[i], &block);
        lambda.fixed_rows_mut::<3>(3 * i).copy_from(&li);
        c.fixed_rows_mut::<3>(3 * i).copy_from(&ci);
    }
    let free_velocity = c - &effective * &lambda;
    ContactProblem::new(delassus, free_velocity, mu, r).expect("a valid planted problem")
}

fn planted_contact(
    rng: &mut ChaCha8Rng,
    model: ContactModel,
    mode: ContactMode,
    mu: f64,
    block: &nalgebra::Matrix3<f64>,
) -> (Vector3<f64>, Vector3<f64>) {
    let angle = rng.random_range(0.0..TAU);
    let u = Vector2::new(angle.cos(), angle.sin());
    let normal = rng.random_range(0.5..1.5);
    let slip = rng.random_range(0.2..1.0);
    match mode {
        ContactMode::TakeOff => {
            let c_t = u * rng.random_range(0.0..0.5);
            let c_n = mu * c_t.norm() + rng.random_range(0.2..1.0);
            (Vector3::zeros(), Vector3::new(c_t.x, c_t.y, c_n))
        }
        ContactMode::Stick => {
            let lambda_t = if model == ContactModel::Lcp {
                Vector2::new(rng.random_range(-0.7..0.7), rng.random_range(-0.7..0.7))
            } else {
                u * rng.random_range(0.0..0.7)
            } * (mu * normal);
            (
                Vector3::new(lambda_t.x, lambda_t.y, normal),
                Vector3::zeros(),
            )
        }
        ContactMode::Slide => match model {
            ContactModel::Ncp | ContactModel::Ccp => {
                let lambda_t = -u * (mu * normal);
                let c_n = if model == ContactModel::Ccp {
                    mu * slip
                } else {
                    0.0
                };
                let c_t = u * slip;
                (
                    Vector3::new(lambda_t.x, lambda_t.y, normal),
                    Vector3::new(c_t.x, c_t.y, c_n),
                )
            }
            ContactModel::Lcp => {
                // Axis 0 on a facet; axis 1 on a facet or sticking.
                let sigma = Vector2::new(u.x.signum(), u.y.signum());
                let second_slides = rng.random_range(0.0..1.0) < 0.5;
                let l1 = if second_slides {
                    -mu * normal * sigma.y
                } else {
                    rng.random_range(-0.7..0.7) * mu * normal
                };
                let c1 = if second_slides { slip * sigma.y } else { 0.0 };
                (
                    Vector3::new(-mu * normal * sigma.x, l1, normal),
                    Vector3::new(slip * sigma.x, c1, 0.0),
                )
            }
            ContactModel::Raisim => {
                // On the cone's boundary, c_T opposing d = λ_T + μ² λ_N G_NT / G_NN (eq. 21).
                let lambda_t = -u * (mu * normal);
                let g_nt = Vector2::new(block[(2, 0)], block[(2, 1)]);
                let d = lambda_t + g_nt * (mu * mu * normal / block[(2, 2)]);
                let c_t = -d / d.norm() * slip;
                (
                    Vector3::new(lambda_t.x, lambda_t.y, normal),
                    Vector3::new(c_t.x, c_t.y, 0.0),
                )
            }
        },
    }
}

/// The solver of the finite-difference reference for the answers of `id`.
fn reference_of(id: SolverId) -> SolverId {
    match id {
        SolverId::CcpIpm => SolverId::CcpAdmm,
        SolverId::LcpQp => SolverId::LcpPgs,
        other => other,
    }
}

/// The solver at its tightest tolerance.
fn tight(id: SolverId) -> Box<dyn ContactSolver> {
    let (eps_rel, max_iter) = match id {
        // Clarabel's tightest tolerance (1e-12) is reached from eps_rel = 1e-9; lcp-qp's
        // sequence of QPs stalls there, not at 1e-8.
        SolverId::CcpIpm => (1e-8, 200),
        SolverId::LcpQp => (1e-8, 200),
        // RaiSim's bisection on the friction angle stops at 1e-12 rad.
        SolverId::Raisim => (1e-11, 200_000),
        _ => (1e-13, 200_000),
    };
    let mut spec = SolverSpec::new(id);
    spec.settings = SolverSettings {
        eps_rel,
        max_iter,
        eps_step: 0.0,
        ..SolverSettings::default()
    };
    spec.build().expect("a built-in solver")
}

fn relative_error(implicit: &DMatrix<f64>, reference: &DMatrix<f64>, natural: f64) -> f64 {
    (implicit - reference).amax() / reference.amax().max(natural)
}

struct Case {
    problem: ContactProblem,
    lambda: DVector<f64>,
    derivative: SolutionDerivative,
}

fn solved(
    id: SolverId,
    problem: ContactProblem,
    expected: &[ContactMode],
    case: &str,
    settings: &DerivativeSettings,
) -> Case {
    let mut solver = tight(id);
    let report = solver.solve(&problem, None).expect("solvable");
    assert!(report.status.is_converged(), "{case}: {}", report.status);
    let derivative = differentiate_report(&problem, solver.model(), &report, settings)
        .unwrap_or_else(|e| panic!("{case}: {e}"));
    let given = differentiate_report(&problem, solver.model(), &report, &Default::default())
        .unwrap_or_else(|e| panic!("{case}: {e}"));
    assert!(
        derivative.residual() <= given.residual(),
        "{case}: polishing worsened the answer"
    );
    let modes: Vec<ContactMode> = derivative.modes().iter().map(|m| m.mode).collect();
    assert_eq!(modes, expected, "{case}: modes");
    assert!(
        derivative.modes().iter().all(|m| !m.at_boundary()),
        "{case}: no boundary"
    );
    Case {
        lambda: report.lambda,
        problem,
        derivative,
    }
}

/// What [`check_against_finite_differences`] compares.
#[derive(Clone, Copy, PartialEq)]
enum Scope {
    /// Every Jacobian (`G`'s too) and two random directions.
    All,
    /// Every Jacobian but `G`'s, and two random directions.
    WithoutDelassus,
    /// The Jacobians with respect to `g`, `μ` and `R`.
    JacobiansOnly,
}

/// Every Jacobian and a random direction, against finite differences of `reference`'s
/// answers (`fd`'s step and stencil), to `tolerance`.
fn check_against_finite_differences(
    case: &Case,
    reference: SolverId,
    fd: &FiniteDifferences,
    tolerance: f64,
    label: &str,
    scope: Scope,
) -> f64 {
    let mut solver = tight(reference);
    let p = &case.problem;
    let stiffest = (0..p.dim()).fold(0.0_f64, |m, k| m.max(p.delassus()[(k, k)]));
    let lambda_scale = case.lambda.amax().max(p.velocity_scale() / stiffest);
    let per_g = lambda_scale / p.velocity_scale();
    let per_mu = lambda_scale / p.mu().amax();
    let per_delassus = lambda_scale * per_g;
    let s = solver.as_mut();
    let mut worst: f64 = 0.0;
    let mut compare = |name: &str, implicit: DMatrix<f64>, expected: DMatrix<f64>, natural: f64| {
        let e = relative_error(&implicit, &expected, natural);
        assert!(
            e <= tolerance,
            "{label}: {name}, differences of {reference}: relative error {e:.2e}"
        );
        worst = worst.max(e);
    };
    let d = &case.derivative;
    compare(
        "dλ/dg",
        d.jacobian_free_velocity().unwrap(),
        fd.jacobian_free_velocity(s, p).unwrap(),
        per_g,
    );
    compare(
        "dλ/dμ",
        d.jacobian_mu().unwrap(),
        fd.jacobian_mu(s, p).unwrap(),
        per_mu,
    );
    if p.compliance().is_some() {
        compare(
            "dλ/dR",
            d.jacobian_compliance().unwrap(),
            fd.jacobian_compliance(s, p).unwrap(),
            per_delassus,
        );
    }
    if scope == Scope::All {
        compare(
            "dλ/dG",
            d.jacobian_delassus_symmetric().unwrap(),
            fd.jacobian_delassus_symmetric(s, p).unwrap(),
            per_delassus,
        );
    }
    for k in 0..if scope == Scope::JacobiansOnly { 0 } else { 2 } {
        let direction = fd.random_direction(p, k);
        let implicit = d.jvp(&direction).unwrap();
        let reference = fd.jvp(s, p, &direction).unwrap();
        compare(
            "random direction",
            DMatrix::from_column_slice(implicit.len(), 1, implicit.as_slice()),
            DMatrix::from_column_slice(reference.len(), 1, reference.as_slice()),
            lambda_scale,
        );
        // The VJP is the JVP's transpose: wᵀ (J d) = ⟨vjp(w), d⟩.
        let w = DVector::from_fn(p.dim(), |i, _| ((i * 7 + 3) % 5) as f64 - 2.0);
        let bar = d.vjp(&w).unwrap();
        let mut pairing = bar
            .free_velocity
            .dot(direction.free_velocity.as_ref().unwrap())
            + bar.mu.dot(direction.mu.as_ref().unwrap())
            + bar.delassus.dot(direction.delassus.as_ref().unwrap());
        if let Some(dr) = &direction.compliance {
            pairing += bar.compliance.dot(dr);
        }
        let forward = w.dot(&implicit);
        assert!(
            (pairing - forward).abs() <= 1e-12 * (1.0 + forward.abs()),
            "{label}: VJP {pairing} against JVP {forward}"
        );
    }
    worst
}

fn mode_patterns(n: usize, rng: &mut ChaCha8Rng) -> Vec<(String, Vec<ContactMode>)> {
    let mixed = (0..n)
        .map(|i| match (i + rng.random_range(0..3)) % 3 {
            0 => ContactMode::TakeOff,
            1 => ContactMode::Stick,
            _ => ContactMode::Slide,
        })
        .collect();
    vec![
        ("stick".into(), vec![ContactMode::Stick; n]),
        ("slide".into(), vec![ContactMode::Slide; n]),
        ("mixed".into(), mixed),
    ]
}

fn model_of(id: SolverId) -> ContactModel {
    id.model()
}

/// Central differences, second order, of answers accurate to `1e-13`.
const TIGHT_DIFFERENCES: FiniteDifferences = FiniteDifferences {
    relative_step: 1e-5,
    seed: 7,
    fourth_order: false,
};

/// The agreement asked against an interior point's own differences (module docs).
const OWN: f64 = 1e-3;

/// For an interior point's own answers: a larger step and the fourth-order stencil.
const INTERIOR_POINT_DIFFERENCES: FiniteDifferences = FiniteDifferences {
    relative_step: 1e-2,
    seed: 7,
    fourth_order: true,
};

/// `tolerance` against the reference differences, the derivative taken with `settings`.
fn check_solver(id: SolverId, tolerance: f64, settings: &DerivativeSettings) {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let (mut worst, mut worst_own): (f64, f64) = (0.0, 0.0);
    let interior_point = reference_of(id) != id;
    for (seed, n) in [(1, 1), (2, 2), (3, 5), (4, 20)] {
        for (name, modes) in mode_patterns(n, &mut rng) {
            for compliance in [false, true] {
                let label = format!("{id}, {n} contacts, {name}, R: {compliance}, seed {seed}");
                let problem = planted(model_of(id), seed, &modes, compliance);
                let case = solved(id, problem, &modes, &label, settings);
                let (fd, reference) = (&TIGHT_DIFFERENCES, reference_of(id));
                let scope = if n <= 2 {
                    Scope::All
                } else {
                    Scope::WithoutDelassus
                };
                let e = check_against_finite_differences(
                    &case, reference, fd, tolerance, &label, scope,
                );
                worst = worst.max(e);
                if interior_point && n <= 5 {
                    let own = &INTERIOR_POINT_DIFFERENCES;
                    let scope = Scope::JacobiansOnly;
                    let e = check_against_finite_differences(&case, id, own, OWN, &label, scope);
                    worst_own = worst_own.max(e);
                }
            }
        }
    }
    println!(
        "{id}: worst relative error against differences of {}: {worst:.2e}; of its own: {worst_own:.2e}",
        reference_of(id)
    );
}

#[test]
fn ncp_admm_derivatives_match_finite_differences() {
    check_solver(SolverId::NcpAdmm, RELATIVE, &DerivativeSettings::default());
}

#[test]
fn ccp_admm_derivatives_match_finite_differences() {
    check_solver(SolverId::CcpAdmm, RELATIVE, &DerivativeSettings::default());
}

#[test]
fn ccp_ipm_derivatives_match_finite_differences() {
    check_solver(SolverId::CcpIpm, 5e-6, &DerivativeSettings::default());
}

#[test]
fn ccp_ipm_derivatives_of_the_polished_answer_match_finite_differences() {
    let polished = DerivativeSettings {
        polish_steps: 3,
        ..DerivativeSettings::default()
    };
    // Measured 6.2e-9, as ccp-admm's answers: the polished answer is the exact one.
    check_solver(SolverId::CcpIpm, 2e-8, &polished);
}

#[test]
fn lcp_qp_derivatives_match_finite_differences() {
    check_solver(SolverId::LcpQp, RELATIVE, &DerivativeSettings::default());
}

#[test]
fn raisim_derivatives_match_finite_differences() {
    check_solver(SolverId::Raisim, RELATIVE, &DerivativeSettings::default());
}

#[test]
fn an_unconverged_solve_is_refused_with_its_status() {
    let modes = vec![ContactMode::Slide; 5];
    let problem = planted(ContactModel::Ncp, 21, &modes, false);
    let mut spec = SolverSpec::new(SolverId::NcpAdmm);
    spec.settings.max_iter = 2;
    let mut solver = spec.build().unwrap();
    let report = solver.solve(&problem, None).unwrap();
    assert!(!report.status.is_converged());
    let err = differentiate_report(&problem, ContactModel::Ncp, &report, &Default::default());
    assert!(
        matches!(&err, Err(DerivativeError::NotConverged { status }) if status.contains("max")),
        "{err:?}"
    );
}

#[test]
fn an_answer_that_is_not_a_solution_is_refused() {
    let modes = vec![ContactMode::Stick; 2];
    let problem = planted(ContactModel::Ncp, 22, &modes, false);
    let wrong = DVector::from_element(6, 0.3);
    let err = differentiate(&problem, ContactModel::Ncp, &wrong, &Default::default());
    match err {
        Err(DerivativeError::NotASolution {
            residual, limit, ..
        }) => {
            assert!(residual > limit && limit == DerivativeSettings::default().max_residual);
        }
        other => panic!("{other:?}"),
    }
    let nan = DVector::from_element(6, f64::NAN);
    let err = differentiate(&problem, ContactModel::Ncp, &nan, &Default::default());
    assert!(matches!(
        err,
        Err(DerivativeError::NonFinite {
            field: "lambda",
            index: 0
        })
    ));
}

/// One contact with `G = I`, answer `λ` and velocity `c` (so `g = c − λ`).
fn one_contact(mu: f64, lambda: [f64; 3], c: [f64; 3]) -> (ContactProblem, DVector<f64>) {
    let (l, c) = (
        DVector::from_row_slice(&lambda),
        DVector::from_row_slice(&c),
    );
    let problem = ContactProblem::new(
        DMatrix::identity(3, 3),
        &c - &l,
        DVector::from_element(1, mu),
        None,
    )
    .unwrap();
    (problem, l)
}

#[test]
fn mode_boundaries_are_flagged_and_take_the_documented_side() {
    // Weakly active: λ = 0 and c_N = 0: take-off (dλ = 0), on the boundary with stick.
    let (p, l) = one_contact(0.5, [0.0; 3], [0.0, 0.0, 0.0]);
    let d = differentiate(&p, ContactModel::Ncp, &l, &Default::default()).unwrap();
    assert_eq!(d.modes()[0].mode, ContactMode::TakeOff);
    assert_eq!(d.modes()[0].boundary_with, Some(ContactMode::Stick));
    assert_eq!(d.jacobian_free_velocity().unwrap(), DMatrix::zeros(3, 3));
    // Sticking on the cone's edge (‖λ_T‖ = μ λ_N, c = 0): stick, on the boundary with
    // slide; dλ = −G⁻¹ dg = −dg.
    for model in [ContactModel::Ncp, ContactModel::Ccp, ContactModel::Raisim] {
        let (p, l) = one_contact(0.5, [0.5, 0.0, 1.0], [0.0; 3]);
        let d = differentiate(&p, model, &l, &Default::default()).unwrap();
        assert_eq!(d.modes()[0].mode, ContactMode::Stick, "{model:?}");
        assert_eq!(
            d.modes()[0].boundary_with,
            Some(ContactMode::Slide),
            "{model:?}"
        );
        let j = d.jacobian_free_velocity().unwrap();
        assert!((j + DMatrix::identity(3, 3)).amax() < 1e-15, "{model:?}");
    }
    // The pyramid's edge: one axis on its facet, not slipping.
    let (p, l) = one_contact(0.5, [0.5, 0.1, 1.0], [0.0; 3]);
    let d = differentiate(&p, ContactModel::Lcp, &l, &Default::default()).unwrap();
    assert_eq!(d.modes()[0].boundary_with, Some(ContactMode::Slide));
    // Frictionless and not slipping: slide without a direction, ∂λ/∂μ = 0 (finite).
    let (p, l) = one_contact(0.0, [0.0, 0.0, 1.0], [0.0; 3]);
    let d = differentiate(&p, ContactModel::Ncp, &l, &Default::default()).unwrap();
    assert_eq!(d.modes()[0].mode, ContactMode::Slide);
    assert_eq!(d.modes()[0].boundary_with, Some(ContactMode::Stick));
    assert_eq!(d.jacobian_mu().unwrap(), DMatrix::zeros(3, 1));
    // Clear modes carry no flag.
    let (p, l) = one_contact(0.5, [-0.5, 0.0, 1.0], [0.3, 0.0, 0.0]);
    let d = differentiate(&p, ContactModel::Ncp, &l, &Default::default()).unwrap();
    assert_eq!(d.modes()[0].mode, ContactMode::Slide);
    assert!(!d.modes()[0].at_boundary());
}

#[test]
fn a_vanishing_raisim_direction_is_not_differentiable() {
    // λ_T = −β G_NT: d = λ_T + μ² λ_N G_NT / G_NN = 0, with c_T ≠ 0.
    // With G_NN = 1, G_NT = (0.2, 0) and λ_N = 1: β = μ², λ_T = (−0.2 μ², 0) on the cone's
    // boundary when 0.2 μ² = μ, μ = 5.
    let mut g = DMatrix::identity(3, 3);
    g[(0, 2)] = 0.2;
    g[(2, 0)] = 0.2;
    let mu = 5.0;
    let lambda = DVector::from_row_slice(&[-0.2 * mu * mu, 0.0, 1.0]);
    let c = DVector::from_row_slice(&[0.3, 0.0, 0.0]);
    let free = &c - &g * &lambda;
    let problem = ContactProblem::new(g, free, DVector::from_element(1, mu), None).unwrap();
    let err = differentiate(&problem, ContactModel::Raisim, &lambda, &Default::default());
    match err {
        Err(DerivativeError::NotDifferentiable { contact: 0, reason }) => {
            assert!(reason.contains("vanishes"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn redundant_contacts_get_the_least_norm_derivative() {
    // A cube on its four bottom corners: G (12 × 12) has rank 6.
    let problem =
        contactbench::problem::generators::cube_on_plane(1.0, 0.1, 0.8, 0.0, 1e-3).unwrap();
    let mut solver = tight(SolverId::NcpAdmm);
    let report = solver.solve(&problem, None).unwrap();
    assert!(report.status.is_converged());
    let d =
        differentiate_report(&problem, ContactModel::Ncp, &report, &Default::default()).unwrap();
    assert!(d.modes().iter().all(|m| m.mode == ContactMode::Stick));
    assert_eq!(d.method(), LinearMethod::LeastNorm);
    assert_eq!(d.rank(), (6, 12));
    // A change of g that the cube can follow (a change of its free twist, dg = J dv):
    // every contact keeps sticking, G dλ = −dg exactly, and dλ is the least-norm one
    // (orthogonal to the null space of G).
    let jacobian = problem.jacobian().unwrap();
    let dv = DVector::from_row_slice(&[0.1, -0.2, 0.3, 0.5, -0.4, 0.2]);
    let dg = jacobian * dv;
    let direction = ProblemDirection {
        free_velocity: Some(dg.clone()),
        ..Default::default()
    };
    let dl = d.jvp(&direction).unwrap();
    let g = problem.delassus();
    assert!((g * &dl + &dg).amax() < 1e-10 * dg.amax());
    let null = g.clone().symmetric_eigen();
    for (k, value) in null.eigenvalues.iter().enumerate() {
        if *value < 1e-10 * null.eigenvalues.amax() {
            assert!(null.eigenvectors.column(k).dot(&dl).abs() < 1e-10 * dl.amax());
        }
    }
}

#[test]
fn bad_directions_and_settings_are_refused() {
    let (p, l) = one_contact(0.5, [0.1, 0.0, 1.0], [0.0; 3]);
    let d = differentiate(&p, ContactModel::Ncp, &l, &Default::default()).unwrap();
    let mut dg = DVector::zeros(3);
    dg[1] = f64::INFINITY;
    let err = d.jvp(&ProblemDirection {
        free_velocity: Some(dg),
        ..Default::default()
    });
    assert!(matches!(
        err,
        Err(DerivativeError::NonFinite {
            field: "dg",
            index: 1
        })
    ));
    let err = d.vjp(&DVector::zeros(6));
    assert!(matches!(err, Err(DerivativeError::Size { field: "w", .. })));
    let bad = DerivativeSettings {
        mode_tolerance: 0.0,
        ..Default::default()
    };
    assert!(matches!(
        differentiate(&p, ContactModel::Ncp, &l, &bad),
        Err(DerivativeError::InvalidSetting {
            field: "mode_tolerance",
            ..
        })
    ));
}
