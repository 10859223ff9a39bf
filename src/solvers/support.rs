//! Small pieces shared by every solver: the model residual each one stops on, the relative
//! step and the stopping rule, the warm-start check and the empty answer.

use std::time::Instant;

use nalgebra::DVector;

use super::{ContactModel, SolveReport, SolveStatus, SolverError, SolverSettings};
use crate::metrics::residuals::{ccp_residual, lcp_residual, ncp_criterion};
use crate::problem::ContactProblem;

/// The residual of a contact model (metrics/residuals.rs), evaluated at `λ` with
/// `c = (G + R) λ + g`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ModelResidual {
    /// NCP criterion (de Saxcé-corrected velocity, ice-cream cone).
    Ncp,
    /// CCP residual (ice-cream cone, uncorrected velocity).
    Ccp,
    /// LCP residual (pyramid, `μ‖c_T‖₁`-corrected velocity).
    Lcp,
}

impl ModelResidual {
    /// The residual at `λ`, given `c`.
    pub(crate) fn eval(
        self,
        problem: &ContactProblem,
        lambda: &DVector<f64>,
        c: &DVector<f64>,
    ) -> f64 {
        match self {
            ModelResidual::Ncp => ncp_criterion(problem, lambda, c),
            ModelResidual::Ccp => ccp_residual(problem, lambda, c),
            ModelResidual::Lcp => lcp_residual(problem, lambda, c),
        }
    }

    /// The contact model whose residual it is.
    pub(crate) fn model(self) -> ContactModel {
        match self {
            ModelResidual::Ncp => ContactModel::Ncp,
            ModelResidual::Ccp => ContactModel::Ccp,
            ModelResidual::Lcp => ContactModel::Lcp,
        }
    }
}

/// `‖λ_{k+1} − λ_k‖ / max(1, ‖λ_k‖)`, the step the `eps_rel` setting bounds.
/// Allocation-free: it runs once per iteration of every solver.
pub(crate) fn relative_step(new: &DVector<f64>, old: &DVector<f64>) -> f64 {
    let squared: f64 = new
        .iter()
        .zip(old.iter())
        .map(|(a, b)| (a - b) * (a - b))
        .sum();
    squared.sqrt() / old.norm().max(1.0)
}

/// The stopping rule every solver shares: converged when the own residual is below
/// `eps_abs`; a stall ([`SolveStatus::Failed`]) when the relative step falls below
/// `eps_rel` first; `None` to go on.
pub(crate) fn stopping_status(
    residual: f64,
    step: f64,
    settings: &SolverSettings,
    iteration: usize,
) -> Option<SolveStatus> {
    if residual <= settings.eps_abs {
        Some(SolveStatus::Converged)
    } else if step <= settings.eps_rel {
        Some(SolveStatus::Failed(format!(
            "stalled at iteration {iteration}: relative step {step:.3e} <= eps_rel \
             with residual {residual:.3e} > eps_abs"
        )))
    } else {
        None
    }
}

/// True when every entry is finite.
pub(crate) fn all_finite(x: &DVector<f64>) -> bool {
    x.iter().all(|v| v.is_finite())
}

/// The frame of every built-in solve, public so that a solver written outside the crate
/// keeps the same conventions: starts the clock, checks the warm start against `problem`
/// (a wrong size is [`SolverError::Problem`]), answers a problem without contacts at once
/// (empty `λ`, converged in 0 iterations, an empty history when `record_history`), and
/// otherwise returns `solve_contacts(start)`, `start` the instant the solve began (for
/// [`SolveReport::finish`]).
pub fn solve_checked(
    problem: &ContactProblem,
    warm_start: Option<&DVector<f64>>,
    record_history: bool,
    solve_contacts: impl FnOnce(Instant) -> Result<SolveReport, SolverError>,
) -> Result<SolveReport, SolverError> {
    let start = Instant::now();
    if let Some(lambda0) = warm_start {
        problem.check_lambda(lambda0)?;
    }
    if problem.num_contacts() == 0 {
        return Ok(empty_report(problem, start, record_history));
    }
    solve_contacts(start)
}

/// The answer to a problem with zero contacts: empty `λ`, converged in 0 iterations.
fn empty_report(problem: &ContactProblem, start: Instant, record_history: bool) -> SolveReport {
    SolveReport::finish(
        problem,
        DVector::zeros(0),
        SolveStatus::Converged,
        0,
        0.0,
        start,
        record_history.then(Vec::new),
    )
}
