//! Internal forces (design.md §5, paper Fig. 11): the part of `λ` in `null(Jᵀ)`, forces
//! that change no velocity, split into what the contact model requires and what the
//! solver injected (docs/ruler.md).
//!
//! With `N` an orthonormal basis of `null(Jᵀ)`, the internal part of `λ` is `N Nᵀ λ` and
//! its norm `‖Nᵀ λ‖` is the **total** internal force. Every `λ' = λ + N z` has the same
//! generalized impulse `Jᵀ λ'`, hence (without compliance) the same contact velocity `c`.
//! Among those that are answers of the same contact model at that velocity, the one of
//! least internal force, `λ*`, solves the small SOCP
//!
//! ```text
//! min_z ½ ‖Nᵀλ + z‖²   s.t. per contact i:  λ'_i = λ_i + N_i z  in the model's cone (relaxed
//!                                           by λ_i's own violation),
//!                                           |⟨λ'_i, ĉ_i⟩| ≤ |⟨λ_i, ĉ_i⟩|  when ‖ĉ_i‖ > 1e-4 v_s,
//! ```
//!
//! `ĉ_i` the model's corrected velocity (NCP `c + Γ(c)`, CCP `c`, LCP the pyramid's, RaiSim
//! `(−‖c_T‖ λ_T/‖λ_T‖, c_N + μ‖c_T‖)`, the face of the cone its sliding law selects):
//! with `λ'_i` in the cone and `ĉ_i` in the dual cone, `⟨λ'_i, ĉ_i⟩ = 0` is the
//! complementarity face (zero force when separating, the friction ray when sliding); a
//! contact at rest (`‖ĉ_i‖ ≤ 1e-4 v_s`) may take any force of the cone. The **required**
//! internal force is `‖Nᵀλ*‖`, the **spurious** one `‖λ − λ*‖ = ‖z*‖`. An exact, least
//! internal force answer has spurious 0; a pushed cube at stiction has a required part
//! (unequal friction forces keep it from rotating).
//!
//! The SOCP is solved in units where `λ_s = ‖λ‖∞` and `v_s = ‖g‖∞` are 1, at record time,
//! never inside a solver, and not at all when the total is at most `1e-9 ‖λ‖∞` (then
//! required is 0 and spurious the total) or when `z = −Nᵀλ̃` is feasible (then it is the
//! minimizer). Otherwise a dedicated ADMM ([`admm_least_internal_force`]: the projection
//! of the least-norm answer onto `{λ̃ + N z}` ∩ the contacts' sets, ~10⁴–10⁵ instructions
//! for a cube) solves it to `ADMM_TOLERANCE`; when it does not reach that within
//! `ADMM_MAX_ITER` iterations, clarabel (`solvers/conic.rs`, ~10⁶ instructions) does,
//! and [`clarabel_fallbacks`] counts it.

use std::sync::atomic::{AtomicU64, Ordering};

use nalgebra::{DMatrix, DVector, Vector3};
use serde::{Deserialize, Serialize};

use crate::problem::{cones, contact_vector, ContactProblem};
use crate::solvers::conic::{ConicLimits, ConicProgram};
use crate::solvers::ContactModel;

/// Eigenvalues of `J Jᵀ` at most this fraction of the largest span `null(Jᵀ)` (singular
/// values below `1e-6 σ_max`).
const NULL_SPACE_TOLERANCE: f64 = 1e-12;
/// A contact whose corrected velocity is at most this fraction of `v_s` is at rest.
const AT_REST: f64 = 1e-4;
/// A total internal force at most this fraction of `‖λ‖∞` is not split (an exact answer
/// of least internal force, as ADMM's, has 1e-16 here).
const NEGLIGIBLE: f64 = 1e-9;
/// Clarabel's tolerance on the dimensionless SOCP.
const SOCP_TOLERANCE: f64 = 1e-10;
/// Clarabel's iteration cap on the SOCP.
const SOCP_MAX_ITER: usize = 200;
/// The relaxation that keeps an interior in the SOCP's constraints (dimensionless).
const FLOOR: f64 = 1e-12;
/// The dedicated ADMM's stopping tolerance: every copy within this of the affine iterate
/// and no copy moving by more than this in an iteration (dimensionless, ∞-norm).
const ADMM_TOLERANCE: f64 = 1e-11;
/// The dedicated ADMM's iteration cap; past it clarabel solves the SOCP (the cubes of
/// the tests converge in 30–210 iterations, a few in 700–1300).
const ADMM_MAX_ITER: usize = 300;
/// Iterations with every copy at rest but not on the affine set before the ADMM gives up.
const ADMM_STUCK: usize = 10;
/// Iteration cap of the bracketing and of the regula falsi that find a slab's multiplier.
const MULTIPLIER_MAX_ITER: usize = 100;
/// Relative tolerance of a slab's multiplier (on the bracket, and on the slab's equation
/// relative to its half-width).
const MULTIPLIER_TOLERANCE: f64 = 1e-13;
/// The dedicated ADMM's penalty (the problem is dimensionless, its Hessian the identity).
const ADMM_PENALTY: f64 = 1.0;
/// The dedicated ADMM's over-relaxation (Boyd et al. 2011, §3.4.3; 1.6 took the fewest
/// iterations on the cubes of the tests among 1.0, 1.6 and 1.8, penalties 1 and 10).
const ADMM_RELAXATION: f64 = 1.6;

/// How many SOCPs of the split the dedicated ADMM left to clarabel (process-wide).
static CLARABEL_FALLBACKS: AtomicU64 = AtomicU64::new(0);

/// How many SOCPs of the internal-force split, since the process started, the dedicated
/// ADMM did not solve within its iteration cap and clarabel solved instead.
pub fn clarabel_fallbacks() -> u64 {
    CLARABEL_FALLBACKS.load(Ordering::Relaxed)
}

/// The internal forces of an answer (N·s).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct InternalForces {
    /// `‖Nᵀλ‖`, the norm of the part of `λ` in `null(Jᵀ)`.
    pub total: f64,
    /// The least internal force among answers of the same model with the same `Jᵀλ`.
    pub required: f64,
    /// The distance from `λ` to that answer.
    pub spurious: f64,
}

/// An orthonormal basis (columns) of `null(Jᵀ)`, from the eigen-decomposition of `J Jᵀ`;
/// no decomposition when a Cholesky factor proves the basis empty.
fn null_space_of_transpose(jacobian: &DMatrix<f64>) -> DMatrix<f64> {
    let gram = jacobian * jacobian.transpose();
    if has_no_small_eigenvalue(&gram) {
        return DMatrix::zeros(jacobian.nrows(), 0);
    }
    let eig = gram.symmetric_eigen();
    let largest = eig.eigenvalues.iter().fold(0.0_f64, |m, v| m.max(*v));
    let threshold = NULL_SPACE_TOLERANCE * largest.max(f64::MIN_POSITIVE);
    let columns: Vec<usize> = (0..eig.eigenvalues.len())
        .filter(|&k| eig.eigenvalues[k] <= threshold)
        .collect();
    DMatrix::from_fn(jacobian.nrows(), columns.len(), |i, j| {
        eig.eigenvectors[(i, columns[j])]
    })
}

/// True when no eigenvalue of the PSD `gram` is at most `NULL_SPACE_TOLERANCE λ_max`,
/// proven from its Cholesky factor: `λ_min ≥ 1 / ‖gram⁻¹‖_F` and `λ_max ≤ tr(gram)`
/// (a sufficient test, ~10× cheaper than the eigen-decomposition: Solo-12's feet).
fn has_no_small_eigenvalue(gram: &DMatrix<f64>) -> bool {
    let Some(factor) = gram.clone().cholesky() else {
        return false;
    };
    let smallest_bound = 1.0 / factor.inverse().norm();
    smallest_bound.is_finite() && smallest_bound > NULL_SPACE_TOLERANCE * gram.trace()
}

/// Internal forces: the norm of the part of `λ` in `null(Jᵀ)`, forces that change no
/// velocity (design.md §5, paper Fig. 11). `None` when the problem carries no `J`; NaN
/// when `λ` is not finite.
pub fn internal_forces(problem: &ContactProblem, lambda: &DVector<f64>) -> Option<f64> {
    let jacobian = problem.jacobian()?;
    if !lambda.iter().all(|x| x.is_finite()) {
        return Some(f64::NAN);
    }
    if jacobian.nrows() == 0 {
        return Some(0.0);
    }
    Some(null_space_of_transpose(jacobian).tr_mul(lambda).norm())
}

/// The corrected velocity `ĉ_i` of `model` whose orthogonality to `λ'_i` selects the
/// answers of contact `i` at velocity `c_i` (module doc).
fn complementarity_face(
    model: ContactModel,
    mu: f64,
    lambda: &Vector3<f64>,
    c: &Vector3<f64>,
) -> Vector3<f64> {
    match model {
        ContactModel::Ncp => c + cones::de_saxce_correction(mu, c),
        ContactModel::Ccp => *c,
        ContactModel::Lcp => c + cones::pyramid_correction(mu, c),
        ContactModel::Raisim => {
            let slip = c.xy().norm();
            let direction = if lambda.xy().norm() > 0.0 {
                lambda.xy() / lambda.xy().norm()
            } else if slip > 0.0 {
                -c.xy() / slip
            } else {
                return Vector3::new(0.0, 0.0, c.z);
            };
            Vector3::new(-slip * direction.x, -slip * direction.y, c.z + mu * slip)
        }
    }
}

/// The split of the module doc for an answer `λ` of `model`. `None` when the problem
/// carries no `J`, when `λ` or `c` is not finite, or when clarabel does not solve the
/// SOCP.
pub fn internal_force_split(
    problem: &ContactProblem,
    lambda: &DVector<f64>,
    model: ContactModel,
) -> Option<InternalForces> {
    split_internal_forces(problem, lambda, model, Method::Dedicated).map(|(split, _)| split)
}

/// How the SOCP of the split is solved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Method {
    /// No solver when `z = −q` satisfies every constraint, else the dedicated ADMM, else
    /// clarabel.
    Dedicated,
    /// Always clarabel (the reference of the tests).
    #[cfg_attr(not(test), allow(dead_code))]
    Clarabel,
}

/// Which path gave the split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Path {
    /// The total was negligible: nothing split.
    Negligible,
    /// `z = −q` was feasible.
    Unconstrained,
    /// The dedicated ADMM converged.
    Admm,
    /// Clarabel solved the SOCP.
    Clarabel,
}

/// [`internal_force_split`] by `method`, and the path taken.
fn split_internal_forces(
    problem: &ContactProblem,
    lambda: &DVector<f64>,
    model: ContactModel,
    method: Method,
) -> Option<(InternalForces, Path)> {
    let jacobian = problem.jacobian()?;
    let c = problem.velocity(lambda);
    if !(lambda.iter().all(|x| x.is_finite()) && c.iter().all(|x| x.is_finite())) {
        return None;
    }
    let null = null_space_of_transpose(jacobian);
    let impulse_scale = lambda.amax();
    let total = null.tr_mul(lambda).norm();
    if total <= NEGLIGIBLE * impulse_scale {
        // Nothing to split (no SOCP): both parts are at most 2 × total; counted spurious.
        let split = InternalForces {
            total,
            required: 0.0,
            spurious: total,
        };
        return Some((split, Path::Negligible));
    }
    let velocity_scale = problem.velocity_scale().max(c.amax());
    // Dimensionless: λ̃ = λ / λ_s, ĉ̃ = ĉ / v_s; z is in units of λ_s.
    let lambda_unit = lambda / impulse_scale;
    let constraints: Vec<ContactConstraint> = (0..problem.num_contacts())
        .map(|i| {
            let face = complementarity_face(
                model,
                problem.mu_of(i),
                &contact_vector(lambda, i),
                &contact_vector(&c, i),
            ) / velocity_scale;
            let sliding_or_separating =
                face.norm() * velocity_scale > AT_REST * problem.velocity_scale();
            ContactConstraint {
                model,
                mu: problem.mu_of(i),
                lambda: contact_vector(&lambda_unit, i),
                face: sliding_or_separating.then_some(face),
            }
        })
        .collect();
    let q = null.tr_mul(&lambda_unit);
    let (z, path) = least_internal_force_step(&constraints, &null, &q, method)?;
    let split = InternalForces {
        total,
        required: (&q + &z).norm() * impulse_scale,
        spurious: z.norm() * impulse_scale,
    };
    Some((split, path))
}

/// One contact's constraints on `λ̃'_i = λ̃_i + N_i z` (module doc), dimensionless.
struct ContactConstraint {
    model: ContactModel,
    mu: f64,
    /// `λ̃_i`.
    lambda: Vector3<f64>,
    /// `ĉ_i / v_s` when the contact is not at rest (its complementarity face applies).
    face: Option<Vector3<f64>>,
}

impl ContactConstraint {
    /// The cone's relaxation `δ`: `λ̃_i`'s own violation plus a floor (keeps `z = 0`
    /// feasible with an interior).
    fn cone_relaxation(&self) -> f64 {
        let l = &self.lambda;
        let violation = if self.model == ContactModel::Lcp {
            (l.x.abs() - self.mu * l.z)
                .max(l.y.abs() - self.mu * l.z)
                .max(-l.z)
        } else {
            l.xy().norm() - self.mu * l.z
        };
        violation.max(0.0) + FLOOR
    }

    /// The bound on `|⟨λ̃'_i, ĉ_i⟩|`: `|⟨λ̃_i, ĉ_i⟩|` plus a floor.
    fn face_bound(face: &Vector3<f64>, lambda: &Vector3<f64>) -> f64 {
        lambda.dot(face).abs() + FLOOR * face.norm()
    }

    /// The Euclidean projection of `y` onto the set `block` of this contact's constraints
    /// (the identity when the contact has no such constraint).
    fn project(&self, block: Block, y: &Vector3<f64>) -> Vector3<f64> {
        match block {
            Block::ConeAndFace => self.project_cone_and_face(y),
            Block::Floor if self.model == ContactModel::Lcp => {
                Vector3::new(y.x, y.y, y.z.max(-self.cone_relaxation()))
            }
            Block::Floor => *y,
        }
    }

    /// The projection onto the relaxed cone `K_δ` intersected with the face's slab
    /// `S = {|⟨y, ĉ⟩| ≤ b}`: `P_K(y − ν ĉ)` with the slab's multiplier `ν` (0 when
    /// `P_K(y)` is in `S`, else the root of `⟨P_K(y − ν ĉ), ĉ⟩ = ±b`, nonincreasing in
    /// `ν`, bracketed by doubling and found by regula falsi (Illinois)). One set rather
    /// than two: a sliding contact's face plane supports the cone along the friction
    /// ray, and projecting onto cone and slab in turn then converges sublinearly.
    fn project_cone_and_face(&self, y: &Vector3<f64>) -> Vector3<f64> {
        let delta = self.cone_relaxation();
        let cone = |x: &Vector3<f64>| {
            if self.model == ContactModel::Lcp {
                cones::project_relaxed_pyramid(self.mu, delta, x)
            } else {
                cones::project_relaxed_ice_cream(self.mu, delta, x)
            }
        };
        let unshifted = cone(y);
        let Some(face) = self.face else {
            return unshifted;
        };
        let bound = Self::face_bound(&face, &self.lambda);
        let at = unshifted.dot(&face);
        let squared = face.norm_squared();
        if at.abs() <= bound || squared == 0.0 {
            return unshifted;
        }
        let target = bound.copysign(at);
        let excess = |nu: f64| cone(&(y - face * nu)).dot(&face) - target;
        let (mut lo, mut h_lo) = (0.0, at - target);
        let mut hi = (at - target) / squared;
        let mut h_hi = excess(hi);
        for _ in 0..MULTIPLIER_MAX_ITER {
            if h_hi.signum() != h_lo.signum() || h_hi == 0.0 {
                break;
            }
            (lo, h_lo) = (hi, h_hi);
            hi *= 2.0;
            h_hi = excess(hi);
        }
        let mut nu = hi;
        let mut side = 0;
        for _ in 0..MULTIPLIER_MAX_ITER {
            if h_hi == 0.0 || (hi - lo).abs() <= MULTIPLIER_TOLERANCE * hi.abs().max(lo.abs()) {
                break;
            }
            nu = (lo * h_hi - hi * h_lo) / (h_hi - h_lo);
            let h = excess(nu);
            if h.abs() <= MULTIPLIER_TOLERANCE * bound {
                break;
            }
            if h.signum() == h_hi.signum() {
                (hi, h_hi) = (nu, h);
                if side == -1 {
                    h_lo /= 2.0;
                }
                side = -1;
            } else {
                (lo, h_lo) = (nu, h);
                if side == 1 {
                    h_hi /= 2.0;
                }
                side = 1;
            }
        }
        cone(&(y - face * nu))
    }

    /// Whether `λ̃'_i` satisfies the constraints (exactly as the SOCP states them).
    fn admits(&self, moved: &Vector3<f64>) -> bool {
        let delta = self.cone_relaxation();
        let in_cone = if self.model == ContactModel::Lcp {
            self.mu * moved.z - moved.x.abs() + delta >= 0.0
                && self.mu * moved.z - moved.y.abs() + delta >= 0.0
                && moved.z + delta >= 0.0
        } else {
            moved.xy().norm() <= self.mu * moved.z + delta
        };
        in_cone
            && self
                .face
                .is_none_or(|face| moved.dot(&face).abs() <= Self::face_bound(&face, &self.lambda))
    }
}

/// The sets a contact's constraints are split into for the ADMM, each projected onto
/// separately: the cone with the complementarity face's slab, and the LCP's floor
/// `λ'_N ≥ −δ`, which the shifted pyramid alone does not state when `μ < 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    ConeAndFace,
    Floor,
}

/// `z*` of the module doc's SOCP `min_z ½ ‖q + z‖²` under `constraints`, `q = Nᵀλ̃`,
/// and the path that found it. When `z = −q` (the answer of least norm with the same
/// `Jᵀλ`) satisfies every constraint it is the minimizer, found without a solver:
/// contacts at rest inside their cones; otherwise the dedicated ADMM, and clarabel when
/// the ADMM does not converge. `None` when clarabel does not solve it.
fn least_internal_force_step(
    constraints: &[ContactConstraint],
    null: &DMatrix<f64>,
    q: &DVector<f64>,
    method: Method,
) -> Option<(DVector<f64>, Path)> {
    if method == Method::Dedicated {
        let unconstrained = -q;
        let moved = null * &unconstrained;
        let feasible = constraints
            .iter()
            .enumerate()
            .all(|(i, c)| c.admits(&(c.lambda + contact_vector(&moved, i))));
        if feasible {
            return Some((unconstrained, Path::Unconstrained));
        }
        if let Some(z) = admm_least_internal_force(constraints, null, q) {
            return Some((z, Path::Admm));
        }
        CLARABEL_FALLBACKS.fetch_add(1, Ordering::Relaxed);
    }
    clarabel_least_internal_force(constraints, null, q).map(|z| (z, Path::Clarabel))
}

/// The SOCP by consensus ADMM on `y = λ̃ + N z ∈ R^{3m}` (Boyd et al. 2011, §5.1 and
/// §7.1): the Euclidean projection of the least-norm answer `r = λ̃ − N q` onto the
/// affine set `r + range(N)` intersected with the contacts' sets, one copy `y_b` per
/// [`Block`]:
///
/// ```text
/// v ← (r + ρ Σ_b (y_b − u_b)) / (1 + ρ B),  w ← Nᵀ v,  x ← r + N w   (Nᵀ r = 0)
/// x̂_b ← α x + (1 − α) y_b,  y_b ← P_b(x̂_b + u_b),  u_b ← u_b + x̂_b − y_b
/// ```
///
/// from `x = r` (`z = −q`), until `‖x − y_b‖∞` and `‖Δy_b‖∞` are at most
/// `ADMM_TOLERANCE`; then `z = w − q`. `None` past `ADMM_MAX_ITER` iterations.
fn admm_least_internal_force(
    constraints: &[ContactConstraint],
    null: &DMatrix<f64>,
    q: &DVector<f64>,
) -> Option<DVector<f64>> {
    let mut blocks = vec![Block::ConeAndFace];
    if constraints.iter().any(|c| c.model == ContactModel::Lcp) {
        blocks.push(Block::Floor);
    }
    let (rho, alpha) = (ADMM_PENALTY, ADMM_RELAXATION);
    let lambda = DVector::from_fn(3 * constraints.len(), |k, _| {
        constraints[k / 3].lambda[k % 3]
    });
    let r = &lambda - null * q;
    let mut x = r.clone();
    let mut w = DVector::zeros(null.ncols());
    let mut v = r.clone();
    let mut copies = vec![r.clone(); blocks.len()];
    let mut duals = vec![DVector::zeros(r.len()); blocks.len()];
    let mut stuck = 0;
    for _ in 0..ADMM_MAX_ITER {
        v.copy_from(&r);
        for (y, u) in copies.iter().zip(&duals) {
            v.axpy(rho, y, 1.0);
            v.axpy(-rho, u, 1.0);
        }
        v /= 1.0 + rho * blocks.len() as f64;
        null.tr_mul_to(&v, &mut w);
        null.mul_to(&w, &mut x);
        x += &r;
        let (mut primal, mut moved) = (0.0_f64, 0.0_f64);
        for ((block, y), u) in blocks.iter().zip(&mut copies).zip(&mut duals) {
            for (i, constraint) in constraints.iter().enumerate() {
                let xi = contact_vector(&x, i);
                let relaxed = xi * alpha + contact_vector(y, i) * (1.0 - alpha);
                let shifted = relaxed + contact_vector(u, i);
                let projected = constraint.project(*block, &shifted);
                moved = moved.max((projected - contact_vector(y, i)).amax());
                primal = primal.max((xi - projected).amax());
                y.fixed_rows_mut::<3>(3 * i).copy_from(&projected);
                u.fixed_rows_mut::<3>(3 * i)
                    .copy_from(&(shifted - projected));
            }
        }
        if primal <= ADMM_TOLERANCE && rho * moved <= ADMM_TOLERANCE {
            let z = w - q;
            return z.iter().all(|e| e.is_finite()).then_some(z);
        }
        // Copies at rest away from the affine set: the iteration no longer progresses
        // (the slab multiplier's round-off on a sliding contact's sliver); clarabel's turn.
        stuck = if rho * moved <= ADMM_TOLERANCE {
            stuck + 1
        } else {
            0
        };
        if stuck > ADMM_STUCK {
            return None;
        }
    }
    None
}

/// The SOCP by clarabel. `None` when clarabel does not solve it.
fn clarabel_least_internal_force(
    constraints: &[ContactConstraint],
    null: &DMatrix<f64>,
    q: &DVector<f64>,
) -> Option<DVector<f64>> {
    let k = null.ncols();
    let mut program = ConicProgram::default();
    for (i, constraint) in constraints.iter().enumerate() {
        let rows = null.rows(3 * i, 3);
        let (t1, t2, n) = (
            rows.row(0).transpose(),
            rows.row(1).transpose(),
            rows.row(2).transpose(),
        );
        add_cone(&mut program, constraint, (&t1, &t2, &n));
        if let Some(face) = constraint.face {
            // |⟨λ̃_i + N_i z, ĉ_i⟩| ≤ |⟨λ̃_i, ĉ_i⟩| (+ a floor that keeps an interior).
            let a = &t1 * face.x + &t2 * face.y + &n * face.z;
            let at_lambda = constraint.lambda.dot(&face);
            let bound = ContactConstraint::face_bound(&face, &constraint.lambda);
            program.nonnegative(&a, bound - at_lambda);
            program.nonnegative(&(-&a), bound + at_lambda);
        }
    }
    let limits = ConicLimits {
        tolerance: SOCP_TOLERANCE,
        max_iter: SOCP_MAX_ITER,
        time_limit: None,
    };
    let solution = program.solve(&DMatrix::identity(k, k), q, limits).ok()?;
    let solved = matches!(
        solution.status,
        clarabel::solver::SolverStatus::Solved | clarabel::solver::SolverStatus::AlmostSolved
    );
    (solved && solution.x.iter().all(|x| x.is_finite())).then_some(solution.x)
}

/// `λ̃_i + N_i z` in the cone of the contact's model, relaxed by `λ̃_i`'s own violation so
/// that `z = 0` is feasible. `rows` are the rows `(t1, t2, n)` of `N_i`, as columns.
fn add_cone(
    program: &mut ConicProgram,
    constraint: &ContactConstraint,
    (t1, t2, n): (&DVector<f64>, &DVector<f64>, &DVector<f64>),
) {
    let (mu, lambda) = (constraint.mu, &constraint.lambda);
    let delta = constraint.cone_relaxation();
    if constraint.model == ContactModel::Lcp {
        // μ λ'_N ∓ λ'_Tk + δ ≥ 0 and λ'_N + δ ≥ 0.
        for (t, lt) in [(t1, lambda.x), (t2, lambda.y)] {
            for sign in [1.0, -1.0] {
                let a = -(n * mu) + t * sign;
                program.nonnegative(&a, mu * lambda.z - sign * lt + delta);
            }
        }
        program.nonnegative(&(-n), lambda.z + delta);
    } else {
        // (μ λ'_N + δ, λ'_T) in the second-order cone.
        program.second_order(&[
            (-(n * mu), mu * lambda.z + delta),
            (-t1, lambda.x),
            (-t2, lambda.y),
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::generators::cube_on_plane;

    #[test]
    fn an_even_split_needs_no_internal_force_and_an_added_one_is_spurious() {
        // A 1 kg cube resting on 4 corners: the even split of the weight has no internal
        // force; adding a self-cancelling force (a null-space direction of Jᵀ) is spurious.
        let Ok(p) = cube_on_plane(1.0, 0.1, 0.5, 0.0, 1e-3) else {
            panic!("valid cube");
        };
        let Some(lambda) = exact_answer(&p) else {
            panic!("ncp-admm solves the cube");
        };
        let Some(even) = internal_force_split(&p, &lambda, ContactModel::Ncp) else {
            panic!("split computed");
        };
        assert!(even.total < 1e-9 * lambda.amax(), "{even:?}");
        let Some(jacobian) = p.jacobian() else {
            panic!("the cube has J");
        };
        let null = null_space_of_transpose(jacobian);
        assert_eq!(null.ncols(), 6);
        let added = 0.05 * lambda.amax();
        let pushed = &lambda + null.column(0) * added;
        let Some(split) = internal_force_split(&p, &pushed, ContactModel::Ncp) else {
            panic!("split computed");
        };
        assert!((split.total - added).abs() < 1e-9 * added, "{split:?}");
        assert!(split.required < 1e-6 * added, "{split:?}");
        assert!((split.spurious - added).abs() < 1e-6 * added, "{split:?}");
    }

    #[test]
    fn the_shortcut_gives_the_socp_answer() {
        // Cubes at rest, pushed at stiction and sliding (mu 0.5, 1 kg, pushes of 0, 3 and
        // 8 N), each exact answer plus seeded null-space forces of 0.1 %, 5 % and 50 % of
        // ‖λ‖∞, for the four models: the split by the shortcut or the dedicated ADMM equals
        // clarabel's, the required part to 1e-8 ‖λ‖∞ and the spurious one to 1e-5 ‖λ‖∞.
        // The spurious part is the looser: where sliding contacts confine λ' to slivers
        // of width ~1e-12 about their friction rays, the objective ½‖q + z‖² is known to
        // ~1e-12 by both solvers, which pins z (hence ‖z‖) only to ~√(2·1e-12) ≈ 1e-6,
        // while ‖q + z‖ = √(2 f) is pinned to ~1e-11. Shortcut and ADMM are both taken,
        // and the ADMM leaves fewer SOCPs to clarabel than it solves (measured: 33 ADMM,
        // 15 clarabel fallbacks, all on sliding cubes).
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let (mut shortcuts, mut admms, mut fallbacks) = (0, 0, 0);
        let (mut worst_required, mut worst_spurious) = (0.0_f64, 0.0_f64);
        for push in [0.0, 3.0, 8.0] {
            let Ok(p) = cube_on_plane(1.0, 0.1, 0.5, push, 1e-3) else {
                panic!("valid cube");
            };
            let Some(lambda) = exact_answer(&p) else {
                panic!("ncp-admm solves the cube");
            };
            let Some(jacobian) = p.jacobian() else {
                panic!("the cube has J");
            };
            let null = null_space_of_transpose(jacobian);
            for size in [1e-3, 5e-2, 0.5] {
                for _ in 0..4 {
                    let coefficients =
                        DVector::from_fn(null.ncols(), |_, _| rng.random_range(-1.0..1.0));
                    let added = &null * coefficients.normalize() * (size * lambda.amax());
                    let answer = &lambda + added;
                    for model in [
                        ContactModel::Ncp,
                        ContactModel::Lcp,
                        ContactModel::Ccp,
                        ContactModel::Raisim,
                    ] {
                        let fast = split_internal_forces(&p, &answer, model, Method::Dedicated);
                        let reference = split_internal_forces(&p, &answer, model, Method::Clarabel);
                        let (Some((fast, path)), Some((reference, _))) = (fast, reference) else {
                            panic!("split computed: push {push}, size {size}, {model:?}");
                        };
                        let scale = answer.amax();
                        let required = (fast.required - reference.required).abs() / scale;
                        let spurious = (fast.spurious - reference.spurious).abs() / scale;
                        worst_required = worst_required.max(required);
                        worst_spurious = worst_spurious.max(spurious);
                        assert!(
                            required <= 1e-8 && spurious <= 1e-5,
                            "push {push}, size {size}, {model:?}, {path:?}: \
                             {fast:?} vs {reference:?}"
                        );
                        assert_eq!(fast.total, reference.total);
                        match path {
                            Path::Unconstrained => shortcuts += 1,
                            Path::Admm => admms += 1,
                            Path::Clarabel => fallbacks += 1,
                            Path::Negligible => {}
                        }
                    }
                }
            }
        }
        println!(
            "shortcut {shortcuts}, ADMM {admms}, clarabel fallback {fallbacks}, largest \
             gaps: required {worst_required:e}, spurious {worst_spurious:e} of ‖λ‖∞"
        );
        assert!(
            shortcuts > 0 && admms > 0 && fallbacks < admms,
            "{shortcuts} shortcuts, {admms} ADMM, {fallbacks} fallbacks"
        );
    }

    #[test]
    fn the_cholesky_test_proves_only_empty_null_spaces() {
        // Full row rank (3 rows of a point on one free body, nv = 6): proven empty; the
        // cube's 4 corners (12 rows, rank 6): not proven, and the eigen path finds 6.
        let Ok(p) = cube_on_plane(1.0, 0.1, 0.5, 0.0, 1e-3) else {
            panic!("valid cube");
        };
        let Some(jacobian) = p.jacobian() else {
            panic!("the cube has J");
        };
        let one = jacobian.rows(0, 3).into_owned();
        assert!(has_no_small_eigenvalue(&(&one * one.transpose())));
        assert_eq!(null_space_of_transpose(&one).ncols(), 0);
        assert!(!has_no_small_eigenvalue(&(jacobian * jacobian.transpose())));
        assert_eq!(null_space_of_transpose(jacobian).ncols(), 6);
        // Nearly dependent rows (eigenvalue ratio ~1e-14): not proven empty.
        let mut close = jacobian.rows(0, 6).into_owned();
        let row = close.row(0) * (1.0 + 1e-7) + close.row(1) * 1e-8;
        close.set_row(3, &row);
        assert!(!has_no_small_eigenvalue(&(&close * close.transpose())));
    }

    /// The NCP answer of a problem by ncp-admm at a tight tolerance.
    fn exact_answer(p: &ContactProblem) -> Option<DVector<f64>> {
        let settings = crate::solvers::SolverSettings {
            eps_rel: 1e-12,
            ..Default::default()
        };
        let mut solver = crate::solvers::SolverId::NcpAdmm
            .build(settings, &serde_json::Map::new())
            .ok()?;
        let report = solver.solve(p, None).ok()?;
        report.status.is_converged().then_some(report.lambda)
    }
}
