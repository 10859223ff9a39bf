//! The metrics of the Rust crate (`metrics`): every metric of an answer at once, and the
//! criteria one by one. `λ` is checked against the problem first (`ProblemError` naming
//! `lambda`).

use contactbench::metrics::residuals::raisim_residual as rust_raisim_residual;
use contactbench::metrics::{
    ccp_residual as rust_ccp_residual, compute_metrics, compute_model_metrics,
    internal_forces as rust_internal_forces, lcp_residual as rust_lcp_residual,
    model_criteria as rust_model_criteria, ncp_criterion as rust_ncp_criterion,
    relative_criterion as rust_relative_criterion,
};
use contactbench::problem::ContactProblem;
use nalgebra::DVector;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::py_err;
use crate::problem::{checked_lambda, PyProblem};
use crate::solvers::metrics_dict;

/// `λ` checked, and `c = (G + R) λ + g`.
fn answer(
    problem: &ContactProblem,
    lam: &Bound<'_, PyAny>,
) -> PyResult<(DVector<f64>, DVector<f64>)> {
    let lambda = checked_lambda(problem, lam)?;
    let c = problem.velocity(&lambda);
    Ok((lambda, c))
}

/// Every metric of `λ` (`compute_metrics`; with `model`, also the split of the internal
/// forces for an answer of that model, `compute_model_metrics`).
#[pyfunction]
#[pyo3(signature = (problem, lam, model = None))]
pub fn metrics<'py>(
    py: Python<'py>,
    problem: PyRef<'py, PyProblem>,
    lam: &Bound<'py, PyAny>,
    model: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let lambda = checked_lambda(&problem.inner, lam)?;
    let model = model
        .map(crate::solvers::parse_model)
        .transpose()
        .map_err(py_err)?;
    let inner = &problem.inner;
    // Every metric (the internal forces take an SVD of J) without the interpreter.
    let m = py.detach(|| match model {
        Some(model) => compute_model_metrics(inner, &lambda, model),
        None => compute_metrics(inner, &lambda),
    });
    metrics_dict(py, &m)
}

/// Both criteria of `model` at `λ`: `{"relative": r, "absolute": a}`.
#[pyfunction]
#[pyo3(signature = (problem, lam, model = "ncp"))]
pub fn model_criteria<'py>(
    py: Python<'py>,
    problem: PyRef<'py, PyProblem>,
    lam: &Bound<'py, PyAny>,
    model: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let model = crate::solvers::parse_model(model).map_err(py_err)?;
    let (lambda, c) = answer(&problem.inner, lam)?;
    let criteria = rust_model_criteria(model, &problem.inner, &lambda, &c);
    let dict = PyDict::new(py);
    dict.set_item("relative", criteria.relative)?;
    dict.set_item("absolute", criteria.absolute)?;
    Ok(dict)
}

/// The relative NCP criterion `r` (dimensionless, docs/ruler.md).
#[pyfunction]
pub fn relative_criterion(problem: PyRef<'_, PyProblem>, lam: &Bound<'_, PyAny>) -> PyResult<f64> {
    let (lambda, c) = answer(&problem.inner, lam)?;
    Ok(rust_relative_criterion(&problem.inner, &lambda, &c))
}

/// The absolute NCP criterion (the paper's, with the de Saxcé correction).
#[pyfunction]
pub fn ncp_criterion(problem: PyRef<'_, PyProblem>, lam: &Bound<'_, PyAny>) -> PyResult<f64> {
    let (lambda, c) = answer(&problem.inner, lam)?;
    Ok(rust_ncp_criterion(&problem.inner, &lambda, &c))
}

/// The CCP residual (absolute).
#[pyfunction]
pub fn ccp_residual(problem: PyRef<'_, PyProblem>, lam: &Bound<'_, PyAny>) -> PyResult<f64> {
    let (lambda, c) = answer(&problem.inner, lam)?;
    Ok(rust_ccp_residual(&problem.inner, &lambda, &c))
}

/// The LCP residual on the pyramid (absolute).
#[pyfunction]
pub fn lcp_residual(problem: PyRef<'_, PyProblem>, lam: &Bound<'_, PyAny>) -> PyResult<f64> {
    let (lambda, c) = answer(&problem.inner, lam)?;
    Ok(rust_lcp_residual(&problem.inner, &lambda, &c))
}

/// RaiSim's own residual (problem (20), eq. 21; absolute).
#[pyfunction]
pub fn raisim_residual(problem: PyRef<'_, PyProblem>, lam: &Bound<'_, PyAny>) -> PyResult<f64> {
    let (lambda, c) = answer(&problem.inner, lam)?;
    Ok(rust_raisim_residual(&problem.inner, &lambda, &c))
}

/// The norm of the internal forces (needs the problem's Jacobian `J`; None without it),
/// computed without the interpreter (an SVD of `J`).
#[pyfunction]
pub fn internal_forces(
    py: Python<'_>,
    problem: PyRef<'_, PyProblem>,
    lam: &Bound<'_, PyAny>,
) -> PyResult<Option<f64>> {
    let lambda = checked_lambda(&problem.inner, lam)?;
    let inner = &problem.inner;
    Ok(py.detach(|| rust_internal_forces(inner, &lambda)))
}
