//! ncp-admm: ADMM on the NCP with the de Saxcé correction and adaptive spectral ρ, the
//! contact solver of Pinocchio 3+ (`ADMMContactSolver`) and of the Simple simulator.
//!
//! The ADMM of [`super::admm`] with the shift `s = Γ(z, μ)` added to the free velocity at
//! each iteration (eq. 13): at a fixed point `y ∈ K_μ ⊥ z = c + Γ(c, μ) ∈ K*_μ`, the NCP
//! (eq. 14). It stops on the NCP criterion. The Cholesky factor of `G + R + ρ̄ I` and the
//! last ρ are kept between solves: a warm start reuses ρ.

use nalgebra::DVector;
use serde_json::{Map, Value};

use super::admm::{solve_admm, AdmmParams, AdmmState};
use super::support::ModelResidual;
use super::{
    parse_params, ContactModel, ContactSolver, SolveReport, SolverError, SolverId, SolverSettings,
};
use crate::problem::ContactProblem;

/// The ncp-admm solver.
#[derive(Debug, Clone)]
pub struct NcpAdmmSolver {
    settings: SolverSettings,
    params: AdmmParams,
    state: AdmmState,
}

impl NcpAdmmSolver {
    /// A solver with the given settings and parameters (checked).
    pub fn new(settings: SolverSettings, params: AdmmParams) -> Result<Self, SolverError> {
        settings.validate()?;
        params.validate(SolverId::NcpAdmm.as_str())?;
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

impl ContactSolver for NcpAdmmSolver {
    fn name(&self) -> &str {
        SolverId::NcpAdmm.as_str()
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
        solve_admm(
            problem,
            warm_start,
            &self.settings,
            &self.params,
            &mut self.state,
            ModelResidual::Ncp,
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
    let params: AdmmParams = parse_params(SolverId::NcpAdmm.as_str(), params)?;
    Ok(Box::new(NcpAdmmSolver::new(settings, params)?))
}
