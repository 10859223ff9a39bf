//! ccp-ipm: the CCP (eq. 19) as a second-order cone program solved by clarabel's interior
//! point method, the reference CCP solution.
//!
//! `min ½ λᵀ(G + R)λ + gᵀλ` over `λ ∈ ×K_μ`, each friction cone written as the
//! second-order cone on `(μ λ_N, λ_T)` (see `solvers/conic.rs`). Clarabel runs to a gap and
//! feasibility tolerance of `eps_abs / 1000` (within `[1e-12, 1e-8]`), with at most
//! `max_iter` interior-point iterations; `iterations` counts them. The result is
//! `Converged` only if clarabel solved the problem and the CCP residual is below
//! `eps_abs`; a solution clarabel accepts whose CCP residual is above `eps_abs` is reported
//! as `Failed` with both numbers. An interior point method cannot use a warm start (its
//! iterates must stay interior): a given warm start is checked for size, then ignored.
//! The residual history, when asked, holds only the final residual (clarabel's iterates
//! stay inside clarabel).

use std::time::Instant;

use nalgebra::DVector;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::conic::{interior_point_tolerance, solve_conic_qp, unsolved_status, Block};
use super::support::{all_finite, solve_checked, ModelResidual};
use super::{
    parse_params, ContactModel, ContactSolver, SolveReport, SolveStatus, SolverError, SolverId,
    SolverSettings,
};
use crate::problem::ContactProblem;

/// ccp-ipm has no parameters of its own.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CcpIpmParams {}

/// The ccp-ipm solver.
#[derive(Debug, Clone)]
pub struct CcpIpmSolver {
    settings: SolverSettings,
}

impl CcpIpmSolver {
    /// A solver with the given settings (checked).
    pub fn new(settings: SolverSettings) -> Result<Self, SolverError> {
        settings.validate()?;
        Ok(Self { settings })
    }
}

impl CcpIpmSolver {
    /// Clarabel on the SOCP of the module doc (a problem with contacts).
    fn interior_point(&self, problem: &ContactProblem, start: Instant) -> SolveReport {
        let blocks: Vec<Block> = problem.mu().iter().map(|&mu| Block::IceCream(mu)).collect();
        let tolerance = interior_point_tolerance(self.settings.eps_abs);
        let solution = solve_conic_qp(
            &problem.effective_delassus(),
            problem.free_velocity(),
            &blocks,
            tolerance,
            self.settings.max_iter,
        );
        let (lambda, clarabel_status, iterations) = match solution {
            Ok(s) if all_finite(&s.x) => (s.x, unsolved_status(s.status), s.iterations as usize),
            Ok(s) => (
                DVector::zeros(problem.dim()),
                Some(SolveStatus::Failed(format!(
                    "clarabel returned non-finite forces ({:?})",
                    s.status
                ))),
                s.iterations as usize,
            ),
            Err(reason) => (
                DVector::zeros(problem.dim()),
                Some(SolveStatus::Failed(reason)),
                0,
            ),
        };
        let residual = ModelResidual::Ccp.eval(problem, &lambda, &problem.velocity(&lambda));
        let status = clarabel_status.unwrap_or_else(|| {
            if residual <= self.settings.eps_abs {
                SolveStatus::Converged
            } else {
                SolveStatus::Failed(format!(
                    "clarabel solved to tolerance {tolerance:e} but the CCP residual {residual:e} exceeds eps_abs"
                ))
            }
        });
        let history = self.settings.record_history.then(|| vec![residual]);
        SolveReport::finish(
            problem, lambda, status, iterations, residual, start, history,
        )
    }
}

impl ContactSolver for CcpIpmSolver {
    fn name(&self) -> &str {
        SolverId::CcpIpm.as_str()
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
        solve_checked(problem, warm_start, self.settings.record_history, |start| {
            Ok(self.interior_point(problem, start))
        })
    }
}

/// Builds the solver; it takes no parameters.
pub fn build(
    settings: SolverSettings,
    params: &Map<String, Value>,
) -> Result<Box<dyn ContactSolver>, SolverError> {
    let _: CcpIpmParams = parse_params(SolverId::CcpIpm.as_str(), params)?;
    Ok(Box::new(CcpIpmSolver::new(settings)?))
}
