//! ncp-pgs: projected Gauss-Seidel on the NCP (Alg. 5).
//!
//! The LCP's update (Alg. 1) with the box clamp replaced by the horizontal projection on
//! the cone: `λ_T` is projected onto the disk of radius `μ λ_N`, `λ_N` unchanged. A fixed
//! point satisfies Signorini, Coulomb and the maximum dissipation principle. Stops on
//! the NCP criterion.

use nalgebra::{DVector, Matrix3, Vector3};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::per_contact::{normal_then_tangential_step, ContactRule, PerContactSolver};
use super::{parse_params, ContactModel, ContactSolver, SolverError, SolverSettings};
use crate::metrics::ncp_criterion;
use crate::problem::{cones, ContactProblem};

/// ncp-pgs has no parameters of its own.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Params {}

/// Alg. 5's per-contact update.
#[derive(Debug, Default)]
struct NcpRule {
    omega: f64,
}

impl ContactRule for NcpRule {
    fn prepare(&mut self, settings: &SolverSettings, _: &[Matrix3<f64>]) -> Result<(), String> {
        self.omega = settings.over_relaxation;
        Ok(())
    }

    fn update(
        &self,
        _: usize,
        mu: f64,
        block: &Matrix3<f64>,
        lambda: &Vector3<f64>,
        c: &Vector3<f64>,
    ) -> Vector3<f64> {
        // Alg. 5 line 6: horizontal projection, λ_T onto the disk of radius μ λ_N.
        normal_then_tangential_step(block, lambda, c, mu, self.omega, |t, radius| {
            cones::project_disk(radius, t)
        })
    }

    fn residual(&self, problem: &ContactProblem, lambda: &DVector<f64>, c: &DVector<f64>) -> f64 {
        ncp_criterion(problem, lambda, c)
    }
}

/// Builds the solver.
pub fn build(
    settings: SolverSettings,
    params: &Map<String, Value>,
) -> Result<Box<dyn ContactSolver>, SolverError> {
    let Params {} = parse_params("ncp-pgs", params)?;
    Ok(Box::new(PerContactSolver::new(
        "ncp-pgs",
        ContactModel::Ncp,
        settings,
        NcpRule::default(),
    )))
}
