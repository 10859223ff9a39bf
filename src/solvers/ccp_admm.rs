//! ccp-admm: ADMM on the CCP (paper Alg. 3, eq. 19) with adaptive ρ.
//!
//! Solves `min ½ λᵀ(G + R)λ + gᵀλ` over `λ ∈ ×K_μ` by the ADMM of [`super::admm`] without
//! the de Saxcé shift; it stops on the CCP residual. Alg. 3's `(γ, z)` are `(−z, y)` there,
//! and its ρ is `τρ`. The Cholesky factor of `G + R + ρ̄ I` and the last ρ are kept
//! between solves: a warm start reuses ρ.

use nalgebra::DVector;
use serde_json::{Map, Value};

use super::admm::{solve_admm, AdmmParams, AdmmState};
use super::support::ModelResidual;
use super::{
    parse_params, ContactModel, ContactSolver, SolveReport, SolverError, SolverId, SolverSettings,
};
use crate::problem::ContactProblem;

/// The ccp-admm solver.
#[derive(Debug, Clone)]
pub struct CcpAdmmSolver {
    settings: SolverSettings,
    params: AdmmParams,
    state: AdmmState,
}

impl CcpAdmmSolver {
    /// A solver with the given settings and parameters (checked).
    pub fn new(settings: SolverSettings, params: AdmmParams) -> Result<Self, SolverError> {
        settings.validate()?;
        params.validate(SolverId::CcpAdmm.as_str())?;
        Ok(Self {
            settings,
            params,
            state: AdmmState::default(),
        })
    }

    /// Its parameters.
    pub fn params(&self) -> &AdmmParams {
        &self.params
    }

    /// The ρ the last solve ended with (reused by the next warm-started solve).
    pub fn last_rho(&self) -> Option<f64> {
        self.state.last_rho()
    }

    /// Cholesky factorizations of `G + R + ρ̄ I` computed so far (one per ρ change or
    /// new `G`).
    pub fn factorizations(&self) -> usize {
        self.state.factorizations()
    }
}

impl ContactSolver for CcpAdmmSolver {
    fn name(&self) -> &str {
        SolverId::CcpAdmm.as_str()
    }

    fn model(&self) -> ContactModel {
        ContactModel::Ccp
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
        solve_admm(
            problem,
            warm_start,
            &self.settings,
            &self.params,
            &mut self.state,
            ModelResidual::Ccp,
        )
    }

    fn reset(&mut self) {
        self.state.reset();
    }
}

/// Builds the solver; parameters are those of [`AdmmParams`].
pub fn build(
    settings: SolverSettings,
    params: &Map<String, Value>,
) -> Result<Box<dyn ContactSolver>, SolverError> {
    let params: AdmmParams = parse_params(SolverId::CcpAdmm.as_str(), params)?;
    Ok(Box::new(CcpAdmmSolver::new(settings, params)?))
}
