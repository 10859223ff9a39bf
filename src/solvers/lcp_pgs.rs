//! lcp-pgs: projected Gauss-Seidel on the LCP (Alg. 1), as in Bullet, ODE, PhysX and DART.
//!
//! Per contact: a normal step with `1 / G_NN` clamped at zero, then a tangential step with
//! `1 / min(G_T1, G_T2)` clamped component-wise to `[−μ λ_N, μ λ_N]` (the 4-facet
//! pyramid). Stops on the LCP residual.

use nalgebra::{DVector, Matrix3, Vector2, Vector3};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::per_contact::{normal_then_tangential_step, ContactRule, PerContactSolver};
use super::{parse_params, ContactModel, ContactSolver, SolverError, SolverSettings};
use crate::metrics::lcp_residual;
use crate::problem::ContactProblem;

/// lcp-pgs has no parameters of its own.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Params {}

/// Alg. 1's per-contact update.
#[derive(Debug, Default)]
struct LcpRule {
    omega: f64,
}

impl ContactRule for LcpRule {
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
        // Alg. 1 line 6: clamp(λ_T, μ λ_N), component-wise.
        normal_then_tangential_step(block, lambda, c, mu, self.omega, |t, bound| {
            Vector2::new(t.x.clamp(-bound, bound), t.y.clamp(-bound, bound))
        })
    }

    fn residual(&self, problem: &ContactProblem, lambda: &DVector<f64>, c: &DVector<f64>) -> f64 {
        lcp_residual(problem, lambda, c)
    }
}

/// Builds the solver.
pub fn build(
    settings: SolverSettings,
    params: &Map<String, Value>,
) -> Result<Box<dyn ContactSolver>, SolverError> {
    let Params {} = parse_params("lcp-pgs", params)?;
    Ok(Box::new(PerContactSolver::new(
        "lcp-pgs",
        ContactModel::Lcp,
        settings,
        LcpRule::default(),
    )))
}
