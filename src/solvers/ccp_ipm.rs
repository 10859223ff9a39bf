//! ccp-ipm: the CCP (eq. 19) as a second-order cone program solved by clarabel's interior
//! point method, the reference CCP solution.
//!
//! `min ½ λᵀ(G + R)λ + gᵀλ` over `λ ∈ ×K_μ`, each friction cone written as the
//! second-order cone on `(μ λ_N, λ_T)` (see `problem/conic.rs`, which also makes the QP
//! dimensionless). Clarabel runs to a gap and feasibility tolerance of a thousandth of the
//! tolerance of `stop` (within `[1e-12, 1e-8]`), with at most `max_iter` interior-point
//! iterations; `iterations` counts them. The result is `Converged` only if clarabel solved
//! the problem and the CCP criterion named by `stop` passes; a solution clarabel accepts
//! whose criterion does not is `Stalled` (clarabel can do no better). An interior point
//! method cannot use a warm start (its iterates must stay interior): a given warm start
//! is checked, then ignored. The history, when asked, holds only the final value
//! (clarabel's iterates stay inside clarabel).

use std::time::Instant;

use nalgebra::DVector;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::interior_point::{interior_point_tolerance, remaining_time, unsolved_status};
use super::shell::{Algorithm, Shell, SolveCall};
use super::support::{all_finite, model_criteria, passes};
use super::{
    parse_params, ContactSolver, SolveReport, SolveStatus, SolverError, SolverId, SolverSettings,
};
use crate::problem::conic::{solve_conic_qp, Block, ConicLimits};
use crate::problem::{ContactModel, ContactProblem};

/// ccp-ipm has no parameters of its own.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CcpIpmParams {}

/// The ccp-ipm algorithm: clarabel on the SOCP of the module doc.
#[derive(Debug, Clone)]
pub struct CcpIpm;

/// The ccp-ipm solver: [`CcpIpm`] in the solver shell.
pub type CcpIpmSolver = Shell<CcpIpm>;

impl CcpIpmSolver {
    /// A solver with the given settings (checked).
    pub fn new(settings: SolverSettings) -> Result<Self, SolverError> {
        let id = SolverId::CcpIpm;
        Shell::wrap(id.as_str(), id.model(), settings, CcpIpm)
    }
}

impl Algorithm for CcpIpm {
    fn solve(&mut self, call: SolveCall<'_>) -> Result<SolveReport, SolverError> {
        Ok(interior_point(call.problem, call.settings, call.start))
    }
}

/// Clarabel on the SOCP of the module doc (a problem with contacts).
fn interior_point(
    problem: &ContactProblem,
    settings: &SolverSettings,
    start: Instant,
) -> SolveReport {
    let blocks: Vec<Block> = problem.mu().iter().map(|&mu| Block::IceCream(mu)).collect();
    let limits = ConicLimits {
        tolerance: interior_point_tolerance(settings.tolerance()),
        max_iter: settings.max_iter,
        time_limit: remaining_time(settings.max_time, start),
    };
    let solution = solve_conic_qp(
        &problem.effective_delassus(),
        problem.free_velocity(),
        &blocks,
        limits,
    );
    let (lambda, clarabel_status, iterations) = match solution {
        Ok(s) if all_finite(&s.x) => {
            let k = s.iterations as usize;
            (s.x, unsolved_status(s.status, k), k)
        }
        Ok(s) => (
            DVector::zeros(problem.dim()),
            Some(SolveStatus::NumericalError {
                iteration: s.iterations as usize,
                what: format!("clarabel returned non-finite forces ({:?})", s.status),
            }),
            s.iterations as usize,
        ),
        Err(what) => (
            DVector::zeros(problem.dim()),
            Some(SolveStatus::NumericalError { iteration: 0, what }),
            0,
        ),
    };
    let criteria = model_criteria(
        ContactModel::Ccp,
        problem,
        &lambda,
        &problem.velocity(&lambda),
    );
    let status = clarabel_status.unwrap_or(if passes(&criteria, settings) {
        SolveStatus::Converged
    } else {
        SolveStatus::Stalled {
            iteration: iterations,
        }
    });
    let history = settings
        .record_history
        .then(|| vec![settings.stop.pick(&criteria)]);
    SolveReport::finish(
        problem,
        ContactModel::Ccp,
        settings,
        lambda,
        status,
        iterations,
        start,
        history,
    )
}

/// Builds the solver; it takes no parameters.
pub fn build(
    settings: SolverSettings,
    params: &Map<String, Value>,
) -> Result<Box<dyn ContactSolver>, SolverError> {
    let _: CcpIpmParams = parse_params(SolverId::CcpIpm.as_str(), params)?;
    Ok(Box::new(CcpIpmSolver::new(settings)?))
}
