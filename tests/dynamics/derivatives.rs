//! Analytical derivatives of the dynamics against central finite differences, on the three
//! robots and the mixed-joint model at seeded random states: `∂τ/∂q`, `∂τ/∂v` of RNEA (and
//! its `τ` against `rnea`), `∂(wᵀ M w)/∂q`, the point force and point velocity
//! derivatives, and the Lie-group integration's `∂q⁺/∂q`, `∂q⁺/∂v`. Tangent changes are
//! `q ⊕ h e_k` (the free flyer's in its body frame).

use crate::common::dynamics as dynamics_support;

use contactbench::dynamics::derivatives::{
    gravity_derivatives_into, mass_quadratic_gradient, point_force_derivative,
    point_velocity_derivative, rnea_derivatives, world_twists, Anchor, DerivativeWorkspace,
};
use contactbench::dynamics::lie_derivatives::integrate_derivatives;
use contactbench::dynamics::{self, Data};
use contactbench::model::{Model, RootJoint};
use dynamics_support::*;
use nalgebra::{DMatrix, DVector, Matrix3, Matrix3xX, Rotation3, Vector3};

const ROBOTS: [&str; 4] = ["solo12", "talos", "allegro", "mixed"];
/// Central differences with this step agree to about `h²` and `ε / h`.
const H: f64 = 1e-6;
/// The agreement asked, relative to the largest entry.
const TOL: f64 = 1e-6;

fn load_robot(name: &str) -> Model {
    if name == "mixed" {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/model_mixed.urdf");
        Model::from_urdf(path, RootJoint::FreeFlyer).unwrap()
    } else {
        contactbench::model::robots::load_robot(name).unwrap()
    }
}

fn tangent_step(model: &Model, q: &DVector<f64>, k: usize, h: f64) -> DVector<f64> {
    let mut e = DVector::zeros(model.nv());
    e[k] = h;
    dynamics::integrate(model, q, &e, 1.0).unwrap()
}

/// Central differences of `f` along the tangent directions of `q` (one column each).
fn fd_q(
    model: &Model,
    q: &DVector<f64>,
    mut f: impl FnMut(&DVector<f64>) -> DVector<f64>,
) -> DMatrix<f64> {
    let columns: Vec<DVector<f64>> = (0..model.nv())
        .map(|k| (f(&tangent_step(model, q, k, H)) - f(&tangent_step(model, q, k, -H))) / (2.0 * H))
        .collect();
    DMatrix::from_columns(&columns)
}

#[test]
fn rnea_derivatives_match_finite_differences() {
    for robot in ROBOTS {
        let model = load_robot(robot);
        let mut data = Data::new(&model);
        let mut ws = DerivativeWorkspace::new(&model);
        let mut r = rng(3);
        for _ in 0..2 {
            let q = random_configuration(&model, &mut r);
            let v = random_vector(model.nv(), 1.0, &mut r);
            let a = random_vector(model.nv(), 2.0, &mut r);
            let d = rnea_derivatives(&model, &mut data, &mut ws, &q, &v, &a).unwrap();
            let tau = dynamics::rnea(&model, &mut data, &q, &v, &a, None)
                .unwrap()
                .clone();
            assert_close_vec(&format!("{robot}: τ"), &d.tau, &tau, 1e-12);
            let mut rnea_at = |q: &DVector<f64>, v: &DVector<f64>| {
                dynamics::rnea(&model, &mut data, q, v, &a, None)
                    .unwrap()
                    .clone()
            };
            let dq = fd_q(&model, &q, |q| rnea_at(q, &v));
            assert_close(&format!("{robot}: ∂τ/∂q"), &d.dtau_dq, &dq, TOL);
            let columns: Vec<DVector<f64>> = (0..model.nv())
                .map(|k| {
                    let mut e = DVector::zeros(model.nv());
                    e[k] = H;
                    (rnea_at(&q, &(&v + &e)) - rnea_at(&q, &(&v - &e))) / (2.0 * H)
                })
                .collect();
            assert_close(
                &format!("{robot}: ∂τ/∂v"),
                &d.dtau_dv,
                &DMatrix::from_columns(&columns),
                TOL,
            );
        }
    }
}

#[test]
fn gravity_derivatives_from_a_moving_state_equal_rnea_derivatives_at_rest() {
    // g(q) and ∂g/∂q read from the composites of RNEA's derivatives at some (v, a): the
    // same as RNEA's own at v = a = 0 (whose ∂τ/∂q the test above checks).
    for robot in ROBOTS {
        let model = load_robot(robot);
        let mut data = Data::new(&model);
        let mut ws = DerivativeWorkspace::new(&model);
        let mut r = rng(4);
        let q = random_configuration(&model, &mut r);
        let zero = DVector::zeros(model.nv());
        let at_rest = rnea_derivatives(&model, &mut data, &mut ws, &q, &zero, &zero).unwrap();
        let v = random_vector(model.nv(), 1.0, &mut r);
        let a = random_vector(model.nv(), 2.0, &mut r);
        rnea_derivatives(&model, &mut data, &mut ws, &q, &v, &a).unwrap();
        let (mut gravity, mut dgravity) = (DVector::zeros(0), DMatrix::zeros(0, 0));
        gravity_derivatives_into(&model, &ws, &mut gravity, &mut dgravity).unwrap();
        assert_close_vec(&format!("{robot}: g"), &gravity, &at_rest.tau, 1e-12);
        assert_close(
            &format!("{robot}: ∂g/∂q"),
            &dgravity,
            &at_rest.dtau_dq,
            1e-12,
        );
    }
}

#[test]
fn the_gradient_of_a_mass_quadratic_form_matches_finite_differences() {
    for robot in ROBOTS {
        let model = load_robot(robot);
        let mut data = Data::new(&model);
        let mut ws = DerivativeWorkspace::new(&model);
        let mut r = rng(5);
        let q = random_configuration(&model, &mut r);
        let w = random_vector(model.nv(), 1.0, &mut r);
        let zero = DVector::zeros(model.nv());
        rnea_derivatives(&model, &mut data, &mut ws, &q, &zero, &zero).unwrap();
        let (mut twists, mut momenta, mut got) = (Vec::new(), Vec::new(), DVector::zeros(0));
        mass_quadratic_gradient(&model, &ws, &w, &mut twists, &mut momenta, &mut got).unwrap();
        let reference = fd_q(&model, &q, |q| {
            let m = dynamics::crba(&model, &mut data, q).unwrap();
            DVector::from_element(1, w.dot(&(m * &w)))
        });
        assert_close_vec(
            &format!("{robot}: ∂(wᵀMw)/∂q"),
            &got,
            &reference.row(0).transpose(),
            TOL,
        );
    }
}

/// A point fixed on body `joint` at the configuration `q0`, where it is at `p0`: where it
/// is at `q`.
fn carried(
    model: &Model,
    data: &mut Data,
    joint: usize,
    q0: &DVector<f64>,
    p0: &Vector3<f64>,
    q: &DVector<f64>,
) -> Vector3<f64> {
    dynamics::forward_kinematics(model, data, q0).unwrap();
    let local = data.omi[joint].inverse_transform_point(&(*p0).into());
    dynamics::forward_kinematics(model, data, q).unwrap();
    data.omi[joint].transform_point(&local).coords
}

#[test]
fn point_force_and_velocity_derivatives_match_finite_differences() {
    for robot in ROBOTS {
        let model = load_robot(robot);
        let mut data = Data::new(&model);
        let mut ws = DerivativeWorkspace::new(&model);
        let mut r = rng(9);
        let q = random_configuration(&model, &mut r);
        let x = random_vector(model.nv(), 1.0, &mut r);
        let joint = model.njoints() - 1;
        let p0 = Vector3::new(0.05, -0.02, 0.1);
        let force = Vector3::new(3.0, -1.0, 7.0);
        let frame = Rotation3::from_euler_angles(0.3, -0.2, 1.1).into_inner();
        let zero = DVector::zeros(model.nv());
        rnea_derivatives(&model, &mut data, &mut ws, &q, &zero, &zero).unwrap();
        dynamics::forward_kinematics(&model, &mut data, &q).unwrap();
        // The point moves with its body: one anchor at itself.
        let anchors = [Anchor {
            joint,
            point: p0,
            weight: Matrix3::identity(),
        }];
        let mut got = DMatrix::zeros(model.nv(), model.nv());
        point_force_derivative(&model, &ws, joint, &p0, &force, &anchors, 1.0, &mut got);
        let mut twists = Vec::new();
        world_twists(&model, &ws, &x, &mut twists).unwrap();
        let mut got_velocity = DMatrix::zeros(3, model.nv());
        point_velocity_derivative(
            &model,
            &ws,
            &twists,
            joint,
            &p0,
            &frame,
            1.0,
            &anchors,
            &mut got_velocity,
            0,
        );
        let mut data2 = Data::new(&model);
        let force_reference = fd_q(&model, &q, |qk| {
            let p = carried(&model, &mut data2, joint, &q, &p0, qk);
            let mut out = DVector::zeros(model.nv());
            dynamics::add_point_force(&model, &data2, joint, &p, &force, &mut out).unwrap();
            out
        });
        assert_close(&format!("{robot}: ∂(Jᵀf)/∂q"), &got, &force_reference, TOL);
        let velocity_reference = fd_q(&model, &q, |qk| {
            let p = carried(&model, &mut data2, joint, &q, &p0, qk);
            let mut j = Matrix3xX::zeros(model.nv());
            dynamics::point_jacobian_world_into(&model, &data2, joint, &p, &mut j).unwrap();
            let y = frame.transpose() * (j * &x);
            DVector::from_column_slice(y.as_slice())
        });
        assert_close(
            &format!("{robot}: ∂(J x)/∂q"),
            &got_velocity,
            &velocity_reference,
            TOL,
        );
    }
}

#[test]
fn integration_derivatives_match_finite_differences() {
    for robot in ROBOTS {
        let model = load_robot(robot);
        let mut r = rng(13);
        let q = random_configuration(&model, &mut r);
        let v = random_vector(model.nv(), 3.0, &mut r);
        let dt = 0.05;
        let (dq, dv) = integrate_derivatives(&model, &q, &v, dt).unwrap();
        let q_next = dynamics::integrate(&model, &q, &v, dt).unwrap();
        let tangent = |q1: &DVector<f64>| dynamics::difference(&model, &q_next, q1).unwrap();
        let reference_q = fd_q(&model, &q, |qk| {
            tangent(&dynamics::integrate(&model, qk, &v, dt).unwrap())
        });
        assert_close(&format!("{robot}: ∂q⁺/∂q"), &dq, &reference_q, TOL);
        let columns: Vec<DVector<f64>> = (0..model.nv())
            .map(|k| {
                let mut e = DVector::zeros(model.nv());
                e[k] = H;
                let plus = tangent(&dynamics::integrate(&model, &q, &(&v + &e), dt).unwrap());
                let minus = tangent(&dynamics::integrate(&model, &q, &(&v - &e), dt).unwrap());
                (plus - minus) / (2.0 * H)
            })
            .collect();
        assert_close(
            &format!("{robot}: ∂q⁺/∂v"),
            &dv,
            &DMatrix::from_columns(&columns),
            TOL,
        );
    }
}
