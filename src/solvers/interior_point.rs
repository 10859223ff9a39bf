//! What the interior-point solvers (ccp-ipm, lcp-qp, the staggered projections' sub-problems)
//! share over the conic program of [`crate::problem::conic`]: clarabel's status as a
//! [`SolveStatus`], clarabel's tolerance for a solver's target and the time left.

use clarabel::solver::SolverStatus;

use super::SolveStatus;

/// Clarabel's status as a [`SolveStatus`]: `None` when solved (the caller then applies
/// its own stopping test); `iteration` is the caller's iteration (an outer loop's, or
/// clarabel's own count). A certified unboundedness (the only infeasibility that
/// [`crate::problem::conic::solve_conic_qp`] lets through) is [`SolveStatus::Infeasible`]: the QP is the model.
pub(crate) fn unsolved_status(status: SolverStatus, iteration: usize) -> Option<SolveStatus> {
    match status {
        SolverStatus::Solved | SolverStatus::AlmostSolved => None,
        SolverStatus::MaxIterations => Some(SolveStatus::MaxIterations),
        SolverStatus::MaxTime => Some(SolveStatus::MaxTime),
        SolverStatus::DualInfeasible => Some(SolveStatus::Infeasible),
        SolverStatus::InsufficientProgress => Some(SolveStatus::Stalled { iteration }),
        other => Some(SolveStatus::NumericalError {
            iteration,
            what: format!("clarabel: {other:?}"),
        }),
    }
}

/// [`unsolved_status`] for a QP that is a step of a solver's method, not its model (the
/// staggered projections' sub-problems, lcp-qp's shifted QPs): a certified unbounded QP
/// proves that the method cannot go on, not that the contact problem has no solution.
pub(crate) fn unsolved_step_status(status: SolverStatus, iteration: usize) -> Option<SolveStatus> {
    match status {
        SolverStatus::DualInfeasible => Some(SolveStatus::NumericalError {
            iteration,
            what: "a QP of the method is unbounded below (clarabel's certificate checked); \
                   the contact problem may still have a solution"
                .into(),
        }),
        other => unsolved_status(other, iteration),
    }
}

/// Clarabel's gap/feasibility tolerance for a target tolerance on the solver's criterion:
/// a thousandth of it, kept within `[1e-12, 1e-8]` (clarabel's default is `1e-8`).
pub(crate) fn interior_point_tolerance(target: f64) -> f64 {
    (1e-3 * target).clamp(1e-12, 1e-8)
}

/// The remaining wall time of `max_time` since `start`, for clarabel's time limit.
pub(crate) fn remaining_time(max_time: Option<f64>, start: std::time::Instant) -> Option<f64> {
    max_time.map(|t| (t - start.elapsed().as_secs_f64()).max(0.0))
}
