//! An orthonormal basis of `null(Jᵀ)`, the directions of the internal forces of
//! [`super::forces`] (design.md §5), and the projections `Nᵀλ` and `N z` on it, by exclusive
//! columns: contacts whose rows of `J` touch the same columns form a group, each group is
//! factored on its own by a pivoted Householder QR and the columns shared between groups
//! (the floating base) by a second, reduced one ([`NullSpaceWorkspace::null_space`] has
//! the derivation). nalgebra's eigen-decomposition of `J Jᵀ` gives the same space (the
//! tests' reference) at many times the cost on a robot's `J`, whose groups are small and
//! mostly zero elsewhere; no maintained crate factors by this block structure.

use std::cell::RefCell;

use nalgebra::DMatrix;

use super::frontal::Fronts;
use super::householder::{apply, apply_transpose, dot, householder_qr};

/// Eigenvalues of `J Jᵀ` at most this fraction of its trace `‖J‖²_F` span `null(Jᵀ)`
/// (singular values below about `1e-6 σ_max`; the tests' eigen-decomposition reference
/// takes the fraction of the largest eigenvalue).
const NULL_SPACE_TOLERANCE: f64 = 1e-12;
/// Above this many shared columns (one floating base's six) the reduced problem `K` of
/// [`NullSpaceWorkspace::null_space`] is most of the component (a column of stacked cubes,
/// every body's columns shared by the contacts above and below it): the factorization goes
/// by fronts instead ([`super::frontal`]).
const MAX_SHARED_COLUMNS: usize = 6;
/// An orthonormal basis (columns) of `null(Jᵀ) = null(J Jᵀ)`, the span of the eigenvalues
/// of `J Jᵀ` at most `NULL_SPACE_TOLERANCE tr(J Jᵀ)`, by exclusive columns
/// ([`NullSpaceWorkspace::null_space`]). Empty when `J` has full row rank (e.g. Solo-12's
/// four feet). Allocates only the returned basis once its thread's workspace has grown.
/// The metrics form `N` only where clarabel needs it ([`super::forces`]).
pub(super) fn null_space_of_transpose(jacobian: &DMatrix<f64>) -> DMatrix<f64> {
    with_workspace(|workspace, _| workspace.null_space(jacobian))
}

/// Runs `f` on this thread's [`NullSpaceWorkspace`] and a scratch vector (for `Nᵀλ`).
/// Not reentrant (`f` must not call it again).
pub(super) fn with_workspace<T>(f: impl FnOnce(&mut NullSpaceWorkspace, &mut Vec<f64>) -> T) -> T {
    thread_local! {
        static WORKSPACE: RefCell<(NullSpaceWorkspace, Vec<f64>)> = RefCell::default();
    }
    WORKSPACE.with(|cell| {
        let (workspace, scratch) = &mut *cell.borrow_mut();
        f(workspace, scratch)
    })
}

/// The contacts whose rows of `J` are nonzero on the same columns (a body's chain: the
/// four corners of a sole), and what [`NullSpaceWorkspace::null_space`] found for them.
#[derive(Debug, Clone, Default)]
struct Group {
    /// The group's first contact (its column mask is the group's).
    contact: usize,
    /// The group's rows of `J`: `rows[start..end]` of the workspace.
    start: usize,
    end: usize,
    /// The Householder factor of `E_b` in `factors[factor..]` (column-major, `end − start`
    /// rows), its `τ`s in `taus[tau..]` and its reflectors in `reflectors[reflector..]`.
    factor: usize,
    tau: usize,
    reflector: usize,
    /// The number of `E_b`'s (exclusive) columns; the factor holds `J[r_b, S]`'s after.
    columns: usize,
    /// `rank(E_b)` at the tolerance.
    rank: usize,
    /// `dim null(E_bᵀ)`, and the first row of the group's block in the reduced problem.
    free: usize,
    offset: usize,
}

/// Scratch buffers of [`null_space_of_transpose`], kept per thread: after the first call
/// on a problem size, a call allocates only the basis it returns.
#[derive(Debug, Default)]
pub(super) struct NullSpaceWorkspace {
    /// Per contact, the columns where its rows of `J` are nonzero (`words` bits).
    masks: Vec<u64>,
    /// The columns of `J` touched by at least two groups (bits).
    shared_bits: Vec<u64>,
    /// The same, as indices.
    shared: Vec<usize>,
    /// Per contact, its group.
    group_of: Vec<usize>,
    groups: Vec<Group>,
    /// The rows of `J`, group by group.
    rows: Vec<usize>,
    /// The groups' Householder factors, `τ`s and reflectors.
    factors: Vec<f64>,
    taus: Vec<f64>,
    reflectors: Vec<f64>,
    /// The reduced problem `K` (column-major, `Σ free` rows) and its factor's `τ`s and
    /// reflectors.
    reduced: Vec<f64>,
    reduced_taus: Vec<f64>,
    reduced_reflectors: Vec<f64>,
    /// `null(Kᵀ)` (column-major, `Σ free` rows).
    kernel: Vec<f64>,
    /// One column of a group's rows.
    column: Vec<f64>,
    /// A column order, or a group's columns of `J`.
    order: Vec<usize>,
    /// `N z` (the internal-force split's shortcut).
    pub(super) lifted: Vec<f64>,
    /// The factorization by fronts, and whether the last one went by it.
    fronts: Fronts,
    by_fronts: bool,
    /// The last factorization's rows of `J`, `Σ free`, `rank(K)` and `dim null(Jᵀ)`.
    m: usize,
    free: usize,
    reduced_rank: usize,
    dimension: usize,
}

impl NullSpaceWorkspace {
    /// `null(Jᵀ)` by exclusive columns. Contacts whose rows of `J` are nonzero on the same
    /// columns form a group `b` (rows `r_b`); a column of `J` nonzero in one group's rows
    /// only is exclusive to it (a leg's joints), the others are shared (the floating base).
    /// With `E_b = J[r_b, exclusive columns of b]` and `S` the shared columns,
    /// `Jᵀλ = 0` ⇔ `E_bᵀ λ_b = 0` for every `b` and `J[:, S]ᵀ λ = 0`. So
    /// `λ_b = Q_b [0; y_b]`, `Q_b` the orthogonal factor of a column-pivoted Householder
    /// QR of `E_b` of rank `ρ_b` (its last columns span `null(E_bᵀ)`, orthonormal), and
    /// `y` spans `null(Kᵀ)`, `K = [(Q_bᵀ J[r_b, S])[ρ_b.., :]]_b` the reduced problem
    /// (a second pivoted QR). Then `N = blockdiag(Q_b) [0; Y]` is orthonormal by
    /// construction (no Gram-Schmidt), and `J Jᵀ`'s quadratic form splits exactly:
    /// `λᵀ J Jᵀ λ = Σ_b ‖E_bᵀ λ_b‖² + ‖J[:, S]ᵀ λ‖²`, so every rank is decided at the
    /// same absolute tolerance `NULL_SPACE_TOLERANCE ‖J‖²_F` (`‖J‖²_F = tr(J Jᵀ)`).
    /// Solo-12's feet: four 3×3 factors of full rank, and no reduced problem. Talos's
    /// soles: two 12×6 factors of rank 6, and a 12×6 `K` that is zero to round-off (a sole's
    /// self-cancelling forces exert no wrench on the base either). A single group (the
    /// cube) has no shared column; a contact on the base itself has no exclusive column
    /// (`Q_b = I`): the general case is the same computation.
    /// `dim null(Jᵀ)` of the last [`NullSpaceWorkspace::factor`].
    pub(super) fn dimension(&self) -> usize {
        self.dimension
    }

    fn null_space(&mut self, jacobian: &DMatrix<f64>) -> DMatrix<f64> {
        self.factor(jacobian);
        self.basis()
    }

    /// The factorization of [`NullSpaceWorkspace::null_space`] without forming `N`: the
    /// groups' factors of `E_b` (followed, where `null(E_bᵀ)` is not empty, by
    /// `Q_bᵀ J[r_b, S]`, whose rows `ρ_b..` are `K`'s block) and the pivoted QR of `K`.
    /// Talos's soles: 12 × 6 factors that reflect the 6 base columns as they go. Returns `dim null(Jᵀ)`.
    /// [`NullSpaceWorkspace::project`] and [`NullSpaceWorkspace::lift`] then apply `Nᵀ`
    /// and `N` by the stored reflectors; [`NullSpaceWorkspace::basis`] forms `N`.
    pub(super) fn factor(&mut self, jacobian: &DMatrix<f64>) -> usize {
        self.factor_columns(jacobian.as_slice(), jacobian.nrows())
    }

    /// [`NullSpaceWorkspace::factor`] of the column-major `J` of `m` rows in `data`.
    pub(super) fn factor_columns(&mut self, data: &[f64], m: usize) -> usize {
        self.factor_up_to(data, m, MAX_SHARED_COLUMNS)
    }

    /// [`NullSpaceWorkspace::factor_columns`] by fronts above `max_shared` shared columns.
    fn factor_up_to(&mut self, data: &[f64], m: usize, max_shared: usize) -> usize {
        let nv = data.len().checked_div(m).unwrap_or(0);
        let n = m / 3;
        self.m = m;
        self.free = 0;
        self.reduced_rank = 0;
        self.dimension = 0;
        self.by_fronts = false;
        self.groups.clear();
        self.rows.clear();
        if n == 0 {
            return 0;
        }
        // ‖J‖²_F.
        let tolerance = NULL_SPACE_TOLERANCE * dot(data, data).max(f64::MIN_POSITIVE);
        let words = nv.div_ceil(64).max(1);
        self.find_masks(data, m, words);
        self.group_contacts(n, words);
        self.find_shared_columns(words);
        if self.shared.len() > max_shared {
            self.by_fronts = true;
            self.dimension = self.fronts.factor(data, m, nv, tolerance);
            return self.dimension;
        }

        // Each group's factor of [E_b, J[r_b, S]], pivoting on E_b's columns only.
        self.factors.clear();
        self.taus.clear();
        self.reflectors.clear();
        let ns = self.shared.len();
        let mut free = 0;
        for group in &mut self.groups {
            let rows = &self.rows[group.start..group.end];
            let mb = rows.len();
            group.factor = self.factors.len();
            let mask = &self.masks[group.contact * words..(group.contact + 1) * words];
            self.order.clear();
            for (w, (bits, shared)) in mask.iter().zip(&self.shared_bits).enumerate() {
                let mut exclusive = bits & !shared;
                while exclusive != 0 {
                    self.order
                        .push(64 * w + exclusive.trailing_zeros() as usize);
                    exclusive &= exclusive - 1;
                }
            }
            let columns = self.order.len();
            // With fewer exclusive columns than rows (Talos's soles: 6 for 12 rows),
            // null(E_bᵀ) is not empty: J[r_b, S] goes after E_b into the same QR, whose
            // reflectors turn it into Q_bᵀ J[r_b, S] as they go. Otherwise (Solo-12's
            // feet, of full rank) it is reflected only if the rank turns out deficient.
            let fused = mb > columns;
            if fused {
                self.order.extend_from_slice(&self.shared);
            }
            self.factors
                .resize(group.factor + mb * self.order.len(), 0.0);
            let targets = self.factors[group.factor..].chunks_exact_mut(mb);
            for (&k, out) in self.order.iter().zip(targets) {
                gather(&data[k * m..(k + 1) * m], rows, out);
            }
            group.tau = self.taus.len();
            self.taus.resize(group.tau + mb.min(columns), 0.0);
            group.reflector = self.reflectors.len();
            self.reflectors
                .resize(group.reflector + mb * mb.min(columns), 0.0);
            group.rank = householder_qr(
                &mut self.factors[group.factor..],
                mb,
                columns,
                &mut self.taus[group.tau..],
                &mut self.reflectors[group.reflector..],
                tolerance,
                None,
            );
            group.columns = columns;
            group.free = mb - group.rank;
            group.offset = free;
            free += group.free;
            if group.free > 0 && !fused {
                for &k in &self.shared {
                    let start = self.factors.len();
                    self.factors.resize(start + mb, 0.0);
                    gather(&data[k * m..(k + 1) * m], rows, &mut self.factors[start..]);
                    apply_transpose(
                        &self.reflectors[group.reflector..],
                        &self.taus[group.tau..],
                        group.rank,
                        &mut self.factors[start..],
                    );
                }
            }
        }
        self.free = free;
        if free == 0 {
            return 0;
        }

        // The reduced problem K = [(Q_bᵀ J[r_b, S])[ρ_b.., :]]_b, free × |S|.
        self.reduced.clear();
        self.reduced.resize(free * ns, 0.0);
        for group in self.groups.iter().filter(|g| g.free > 0) {
            let mb = group.end - group.start;
            let shared = &self.factors[group.factor + group.columns * mb..];
            for (s, column) in shared.chunks_exact(mb).take(ns).enumerate() {
                self.reduced[s * free + group.offset..s * free + group.offset + group.free]
                    .copy_from_slice(&column[group.rank..]);
            }
        }
        self.reduced_taus.clear();
        self.reduced_taus.resize(free.min(ns), 0.0);
        self.reduced_reflectors.clear();
        self.reduced_reflectors.resize(free * free.min(ns), 0.0);
        self.reduced_rank = householder_qr(
            &mut self.reduced,
            free,
            ns,
            &mut self.reduced_taus,
            &mut self.reduced_reflectors,
            tolerance,
            None,
        );
        self.dimension = free - self.reduced_rank;
        self.dimension
    }

    /// `Nᵀ λ` of the last [`NullSpaceWorkspace::factor`] into `out` (`N` in the orientation
    /// of the reflectors, before [`NullSpaceWorkspace::echelon`]'s rotation: the same
    /// norm, and the same `N Nᵀ λ` through [`NullSpaceWorkspace::lift`]): per group
    /// `(Q_bᵀ λ_b)[ρ_b..]`, then `(Q_Kᵀ ·)[rank(K)..]`. Talos's soles: 12 reflections
    /// where forming `N` takes 144.
    pub(super) fn project(&mut self, lambda: &[f64], out: &mut Vec<f64>) {
        if self.by_fronts {
            return self.fronts.project(lambda, out);
        }
        out.clear();
        if self.dimension == 0 {
            return;
        }
        self.kernel.clear();
        self.kernel.resize(self.free, 0.0);
        for group in self.groups.iter().filter(|g| g.free > 0) {
            let rows = &self.rows[group.start..group.end];
            self.column.resize(rows.len(), 0.0);
            gather(lambda, rows, &mut self.column);
            apply_transpose(
                &self.reflectors[group.reflector..],
                &self.taus[group.tau..],
                group.rank,
                &mut self.column,
            );
            self.kernel[group.offset..group.offset + group.free]
                .copy_from_slice(&self.column[group.rank..]);
        }
        apply_transpose(
            &self.reduced_reflectors,
            &self.reduced_taus,
            self.reduced_rank,
            &mut self.kernel,
        );
        out.extend_from_slice(&self.kernel[self.reduced_rank..]);
    }

    /// `N z` of the last [`NullSpaceWorkspace::factor`] into `out` (`m` rows), `N` in the
    /// orientation of [`NullSpaceWorkspace::project`].
    pub(super) fn lift(&mut self, z: &[f64], out: &mut [f64]) {
        if self.by_fronts {
            return self.fronts.lift(z, out);
        }
        out.fill(0.0);
        if self.dimension == 0 {
            return;
        }
        self.kernel.clear();
        self.kernel.resize(self.reduced_rank, 0.0);
        self.kernel.extend_from_slice(z);
        apply(
            &self.reduced_reflectors,
            &self.reduced_taus,
            self.reduced_rank,
            &mut self.kernel,
        );
        for group in self.groups.iter().filter(|g| g.free > 0) {
            let rows = &self.rows[group.start..group.end];
            self.column.clear();
            self.column.resize(group.rank, 0.0);
            self.column
                .extend_from_slice(&self.kernel[group.offset..group.offset + group.free]);
            apply(
                &self.reflectors[group.reflector..],
                &self.taus[group.tau..],
                group.rank,
                &mut self.column,
            );
            scatter(&self.column, rows, out);
        }
    }

    /// The basis `N` of the last [`NullSpaceWorkspace::factor`], `N[r_b, :] = Q_b [0; Y_b]`
    /// with `Y = Q_K [0; I]`, rotated to echelon form when there is a single group.
    pub(super) fn basis(&mut self) -> DMatrix<f64> {
        let (m, free, rank, dimension) = (self.m, self.free, self.reduced_rank, self.dimension);
        if dimension == 0 {
            return DMatrix::zeros(m, 0);
        }
        if self.by_fronts {
            let mut null = DMatrix::zeros(m, dimension);
            let mut unit = vec![0.0; dimension];
            for (c, column) in null.as_mut_slice().chunks_exact_mut(m).enumerate() {
                unit[c] = 1.0;
                self.fronts.lift(&unit, column);
                unit[c] = 0.0;
            }
            return null;
        }
        // Y = Q_K [0; I], free × dimension.
        self.kernel.clear();
        self.kernel.resize(free * dimension, 0.0);
        for (c, column) in self.kernel.chunks_exact_mut(free).enumerate() {
            column[rank + c] = 1.0;
            apply(&self.reduced_reflectors, &self.reduced_taus, rank, column);
        }

        // N[r_b, :] = Q_b [0; Y_b].
        let mut null = DMatrix::zeros(m, dimension);
        for group in self.groups.iter().filter(|g| g.free > 0) {
            let rows = &self.rows[group.start..group.end];
            for (c, y) in self.kernel.chunks_exact(free).enumerate() {
                let y = &y[group.offset..group.offset + group.free];
                if y.iter().all(|x| *x == 0.0) {
                    continue;
                }
                self.column.clear();
                self.column.resize(group.rank, 0.0);
                self.column.extend_from_slice(y);
                apply(
                    &self.reflectors[group.reflector..],
                    &self.taus[group.tau..],
                    group.rank,
                    &mut self.column,
                );
                scatter(
                    &self.column,
                    rows,
                    &mut null.as_mut_slice()[c * m..(c + 1) * m],
                );
            }
        }
        if self.groups.len() == 1 {
            self.echelon(&mut null);
        }
        null
    }

    /// Rotates each group's block of a block-diagonal `N` (`Y = I`) to the echelon form of
    /// the previous pivoted-Cholesky basis: `N_b ← N_b Wᵀ`, `W` orthogonal from a
    /// column-pivoted QR of `N_bᵀ`, so that `N_b` is lower triangular on the rows of its
    /// largest components. Same span, still orthonormal; `k_b(k_b − 1)/2` zeros more, which
    /// the internal-force SOCP's sparse factorization (clarabel's) sees: the dense
    /// Householder basis made the sliding cube's recorded step 7 % dearer (its SOCP runs on
    /// most steps), in echelon form 4 %. Applied to a single group only (one body carries
    /// every contact, as the cube): on Talos the two 6×12 QRs cost 18k instructions per
    /// step (4 % of it) where its standing steps rarely reach the SOCP.
    fn echelon(&mut self, null: &mut DMatrix<f64>) {
        let m = null.nrows();
        for group in self.groups.iter().filter(|g| g.free > 1) {
            let rows = &self.rows[group.start..group.end];
            let (mb, k) = (rows.len(), group.free);
            // N_bᵀ, k × mb column-major.
            self.kernel.clear();
            for &r in rows {
                self.kernel
                    .extend((0..k).map(|i| null[(r, group.offset + i)]));
            }
            self.order.clear();
            self.order.extend(0..mb);
            self.reduced_taus.clear();
            self.reduced_taus.resize(k, 0.0);
            self.column.clear();
            self.column.resize(k * k, 0.0);
            householder_qr(
                &mut self.kernel,
                k,
                mb,
                &mut self.reduced_taus,
                &mut self.column,
                0.0,
                Some(&mut self.order),
            );
            let out = null.as_mut_slice();
            for (c, &local) in self.order.iter().enumerate() {
                let r = rows[local];
                for i in 0..k {
                    let x = if i <= c { self.kernel[c * k + i] } else { 0.0 };
                    out[(group.offset + i) * m + r] = x;
                }
            }
        }
    }

    /// Per contact, the columns where its rows of `J` (column-major, `m` rows, `data`) are
    /// nonzero, `words` bits each. Branch-free: a triple is nonzero when the OR of its bit
    /// patterns without the sign bit is (`−0.0` counts as zero, as `x != 0.0` has it).
    fn find_masks(&mut self, data: &[f64], m: usize, words: usize) {
        self.masks.clear();
        self.masks.resize(m / 3 * words, 0);
        for (contact, mask) in self.masks.chunks_exact_mut(words).enumerate() {
            let first = 3 * contact;
            for (word, columns) in mask.iter_mut().zip(data.chunks(64 * m)) {
                // Bit b is column 64w + b: shifted in from the word's last column down.
                *word = columns.chunks_exact(m).rev().fold(0, |word, column| {
                    let rows = &column[first..first + 3];
                    let bits = rows[0].to_bits() | rows[1].to_bits() | rows[2].to_bits();
                    word << 1 | u64::from(bits << 1 != 0)
                });
            }
        }
    }

    /// Groups the contacts by equal column masks (in order of first appearance) and lists
    /// their rows group by group.
    fn group_contacts(&mut self, n: usize, words: usize) {
        self.groups.clear();
        self.group_of.clear();
        for contact in 0..n {
            let mask = &self.masks[contact * words..(contact + 1) * words];
            let found = self
                .groups
                .iter()
                .position(|g| self.masks[g.contact * words..(g.contact + 1) * words] == *mask);
            let b = found.unwrap_or_else(|| {
                self.groups.push(Group {
                    contact,
                    ..Group::default()
                });
                self.groups.len() - 1
            });
            self.group_of.push(b);
        }
        self.rows.clear();
        for (b, group) in self.groups.iter_mut().enumerate() {
            group.start = self.rows.len();
            for (contact, _) in self.group_of.iter().enumerate().filter(|(_, g)| **g == b) {
                self.rows.extend(3 * contact..3 * contact + 3);
            }
            group.end = self.rows.len();
        }
    }

    /// The columns touched by at least two groups.
    fn find_shared_columns(&mut self, words: usize) {
        self.shared_bits.clear();
        self.shared_bits.resize(words, 0);
        self.shared.clear();
        for w in 0..words {
            let mut once = 0_u64;
            let mut twice = 0_u64;
            for group in &self.groups {
                let bits = self.masks[group.contact * words + w];
                twice |= once & bits;
                once |= bits;
            }
            self.shared_bits[w] = twice;
            while twice != 0 {
                self.shared.push(64 * w + twice.trailing_zeros() as usize);
                twice &= twice - 1;
            }
        }
    }
}

/// `out[rows] = x`, the inverse of [`gather`].
fn scatter(x: &[f64], rows: &[usize], out: &mut [f64]) {
    for (triple, x) in rows.chunks_exact(3).zip(x.chunks_exact(3)) {
        out[triple[0]..triple[0] + 3].copy_from_slice(x);
    }
}

/// `out = column[rows]`; `rows` come in a contact's triples `3i, 3i + 1, 3i + 2`
/// ([`NullSpaceWorkspace::group_contacts`]), copied three at a time.
fn gather(column: &[f64], rows: &[usize], out: &mut [f64]) {
    for (triple, out) in rows.chunks_exact(3).zip(out.chunks_exact_mut(3)) {
        out.copy_from_slice(&column[triple[0]..triple[0] + 3]);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::generators::cube_on_plane;
    use nalgebra::{DVector, Vector3};

    #[test]
    fn the_null_space_is_the_eigen_decompositions() {
        // The cube's 4 corners (12 rows, rank 6) and seeded J = A B of 24 rows, rank 12,
        // 38 columns (Talos's sizes; dense, so one group with every column exclusive),
        // rows scaled over 6 decades: same dimension as the eigen-decomposition's,
        // orthonormal, the same projector N Nᵀ to 5e-8 (the eigenvectors' own ‖Jᵀ N‖∞ reach
        // 5e-13 ‖J‖∞ on the scaled cases, where the projector gap is), and
        // ‖Jᵀ N‖∞ ≤ 5e-15 ‖J‖∞.
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
        // The cube's basis is in echelon form: 6 × 5 / 2 zeros.
        let zeros = null_space_of_transpose(cube)
            .iter()
            .filter(|x| **x == 0.0)
            .count();
        assert!(zeros >= 15, "{zeros} zeros");
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
    /// nonzero on a shared 6-dof base and on its own chain of `bodies[b].1` dofs, which
    /// are exclusive to it; a chain of 0 dofs is the base itself), and each of its
    /// `bodies[b].0` contacts has the rows `C_i J_b` with `C_i = Rᵀ [I, −[r]×]` (a point at
    /// `r` in a frame `R`). nv = 6 + the chains' dofs.
    fn rigid_body_jacobian(
        bodies: &[(usize, usize)],
        rng: &mut rand_chacha::ChaCha8Rng,
    ) -> DMatrix<f64> {
        use rand::RngExt;
        let nv = 6 + bodies.iter().map(|b| b.1).sum::<usize>();
        let n: usize = bodies.iter().map(|b| b.0).sum();
        let mut jacobian = DMatrix::zeros(3 * n, nv);
        let (mut row, mut chain) = (0, 6);
        for &(k, dofs) in bodies {
            let mut body = DMatrix::zeros(6, nv);
            for i in 0..6 {
                for j in (0..6).chain(chain..chain + dofs) {
                    body[(i, j)] = rng.random_range(-1.0..1.0);
                }
            }
            chain += dofs;
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

    /// [`against_eigen_decomposition`] with its bounds asserted (projector gap 5e-11,
    /// `‖JᵀN‖∞ ≤ 1e-13 ‖J‖∞`) and the null space's dimension when `expected`; the worst
    /// gaps seen are kept in `worst`.
    fn assert_eigen_decompositions(
        jacobian: &DMatrix<f64>,
        case: &str,
        expected: Option<usize>,
        worst: &mut (f64, f64),
    ) {
        let (k, projector, annihilated) = against_eigen_decomposition(jacobian, case);
        if let Some(expected) = expected {
            assert_eq!(k, expected, "{case}");
        }
        *worst = (worst.0.max(projector), worst.1.max(annihilated));
        assert!(
            projector < 5e-11 && annihilated < 1e-13,
            "{case}: {projector:e} {annihilated:e}"
        );
    }

    /// `(dim, ‖N Nᵀ − N_e N_eᵀ‖∞, ‖Jᵀ N‖∞ / ‖J‖∞)` of [`null_space_of_transpose`] against
    /// the eigen-decomposition's `N_e`, after checking that the dimensions agree, that `N`
    /// is orthonormal to 1e-13 and that the projector gap is at most `1e-14 λ_max / λ_gap`
    /// (`λ_gap` the smallest eigenvalue of `J Jᵀ` above the threshold: both bases are
    /// accurate to round-off, so their angle is round-off over the relative spectral gap,
    /// Davis & Kahan 1970; the eigenvectors' own error dominates it).
    fn against_eigen_decomposition(jacobian: &DMatrix<f64>, case: &str) -> (usize, f64, f64) {
        let fast = null_space_of_transpose(jacobian);
        let eigen = null_space_by_eigen_decomposition(jacobian);
        let k = fast.ncols();
        assert_eq!(k, eigen.ncols(), "{case}: dimension");
        assert_eq!(fast.nrows(), jacobian.nrows(), "{case}: rows");
        let orthonormal = (fast.transpose() * &fast - DMatrix::identity(k, k)).amax();
        assert!(
            orthonormal < 1e-13,
            "{case}: orthonormal to {orthonormal:e}"
        );
        let projector = (&fast * fast.transpose() - &eigen * eigen.transpose()).amax();
        let annihilated = (jacobian.transpose() * &fast).amax() / jacobian.amax();
        let values = (jacobian * jacobian.transpose()).symmetric_eigenvalues();
        let largest = values.amax();
        let gap = values
            .iter()
            .filter(|v| **v > NULL_SPACE_TOLERANCE * largest)
            .fold(largest, |m, v| m.min(*v));
        assert!(
            projector <= 1e-14 * largest / gap,
            "{case}: projector gap {projector:e}, relative spectral gap {:e}",
            gap / largest
        );
        (k, projector, annihilated)
    }

    #[test]
    fn the_exclusive_columns_give_the_eigen_decompositions_null_space() {
        // Seeded contacts on rigid bodies, 8 draws each: Talos's two soles of 4 corners on
        // 6-dof legs (null(E_bᵀ) of dimension 6 each, K zero to round-off), Solo-12's four
        // feet on 3-dof legs (every E_b of full row rank: empty), bodies of 1, 2 and 4
        // contacts, a single sole (one group, no shared column), rank-deficient chains
        // (a sole on 3 and 2 dofs, feet on 2 dofs: K has rank), a contact on the base
        // itself (no exclusive column) next to two soles, a sole on the base alone. Same
        // dimension as the eigen-decomposition's (checked against the rigid bodies' wrench
        // ranks where the bodies are independent), orthonormal, the same projector N Nᵀ
        // to 1e-14 over the relative spectral gap (measured ≤ 4.1e-11 absolute on the draws
        // of smallest gap) and ‖Jᵀ N‖∞ ≤ 1e-13 ‖J‖∞ (measured ≤ 2.7e-14: the null directions of
        // E_bᵀ are accurate to round-off times E_b's condition, which J[r_b, S]'s columns
        // amplify; the pivoted Cholesky factor of J Jᵀ before had ≤ 2e-15).
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let mut worst = (0.0_f64, 0.0_f64);
        // A body's wrench map has rank 3 with one contact, 5 with two (a squeeze along
        // the line between them is internal), 6 with more.
        let rank = |c: usize| [0, 3, 5, 6][c.min(3)];
        type Bodies<'a> = &'a [(usize, usize)];
        let independent = |bodies: &[(usize, usize)]| {
            Some(bodies.iter().map(|&(c, _)| 3 * c - rank(c)).sum::<usize>())
        };
        let cases: [(Bodies, Option<usize>); 10] = [
            (&[(4, 6), (4, 6)], Some(12)),
            (&[(1, 3), (1, 3), (1, 3), (1, 3)], Some(0)),
            (
                &[(1, 6), (2, 6), (4, 6)],
                independent(&[(1, 6), (2, 6), (4, 6)]),
            ),
            (&[(4, 6)], Some(6)),
            (&[(2, 6), (2, 6), (2, 6), (2, 6)], Some(4)),
            (&[(4, 3), (4, 2)], None),
            (&[(1, 2), (1, 2), (1, 2), (1, 2)], None),
            (&[(4, 6), (4, 6), (1, 0)], None),
            (&[(4, 0)], Some(6)),
            (&[(2, 1), (3, 0), (1, 4)], None),
        ];
        for (bodies, expected) in cases {
            for draw in 0..8 {
                let jacobian = rigid_body_jacobian(bodies, &mut rng);
                let case = format!("{bodies:?} draw {draw}");
                assert_eigen_decompositions(&jacobian, &case, expected, &mut worst);
            }
        }
        println!(
            "largest projector gap {:e}, ‖JᵀN‖∞/‖J‖∞ {:e}",
            worst.0, worst.1
        );
    }

    /// A seeded `J` of columns of stacked free bodies (6 dofs each, in order up each
    /// column): `heights[k]` bodies in column `k`, each resting on the one below (or the
    /// ground) through 1 to 4 contacts at random points and frames. A contact between
    /// bodies `a` below and `b` above has the rows `C_b − C_a`, `C = Rᵀ [I, −[p − x]×]`
    /// on each body's dofs.
    fn stacked_bodies_jacobian(
        heights: &[usize],
        rng: &mut rand_chacha::ChaCha8Rng,
    ) -> DMatrix<f64> {
        use rand::RngExt;
        let bodies: usize = heights.iter().sum();
        // Per contact: its rows on the body above and, but on the ground, below.
        type BodyRows = (usize, DMatrix<f64>);
        let mut contacts: Vec<(BodyRows, Option<BodyRows>)> = Vec::new();
        let mut body = 0;
        for &height in heights {
            for level in 0..height {
                for _ in 0..rng.random_range(1..=4) {
                    let axis = Vector3::from_fn(|_, _| rng.random_range(-1.0..1.0));
                    let frame = nalgebra::Rotation3::new(axis).into_inner().transpose();
                    let mut point_on_body = || {
                        let r = Vector3::from_fn(|_, _| rng.random_range(-0.07..0.07));
                        let mut rows = DMatrix::zeros(3, 6);
                        rows.view_mut((0, 0), (3, 3)).copy_from(&frame);
                        rows.view_mut((0, 3), (3, 3))
                            .copy_from(&(-frame * r.cross_matrix()));
                        rows
                    };
                    let above = point_on_body();
                    let below = (level > 0).then(|| (body - 1, -point_on_body()));
                    contacts.push(((body, above), below));
                }
                body += 1;
            }
        }
        let mut jacobian = DMatrix::zeros(3 * contacts.len(), 6 * bodies);
        for (i, ((above, rows), below)) in contacts.iter().enumerate() {
            jacobian
                .view_mut((3 * i, 6 * above), (3, 6))
                .copy_from(rows);
            if let Some((b, rows)) = below {
                jacobian.view_mut((3 * i, 6 * b), (3, 6)).copy_from(rows);
            }
        }
        jacobian
    }

    #[test]
    fn the_fronts_give_the_whole_factorizations_internal_forces() {
        // Columns of stacked bodies (1 to 8 high, one to three columns side by side) and
        // the rigid-body robots of the tests above, factored by fronts (every shared column
        // above 0) and as a whole (no limit): the same dim null(Jᵀ), and for seeded λ the
        // same ‖Nᵀλ‖ and N Nᵀλ to 1e-12 ‖λ‖; the formed basis of the fronts is orthonormal
        // to 1e-13 and annihilated by Jᵀ to 1e-12 ‖J‖∞ (measured 3.9e-13 on Talos-like soles).
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(31);
        let mut cases = Vec::new();
        for heights in [&[1][..], &[2], &[3], &[6], &[8], &[2, 3], &[6, 1, 4]] {
            for _ in 0..4 {
                cases.push((
                    format!("columns {heights:?}"),
                    stacked_bodies_jacobian(heights, &mut rng),
                ));
            }
        }
        let robots: [&[(usize, usize)]; 4] = [
            &[(4, 6), (4, 6)],
            &[(1, 3), (1, 3), (1, 3), (1, 3)],
            &[(4, 6), (4, 6), (1, 0)],
            &[(4, 3), (4, 2)],
        ];
        for bodies in robots {
            for _ in 0..4 {
                cases.push((
                    format!("robot {bodies:?}"),
                    rigid_body_jacobian(bodies, &mut rng),
                ));
            }
        }
        let mut worst = 0.0_f64;
        for (case, jacobian) in &cases {
            let m = jacobian.nrows();
            let mut whole = NullSpaceWorkspace::default();
            let mut fronts = NullSpaceWorkspace::default();
            let dimension = whole.factor_up_to(jacobian.as_slice(), jacobian.nrows(), usize::MAX);
            assert!(!whole.by_fronts, "{case}");
            assert_eq!(
                fronts.factor_up_to(jacobian.as_slice(), jacobian.nrows(), 0),
                dimension,
                "{case}: dimension"
            );
            let null = fronts.basis();
            let k = null.ncols();
            let orthonormal = (null.transpose() * &null - DMatrix::identity(k, k)).amax();
            let annihilated = (jacobian.transpose() * &null).amax() / jacobian.amax();
            assert!(
                orthonormal < 1e-13 && annihilated < 1e-12,
                "{case}: {orthonormal:e} {annihilated:e}"
            );
            for _ in 0..3 {
                let lambda = DVector::from_fn(m, |_, _| rng.random_range(-1.0..1.0));
                let (mut q_whole, mut q_fronts) = (Vec::new(), Vec::new());
                whole.project(lambda.as_slice(), &mut q_whole);
                fronts.project(lambda.as_slice(), &mut q_fronts);
                let (mut p_whole, mut p_fronts) = (DVector::zeros(m), DVector::zeros(m));
                whole.lift(&q_whole, p_whole.as_mut_slice());
                fronts.lift(&q_fronts, p_fronts.as_mut_slice());
                let norm = |q: &[f64]| q.iter().map(|x| x * x).sum::<f64>().sqrt();
                let gap = (norm(&q_whole) - norm(&q_fronts))
                    .abs()
                    .max((p_whole - p_fronts).amax())
                    / lambda.norm();
                worst = worst.max(gap);
                assert!(gap < 1e-12, "{case}: {gap:e}");
            }
        }
        println!("largest gap {worst:e} of ‖λ‖");
    }

    #[test]
    fn the_reflectors_apply_the_formed_basis() {
        // NullSpaceWorkspace::project and lift (Nᵀλ and N z by the stored reflectors, what
        // the metrics use) against the formed basis N: ‖Nᵀλ‖ and the projection N Nᵀλ
        // equal to 1e-14 ‖λ‖ (the basis may be rotated: echelon form for one group), on
        // Talos's two soles, Solo-12's feet, one sole, a contact on the base next to two
        // soles, a rank-deficient reduced problem (a sole on 3 and 2 dofs).
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(23);
        let mut worst = 0.0_f64;
        let cases: [&[(usize, usize)]; 5] = [
            &[(4, 6), (4, 6)],
            &[(1, 3), (1, 3), (1, 3), (1, 3)],
            &[(4, 6)],
            &[(4, 6), (4, 6), (1, 0)],
            &[(4, 3), (4, 2)],
        ];
        for bodies in cases {
            for draw in 0..4 {
                let jacobian = rigid_body_jacobian(bodies, &mut rng);
                let lambda = DVector::from_fn(jacobian.nrows(), |_, _| rng.random_range(-1.0..1.0));
                let mut workspace = NullSpaceWorkspace::default();
                let null = workspace.null_space(&jacobian);
                let mut q = Vec::new();
                workspace.factor(&jacobian);
                workspace.project(lambda.as_slice(), &mut q);
                assert_eq!(q.len(), null.ncols(), "{bodies:?} draw {draw}");
                let mut moved = DVector::zeros(lambda.len());
                workspace.lift(&q, moved.as_mut_slice());
                let reference = &null * null.tr_mul(&lambda);
                let norm_q = q.iter().map(|v| v * v).sum::<f64>().sqrt();
                let gap = (norm_q - reference.norm())
                    .abs()
                    .max((moved - reference).amax())
                    / lambda.norm();
                worst = worst.max(gap);
                assert!(gap < 1e-14, "{bodies:?} draw {draw}: {gap:e}");
            }
        }
        println!("largest gap {worst:e} of ‖λ‖");
    }

    #[test]
    fn rank_deficient_and_dependent_rows_give_the_eigen_decompositions_null_space() {
        // Exactly rank-deficient E_b: a sole on a 6-dof leg with one joint column equal to
        // another's (a leg at a singularity; E_b of rank 5, null(E_bᵀ) of dimension 7, whose
        // extra direction the reduced problem removes: 12) and a foot on a 3-dof leg with a
        // zero joint column (E_b 3×2, a 1×6 reduced problem of rank 1: empty). Dependent
        // rows across groups: a contact whose rows are the sum of two others' on two bodies
        // (its own group, every column shared: 1 + 3). All against the
        // eigen-decomposition as above.
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
        let mut worst = (0.0_f64, 0.0_f64);
        for draw in 0..8 {
            let mut singular = rigid_body_jacobian(&[(4, 6), (4, 6)], &mut rng);
            let knee = singular.column(7).into_owned();
            singular.set_column(9, &knee);
            let mut zero_joint = rigid_body_jacobian(&[(1, 3), (1, 3), (1, 3), (1, 3)], &mut rng);
            zero_joint.column_mut(8).fill(0.0);
            // Contacts 0, 1 on body A, 2 on B, and 3's rows replaced by 0's plus 2's.
            let mut dependent = rigid_body_jacobian(&[(2, 6), (1, 6), (1, 6)], &mut rng);
            let sum = dependent.rows(0, 3) + dependent.rows(6, 3);
            dependent.rows_mut(9, 3).copy_from(&sum);
            for (jacobian, name, expected) in [
                (&singular, "singular leg", 12),
                (&zero_joint, "zero joint", 0),
                (&dependent, "dependent rows", 4),
            ] {
                let case = format!("{name} draw {draw}");
                assert_eigen_decompositions(jacobian, &case, Some(expected), &mut worst);
            }
        }
        println!(
            "largest projector gap {:e}, ‖JᵀN‖∞/‖J‖∞ {:e}",
            worst.0, worst.1
        );
    }

    #[test]
    fn the_null_space_is_empty_only_at_full_row_rank() {
        // Full row rank (3 rows of a point on one free body, nv = 6): empty; the cube's 4
        // corners (12 rows, rank 6): 6; nearly dependent rows (eigenvalue ratio ~1e-14,
        // below the 1e-12 threshold): the eigen-decomposition's count, 1; no contact: empty.
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
        let none = DMatrix::<f64>::zeros(0, 6);
        assert_eq!(null_space_of_transpose(&none).shape(), (0, 0));
    }
}
