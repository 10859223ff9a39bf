//! ncp-stagproj: staggered projections (Alg. 6; Kaufman et al. 2008) on the NCP: a normal
//! QP (`λ_N ≥ 0`) and a tangential QP over the disks `‖λ_T‖₂ ≤ μ λ_N` alternate; stops on
//! the NCP criterion. See [`super::stagproj`].

use serde_json::{Map, Value};

use super::stagproj::FrictionSet;
use super::{ContactSolver, SolverError, SolverSettings};

/// Builds the solver, a [`super::stagproj::StagprojSolver`] on [`FrictionSet::Disk`];
/// parameters are those of [`super::stagproj::SubproblemParams`].
pub fn build(
    settings: SolverSettings,
    params: &Map<String, Value>,
) -> Result<Box<dyn ContactSolver>, SolverError> {
    super::stagproj::build(FrictionSet::Disk, settings, params)
}
