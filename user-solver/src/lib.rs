//! A user's own contact solver, in its own crate, through contactbench's public API only
//! (no change to contactbench): a damped projected Jacobi method on the NCP.
//!
//! Every contact is updated from the same velocity `c = (G + R) λ + g` (unlike
//! Gauss-Seidel, which uses the newest forces), with the horizontal projection of the
//! paper's Alg. 5 and a damping factor `d ∈ ]0, 1]`:
//!
//! ```text
//! λ_i ← proj_h(λ_i − d / max diag(G_ii) · c_i)      for every contact i, c = (G + R) λ + g
//! ```
//!
//! The algorithm is an [`Algorithm`]; contactbench's solver [`Shell`] gives it a name, a
//! model, validated settings, the warm-start check and the answer to a problem without
//! contacts, and makes it a [`ContactSolver`]. Its loop uses the functions every built-in
//! solver uses ([`contactbench::solvers::support`]: the model's criteria, the shared
//! stopping test, the test of an iterate), so its answers are judged like theirs. A
//! [`UserSolver`] from [`factory`] runs it wherever a built-in solver runs: a scenario, a
//! sweep, a batch and its report, the paper's solver comparisons (`tests/runners.rs`).
//!
//! ```
//! use contactbench::problem::generators::random_problem;
//! use contactbench::solvers::{ContactSolver, SolverSettings};
//!
//! let problem = random_problem(5, 3, 18)?;
//! let settings = SolverSettings { max_iter: 5000, ..SolverSettings::default() };
//! let mut solver = user_solver::solver(settings, 0.3)?;
//! let report = solver.solve(&problem, None)?;
//! assert_eq!(solver.name(), "jacobi-ncp");
//! assert!(report.status.is_converged(), "{}", report.status);
//! // Judged by contactbench's metrics like any built-in solver's answer.
//! let judged = contactbench::metrics::compute_metrics(&problem, &report.lambda);
//! assert!(judged.relative_criterion <= 1e-6, "{}", judged.relative_criterion);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use contactbench::problem::{cones, contact_vector, set_contact_vector, ContactModel};
use contactbench::simulation::UserSolver;
use contactbench::solvers::support::{
    iterate_status, model_criteria, relative_step, stopping_status,
};
use contactbench::solvers::{
    Algorithm, ContactSolver, Shell, SolveCall, SolveReport, SolveStatus, SolverError,
    SolverSettings,
};

/// The solver's name, in reports and results directories.
pub const NAME: &str = "jacobi-ncp";

/// Damped projected Jacobi on the NCP (crate doc).
#[derive(Debug, Clone)]
pub struct JacobiNcp {
    damping: f64,
}

impl JacobiNcp {
    /// The method with damping `d`, refused outside `]0, 1]`.
    pub fn new(damping: f64) -> Result<Self, SolverError> {
        if !(damping > 0.0 && damping <= 1.0) {
            return Err(SolverError::InvalidParameter {
                solver: NAME.into(),
                message: format!("damping = {damping}: must lie in ]0, 1]"),
            });
        }
        Ok(Self { damping })
    }

    /// Its damping.
    pub fn damping(&self) -> f64 {
        self.damping
    }
}

impl Algorithm for JacobiNcp {
    fn solve(&mut self, call: SolveCall<'_>) -> Result<SolveReport, SolverError> {
        let (problem, settings) = (call.problem, call.settings);
        let mut lambda = call.initial_forces();
        let blocks: Vec<_> = (0..problem.num_contacts())
            .map(|i| problem.diagonal_block(i))
            .collect();
        let mut previous = lambda.clone();
        for iteration in 1..=settings.max_iter {
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
                return Ok(call.finish(previous, status, iteration, None));
            }
            // The built-in solvers' stopping test (`stop`, `eps_rel`/`eps_abs`,
            // `eps_step`, `max_time`) on the NCP's criteria.
            let criteria = model_criteria(call.model, problem, &lambda, &problem.velocity(&lambda));
            let step = relative_step(&lambda, &previous);
            if let Some(status) = stopping_status(&criteria, step, settings, iteration, call.start)
            {
                return Ok(call.finish(lambda, status, iteration, None));
            }
        }
        Ok(call.finish(lambda, SolveStatus::MaxIterations, settings.max_iter, None))
    }
}

/// The solver: [`JacobiNcp`] with damping `damping` in contactbench's solver shell, on
/// the NCP, at `settings` (both checked).
pub fn solver(settings: SolverSettings, damping: f64) -> Result<Shell<JacobiNcp>, SolverError> {
    Shell::wrap(NAME, ContactModel::Ncp, settings, JacobiNcp::new(damping)?)
}

/// The solver as the runners take it: a fresh [`solver`] at whatever settings a runner
/// asks for (a tolerance sweep or a paper experiment changes them).
pub fn factory(settings: SolverSettings, damping: f64) -> UserSolver {
    UserSolver::new(NAME, settings, move |settings| {
        let solver: Box<dyn ContactSolver> = solver(settings, damping)?.boxed();
        Ok(solver)
    })
}
