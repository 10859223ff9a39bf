//! lcp-stagproj: staggered projections (Alg. 6) on the LCP's pyramid: the friction QP
//! keeps each `λ_T` in the square `‖λ_T‖_∞ ≤ μ λ_N`; stops on the LCP residual. See
//! [`super::stagproj`].

use serde_json::{Map, Value};

use super::stagproj::FrictionSet;
use super::{ContactSolver, SolverError, SolverSettings};

/// Builds the solver, a [`super::stagproj::StagprojSolver`] on [`FrictionSet::Square`];
/// parameters are those of [`super::stagproj::SubproblemParams`].
pub fn build(
    settings: SolverSettings,
    params: &Map<String, Value>,
) -> Result<Box<dyn ContactSolver>, SolverError> {
    super::stagproj::build(FrictionSet::Square, settings, params)
}
