//! lcp-stagproj: staggered projections (Alg. 6) on the LCP's pyramid: the friction QP
//! keeps each `λ_T` in the square `‖λ_T‖_∞ ≤ μ λ_N`; stops on the LCP residual. See
//! [`super::stagproj`].

use nalgebra::DVector;
use serde_json::{Map, Value};

use super::stagproj::{solve_staggered, FrictionSet, SubproblemParams};
use super::{
    parse_params, ContactModel, ContactSolver, SolveReport, SolverError, SolverId, SolverSettings,
};
use crate::problem::ContactProblem;

/// The lcp-stagproj solver.
#[derive(Debug, Clone)]
pub struct LcpStagprojSolver {
    settings: SolverSettings,
    params: SubproblemParams,
}

impl LcpStagprojSolver {
    /// A solver with the given settings and parameters (checked).
    pub fn new(settings: SolverSettings, params: SubproblemParams) -> Result<Self, SolverError> {
        settings.validate()?;
        params.validate(SolverId::LcpStagproj.as_str())?;
        Ok(Self { settings, params })
    }
}

impl ContactSolver for LcpStagprojSolver {
    fn name(&self) -> &str {
        SolverId::LcpStagproj.as_str()
    }

    fn model(&self) -> ContactModel {
        ContactModel::Lcp
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
            FrictionSet::Square,
        )
    }
}

/// Builds the solver; parameters are those of [`SubproblemParams`].
pub fn build(
    settings: SolverSettings,
    params: &Map<String, Value>,
) -> Result<Box<dyn ContactSolver>, SolverError> {
    let params: SubproblemParams = parse_params(SolverId::LcpStagproj.as_str(), params)?;
    Ok(Box::new(LcpStagprojSolver::new(settings, params)?))
}
