//! Closed-form checks: a pendulum's period (exact elliptic-integral formula) and energy,
//! a torque-free box in free fall (parabolic centre of mass, conserved angular momentum),
//! and a torque-free Solo-12 in zero gravity keeping its energy.

use crate::common::dynamics as dynamics_support;

use std::f64::consts::PI;

use contactbench::dynamics::{self, Data};
use contactbench::model::robots::load_robot;
use contactbench::model::{FreeBodiesBuilder, Model, RootJoint};
use dynamics_support::*;
use nalgebra::{DVector, Quaternion, UnitQuaternion, Vector3};

fn pendulum() -> Model {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/model_pendulum.urdf"
    );
    Model::from_urdf(path, RootJoint::Fixed).unwrap()
}

/// Complete elliptic integral of the first kind K(k) by the arithmetic-geometric mean.
fn elliptic_k(k: f64) -> f64 {
    let (mut a, mut b) = (1.0, (1.0 - k * k).sqrt());
    for _ in 0..30 {
        let (an, bn) = ((a + b) / 2.0, (a * b).sqrt());
        a = an;
        b = bn;
    }
    PI / (2.0 * a)
}

/// Simulates the pendulum released at rest from `theta0` and returns the mean period
/// measured between upward zero crossings, and the largest relative energy drift.
fn simulate_pendulum(theta0: f64, dt: f64, duration: f64) -> (f64, f64) {
    let model = pendulum();
    let mut data = Data::new(&model);
    let mut q = DVector::from_vec(vec![theta0.cos(), theta0.sin()]);
    let mut v = DVector::zeros(1);
    let tau = DVector::zeros(1);
    let e0 = energy(&model, &mut data, &q, &v);
    let mut drift: f64 = 0.0;
    let mut crossings = Vec::new();
    let steps = (duration / dt).round() as usize;
    for step in 0..steps {
        let theta = q[1].atan2(q[0]);
        let (q1, v1) = rk4_step(&model, &mut data, &q, &v, &tau, dt);
        let theta1 = q1[1].atan2(q1[0]);
        if theta < 0.0 && theta1 >= 0.0 {
            crossings.push((step as f64 + theta / (theta - theta1)) * dt);
        }
        q = q1;
        v = v1;
        drift = drift.max((energy(&model, &mut data, &q, &v) - e0).abs() / e0.abs());
    }
    assert!(crossings.len() >= 3, "only {} crossings", crossings.len());
    let period = (crossings[crossings.len() - 1] - crossings[0]) / (crossings.len() - 1) as f64;
    (period, drift)
}

#[test]
fn pendulum_model_is_what_the_urdf_says() {
    let model = pendulum();
    assert_eq!((model.nq(), model.nv()), (2, 1));
    assert_eq!(model.total_mass(), 2.0);
    let tip = model.frame_id("tip").unwrap();
    assert_eq!(model.frames[tip].parent_joint, 1);
    let mut data = Data::new(&model);
    dynamics::forward_kinematics(&model, &mut data, &model.neutral_configuration()).unwrap();
    let p = data.omf[tip].translation.vector;
    assert!((p - Vector3::new(0.0, 0.0, -0.55)).norm() < 1e-15, "{p}");
}

#[test]
fn pendulum_period_and_energy() {
    // I about the hinge = I_c + m l², m g l the gravity stiffness.
    let (m, l, ic, g): (f64, f64, f64, f64) = (2.0, 0.5, 0.001, 9.81);
    let omega0 = (m * g * l / (ic + m * l * l)).sqrt();
    for theta0 in [0.05_f64, 1.0, 2.5] {
        let exact = 4.0 / omega0 * elliptic_k((theta0 / 2.0).sin());
        let (period, drift) = simulate_pendulum(theta0, 1e-3, 3.0 * exact + 0.1);
        assert!(
            (period - exact).abs() < 1e-6 * exact,
            "θ0 = {theta0}: period {period} vs exact {exact}"
        );
        assert!(drift < 1e-8, "θ0 = {theta0}: energy drift {drift:e}");
    }
}

#[test]
fn free_falling_box_follows_a_parabola_and_keeps_its_angular_momentum() {
    let mut builder = FreeBodiesBuilder::new("falling");
    let half = Vector3::new(0.1, 0.2, 0.3);
    builder.add_box("box", 3.0, half).unwrap();
    let model = builder.build();
    assert_eq!((model.nq(), model.nv()), (7, 6));
    let mut data = Data::new(&model);
    let rot0 = UnitQuaternion::from_euler_angles(0.3, -0.2, 0.9);
    let mut q = DVector::from_vec(vec![0.1, -0.2, 1.0, 0.0, 0.0, 0.0, 1.0]);
    q.rows_mut(3, 4).copy_from(rot0.as_vector());
    let mut v = DVector::from_vec(vec![0.5, -0.3, 2.0, 1.0, 3.0, -2.0]);
    let tau = DVector::zeros(6);
    let inertia = model.inertias[1].rotational;
    let world_velocity = rot0 * Vector3::new(v[0], v[1], v[2]);
    let momentum = |q: &DVector<f64>, v: &DVector<f64>| {
        let r = UnitQuaternion::from_quaternion(Quaternion::new(q[6], q[3], q[4], q[5]));
        r * (inertia * Vector3::new(v[3], v[4], v[5]))
    };
    let l0 = momentum(&q, &v);
    let p0 = Vector3::new(q[0], q[1], q[2]);
    let dt = 1e-4;
    for _ in 0..10_000 {
        let (q1, v1) = rk4_step(&model, &mut data, &q, &v, &tau, dt);
        q = q1;
        v = v1;
    }
    let t = 1.0;
    let expected = p0 + world_velocity * t + model.gravity * (0.5 * t * t);
    let p = Vector3::new(q[0], q[1], q[2]);
    // The stage-wise Lie-group RK4 of the tests is second order on SE(3) (measured: error
    // 3e-6 at dt = 1e-3, 3e-8 at dt = 1e-4 for this spinning box).
    assert!((p - expected).norm() < 1e-7, "position {p} vs {expected}");
    let l = momentum(&q, &v);
    assert!(
        (l - l0).norm() < 1e-8 * l0.norm(),
        "angular momentum {l} vs {l0}"
    );
}

#[test]
fn torque_free_solo12_in_zero_gravity_keeps_its_energy() {
    let mut model = load_robot("solo12").unwrap();
    model.gravity = Vector3::zeros();
    let mut data = Data::new(&model);
    let mut q = model.reference_configuration("standing").unwrap();
    let mut r = rng(11);
    let mut v = random_vector(model.nv(), 1.0, &mut r);
    let tau = DVector::zeros(model.nv());
    let e0 = energy(&model, &mut data, &q, &v);
    assert!(e0 > 0.1, "initial energy {e0}");
    let dt = 1e-4;
    let mut drift: f64 = 0.0;
    for _ in 0..10_000 {
        let (q1, v1) = rk4_step(&model, &mut data, &q, &v, &tau, dt);
        q = q1;
        v = v1;
        drift = drift.max((energy(&model, &mut data, &q, &v) - e0).abs() / e0);
    }
    assert!(drift < 1e-6, "relative energy drift {drift:e} over 1 s");
}

#[test]
fn free_box_accelerations_are_gravity_and_euler_equations() {
    let mut builder = FreeBodiesBuilder::new("box");
    builder
        .add_box("box", 2.0, Vector3::new(0.3, 0.1, 0.05))
        .unwrap();
    let model = builder.build();
    let mut data = Data::new(&model);
    let mut r = rng(12);
    let inertia = model.inertias[1].rotational;
    for _ in 0..10 {
        let q = random_configuration(&model, &mut r);
        let v = random_vector(6, 3.0, &mut r);
        let ddq = dynamics::aba(&model, &mut data, &q, &v, &DVector::zeros(6), None)
            .unwrap()
            .clone();
        let rot = UnitQuaternion::from_quaternion(Quaternion::new(q[6], q[3], q[4], q[5]));
        let (lin, ang) = (
            Vector3::new(v[0], v[1], v[2]),
            Vector3::new(v[3], v[4], v[5]),
        );
        // Classical acceleration of the centre of mass: R (v̇ + ω × v) = g.
        let com_acc = rot * (Vector3::new(ddq[0], ddq[1], ddq[2]) + ang.cross(&lin));
        assert!((com_acc - model.gravity).norm() < 1e-12, "{com_acc}");
        // Euler's equations: I ω̇ + ω × I ω = 0.
        let euler = inertia * Vector3::new(ddq[3], ddq[4], ddq[5]) + ang.cross(&(inertia * ang));
        assert!(euler.norm() < 1e-12, "{euler}");
    }
}
