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
//! ADMM's 120×120 system (40 contacts), with nalgebra's kernels, the triangular solves were
//! 44 % of a solve's instructions and the two factorizations 13 %.
//!
//! Every kernel runs its AVX build when the CPU has AVX (run-time dispatch, same bits as
//! the baseline build), and from [`SMALL`] unknowns the solves read packed panels of the
//! factor with the diagonal's reciprocals (`pack_panels`; time per iteration: docs/speed.md).

use std::time::Instant;

use nalgebra::{DMatrix, DVector};

/// Defines `fn $name(args)`, which runs `$body(args)` compiled for AVX when the CPU has it
/// (checked at run time; std caches the answer) and for the baseline x86-64 (SSE2)
/// otherwise. AVX only widens the kernels' vectors from two to four entries: without FMA
/// (not enabled; Rust never contracts a multiply and an add) every entry goes through the
/// same operations in the same order, so both paths give the same bits.
macro_rules! with_avx {
    ($(#[$doc:meta])* fn $name:ident = $body:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)?) => {
        $(#[$doc])*
        #[inline(never)]
        fn $name($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx")]
                fn avx($($arg: $ty),*) $(-> $ret)? {
                    $body($($arg),*)
                }
                if std::arch::is_x86_feature_detected!("avx") {
                    // SAFETY: `avx` needs only AVX, which the CPU has (tested just above).
                    return unsafe { avx($($arg),*) };
                }
            }
            $body($($arg),*)
        }
    };
}

with_avx!(
    /// `out += A x` ([`accumulate_product_body`]).
    fn accumulate_product = accumulate_product_body(a: &DMatrix<f64>, x: &[f64], out: &mut [f64])
);
with_avx!(
    /// The blocked Cholesky factorization ([`factorize_lower_body`]).
    fn factorize_lower = factorize_lower_body(
        a: &mut [f64],
        n: usize,
        deadline: Option<Instant>
    ) -> Result<(), FactorStop>
);
with_avx!(
    /// `L y = b` in place ([`solve_forward_body`]).
    fn solve_forward = solve_forward_body(panel: &[f64], n: usize, b: &mut [f64])
);
with_avx!(
    /// `Lᵀ x = y` in place ([`solve_backward_body`]).
    fn solve_backward = solve_backward_body(panel: &[f64], n: usize, b: &mut [f64])
);
with_avx!(
    /// `L Lᵀ x = b` in place for small systems ([`solve_small_body`]).
    fn solve_small = solve_small_body(l: &[f64], u: &[f64], n: usize, b: &mut [f64])
);

/// Columns combined at once by the kernels.
const BLOCK: usize = 4;

/// Why a factorization stopped before its end.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FactorStop {
    /// The pivot of this column is not positive (or not finite).
    NotPositive(usize),
    /// The deadline passed (checked before every panel of [`BLOCK`] columns).
    OutOfTime,
}

/// Why [`RegularizedCholesky::set_shift`] holds no factor.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FactorError {
    /// `A + σ I` is not numerically positive definite (the message names `σ`).
    NotPositiveDefinite(String),
    /// The deadline passed during the factorization.
    OutOfTime,
}

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
    /// Below [`SMALL`] unknowns: `Lᵀ`, column-major, in its upper triangle (the backward
    /// solve then runs down columns as the forward one does; the strict lower triangle is
    /// never read), with the reciprocals of the diagonal on the diagonal.
    upper: Vec<f64>,
    /// From [`SMALL`] unknowns: `L`'s blocks for the forward solve ([`pack_panels`]).
    forward: Vec<f64>,
    /// From [`SMALL`] unknowns: `Lᵀ`'s blocks for the backward solve ([`pack_panels`]).
    backward: Vec<f64>,
    factored: bool,
    factorizations: usize,
}

impl RegularizedCholesky {
    /// Sets the matrix `A = G + diag(R)` (`compliance` is `R`, absent for 0); the factor
    /// is dropped only if `A` differs from the stored one. Compares and copies in place:
    /// no allocation unless the size changes. Returns true when `A` changed.
    #[inline(never)]
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
    /// Errors (with the shift) when `A + σ I` is not numerically positive definite, and
    /// when `deadline` passes during the factorization (checked once per panel).
    #[inline(never)]
    pub(crate) fn set_shift(
        &mut self,
        shift: f64,
        deadline: Option<Instant>,
    ) -> Result<(), FactorError> {
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
        let outcome = factorize_lower(&mut self.lower, n, deadline);
        self.factored = outcome.is_ok();
        match outcome {
            Ok(()) => {
                if n < SMALL {
                    transpose_lower(&self.lower, n, &mut self.upper);
                } else {
                    pack_panels(&self.lower, n, &mut self.forward, &mut self.backward);
                }
                Ok(())
            }
            Err(FactorStop::OutOfTime) => Err(FactorError::OutOfTime),
            Err(FactorStop::NotPositive(_)) => Err(FactorError::NotPositiveDefinite(format!(
                "Cholesky factorization of G + R + {shift:e} I failed (not positive definite)"
            ))),
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
                solve_forward(&self.forward, n, b.as_mut_slice());
                solve_backward(&self.backward, n, b.as_mut_slice());
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
#[inline(always)]
fn accumulate_product_body(a: &DMatrix<f64>, x: &[f64], out: &mut [f64]) {
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
/// column whose pivot is not positive (or not finite), or when `deadline` has passed at
/// the start of a panel.
#[inline(always)]
fn factorize_lower_body(
    a: &mut [f64],
    n: usize,
    deadline: Option<Instant>,
) -> Result<(), FactorStop> {
    let mut j0 = 0;
    while j0 < n {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(FactorStop::OutOfTime);
        }
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
                return Err(FactorStop::NotPositive(j));
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

/// Solves `L Lᵀ x = b` in place column by column (axpy form on the columns of `L`, then
/// on those of `U = Lᵀ`, multiplying by the reciprocals on `u`'s diagonal, as the panels
/// do): the small systems' path.
#[inline(always)]
fn solve_small_body(l: &[f64], u: &[f64], n: usize, b: &mut [f64]) {
    for j in 0..n {
        let yj = b[j] * u[j * n + j];
        b[j] = yj;
        sub_one(&mut b[j + 1..], &l[j * n + j + 1..(j + 1) * n], yj);
    }
    for j in (0..n).rev() {
        let xj = b[j] * u[j * n + j];
        b[j] = xj;
        sub_one(&mut b[..j], &u[j * n..j * n + j], xj);
    }
}

/// `upper = Lᵀ` (column-major, upper triangle) from the lower triangle of `lower`, with
/// the reciprocals of the diagonal on its diagonal (no division on the small solves'
/// critical path, see [`pack_panels`]).
fn transpose_lower(lower: &[f64], n: usize, upper: &mut Vec<f64>) {
    upper.resize(n * n, 0.0);
    for j in 0..n {
        for i in 0..j {
            upper[j * n + i] = lower[i * n + j];
        }
        upper[j * n + j] = lower[j * n + j].recip();
    }
}

/// Entries of a block's diagonal triangle in a panel (a 4 × 4 array, zero-padded).
const TRIANGLE: usize = BLOCK * BLOCK;

/// Packs `L` (column-major `n × n`, lower triangle) into the panels of the two solves,
/// block by block of [`BLOCK`] columns: each block is its diagonal triangle
/// (`t[4j + i]` = row `i`, column `j` of the block, zero-padded to 4 × 4, with the
/// reciprocal of the diagonal entry at `t[4j + j]`) followed by its
/// columns, contiguous: in `forward` (blocks from the first) the rows of `L` below the
/// block, in `backward` (blocks from the last) the rows of `U = Lᵀ` above it. Each solve
/// then reads one contiguous stream per block: no index set-up per column, and half the
/// memory of two full `n × n` arrays. The reciprocals replace the divisions on the solves'
/// critical path (each unknown of a block waits for the previous one: a division's
/// latency is about four times a multiplication's); the solution then differs from the
/// divided one by round-off.
fn pack_panels(lower: &[f64], n: usize, forward: &mut Vec<f64>, backward: &mut Vec<f64>) {
    forward.clear();
    backward.clear();
    for j0 in (0..n).step_by(BLOCK) {
        let end = (j0 + BLOCK).min(n);
        let mut triangle = [0.0; TRIANGLE];
        for j in 0..end - j0 {
            triangle[BLOCK * j + j] = lower[(j0 + j) * n + j0 + j].recip();
            for i in j + 1..end - j0 {
                triangle[BLOCK * j + i] = lower[(j0 + j) * n + j0 + i];
            }
        }
        forward.extend_from_slice(&triangle);
        for j in j0..end {
            forward.extend_from_slice(&lower[j * n + end..(j + 1) * n]);
        }
    }
    for j0 in (0..n.div_ceil(BLOCK)).rev().map(|block| block * BLOCK) {
        let end = (j0 + BLOCK).min(n);
        // U[i, j] = L[j, i].
        let mut triangle = [0.0; TRIANGLE];
        for j in 0..end - j0 {
            for i in 0..j {
                triangle[BLOCK * j + i] = lower[(j0 + i) * n + j0 + j];
            }
            triangle[BLOCK * j + j] = lower[(j0 + j) * n + j0 + j].recip();
        }
        backward.extend_from_slice(&triangle);
        for j in j0..end {
            backward.extend((0..j0).map(|i| lower[i * n + j]));
        }
    }
}

/// Splits a panel's block off `panel`: its triangle and its `columns × rows` entries.
fn next_block(panel: &[f64], columns: usize, rows: usize) -> (&[f64; TRIANGLE], &[f64], &[f64]) {
    let (triangle, rest) = panel
        .split_first_chunk::<TRIANGLE>()
        .unwrap_or_else(|| panic!("a panel holds every block's triangle"));
    let (entries, rest) = rest.split_at(columns * rows);
    (triangle, entries, rest)
}

/// Solves `L y = b` in place from the `forward` panels of [`pack_panels`]: each block of
/// [`BLOCK`] columns solves its diagonal triangle, then updates every entry below it with
/// the whole block.
#[inline(always)]
fn solve_forward_body(panel: &[f64], n: usize, b: &mut [f64]) {
    let mut panel = panel;
    let mut j0 = 0;
    while j0 < n {
        let end = (j0 + BLOCK).min(n);
        let rows = n - end;
        let (t, entries, rest) = next_block(panel, end - j0, rows);
        panel = rest;
        let (solved, below) = b.split_at_mut(end);
        let solved = &mut solved[j0..];
        if let [c0, c1, c2, c3] = &mut *solved {
            // The triangle written out (the loop's operations in the loop's order).
            let y0 = *c0 * t[0];
            let y1 = (*c1 - t[1] * y0) * t[5];
            let y2 = ((*c2 - t[2] * y0) - t[6] * y1) * t[10];
            let y3 = (((*c3 - t[3] * y0) - t[7] * y1) - t[11] * y2) * t[15];
            [*c0, *c1, *c2, *c3] = [y0, y1, y2, y3];
            let (a0, a) = entries.split_at(rows);
            let (a1, a) = a.split_at(rows);
            let (a2, a3) = a.split_at(rows);
            sub_four(below, [a0, a1, a2, a3], [y0, y1, y2, y3]);
        } else {
            let r = solved.len();
            for j in 0..r {
                let yj = solved[j] * t[BLOCK * j + j];
                solved[j] = yj;
                for i in j + 1..r {
                    solved[i] -= t[BLOCK * j + i] * yj;
                }
            }
            for (column, &yj) in entries.chunks_exact(rows.max(1)).zip(solved.iter()) {
                sub_one(below, column, yj);
            }
        }
        j0 = end;
    }
}

/// Solves `U x = y` in place for `U = Lᵀ` from the `backward` panels of [`pack_panels`],
/// blocks of [`BLOCK`] columns from the last: each block solves its diagonal triangle
/// backward, then updates every entry above it with the whole block.
#[inline(always)]
fn solve_backward_body(panel: &[f64], n: usize, b: &mut [f64]) {
    let mut panel = panel;
    for block in (0..n.div_ceil(BLOCK)).rev() {
        let j0 = block * BLOCK;
        let end = (j0 + BLOCK).min(n);
        let (t, entries, rest) = next_block(panel, end - j0, j0);
        panel = rest;
        let (above, solved) = b.split_at_mut(j0);
        let solved = &mut solved[..end - j0];
        if let [c0, c1, c2, c3] = &mut *solved {
            let x3 = *c3 * t[15];
            let x2 = (*c2 - t[14] * x3) * t[10];
            let x1 = ((*c1 - t[13] * x3) - t[9] * x2) * t[5];
            let x0 = (((*c0 - t[12] * x3) - t[8] * x2) - t[4] * x1) * t[0];
            [*c0, *c1, *c2, *c3] = [x0, x1, x2, x3];
            let (a0, a) = entries.split_at(j0);
            let (a1, a) = a.split_at(j0);
            let (a2, a3) = a.split_at(j0);
            sub_four(above, [a0, a1, a2, a3], [x0, x1, x2, x3]);
        } else {
            let r = solved.len();
            for j in (0..r).rev() {
                let xj = solved[j] * t[BLOCK * j + j];
                solved[j] = xj;
                for i in 0..j {
                    solved[i] -= t[BLOCK * j + i] * xj;
                }
            }
            for (column, &xj) in entries.chunks_exact(j0.max(1)).zip(solved.iter()) {
                sub_one(above, column, xj);
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
        assert!(chol.set_shift(1.0, None).is_ok());
        assert!(chol.set_shift(1.0, None).is_ok());
        assert!(!chol.set_matrix(&a, None));
        assert_eq!(chol.factorizations(), 1);
        assert!(chol.set_shift(2.0, None).is_ok());
        assert_eq!(chol.factorizations(), 2);
        let mut b = DVector::from_vec(vec![4.0, 4.0]);
        chol.solve_mut(&mut b);
        // (A + 2I) x = (4, 4) → 5 x = 4.
        assert!((b[0] - 0.8).abs() < 1e-14 && (b[1] - 0.8).abs() < 1e-14);
    }

    #[test]
    fn a_passed_deadline_stops_the_factorization_and_keeps_no_factor() {
        let a = DMatrix::<f64>::identity(20, 20);
        let mut chol = RegularizedCholesky::default();
        chol.set_matrix(&a, None);
        assert_eq!(
            chol.set_shift(1.0, Some(Instant::now())),
            Err(FactorError::OutOfTime)
        );
        let mut b = DVector::from_element(20, 2.0);
        chol.solve_mut(&mut b);
        assert_eq!(b[0], 2.0);
        assert!(chol.set_shift(1.0, None).is_ok());
    }

    #[test]
    fn solves_agree_with_nalgebra_and_include_the_compliance() {
        let n = 7;
        let a = DMatrix::from_fn(n, n, |i, j| 1.0 / (1.0 + i as f64 + j as f64));
        let r = DVector::from_fn(n, |i, _| 0.1 * i as f64);
        let mut chol = RegularizedCholesky::default();
        assert!(chol.set_matrix(&a, Some(&r)));
        assert!(chol.set_shift(0.5, None).is_ok());
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
        for n in [
            1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 16, 17, 18, 19, 24, 61, 62, 63, 120,
        ] {
            let a = spd(n, n as u64);
            let mut chol = RegularizedCholesky::default();
            chol.set_matrix(&a, None);
            assert!(chol.set_shift(0.25, None).is_ok());
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
    fn dispatched_and_baseline_kernels_give_the_same_bits() {
        // On a CPU with AVX the dispatched kernels run their AVX build; the `_body`
        // functions called here are compiled for the baseline target (SSE2 on x86-64).
        for n in [3, 8, 13, 16, 17, 18, 19, 24, 61, 62, 63, 120] {
            let a = spd(n, 7 + n as u64);
            let mut chol = RegularizedCholesky::default();
            chol.set_matrix(&a, None);
            assert!(chol.set_shift(0.25, None).is_ok());
            let mut lower = a.as_slice().to_vec();
            for i in 0..n {
                lower[i * n + i] += 0.25;
            }
            assert!(factorize_lower_body(&mut lower, n, None).is_ok());
            let strict = |v: &[f64]| -> Vec<u64> {
                (0..n)
                    .flat_map(|j| (j..n).map(move |i| (i, j)))
                    .map(|(i, j)| v[j * n + i].to_bits())
                    .collect()
            };
            assert_eq!(strict(&lower), strict(&chol.lower), "n = {n}: factor");
            let b = DVector::from_fn(n, |i, _| ((i * 5 + 1) as f64).cos());
            let mut x = b.clone();
            chol.solve_mut(&mut x);
            let mut y = b.clone();
            if n < SMALL {
                solve_small_body(&chol.lower, &chol.upper, n, y.as_mut_slice());
            } else {
                solve_forward_body(&chol.forward, n, y.as_mut_slice());
                solve_backward_body(&chol.backward, n, y.as_mut_slice());
            }
            let bits = |v: &DVector<f64>| v.iter().map(|e| e.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&x), bits(&y), "n = {n}: solve");
            let mut p = DVector::zeros(n);
            product(&a, b.as_slice(), p.as_mut_slice());
            let mut q = DVector::zeros(n);
            accumulate_product_body(&a, b.as_slice(), q.as_mut_slice());
            assert_eq!(bits(&p), bits(&q), "n = {n}: product");
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
        assert!(chol.set_shift(0.5, None).is_err());
        assert!(chol.set_shift(2.0, None).is_ok());
    }

    #[test]
    fn singular_matrix_without_shift_fails() {
        let mut chol = RegularizedCholesky::default();
        chol.set_matrix(&DMatrix::zeros(2, 2), None);
        assert!(chol.set_shift(0.0, None).is_err());
    }
}
