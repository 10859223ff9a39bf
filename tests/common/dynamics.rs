//! What the dynamics tests share: Pinocchio golden files, tolerances and random states.

#![allow(dead_code)]

use nalgebra::{DMatrix, DVector};
use serde_json::Value;

/// Reads `tests/data/<name>`.
pub fn golden(name: &str) -> Value {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A JSON array of numbers as a vector.
pub fn vector(v: &Value) -> DVector<f64> {
    let items = v.as_array().expect("array");
    DVector::from_iterator(
        items.len(),
        items.iter().map(|x| x.as_f64().expect("number")),
    )
}

/// A JSON array of rows as a matrix.
pub fn matrix(v: &Value) -> DMatrix<f64> {
    let rows = v.as_array().expect("array of rows");
    let ncols = rows.first().map_or(0, |r| r.as_array().expect("row").len());
    DMatrix::from_fn(rows.len(), ncols, |i, j| {
        rows[i][j].as_f64().expect("number")
    })
}

/// Asserts `‖a − b‖_max ≤ tol · max(‖b‖_max, 1e-300)` (relative to the quantity's scale).
pub fn assert_close(what: &str, a: &DMatrix<f64>, b: &DMatrix<f64>, tol: f64) {
    assert_eq!(a.shape(), b.shape(), "{what}: shape");
    let scale = b.amax().max(1e-300);
    let err = (a - b).amax();
    assert!(
        err <= tol * scale,
        "{what}: max error {err:e} > {tol:e} × scale {scale:e}\ngot {a}\nexpected {b}"
    );
}

/// [`assert_close`] for vectors.
pub fn assert_close_vec(what: &str, a: &DVector<f64>, b: &DVector<f64>, tol: f64) {
    let a = DMatrix::from_column_slice(a.len(), 1, a.as_slice());
    let b = DMatrix::from_column_slice(b.len(), 1, b.as_slice());
    assert_close(what, &a, &b, tol);
}

/// Asserts `|a − b| ≤ tol · |b|`.
pub fn assert_close_scalar(what: &str, a: f64, b: f64, tol: f64) {
    assert!(
        (a - b).abs() <= tol * b.abs().max(1e-300),
        "{what}: {a} vs {b} (relative error {:e})",
        (a - b).abs() / b.abs()
    );
}

use contactbench::model::{JointKind, Model};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A seeded generator.
pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// A random configuration: joints uniform in their limits (clipped to [−π, π]), free
/// flyers at a random position with a random unit quaternion.
pub fn random_configuration(model: &Model, rng: &mut ChaCha8Rng) -> DVector<f64> {
    let mut q = model.neutral_configuration();
    for joint in &model.joints {
        let i = joint.idx_q;
        match joint.kind {
            JointKind::Universe => {}
            JointKind::FreeFlyer => {
                for k in 0..3 {
                    q[i + k] = rng.random_range(-1.0..1.0);
                }
                let quat: Vec<f64> = (0..4).map(|_| rng.random_range(-1.0..1.0)).collect();
                let n = quat.iter().map(|x| x * x).sum::<f64>().sqrt();
                for k in 0..4 {
                    q[i + 3 + k] = quat[k] / n;
                }
            }
            JointKind::RevoluteUnbounded { .. } => {
                let t: f64 = rng.random_range(-3.0..3.0);
                q[i] = t.cos();
                q[i + 1] = t.sin();
            }
            _ => {
                let lo = model.limits.lower_position[i].max(-3.0);
                let hi = model.limits.upper_position[i].min(3.0);
                q[i] = lo + (hi - lo) * rng.random::<f64>();
            }
        }
    }
    q
}

/// A random vector with entries uniform in [−scale, scale].
pub fn random_vector(n: usize, scale: f64, rng: &mut ChaCha8Rng) -> DVector<f64> {
    DVector::from_iterator(n, (0..n).map(|_| rng.random_range(-scale..scale)))
}

use contactbench::dynamics::{self, Data};

/// One classical Runge-Kutta 4 step on the Lie group (each stage's configuration is
/// `q ⊕ v_k h`), torque `tau`, no contact.
pub fn rk4_step(
    model: &Model,
    data: &mut Data,
    q: &DVector<f64>,
    v: &DVector<f64>,
    tau: &DVector<f64>,
    dt: f64,
) -> (DVector<f64>, DVector<f64>) {
    let mut acc = |q: &DVector<f64>, v: &DVector<f64>| {
        dynamics::aba(model, data, q, v, tau, None).unwrap().clone()
    };
    let k1v = v.clone();
    let k1a = acc(q, &k1v);
    let k2v = v + &k1a * (dt / 2.0);
    let k2a = acc(
        &dynamics::integrate(model, q, &k1v, dt / 2.0).unwrap(),
        &k2v,
    );
    let k3v = v + &k2a * (dt / 2.0);
    let k3a = acc(
        &dynamics::integrate(model, q, &k2v, dt / 2.0).unwrap(),
        &k3v,
    );
    let k4v = v + &k3a * dt;
    let k4a = acc(&dynamics::integrate(model, q, &k3v, dt).unwrap(), &k4v);
    let dq = (&k1v + &k2v * 2.0 + &k3v * 2.0 + &k4v) / 6.0;
    let dv = (&k1a + &k2a * 2.0 + &k3a * 2.0 + &k4a) / 6.0;
    (dynamics::integrate(model, q, &dq, dt).unwrap(), v + dv * dt)
}

/// Kinetic plus potential energy, J.
pub fn energy(model: &Model, data: &mut Data, q: &DVector<f64>, v: &DVector<f64>) -> f64 {
    dynamics::kinetic_energy(model, data, q, v).unwrap()
        + dynamics::potential_energy(model, data, q).unwrap()
}
