//! The Cholesky factor of `G + R + σ I` shared by the ADMM solvers (Alg. 3, line 1).
//!
//! The factor is kept between solves: it is recomputed only when the matrix `G + R` or the
//! shift `σ` (the ADMM proximal value, a function of ρ) changes.

use nalgebra::{Cholesky, DMatrix, DVector, Dyn};

/// A Cholesky factor of `A + σ I`, refactored only when `A` or `σ` changes.
#[derive(Debug, Clone, Default)]
pub(crate) struct RegularizedCholesky {
    matrix: DMatrix<f64>,
    shift: f64,
    factor: Option<Cholesky<f64, Dyn>>,
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
            self.factor = None;
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
        if self.factor.is_some() && shift == self.shift {
            return Ok(());
        }
        // The old factor's storage is reused when its size fits (no allocation).
        let mut shifted = match self.factor.take().map(Cholesky::unpack_dirty) {
            Some(mut storage) if storage.shape() == self.matrix.shape() => {
                storage.copy_from(&self.matrix);
                storage
            }
            _ => self.matrix.clone(),
        };
        for i in 0..shifted.nrows() {
            shifted[(i, i)] += shift;
        }
        self.factorizations += 1;
        self.shift = shift;
        self.factor = Cholesky::new(shifted);
        if self.factor.is_some() {
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
        if let Some(factor) = &self.factor {
            cholesky_solve(factor.l_dirty(), b.as_mut_slice());
        }
    }

    /// How many factorizations were computed over the life of this object.
    pub(crate) fn factorizations(&self) -> usize {
        self.factorizations
    }
}

/// Solves `L Lᵀ x = b` in place, `L` the lower triangle of `l` (column-major, the upper
/// triangle is not read): forward substitution column by column (`b ← b − L[:, j] y_j`),
/// then backward substitution by dot products with the columns of `L`, both on contiguous
/// memory. It is the ADMM's main per-iteration cost; in a profile of ncp-admm on 40
/// contacts nalgebra's backward solve took 1.6× its forward one (docs/solvers.md).
fn cholesky_solve(l: &DMatrix<f64>, b: &mut [f64]) {
    let n = b.len();
    let entries = l.as_slice();
    for j in 0..n {
        let column = &entries[j * n..(j + 1) * n];
        let yj = b[j] / column[j];
        b[j] = yj;
        for (bi, lij) in b[j + 1..].iter_mut().zip(&column[j + 1..]) {
            *bi -= lij * yj;
        }
    }
    for j in (0..n).rev() {
        let column = &entries[j * n..(j + 1) * n];
        let below = dot(&column[j + 1..], &b[j + 1..]);
        b[j] = (b[j] - below) / column[j];
    }
}

/// `aᵀ b` with four partial sums (lets the compiler vectorize the loop).
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut sums = [0.0; 4];
    let chunks = a.chunks_exact(4).zip(b.chunks_exact(4));
    for (x, y) in chunks {
        for ((sum, xk), yk) in sums.iter_mut().zip(x).zip(y) {
            *sum += xk * yk;
        }
    }
    let tail = a.len() - a.len() % 4;
    let rest: f64 = a[tail..].iter().zip(&b[tail..]).map(|(x, y)| x * y).sum();
    (sums[0] + sums[1]) + (sums[2] + sums[3]) + rest
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

    #[test]
    fn singular_matrix_without_shift_fails() {
        let mut chol = RegularizedCholesky::default();
        chol.set_matrix(&DMatrix::zeros(2, 2), None);
        assert!(chol.set_shift(0.0).is_err());
    }
}
