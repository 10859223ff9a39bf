//! ccp-admm: ADMM on the CCP (paper Alg. 3, eq. 19) with adaptive ρ.
//!
//! Solves `min ½ λᵀ(G + R)λ + gᵀλ` over `λ ∈ ×K_μ` by the ADMM of [`super::admm`] without
//! the de Saxcé shift; it stops on the CCP residual. Alg. 3's `(γ, z)` are `(−z, y)` there,
//! and its ρ is `τρ`. The Cholesky factor of `G + R + ρ̄ I` and the last ρ are kept
//! between solves: a warm start reuses ρ.

use serde_json::{Map, Value};

use super::admm::AdmmSolver;
use super::{ContactSolver, SolverError, SolverSettings};

/// The ccp-admm solver: [`AdmmSolver`] without the de Saxcé shift.
pub type CcpAdmmSolver = AdmmSolver<false>;

/// Builds the solver; parameters are those of [`super::admm::AdmmParams`].
pub fn build(
    settings: SolverSettings,
    params: &Map<String, Value>,
) -> Result<Box<dyn ContactSolver>, SolverError> {
    super::admm::build::<false>(settings, params)
}
