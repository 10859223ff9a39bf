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
            factor.solve_mut(b);
        }
    }

    /// How many factorizations were computed over the life of this object.
    pub(crate) fn factorizations(&self) -> usize {
        self.factorizations
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
    fn singular_matrix_without_shift_fails() {
        let mut chol = RegularizedCholesky::default();
        chol.set_matrix(&DMatrix::zeros(2, 2), None);
        assert!(chol.set_shift(0.0).is_err());
    }
}
