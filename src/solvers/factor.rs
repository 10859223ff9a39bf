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
    /// Sets the matrix `A` (`G + R`); the factor is dropped only if `A` differs from the
    /// stored one.
    pub(crate) fn set_matrix(&mut self, matrix: DMatrix<f64>) {
        if matrix != self.matrix {
            self.matrix = matrix;
            self.factor = None;
        }
    }

    /// Makes the factor one of `A + σ I`; refactors only if `σ` changed or no factor is held.
    /// Errors (with the shift) when `A + σ I` is not numerically positive definite.
    pub(crate) fn set_shift(&mut self, shift: f64) -> Result<(), String> {
        if self.factor.is_some() && shift == self.shift {
            return Ok(());
        }
        let mut shifted = self.matrix.clone();
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
        chol.set_matrix(a.clone());
        assert!(chol.set_shift(1.0).is_ok());
        assert!(chol.set_shift(1.0).is_ok());
        chol.set_matrix(a.clone());
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
        chol.set_matrix(DMatrix::zeros(2, 2));
        assert!(chol.set_shift(0.0).is_err());
    }
}
