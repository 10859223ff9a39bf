//! ccp-pgs: projected Gauss-Seidel on the CCP (Alg. 2), after Anitescu & Tasora.
//!
//! Per contact: `λ_i ← proj_{K_μ}(λ_i − ω · 3 / tr(G_ii) · c_i)`, a projected gradient step
//! on the per-contact part of the QCQP (19) with the step `3 / tr(G_ii)`. A fixed point
//! satisfies `K_μ ∋ λ ⊥ c ∈ K*_μ` (eq. 15). Stops on the CCP residual.

use nalgebra::{DVector, Matrix3, Vector3};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::per_contact::{inverse_step, ContactRule, PerContactSolver};
use super::{parse_params, ContactModel, ContactSolver, SolverError, SolverSettings};
use crate::metrics::ccp_residual;
use crate::problem::{cones, ContactProblem};

/// ccp-pgs has no parameters of its own.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Params {}

/// Alg. 2's per-contact update.
#[derive(Debug, Default)]
struct CcpRule {
    omega: f64,
}

impl ContactRule for CcpRule {
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
        // Alg. 2 lines 3-4.
        let step = 3.0 * self.omega * inverse_step(block.trace());
        cones::project_ice_cream(mu, &(lambda - c * step))
    }

    fn residual(&self, problem: &ContactProblem, lambda: &DVector<f64>, c: &DVector<f64>) -> f64 {
        ccp_residual(problem, lambda, c)
    }
}

/// Builds the solver.
pub fn build(
    settings: SolverSettings,
    params: &Map<String, Value>,
) -> Result<Box<dyn ContactSolver>, SolverError> {
    let Params {} = parse_params("ccp-pgs", params)?;
    Ok(Box::new(PerContactSolver::new(
        "ccp-pgs",
        ContactModel::Ccp,
        settings,
        CcpRule::default(),
    )))
}
