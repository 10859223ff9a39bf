//! The internal-force split's SOCP (`src/metrics/forces.rs`) without a conic solver, when every
//! contact of a component slides or separates on a second-order cone (NCP, CCP, RaiSim).
//!
//! Such a contact has a complementarity face `ĉ_i` on (or next to) the boundary of the
//! dual cone: the cone's forces orthogonal to `ĉ_i` are the ray of the boundary generator
//! `d_i = (−μ ĉ_T/‖ĉ_T‖, 1) / √(1 + μ²)` (the friction ray of the sliding law), and the
//! SOCP's slab `|⟨λ'_i, ĉ_i⟩| ≤ β_i` is a sliver around it. Restricted to moves along the
//! rays, `λ'_i = λ_i + t_i d_i`, the SOCP becomes a small quadratic program:
//!
//! ```text
//! min_z ½ ‖q + z‖²   s.t.  E z = 0            (E_i = [e_1 e_2]ᵀ N_i: N_i z ∥ d_i)
//!                          l_i ≤ d_iᵀ N_i z ≤ u_i  (the slab, and λ'_i on the cone's side)
//! ```
//!
//! With `z = B y` (`B` an orthonormal basis of `null(E)`) it is the projection of `−Bᵀq`
//! on a box of `y`'s linear forms, solved exactly by its active sets (a projection's
//! minimizer is the projection on the affine hull of independent active constraints, and
//! is feasible: the feasible candidate of least objective). The answer is accepted only
//! when every contact's constraint of the SOCP holds at it within [`ACCEPT`]; otherwise
//! (a contact at rest, an LCP, too many contacts, an answer off its faces) the caller
//! uses clarabel. The restriction drops the sliver's width (about `√δ`, `δ ≥ 1e-12`):
//! on the sliding cube this answer and clarabel's differ by less than clarabel's own
//! accuracy (tests/metrics/internal_forces.rs).

use nalgebra::{DMatrix, DVector, Vector3};

use crate::problem::ContactModel;

/// The SOCP's constraints hold at the answer within this (dimensionless, units of `‖λ‖∞`).
const ACCEPT: f64 = 1e-10;
/// The relaxation that keeps an interior in the SOCP's constraints (dimensionless).
const FLOOR: f64 = 1e-12;
/// Eigenvalues of `EᵀE` at most this fraction of the largest span `null(E)` (singular
/// values below `1e-6` of the largest, as for `null(Jᵀ)`).
const RANK_TOLERANCE: f64 = 1e-12;
/// Most active sets tried; a larger problem goes to clarabel.
const MAX_ACTIVE_SETS: usize = 4096;
/// A contact is on its face when `|⟨λ̃_i, ĉ_i⟩| ≤ ON_FACE ‖ĉ_i‖` and `λ̃_i` violates its
/// cone by at most `ON_FACE`. A solver's answer at `eps_rel = 1e-6` lies that close to
/// its faces (ncp-admm's on the sliding cube: 2e-9 to 1e-6); the SOCP's sliver around the
/// ray is then at most about `√(2 ON_FACE)` wide (units of `‖λ‖∞`), the restriction's
/// worst error (measured: tests/metrics/internal_forces.rs).
const ON_FACE: f64 = 1e-5;

/// One contact's ray: the direction `d_i` and the interval `[l_i, u_i]` of `t_i`.
struct Ray {
    direction: Vector3<f64>,
    lower: f64,
    upper: f64,
}

/// `z*` of the split's SOCP restricted to moves along the contacts' friction rays (module
/// doc), or `None` when a contact has no ray (at rest, LCP, or `λ_i` off its face) or the
/// answer does not satisfy the SOCP's constraints.
pub(super) fn least_internal_force_on_rays(
    constraints: &[ContactConstraint],
    null: &DMatrix<f64>,
    q: &DVector<f64>,
) -> Option<DVector<f64>> {
    let k = null.ncols();
    let rays: Vec<Ray> = constraints.iter().map(ray_of).collect::<Option<_>>()?;
    // E z = 0: each contact's move N_i z has no component across its ray.
    let mut across = DMatrix::zeros(2 * rays.len(), k);
    let mut along = DMatrix::zeros(rays.len(), k);
    for (i, ray) in rays.iter().enumerate() {
        let rows = null.rows(3 * i, 3);
        let (e1, e2) = orthonormal_complement(&ray.direction);
        across.row_mut(2 * i).copy_from(&(e1.transpose() * rows));
        across
            .row_mut(2 * i + 1)
            .copy_from(&(e2.transpose() * rows));
        along
            .row_mut(i)
            .copy_from(&(ray.direction.transpose() * rows));
    }
    let basis = null_space(&across);
    let z = if basis.ncols() == 0 {
        DVector::zeros(k)
    } else {
        let start = -(basis.tr_mul(q));
        let forms = &along * &basis;
        let y = project_on_box(&start, &forms, &rays)?;
        &basis * y
    };
    let moved = null * &z;
    let admitted = constraints.iter().enumerate().all(|(i, c)| {
        let lambda = c.lambda + moved.fixed_rows::<3>(3 * i);
        c.admits_within(&lambda, ACCEPT)
    });
    admitted.then_some(z)
}

/// The ray of a sliding or separating contact on a second-order cone, with the interval of
/// `t` that keeps `λ_i + t d_i` in the slab and on the cone's side of the apex.
fn ray_of(constraint: &ContactConstraint) -> Option<Ray> {
    if constraint.model == ContactModel::Lcp {
        return None;
    }
    let face = constraint.face?;
    let off_face = constraint.lambda.dot(&face).abs() > ON_FACE * face.norm();
    if off_face || constraint.cone_relaxation() > ON_FACE {
        return None;
    }
    let slip = face.xy().norm();
    let direction = if slip > 0.0 {
        let t = -face.xy() * (constraint.mu / slip);
        Vector3::new(t.x, t.y, 1.0) / (1.0 + constraint.mu * constraint.mu).sqrt()
    } else {
        Vector3::z()
    };
    // |⟨λ_i + t d_i, ĉ_i⟩| ≤ β_i.
    let (at_lambda, rate) = (constraint.lambda.dot(&face), direction.dot(&face));
    let bound = ContactConstraint::face_bound(&face, &constraint.lambda);
    let (mut lower, mut upper) = if rate == 0.0 {
        (f64::NEG_INFINITY, f64::INFINITY)
    } else {
        let (a, b) = ((-bound - at_lambda) / rate, (bound - at_lambda) / rate);
        (a.min(b), a.max(b))
    };
    lower = lower.max(cone_lower_bound(constraint, &direction));
    upper = upper.max(lower);
    Some(Ray {
        direction,
        lower,
        upper,
    })
}

/// The least `t` with `λ_i + t d_i` in the relaxed cone `‖λ'_T‖ ≤ μ λ'_N + δ`. With `d_i`
/// on the cone's boundary (`‖d_T‖ = μ d_N = a`) and `b = μ λ_N + δ`, squaring leaves a
/// linear condition, `‖λ_T‖² + 2t ⟨λ_T, d_T⟩ ≤ b² + 2t a b`, with `b + t a ≥ 0`: for a
/// force off its ray (a solver's answer within its tolerance of the face) the line meets
/// the cone's boundary before the apex.
fn cone_lower_bound(constraint: &ContactConstraint, direction: &Vector3<f64>) -> f64 {
    let lambda = &constraint.lambda;
    let a = direction.xy().norm();
    let b = constraint.mu * lambda.z + constraint.cone_relaxation();
    if a == 0.0 {
        // The normal ray of a frictionless contact: λ'_N + δ ≥ 0 only.
        return -b;
    }
    let apex = -b / a;
    let kappa = a * b - lambda.xy().dot(&direction.xy());
    let room = b * b - lambda.xy().norm_squared();
    if kappa > 0.0 {
        apex.max(-room / (2.0 * kappa))
    } else {
        apex
    }
}

/// Two unit vectors completing `d` (unit) to an orthonormal basis.
fn orthonormal_complement(d: &Vector3<f64>) -> (Vector3<f64>, Vector3<f64>) {
    let seed = if d.x.abs() < 0.9 {
        Vector3::x()
    } else {
        Vector3::y()
    };
    let e1 = (seed - d * d.dot(&seed)).normalize();
    (e1, d.cross(&e1))
}

/// An orthonormal basis (columns) of `null(E)`, from the eigenvectors of `EᵀE` with
/// eigenvalues at most [`RANK_TOLERANCE`] of the largest.
fn null_space(e: &DMatrix<f64>) -> DMatrix<f64> {
    let k = e.ncols();
    let eigen = e.tr_mul(e).symmetric_eigen();
    let largest = eigen.eigenvalues.amax();
    let columns: Vec<usize> = (0..k)
        .filter(|&j| eigen.eigenvalues[j] <= RANK_TOLERANCE * largest)
        .collect();
    DMatrix::from_fn(k, columns.len(), |r, c| eigen.eigenvectors[(r, columns[c])])
}

/// The projection of `start` on `{y : l_i ≤ (F y)_i ≤ u_i}`: among the projections on the
/// affine sets of independent active constraints (each at its lower or upper bound) that
/// are feasible, the one nearest `start`. `None` past [`MAX_ACTIVE_SETS`] or when none is
/// feasible.
fn project_on_box(
    start: &DVector<f64>,
    forms: &DMatrix<f64>,
    rays: &[Ray],
) -> Option<DVector<f64>> {
    let mut search = ActiveSets {
        start,
        forms,
        rays,
        active: Vec::new(),
        budget: MAX_ACTIVE_SETS,
        best: None,
    };
    search.visit(0)?;
    search.best.map(|(_, y)| y)
}

/// The depth-first search of [`project_on_box`] over active sets of at most `dim y`
/// constraints, in increasing order of constraint.
struct ActiveSets<'a> {
    start: &'a DVector<f64>,
    forms: &'a DMatrix<f64>,
    rays: &'a [Ray],
    active: Vec<(usize, f64)>,
    budget: usize,
    best: Option<(f64, DVector<f64>)>,
}

impl ActiveSets<'_> {
    /// Tries the current active set, then every extension by a constraint from `from` on;
    /// `None` when the budget runs out.
    fn visit(&mut self, from: usize) -> Option<()> {
        self.budget = self.budget.checked_sub(1)?;
        if let Some(y) = project_on_affine(self.start, self.forms, &self.active) {
            let distance = (&y - self.start).norm_squared();
            if self.feasible(&y) && self.best.as_ref().is_none_or(|(d, _)| distance < *d) {
                self.best = Some((distance, y));
            }
        }
        if self.active.len() == self.start.len() {
            return Some(());
        }
        for i in from..self.rays.len() {
            for bound in [self.rays[i].lower, self.rays[i].upper] {
                if bound.is_finite() {
                    self.active.push((i, bound));
                    let visited = self.visit(i + 1);
                    self.active.pop();
                    visited?;
                }
            }
        }
        Some(())
    }

    /// Whether `l_i ≤ (F y)_i ≤ u_i` within [`ACCEPT`] for every ray.
    fn feasible(&self, y: &DVector<f64>) -> bool {
        self.rays.iter().enumerate().all(|(i, ray)| {
            let value = self.forms.row(i).transpose().dot(y);
            value >= ray.lower - ACCEPT && value <= ray.upper + ACCEPT
        })
    }
}

/// The projection of `start` on `{y : (F y)_i = b_i, (i, b_i) in active}`; `None` when the
/// active rows are dependent.
fn project_on_affine(
    start: &DVector<f64>,
    forms: &DMatrix<f64>,
    active: &[(usize, f64)],
) -> Option<DVector<f64>> {
    if active.is_empty() {
        return Some(start.clone());
    }
    let p = start.len();
    let a = DMatrix::from_fn(active.len(), p, |r, c| forms[(active[r].0, c)]);
    let residual = DVector::from_fn(active.len(), |r, _| active[r].1) - &a * start;
    let gram = &a * a.transpose();
    let scale = gram.diagonal().amax();
    let cholesky = gram.cholesky()?;
    let pivot = cholesky
        .l()
        .diagonal()
        .iter()
        .fold(f64::INFINITY, |m, x| m.min(*x));
    (pivot * pivot > RANK_TOLERANCE * scale)
        .then(|| start + a.transpose() * cholesky.solve(&residual))
}

/// One contact's constraints on `λ̃'_i = λ̃_i + N_i z` (the split's SOCP), dimensionless.
pub(super) struct ContactConstraint {
    pub(super) model: ContactModel,
    pub(super) mu: f64,
    /// `λ̃_i`.
    pub(super) lambda: Vector3<f64>,
    /// `ĉ_i / v_s` when the contact is not at rest (its complementarity face applies).
    pub(super) face: Option<Vector3<f64>>,
}

impl ContactConstraint {
    /// The cone's relaxation `δ`: `λ̃_i`'s own violation plus a floor (keeps `z = 0`
    /// feasible with an interior).
    pub(super) fn cone_relaxation(&self) -> f64 {
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
    pub(super) fn face_bound(face: &Vector3<f64>, lambda: &Vector3<f64>) -> f64 {
        lambda.dot(face).abs() + FLOOR * face.norm()
    }

    /// Whether `λ̃'_i` satisfies the constraints (exactly as the SOCP states them).
    pub(super) fn admits(&self, moved: &Vector3<f64>) -> bool {
        self.admits_within(moved, 0.0)
    }

    /// Whether `λ̃'_i` satisfies the constraints with each one's bound raised by `slack`.
    pub(super) fn admits_within(&self, moved: &Vector3<f64>, slack: f64) -> bool {
        let delta = self.cone_relaxation() + slack;
        let in_cone = if self.model == ContactModel::Lcp {
            self.mu * moved.z - moved.x.abs() + delta >= 0.0
                && self.mu * moved.z - moved.y.abs() + delta >= 0.0
                && moved.z + delta >= 0.0
        } else {
            moved.xy().norm() <= self.mu * moved.z + delta
        };
        in_cone
            && self.face.is_none_or(|face| {
                moved.dot(&face).abs() <= Self::face_bound(&face, &self.lambda) + slack
            })
    }
}
