//! The internal-force metric of the paper's figures (Fig. 11, Fig. 13): the **spurious
//! internal force** of an answer, the part of its internal forces that the contact model
//! does not determine and a solver therefore chooses.
//!
//! With `N` an orthonormal basis of `null(Jᵀ)` (forces that change no velocity), it is
//! `S(λ) = ‖Nᵀ(λ − λ°)‖` (N·s), `λ°` the model's answer of least internal force on the
//! step's problem:
//! - **without compliance** (`R = 0`), every `λ + N z` with the same generalized impulse
//!   has the same contact velocity, and `λ°` is the answer of least internal force among
//!   those of the same model at that velocity: `S` is the ruler's
//!   `internal_forces_spurious` (`metrics::internal_force_split`, docs/ruler.md §8);
//! - **with a compliance on every row** (`R ≻ 0`) and the CCP, `G + R ≻ 0` makes the
//!   answer unique: `λ°` is that answer (found by clarabel, `ccp-ipm`, to a relative
//!   criterion of 1e-6 or better), the model leaves nothing for a solver to choose, and
//!   `S` is the internal part of the solver's distance to it. As `R → 0` the unique
//!   answer tends to the answer of least norm, i.e. of least internal force, so both
//!   cases are the same metric;
//! - otherwise (a compliance on some rows only, or a model whose compliant answer need
//!   not be unique: NCP, LCP, RaiSim) the premise fails and the metric is **invalid**
//!   ([`Spurious::Invalid`]), never a number.

use nalgebra::DVector;
use rayon::prelude::*;

use super::runs::{complete, simulate_observed, Run};
use super::PaperError;
use crate::metrics::internal_force_split;
use crate::problem::ContactModel;
use crate::problem::ContactProblem;
use crate::simulation::recorder::RunRecord;
use crate::solvers::SolveStatus;
use crate::solvers::{Criterion, SolverId, SolverSettings, SolverSpec};

/// The relative criterion asked of the unique compliant answer.
const REFERENCE_TOLERANCE: f64 = 1e-10;
/// A stalled answer is kept when its relative criterion is at most this: clarabel stops
/// short of 1e-10 on Fig. 13's Solo-12 at r = 0.1, and 1e-6 of `λ_s` is far below the
/// spurious forces the figures compare (1e-4 of ‖λ‖ and up).
const REFERENCE_ACCEPTED: f64 = 1e-6;

/// The spurious internal force of one answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Spurious {
    /// Its value (N·s).
    Value(f64),
    /// The metric's premise fails on this problem, for the reason given.
    Invalid(String),
}

impl Spurious {
    /// The value, `None` when invalid.
    pub fn value(&self) -> Option<f64> {
        match self {
            Spurious::Value(v) => Some(*v),
            Spurious::Invalid(_) => None,
        }
    }
}

/// The metric's name on the pages.
pub const NAME: &str = "spurious internal force S = ‖Nᵀ(λ − λ°)‖ (docs: src/paper/internal.rs)";

/// `S(λ)` for an answer `λ` of `model` on `problem` (which must carry `J`).
pub fn spurious_internal_force(
    problem: &ContactProblem,
    lambda: &DVector<f64>,
    model: ContactModel,
) -> Spurious {
    let compliance = problem.compliance().filter(|r| r.iter().any(|x| *x != 0.0));
    match compliance {
        None => internal_force_split(problem, lambda, model).map_or_else(
            || Spurious::Invalid("the split's SOCP was not solved".into()),
            |split| Spurious::Value(split.spurious),
        ),
        Some(r) if r.iter().all(|x| *x > 0.0) && model == ContactModel::Ccp => {
            match unique_answer(problem) {
                Ok(reference) => Spurious::Value(internal_part(problem, &(lambda - reference))),
                Err(why) => Spurious::Invalid(why),
            }
        }
        Some(_) if model != ContactModel::Ccp => Spurious::Invalid(format!(
            "compliance with the {model:?} model: its answer need not be unique"
        )),
        Some(_) => Spurious::Invalid("compliance on some rows only".into()),
    }
}

/// A run's record and its spurious internal force at every step with contacts, `(t, S)`.
pub type Observed = (RunRecord, Vec<(f64, Spurious)>);

/// Simulates `runs` (in parallel) with the spurious internal force of every step's answer
/// against `model` (`None`: each run's solver model); a run that stops early is an error.
pub fn simulate_with_spurious(
    runs: &[Run],
    model: Option<ContactModel>,
) -> Vec<Result<Observed, PaperError>> {
    runs.par_iter()
        .map(|run| {
            let model = model.unwrap_or_else(|| {
                run.solver
                    .spec()
                    .map_or(ContactModel::Ncp, |spec| spec.id.model())
            });
            let mut series = Vec::new();
            let record = simulate_observed(run, &mut |step, solution| {
                if let Some((problem, lambda)) = solution {
                    series.push((step.time, spurious_internal_force(problem, lambda, model)));
                }
            })?;
            Ok((complete(record)?, series))
        })
        .collect()
}

/// The valid values of `series` between `from` and `to` (s), and the reasons of the
/// invalid ones (deduplicated).
pub fn window(series: &[(f64, Spurious)], (from, to): (f64, f64)) -> (Vec<f64>, Vec<String>) {
    let mut values = Vec::new();
    let mut invalid: Vec<String> = Vec::new();
    for (_, s) in series.iter().filter(|(t, _)| *t >= from && *t <= to) {
        match s {
            Spurious::Value(v) => values.push(*v),
            Spurious::Invalid(why) => {
                if !invalid.contains(why) {
                    invalid.push(why.clone());
                }
            }
        }
    }
    (values, invalid)
}

/// `‖Nᵀ x‖`: the norm of the part of `x` in `null(Jᵀ)`.
fn internal_part(problem: &ContactProblem, x: &DVector<f64>) -> f64 {
    crate::metrics::internal_forces(problem, x).unwrap_or(f64::NAN)
}

/// The unique answer of the compliant CCP, by clarabel.
fn unique_answer(problem: &ContactProblem) -> Result<DVector<f64>, String> {
    let spec = SolverSpec {
        settings: SolverSettings {
            stop: Criterion::Relative,
            eps_rel: REFERENCE_TOLERANCE,
            ..SolverSettings::default()
        },
        ..SolverSpec::new(SolverId::CcpIpm)
    };
    let mut solver = spec.build().map_err(|e| e.to_string())?;
    let report = solver.solve(problem, None).map_err(|e| e.to_string())?;
    match report.status {
        SolveStatus::Converged => Ok(report.lambda),
        SolveStatus::Stalled { .. } if report.criteria.relative <= REFERENCE_ACCEPTED => {
            Ok(report.lambda)
        }
        other => Err(format!(
            "the unique compliant answer was not found ({other}, relative criterion {:.1e})",
            report.criteria.relative
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DMatrix;

    /// Two contacts on one body moving along z only: `J = [0 0 1 0 0 1]ᵀ`, so pushing
    /// one contact up and the other down is internal.
    fn two_points(compliance: Option<f64>) -> ContactProblem {
        let j = DMatrix::from_row_slice(6, 1, &[0.0, 0.0, 1.0, 0.0, 0.0, 1.0]);
        let g = DVector::from_row_slice(&[0.0, 0.0, -1.0, 0.0, 0.0, -1.0]);
        let r = compliance.map(|r| DVector::from_element(6, r));
        let g_matrix = &j * j.transpose();
        ContactProblem::new(g_matrix, g, DVector::from_element(2, 0.5), r)
            .and_then(|p| p.with_jacobian(j))
            .expect("valid problem")
    }

    #[test]
    fn without_compliance_it_is_the_rulers_spurious_split() {
        let p = two_points(None);
        // λ_N = (0.5, 0.5) stops the body; (0.8, 0.2) has the same Jᵀλ, 0.3·√2 apart.
        let even = DVector::from_row_slice(&[0.0, 0.0, 0.5, 0.0, 0.0, 0.5]);
        let uneven = DVector::from_row_slice(&[0.0, 0.0, 0.8, 0.0, 0.0, 0.2]);
        let s = |l| {
            spurious_internal_force(&p, l, ContactModel::Ccp)
                .value()
                .expect("valid")
        };
        assert!(s(&even) < 1e-9);
        assert!(
            (s(&uneven) - 0.3 * 2f64.sqrt()).abs() < 1e-6,
            "{}",
            s(&uneven)
        );
    }

    #[test]
    fn with_compliance_it_is_the_internal_distance_to_the_unique_answer() {
        let p = two_points(Some(0.1));
        let s = |l| {
            spurious_internal_force(&p, l, ContactModel::Ccp)
                .value()
                .expect("valid")
        };
        // The unique answer is even by symmetry; (0.6, 0.4) is 0.1·√2 from it internally.
        let even = unique_answer(&p).expect("solved");
        assert!((even[2] - even[5]).abs() < 1e-8, "{even}");
        assert!(s(&even) < 1e-8);
        let shifted = &even + DVector::from_row_slice(&[0.0, 0.0, 0.1, 0.0, 0.0, -0.1]);
        assert!(
            (s(&shifted) - 0.1 * 2f64.sqrt()).abs() < 1e-7,
            "{}",
            s(&shifted)
        );
    }

    #[test]
    fn where_the_premise_fails_it_is_invalid() {
        let p = two_points(Some(0.1));
        let l = DVector::from_row_slice(&[0.0, 0.0, 0.5, 0.0, 0.0, 0.5]);
        assert!(matches!(
            spurious_internal_force(&p, &l, ContactModel::Ncp),
            Spurious::Invalid(_)
        ));
    }
}
