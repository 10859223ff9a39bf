//! The factorized Delassus operator `J M⁻¹ Jᵀ` against the dense `G`: the same products,
//! diagonal blocks and shifted solves on piles of cubes and on Solo-12 at random
//! configurations, the same ADMM answers on both, the simulator's two forms of one step's
//! problem (pile, Solo-12, Talos), and typed errors for bad input.

use crate::common::dynamics::{random_configuration, rng};
use crate::common::solvers::{build, settings};
use contactbench::dynamics::{self, point_jacobian_world, Data};
use contactbench::model::robots::load_robot;
use contactbench::problem::build::DelassusForm;
use contactbench::problem::generators::box_pile;
use contactbench::problem::{
    ContactProblem, Delassus, FactorizedDelassus, OperatorPattern, ProblemError,
};
use contactbench::simulation::{Scenario, Simulator, World};
use contactbench::solvers::SolverId;
use std::sync::Arc;

use nalgebra::{DMatrix, DVector};
use nalgebra_sparse::{CooMatrix, CscMatrix, CsrMatrix};
use rand::RngExt;

/// Relative gap `‖a − b‖∞ / ‖b‖∞`.
fn relative(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
    (a - b).amax() / b.amax()
}

fn sparse_rows(a: &DMatrix<f64>) -> CsrMatrix<f64> {
    CsrMatrix::from(&CooMatrix::from(a))
}

fn sparse_columns(a: &DMatrix<f64>) -> CscMatrix<f64> {
    CscMatrix::from(&CooMatrix::from(a))
}

/// `G = J M⁻¹ Jᵀ` by dense linear algebra, the reference.
fn dense_delassus(j: &DMatrix<f64>, m: &DMatrix<f64>) -> DMatrix<f64> {
    let minv_jt = m.clone().cholesky().map(|c| c.solve(&j.transpose()));
    let g = j * minv_jt.unwrap_or_else(|| DMatrix::zeros(m.nrows(), j.nrows()));
    (&g + g.transpose()) * 0.5
}

/// Solo-12 at a seeded random configuration with `contacts` points on random bodies:
/// `(J, M)` in world axes.
fn solo_contacts(seed: u64, contacts: usize) -> (DMatrix<f64>, DMatrix<f64>) {
    let model = load_robot("solo12").expect("solo12 in the robot cache");
    let mut data = Data::new(&model);
    let mut r = rng(seed);
    let q = random_configuration(&model, &mut r);
    let m = dynamics::crba(&model, &mut data, &q).expect("crba").clone();
    dynamics::forward_kinematics(&model, &mut data, &q).expect("kinematics");
    let nv = model.nv();
    let mut j = DMatrix::zeros(3 * contacts, nv);
    for i in 0..contacts {
        let joint = r.random_range(1..model.njoints());
        let point = data.joint_position(joint)
            + nalgebra::Vector3::from_fn(|_, _| r.random_range(-0.1..0.1));
        let rows = point_jacobian_world(&model, &data, joint, &point).expect("jacobian");
        j.view_mut((3 * i, 0), (3, nv)).copy_from(&rows);
    }
    (j, m)
}

/// The four operations on the operator of `(J, M)` against the dense `G`, each within
/// `tolerance` relative.
fn assert_operator_matches_dense(j: &DMatrix<f64>, m: &DMatrix<f64>, tolerance: f64) {
    let operator = FactorizedDelassus::new(sparse_rows(j), sparse_columns(m)).expect("valid");
    let factorized = Delassus::Factorized(operator);
    let g = dense_delassus(j, m);
    let dense = Delassus::Dense(g.clone());
    let mut r = rng(11);
    let x = DMatrix::from_fn(g.nrows(), 1, |_, _| r.random_range(-1.0..1.0));
    let xv = DVector::from_column_slice(x.as_slice());
    let apply = |d: &Delassus| DMatrix::from_column_slice(g.nrows(), 1, d.apply(&xv).as_slice());
    assert!(relative(&apply(&factorized), &apply(&dense)) < tolerance);
    for i in 0..g.nrows() / 3 {
        let a = factorized.diagonal_block(i);
        let b = dense.diagonal_block(i);
        assert!((a - b).amax() <= tolerance * b.amax(), "block {i}");
    }
    assert!(relative(&factorized.to_dense(), &g) < tolerance);
    // Shifts from 1e-3 to 1 times the largest entry of G: the ADMMs' range of ρ.
    for shift in [1e-3, 1e-1, 1.0] {
        let d = DVector::from_element(g.nrows(), shift * g.amax());
        let a = factorized.shifted(&d).expect("definite").solve(&xv);
        let b = dense.shifted(&d).expect("definite").solve(&xv);
        assert!((&a - &b).amax() <= tolerance * b.amax(), "shift {shift}");
    }
}

#[test]
fn operator_and_dense_g_agree_on_a_pile_of_cubes() {
    let pile = box_pile(2, 3, 0.05, 0.4, 1e-3).expect("pile");
    let Delassus::Factorized(op) = pile.operator() else {
        panic!("a pile is factorized")
    };
    let j = nalgebra_sparse::convert::serial::convert_csr_dense(op.jacobian());
    let m = nalgebra_sparse::convert::serial::convert_csc_dense(op.mass());
    assert_operator_matches_dense(&j, &m, 1e-12);
}

#[test]
fn operator_and_dense_g_agree_on_solo_at_random_configurations() {
    for seed in 0..3 {
        let (j, m) = solo_contacts(seed, 6);
        assert_operator_matches_dense(&j, &m, 1e-12);
    }
}

#[test]
fn admm_solvers_give_the_same_answers_on_both_operators() {
    let factorized = box_pile(2, 2, 0.05, 0.4, 1e-3).expect("pile");
    let dense = ContactProblem::from_assembly(
        factorized.delassus().clone(),
        factorized.free_velocity().clone(),
        factorized.mu().clone(),
        None,
    )
    .expect("dense");
    for id in [SolverId::NcpAdmm, SolverId::CcpAdmm] {
        let on = |p: &ContactProblem| {
            let mut solver = build(id, &settings(1e-8, 2000));
            solver.solve(p, None).expect("solve")
        };
        let (a, b) = (on(&factorized), on(&dense));
        assert!(a.status.is_converged() && b.status.is_converged(), "{id}");
        let gap = (&a.lambda - &b.lambda).amax() / b.lambda.amax();
        assert!(gap < 1e-6, "{id}: relative gap {gap:e}");
    }
}

/// A `3n × nv` `J` whose contacts' three rows share `per_contact` random columns, as the
/// simulator lays out its rows on the contacts' supports, with random values.
fn contact_rows(seed: u64, n: usize, nv: usize, per_contact: usize) -> CsrMatrix<f64> {
    let mut r = rng(seed);
    let (mut offsets, mut indices, mut values) = (vec![0], Vec::new(), Vec::new());
    for _ in 0..n {
        let mut columns: Vec<usize> = (0..nv).collect();
        for k in 0..per_contact {
            let pick = r.random_range(k..nv);
            columns.swap(k, pick);
        }
        columns.truncate(per_contact);
        columns.sort_unstable();
        for _ in 0..3 {
            indices.extend_from_slice(&columns);
            values.extend((0..per_contact).map(|_| r.random_range(-1.0..1.0)));
            offsets.push(indices.len());
        }
    }
    CsrMatrix::try_from_csr_data(3 * n, nv, offsets, indices, values).expect("valid rows")
}

/// `(G + D)⁻¹ b` and `G x` on an operator.
fn solve_and_apply(
    op: FactorizedDelassus,
    d: &DVector<f64>,
    b: &DVector<f64>,
) -> [DVector<f64>; 2] {
    let operator = Delassus::Factorized(op);
    let solved = operator.shifted(d).expect("definite").solve(b);
    [solved, operator.apply(b)]
}

#[test]
fn a_kept_operator_pattern_factors_as_a_fresh_one_and_a_new_contact_set_gets_its_own() {
    let (n, nv) = (10, 24);
    let mut r = rng(5);
    let mass: Vec<f64> = (0..nv).map(|_| r.random_range(0.5..2.0)).collect();
    let shift = DVector::from_fn(3 * n, |_, _| r.random_range(0.01..1.0));
    let b = DVector::from_fn(3 * n, |_, _| r.random_range(-1.0..1.0));
    let first = contact_rows(1, n, nv, 6);
    let pattern = Arc::new(OperatorPattern::of(first.pattern()));
    // The first shifted solve keeps the shifted matrix's structure in the pattern.
    let op = FactorizedDelassus::with_diagonal_mass_on(&pattern, first.values().to_vec(), &mass)
        .expect("valid");
    solve_and_apply(op, &shift, &b);
    // The next step: the same contacts, new values and masses.
    let values: Vec<f64> = first
        .values()
        .iter()
        .map(|_| r.random_range(-1.0..1.0))
        .collect();
    let mass: Vec<f64> = mass.iter().map(|m| m * r.random_range(0.5..2.0)).collect();
    let next = CsrMatrix::try_from_pattern_and_values(first.pattern().clone(), values.clone())
        .expect("same pattern");
    let kept = FactorizedDelassus::with_diagonal_mass_on(&pattern, values, &mass).expect("valid");
    let fresh = FactorizedDelassus::with_diagonal_mass(next.clone(), &mass).expect("valid");
    assert_eq!(
        solve_and_apply(kept, &shift, &b),
        solve_and_apply(fresh, &shift, &b)
    );
    // Against dense linear algebra, for the kept pattern and for a new contact set.
    let inverse_mass =
        DMatrix::from_diagonal(&DVector::from_iterator(nv, mass.iter().map(|m| 1.0 / m)));
    let changed = contact_rows(3, n + 2, nv, 6);
    for j in [next, changed] {
        let dense_j = nalgebra_sparse::convert::serial::convert_csr_dense(&j);
        let g = &dense_j * &inverse_mass * dense_j.transpose();
        let dim = j.nrows();
        let d = DVector::from_fn(dim, |k, _| shift[k % shift.len()]);
        let x = DVector::from_fn(dim, |k, _| b[k % b.len()]);
        let reference = (&g + DMatrix::from_diagonal(&d))
            .cholesky()
            .expect("SPD")
            .solve(&x);
        let own = Arc::new(OperatorPattern::of(j.pattern()));
        let op = FactorizedDelassus::with_diagonal_mass_on(&own, j.values().to_vec(), &mass)
            .expect("valid");
        let [solved, applied] = solve_and_apply(op, &d, &x);
        assert!((&solved - &reference).amax() <= 1e-12 * reference.amax());
        assert!((&applied - &g * &x).amax() <= 1e-12 * (&g * &x).amax());
    }
    // Values that do not fit the pattern are refused.
    let short = FactorizedDelassus::with_diagonal_mass_on(&pattern, vec![1.0; 3], &mass);
    assert!(matches!(short, Err(ProblemError::Size { field: "J", .. })));
}

#[test]
fn bad_operators_get_typed_errors() {
    let m = DMatrix::identity(6, 6);
    let j = DMatrix::from_element(3, 6, 1.0);
    let wrong = FactorizedDelassus::new(sparse_rows(&DMatrix::zeros(3, 5)), sparse_columns(&m));
    assert!(matches!(wrong, Err(ProblemError::Size { field: "J", .. })));
    let mut nan = j.clone();
    nan[(1, 2)] = f64::NAN;
    let nan = FactorizedDelassus::new(sparse_rows(&nan), sparse_columns(&m));
    assert!(matches!(
        nan,
        Err(ProblemError::NonFinite { field: "J", .. })
    ));
    let indefinite = FactorizedDelassus::new(sparse_rows(&j), sparse_columns(&(-&m)));
    assert!(matches!(
        indefinite,
        Err(ProblemError::NotPositiveDefinite { field: "M", .. })
    ));
    let operator = FactorizedDelassus::new(sparse_rows(&j), sparse_columns(&m)).expect("valid");
    let shift = Delassus::Factorized(operator.clone()).shifted(&DVector::from_element(3, 0.0));
    assert!(matches!(
        shift,
        Err(ProblemError::Negative { field: "D", .. })
    ));
    let sizes = ContactProblem::from_operator(
        operator,
        DVector::zeros(6),
        DVector::from_element(1, 0.5),
        None,
    );
    assert!(matches!(sizes, Err(ProblemError::Size { field: "g", .. })));
}

/// The first step's problem of `scenario` (in `scenarios/`, with `overrides`) assembled
/// with the dense and with the factorized operator, from the same initial state.
fn first_step_problems(scenario: &str, overrides: &[&str]) -> (ContactProblem, ContactProblem) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(scenario);
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let scenario = Scenario::load(&path, &overrides).expect("shipped scenario");
    let problem_in = |form| {
        let world = World::build(&scenario).expect("world");
        let solver = build(SolverId::NcpAdmm, &settings(1e-6, 1000));
        let mut sim = Simulator::new(
            world,
            solver,
            scenario.step_parameters(),
            scenario.external_forces.clone(),
        );
        sim.set_delassus_form(form);
        sim.advance().expect("step");
        let (problem, _, _) = sim.last_solution().expect("contacts at the first step");
        problem.clone()
    };
    (
        problem_in(DelassusForm::Dense),
        problem_in(DelassusForm::Factorized),
    )
}

/// Products, diagonal blocks and shifted solves of the two forms of one step's problem
/// within `1e-12` relative, and the same `g`.
fn assert_forms_agree(dense: &ContactProblem, factorized: &ContactProblem) {
    assert!(matches!(dense.operator(), Delassus::Dense(_)));
    assert!(matches!(factorized.operator(), Delassus::Factorized(_)));
    assert_eq!(dense.free_velocity(), factorized.free_velocity());
    let g = dense.delassus();
    let mut r = rng(5);
    let x = DVector::from_fn(g.nrows(), |_, _| r.random_range(-1.0..1.0));
    let (a, b) = (factorized.operator().apply(&x), dense.operator().apply(&x));
    assert!((&a - &b).amax() <= 1e-12 * b.amax(), "G x");
    for i in 0..dense.num_contacts() {
        let (a, b) = (factorized.diagonal_block(i), dense.diagonal_block(i));
        assert!((a - b).amax() <= 1e-12 * b.amax(), "block {i}");
    }
    assert!(relative(&factorized.operator().to_dense(), g) < 1e-12);
    for shift in [1e-3, 1e-1, 1.0] {
        let d = DVector::from_element(g.nrows(), shift * g.amax());
        let a = factorized
            .operator()
            .shifted(&d)
            .expect("definite")
            .solve(&x);
        let b = dense.operator().shifted(&d).expect("definite").solve(&x);
        assert!((&a - &b).amax() <= 1e-12 * b.amax(), "shift {shift}");
    }
}

#[test]
fn the_simulators_two_operators_agree_on_a_pile_of_cubes() {
    let (dense, factorized) = first_step_problems(
        "pile_columns.yaml",
        &["world.generate.columns={nx: 2, ny: 2, height: 3}"],
    );
    assert!(
        dense.num_contacts() >= 24,
        "{} contacts",
        dense.num_contacts()
    );
    assert_forms_agree(&dense, &factorized);
}

#[test]
fn the_simulators_two_operators_agree_on_solo_and_talos() {
    for scenario in ["solo_standing.yaml", "talos_push.yaml"] {
        let (dense, factorized) = first_step_problems(scenario, &[]);
        assert_forms_agree(&dense, &factorized);
    }
}
