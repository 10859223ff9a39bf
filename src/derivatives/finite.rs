//! Finite differences of a solver's answers: the reference the implicit derivatives are
//! checked against, behind the same questions (a product along a direction, the
//! Jacobians with respect to `g`, `μ`, `R` and `G`'s symmetric entries).
//!
//! Step rule: along a direction `d`, `t = h · min_f (s_f / ‖d_f‖∞)` over the fields `f`
//! that move, `s_f = max(‖f‖∞, ε_f)` the field's own scale (`ε` the floor of an all-zero
//! field: `‖g‖∞` for `R`, 1 otherwise), `h` = [`FiniteDifferences::relative_step`]:
//! every field moves by at most `h` of its scale. Central differences
//! `(λ(θ + t d) − λ(θ − t d)) / 2t`, or, where `θ − t d` leaves the domain (`μ < 0` or
//! `R < 0`, at `μ = 0` or `R = 0`), the second-order one-sided
//! `(−3 λ(θ) + 4 λ(θ + t d) − λ(θ + 2t d)) / 2t`. With
//! [`FiniteDifferences::fourth_order`], the central stencil
//! `(8 (λ(θ + t d) − λ(θ − t d)) − (λ(θ + 2t d) − λ(θ − 2t d))) / 12t`, whose truncation
//! error `O(t⁴)` allows a larger step for answers of an interior point method (accurate
//! to about `1e-8` relative on sliding contacts: the error over the step dominates). Every perturbed problem is solved cold
//! (the solver reset, from `λ = 0`) and must converge: a warm start at the answer would
//! be accepted as it is whenever the perturbation moves a sliding contact's velocity
//! only in direction, to which the complementarity criterion is blind at first order
//! (it grows as the angle squared). The random directions of
//! [`FiniteDifferences::random_direction`] are seeded.

use nalgebra::{DMatrix, DVector};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{DerivativeError, ProblemDirection};
use crate::problem::ContactProblem;
use crate::solvers::ContactSolver;

/// Central finite differences (module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FiniteDifferences {
    /// `h`, the relative step. Default `1e-5`: truncation `O(h²)` and the solver's error
    /// over `h` balance near `1e-10` for answers accurate to `1e-15` relative.
    pub relative_step: f64,
    /// Seed of [`FiniteDifferences::random_direction`].
    pub seed: u64,
    /// The fourth-order central stencil (module docs) instead of the second-order one.
    /// Default `false`.
    pub fourth_order: bool,
}

impl Default for FiniteDifferences {
    fn default() -> Self {
        Self {
            relative_step: 1e-5,
            seed: 0,
            fourth_order: false,
        }
    }
}

impl FiniteDifferences {
    /// `dλ` along `direction`, by differences of `solver`'s answers (module docs).
    pub fn jvp(
        &self,
        solver: &mut dyn ContactSolver,
        problem: &ContactProblem,
        direction: &ProblemDirection,
    ) -> Result<DVector<f64>, DerivativeError> {
        if !(self.relative_step.is_finite() && self.relative_step > 0.0) {
            return Err(DerivativeError::InvalidSetting {
                field: "relative_step",
                value: self.relative_step,
                reason: "must be finite and > 0",
            });
        }
        direction.check(problem.num_contacts())?;
        let t = self.relative_step * step_scale(problem, direction);
        if t == 0.0 || !t.is_finite() {
            return Ok(DVector::zeros(problem.dim()));
        }
        let mut solve = |s: f64| -> Result<DVector<f64>, DerivativeError> {
            let moved = perturbed(problem, direction, s)?;
            solver.reset();
            let report = solver.solve(&moved, None)?;
            if !report.status.is_converged() {
                return Err(DerivativeError::ReferenceNotConverged {
                    point: format!("t = {s:e}"),
                    status: report.status.to_string(),
                });
            }
            Ok(report.lambda)
        };
        let forward = solve(t)?;
        if leaves_domain(problem, direction, -t) {
            let centre = solve(0.0)?;
            let further = solve(2.0 * t)?;
            return Ok((forward * 4.0 - centre * 3.0 - further) / (2.0 * t));
        }
        let backward = solve(-t)?;
        if self.fourth_order && !leaves_domain(problem, direction, -2.0 * t) {
            let (further, further_back) = (solve(2.0 * t)?, solve(-2.0 * t)?);
            return Ok(((forward - backward) * 8.0 - (further - further_back)) / (12.0 * t));
        }
        Ok((forward - backward) / (2.0 * t))
    }

    /// `∂λ/∂g` (`3n × 3n`), one column per entry of `g`.
    pub fn jacobian_free_velocity(
        &self,
        solver: &mut dyn ContactSolver,
        problem: &ContactProblem,
    ) -> Result<DMatrix<f64>, DerivativeError> {
        let dim = problem.dim();
        self.columns(solver, problem, dim, |j| ProblemDirection {
            free_velocity: Some(unit(dim, j)),
            ..Default::default()
        })
    }

    /// `∂λ/∂μ` (`3n × n`).
    pub fn jacobian_mu(
        &self,
        solver: &mut dyn ContactSolver,
        problem: &ContactProblem,
    ) -> Result<DMatrix<f64>, DerivativeError> {
        let n = problem.num_contacts();
        self.columns(solver, problem, n, |i| ProblemDirection {
            mu: Some(unit(n, i)),
            ..Default::default()
        })
    }

    /// `∂λ/∂R` (`3n × 3n`, the diagonal's entries).
    pub fn jacobian_compliance(
        &self,
        solver: &mut dyn ContactSolver,
        problem: &ContactProblem,
    ) -> Result<DMatrix<f64>, DerivativeError> {
        let dim = problem.dim();
        self.columns(solver, problem, dim, |j| ProblemDirection {
            compliance: Some(unit(dim, j)),
            ..Default::default()
        })
    }

    /// `∂λ/∂G` for symmetric changes, the columns of
    /// [`super::SolutionDerivative::jacobian_delassus_symmetric`] (the solvers assume a
    /// symmetric `G`, so entries move in pairs).
    pub fn jacobian_delassus_symmetric(
        &self,
        solver: &mut dyn ContactSolver,
        problem: &ContactProblem,
    ) -> Result<DMatrix<f64>, DerivativeError> {
        let dim = problem.dim();
        let pairs: Vec<(usize, usize)> = (0..dim)
            .flat_map(|k| (0..=k).map(move |j| (j, k)))
            .collect();
        self.columns(solver, problem, pairs.len(), |c| {
            let (j, k) = pairs[c];
            let mut dg = DMatrix::zeros(dim, dim);
            dg[(j, k)] = 1.0;
            dg[(k, j)] = 1.0;
            ProblemDirection {
                delassus: Some(dg),
                ..Default::default()
            }
        })
    }

    /// A random direction `k` (seeded by `seed` and `k`): entries uniform in `[−1, 1]`
    /// times each field's scale, `dG` symmetric, `dR` only where the problem has `R`.
    pub fn random_direction(&self, problem: &ContactProblem, k: u64) -> ProblemDirection {
        let mut rng =
            ChaCha8Rng::seed_from_u64(self.seed.wrapping_mul(0x9e37_79b9).wrapping_add(k));
        let dim = problem.dim();
        let g_scale = problem.delassus().amax().max(f64::MIN_POSITIVE);
        let mut dg = DMatrix::zeros(dim, dim);
        for col in 0..dim {
            for row in 0..=col {
                let x = rng.random_range(-1.0..1.0) * g_scale;
                dg[(row, col)] = x;
                dg[(col, row)] = x;
            }
        }
        let v_scale = problem.velocity_scale().max(f64::MIN_POSITIVE);
        let free_velocity = DVector::from_fn(dim, |_, _| rng.random_range(-1.0..1.0) * v_scale);
        let mu = DVector::from_fn(problem.num_contacts(), |_, _| rng.random_range(-1.0..1.0));
        let compliance = problem.compliance().map(|r| {
            let r_scale = r.amax().max(f64::MIN_POSITIVE);
            DVector::from_fn(dim, |_, _| rng.random_range(-1.0..1.0) * r_scale)
        });
        ProblemDirection {
            delassus: Some(dg),
            free_velocity: Some(free_velocity),
            mu: Some(mu),
            compliance,
        }
    }

    fn columns(
        &self,
        solver: &mut dyn ContactSolver,
        problem: &ContactProblem,
        count: usize,
        direction: impl Fn(usize) -> ProblemDirection,
    ) -> Result<DMatrix<f64>, DerivativeError> {
        let mut out = DMatrix::zeros(problem.dim(), count);
        for j in 0..count {
            let column = self.jvp(solver, problem, &direction(j))?;
            out.set_column(j, &column);
        }
        Ok(out)
    }
}

fn unit(len: usize, i: usize) -> DVector<f64> {
    let mut e = DVector::zeros(len);
    e[i] = 1.0;
    e
}

/// `min_f s_f / ‖d_f‖∞` over the fields that move (module docs).
fn step_scale(problem: &ContactProblem, direction: &ProblemDirection) -> f64 {
    let v_scale = problem.velocity_scale();
    let floor = |x: f64, eps: f64| if x > 0.0 { x } else { eps };
    let mut scale = f64::INFINITY;
    let mut consider = |field_scale: f64, d: f64| {
        if d > 0.0 {
            scale = scale.min(field_scale / d);
        }
    };
    if let Some(dg) = &direction.delassus {
        consider(floor(problem.delassus().amax(), 1.0), dg.amax());
    }
    if let Some(dg) = &direction.free_velocity {
        consider(floor(v_scale, 1.0), dg.amax());
    }
    if let Some(dmu) = &direction.mu {
        consider(floor(problem.mu().amax(), 1.0), dmu.amax());
    }
    if let Some(dr) = &direction.compliance {
        let r = problem.compliance().map_or(0.0, |r| r.amax());
        consider(floor(r, floor(v_scale, 1.0)), dr.amax());
    }
    if scale.is_finite() {
        scale
    } else {
        0.0
    }
}

/// `θ + s d` leaves the domain (`μ < 0` or `R < 0` somewhere).
fn leaves_domain(problem: &ContactProblem, direction: &ProblemDirection, s: f64) -> bool {
    let negative_mu = direction.mu.as_ref().is_some_and(|dmu| {
        problem
            .mu()
            .iter()
            .zip(dmu.iter())
            .any(|(m, d)| m + s * d < 0.0)
    });
    let negative_r = direction.compliance.as_ref().is_some_and(|dr| {
        (0..problem.dim()).any(|k| {
            let r = problem.compliance().map_or(0.0, |r| r[k]);
            r + s * dr[k] < 0.0
        })
    });
    negative_mu || negative_r
}

/// The problem `θ + s d`.
fn perturbed(
    problem: &ContactProblem,
    direction: &ProblemDirection,
    s: f64,
) -> Result<ContactProblem, DerivativeError> {
    let mut delassus = problem.delassus().clone();
    if let Some(dg) = &direction.delassus {
        delassus += dg * s;
    }
    let mut free_velocity = problem.free_velocity().clone();
    if let Some(dg) = &direction.free_velocity {
        free_velocity += dg * s;
    }
    let mut mu = problem.mu().clone();
    if let Some(dmu) = &direction.mu {
        mu += dmu * s;
    }
    let compliance = match (problem.compliance(), &direction.compliance) {
        (Some(r), Some(dr)) => Some(r + dr * s),
        (None, Some(dr)) => Some(dr * s),
        (r, None) => r.cloned(),
    };
    Ok(ContactProblem::from_assembly(
        delassus,
        free_velocity,
        mu,
        compliance,
    )?)
}
