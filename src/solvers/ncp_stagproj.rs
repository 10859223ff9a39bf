//! ncp-stagproj: staggered projections (Alg. 6; Kaufman et al. 2008) on the NCP: a normal
//! QP (`λ_N ≥ 0`) and a tangential QP over the disks `‖λ_T‖₂ ≤ μ λ_N` alternate; stops on
//! the NCP criterion. See [`super::stagproj`].

use nalgebra::DVector;
use serde_json::{Map, Value};

use super::stagproj::{solve_staggered, FrictionSet, SubproblemParams};
use super::{
    parse_params, ContactModel, ContactSolver, SolveReport, SolverError, SolverId, SolverSettings,
};
use crate::problem::ContactProblem;

/// The ncp-stagproj solver.
#[derive(Debug, Clone)]
pub struct NcpStagprojSolver {
    settings: SolverSettings,
    params: SubproblemParams,
}

impl NcpStagprojSolver {
    /// A solver with the given settings and parameters (checked).
    pub fn new(settings: SolverSettings, params: SubproblemParams) -> Result<Self, SolverError> {
        settings.validate()?;
        params.validate(SolverId::NcpStagproj.as_str())?;
        Ok(Self { settings, params })
    }
}

impl ContactSolver for NcpStagprojSolver {
    fn name(&self) -> &str {
        SolverId::NcpStagproj.as_str()
    }

    fn model(&self) -> ContactModel {
        ContactModel::Ncp
    }

    fn settings(&self) -> &SolverSettings {
        &self.settings
    }

    fn settings_mut(&mut self) -> &mut SolverSettings {
        &mut self.settings
    }

    fn solve(
        &mut self,
        problem: &ContactProblem,
        warm_start: Option<&DVector<f64>>,
    ) -> Result<SolveReport, SolverError> {
        solve_staggered(
            problem,
            warm_start,
            &self.settings,
            &self.params,
            FrictionSet::Disk,
        )
    }
}

/// Builds the solver; parameters are those of [`SubproblemParams`].
pub fn build(
    settings: SolverSettings,
    params: &Map<String, Value>,
) -> Result<Box<dyn ContactSolver>, SolverError> {
    let params: SubproblemParams = parse_params(SolverId::NcpStagproj.as_str(), params)?;
    Ok(Box::new(NcpStagprojSolver::new(settings, params)?))
}
