//! The linear system `K dλ = b` of the linearized conditions, factored once and solved
//! for every right-hand side (a Jacobian's columns, a JVP, a VJP through `Kᵀ`).
//!
//! `K` is the block `(G + R)_SS` of the active contacts when every one of them sticks
//! (symmetric positive semi-definite: Cholesky), and otherwise a general square matrix
//! (LU with partial pivoting). When the factor's pivots say that `K` is singular to
//! `rank_tolerance` (redundant contacts: four corners of a sole carry six independent
//! forces, not twelve), the least-norm least-squares solution `K⁺ b` is used instead, from
//! the symmetric eigen-decomposition or the SVD with singular values below
//! `rank_tolerance · σ_max` dropped: of the answers that satisfy the linearized conditions
//! (as well as they can be satisfied), the smallest change of `λ`.

use nalgebra::{Cholesky, DMatrix, Dyn, PermutationSequence};
use serde::Serialize;

/// How the system was solved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinearMethod {
    /// No active contact: nothing to solve.
    Empty,
    /// Cholesky of the symmetric `(G + R)_SS` (every active contact sticks).
    Cholesky,
    /// LU with partial pivoting.
    Lu,
    /// Least-norm solution through the pseudo-inverse (rank-deficient `K`).
    LeastNorm,
}

enum Factor {
    Empty,
    Cholesky(Cholesky<f64, Dyn>),
    Lu {
        permutation: PermutationSequence<Dyn>,
        lower: DMatrix<f64>,
        upper: DMatrix<f64>,
    },
    Pseudo(DMatrix<f64>),
}

/// `K` factored (module docs).
pub(crate) struct LinearSystem {
    factor: Factor,
    method: LinearMethod,
    rank: usize,
    dim: usize,
}

impl LinearSystem {
    /// Factors `k` (square); `symmetric` when it is `(G + R)_SS`.
    pub(crate) fn new(k: DMatrix<f64>, symmetric: bool, rank_tolerance: f64) -> Self {
        let dim = k.nrows();
        if dim == 0 {
            return Self {
                factor: Factor::Empty,
                method: LinearMethod::Empty,
                rank: 0,
                dim,
            };
        }
        if symmetric {
            if let Some(chol) = k.clone().cholesky() {
                let pivots = chol.l().diagonal().map(|x| x * x);
                if well_conditioned(pivots.iter().copied(), rank_tolerance) {
                    return Self {
                        factor: Factor::Cholesky(chol),
                        method: LinearMethod::Cholesky,
                        rank: dim,
                        dim,
                    };
                }
            }
            return Self::symmetric_pseudo_inverse(k, rank_tolerance);
        }
        let (permutation, lower, upper) = k.clone().lu().unpack();
        if well_conditioned(upper.diagonal().iter().map(|x| x.abs()), rank_tolerance) {
            return Self {
                factor: Factor::Lu {
                    permutation,
                    lower,
                    upper,
                },
                method: LinearMethod::Lu,
                rank: dim,
                dim,
            };
        }
        Self::pseudo_inverse(k, rank_tolerance)
    }

    /// `K⁺ = V Λ⁺ Vᵀ` of a symmetric `K`.
    fn symmetric_pseudo_inverse(k: DMatrix<f64>, rank_tolerance: f64) -> Self {
        let dim = k.nrows();
        let eigen = k.symmetric_eigen();
        let largest = eigen.eigenvalues.amax();
        let floor = rank_tolerance * largest;
        let mut scaled = eigen.eigenvectors.clone();
        let mut rank = 0;
        for (j, &value) in eigen.eigenvalues.iter().enumerate() {
            let inverse = if value > floor {
                rank += 1;
                1.0 / value
            } else {
                0.0
            };
            scaled.column_mut(j).scale_mut(inverse);
        }
        Self {
            factor: Factor::Pseudo(scaled * eigen.eigenvectors.transpose()),
            method: LinearMethod::LeastNorm,
            rank,
            dim,
        }
    }

    /// `K⁺ = V Σ⁺ Uᵀ` from the SVD.
    fn pseudo_inverse(k: DMatrix<f64>, rank_tolerance: f64) -> Self {
        let dim = k.nrows();
        let svd = k.svd(true, true);
        let largest = svd.singular_values.amax();
        let floor = rank_tolerance * largest;
        let rank = svd.singular_values.iter().filter(|&&s| s > floor).count();
        let inverse = match (svd.u, svd.v_t) {
            (Some(u), Some(v_t)) => {
                let mut v = v_t.transpose();
                for (j, &s) in svd.singular_values.iter().enumerate() {
                    v.column_mut(j)
                        .scale_mut(if s > floor { 1.0 / s } else { 0.0 });
                }
                v * u.transpose()
            }
            // Both were asked for; nalgebra returns them whenever asked.
            _ => DMatrix::zeros(dim, dim),
        };
        Self {
            factor: Factor::Pseudo(inverse),
            method: LinearMethod::LeastNorm,
            rank,
            dim,
        }
    }

    pub(crate) fn method(&self) -> LinearMethod {
        self.method
    }

    /// `(rank, dimension)` of `K`.
    pub(crate) fn rank(&self) -> (usize, usize) {
        (self.rank, self.dim)
    }

    /// `b ← K⁻¹ b` (or `K⁺ b`), every column.
    pub(crate) fn solve_in_place(&self, b: &mut DMatrix<f64>) {
        match &self.factor {
            Factor::Empty => {}
            Factor::Cholesky(chol) => chol.solve_mut(b),
            Factor::Lu {
                permutation,
                lower,
                upper,
            } => {
                permutation.permute_rows(b);
                lower.solve_lower_triangular_with_diag_mut(b, 1.0);
                upper.solve_upper_triangular_mut(b);
            }
            Factor::Pseudo(inverse) => *b = inverse * &*b,
        }
    }

    /// `b ← K⁻ᵀ b` (or `(K⁺)ᵀ b`), every column: `P K = L U` gives `Kᵀ = Uᵀ Lᵀ P`.
    pub(crate) fn solve_transpose_in_place(&self, b: &mut DMatrix<f64>) {
        match &self.factor {
            Factor::Empty => {}
            Factor::Cholesky(chol) => chol.solve_mut(b),
            Factor::Lu {
                permutation,
                lower,
                upper,
            } => {
                upper.tr_solve_upper_triangular_mut(b);
                // `lower` holds the unit diagonal.
                lower.tr_solve_lower_triangular_mut(b);
                permutation.inv_permute_rows(b);
            }
            Factor::Pseudo(inverse) => *b = inverse.tr_mul(b),
        }
    }
}

/// The smallest pivot is above `tolerance` times the largest (and every pivot finite).
fn well_conditioned(pivots: impl Iterator<Item = f64>, tolerance: f64) -> bool {
    let (mut smallest, mut largest) = (f64::INFINITY, 0.0_f64);
    for p in pivots {
        if !p.is_finite() {
            return false;
        }
        smallest = smallest.min(p);
        largest = largest.max(p);
    }
    largest > 0.0 && smallest > tolerance * largest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_solves(k: &DMatrix<f64>, system: &LinearSystem) {
        let b = DMatrix::from_fn(k.nrows(), 2, |i, j| (i as f64 + 1.0) * (j as f64 - 0.5));
        let mut x = b.clone();
        system.solve_in_place(&mut x);
        assert!((k * &x - &b).amax() < 1e-12, "K x = b");
        let mut y = b.clone();
        system.solve_transpose_in_place(&mut y);
        assert!((k.transpose() * &y - &b).amax() < 1e-12, "Kᵀ y = b");
    }

    #[test]
    fn regular_systems_are_factored_and_solved_both_ways() {
        let k = DMatrix::from_row_slice(3, 3, &[4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0]);
        let sym = LinearSystem::new(k.clone(), true, 1e-10);
        assert_eq!(sym.method(), LinearMethod::Cholesky);
        check_solves(&k, &sym);
        let general =
            DMatrix::from_row_slice(3, 3, &[0.0, 1.0, 0.5, 2.0, 3.0, 0.2, 0.5, -1.0, 2.0]);
        let lu = LinearSystem::new(general.clone(), false, 1e-10);
        assert_eq!(lu.method(), LinearMethod::Lu);
        check_solves(&general, &lu);
    }

    #[test]
    fn a_singular_system_gets_the_least_norm_solution() {
        // Rank 1: [1 1; 1 1] x = [2; 2] has the least-norm solution [1; 1].
        let k = DMatrix::from_element(2, 2, 1.0);
        for symmetric in [true, false] {
            let system = LinearSystem::new(k.clone(), symmetric, 1e-10);
            assert_eq!(system.method(), LinearMethod::LeastNorm);
            assert_eq!(system.rank(), (1, 2));
            let mut x = DMatrix::from_element(2, 1, 2.0);
            system.solve_in_place(&mut x);
            assert!((x - DMatrix::from_element(2, 1, 1.0)).amax() < 1e-12);
        }
    }
}
