//! ncp-admm: ADMM on the NCP with the de Saxcé correction and adaptive spectral ρ, the
//! contact solver of Pinocchio 3+ (`ADMMContactSolver`) and of the Simple simulator.
//!
//! The ADMM of [`super::admm`] with the shift `s = Γ(z, μ)` added to the free velocity at
//! each iteration (eq. 13): at a fixed point `y ∈ K_μ ⊥ z = c + Γ(c, μ) ∈ K*_μ`, the NCP
//! (eq. 14). It stops on the NCP criterion. The Cholesky factor of `G + R + ρ̄ I` and the
//! last ρ are kept between solves: a warm start reuses ρ.

use serde_json::{Map, Value};

use super::admm::AdmmSolver;
use super::{ContactSolver, SolverError, SolverSettings};

/// The ncp-admm solver: [`AdmmSolver`] with the de Saxcé shift.
pub type NcpAdmmSolver = AdmmSolver<true>;

/// Builds the solver; parameters are those of [`super::admm::AdmmParams`].
pub fn build(
    settings: SolverSettings,
    params: &Map<String, Value>,
) -> Result<Box<dyn ContactSolver>, SolverError> {
    super::admm::build::<true>(settings, params)
}
