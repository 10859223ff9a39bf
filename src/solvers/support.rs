//! The pieces of a solver loop that every solver shares, in one place (docs/ruler.md):
//! the criteria of the solver's model, the relative step, the stopping test, the test of
//! an iterate, the warm-start check and the empty answer. A solver written outside the
//! crate uses the same functions, so that its answers are judged like the built-in ones.
//!
//! One iteration of a solver reads:
//!
//! ```text
//! x_k ← update(x_{k−1})                         (the algorithm)
//! iterate_status(λ_k, k)?                       (NaN/inf → NumericalError, huge → Diverged)
//! criteria ← model_criteria(model, p, λ_k, c_k) (relative and absolute, metrics/residuals.rs)
//! stopping_status(criteria, relative_step(x_k, x_{k−1}), settings, k, start)?
//! ```
//!
//! and a warm start is returned at once (0 iterations) only when
//! [`passes`] holds: the same test as a converged iterate. [`solve_checked`] frames the
//! solve (settings and warm start checked, no-contact answer) and has every "converged"
//! judged by the ruler ([`judged_by_ruler`]: the model's criterion computed again from the
//! returned `λ`; a solver whose own test passed on an answer the ruler refutes reports
//! [`SolveStatus::RefutedByRuler`]), [`SolveReport::finish`] assembles the report with
//! both criteria measured by the metrics module, and [`replace_settings`] is the body of
//! `set_settings`. `tests/solvers/user.rs` is a solver
//! written with these functions alone.

use std::time::Instant;

use nalgebra::DVector;

use super::{SolveReport, SolveStatus, SolverError, SolverSettings};
pub use crate::metrics::residuals::{model_criteria, Criteria};
use crate::problem::{ContactModel, ContactProblem, MAGNITUDE_LIMIT};

/// `‖x_k − x_{k−1}‖ / ‖x_{k−1}‖` (Euclidean), the step the `eps_step` setting bounds;
/// 0 when both are zero, very large when only `x_{k−1}` is. Invariant to the unit of
/// `x`. Allocation-free: it runs once per iteration of every solver.
pub fn relative_step(new: &DVector<f64>, old: &DVector<f64>) -> f64 {
    let squared: f64 = new
        .iter()
        .zip(old.iter())
        .map(|(a, b)| (a - b) * (a - b))
        .sum();
    squared.sqrt() / old.norm().max(f64::MIN_POSITIVE)
}

/// The stopping test every solver shares, after iteration `iteration`:
/// - the tested criterion (`settings.stop`) NaN: [`SolveStatus::NumericalError`];
/// - at most its tolerance: [`SolveStatus::Converged`];
/// - the relative step at most `eps_step`: [`SolveStatus::Stalled`];
/// - `max_time` elapsed since `start`: [`SolveStatus::MaxTime`];
/// - otherwise `None` (go on; [`SolveStatus::MaxIterations`] after the last iteration is
///   the caller's).
pub fn stopping_status(
    criteria: &Criteria,
    step: f64,
    settings: &SolverSettings,
    iteration: usize,
    start: Instant,
) -> Option<SolveStatus> {
    let tested = settings.stop.pick(criteria);
    if tested.is_nan() {
        Some(SolveStatus::NumericalError {
            iteration,
            what: format!("the {} criterion is not a number", settings.stop),
        })
    } else if tested <= settings.tolerance() {
        Some(SolveStatus::Converged)
    } else if step <= settings.eps_step {
        Some(SolveStatus::Stalled { iteration })
    } else if out_of_time(settings, start) {
        Some(SolveStatus::MaxTime)
    } else {
        None
    }
}

/// True when `max_time` is set and has elapsed since `start`.
pub fn out_of_time(settings: &SolverSettings, start: Instant) -> bool {
    settings
        .max_time
        .is_some_and(|t| start.elapsed().as_secs_f64() >= t)
}

/// The instant `max_time` after `start`, for the inner loops that check the clock
/// (factorizations, line searches); `None` without `max_time` (or beyond the clock's
/// range).
pub fn deadline(settings: &SolverSettings, start: Instant) -> Option<Instant> {
    settings
        .max_time
        .and_then(|t| start.checked_add(std::time::Duration::try_from_secs_f64(t).ok()?))
}

/// True when `criteria` pass the tolerance of the tested criterion (`stop`): the test
/// of convergence, and the only condition under which a solver may return a warm start
/// after 0 iterations.
pub fn passes(criteria: &Criteria, settings: &SolverSettings) -> bool {
    settings.stop.pick(criteria) <= settings.tolerance()
}

/// The test of an iterate `x` after iteration `iteration`: a non-finite entry is a
/// [`SolveStatus::NumericalError`], an entry beyond [`MAGNITUDE_LIMIT`] a
/// [`SolveStatus::Diverged`]; `None` when it is usable. `what` names the iterate.
pub fn iterate_status(x: &DVector<f64>, iteration: usize, what: &str) -> Option<SolveStatus> {
    if !x.iter().all(|v| v.is_finite()) {
        Some(SolveStatus::NumericalError {
            iteration,
            what: format!("non-finite {what}"),
        })
    } else if x.amax() > MAGNITUDE_LIMIT {
        Some(SolveStatus::Diverged { iteration })
    } else {
        None
    }
}

/// Validates `new` and, when valid, puts it in `current`: the body of every
/// [`super::ContactSolver::set_settings`], so that no solver runs with settings that
/// were not checked.
pub fn replace_settings(
    current: &mut SolverSettings,
    new: SolverSettings,
) -> Result<(), SolverError> {
    new.validate()?;
    *current = new;
    Ok(())
}

/// True when every entry is finite.
pub fn all_finite(x: &DVector<f64>) -> bool {
    x.iter().all(|v| v.is_finite())
}

/// The frame of every built-in solve, public so that a solver written outside the crate
/// keeps the same conventions: starts the clock, checks the warm start against `problem`
/// (a wrong size, a non-finite or too large entry is [`SolverError::Problem`]), answers
/// a problem without contacts at once (empty `λ`, converged in 0 iterations, an empty
/// history when `record_history`), and otherwise returns `solve_contacts(start)`, `start`
/// the instant the solve began (for [`SolveReport::finish`]), judged by the ruler
/// ([`judged_by_ruler`]): "converged" only if the model's criterion passes.
pub fn solve_checked(
    problem: &ContactProblem,
    model: ContactModel,
    settings: &SolverSettings,
    warm_start: Option<&DVector<f64>>,
    solve_contacts: impl FnOnce(Instant) -> Result<SolveReport, SolverError>,
) -> Result<SolveReport, SolverError> {
    solve_checked_soft(problem, None, model, settings, warm_start, solve_contacts)
}

/// [`solve_checked`] for a solver whose model adds `model_compliance` (`3n`, `≥ 0`) to
/// the problem ([`super::Algorithm::model_compliance`]): its answers are judged on the
/// problem with that compliance.
pub fn solve_checked_soft(
    problem: &ContactProblem,
    model_compliance: Option<&DVector<f64>>,
    model: ContactModel,
    settings: &SolverSettings,
    warm_start: Option<&DVector<f64>>,
    solve_contacts: impl FnOnce(Instant) -> Result<SolveReport, SolverError>,
) -> Result<SolveReport, SolverError> {
    let start = Instant::now();
    settings.validate()?;
    if let Some(lambda0) = warm_start {
        problem.check_lambda(lambda0)?;
    }
    if problem.num_contacts() == 0 {
        return Ok(SolveReport::finish(
            problem,
            model,
            settings,
            DVector::zeros(0),
            SolveStatus::Converged,
            0,
            start,
            settings.record_history.then(Vec::new),
        ));
    }
    let report = solve_contacts(start)?;
    let mut judged = judged_by_ruler(report, problem, model_compliance, model, settings)?;
    judged.solve_time = start.elapsed();
    Ok(judged)
}

/// The ruler's verdict on a report whose status is [`SolveStatus::Converged`]: the
/// velocity and both criteria of `model` are computed again from the report's `λ` (on
/// the problem with `model_compliance` added, for a soft model), whatever the solver
/// computed, and the status becomes [`SolveStatus::RefutedByRuler`] when the tested
/// criterion is above its tolerance, [`SolveStatus::NumericalError`] when it is not a
/// number. The report then carries the ruler's criteria and `c = (G + R)λ + g` of
/// `problem`. Other statuses are not claims and are returned as they are. A `λ` of the
/// wrong size, or a compliance that does not fit the problem, is an error (whatever the
/// status).
pub fn judged_by_ruler(
    mut report: SolveReport,
    problem: &ContactProblem,
    model_compliance: Option<&DVector<f64>>,
    model: ContactModel,
    settings: &SolverSettings,
) -> Result<SolveReport, SolverError> {
    if report.lambda.len() != problem.dim() {
        return Err(SolverError::Problem(crate::problem::ProblemError::Size {
            field: "lambda",
            expected: problem.dim().to_string(),
            got: report.lambda.len().to_string(),
        }));
    }
    if !report.status.is_converged() {
        return Ok(report);
    }
    let velocity = problem.velocity(&report.lambda);
    let criteria = match model_compliance {
        None => model_criteria(model, problem, &report.lambda, &velocity),
        Some(extra) => {
            let soft = problem.with_added_compliance(extra)?;
            model_criteria(model, &soft, &report.lambda, &soft.velocity(&report.lambda))
        }
    };
    let tested = settings.stop.pick(&criteria);
    report.status = if tested.is_nan() {
        SolveStatus::NumericalError {
            iteration: report.iterations,
            what: format!("the ruler's {} criterion is not a number", settings.stop),
        }
    } else if tested <= settings.tolerance() {
        SolveStatus::Converged
    } else {
        SolveStatus::RefutedByRuler
    };
    report.velocity = velocity;
    report.criteria = criteria;
    report.residual = tested;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn criteria(relative: f64) -> Criteria {
        Criteria {
            relative,
            absolute: 1.0,
        }
    }

    #[test]
    fn nan_is_never_converged() {
        let settings = SolverSettings::default();
        let status = stopping_status(&criteria(f64::NAN), 0.0, &settings, 3, Instant::now());
        assert!(matches!(
            status,
            Some(SolveStatus::NumericalError { iteration: 3, .. })
        ));
        assert!(!passes(&criteria(f64::NAN), &settings));
    }

    #[test]
    fn the_tested_criterion_decides() {
        let settings = SolverSettings::default();
        let start = Instant::now();
        // relative 1e-7 ≤ eps_rel = 1e-6, absolute 1 > eps_abs: relative is tested.
        assert_eq!(
            stopping_status(&criteria(1e-7), 1.0, &settings, 1, start),
            Some(SolveStatus::Converged)
        );
        let absolute = SolverSettings {
            stop: super::super::Criterion::Absolute,
            ..settings.clone()
        };
        assert_eq!(
            stopping_status(&criteria(1e-7), 1.0, &absolute, 1, start),
            None
        );
        assert_eq!(
            stopping_status(&criteria(1e-7), 1e-11, &absolute, 4, start),
            Some(SolveStatus::Stalled { iteration: 4 })
        );
    }

    #[test]
    fn relative_step_is_unit_free() {
        let old = DVector::from_vec(vec![1.0, 2.0]);
        let new = DVector::from_vec(vec![1.0, 2.5]);
        let step = relative_step(&new, &old);
        let scaled = relative_step(&(&new * 1e-3), &(&old * 1e-3));
        assert!((step - scaled).abs() <= 1e-15 * step);
        assert_eq!(relative_step(&DVector::zeros(2), &DVector::zeros(2)), 0.0);
    }

    #[test]
    fn iterates_beyond_the_limit_diverge_and_nan_is_an_error() {
        let huge = DVector::from_vec(vec![0.0, 1e200]);
        assert_eq!(
            iterate_status(&huge, 7, "forces"),
            Some(SolveStatus::Diverged { iteration: 7 })
        );
        let nan = DVector::from_vec(vec![f64::NAN, 0.0]);
        assert!(matches!(
            iterate_status(&nan, 2, "forces"),
            Some(SolveStatus::NumericalError { iteration: 2, .. })
        ));
        assert_eq!(iterate_status(&DVector::zeros(2), 1, "forces"), None);
    }
}
