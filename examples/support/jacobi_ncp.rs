//! A user's own contact solver, defined outside contactbench through its public API only:
//! a damped projected Jacobi method on the NCP. Every contact is updated from the same
//! velocity `c = (G + R) λ + g` (unlike Gauss-Seidel, which uses the newest forces), with
//! the horizontal projection of Alg. 5 and a damping factor. It uses the loop helpers
//! every built-in solver uses (`contactbench::solvers::support`: the model's criteria,
//! the shared stopping test, the test of an iterate).
//!
//! Shared by `examples/custom_solver.rs`, `examples/user_solver.rs` and
//! `tests/user_solver.rs` (included with `#[path]`).

use std::time::Instant;

use contactbench::problem::{cones, contact_vector, set_contact_vector, ContactProblem};
use contactbench::solvers::support::{
    iterate_status, model_criteria, relative_step, replace_settings, stopping_status,
};
use contactbench::solvers::{
    solve_checked, ContactModel, ContactSolver, SolveReport, SolveStatus, SolverError,
    SolverSettings,
};
use nalgebra::DVector;

/// Damped projected Jacobi on the NCP.
pub struct JacobiNcp {
    /// The shared settings (stopping test, iteration cap).
    pub settings: SolverSettings,
    /// Fraction of the per-contact step taken at once, in `]0, 1]`.
    pub damping: f64,
}

impl ContactSolver for JacobiNcp {
    fn name(&self) -> &str {
        "jacobi-ncp (user)"
    }

    fn model(&self) -> ContactModel {
        ContactModel::Ncp
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
        // The built-in solvers' frame: settings and warm start checked, no-contact
        // problem answered.
        solve_checked(problem, self.model(), &self.settings, warm_start, |start| {
            Ok(self.iterate(problem, warm_start, start))
        })
    }
}

impl JacobiNcp {
    /// The damped Jacobi sweeps, from `warm_start` (zero forces when `None`).
    fn iterate(
        &self,
        problem: &ContactProblem,
        warm_start: Option<&DVector<f64>>,
        start: Instant,
    ) -> SolveReport {
        let mut lambda = warm_start
            .cloned()
            .unwrap_or_else(|| DVector::zeros(problem.dim()));
        let blocks: Vec<_> = (0..problem.num_contacts())
            .map(|i| problem.diagonal_block(i))
            .collect();
        let finish = |lambda, status, iterations| {
            SolveReport::finish(
                problem,
                ContactModel::Ncp,
                &self.settings,
                lambda,
                status,
                iterations,
                start,
                None,
            )
        };
        let mut previous = lambda.clone();
        for iteration in 1..=self.settings.max_iter {
            previous.copy_from(&lambda);
            let c = problem.velocity(&lambda);
            for (i, block) in blocks.iter().enumerate() {
                let li = contact_vector(&lambda, i);
                let ci = contact_vector(&c, i);
                let step = self.damping / block.diagonal().max().max(1e-12);
                let trial = li - ci * step;
                let projected = cones::project_horizontal(problem.mu_of(i), &trial);
                set_contact_vector(&mut lambda, i, &projected);
            }
            // NaN/inf → NumericalError, a runaway iterate → Diverged: return the last
            // usable forces.
            if let Some(status) = iterate_status(&lambda, iteration, "forces") {
                return finish(previous, status, iteration);
            }
            // The same stopping test as the built-in solvers (`stop`, `eps_rel`/`eps_abs`,
            // `eps_step`, `max_time`).
            let criteria = model_criteria(
                ContactModel::Ncp,
                problem,
                &lambda,
                &problem.velocity(&lambda),
            );
            let step = relative_step(&lambda, &previous);
            if let Some(status) = stopping_status(&criteria, step, &self.settings, iteration, start)
            {
                return finish(lambda, status, iteration);
            }
        }
        finish(lambda, SolveStatus::MaxIterations, self.settings.max_iter)
    }
}
