//! ncp-pgs: projected Gauss-Seidel on the NCP (Alg. 5).
//!
//! The LCP's update (Alg. 1) with the box clamp replaced by the horizontal projection on
//! the cone: `λ_T` is projected onto the disk of radius `μ λ_N`, `λ_N` unchanged. A fixed
//! point satisfies Signorini, Coulomb and the maximum dissipation principle. Stops on
//! the NCP's criteria.

use nalgebra::{Matrix3, Vector3};
use serde_json::{Map, Value};

use super::per_contact::{build_pgs, normal_then_tangential_step};
use super::{ContactModel, ContactSolver, SolverError, SolverId, SolverSettings};
use crate::problem::cones;

/// Alg. 5's per-contact update, over-relaxed by `ω`.
fn ncp_step(
    mu: f64,
    block: &Matrix3<f64>,
    lambda: &Vector3<f64>,
    c: &Vector3<f64>,
    omega: f64,
) -> Vector3<f64> {
    // Alg. 5 line 6: horizontal projection, λ_T onto the disk of radius μ λ_N.
    normal_then_tangential_step(block, lambda, c, mu, omega, |t, radius| {
        cones::project_disk(radius, t)
    })
}

/// Builds the solver; it takes no parameters.
pub fn build(
    settings: SolverSettings,
    params: &Map<String, Value>,
) -> Result<Box<dyn ContactSolver>, SolverError> {
    build_pgs(
        SolverId::NcpPgs,
        ContactModel::Ncp,
        ncp_step,
        settings,
        params,
    )
}
