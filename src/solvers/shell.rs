//! The solver shell: what every solver has besides its algorithm, in one place.
//!
//! A solver is a name, the contact model it solves, its shared [`SolverSettings`] and an
//! algorithm with its own parameters and kept state. [`Shell`] holds the first three and
//! implements [`ContactSolver`] for any [`Algorithm`]:
//!
//! - the settings are validated when the shell is made and whenever they change
//!   ([`ContactSolver::set_settings`] refuses an invalid value and keeps the old one);
//! - every solve goes through [`super::solve_checked`]: the clock starts, the settings
//!   and the warm start are checked against the problem (a wrong size or a non-finite
//!   entry is a [`SolverError`]), a problem without contacts is answered at once, and
//!   only then is the algorithm called, with a [`SolveCall`] carrying the problem, the
//!   warm start, the settings, the model and the starting instant;
//! - a "converged" answer is judged by the ruler before it is reported
//!   ([`super::support::judged_by_ruler`]): the criterion of the model (on the problem
//!   with the compliance the model adds, [`Algorithm::model_compliance`]) is computed
//!   again from the returned `λ`, and an answer that fails it is
//!   [`SolveStatus::RefutedByRuler`], whatever the algorithm's own test said;
//! - [`ContactSolver::reset`] forwards to [`Algorithm::reset`] (forget ρ, a factor).
//!
//! Every built-in solver is a `Shell` around its algorithm (`ncp-admm` is
//! `Shell<Admm<true>>`), so a solver file holds its algorithm and its parameters only. A
//! user's algorithm, in any crate, goes in the same shell and is then run, checked and
//! judged exactly like the built-in ones (`user-solver/` in the repository is such a
//! crate; the doc of [`ContactSolver`] has a complete example). The loop helpers an
//! algorithm needs (the model's criteria, the shared stopping test, the test of an
//! iterate) are in [`super::support`].

use std::borrow::Cow;
use std::time::Instant;

use nalgebra::DVector;

use super::support::{replace_settings, solve_checked_soft};
use super::{ContactSolver, SolveReport, SolveStatus, SolverError, SolverSettings};
use crate::problem::{ContactModel, ContactProblem};

/// A solver's algorithm: its iteration, its own parameters and what it keeps between
/// solves. Wrapped in a [`Shell`], it is a [`ContactSolver`].
pub trait Algorithm: Send {
    /// Solves `call.problem`, which has at least one contact; the settings and the warm
    /// start (a `3n` vector of finite forces, when given) have been checked. Returns the
    /// report of the answer, usually through [`SolveCall::finish`]; non-convergence is a
    /// [`SolveStatus`], an error is for input the algorithm cannot take.
    fn solve(&mut self, call: SolveCall<'_>) -> Result<SolveReport, SolverError>;

    /// Forgets what was kept from previous solves (ρ, factorizations). Default: nothing
    /// is kept.
    fn reset(&mut self) {}

    /// The compliance (`3n`, `≥ 0`) that this algorithm's model adds to `problem`, when
    /// the model is softer than the problem (ccp-newton's soft CCP, `α diag(G + R)`): the
    /// ruler judges its answers on the problem with that compliance. Default: none, the
    /// answers are judged on the problem as given.
    fn model_compliance(&self, _problem: &ContactProblem) -> Option<DVector<f64>> {
        None
    }
}

/// One solve, as the [`Shell`] hands it to its [`Algorithm`].
#[derive(Debug, Clone, Copy)]
pub struct SolveCall<'a> {
    /// The problem (at least one contact).
    pub problem: &'a ContactProblem,
    /// The warm start, checked against the problem.
    pub warm_start: Option<&'a DVector<f64>>,
    /// The solver's settings, validated.
    pub settings: &'a SolverSettings,
    /// The contact model the solver solves: its criteria stop the solve and are reported.
    pub model: ContactModel,
    /// When the solve began (for `max_time` and the reported solve time).
    pub start: Instant,
}

impl SolveCall<'_> {
    /// The first iterate: the warm start, or zero forces.
    pub fn initial_forces(&self) -> DVector<f64> {
        self.warm_start
            .cloned()
            .unwrap_or_else(|| DVector::zeros(self.problem.dim()))
    }

    /// The report of `lambda` after `iterations` ([`SolveReport::finish`] with this
    /// call's problem, model, settings and start).
    pub fn finish(
        &self,
        lambda: DVector<f64>,
        status: SolveStatus,
        iterations: usize,
        history: Option<Vec<f64>>,
    ) -> SolveReport {
        SolveReport::finish(
            self.problem,
            self.model,
            self.settings,
            lambda,
            status,
            iterations,
            self.start,
            history,
        )
    }
}

/// A [`ContactSolver`] made of a name, a model, validated settings and an [`Algorithm`]
/// (module doc).
#[derive(Debug, Clone)]
pub struct Shell<A> {
    name: Cow<'static, str>,
    model: ContactModel,
    settings: SolverSettings,
    algorithm: A,
}

impl<A: Algorithm> Shell<A> {
    /// The solver `name` of `model` running `algorithm` at `settings`, which are
    /// validated first ([`SolverSettings::validate`]).
    pub fn wrap(
        name: impl Into<Cow<'static, str>>,
        model: ContactModel,
        settings: SolverSettings,
        algorithm: A,
    ) -> Result<Self, SolverError> {
        settings.validate()?;
        Ok(Self {
            name: name.into(),
            model,
            settings,
            algorithm,
        })
    }

    /// The algorithm, with its parameters and kept state.
    pub fn algorithm(&self) -> &A {
        &self.algorithm
    }

    /// The algorithm, mutable (e.g. to take what it kept of its last solve).
    pub fn algorithm_mut(&mut self) -> &mut A {
        &mut self.algorithm
    }

    /// The solver as the runners' boxed form.
    pub fn boxed(self) -> Box<dyn ContactSolver>
    where
        A: 'static,
    {
        Box::new(self)
    }
}

impl<A: Algorithm> ContactSolver for Shell<A> {
    fn name(&self) -> &str {
        &self.name
    }

    fn model(&self) -> ContactModel {
        self.model
    }

    fn settings(&self) -> &SolverSettings {
        &self.settings
    }

    fn set_settings(&mut self, settings: SolverSettings) -> Result<(), SolverError> {
        replace_settings(&mut self.settings, settings)
    }

    fn solve(
        &mut self,
        problem: &ContactProblem,
        warm_start: Option<&DVector<f64>>,
    ) -> Result<SolveReport, SolverError> {
        let (model, settings, algorithm) = (self.model, &self.settings, &mut self.algorithm);
        let compliance = algorithm.model_compliance(problem);
        solve_checked_soft(
            problem,
            compliance.as_ref(),
            model,
            settings,
            warm_start,
            |start| {
                algorithm.solve(SolveCall {
                    problem,
                    warm_start,
                    settings,
                    model,
                    start,
                })
            },
        )
    }

    fn reset(&mut self) {
        self.algorithm.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::generators::single_contact;
    use nalgebra::{DMatrix, Matrix3, Vector3};

    /// Counts its calls and resets; answers zero forces.
    #[derive(Default)]
    struct Counting {
        solves: usize,
        resets: usize,
    }

    impl Algorithm for Counting {
        fn solve(&mut self, call: SolveCall<'_>) -> Result<SolveReport, SolverError> {
            self.solves += 1;
            Ok(call.finish(call.initial_forces(), SolveStatus::MaxIterations, 1, None))
        }
        fn reset(&mut self) {
            self.resets += 1;
        }
    }

    fn counting(settings: SolverSettings) -> Result<Shell<Counting>, SolverError> {
        Shell::wrap("counting", ContactModel::Ncp, settings, Counting::default())
    }

    #[test]
    fn the_shell_validates_settings_when_made_and_changed() {
        let bad = SolverSettings {
            over_relaxation: 2.0,
            ..SolverSettings::default()
        };
        assert!(counting(bad.clone()).is_err());
        let Ok(mut solver) = counting(SolverSettings::default()) else {
            panic!("default settings are valid");
        };
        assert!(solver.set_settings(bad).is_err());
        assert_eq!(solver.settings(), &SolverSettings::default());
        assert_eq!(
            (solver.name(), solver.model()),
            ("counting", ContactModel::Ncp)
        );
    }

    #[test]
    fn the_algorithm_sees_only_checked_problems_with_contacts() {
        let Ok(mut solver) = counting(SolverSettings::default()) else {
            panic!("default settings are valid");
        };
        let Ok(p) = single_contact(0.5, Matrix3::identity(), Vector3::new(0.0, 0.0, -1.0)) else {
            panic!("valid problem");
        };
        // A warm start of the wrong size is refused before the algorithm runs.
        assert!(solver.solve(&p, Some(&DVector::zeros(2))).is_err());
        assert_eq!(solver.algorithm().solves, 0);
        // No contacts: answered by the shell, converged in 0 iterations.
        let Ok(empty) = ContactProblem::new(
            DMatrix::zeros(0, 0),
            DVector::zeros(0),
            DVector::zeros(0),
            None,
        ) else {
            panic!("zero contacts is a valid problem");
        };
        let Ok(report) = solver.solve(&empty, None) else {
            panic!("solves");
        };
        assert_eq!(
            (report.status, report.iterations),
            (SolveStatus::Converged, 0)
        );
        assert_eq!(solver.algorithm().solves, 0);
        let Ok(report) = solver.solve(&p, None) else {
            panic!("solves");
        };
        assert_eq!(report.status, SolveStatus::MaxIterations);
        assert_eq!(solver.algorithm().solves, 1);
        solver.reset();
        assert_eq!(solver.algorithm().resets, 1);
    }
}
