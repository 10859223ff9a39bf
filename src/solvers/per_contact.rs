//! The Gauss-Seidel loop shared by the per-contact solvers (Alg. 1, 2, 4, 5).
//!
//! Each sweep visits the contacts in order; contact `i` sees the velocity
//! `c_i = g_i + Σ_j (G + R)_ij λ_j` produced by the current forces of every contact, and a
//! [`ContactRule`] returns its new force `λ_i` from `c_i`, its diagonal block `(G + R)_ii`
//! and `μ_i`. The velocity `c` is kept up to date column by column after each contact
//! update (no allocation in the loop) and recomputed from scratch before convergence is
//! declared, so the reported residual is the one of the returned `λ`. On a factorized
//! operator `G = J M⁻¹ Jᵀ` no dense column exists: the loop keeps `w = M⁻¹ Jᵀ λ` (`nv`)
//! up to date with the sparse columns of `M⁻¹ Jᵀ` instead, `w += M⁻¹ J_iᵀ δ_i`, reads
//! `c_i = J_i w + g_i + R_i λ_i` when it visits contact `i`, and forms the whole `c` once
//! per sweep for the stopping test.
//!
//! Stopping (the shared test of [`super::support`]): after every sweep, the criterion
//! named by `stop` (relative by default) of the solver's model, at most its tolerance;
//! a relative step `‖λ_{k+1} − λ_k‖ / ‖λ_k‖` at most `eps_step` first is a stall, never
//! convergence. A non-finite or diverging sweep ends the solve with the last usable `λ`.
//! A rule runs as a solver in the solver shell ([`super::shell`]) through [`Sweeps`].

use std::time::Instant;

use nalgebra::{DVector, Matrix3, Vector2, Vector3};
use nalgebra_sparse::CscMatrix;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::shell::{Algorithm, Shell, SolveCall};
use super::support::{iterate_status, model_criteria, relative_step, stopping_status};
use super::{
    parse_params, ContactSolver, SolveReport, SolveStatus, SolverError, SolverId, SolverSettings,
};
use crate::problem::{
    contact_vector, set_contact_vector, ContactModel, ContactProblem, Delassus, FactorizedDelassus,
};

/// What a per-contact model does with one contact.
pub(crate) trait ContactRule {
    /// Called once per solve with the settings and the diagonal blocks of `G + R`, before
    /// the first sweep. An error (e.g. a singular block the rule must invert) ends the
    /// solve as a `NumericalError` at iteration 0.
    fn prepare(&mut self, settings: &SolverSettings, blocks: &[Matrix3<f64>])
        -> Result<(), String>;

    /// The new force of contact `i`, from its current force `lambda`, its current
    /// velocity `c` (with every contact's current force), its block and `μ`.
    fn update(
        &self,
        i: usize,
        mu: f64,
        block: &Matrix3<f64>,
        lambda: &Vector3<f64>,
        c: &Vector3<f64>,
    ) -> Vector3<f64>;

    /// Called after each sweep (RaiSim decays its relaxation factor here).
    fn end_sweep(&mut self) {}
}

/// A per-contact rule as an [`Algorithm`]: the Gauss-Seidel sweeps of the module doc.
pub(crate) struct Sweeps<R>(pub(crate) R);

impl<R: ContactRule + Send> Algorithm for Sweeps<R> {
    fn solve(&mut self, call: SolveCall<'_>) -> Result<SolveReport, SolverError> {
        Ok(sweeps(
            &mut self.0,
            call.settings,
            call.model,
            call.problem,
            call.warm_start,
            call.start,
        ))
    }
}

/// The sweeps of the module doc on a problem with contacts (warm start checked).
fn sweeps<R: ContactRule>(
    rule: &mut R,
    settings: &SolverSettings,
    model: ContactModel,
    problem: &ContactProblem,
    warm_start: Option<&DVector<f64>>,
    start: Instant,
) -> SolveReport {
    let finish = |lambda, status, iterations, history| {
        SolveReport::finish(
            problem, model, settings, lambda, status, iterations, start, history,
        )
    };
    let n = problem.num_contacts();
    let mut lambda = warm_start
        .cloned()
        .unwrap_or_else(|| DVector::zeros(problem.dim()));
    let blocks: Vec<Matrix3<f64>> = (0..n).map(|i| problem.diagonal_block(i)).collect();
    let mut history = settings
        .record_history
        .then(|| Vec::with_capacity(settings.max_iter));
    if let Err(what) = rule.prepare(settings, &blocks) {
        let status = SolveStatus::NumericalError { iteration: 0, what };
        return finish(lambda, status, 0, history);
    }
    let compliance = problem.compliance();
    let mut c = problem.velocity(&lambda);
    let mut tracked = match problem.operator() {
        Delassus::Dense(g) => Tracked::Velocity(g),
        Delassus::Factorized(f) => Tracked::Change(VelocityChange::new(f, &lambda)),
    };
    let mut previous = lambda.clone();
    for iteration in 1..=settings.max_iter {
        previous.copy_from(&lambda);
        for (i, block) in blocks.iter().enumerate() {
            let old = contact_vector(&lambda, i);
            let c_i = match &tracked {
                Tracked::Velocity(_) => contact_vector(&c, i),
                Tracked::Change(w) => w.contact_velocity(problem, i, &old),
            };
            let new = rule.update(i, problem.mu_of(i), block, &old, &c_i);
            let delta = new - old;
            if delta != Vector3::zeros() {
                set_contact_vector(&mut lambda, i, &new);
                match &mut tracked {
                    Tracked::Velocity(delassus) => {
                        // c += (G + R)[:, i] δ_i
                        c.gemv(1.0, &delassus.columns(3 * i, 3), &delta, 1.0);
                        if let Some(r) = compliance {
                            for k in 0..3 {
                                c[3 * i + k] += r[3 * i + k] * delta[k];
                            }
                        }
                    }
                    Tracked::Change(w) => w.add(i, &delta),
                }
            }
        }
        if let Tracked::Change(w) = &tracked {
            w.velocity_into(problem, &lambda, &mut c);
        }
        rule.end_sweep();
        if let Some(status) = iterate_status(&lambda, iteration, "forces") {
            return finish(previous, status, iteration, history);
        }
        let mut criteria = model_criteria(model, problem, &lambda, &c);
        let step = relative_step(&lambda, &previous);
        let tested = settings.stop.pick(&criteria);
        if tested <= settings.tolerance()
            || tested.is_nan()
            || step <= settings.eps_step
            || iteration == settings.max_iter
        {
            // Confirm (or report) on a velocity free of accumulated round-off.
            problem.velocity_into(&lambda, &mut c);
            criteria = model_criteria(model, problem, &lambda, &c);
        }
        if let Some(h) = history.as_mut() {
            h.push(settings.stop.pick(&criteria));
        }
        if let Some(status) = stopping_status(&criteria, step, settings, iteration, start) {
            return finish(lambda, status, iteration, history);
        }
    }
    finish(
        lambda,
        SolveStatus::MaxIterations,
        settings.max_iter,
        history,
    )
}

/// What the sweeps keep up to date as forces change (module docs).
enum Tracked<'a> {
    /// `c` itself, through the dense columns of `G`.
    Velocity(&'a nalgebra::DMatrix<f64>),
    /// `w = M⁻¹ Jᵀ λ`, through the sparse columns of `M⁻¹ Jᵀ`.
    Change(VelocityChange<'a>),
}

/// `w = M⁻¹ Jᵀ λ` of a factorized operator, kept with the columns of `M⁻¹ Jᵀ`.
struct VelocityChange<'a> {
    operator: &'a FactorizedDelassus,
    columns: CscMatrix<f64>,
    w: DVector<f64>,
}

impl<'a> VelocityChange<'a> {
    fn new(operator: &'a FactorizedDelassus, lambda: &DVector<f64>) -> Self {
        Self {
            operator,
            columns: operator.minv_jt(),
            w: operator.velocity_change(lambda.as_slice()),
        }
    }

    /// `w += M⁻¹ J_iᵀ δ_i`.
    fn add(&mut self, i: usize, delta: &Vector3<f64>) {
        let delta = [delta.x, delta.y, delta.z];
        FactorizedDelassus::add_velocity_change(&self.columns, i, &delta, self.w.as_mut_slice());
    }

    /// `c_i = J_i w + g_i + R_i λ_i`.
    fn contact_velocity(
        &self,
        problem: &ContactProblem,
        i: usize,
        lambda_i: &Vector3<f64>,
    ) -> Vector3<f64> {
        let jw = self.operator.contact_velocity(i, self.w.as_slice());
        let g = problem.free_velocity();
        Vector3::from_fn(|k, _| {
            let r = problem.compliance().map_or(0.0, |r| r[3 * i + k]);
            jw[k] + g[3 * i + k] + r * lambda_i[k]
        })
    }

    /// The whole `c` from `w`.
    fn velocity_into(&self, problem: &ContactProblem, lambda: &DVector<f64>, c: &mut DVector<f64>) {
        for i in 0..problem.num_contacts() {
            let c_i = self.contact_velocity(problem, i, &contact_vector(lambda, i));
            set_contact_vector(c, i, &c_i);
        }
    }
}

/// A step length `1 / d` guarded against a vanishing diagonal entry `d`.
pub(crate) fn inverse_step(d: f64) -> f64 {
    1.0 / d.max(MIN_DIAGONAL)
}

/// Smallest diagonal value used as a step denominator.
const MIN_DIAGONAL: f64 = 1e-12;

/// Alg. 1 lines 3-6 and Alg. 5 lines 3-6: a normal step `λ_N ← max(0, λ_N − ω c_N / G_NN)`,
/// then a tangential step `λ_T ← λ_T − ω c_T / min(G_T1, G_T2)` on the velocity updated
/// by the new `λ_N`, then `project_tangent(λ_T, μ λ_N)` (box clamp for the LCP, disk for
/// the NCP). `ω` is the over-relaxation (eq. 22), applied to the step before projection.
pub(crate) fn normal_then_tangential_step(
    block: &Matrix3<f64>,
    lambda: &Vector3<f64>,
    c: &Vector3<f64>,
    mu: f64,
    omega: f64,
    project_tangent: impl Fn(&Vector2<f64>, f64) -> Vector2<f64>,
) -> Vector3<f64> {
    let lambda_n = (lambda.z - omega * c.z * inverse_step(block[(2, 2)])).max(0.0);
    let d_n = lambda_n - lambda.z;
    let c_t = Vector2::new(c.x + block[(0, 2)] * d_n, c.y + block[(1, 2)] * d_n);
    let tangent_step = omega * inverse_step(block[(0, 0)].min(block[(1, 1)]));
    let lambda_t = project_tangent(&(lambda.xy() - c_t * tangent_step), mu * lambda_n);
    Vector3::new(lambda_t.x, lambda_t.y, lambda_n)
}

/// A relaxed per-contact step `(μ, G_ii, λ_i, c_i, ω) ↦ λ_i⁺` of the projected
/// Gauss-Seidel solvers (Alg. 1, 2, 5), `ω` the over-relaxation (eq. 22).
pub(crate) type RelaxedStep =
    fn(f64, &Matrix3<f64>, &Vector3<f64>, &Vector3<f64>, f64) -> Vector3<f64>;

/// The rule of a projected Gauss-Seidel solver: its step with `ω` from the settings.
struct PgsRule {
    step: RelaxedStep,
    omega: f64,
}

impl ContactRule for PgsRule {
    fn prepare(&mut self, settings: &SolverSettings, _: &[Matrix3<f64>]) -> Result<(), String> {
        self.omega = settings.over_relaxation;
        Ok(())
    }

    fn update(
        &self,
        _: usize,
        mu: f64,
        block: &Matrix3<f64>,
        lambda: &Vector3<f64>,
        c: &Vector3<f64>,
    ) -> Vector3<f64> {
        (self.step)(mu, block, lambda, c, self.omega)
    }
}

/// The projected Gauss-Seidel solvers have no parameters of their own.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct PgsParams {}

/// Builds the projected Gauss-Seidel solver `id` of `model` from its step.
pub(crate) fn build_pgs(
    id: SolverId,
    model: ContactModel,
    step: RelaxedStep,
    settings: SolverSettings,
    params: &Map<String, Value>,
) -> Result<Box<dyn ContactSolver>, SolverError> {
    let PgsParams {} = parse_params(id.as_str(), params)?;
    pgs_solver(id, model, step, settings)
}

/// The projected Gauss-Seidel solver `id` of `model` with its relaxed step.
pub(crate) fn pgs_solver(
    id: SolverId,
    model: ContactModel,
    step: RelaxedStep,
    settings: SolverSettings,
) -> Result<Box<dyn ContactSolver>, SolverError> {
    let rule = PgsRule {
        step,
        omega: settings.over_relaxation,
    };
    per_contact_solver(id.as_str(), model, settings, rule)
}

/// The per-contact solver `name` of `model`: `rule`'s sweeps in the solver shell.
pub(crate) fn per_contact_solver<R: ContactRule + Send + 'static>(
    name: &'static str,
    model: ContactModel,
    settings: SolverSettings,
    rule: R,
) -> Result<Box<dyn ContactSolver>, SolverError> {
    Ok(Shell::wrap(name, model, settings, Sweeps(rule))?.boxed())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::generators::single_contact;

    /// A rule that blows up on its second sweep.
    struct Exploding {
        sweeps: usize,
    }

    impl ContactRule for Exploding {
        fn prepare(&mut self, _: &SolverSettings, _: &[Matrix3<f64>]) -> Result<(), String> {
            Ok(())
        }
        fn update(
            &self,
            _: usize,
            _: f64,
            _: &Matrix3<f64>,
            lambda: &Vector3<f64>,
            _: &Vector3<f64>,
        ) -> Vector3<f64> {
            if self.sweeps >= 1 {
                Vector3::repeat(f64::INFINITY)
            } else {
                lambda + Vector3::new(0.0, 0.0, 1.0)
            }
        }
        fn end_sweep(&mut self) {
            self.sweeps += 1;
        }
    }

    #[test]
    fn divergence_is_reported_with_its_iteration() {
        // g_N = −2: the first sweep's λ = (0, 0, 1) is not an answer (c_N = −1).
        let Ok(p) = single_contact(0.5, Matrix3::identity(), Vector3::new(0.0, 0.0, -2.0)) else {
            panic!("valid problem");
        };
        let solver = Shell::wrap(
            "exploding",
            ContactModel::Ccp,
            SolverSettings::default(),
            Sweeps(Exploding { sweeps: 0 }),
        );
        let Ok(report) = solver.and_then(|mut s| s.solve(&p, None)) else {
            panic!("the solve runs");
        };
        assert!(matches!(
            report.status,
            SolveStatus::NumericalError { iteration: 2, .. }
        ));
        // The last usable forces are returned, with finite criteria.
        assert_eq!(report.lambda, DVector::from_vec(vec![0.0, 0.0, 1.0]));
        assert!(report.residual.is_finite());
    }
}
