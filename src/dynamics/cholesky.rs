//! A Cholesky factorization `M = L Lᵀ` of the mass matrix, reusable for `M⁻¹ b` and
//! `M⁻¹ Jᵀ` (Featherstone 2008, §6.5).

use nalgebra::{Cholesky, DMatrix, DVector, Dyn};

use super::DynamicsError;

/// The Cholesky factor of a mass matrix (nv × nv, symmetric positive definite).
#[derive(Debug, Clone)]
pub struct MassCholesky {
    chol: Cholesky<f64, Dyn>,
}

impl MassCholesky {
    /// Factorizes `M` (e.g. `data.mass_matrix` after [`super::crba()`]).
    pub fn new(mass_matrix: &DMatrix<f64>) -> Result<MassCholesky, DynamicsError> {
        if !mass_matrix.is_square() {
            return Err(DynamicsError::WrongSize {
                name: "mass matrix columns",
                dim: "rows",
                expected: mass_matrix.nrows(),
                got: mass_matrix.ncols(),
            });
        }
        Cholesky::new(mass_matrix.clone())
            .map(|chol| MassCholesky { chol })
            .ok_or(DynamicsError::NotPositiveDefinite("the mass matrix"))
    }

    /// Dimension nv.
    pub fn dim(&self) -> usize {
        self.chol.l_dirty().nrows()
    }

    /// The lower-triangular factor `L`.
    pub fn l(&self) -> DMatrix<f64> {
        self.chol.l()
    }

    /// `M⁻¹ b` for a vector of dimension nv.
    pub fn solve(&self, b: &DVector<f64>) -> Result<DVector<f64>, DynamicsError> {
        self.check_rows(b.len())?;
        Ok(self.chol.solve(b))
    }

    /// `M⁻¹ B` for a matrix with nv rows (e.g. `Jᵀ`).
    pub fn solve_matrix(&self, b: &DMatrix<f64>) -> Result<DMatrix<f64>, DynamicsError> {
        self.check_rows(b.nrows())?;
        Ok(self.chol.solve(b))
    }

    /// `B ← M⁻¹ B` in place, for a matrix with nv rows (no allocation).
    pub fn solve_in_place(&self, b: &mut DMatrix<f64>) -> Result<(), DynamicsError> {
        self.check_rows(b.nrows())?;
        self.chol.solve_mut(b);
        Ok(())
    }

    fn check_rows(&self, rows: usize) -> Result<(), DynamicsError> {
        if rows != self.dim() {
            return Err(DynamicsError::WrongSize {
                name: "right-hand side rows",
                dim: "nv",
                expected: self.dim(),
                got: rows,
            });
        }
        Ok(())
    }
}
