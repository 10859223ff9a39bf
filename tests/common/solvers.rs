//! What the solver tests share: building a solver, its settings and the criteria of its model.
#![allow(dead_code)]

use contactbench::metrics::{model_criteria, Criteria};
use contactbench::problem::{ContactModel, ContactProblem};
use contactbench::solvers::{ContactSolver, SolverId, SolverSettings};
use nalgebra::DVector;
use serde_json::Map;

/// Builds a built-in solver with default parameters; a build error fails the test.
pub fn build(id: SolverId, settings: &SolverSettings) -> Box<dyn ContactSolver> {
    match id.build(settings.clone(), &Map::new()) {
        Ok(solver) => solver,
        Err(err) => panic!("{id}: {err}"),
    }
}

/// Both criteria of the model a solver solves, measured by the metrics module.
pub fn criteria(model: ContactModel, problem: &ContactProblem, lambda: &DVector<f64>) -> Criteria {
    model_criteria(model, problem, lambda, &problem.velocity(lambda))
}

/// The relative criterion of the model a solver solves, measured by the metrics module.
pub fn model_residual(model: ContactModel, problem: &ContactProblem, lambda: &DVector<f64>) -> f64 {
    criteria(model, problem, lambda).relative
}

/// Settings with a tolerance of the relative criterion (the default `stop`) and an
/// iteration cap.
pub fn settings(eps_rel: f64, max_iter: usize) -> SolverSettings {
    SolverSettings {
        eps_rel,
        max_iter,
        ..SolverSettings::default()
    }
}
