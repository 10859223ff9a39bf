//! When a measurement cannot decide a claim: the computed reasons of the verdict "not
//! measurable here" ([`super::claims::Verdict::NotMeasurable`]). Each function returns
//! the reason, with its numbers, or `None` when the measurement can decide.

use crate::simulation::recorder::RunRecord;
use crate::solvers::SolveStatus;

use super::claims::num;
use super::runs::solved_steps;

/// A value at most this fraction of its scale is round-off (a double's 2.2e-16
/// accumulated over some thousand steps stays below it).
pub const ROUND_OFF: f64 = 1e-10;

/// A run whose steps with contacts ended at the iteration cap this often measures its
/// cap, not its tolerance.
pub const CAPPED_SHARE: f64 = 0.5;

/// The reasons given, joined; `None` when there is none.
pub fn any(reasons: impl IntoIterator<Item = Option<String>>) -> Option<String> {
    let all: Vec<String> = reasons.into_iter().flatten().collect();
    (!all.is_empty()).then(|| all.join("; "))
}

/// `label` and `reference` went through exactly the same states: the error between them
/// is 0 by construction, whatever the tolerance.
pub fn identical(label: &str, run: &RunRecord, reference: &RunRecord) -> Option<String> {
    let same = run.steps.len() == reference.steps.len()
        && run
            .steps
            .iter()
            .zip(&reference.steps)
            .all(|(a, b)| a.q == b.q && a.v == b.v);
    same.then(|| {
        format!(
            "{label}: run and reference identical at all {} steps ({} ended at the cap)",
            run.steps.len(),
            capped_share_text(run)
        )
    })
}

/// Steps with contacts, and those that ended at the iteration cap.
pub fn capped_steps(record: &RunRecord) -> (usize, usize) {
    let with_contacts: Vec<_> = solved_steps(record)
        .iter()
        .filter(|s| !s.contacts.is_empty())
        .collect();
    let capped = with_contacts
        .iter()
        .filter(|s| matches!(s.solver_status, Some(SolveStatus::MaxIterations)))
        .count();
    (capped, with_contacts.len())
}

fn capped_share_text(record: &RunRecord) -> String {
    let (capped, steps) = capped_steps(record);
    format!("{capped} of {steps} steps")
}

/// `label` ended at the iteration cap on at least [`CAPPED_SHARE`] of its steps with
/// contacts: it measures the cap, not the tolerance.
pub fn capped(label: &str, record: &RunRecord) -> Option<String> {
    let (capped, steps) = capped_steps(record);
    (steps > 0 && capped as f64 >= CAPPED_SHARE * steps as f64)
        .then(|| format!("{label}: iteration cap reached on {capped} of {steps} steps"))
}

/// A tolerance at least as large as the quantity it bounds (`signal`, same unit): the
/// solver may stop before it does anything.
pub fn tolerance_above_signal(
    label: &str,
    tolerance: f64,
    signal: f64,
    unit: &str,
) -> Option<String> {
    (tolerance >= signal).then(|| {
        format!(
            "{label}: tolerance {} {unit} above the contact impulse it bounds ({} {unit})",
            num(tolerance),
            num(signal)
        )
    })
}

/// Every value is at most [`ROUND_OFF`] of `scale`: comparing them compares round-off.
pub fn round_off(label: &str, values: &[f64], scale: f64) -> Option<String> {
    (!values.is_empty() && values.iter().all(|v| v.abs() <= ROUND_OFF * scale.abs())).then(|| {
        format!(
            "{label}: {} at round-off (≤ {} of the scale {})",
            values
                .iter()
                .map(|v| num(*v))
                .collect::<Vec<_>>()
                .join(", "),
            num(ROUND_OFF),
            num(scale)
        )
    })
}

/// Every value meets the tolerance `tolerance` the solvers were asked for: which one is
/// smaller is decided below what was asked.
pub fn below_tolerance(label: &str, values: &[f64], tolerance: f64) -> Option<String> {
    (!values.is_empty() && values.iter().all(|v| *v <= tolerance)).then(|| {
        format!(
            "{label}: {} all within the tolerance {} asked of the solvers",
            values
                .iter()
                .map(|v| num(*v))
                .collect::<Vec<_>>()
                .join(", "),
            num(tolerance)
        )
    })
}

/// The median over the run's steps with contacts of the largest contact impulse
/// component `max_i ‖λ_i‖∞` (N·s): the signal a tolerance on impulses must stay below.
pub fn median_largest_impulse(record: &RunRecord) -> f64 {
    let mut v: Vec<f64> = solved_steps(record)
        .iter()
        .filter(|s| !s.contacts.is_empty())
        .map(|s| {
            s.contacts
                .iter()
                .flat_map(|c| c.lambda)
                .map(f64::abs)
                .fold(0.0, f64::max)
        })
        .collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_name_their_numbers() {
        assert_eq!(any([None, None]), None);
        let r = tolerance_above_signal("ε = 1e-2", 1e-2, 2.45e-3, "N·s").expect("above");
        assert!(r.contains("0.01 N·s") && r.contains("0.00245 N·s"), "{r}");
        assert!(tolerance_above_signal("x", 1e-4, 2.45e-3, "N·s").is_none());
        assert!(round_off("d", &[1e-13, 2.7e-13], 0.127).is_some());
        assert!(round_off("d", &[1e-13, 0.02], 0.127).is_none());
        assert_eq!(
            any([Some("a".into()), None, Some("b".into())]).as_deref(),
            Some("a; b")
        );
    }
}
