//! Python bindings of contactbench (PyO3): the extension module `contactbench._native`,
//! re-exported by the Python package `contactbench` (python/contactbench/__init__.py).
//! A thin layer: every computation is the Rust crate's, every error its error (raised as
//! the class of `contactbench.errors` named after its Rust enum, with the same text).

mod convert;
mod errors;
mod metrics;
mod problem;
mod robot;
mod scenario;
mod simulator;
mod solvers;
mod viewer;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<problem::PyProblem>()?;
    m.add_class::<problem::PyProblemFile>()?;
    m.add_function(wrap_pyfunction!(problem::py_read_problem, m)?)?;
    m.add_function(wrap_pyfunction!(problem::py_write_problem, m)?)?;
    m.add_function(wrap_pyfunction!(problem::py_read_lambda, m)?)?;
    m.add_class::<solvers::PySolveReport>()?;
    m.add_class::<solvers::PySolverRun>()?;
    m.add_class::<solvers::PyPythonSolver>()?;
    m.add_function(wrap_pyfunction!(solvers::solver_ids, m)?)?;
    m.add_function(wrap_pyfunction!(solvers::solve, m)?)?;
    m.add_function(wrap_pyfunction!(solvers::py_compare, m)?)?;
    m.add_function(wrap_pyfunction!(solvers::py_comparison_table, m)?)?;
    m.add_function(wrap_pyfunction!(metrics::metrics, m)?)?;
    m.add_function(wrap_pyfunction!(metrics::model_criteria, m)?)?;
    m.add_function(wrap_pyfunction!(metrics::relative_criterion, m)?)?;
    m.add_function(wrap_pyfunction!(metrics::ncp_criterion, m)?)?;
    m.add_function(wrap_pyfunction!(metrics::ccp_residual, m)?)?;
    m.add_function(wrap_pyfunction!(metrics::lcp_residual, m)?)?;
    m.add_function(wrap_pyfunction!(metrics::raisim_residual, m)?)?;
    m.add_function(wrap_pyfunction!(metrics::internal_forces, m)?)?;
    m.add_class::<robot::PyRobot>()?;
    m.add_function(wrap_pyfunction!(robot::load_robot, m)?)?;
    m.add_class::<scenario::PyRun>()?;
    m.add_function(wrap_pyfunction!(scenario::run_scenario, m)?)?;
    m.add_class::<simulator::PySimulator>()?;
    m.add_function(wrap_pyfunction!(viewer::run_trajectory, m)?)?;
    m.add_function(wrap_pyfunction!(viewer::write_run, m)?)?;
    Ok(())
}
