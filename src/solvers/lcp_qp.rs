//! lcp-qp: the LCP of the pyramid model solved through exact convex QPs on the pyramid
//! (clarabel, interior point); the reference LCP solution.
//!
//! ## Formulation (a decision; see docs/solvers.md, "Formulation decisions")
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
//! de Saxcé correction, and stops on the LCP's criterion named by `stop` (design.md §5),
//! or reports a stall when the relative step falls below `eps_step` first, after at most
//! `max_iter` QPs. `iterations` counts QPs. Each QP is made dimensionless and solved to a
//! thousandth of the tolerance (within `[1e-12, 1e-8]`), with at most `qp_max_iter`
//! interior-point iterations.

use nalgebra::DVector;
use serde_json::{Map, Value};

use super::interior_point::{interior_point_tolerance, remaining_time, unsolved_step_status};
use super::shell::{Algorithm, Shell, SolveCall};
use super::stagproj::SubproblemParams;
use super::support::{iterate_status, model_criteria, relative_step, stopping_status};
use super::{
    parse_params, ContactSolver, SolveReport, SolveStatus, SolverError, SolverId, SolverSettings,
};
use crate::problem::cones::pyramid_correction;
use crate::problem::conic::{solve_conic_qp, Block, ConicLimits};
use crate::problem::{contact_vector, set_contact_vector, ContactModel, ContactProblem};

/// The lcp-qp algorithm (module doc), with its parameters.
#[derive(Debug, Clone)]
pub struct LcpQp {
    params: SubproblemParams,
}

/// The lcp-qp solver: [`LcpQp`] in the solver shell.
pub type LcpQpSolver = Shell<LcpQp>;

impl LcpQpSolver {
    /// A solver with the given settings and parameters (checked).
    pub fn new(settings: SolverSettings, params: SubproblemParams) -> Result<Self, SolverError> {
        let id = SolverId::LcpQp;
        params.validate(id.as_str())?;
        Shell::wrap(id.as_str(), id.model(), settings, LcpQp { params })
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

impl LcpQp {
    /// The sequence of pyramid QPs of the module doc (a problem with contacts, warm start
    /// checked).
    fn qp_sequence(&self, call: SolveCall<'_>) -> SolveReport {
        let (problem, warm_start, settings, start) =
            (call.problem, call.warm_start, call.settings, call.start);
        let delassus = problem.effective_delassus();
        let blocks: Vec<Block> = problem.mu().iter().map(|&mu| Block::Pyramid(mu)).collect();
        let tolerance = interior_point_tolerance(settings.tolerance());
        let mut lambda = warm_start
            .cloned()
            .unwrap_or_else(|| DVector::zeros(problem.dim()));
        let mut velocity = match warm_start {
            Some(l0) => problem.velocity(l0),
            // No shift on the first QP.
            None => DVector::zeros(problem.dim()),
        };
        let mut history = settings.record_history.then(Vec::new);
        let mut status = SolveStatus::MaxIterations;
        let mut iterations = 0;
        for k in 1..=settings.max_iter {
            iterations = k;
            let q = shifted_free_velocity(problem, &velocity);
            let limits = ConicLimits {
                tolerance,
                max_iter: self.params.qp_max_iter,
                time_limit: remaining_time(settings.max_time, start),
            };
            let next = match solve_conic_qp(&delassus, &q, &blocks, limits) {
                Ok(s) => match iterate_status(&s.x, k, "forces")
                    .or_else(|| unsolved_step_status(s.status, k))
                {
                    None => s.x,
                    Some(failed) => {
                        status = failed;
                        break;
                    }
                },
                Err(what) => {
                    status = SolveStatus::NumericalError { iteration: k, what };
                    break;
                }
            };
            let step = relative_step(&next, &lambda);
            lambda = next;
            velocity = problem.velocity(&lambda);
            let criteria = model_criteria(ContactModel::Lcp, problem, &lambda, &velocity);
            if let Some(h) = history.as_mut() {
                h.push(settings.stop.pick(&criteria));
            }
            if let Some(stop) = stopping_status(&criteria, step, settings, k, start) {
                status = stop;
                break;
            }
        }
        SolveReport::finish(
            problem,
            ContactModel::Lcp,
            settings,
            lambda,
            status,
            iterations,
            start,
            history,
        )
    }
}

impl Algorithm for LcpQp {
    fn solve(&mut self, call: SolveCall<'_>) -> Result<SolveReport, SolverError> {
        Ok(self.qp_sequence(call))
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
