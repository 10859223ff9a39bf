//! lcp-qp: the LCP of the pyramid model solved through exact convex QPs on the pyramid
//! (clarabel, interior point); the reference LCP solution.
//!
//! ## Formulation (a decision; see the README)
//!
//! The LCP of the 4-facet pyramid (paper §III, Tab. II) is not a convex QP: the friction
//! coupling between `λ_N` and the facet multipliers makes its matrix non-symmetric.
//! ContactBench's LCP-QP solves it as the non-convex QP `min xᵀ(Ax + b)` s.t. `x ≥ 0`,
//! `Ax + b ≥ 0` (ProxQP with a shifted proximal term), which clarabel, a convex solver,
//! cannot take. The convex QP on the pyramid,
//!
//! ```text
//! min ½ λᵀ(G + R)λ + (g + s)ᵀλ   over   ‖λ_T^i‖_∞ ≤ μ_i λ_N^i,
//! ```
//!
//! has as KKT conditions `P_μ ∋ λ ⊥ c + s ∈ P*_μ`. With `s = 0` that is the pyramid
//! analogue of the CCP (normal velocity while sliding, eq. 18). With
//! `s_i = (0, 0, μ_i ‖c_T^i‖₁)` taken at the solution, it is exactly the LCP in the form of
//! the metrics (design.md §5: `ĉ = c + (0, 0, μ‖c_T‖₁)`), because `s` changes only normal
//! velocities and so leaves `c_T` unchanged. lcp-qp therefore solves a sequence of these
//! exact QPs, each with `s` computed from the previous solution (the first with `s` from
//! the warm start, or `s = 0`), a fixed-point iteration on the pyramid's analogue of the
//! de Saxcé correction, and stops on the LCP residual (design.md §5) below `eps_abs`, or
//! reports a stall when the relative step falls below `eps_rel` first, after at most `max_iter` QPs. `iterations`
//! counts QPs. Each QP is solved to `eps_abs / 1000` (within `[1e-12, 1e-8]`), with at most
//! `qp_max_iter` interior-point iterations.

use std::time::Instant;

use nalgebra::DVector;
use serde_json::{Map, Value};

use super::conic::{interior_point_tolerance, solve_conic_qp, unsolved_status, Block};
use super::stagproj::SubproblemParams;
use super::support::{all_finite, relative_step, solve_checked, stopping_status, ModelResidual};
use super::{
    parse_params, ContactModel, ContactSolver, SolveReport, SolveStatus, SolverError, SolverId,
    SolverSettings,
};
use crate::problem::cones::pyramid_correction;
use crate::problem::{contact_vector, set_contact_vector, ContactProblem};

/// The lcp-qp solver.
#[derive(Debug, Clone)]
pub struct LcpQpSolver {
    settings: SolverSettings,
    params: SubproblemParams,
}

impl LcpQpSolver {
    /// A solver with the given settings and parameters (checked).
    pub fn new(settings: SolverSettings, params: SubproblemParams) -> Result<Self, SolverError> {
        settings.validate()?;
        params.validate(SolverId::LcpQp.as_str())?;
        Ok(Self { settings, params })
    }
}

/// The linear term `g + s`, `s_i = (0, 0, μ_i ‖c_T^i‖₁)` from the velocity `c`.
fn shifted_free_velocity(problem: &ContactProblem, c: &DVector<f64>) -> DVector<f64> {
    let mut q = problem.free_velocity().clone();
    for i in 0..problem.num_contacts() {
        let shift = pyramid_correction(problem.mu_of(i), &contact_vector(c, i));
        let qi = contact_vector(&q, i) + shift;
        set_contact_vector(&mut q, i, &qi);
    }
    q
}

impl LcpQpSolver {
    /// The sequence of pyramid QPs of the module doc (a problem with contacts, warm start checked).
    fn qp_sequence(
        &self,
        problem: &ContactProblem,
        warm_start: Option<&DVector<f64>>,
        start: Instant,
    ) -> SolveReport {
        let delassus = problem.effective_delassus();
        let blocks: Vec<Block> = problem.mu().iter().map(|&mu| Block::Pyramid(mu)).collect();
        let tolerance = interior_point_tolerance(self.settings.eps_abs);
        let mut lambda = warm_start
            .cloned()
            .unwrap_or_else(|| DVector::zeros(problem.dim()));
        let mut velocity = match warm_start {
            Some(l0) => problem.velocity(l0),
            // No shift on the first QP.
            None => DVector::zeros(problem.dim()),
        };
        let mut history = self.settings.record_history.then(Vec::new);
        let mut status = SolveStatus::MaxIterations;
        let mut residual = f64::INFINITY;
        let mut iterations = 0;
        for k in 1..=self.settings.max_iter {
            iterations = k;
            let q = shifted_free_velocity(problem, &velocity);
            let next =
                match solve_conic_qp(&delassus, &q, &blocks, tolerance, self.params.qp_max_iter) {
                    Ok(s) if all_finite(&s.x) => match unsolved_status(s.status) {
                        None => s.x,
                        Some(other) => {
                            status = SolveStatus::Failed(format!("QP {k}: {other}"));
                            break;
                        }
                    },
                    Ok(_) => {
                        status = SolveStatus::Failed(format!("diverged at iteration {k}"));
                        break;
                    }
                    Err(reason) => {
                        status = SolveStatus::Failed(format!("QP {k}: {reason}"));
                        break;
                    }
                };
            let step = relative_step(&next, &lambda);
            lambda = next;
            velocity = problem.velocity(&lambda);
            residual = ModelResidual::Lcp.eval(problem, &lambda, &velocity);
            if let Some(h) = history.as_mut() {
                h.push(residual);
            }
            if let Some(stop) = stopping_status(residual, step, &self.settings, k) {
                status = stop;
                break;
            }
        }
        if !residual.is_finite() {
            residual = ModelResidual::Lcp.eval(problem, &lambda, &problem.velocity(&lambda));
        }
        SolveReport::finish(
            problem, lambda, status, iterations, residual, start, history,
        )
    }
}

impl ContactSolver for LcpQpSolver {
    fn name(&self) -> &str {
        SolverId::LcpQp.as_str()
    }

    fn model(&self) -> ContactModel {
        ContactModel::Lcp
    }

    fn settings(&self) -> &SolverSettings {
        &self.settings
    }

    fn settings_mut(&mut self) -> &mut SolverSettings {
        &mut self.settings
    }

    fn solve(
        &mut self,
        problem: &ContactProblem,
        warm_start: Option<&DVector<f64>>,
    ) -> Result<SolveReport, SolverError> {
        solve_checked(problem, warm_start, self.settings.record_history, |start| {
            Ok(self.qp_sequence(problem, warm_start, start))
        })
    }
}

/// Builds the solver; parameters are those of [`SubproblemParams`].
pub fn build(
    settings: SolverSettings,
    params: &Map<String, Value>,
) -> Result<Box<dyn ContactSolver>, SolverError> {
    let params: SubproblemParams = parse_params(SolverId::LcpQp.as_str(), params)?;
    Ok(Box::new(LcpQpSolver::new(settings, params)?))
}
