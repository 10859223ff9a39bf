//! Helpers shared by the solver tests.
#![allow(dead_code)]

use contactbench::metrics::{ccp_residual, lcp_residual, ncp_criterion, raisim_residual};
use contactbench::problem::ContactProblem;
use contactbench::solvers::{ContactModel, ContactSolver, SolverId, SolverSettings};
use nalgebra::DVector;
use serde_json::Map;

/// Builds a built-in solver with default parameters; a build error fails the test.
pub fn build(id: SolverId, settings: &SolverSettings) -> Box<dyn ContactSolver> {
    match id.build(settings.clone(), &Map::new()) {
        Ok(solver) => solver,
        Err(err) => panic!("{id}: {err}"),
    }
}

/// The residual of the model a solver solves, measured by the metrics module.
pub fn model_residual(model: ContactModel, problem: &ContactProblem, lambda: &DVector<f64>) -> f64 {
    let c = problem.velocity(lambda);
    match model {
        ContactModel::Lcp => lcp_residual(problem, lambda, &c),
        ContactModel::Ccp => ccp_residual(problem, lambda, &c),
        ContactModel::Raisim => raisim_residual(problem, lambda, &c),
        ContactModel::Ncp => ncp_criterion(problem, lambda, &c),
    }
}

/// Settings with a tolerance and an iteration cap.
pub fn settings(eps_abs: f64, max_iter: usize) -> SolverSettings {
    SolverSettings {
        eps_abs,
        max_iter,
        ..SolverSettings::default()
    }
}
