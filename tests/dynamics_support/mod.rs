//! Shared helpers of the dynamics tests: Pinocchio golden files and tolerances.

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
