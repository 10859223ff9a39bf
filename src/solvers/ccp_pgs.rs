//! ccp-pgs: projected Gauss-Seidel on the CCP (Alg. 2), after Anitescu & Tasora.
//!
//! Per contact: `λ_i ← proj_{K_μ}(λ_i − ω · 3 / tr(G_ii) · c_i)`, a projected gradient step
//! on the per-contact part of the QCQP (19) with the step `3 / tr(G_ii)`. A fixed point
//! satisfies `K_μ ∋ λ ⊥ c ∈ K*_μ` (eq. 15). Stops on the CCP's criteria.

use nalgebra::{Matrix3, Vector3};
use serde_json::{Map, Value};

use super::per_contact::{build_pgs, inverse_step};
use super::{ContactSolver, SolverError, SolverId, SolverSettings};
use crate::problem::{cones, ContactModel};

/// Alg. 2's per-contact update, over-relaxed by `ω`.
fn ccp_step(
    mu: f64,
    block: &Matrix3<f64>,
    lambda: &Vector3<f64>,
    c: &Vector3<f64>,
    omega: f64,
) -> Vector3<f64> {
    // Alg. 2 lines 3-4.
    let step = 3.0 * omega * inverse_step(block.trace());
    cones::project_ice_cream(mu, &(lambda - c * step))
}

/// Builds the solver; it takes no parameters.
pub fn build(
    settings: SolverSettings,
    params: &Map<String, Value>,
) -> Result<Box<dyn ContactSolver>, SolverError> {
    build_pgs(
        SolverId::CcpPgs,
        ContactModel::Ccp,
        ccp_step,
        settings,
        params,
    )
}
