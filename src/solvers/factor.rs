//! The Cholesky factor of `G + R + σ I` shared by the ADMM solvers (Alg. 3, line 1), and
//! the dense kernels of their iteration.
//!
//! The factor is kept between solves: it is recomputed only when the matrix `G + R` or the
//! shift `σ` (the ADMM proximal value, a function of ρ) changes.
//!
//! The factorization, the triangular solves and the product `A x` are our own, blocked by
//! [`BLOCK`] columns (register blocking, Golub & Van Loan 2013, §1.5.4 and §4.2.9): every
//! entry of the trailing matrix, of the right-hand side or of the product is loaded and
//! stored once per block of four columns instead of once per column, as nalgebra's
//! unblocked `Cholesky::new`, its `gemv` and a column-by-column substitution do. On the
//! ADMM's 120×120 system (40 contacts) the triangular solves were 44 % of a solve's
//! instructions and the two factorizations 13 % (docs/speed.md, "Phase 3").

use nalgebra::{DMatrix, DVector};

/// Columns combined at once by the kernels.
const BLOCK: usize = 4;

/// Below this size the solves go column by column: the blocks' set-up costs more than
/// they save on a few contacts (a 12×12 system: the sliding cube's four contacts).
const SMALL: usize = 16;

/// A Cholesky factor of `A + σ I`, refactored only when `A` or `σ` changes.
#[derive(Debug, Clone, Default)]
pub(crate) struct RegularizedCholesky {
    matrix: DMatrix<f64>,
    shift: f64,
    /// `L` of `A + σ I = L Lᵀ`, column-major `n × n`, in its lower triangle (the strict
    /// upper triangle holds leftovers of `A` and is never read); valid when `factored`.
    lower: Vec<f64>,
    /// `Lᵀ`, column-major, in its upper triangle: the backward solve then runs down
    /// columns as the forward one does (the strict lower triangle is never read).
    upper: Vec<f64>,
    factored: bool,
    factorizations: usize,
}

impl RegularizedCholesky {
    /// Sets the matrix `A = G + diag(R)` (`compliance` is `R`, absent for 0); the factor
    /// is dropped only if `A` differs from the stored one. Compares and copies in place:
    /// no allocation unless the size changes. Returns true when `A` changed.
    pub(crate) fn set_matrix(
        &mut self,
        delassus: &DMatrix<f64>,
        compliance: Option<&DVector<f64>>,
    ) -> bool {
        let entry = |i: usize, j: usize| {
            let r = match compliance {
                Some(r) if i == j => r[i],
                _ => 0.0,
            };
            delassus[(i, j)] + r
        };
        let n = delassus.nrows();
        let same = self.matrix.shape() == delassus.shape()
            && (0..n).all(|j| (0..n).all(|i| self.matrix[(i, j)] == entry(i, j)));
        if !same {
            if self.matrix.shape() != delassus.shape() {
                self.matrix = DMatrix::zeros(n, n);
            }
            for j in 0..n {
                for i in 0..n {
                    self.matrix[(i, j)] = entry(i, j);
                }
            }
            self.factored = false;
        }
        !same
    }

    /// The matrix `A` last set.
    pub(crate) fn matrix(&self) -> &DMatrix<f64> {
        &self.matrix
    }

    /// Makes the factor one of `A + σ I`; refactors only if `σ` changed or no factor is held.
    /// Errors (with the shift) when `A + σ I` is not numerically positive definite.
    pub(crate) fn set_shift(&mut self, shift: f64) -> Result<(), String> {
        if self.factored && shift == self.shift {
            return Ok(());
        }
        let n = self.matrix.nrows();
        // The storage is kept between factorizations (no allocation once sized).
        self.lower.clear();
        self.lower.extend_from_slice(self.matrix.as_slice());
        for i in 0..n {
            self.lower[i * n + i] += shift;
        }
        self.factorizations += 1;
        self.shift = shift;
        self.factored = factorize_lower(&mut self.lower, n).is_ok();
        if self.factored {
            transpose_lower(&self.lower, n, &mut self.upper);
            Ok(())
        } else {
            Err(format!(
                "Cholesky factorization of G + R + {shift:e} I failed (not positive definite)"
            ))
        }
    }

    /// Solves `(A + σ I) x = b` in place. Leaves `b` unchanged if no factor is held (which
    /// [`Self::set_shift`] returning `Ok` rules out).
    pub(crate) fn solve_mut(&self, b: &mut DVector<f64>) {
        if self.factored && b.len() == self.matrix.nrows() {
            let n = b.len();
            if n < SMALL {
                solve_small(&self.lower, &self.upper, n, b.as_mut_slice());
            } else {
                solve_lower(&self.lower, n, b.as_mut_slice());
                solve_upper(&self.upper, n, b.as_mut_slice());
            }
        }
    }

    /// How many factorizations were computed over the life of this object.
    pub(crate) fn factorizations(&self) -> usize {
        self.factorizations
    }
}

/// `out = A x + g` for the square column-major `A`, four columns at a time.
pub(crate) fn affine_product(a: &DMatrix<f64>, x: &[f64], g: &[f64], out: &mut [f64]) {
    out.copy_from_slice(g);
    accumulate_product(a, x, out);
}

/// `out = A x` for the square column-major `A`, four columns at a time.
pub(crate) fn product(a: &DMatrix<f64>, x: &[f64], out: &mut [f64]) {
    out.fill(0.0);
    accumulate_product(a, x, out);
}

/// `out += A x`, blocks of four columns.
#[inline(never)]
fn accumulate_product(a: &DMatrix<f64>, x: &[f64], out: &mut [f64]) {
    let n = out.len();
    let entries = a.as_slice();
    let column = |j: usize| &entries[j * n..(j + 1) * n];
    let mut j = 0;
    while j + BLOCK <= n {
        // out −= Σ (−x_j) A[:, j] (the kernel subtracts; the sign change is exact).
        let c = [-x[j], -x[j + 1], -x[j + 2], -x[j + 3]];
        sub_four(
            out,
            [column(j), column(j + 1), column(j + 2), column(j + 3)],
            c,
        );
        j += BLOCK;
    }
    for (j, &xj) in x.iter().enumerate().take(n).skip(j) {
        sub_one(out, column(j), -xj);
    }
}

/// Right-looking blocked Cholesky of the column-major `n × n` matrix in `a`, in place:
/// on success its lower triangle is `L` with `A = L Lᵀ`. Each panel of [`BLOCK`] columns
/// is factored column by column, then the trailing lower triangle is updated by the whole
/// panel, `A₂₂ ← A₂₂ − L₂₁ L₂₁ᵀ` (Golub & Van Loan 2013, §4.2.9). Errs with the first
/// column whose pivot is not positive (or not finite).
#[inline(never)]
fn factorize_lower(a: &mut [f64], n: usize) -> Result<(), usize> {
    let mut j0 = 0;
    while j0 < n {
        let end = (j0 + BLOCK).min(n);
        for j in j0..end {
            let (left, right) = a.split_at_mut(j * n);
            let target = &mut right[j..n];
            for p in j0..j {
                let column = &left[p * n + j..(p + 1) * n];
                sub_one(target, column, column[0]);
            }
            let pivot = target[0];
            if !(pivot > 0.0 && pivot.is_finite()) {
                return Err(j);
            }
            let d = pivot.sqrt();
            target[0] = d;
            let inverse = d.recip();
            for v in &mut target[1..] {
                *v *= inverse;
            }
        }
        // A[k.., k] −= L[k.., panel] L[k, panel]ᵀ for every later column k.
        for k in end..n {
            let (left, right) = a.split_at_mut(k * n);
            let target = &mut right[k..n];
            let column = |p: usize| &left[p * n + k..(p + 1) * n];
            if end - j0 == BLOCK {
                let cols = [column(j0), column(j0 + 1), column(j0 + 2), column(j0 + 3)];
                let c = [cols[0][0], cols[1][0], cols[2][0], cols[3][0]];
                sub_four(target, cols, c);
            } else {
                for p in j0..end {
                    sub_one(target, column(p), column(p)[0]);
                }
            }
        }
        j0 = end;
    }
    Ok(())
}

/// Solves `L y = b` in place (`l` column-major `n × n`, lower triangle read): each block
/// of [`BLOCK`] columns solves its diagonal triangle, then updates every entry below it
/// with the whole block.
#[inline(never)]
fn solve_lower(l: &[f64], n: usize, b: &mut [f64]) {
    let column = |j: usize, from: usize| &l[j * n + from..(j + 1) * n];
    let mut j0 = 0;
    while j0 < n {
        let end = (j0 + BLOCK).min(n);
        for j in j0..end {
            let yj = b[j] / l[j * n + j];
            b[j] = yj;
            for i in j + 1..end {
                b[i] -= l[j * n + i] * yj;
            }
        }
        let (solved, below) = b.split_at_mut(end);
        if end - j0 == BLOCK {
            let cols = [
                column(j0, end),
                column(j0 + 1, end),
                column(j0 + 2, end),
                column(j0 + 3, end),
            ];
            let y = [solved[j0], solved[j0 + 1], solved[j0 + 2], solved[j0 + 3]];
            sub_four(below, cols, y);
        } else {
            for (j, &yj) in solved.iter().enumerate().skip(j0) {
                sub_one(below, column(j, end), yj);
            }
        }
        j0 = end;
    }
}

/// Solves `L Lᵀ x = b` in place column by column (axpy form on the columns of `L`, then
/// on those of `U = Lᵀ`): the small systems' path.
#[inline(never)]
fn solve_small(l: &[f64], u: &[f64], n: usize, b: &mut [f64]) {
    for j in 0..n {
        let yj = b[j] / l[j * n + j];
        b[j] = yj;
        sub_one(&mut b[j + 1..], &l[j * n + j + 1..(j + 1) * n], yj);
    }
    for j in (0..n).rev() {
        let xj = b[j] / u[j * n + j];
        b[j] = xj;
        sub_one(&mut b[..j], &u[j * n..j * n + j], xj);
    }
}

/// `upper = Lᵀ` (column-major, upper triangle) from the lower triangle of `lower`.
fn transpose_lower(lower: &[f64], n: usize, upper: &mut Vec<f64>) {
    upper.resize(n * n, 0.0);
    for j in 0..n {
        for i in 0..=j {
            upper[j * n + i] = lower[i * n + j];
        }
    }
}

/// Solves `U x = y` in place for the upper triangular `U = Lᵀ` (`u` column-major `n × n`,
/// upper triangle read), blocks of [`BLOCK`] columns from the last: each block solves its
/// diagonal triangle backward, then updates every entry above it with the whole block.
#[inline(never)]
fn solve_upper(u: &[f64], n: usize, b: &mut [f64]) {
    let column = |j: usize, to: usize| &u[j * n..j * n + to];
    let blocks = n.div_ceil(BLOCK);
    for block in (0..blocks).rev() {
        let j0 = block * BLOCK;
        let end = (j0 + BLOCK).min(n);
        for j in (j0..end).rev() {
            let xj = b[j] / u[j * n + j];
            b[j] = xj;
            for i in j0..j {
                b[i] -= u[j * n + i] * xj;
            }
        }
        let (above, solved) = b.split_at_mut(j0);
        if end - j0 == BLOCK {
            let cols = [
                column(j0, j0),
                column(j0 + 1, j0),
                column(j0 + 2, j0),
                column(j0 + 3, j0),
            ];
            sub_four(above, cols, [solved[0], solved[1], solved[2], solved[3]]);
        } else {
            for j in j0..end {
                sub_one(above, column(j, j0), solved[j - j0]);
            }
        }
    }
}

/// `dst −= c·a` (axpy).
#[inline]
fn sub_one(dst: &mut [f64], a: &[f64], c: f64) {
    for (d, ai) in dst.iter_mut().zip(a) {
        *d -= c * ai;
    }
}

/// `dst −= Σ_p c_p a_p` over four columns `a_p` (each at least as long as `dst`): one
/// load and store of `dst` for four multiply-adds.
#[inline]
fn sub_four(dst: &mut [f64], a: [&[f64]; BLOCK], c: [f64; BLOCK]) {
    let n = dst.len();
    let (a0, a1, a2, a3) = (&a[0][..n], &a[1][..n], &a[2][..n], &a[3][..n]);
    for i in 0..n {
        dst[i] -= c[0] * a0[i] + c[1] * a1[i] + c[2] * a2[i] + c[3] * a3[i];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refactors_only_when_shift_or_matrix_changes() {
        let a = DMatrix::from_row_slice(2, 2, &[2.0, 1.0, 1.0, 2.0]);
        let mut chol = RegularizedCholesky::default();
        assert!(chol.set_matrix(&a, None));
        assert!(chol.set_shift(1.0).is_ok());
        assert!(chol.set_shift(1.0).is_ok());
        assert!(!chol.set_matrix(&a, None));
        assert_eq!(chol.factorizations(), 1);
        assert!(chol.set_shift(2.0).is_ok());
        assert_eq!(chol.factorizations(), 2);
        let mut b = DVector::from_vec(vec![4.0, 4.0]);
        chol.solve_mut(&mut b);
        // (A + 2I) x = (4, 4) → 5 x = 4.
        assert!((b[0] - 0.8).abs() < 1e-14 && (b[1] - 0.8).abs() < 1e-14);
    }

    #[test]
    fn solves_agree_with_nalgebra_and_include_the_compliance() {
        let n = 7;
        let a = DMatrix::from_fn(n, n, |i, j| 1.0 / (1.0 + i as f64 + j as f64));
        let r = DVector::from_fn(n, |i, _| 0.1 * i as f64);
        let mut chol = RegularizedCholesky::default();
        assert!(chol.set_matrix(&a, Some(&r)));
        assert!(chol.set_shift(0.5).is_ok());
        let b = DVector::from_fn(n, |i, _| (i as f64).sin());
        let mut x = b.clone();
        chol.solve_mut(&mut x);
        let shifted = &a + DMatrix::from_diagonal(&r) + DMatrix::identity(n, n) * 0.5;
        let residual = (&shifted * &x - &b).amax();
        assert!(residual < 1e-13, "residual {residual:e}");
    }

    /// A seeded symmetric positive definite `n × n` matrix `B Bᵀ / n + I/10`.
    fn spd(n: usize, seed: u64) -> DMatrix<f64> {
        let mut state = seed;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let b = DMatrix::from_fn(n, n, |_, _| next());
        &b * b.transpose() / n as f64 + DMatrix::identity(n, n) * 0.1
    }

    #[test]
    fn blocked_factor_and_solves_match_nalgebra_at_every_block_remainder() {
        for n in [1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 24, 61, 120] {
            let a = spd(n, n as u64);
            let mut chol = RegularizedCholesky::default();
            chol.set_matrix(&a, None);
            assert!(chol.set_shift(0.25).is_ok());
            let shifted = &a + DMatrix::identity(n, n) * 0.25;
            let reference = nalgebra::Cholesky::new(shifted.clone()).map(|c| c.l());
            let reference = reference.unwrap_or_else(|| DMatrix::zeros(n, n));
            let lower = DMatrix::from_column_slice(n, n, &chol.lower).lower_triangle();
            let gap = (&lower - &reference).amax();
            assert!(
                gap < 1e-14 * reference.amax(),
                "n = {n}: factor gap {gap:e}"
            );
            let b = DVector::from_fn(n, |i, _| ((i * 7 + 3) as f64).sin());
            let mut x = b.clone();
            chol.solve_mut(&mut x);
            let residual = (&shifted * &x - &b).amax();
            assert!(residual < 1e-13, "n = {n}: residual {residual:e}");
            let mut product = DVector::zeros(n);
            affine_product(&a, x.as_slice(), b.as_slice(), product.as_mut_slice());
            let expected = &a * &x + &b;
            let gap = (&product - &expected).amax();
            assert!(
                gap < 1e-14 * expected.amax(),
                "n = {n}: product gap {gap:e}"
            );
        }
    }

    #[test]
    fn indefinite_matrix_fails_in_a_later_block() {
        // Positive definite but for one eigenvalue: the pivot of column 9 turns negative.
        let n = 12;
        let mut a = DMatrix::identity(n, n);
        a[(9, 9)] = -1.0;
        let mut chol = RegularizedCholesky::default();
        chol.set_matrix(&a, None);
        assert!(chol.set_shift(0.5).is_err());
        assert!(chol.set_shift(2.0).is_ok());
    }

    #[test]
    fn singular_matrix_without_shift_fails() {
        let mut chol = RegularizedCholesky::default();
        chol.set_matrix(&DMatrix::zeros(2, 2), None);
        assert!(chol.set_shift(0.0).is_err());
    }
}
