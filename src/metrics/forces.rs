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
//! The SOCP is solved by clarabel (`solvers/conic.rs`) in units where `λ_s = ‖λ‖∞` and
//! `v_s = ‖g‖∞` are 1 (about 0.3 ms for a cube's 4 contacts). It runs at record time,
//! never inside a solver, and not at all when the total is at most `1e-9 ‖λ‖∞` (then
//! required is 0 and spurious the total) or when `z = −q` is feasible. A dense
//! interior point (`solvers/small_socp.rs`) is tried against it in the tests only: it
//! does not yet converge on most of the sliding cube's SOCPs (docs/speed.md "Phase 4 —
//! socp").

use nalgebra::{DMatrix, DVector, Vector3};
use serde::{Deserialize, Serialize};

use crate::problem::{cones, contact_vector, ContactProblem};
use crate::solvers::small_socp::{SmallSocp, SmallSocpStatus};
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
/// The dense interior point's tolerance on the dimensionless SOCP (residuals and gap).
const DENSE_TOLERANCE: f64 = 1e-12;
/// The dense interior point's iteration cap.
const DENSE_MAX_ITER: usize = 60;
/// The relaxation that keeps an interior in the SOCP's constraints (dimensionless).
const FLOOR: f64 = 1e-12;

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

/// An orthonormal basis (columns) of `null(Jᵀ) = null(J Jᵀ)`: by rigid body when the
/// bodies' rows are independent ([`null_space_by_bodies`]), otherwise from a pivoted
/// Cholesky factor of the whole `J Jᵀ` ([`null_space_of_gram`]). Empty when `J` has full
/// row rank (e.g. Solo-12's four feet). `J Jᵀ` is summed over `J`'s nonzero entries only
/// ([`SparseGram`]).
fn null_space_of_transpose(jacobian: &DMatrix<f64>) -> DMatrix<f64> {
    let sparse = SparseGram::of(jacobian);
    let tolerance = NULL_SPACE_TOLERANCE * sparse.gram.trace().max(f64::MIN_POSITIVE);
    null_space_by_bodies(&sparse, tolerance)
        .unwrap_or_else(|| null_space_of_gram(&sparse.gram, tolerance))
}

/// The null space of a PSD `gram` (`J Jᵀ`) from its pivoted Cholesky factor (the general
/// path: eigenvalues of `J Jᵀ` below `tolerance` span `null(Jᵀ)`).
fn null_space_of_gram(gram: &DMatrix<f64>, tolerance: f64) -> DMatrix<f64> {
    let factor = PivotedCholesky::of(gram.as_slice().to_vec(), gram.nrows(), tolerance);
    let mut basis = factor.null_basis();
    orthonormalize(&mut basis);
    basis
}

/// `J Jᵀ` and the contacts grouped by the columns where their rows of `J` are nonzero.
struct SparseGram {
    /// `J Jᵀ` over the columns of `J` that are not all zero (Talos's soles touch 18 of
    /// its 38 dofs).
    gram: DMatrix<f64>,
    /// Contacts whose three rows are nonzero on the same columns (a body's chain), in
    /// order of first appearance.
    groups: Vec<Vec<usize>>,
}

impl SparseGram {
    fn of(jacobian: &DMatrix<f64>) -> Self {
        let (rows, nv) = jacobian.shape();
        let n = rows / 3;
        let words = nv.div_ceil(64);
        let mut masks = vec![0_u64; n * words];
        let mut used = Vec::with_capacity(nv);
        for (k, column) in jacobian.as_slice().chunks_exact(rows.max(1)).enumerate() {
            let mut any = false;
            for (contact, rows) in column.chunks_exact(3).enumerate() {
                if rows.iter().any(|x| *x != 0.0) {
                    masks[contact * words + k / 64] |= 1 << (k % 64);
                    any = true;
                }
            }
            if any {
                used.push(k);
            }
        }
        let gram = if used.len() == nv {
            jacobian * jacobian.transpose()
        } else {
            let compact = jacobian.select_columns(&used);
            &compact * compact.transpose()
        };
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for contact in 0..n {
            let mask = &masks[contact * words..(contact + 1) * words];
            match groups
                .iter_mut()
                .find(|g| masks[g[0] * words..(g[0] + 1) * words] == *mask)
            {
                Some(group) => group.push(contact),
                None => groups.push(vec![contact]),
            }
        }
        Self { gram, groups }
    }

    /// The Gram matrix of the rows `r` of `J`: `(J Jᵀ)[r, r]`, column-major.
    fn sub(&self, r: &[usize]) -> Vec<f64> {
        let rows = self.gram.nrows();
        let g = self.gram.as_slice();
        let mut out = Vec::with_capacity(r.len() * r.len());
        for &j in r {
            let column = &g[j * rows..(j + 1) * rows];
            out.extend(r.iter().map(|&i| column[i]));
        }
        out
    }
}

/// `null(Jᵀ)` body by body. Contacts whose rows of `J` are nonzero on the same columns
/// (the dofs of one body's chain: the four corners of a sole) form a group `b`, and
/// `Jᵀλ = Σ_b J_bᵀ λ_b`. Each group's null space `null(J_bᵀ)` lies in `null(Jᵀ)`; their
/// direct sum is all of it exactly when the groups' row spaces are independent, i.e. when
/// the rows that each group's pivoted factor keeps have together full row rank, which
/// the pivoted factor of their Gram matrix decides (same tolerance). Talos's two soles
/// then cost two 12×12 factors of rank 6 and one 12×12 check instead of a 24×24 factor
/// of rank 12 and a 24×12 orthonormalization. `None` (use the general path) when the
/// check fails or there is a single group. Which contacts are grouped only decides the
/// cost: the check makes the answer the null space of `Jᵀ` whatever the grouping. Also
/// `None` when every group is a single contact (Solo-12's feet): the check would cost
/// what the general path costs.
fn null_space_by_bodies(sparse: &SparseGram, tolerance: f64) -> Option<DMatrix<f64>> {
    if sparse.groups.len() < 2 || sparse.groups.iter().all(|g| g.len() == 1) {
        return None;
    }
    let mut kept_rows = Vec::with_capacity(sparse.gram.nrows());
    let mut blocks = Vec::with_capacity(sparse.groups.len());
    for group in &sparse.groups {
        let rows: Vec<usize> = group.iter().flat_map(|&c| 3 * c..3 * c + 3).collect();
        let factor = PivotedCholesky::of(sparse.sub(&rows), rows.len(), tolerance);
        kept_rows.extend(factor.order[..factor.rank].iter().map(|&k| rows[k]));
        if factor.rank < rows.len() {
            blocks.push((rows, factor.null_basis()));
        }
    }
    let check = PivotedCholesky::of(sparse.sub(&kept_rows), kept_rows.len(), tolerance);
    if check.rank < kept_rows.len() {
        return None;
    }
    let dimension: usize = blocks.iter().map(|(_, basis)| basis.ncols()).sum();
    let mut null = DMatrix::zeros(sparse.gram.nrows(), dimension);
    let mut column = 0;
    for (rows, mut basis) in blocks {
        orthonormalize(&mut basis);
        for k in 0..basis.ncols() {
            for (local, &row) in rows.iter().enumerate() {
                null[(row, column + k)] = basis[(local, k)];
            }
        }
        column += basis.ncols();
    }
    Some(null)
}

/// A Cholesky factorization of a PSD matrix with complete pivoting (Higham, *Accuracy
/// and Stability of Numerical Algorithms*, 2002, §10.3): the largest remaining diagonal
/// pivot first, stopping at rank `r` when none exceeds the tolerance (the Schur
/// complement left, PSD, then has every eigenvalue below `(n − r) tolerance`). A pivot
/// bounds the Schur complement's eigenvalues from above but not the matrix's from below
/// in general; rank-revealing in practice (Higham, §10.3.2), and checked against the
/// eigen-decomposition in the tests.
struct PivotedCholesky {
    /// `L = [L₁₁; L₂₁]` in the first `rank` columns (column-major `n × n`, lower
    /// triangle; the rest is
    /// the Schur complement's).
    factor: Vec<f64>,
    n: usize,
    /// `P G Pᵀ ≈ L Lᵀ`: row `k` of the permuted matrix is row `order[k]` of `G`.
    order: Vec<usize>,
    rank: usize,
}

impl PivotedCholesky {
    /// Factors the column-major `n × n` symmetric `a`, of which only the lower triangle
    /// is read and written (symmetric pivoting as LAPACK's `dpstf2`).
    fn of(mut a: Vec<f64>, n: usize, tolerance: f64) -> Self {
        let mut order: Vec<usize> = (0..n).collect();
        let mut rank = 0;
        while rank < n {
            let j = rank;
            let mut p = j;
            for i in j + 1..n {
                if a[i + i * n] > a[p + p * n] {
                    p = i;
                }
            }
            let pivot = a[p + p * n];
            if pivot.is_nan() || pivot <= tolerance {
                break;
            }
            if p != j {
                // Swap indices j < p of the trailing matrix (lower triangle) and rows j, p
                // of the columns of L already computed.
                a.swap(j + j * n, p + p * n);
                for c in 0..j {
                    a.swap(j + c * n, p + c * n);
                }
                for i in j + 1..p {
                    a.swap(i + j * n, p + i * n);
                }
                let (left, right) = a.split_at_mut(p * n);
                left[j * n + p + 1..(j + 1) * n].swap_with_slice(&mut right[p + 1..n]);
                order.swap(j, p);
            }
            let (done, rest) = a.split_at_mut((j + 1) * n);
            let l = &mut done[j * n + j..(j + 1) * n];
            let root = pivot.sqrt();
            l[0] = root;
            l[1..].iter_mut().for_each(|x| *x /= root);
            let l = &l[1..];
            // Schur complement, lower triangle: column c −= L_c · L[c.., j].
            for (k, column) in rest.chunks_exact_mut(n).enumerate() {
                let c = j + 1 + k;
                let l_c = l[k];
                column[c..]
                    .iter_mut()
                    .zip(&l[k..])
                    .for_each(|(x, li)| *x -= li * l_c);
            }
            rank += 1;
        }
        Self {
            factor: a,
            n,
            order,
            rank,
        }
    }

    /// A basis (not orthonormal) of `null(Lᵀ Pᵀ)`: the columns of `Pᵀ [X; I]` with
    /// `L₁₁ᵀ X = −L₂₁ᵀ` (back substitution, `L₁₁` lower triangular).
    fn null_basis(&self) -> DMatrix<f64> {
        let (a, rank, n) = (&self.factor, self.rank, self.n);
        let free = n - rank;
        let mut basis = DMatrix::zeros(n, free);
        let mut x = vec![0.0; rank];
        for c in 0..free {
            for k in (0..rank).rev() {
                let dot: f64 = (k + 1..rank).map(|m| a[m + k * n] * x[m]).sum();
                x[k] = (-a[rank + c + k * n] - dot) / a[k + k * n];
            }
            for (k, xk) in x.iter().enumerate() {
                basis[(self.order[k], c)] = *xk;
            }
            basis[(self.order[rank + c], c)] = 1.0;
        }
        basis
    }
}

/// Orthonormalizes `basis`'s (independent) columns in place: modified Gram-Schmidt,
/// twice ("twice is enough": Giraud et al., Numer. Math. 2005), orthonormal to round-off
/// for the well-conditioned bases `[X; I]` of [`PivotedCholesky::null_basis`].
fn orthonormalize(basis: &mut DMatrix<f64>) {
    let m = basis.nrows();
    let q = basis.as_mut_slice();
    for j in 0..q.len() / m.max(1) {
        let (done, rest) = q.split_at_mut(j * m);
        let v = &mut rest[..m];
        for _ in 0..2 {
            for p in done.chunks_exact(m) {
                let dot: f64 = p.iter().zip(v.iter()).map(|(a, b)| a * b).sum();
                v.iter_mut().zip(p).for_each(|(x, a)| *x -= dot * a);
            }
        }
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// The null space of `J Jᵀ` from its eigen-decomposition (the reference of the tests).
#[cfg(test)]
fn null_space_by_eigen_decomposition(jacobian: &DMatrix<f64>) -> DMatrix<f64> {
    let gram = jacobian * jacobian.transpose();
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
/// carries no `J`, when `λ` or `c` is not finite, or when the SOCP is not solved.
pub fn internal_force_split(
    problem: &ContactProblem,
    lambda: &DVector<f64>,
    model: ContactModel,
) -> Option<InternalForces> {
    split_internal_forces(problem, lambda, model, Route::ShortcutThenSocp).map(|(split, _)| split)
}

/// How the split was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SplitPath {
    /// The total is negligible: nothing to split.
    Negligible,
    /// The unconstrained minimizer is feasible.
    Shortcut,
    /// The SOCP was solved (clarabel, or in tests the dense interior point).
    Socp,
    /// The dense interior point broke down; clarabel solved the SOCP.
    ClarabelFallback,
}

/// How the SOCP's minimizer is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    /// `z = −q` when it satisfies every constraint, otherwise clarabel.
    ShortcutThenSocp,
    /// Always the dense interior point of `solvers/small_socp.rs`, clarabel when it breaks
    /// down (tests only: on the cube scenarios it does not yet converge on most sliding
    /// steps, docs/speed.md "Phase 4 — socp").
    #[cfg(test)]
    Socp,
    /// Always clarabel (the tests' reference).
    #[cfg(test)]
    Clarabel,
}

impl Route {
    /// Whether the dense interior point solves the SOCP.
    fn dense(self) -> bool {
        match self {
            Route::ShortcutThenSocp => false,
            #[cfg(test)]
            Route::Socp => true,
            #[cfg(test)]
            Route::Clarabel => false,
        }
    }
}

/// [`internal_force_split`], with or without the shortcut.
fn split_internal_forces(
    problem: &ContactProblem,
    lambda: &DVector<f64>,
    model: ContactModel,
    route: Route,
) -> Option<(InternalForces, SplitPath)> {
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
        return Some((split, SplitPath::Negligible));
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
    let (z, path) = least_internal_force_step(&constraints, &null, &q, route)?;
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

/// `z*` of the module doc's SOCP `min_z ½ ‖q + z‖²` under `constraints`, `q = Nᵀλ̃`.
/// When `z = −q` (the answer of least norm with the same `Jᵀλ`) satisfies every
/// constraint it is the minimizer, found without a solver: contacts at rest inside their
/// cones; otherwise clarabel solves the SOCP (or, on the tests' [`Route::Socp`], the
/// dense interior point, clarabel when it breaks down). `None` when the SOCP is not
/// reported solved (clarabel's `AlmostSolved` and the dense method's counted as solved).
fn least_internal_force_step(
    constraints: &[ContactConstraint],
    null: &DMatrix<f64>,
    q: &DVector<f64>,
    route: Route,
) -> Option<(DVector<f64>, SplitPath)> {
    if route == Route::ShortcutThenSocp {
        let unconstrained = -q;
        let moved = null * &unconstrained;
        let feasible = constraints
            .iter()
            .enumerate()
            .all(|(i, c)| c.admits(&(c.lambda + contact_vector(&moved, i))));
        if feasible {
            return Some((unconstrained, SplitPath::Shortcut));
        }
    }
    let mut program = SmallSocp::new(null.ncols());
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
            program.nonnegative(a.as_slice(), bound - at_lambda);
            program.nonnegative((-&a).as_slice(), bound + at_lambda);
        }
    }
    if !route.dense() {
        return program
            .solve_with_clarabel(q.as_slice(), SOCP_TOLERANCE, SOCP_MAX_ITER)
            .map(|z| (z, SplitPath::Socp));
    }
    let report = program.solve(q.as_slice(), DENSE_TOLERANCE, DENSE_MAX_ITER);
    let z = DVector::from_column_slice(program.solution());
    let solved = matches!(
        report.status,
        SmallSocpStatus::Solved | SmallSocpStatus::AlmostSolved
    );
    if solved && z.iter().all(|x| x.is_finite()) {
        return Some((z, SplitPath::Socp));
    }
    // The dense method broke down (1 of the tests' 72 cube SOCPs): clarabel on the same
    // program.
    program
        .solve_with_clarabel(q.as_slice(), SOCP_TOLERANCE, SOCP_MAX_ITER)
        .map(|z| (z, SplitPath::ClarabelFallback))
}

/// `λ̃_i + N_i z` in the cone of the contact's model, relaxed by `λ̃_i`'s own violation so
/// that `z = 0` is feasible. `rows` are the rows `(t1, t2, n)` of `N_i`, as columns.
fn add_cone(
    program: &mut SmallSocp,
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
                program.nonnegative(a.as_slice(), mu * lambda.z - sign * lt + delta);
            }
        }
        program.nonnegative((-n).as_slice(), lambda.z + delta);
    } else {
        // (μ λ'_N + δ, λ'_T) in the second-order cone.
        let (a_n, a_1, a_2) = (-(n * mu), -t1, -t2);
        program.second_order(&[
            (a_n.as_slice(), mu * lambda.z + delta),
            (a_1.as_slice(), lambda.x),
            (a_2.as_slice(), lambda.y),
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

    /// The seeded cases of the split's tests: cubes at rest, pushed at stiction and sliding
    /// (mu 0.5, 1 kg, pushes of 0, 3 and 8 N), each exact answer plus seeded null-space
    /// forces of 0.1 %, 5 % and 50 % of ‖λ‖∞ (4 of each), with a label.
    fn seeded_answers() -> Vec<(String, ContactProblem, DVector<f64>)> {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut cases = Vec::new();
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
                for k in 0..4 {
                    let coefficients =
                        DVector::from_fn(null.ncols(), |_, _| rng.random_range(-1.0..1.0));
                    let added = &null * coefficients.normalize() * (size * lambda.amax());
                    let label = format!("push {push}, size {size}, draw {k}");
                    cases.push((label, p.clone(), &lambda + added));
                }
            }
        }
        cases
    }

    /// The larger of the required and spurious gaps between two splits, over `‖λ‖∞`.
    fn split_gap(a: &InternalForces, b: &InternalForces, lambda: &DVector<f64>) -> f64 {
        (a.required - b.required)
            .abs()
            .max((a.spurious - b.spurious).abs())
            / lambda.amax()
    }

    #[test]
    fn the_shortcut_gives_the_socp_answer() {
        // On the seeded cases, for the NCP and LCP models: the split with the shortcut
        // equals clarabel's on every case to 1e-8 ‖λ‖∞ (clarabel's dimensionless tolerance
        // is 1e-10), and both paths are taken.
        let (mut shortcuts, mut socps, mut worst) = (0, 0, 0.0_f64);
        for (label, p, answer) in seeded_answers() {
            for model in [ContactModel::Ncp, ContactModel::Lcp] {
                let fast = split_internal_forces(&p, &answer, model, Route::ShortcutThenSocp);
                let socp = split_internal_forces(&p, &answer, model, Route::Clarabel);
                let (Some((fast, path)), Some((socp, _))) = (fast, socp) else {
                    panic!("split computed: {label}, {model:?}");
                };
                let gap = split_gap(&fast, &socp, &answer);
                worst = worst.max(gap);
                assert!(gap <= 1e-8, "{label}, {model:?}: {fast:?} vs {socp:?}");
                assert_eq!(fast.total, socp.total);
                match path {
                    SplitPath::Shortcut => shortcuts += 1,
                    SplitPath::Socp | SplitPath::ClarabelFallback => socps += 1,
                    SplitPath::Negligible => {}
                }
            }
        }
        println!("shortcut {shortcuts}, SOCP {socps}, largest gap {worst:e} of ‖λ‖∞");
        assert!(
            shortcuts > 0 && socps > 0,
            "{shortcuts} shortcuts, {socps} SOCPs"
        );
    }

    #[test]
    fn the_dense_socp_gives_clarabels_split() {
        // On the seeded cases, for the NCP and LCP models: the split by the dense interior
        // point equals clarabel's on the same SOCP to 1e-6 ‖λ‖∞ (1e-12 and 1e-10;
        // largest measured 4.8e-7 — ABOVE the 1e-8 of the other split tests). The gap is
        // clarabel's: in a one-off diagnostic on these 72 SOCPs (docs/speed.md "Phase 4 —
        // socp"), wherever the two minimizers differ by more than 4e-12 the dense one
        // satisfies every constraint exactly and has the lower objective, or clarabel's
        // violates a constraint; and the dense answers equal the exact shortcut's to 9e-14.
        let (mut worst, mut fallbacks) = (0.0_f64, 0);
        for (label, p, answer) in seeded_answers() {
            for model in [ContactModel::Ncp, ContactModel::Lcp] {
                let dense = split_internal_forces(&p, &answer, model, Route::Socp);
                let reference = split_internal_forces(&p, &answer, model, Route::Clarabel);
                let (Some((dense, path)), Some((reference, _))) = (dense, reference) else {
                    panic!("split computed: {label}, {model:?}");
                };
                let gap = split_gap(&dense, &reference, &answer);
                worst = worst.max(gap);
                assert!(
                    gap <= 1e-6,
                    "{label}, {model:?}: {dense:?} vs {reference:?}"
                );
                fallbacks += usize::from(path == SplitPath::ClarabelFallback);
            }
        }
        println!("largest gap to clarabel {worst:e} of ‖λ‖∞, {fallbacks} fallbacks");
        // Measured: 1 of the 72 SOCPs falls back to clarabel.
        assert!(fallbacks <= 1, "{fallbacks} fallbacks");
    }

    #[test]
    fn the_pivoted_cholesky_finds_the_eigen_decompositions_null_space() {
        // The cube's 4 corners (12 rows, rank 6) and seeded J = A B of 24 rows, rank 12,
        // 38 columns (Talos's sizes), rows scaled over 6 decades: same dimension as the
        // eigen-decomposition's, orthonormal, the same projector N Nᵀ to 5e-8 (measured
        // ≤ 4.6e-9), and ‖Jᵀ N‖∞ ≤ 5e-15 ‖J‖∞ (measured ≤ 1.4e-15; the eigenvectors'
        // own ‖Jᵀ N‖∞ reach 5e-13 ‖J‖∞ on the scaled cases, where the projector gap is).
        use rand::{RngExt, SeedableRng};
        let Ok(p) = cube_on_plane(1.0, 0.1, 0.5, 0.0, 1e-3) else {
            panic!("valid cube");
        };
        let Some(cube) = p.jacobian() else {
            panic!("the cube has J");
        };
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let mut cases = vec![cube.clone()];
        for _ in 0..5 {
            let a = DMatrix::from_fn(24, 12, |i, _| {
                rng.random_range(-1.0..1.0) * 10f64.powi(i32::try_from(i % 7).unwrap_or(0) - 3)
            });
            let b = DMatrix::from_fn(12, 38, |_, _| rng.random_range(-1.0..1.0));
            cases.push(a * b);
        }
        let mut worst = 0.0_f64;
        for jacobian in &cases {
            let fast = null_space_of_transpose(jacobian);
            let reference = null_space_by_eigen_decomposition(jacobian);
            assert_eq!(fast.ncols(), reference.ncols());
            let k = fast.ncols();
            let orthonormal = (fast.transpose() * &fast - DMatrix::identity(k, k)).amax();
            let projector = (&fast * fast.transpose() - &reference * reference.transpose()).amax();
            let annihilated = (jacobian.transpose() * &fast).amax() / jacobian.amax();
            worst = worst.max(projector).max(annihilated);
            assert!(orthonormal < 1e-12, "{orthonormal:e}");
            assert!(
                projector < 5e-8 && annihilated < 5e-15,
                "{projector:e} {annihilated:e}"
            );
        }
        println!("largest projector or JᵀN gap {worst:e}");
    }

    /// A seeded `J` of contacts on rigid bodies: body `b` moves with `J_b` (6 × nv,
    /// nonzero on a shared 6-dof base and its own 6-dof chain; nv = 38 as Talos), and each
    /// of its contacts has the rows `C_i J_b` with `C_i = Rᵀ [I, −[r]×]` (a point at `r`
    /// in a frame `R`), `contacts[b]` contacts on body `b`.
    fn rigid_body_jacobian(contacts: &[usize], rng: &mut rand_chacha::ChaCha8Rng) -> DMatrix<f64> {
        use rand::RngExt;
        let nv = 38;
        let n: usize = contacts.iter().sum();
        let mut jacobian = DMatrix::zeros(3 * n, nv);
        let mut row = 0;
        for (b, &k) in contacts.iter().enumerate() {
            let mut body = DMatrix::zeros(6, nv);
            for i in 0..6 {
                for j in (0..6).chain(6 + 6 * b..12 + 6 * b) {
                    body[(i, j)] = rng.random_range(-1.0..1.0);
                }
            }
            for _ in 0..k {
                let r = Vector3::from_fn(|_, _| rng.random_range(-0.2..0.2));
                let axis = Vector3::from_fn(|_, _| rng.random_range(-1.0..1.0));
                let frame = nalgebra::Rotation3::new(axis).into_inner();
                let mut point = DMatrix::zeros(3, 6);
                point.view_mut((0, 0), (3, 3)).copy_from(&frame.transpose());
                let arm = -frame.transpose() * r.cross_matrix();
                point.view_mut((0, 3), (3, 3)).copy_from(&arm);
                jacobian.rows_mut(row, 3).copy_from(&(point * &body));
                row += 3;
            }
        }
        jacobian
    }

    #[test]
    fn the_null_space_by_bodies_is_the_general_one() {
        // Seeded contacts on rigid bodies (Talos's two soles of 4 corners, Solo-12's four
        // feet, bodies with 1, 2 and 4 contacts, one sole of 4): where the bodies' rows are
        // independent the body-by-body path answers, with the dimension of the general
        // path and of the eigen-decomposition, an orthonormal basis, the general path's
        // projector N Nᵀ to 2e-13 (measured ≤ 2.2e-14) and ‖Jᵀ N‖∞ ≤ 5e-15 ‖J‖∞ (measured
        // ≤ 2.0e-15). A contact whose rows are the
        // sum of two others' (another support, dependent on them) makes the check fail:
        // the general path answers. One contact per body (Solo-12) goes to the general
        // path directly.
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let mut worst = (0.0_f64, 0.0_f64);
        for contacts in [&[4, 4][..], &[1, 1, 1, 1], &[1, 2, 4], &[4], &[2, 2, 2, 2]] {
            let jacobian = rigid_body_jacobian(contacts, &mut rng);
            let sparse = SparseGram::of(&jacobian);
            let dense = &jacobian * jacobian.transpose();
            assert!((&sparse.gram - &dense).amax() <= 1e-15 * dense.amax());
            let tolerance = NULL_SPACE_TOLERANCE * dense.trace();
            let by_bodies = null_space_by_bodies(&sparse, tolerance);
            assert_eq!(sparse.groups.len(), contacts.len());
            if contacts.len() < 2 || contacts.iter().all(|&c| c == 1) {
                // One body, or one contact per body: the general path answers.
                assert!(by_bodies.is_none());
                assert_eq!(
                    null_space_of_transpose(&jacobian).ncols(),
                    null_space_by_eigen_decomposition(&jacobian).ncols()
                );
                continue;
            }
            let Some(fast) = by_bodies else {
                panic!("{contacts:?}: the bodies' rows are independent");
            };
            let general = null_space_of_gram(&dense, tolerance);
            let eigen = null_space_by_eigen_decomposition(&jacobian);
            let k = fast.ncols();
            assert_eq!(k, general.ncols(), "{contacts:?}");
            assert_eq!(k, eigen.ncols(), "{contacts:?}");
            // A body's wrench map has rank 3 with one contact, 5 with two (a squeeze along
            // the line between them is internal), 6 with more.
            let rank = |c: usize| [0, 3, 5, 6][c.min(3)];
            assert_eq!(k, contacts.iter().map(|&c| 3 * c - rank(c)).sum::<usize>());
            let orthonormal = (fast.transpose() * &fast - DMatrix::identity(k, k)).amax();
            let projector = (&fast * fast.transpose() - &general * general.transpose()).amax();
            let annihilated = (jacobian.transpose() * &fast).amax() / jacobian.amax();
            worst = (worst.0.max(projector), worst.1.max(annihilated));
            assert!(orthonormal < 1e-12, "{contacts:?}: {orthonormal:e}");
            assert!(
                projector < 2e-13 && annihilated < 5e-15,
                "{contacts:?}: {projector:e} {annihilated:e}"
            );
        }
        println!(
            "largest projector gap {:e}, ‖JᵀN‖∞/‖J‖∞ {:e}",
            worst.0, worst.1
        );
        // Contacts 0, 1 on body A, 2 on B, and 3's rows replaced by 0's plus 2's.
        let mut dependent = rigid_body_jacobian(&[2, 1, 1], &mut rng);
        let sum = dependent.rows(0, 3) + dependent.rows(6, 3);
        dependent.rows_mut(9, 3).copy_from(&sum);
        let sparse = SparseGram::of(&dependent);
        let tolerance = NULL_SPACE_TOLERANCE * sparse.gram.trace();
        assert_eq!(sparse.groups.len(), 3);
        assert!(null_space_by_bodies(&sparse, tolerance).is_none());
        assert_eq!(null_space_of_transpose(&dependent).ncols(), 4);
        assert_eq!(null_space_by_eigen_decomposition(&dependent).ncols(), 4);
    }

    #[test]
    fn the_pivoted_cholesky_finds_empty_null_spaces_only_at_full_rank() {
        // Full row rank (3 rows of a point on one free body, nv = 6): empty; the cube's 4
        // corners (12 rows, rank 6): 6; nearly dependent rows (eigenvalue ratio ~1e-14,
        // below the 1e-12 threshold): the eigen-decomposition's count, 1.
        let Ok(p) = cube_on_plane(1.0, 0.1, 0.5, 0.0, 1e-3) else {
            panic!("valid cube");
        };
        let Some(jacobian) = p.jacobian() else {
            panic!("the cube has J");
        };
        let one = jacobian.rows(0, 3).into_owned();
        assert_eq!(null_space_of_transpose(&one).ncols(), 0);
        assert_eq!(null_space_of_transpose(jacobian).ncols(), 6);
        let mut close = jacobian.rows(0, 6).into_owned();
        let row = close.row(0) * (1.0 + 1e-7) + close.row(1) * 1e-8;
        close.set_row(3, &row);
        assert_eq!(null_space_by_eigen_decomposition(&close).ncols(), 1);
        assert_eq!(null_space_of_transpose(&close).ncols(), 1);
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
