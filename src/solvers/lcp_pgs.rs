//! lcp-pgs: projected Gauss-Seidel on the LCP (Alg. 1), as in Bullet, ODE, PhysX and DART.
//!
//! Per contact: a normal step with `1 / G_NN` clamped at zero, then a tangential step with
//! `1 / min(G_T1, G_T2)` clamped component-wise to `[−μ λ_N, μ λ_N]` (the 4-facet
//! pyramid). Stops on the LCP's criteria.

use nalgebra::{Matrix3, Vector2, Vector3};
use serde_json::{Map, Value};

use super::per_contact::{build_pgs, normal_then_tangential_step};
use super::{ContactSolver, SolverError, SolverId, SolverSettings};
use crate::problem::ContactModel;

/// Alg. 1's per-contact update, over-relaxed by `ω`.
fn lcp_step(
    mu: f64,
    block: &Matrix3<f64>,
    lambda: &Vector3<f64>,
    c: &Vector3<f64>,
    omega: f64,
) -> Vector3<f64> {
    // Alg. 1 line 6: clamp(λ_T, μ λ_N), component-wise.
    normal_then_tangential_step(block, lambda, c, mu, omega, |t, bound| {
        Vector2::new(t.x.clamp(-bound, bound), t.y.clamp(-bound, bound))
    })
}

/// Builds the solver; it takes no parameters.
pub fn build(
    settings: SolverSettings,
    params: &Map<String, Value>,
) -> Result<Box<dyn ContactSolver>, SolverError> {
    build_pgs(
        SolverId::LcpPgs,
        ContactModel::Lcp,
        lcp_step,
        settings,
        params,
    )
}
