//! Staggered projections (paper Alg. 6; Kaufman et al. 2008), shared by lcp-stagproj and
//! ncp-stagproj.
//!
//! The forces are split into normal `λ_N` (`n`) and tangential `λ_T` (`2n`) parts and two
//! convex QPs alternate, each with the other part frozen (`G` stands for `G + R`):
//!
//! ```text
//! g̃_N ← g_N + G_NT λ_T
//! λ_N ← argmin_{λ_N ≥ 0} ½ λ_Nᵀ G_NN λ_N + g̃_Nᵀ λ_N                 (Signorini)
//! g̃_T ← g_T + G_TN λ_N
//! λ_T ← argmin_{λ_T^i ∈ D_i(μ_i λ_N^i)} ½ λ_Tᵀ G_TT λ_T + g̃_Tᵀ λ_T   (maximum dissipation)
//! ```
//!
//! `D_i` is the disk `‖λ_T^i‖₂ ≤ μ_i λ_N^i` for the NCP and the square
//! `‖λ_T^i‖_∞ ≤ μ_i λ_N^i` for the LCP (pyramid). A fixed point satisfies Signorini and the
//! maximum dissipation principle: it solves the NCP (resp. the LCP). Each QP is made
//! dimensionless and solved by clarabel (interior point) to a thousandth of the tolerance
//! (within `[1e-12, 1e-8]`), with at most `qp_max_iter` interior-point iterations. The
//! outer loop stops on the model's criterion named by `stop` (NCP or LCP; a relative step
//! of `λ` below `eps_step` first is a stall), after at most `max_iter` outer iterations;
//! `iterations` counts outer iterations (two QPs each). A warm start gives the first `λ_T`.

use std::time::Instant;

use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::interior_point::{interior_point_tolerance, remaining_time, unsolved_step_status};
use super::shell::{Algorithm, Shell, SolveCall};
use super::support::{iterate_status, model_criteria, relative_step, stopping_status};
use super::{
    parse_params, ContactSolver, SolveReport, SolveStatus, SolverError, SolverId, SolverSettings,
};
use crate::problem::conic::{solve_conic_qp, Block, ConicLimits, ConicSolution};
use crate::problem::{ContactModel, ContactProblem};

/// Parameters of the solvers built on clarabel sub-problems (lcp-qp, the staggered
/// projections).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SubproblemParams {
    /// Interior-point iteration cap of each QP. Default `200` (clarabel's default).
    pub qp_max_iter: usize,
}

impl Default for SubproblemParams {
    fn default() -> Self {
        Self { qp_max_iter: 200 }
    }
}

impl SubproblemParams {
    /// Checks the ranges; `solver` names the solver in the error.
    pub(crate) fn validate(&self, solver: &str) -> Result<(), SolverError> {
        if self.qp_max_iter == 0 {
            return Err(SolverError::InvalidParameter {
                solver: solver.to_string(),
                message: "qp_max_iter = 0: must be at least 1".into(),
            });
        }
        Ok(())
    }
}

/// The tangential set of the friction QP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrictionSet {
    /// Disk `‖λ_T‖₂ ≤ μ λ_N` (NCP): ncp-stagproj.
    Disk,
    /// Square `‖λ_T‖_∞ ≤ μ λ_N` (LCP): lcp-stagproj.
    Square,
}

impl FrictionSet {
    /// The registry id of the solver on this set.
    fn id(self) -> SolverId {
        match self {
            FrictionSet::Disk => SolverId::NcpStagproj,
            FrictionSet::Square => SolverId::LcpStagproj,
        }
    }

    /// The model the outer loop stops on: NCP or LCP.
    fn model(self) -> ContactModel {
        match self {
            FrictionSet::Disk => ContactModel::Ncp,
            FrictionSet::Square => ContactModel::Lcp,
        }
    }
}

/// The staggered projections of the module doc on a friction set, with their
/// parameters.
#[derive(Debug, Clone)]
pub struct Stagproj {
    friction: FrictionSet,
    params: SubproblemParams,
}

/// The staggered-projections solver: ncp-stagproj on [`FrictionSet::Disk`],
/// lcp-stagproj on [`FrictionSet::Square`]; [`Stagproj`] in the solver shell.
pub type StagprojSolver = Shell<Stagproj>;

impl StagprojSolver {
    /// A solver on the given friction set with the given settings and parameters
    /// (checked).
    pub fn new(
        friction: FrictionSet,
        settings: SolverSettings,
        params: SubproblemParams,
    ) -> Result<Self, SolverError> {
        let id = friction.id();
        params.validate(id.as_str())?;
        Shell::wrap(
            id.as_str(),
            friction.model(),
            settings,
            Stagproj { friction, params },
        )
    }
}

impl Algorithm for Stagproj {
    fn solve(&mut self, call: SolveCall<'_>) -> Result<SolveReport, SolverError> {
        Ok(solve_staggered(
            call.problem,
            call.warm_start,
            call.settings,
            &self.params,
            self.friction,
            call.start,
        ))
    }
}

/// Builds lcp-stagproj or ncp-stagproj; parameters are those of [`SubproblemParams`].
pub(crate) fn build(
    friction: FrictionSet,
    settings: SolverSettings,
    params: &Map<String, Value>,
) -> Result<Box<dyn ContactSolver>, SolverError> {
    let params: SubproblemParams = parse_params(friction.id().as_str(), params)?;
    Ok(Box::new(StagprojSolver::new(friction, settings, params)?))
}

/// Indices of the normal rows `3i + 2` and of the tangential rows `3i, 3i + 1`.
fn split_indices(num_contacts: usize) -> (Vec<usize>, Vec<usize>) {
    let normal = (0..num_contacts).map(|i| 3 * i + 2).collect();
    let tangent = (0..num_contacts).flat_map(|i| [3 * i, 3 * i + 1]).collect();
    (normal, tangent)
}

/// The sub-matrix `G[rows, cols]`.
fn sub_matrix(g: &DMatrix<f64>, rows: &[usize], cols: &[usize]) -> DMatrix<f64> {
    DMatrix::from_fn(rows.len(), cols.len(), |i, j| g[(rows[i], cols[j])])
}

/// The entries `x[idx]`.
fn sub_vector(x: &DVector<f64>, idx: &[usize]) -> DVector<f64> {
    DVector::from_fn(idx.len(), |i, _| x[idx[i]])
}

/// Runs Alg. 6 on `problem` (with contacts, warm start checked); `start` is when the solve
/// began.
fn solve_staggered(
    problem: &ContactProblem,
    warm_start: Option<&DVector<f64>>,
    settings: &SolverSettings,
    params: &SubproblemParams,
    friction: FrictionSet,
    start: Instant,
) -> SolveReport {
    let n = problem.num_contacts();
    let model = friction.model();
    let delassus = problem.effective_delassus();
    let (normal, tangent) = split_indices(n);
    let g_nn = sub_matrix(&delassus, &normal, &normal);
    let g_tt = sub_matrix(&delassus, &tangent, &tangent);
    let g_nt = sub_matrix(&delassus, &normal, &tangent);
    let g_n = sub_vector(problem.free_velocity(), &normal);
    let g_t = sub_vector(problem.free_velocity(), &tangent);
    let tolerance = interior_point_tolerance(settings.tolerance());
    let normal_blocks = vec![Block::Nonnegative; n];
    let limits = |start: Instant| ConicLimits {
        tolerance,
        max_iter: params.qp_max_iter,
        time_limit: remaining_time(settings.max_time, start),
    };

    let mut lambda = DVector::zeros(3 * n);
    let mut lambda_t = match warm_start {
        Some(l0) => sub_vector(l0, &tangent),
        None => DVector::zeros(2 * n),
    };
    let mut history = settings.record_history.then(Vec::new);
    let mut status = SolveStatus::MaxIterations;
    let mut iterations = 0;
    for k in 1..=settings.max_iter {
        iterations = k;
        let lambda_prev = lambda.clone();
        // Normal QP (Alg. 6, lines 2-3).
        let g_n_tilde = &g_n + &g_nt * &lambda_t;
        let normal_qp = solve_conic_qp(&g_nn, &g_n_tilde, &normal_blocks, limits(start));
        let lambda_n = match sub_problem_result(normal_qp, k) {
            Ok(x) => x,
            Err(failed) => {
                status = failed;
                break;
            }
        };
        // Tangential QP (Alg. 6, lines 4-5).
        let g_t_tilde = &g_t + g_nt.tr_mul(&lambda_n);
        let friction_blocks: Vec<Block> = (0..n)
            .map(|i| {
                let radius = problem.mu_of(i) * lambda_n[i].max(0.0);
                match friction {
                    FrictionSet::Disk => Block::Disk(radius),
                    FrictionSet::Square => Block::Box(radius),
                }
            })
            .collect();
        let friction_qp = solve_conic_qp(&g_tt, &g_t_tilde, &friction_blocks, limits(start));
        lambda_t = match sub_problem_result(friction_qp, k) {
            Ok(x) => x,
            Err(failed) => {
                status = failed;
                break;
            }
        };
        for i in 0..n {
            lambda[3 * i] = lambda_t[2 * i];
            lambda[3 * i + 1] = lambda_t[2 * i + 1];
            lambda[3 * i + 2] = lambda_n[i];
        }
        let criteria = model_criteria(model, problem, &lambda, &problem.velocity(&lambda));
        if let Some(h) = history.as_mut() {
            h.push(settings.stop.pick(&criteria));
        }
        let step = relative_step(&lambda, &lambda_prev);
        if let Some(stop) = stopping_status(&criteria, step, settings, k, start) {
            status = stop;
            break;
        }
    }
    SolveReport::finish(
        problem, model, settings, lambda, status, iterations, start, history,
    )
}

/// The minimizer of a sub-problem at outer iteration `iteration`, or the status that ends
/// the solve (a sub-problem that hits `qp_max_iter` is a numerical error of the outer loop,
/// not its `MaxIterations`).
fn sub_problem_result(
    solution: Result<ConicSolution, String>,
    iteration: usize,
) -> Result<DVector<f64>, SolveStatus> {
    match solution {
        Ok(s) => match iterate_status(&s.x, iteration, "sub-problem forces")
            .or_else(|| unsolved_step_status(s.status, iteration))
        {
            None => Ok(s.x),
            Some(SolveStatus::MaxIterations) => Err(SolveStatus::NumericalError {
                iteration,
                what: "a sub-problem hit qp_max_iter".into(),
            }),
            Some(other) => Err(other),
        },
        Err(what) => Err(SolveStatus::NumericalError { iteration, what }),
    }
}
