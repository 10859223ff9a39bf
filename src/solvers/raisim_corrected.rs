//! raisim-corrected: RaiSim's per-contact bisection on the de Saxcé-corrected velocity
//! (ContactBench). Same algorithm and parameters as [`super::raisim`]; the sliding step
//! minimizes `½ λᵀ G_ii λ + (g̃ + Γ(c_i, μ))ᵀ λ` on the ellipse, so its fixed points
//! satisfy the NCP (eq. 14), and it stops on the NCP criterion.

use serde_json::{Map, Value};

use super::{ContactSolver, SolverError, SolverSettings};

/// Builds the solver (parameters: see [`super::raisim::RaisimParams`]).
pub fn build(
    settings: SolverSettings,
    params: &Map<String, Value>,
) -> Result<Box<dyn ContactSolver>, SolverError> {
    super::raisim::build_variant("raisim-corrected", true, settings, params)
}
