//! ccp-newton: MuJoCo's primal Newton method on the soft CCP, with compliance
//! `R_soft = α diag(G)`.
//!
//! ## Formulation (a decision; see docs/solvers.md, "Formulation decisions")
//!
//! The soft CCP is `min_{λ ∈ ×K_μ} ½ λᵀ(A + R_soft)λ + gᵀλ`, `A = G + R` (the problem's
//! own compliance, if any). MuJoCo solves its primal, in velocities: with any factor
//! `A = F Fᵀ` (here `F`, `n × r`, from a Cholesky factorization with diagonal pivoting,
//! stopped at the numerical rank `r` of `A`; when `A` comes from `J M⁻¹ Jᵀ`,
//! `w = M^{1/2}(v − v_f)` up to a rotation, `F = J M^{-1/2}`),
//!
//! ```text
//! min_w  P(w) = ½ ‖w‖² + Σ_i s_i(F_i w + g_i),
//! s_i(y) = max_{λ ∈ K_μ} (−λᵀ y − ½ λᵀ R_i λ) = ½ ‖proj_{K_μ̃}(−S_i⁻¹ y)‖²,
//! ```
//!
//! with `S_i = R_i^{1/2}` and `μ̃ = μ √(r_T / r_N)`: in the scaled forces `u = S λ` the
//! cone stays a friction cone. The force is `λ_i(y) = S_i⁻¹ proj_{K_μ̃}(−S_i⁻¹ y)`, the
//! gradient `∇P = w − Fᵀ λ(Fw + g)`, and the (generalized) Hessian
//! `H = I + Fᵀ D F` (`r × r`), `D_i = S_i⁻¹ ∂proj(−S_i⁻¹ y) S_i⁻¹`, is positive definite:
//! its Cholesky factor gives the Newton step, followed by a backtracking (Armijo) line
//! search (at most 50 halvings). `max_time` is checked inside every stage: before each
//! column of `F`, between chunks of the Hessian, in the Cholesky factorization (per panel)
//! and at each trial of the line search. At the optimum `w = Fᵀλ`, so `λ ∈ K_μ ⊥ (A + R_soft)λ + g ∈ K*_μ`.
//!
//! As in MuJoCo's elliptic cones and ContactBench, both tangents of a contact share one
//! compliance, `r_T = α (A_t1t1 + A_t2t2) / 2`, and `r_N = α A_nn` (each floored at
//! `1e-9 max diag A`); the default `α = 1e-3` is measured in docs/solvers.md. The solver stops
//! on the CCP criterion named by `stop` of the soft problem (the velocity includes
//! `R_soft λ`); a relative step of its own iterate `w`, `‖Δw‖ / ‖w‖`, at most `eps_step`
//! first is a stall (the step of `λ` is not a progress measure here: a warm start above
//! the answer maps to a `w` whose `λ(w)` is 0, and `λ` stays 0 for a few Newton steps
//! while `w` moves). The solver shell judges a converged answer on the model's own soft
//! problem, `α diag(A)` without the floors ([`Algorithm::model_compliance`]). The returned
//! `velocity` is the problem's own `(G + R)λ + g`: the hard CCP residual of a ccp-newton
//! answer is of the order of `R_soft λ`, not zero. A warm start `λ0` starts from
//! `w = Fᵀ λ0`, and is returned at once only if `λ(w)` passes the stopping test. `F` is
//! kept between solves while `A` is unchanged.

use std::time::Instant;

use nalgebra::{DMatrix, DVector, Matrix3, Vector3};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::factor::{FactorError, RegularizedCholesky};
use super::shell::{Algorithm, Shell, SolveCall};
use super::support::{
    deadline, iterate_status, model_criteria, out_of_time, relative_step, stopping_status,
};
use super::{
    parse_params, ContactSolver, SolveReport, SolveStatus, SolverError, SolverId, SolverSettings,
};
use crate::problem::cones::project_ice_cream;
use crate::problem::{contact_vector, set_contact_vector, ContactModel, ContactProblem};

/// Halvings of the line search before giving up.
const MAX_LINE_SEARCH_STEPS: usize = 50;
/// Armijo sufficient-decrease constant.
const ARMIJO: f64 = 1e-4;
/// Units of `ε |P(w)|` by which the line search lets the cost rise: its round-off.
const COST_ROUND_OFF: f64 = 16.0;

/// Parameters of ccp-newton.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CcpNewtonParams {
    /// Compliance scale `α` in `R_soft = α diag(G + R)`, `> 0`. Default `1e-3`.
    pub alpha: f64,
}

impl Default for CcpNewtonParams {
    fn default() -> Self {
        Self { alpha: 1e-3 }
    }
}

/// The ccp-newton algorithm (module doc), with its parameters and the factor it keeps.
#[derive(Debug, Clone)]
pub struct CcpNewton {
    params: CcpNewtonParams,
    /// `(A, F)` of the last solve, `A = F Fᵀ`.
    factor: Option<(DMatrix<f64>, DMatrix<f64>)>,
}

/// The ccp-newton solver: [`CcpNewton`] in the solver shell.
pub type CcpNewtonSolver = Shell<CcpNewton>;

impl CcpNewtonSolver {
    /// A solver with the given settings and parameters (checked).
    pub fn new(settings: SolverSettings, params: CcpNewtonParams) -> Result<Self, SolverError> {
        let id = SolverId::CcpNewton;
        if !(params.alpha.is_finite() && params.alpha > 0.0) {
            return Err(SolverError::InvalidParameter {
                solver: id.as_str().to_string(),
                message: format!("alpha = {}: must be finite and > 0", params.alpha),
            });
        }
        let newton = CcpNewton {
            params,
            factor: None,
        };
        Shell::wrap(id.as_str(), id.model(), settings, newton)
    }

    /// The soft compliance `R_soft` this solver adds to `problem` (`3n`).
    pub fn soft_compliance(&self, problem: &ContactProblem) -> DVector<f64> {
        soft_compliance(&problem.effective_delassus(), self.algorithm().params.alpha)
    }
}

impl CcpNewton {
    /// `F` with `F Fᵀ = A`, reused while `A` is unchanged; `None` when `deadline` passed
    /// before it was complete.
    fn factor_of(&mut self, a: &DMatrix<f64>, deadline: Option<Instant>) -> Option<DMatrix<f64>> {
        if let Some((cached, f)) = &self.factor {
            if cached == a {
                return Some(f.clone());
            }
        }
        let f = pivoted_cholesky(a, deadline)?;
        self.factor = Some((a.clone(), f.clone()));
        Some(f)
    }
}

/// `F` (`n × r`) with `F Fᵀ = A` for a symmetric positive semi-definite `A`, by Cholesky
/// with diagonal pivoting (Higham 2009, "Cholesky factorization", §2.1): at each step the
/// largest remaining diagonal entry of the Schur complement is the pivot, and the
/// factorization stops at rank `r` when it is at most `n ε max diag A` (what is left is
/// round-off). Left-looking, one column at a time, `O(n r²)`: a rank-deficient `A` (more
/// contact rows than degrees of freedom) costs less than its size suggests. `None` when
/// `deadline` passes (checked before every column).
fn pivoted_cholesky(a: &DMatrix<f64>, deadline: Option<Instant>) -> Option<DMatrix<f64>> {
    let n = a.nrows();
    let mut remaining: Vec<f64> = a.diagonal().iter().copied().collect();
    let largest = remaining.iter().fold(0.0_f64, |m, v| m.max(*v));
    let negligible = n as f64 * f64::EPSILON * largest;
    let mut chosen = vec![false; n];
    let mut columns: Vec<DVector<f64>> = Vec::new();
    loop {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return None;
        }
        let pivot = (0..n)
            .filter(|&i| !chosen[i])
            .max_by(|&i, &j| remaining[i].total_cmp(&remaining[j]));
        let Some(j) = pivot.filter(|&j| remaining[j] > negligible) else {
            break;
        };
        chosen[j] = true;
        let mut column = a.column(j).clone_owned();
        for previous in &columns {
            column.axpy(-previous[j], previous, 1.0);
        }
        column /= remaining[j].sqrt();
        for i in 0..n {
            if chosen[i] && i != j {
                column[i] = 0.0;
            } else if !chosen[i] {
                remaining[i] -= column[i] * column[i];
            }
        }
        columns.push(column);
    }
    Some(if columns.is_empty() {
        DMatrix::zeros(n, 0)
    } else {
        DMatrix::from_columns(&columns)
    })
}

/// `R_soft`: per contact `(r_T, r_T, r_N)`, `r_T = α (A_t1t1 + A_t2t2)/2`, `r_N = α A_nn`,
/// each floored at `α · 1e-9 · max diag A` (or `α` when `A` is zero) so that the Newton
/// method is defined on a contact without stiffness.
fn soft_compliance(a: &DMatrix<f64>, alpha: f64) -> DVector<f64> {
    let diag = a.diagonal();
    let max_diag = diag.iter().fold(0.0_f64, |m, v| m.max(*v));
    let floor = if max_diag > 0.0 { 1e-9 * max_diag } else { 1.0 };
    model_compliance(&diag, alpha, floor)
}

/// The soft model's compliance, `r_T = α max((A_t1t1 + A_t2t2)/2, floor)`,
/// `r_N = α max(A_nn, floor)` per contact; with `floor = 0` it is the model's own
/// `α diag(A)`, what the ruler judges on (`diag` is `A`'s diagonal).
fn model_compliance(diag: &DVector<f64>, alpha: f64, floor: f64) -> DVector<f64> {
    let mut r = DVector::zeros(diag.len());
    for i in 0..diag.len() / 3 {
        let tangent = 0.5 * (diag[3 * i] + diag[3 * i + 1]);
        let rt = alpha * tangent.max(floor);
        let rn = alpha * diag[3 * i + 2].max(floor);
        set_contact_vector(&mut r, i, &Vector3::new(rt, rt, rn));
    }
    r
}

/// One contact's soft constraint at `y`: force `λ(y)`, cost `s(y)` and `D = −∂λ/∂y`.
struct SoftContact {
    force: Vector3<f64>,
    cost: f64,
    curvature: Matrix3<f64>,
}

/// Jacobian of the projection onto `K_μ` at `z`.
fn projection_jacobian(mu: f64, z: &Vector3<f64>) -> Matrix3<f64> {
    let t = z.xy().norm();
    if mu == 0.0 {
        let mut j = Matrix3::zeros();
        j[(2, 2)] = if z.z > 0.0 { 1.0 } else { 0.0 };
        return j;
    }
    if t <= mu * z.z {
        return Matrix3::identity();
    }
    if mu * t <= -z.z || t == 0.0 {
        return Matrix3::zeros();
    }
    let d = z.xy() / t;
    let k = 1.0 / (1.0 + mu * mu);
    let s = (mu * t + z.z) * k;
    let mut j = Matrix3::zeros();
    let ddt = d * d.transpose();
    let tt = ddt * (mu * mu * k) + (nalgebra::Matrix2::identity() - ddt) * (mu * s / t);
    j.fixed_view_mut::<2, 2>(0, 0).copy_from(&tt);
    j[(0, 2)] = mu * d.x * k;
    j[(1, 2)] = mu * d.y * k;
    j[(2, 0)] = mu * d.x * k;
    j[(2, 1)] = mu * d.y * k;
    j[(2, 2)] = k;
    j
}

/// `λ(y) = S⁻¹ proj_{K_μ̃}(−S⁻¹ y)`, `s(y) = ½‖proj‖²`, `D = S⁻¹ ∂proj S⁻¹`.
fn soft_contact(mu: f64, r: &Vector3<f64>, y: &Vector3<f64>, with_curvature: bool) -> SoftContact {
    let s_inv = Vector3::new(1.0 / r.x.sqrt(), 1.0 / r.y.sqrt(), 1.0 / r.z.sqrt());
    let mu_scaled = mu * (r.x / r.z).sqrt();
    let z = -y.component_mul(&s_inv);
    let u = project_ice_cream(mu_scaled, &z);
    let curvature = if with_curvature {
        let j = projection_jacobian(mu_scaled, &z);
        Matrix3::from_diagonal(&s_inv) * j * Matrix3::from_diagonal(&s_inv)
    } else {
        Matrix3::zeros()
    };
    SoftContact {
        force: u.component_mul(&s_inv),
        cost: 0.5 * u.norm_squared(),
        curvature,
    }
}

/// Forces `λ(y)` and the primal cost `P(w)` at `w` (with `y = F w + g`).
fn forces_and_cost(
    problem: &ContactProblem,
    f: &DMatrix<f64>,
    r: &DVector<f64>,
    w: &DVector<f64>,
) -> (DVector<f64>, f64) {
    let y = f * w + problem.free_velocity();
    let mut lambda = DVector::zeros(y.len());
    let mut cost = 0.5 * w.norm_squared();
    for i in 0..problem.num_contacts() {
        let c = soft_contact(
            problem.mu_of(i),
            &contact_vector(r, i),
            &contact_vector(&y, i),
            false,
        );
        cost += c.cost;
        set_contact_vector(&mut lambda, i, &c.force);
    }
    (lambda, cost)
}

/// Columns of the Hessian computed between two looks at the clock.
const HESSIAN_CHUNK: usize = 64;

/// Generalized Hessian `I + Fᵀ D F` at `w` (`D` block-diagonal, applied contact by
/// contact), or `None` when `deadline` passes (checked between chunks of
/// [`HESSIAN_CHUNK`] columns).
fn hessian(
    problem: &ContactProblem,
    f: &DMatrix<f64>,
    r: &DVector<f64>,
    w: &DVector<f64>,
    deadline: Option<Instant>,
) -> Option<DMatrix<f64>> {
    let y = f * w + problem.free_velocity();
    let mut df = DMatrix::zeros(f.nrows(), f.ncols());
    for i in 0..problem.num_contacts() {
        let c = soft_contact(
            problem.mu_of(i),
            &contact_vector(r, i),
            &contact_vector(&y, i),
            true,
        );
        let rows = c.curvature * f.fixed_rows::<3>(3 * i);
        df.fixed_rows_mut::<3>(3 * i).copy_from(&rows);
    }
    let size = f.ncols();
    let mut h = DMatrix::identity(size, size);
    for first in (0..size).step_by(HESSIAN_CHUNK) {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return None;
        }
        let width = HESSIAN_CHUNK.min(size - first);
        let block = f.tr_mul(&df.columns(first, width));
        let mut target = h.columns_mut(first, width);
        target += block;
    }
    Some(h)
}

impl CcpNewton {
    /// The primal Newton iteration of the module doc (a problem with contacts, warm start
    /// checked).
    fn newton(&mut self, call: SolveCall<'_>) -> SolveReport {
        let (problem, warm_start, settings, start) =
            (call.problem, call.warm_start, call.settings, call.start);
        let a = problem.effective_delassus();
        let r = soft_compliance(&a, self.params.alpha);
        // The soft problem: what the answer is measured on.
        let soft = match problem.with_added_compliance(&r) {
            Ok(soft) => soft,
            Err(e) => {
                let status = SolveStatus::NumericalError {
                    iteration: 0,
                    what: format!("soft compliance: {e}"),
                };
                return report(
                    call,
                    problem,
                    DVector::zeros(problem.dim()),
                    status,
                    0,
                    None,
                );
            }
        };
        let deadline = deadline(settings, start);
        let Some(f) = self.factor_of(&a, deadline) else {
            let lambda = call.initial_forces();
            return report(call, &soft, lambda, SolveStatus::MaxTime, 0, None);
        };
        let mut w = match warm_start {
            Some(l0) => f.tr_mul(l0),
            None => DVector::zeros(f.ncols()),
        };
        let (mut lambda, mut cost) = forces_and_cost(problem, &f, &r, &w);
        let mut history = settings.record_history.then(Vec::new);
        if let Some(failed) = iterate_status(&lambda, 0, "forces") {
            return report(
                call,
                &soft,
                DVector::zeros(problem.dim()),
                failed,
                0,
                history,
            );
        }
        let mut criteria =
            model_criteria(ContactModel::Ccp, &soft, &lambda, &soft.velocity(&lambda));
        if settings.stop.pick(&criteria) <= settings.tolerance() {
            return report(call, &soft, lambda, SolveStatus::Converged, 0, history);
        }
        let mut status = SolveStatus::MaxIterations;
        let mut iterations = 0;
        for k in 1..=settings.max_iter {
            iterations = k;
            let gradient = &w - f.tr_mul(&lambda);
            let Some(h) = hessian(problem, &f, &r, &w, deadline) else {
                status = SolveStatus::MaxTime;
                break;
            };
            let mut chol = RegularizedCholesky::default();
            chol.set_matrix(&h, None);
            match chol.set_shift(0.0, deadline) {
                Ok(()) => {}
                Err(FactorError::OutOfTime) => {
                    status = SolveStatus::MaxTime;
                    break;
                }
                Err(FactorError::NotPositiveDefinite(_)) => {
                    status = SolveStatus::NumericalError {
                        iteration: k,
                        what: "Hessian not positive definite".into(),
                    };
                    break;
                }
            }
            let mut step = -&gradient;
            chol.solve_mut(&mut step);
            let slope = gradient.dot(&step);
            // Backtracking line search (Armijo), within the deadline. A decrease below the
            // cost's own round-off cannot be seen: near the answer (slope ~1e-15 at a cost
            // of order 1) the test would reject the Newton step by the luck of the last bit
            // and halve it until the iteration stalls.
            let round_off = COST_ROUND_OFF * f64::EPSILON * cost.abs();
            let mut t = 1.0;
            let mut accepted = None;
            for _ in 0..MAX_LINE_SEARCH_STEPS {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    break;
                }
                let trial = &w + &step * t;
                let (trial_lambda, trial_cost) = forces_and_cost(problem, &f, &r, &trial);
                if trial_cost <= cost + ARMIJO * t * slope + round_off {
                    accepted = Some((trial, trial_lambda, trial_cost));
                    break;
                }
                t *= 0.5;
            }
            if accepted.is_none() && out_of_time(settings, start) {
                status = SolveStatus::MaxTime;
                break;
            }
            let Some((next_w, next_lambda, next_cost)) = accepted else {
                // No descent along the Newton direction: no progress is possible.
                status = SolveStatus::Stalled { iteration: k };
                break;
            };
            let failure = iterate_status(&next_w, k, "Newton iterate w")
                .or_else(|| iterate_status(&next_lambda, k, "forces"))
                .or_else(|| {
                    (!next_cost.is_finite()).then(|| SolveStatus::NumericalError {
                        iteration: k,
                        what: "non-finite cost".into(),
                    })
                });
            if let Some(failed) = failure {
                status = failed;
                break;
            }
            let w_step = relative_step(&next_w, &w);
            w = next_w;
            lambda = next_lambda;
            cost = next_cost;
            criteria = model_criteria(ContactModel::Ccp, &soft, &lambda, &soft.velocity(&lambda));
            if let Some(h) = history.as_mut() {
                h.push(settings.stop.pick(&criteria));
            }
            if let Some(stop) = stopping_status(&criteria, w_step, settings, k, start) {
                status = stop;
                break;
            }
        }
        report(call, &soft, lambda, status, iterations, history)
    }
}

/// The report of an answer measured on the soft problem, with the velocity of the
/// problem itself.
fn report(
    call: SolveCall<'_>,
    soft: &ContactProblem,
    lambda: DVector<f64>,
    status: SolveStatus,
    iterations: usize,
    history: Option<Vec<f64>>,
) -> SolveReport {
    let mut report = SolveReport::finish(
        soft,
        ContactModel::Ccp,
        call.settings,
        lambda,
        status,
        iterations,
        call.start,
        history,
    );
    report.velocity = call.problem.velocity(&report.lambda);
    report
}

impl Algorithm for CcpNewton {
    fn solve(&mut self, call: SolveCall<'_>) -> Result<SolveReport, SolverError> {
        Ok(self.newton(call))
    }

    fn reset(&mut self) {
        self.factor = None;
    }

    /// The soft CCP's compliance `α diag(G + R)` without the floors of the Newton method:
    /// on a contact without stiffness the model adds none, and the ruler sees the problem.
    fn model_compliance(&self, problem: &ContactProblem) -> Option<DVector<f64>> {
        let mut diag = problem.delassus().diagonal();
        if let Some(r) = problem.compliance() {
            diag += r;
        }
        Some(model_compliance(&diag, self.params.alpha, 0.0))
    }
}

/// Builds the solver; parameters are those of [`CcpNewtonParams`].
pub fn build(
    settings: SolverSettings,
    params: &Map<String, Value>,
) -> Result<Box<dyn ContactSolver>, SolverError> {
    let params: CcpNewtonParams = parse_params(SolverId::CcpNewton.as_str(), params)?;
    Ok(Box::new(CcpNewtonSolver::new(settings, params)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn pivoted_cholesky_reproduces_full_and_rank_deficient_matrices() {
        for (rows, rank) in [(12, 12), (12, 5)] {
            let mut rng = ChaCha8Rng::seed_from_u64(7);
            let j = DMatrix::from_fn(rows, rank, |_, _| rng.random_range(-1.0..1.0));
            let a = &j * j.transpose();
            let Some(f) = pivoted_cholesky(&a, None) else {
                panic!("no deadline")
            };
            let error = (&f * f.transpose() - &a).amax();
            println!(
                "{rows} x {rank}: F has {} columns, error {error:e}",
                f.ncols()
            );
            assert_eq!(f.ncols(), rank);
            assert!(error <= 1e-13 * a.amax(), "{error:e}");
        }
    }

    /// The analytic projection Jacobian matches finite differences in the sliding zone.
    #[test]
    fn projection_jacobian_matches_finite_differences() {
        let mu = 0.7;
        let z = Vector3::new(1.0, -0.5, 0.3);
        let j = projection_jacobian(mu, &z);
        let h = 1e-7;
        for k in 0..3 {
            let mut dz = Vector3::zeros();
            dz[k] = h;
            let fd =
                (project_ice_cream(mu, &(z + dz)) - project_ice_cream(mu, &(z - dz))) / (2.0 * h);
            assert!(
                (fd - j.column(k)).norm() < 1e-6,
                "column {k}: {fd} vs {}",
                j.column(k)
            );
        }
    }
}
