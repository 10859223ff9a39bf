//! How a solver is run in an experiment: our protocol, or ContactBench's.
//!
//! **Ours** is the solver as the project configures it: impulses `λ` (N·s), velocities
//! `c` (m/s), the solver's own stopping test (its model's residual below `eps_abs`, a
//! stall reported as such), and the scenario's warm starts (previous `λ` of each matched
//! contact, and the solver's kept state such as ADMM's ρ).
//!
//! **ContactBench's** (`docs/paper-protocol.md`, read from Simple-Robotics/ContactBench at
//! 76fd04b) differs in what a tolerance means and when a solver stops:
//! - its solvers receive `(G, g/Δt)`, so `λ` is a force (N), `c` an acceleration
//!   (m/s²), and an absolute tolerance `th` bounds `ε_p/Δt`, `ε_d/Δt` and `ε_c/Δt²` in
//!   our units: at Δt = 1 ms, `th = 1e-2` is our `1e-5` on feasibilities and `1e-8` on
//!   complementarity;
//! - a solver stops when that residual is below `th` **or** the relative step
//!   `‖λ_k − λ_{k−1}‖ / ‖λ_{k−1}‖` is below `rel_th`, else at `max_iter`, and the last
//!   iterate is used either way;
//! - the residual is the NCP one for NCP/PGS and for RaiSim (feasibility of `λ` and of
//!   the de Saxcé-corrected velocity, complementarity), the CCP one for CCP/PGS;
//! - RaiSim's relaxation starts at `α = 1` in every solve and decays once per sweep,
//!   `α ← (1 − γ) α_min + γ α`, with the Python bindings' `α_min = 1e-4`, `γ = 0.9`, and
//!   a bisection stopped at `‖Δλ‖∞ < 1e-3` N (here: `1e-3` rad on the angle, the same at
//!   the cube's ≈ 1 N friction forces).
//!
//! [`ContactBenchStop`] runs one of our per-contact solvers (whose sweeps are ContactBench's
//! algorithms) one sweep at a time and applies that stopping test; [`ResetEachSolve`]
//! passes the previous `λ` but resets the solver's own state, as ContactBench does for
//! the ADMM's ρ.

use std::time::Instant;

use nalgebra::DVector;
use serde_json::{Map, Value};

use crate::metrics::residuals::{ccp_contact_residual, ncp_contact_residual, ContactResidual};
use crate::problem::{contact_vector, ContactModel, ContactProblem};
use crate::solvers::support::replace_settings;
use crate::solvers::{
    ContactSolver, Criterion, SolveReport, SolveStatus, SolverError, SolverId, SolverSettings,
    SolverSpec,
};

/// ContactBench's stopping test and iteration cap.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactBenchSettings {
    /// Time step (s), to read `λ` as a force and `c` as an acceleration.
    pub dt: f64,
    /// Absolute tolerance `th` on the force-unit residual.
    pub th: f64,
    /// Tolerance on the relative step (`1e-12` in `cube.py`: effectively off).
    pub rel_th: f64,
    /// Sweeps at most.
    pub max_iter: usize,
}

/// RaiSim's parameters in ContactBench's Python bindings.
pub const RAISIM_ALPHA_MIN: f64 = 1e-4;
/// RaiSim's decay of `α` per sweep in ContactBench's Python bindings.
pub const RAISIM_GAMMA: f64 = 0.9;
/// Bisection tolerance (rad) standing for ContactBench's `1e-3` N.
pub const RAISIM_BISECTION_TOL: f64 = 1e-3;

/// Which residual ContactBench stops a solver on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Residual {
    Ncp,
    Ccp,
}

/// A per-contact solver run sweep by sweep under ContactBench's stopping test.
pub struct ContactBenchStop {
    id: SolverId,
    cb: ContactBenchSettings,
    settings: SolverSettings,
    residual: Residual,
    name: String,
    /// The solver of sweep `k` (one per sweep for RaiSim, whose `α_k` is the same
    /// sequence in every solve; one for all sweeps otherwise), built on first use.
    sweeps: Vec<Box<dyn ContactSolver>>,
}

/// Settings of a solver asked for exactly one sweep from its warm start.
fn one_sweep() -> SolverSettings {
    SolverSettings {
        stop: Criterion::Absolute,
        eps_abs: 0.0,
        eps_step: 0.0,
        max_iter: 1,
        ..SolverSettings::default()
    }
}

fn raisim_params(alpha: f64) -> Map<String, Value> {
    let mut params = Map::new();
    params.insert("alpha".into(), Value::from(alpha));
    params.insert("alpha_min".into(), Value::from(alpha));
    params.insert("bisection_tol".into(), Value::from(RAISIM_BISECTION_TOL));
    params
}

impl ContactBenchStop {
    /// ContactBench's protocol for `id` (NCP/PGS, CCP/PGS, RaiSim).
    pub fn new(id: SolverId, cb: ContactBenchSettings) -> Result<Self, SolverError> {
        let residual = match id {
            SolverId::NcpPgs | SolverId::Raisim | SolverId::RaisimCorrected => Residual::Ncp,
            SolverId::CcpPgs => Residual::Ccp,
            other => {
                return Err(SolverError::InvalidSpec {
                    spec: other.to_string(),
                    message: "ContactBench's sweep-by-sweep stopping test applies to the \
                              per-contact solvers of Tab. IV (ncp-pgs, ccp-pgs, raisim)"
                        .into(),
                })
            }
        };
        let sweeps = vec![Self::build_sweep(id, 1.0)?];
        Ok(Self {
            id,
            cb,
            settings: SolverSettings {
                stop: Criterion::Absolute,
                eps_abs: cb.th,
                eps_step: cb.rel_th,
                max_iter: cb.max_iter,
                ..SolverSettings::default()
            },
            residual,
            name: format!("{id} (ContactBench stop)"),
            sweeps,
        })
    }

    fn build_sweep(id: SolverId, alpha: f64) -> Result<Box<dyn ContactSolver>, SolverError> {
        let params = match id {
            SolverId::Raisim | SolverId::RaisimCorrected => raisim_params(alpha),
            _ => Map::new(),
        };
        id.build(one_sweep(), &params)
    }

    /// ContactBench's residual of `λ` in force units (`λ/Δt`, `c/Δt`): the worst
    /// contact's `max(ε_p/Δt, ε_d/Δt, ε_c/Δt²)`.
    fn force_residual(&self, problem: &ContactProblem, lambda: &DVector<f64>) -> f64 {
        let c = problem.velocity(lambda);
        let dt = self.cb.dt;
        (0..problem.num_contacts())
            .map(|i| {
                let (l, v, mu) = (
                    contact_vector(lambda, i),
                    contact_vector(&c, i),
                    problem.mu_of(i),
                );
                let r: ContactResidual = match self.residual {
                    Residual::Ncp => ncp_contact_residual(mu, &l, &v),
                    Residual::Ccp => ccp_contact_residual(mu, &l, &v),
                };
                (r.primal_feasibility / dt)
                    .max(r.dual_feasibility / dt)
                    .max(r.complementarity / (dt * dt))
            })
            .fold(0.0, f64::max)
    }
}

impl ContactSolver for ContactBenchStop {
    fn name(&self) -> &str {
        &self.name
    }

    fn model(&self) -> ContactModel {
        self.sweeps[0].model()
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
        let start = Instant::now();
        let model = self.model();
        // The report of our ruler, with ContactBench's force-unit residual as the one tested.
        let finish = |lambda, status, iterations, residual| {
            let mut report = SolveReport::finish(
                problem,
                model,
                &self.settings,
                lambda,
                status,
                iterations,
                start,
                None,
            );
            report.residual = residual;
            report
        };
        let mut lambda = match warm_start {
            Some(l) => {
                problem.check_lambda(l)?;
                l.clone()
            }
            None => DVector::zeros(problem.dim()),
        };
        if problem.num_contacts() == 0 {
            return Ok(finish(lambda, SolveStatus::Converged, 0, 0.0));
        }
        let raisim = matches!(self.id, SolverId::Raisim | SolverId::RaisimCorrected);
        let mut alpha = 1.0;
        let mut residual = f64::NAN;
        for iteration in 1..=self.settings.max_iter {
            let k = if raisim { iteration - 1 } else { 0 };
            if k == self.sweeps.len() {
                self.sweeps.push(Self::build_sweep(self.id, alpha)?);
            }
            let report = self.sweeps[k].solve(problem, Some(&lambda))?;
            if matches!(
                report.status,
                SolveStatus::NumericalError { .. } | SolveStatus::Diverged { .. }
            ) {
                return Ok(finish(report.lambda, report.status, iteration, residual));
            }
            // ‖λ_k − λ_{k−1}‖ / ‖λ_{k−1}‖: infinite from λ = 0, as in ContactBench.
            let step = (&report.lambda - &lambda).norm() / lambda.norm();
            lambda = report.lambda;
            residual = self.force_residual(problem, &lambda);
            if residual < self.settings.eps_abs {
                return Ok(finish(lambda, SolveStatus::Converged, iteration, residual));
            }
            // ContactBench accepts a relative step below rel_th as converged; our ruler
            // calls it what it is.
            if step < self.settings.eps_step {
                return Ok(finish(
                    lambda,
                    SolveStatus::Stalled { iteration },
                    iteration,
                    residual,
                ));
            }
            alpha = (1.0 - RAISIM_GAMMA) * RAISIM_ALPHA_MIN + RAISIM_GAMMA * alpha;
        }
        Ok(finish(
            lambda,
            SolveStatus::MaxIterations,
            self.settings.max_iter,
            residual,
        ))
    }
}

/// A solver whose kept state (ADMM's ρ and dual variable, factorizations) is reset before
/// every solve while the previous `λ` is still passed: ContactBench's warm start.
pub struct ResetEachSolve(pub Box<dyn ContactSolver>);

impl ContactSolver for ResetEachSolve {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn model(&self) -> ContactModel {
        self.0.model()
    }

    fn settings(&self) -> &SolverSettings {
        self.0.settings()
    }

    fn set_settings(&mut self, settings: SolverSettings) -> Result<(), SolverError> {
        self.0.set_settings(settings)
    }

    fn solve(
        &mut self,
        problem: &ContactProblem,
        warm_start: Option<&DVector<f64>>,
    ) -> Result<SolveReport, SolverError> {
        self.0.reset();
        self.0.solve(problem, warm_start)
    }
}

/// How an experiment runs a solver.
#[derive(Debug, Clone, PartialEq)]
pub enum Protocol {
    /// The solver as specified, with the scenario's warm starts.
    Ours,
    /// ContactBench's stopping test in force units (per-contact solvers), cold starts.
    ContactBench(ContactBenchSettings),
    /// The previous `λ` as warm start, the solver's own state reset at each solve.
    ResetState,
}

/// The solver of `spec` under `protocol`.
pub fn build(
    spec: &SolverSpec,
    protocol: &Protocol,
) -> Result<Box<dyn ContactSolver>, SolverError> {
    match protocol {
        Protocol::Ours => spec.build(),
        Protocol::ContactBench(cb) => Ok(Box::new(ContactBenchStop::new(spec.id, *cb)?)),
        Protocol::ResetState => Ok(Box::new(ResetEachSolve(spec.build()?))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::generators::single_contact;
    use nalgebra::{Matrix3, Vector3};

    fn settings(th: f64) -> ContactBenchSettings {
        ContactBenchSettings {
            dt: 1e-3,
            th,
            rel_th: 1e-12,
            max_iter: 10_000,
        }
    }

    #[test]
    fn sliding_contact_converges_in_force_units() {
        // A contact sliding at 1 m/s: λ in N·s, th on forces.
        let Ok(p) = single_contact(0.4, Matrix3::identity(), Vector3::new(0.0, 1.0, -0.01)) else {
            panic!("valid problem");
        };
        let mut solver = ContactBenchStop::new(SolverId::NcpPgs, settings(1e-9)).expect("builds");
        let report = solver.solve(&p, None).expect("solves");
        assert!(report.status.is_converged(), "{}", report.status);
        assert!(report.residual < 1e-9);
        // λ_N = 0.01 N·s stops the approach; friction −μ λ_N along y.
        assert!((report.lambda[2] - 0.01).abs() < 1e-9);
        assert!((report.lambda[1] + 0.004).abs() < 1e-9);
    }

    #[test]
    fn raisim_relaxation_decays_per_sweep() {
        let Ok(p) = single_contact(0.4, Matrix3::identity(), Vector3::new(0.0, 1.0, -0.01)) else {
            panic!("valid problem");
        };
        let mut solver = ContactBenchStop::new(SolverId::Raisim, settings(1e-12)).expect("builds");
        let report = solver.solve(&p, None).expect("solves");
        assert!(report.iterations >= 1);
        assert!(report.lambda.iter().all(|x| x.is_finite()));
    }

    #[test]
    fn admm_is_refused() {
        assert!(ContactBenchStop::new(SolverId::NcpAdmm, settings(1e-6)).is_err());
    }
}
