//! The linear system `K dλ = b` of the linearized conditions, factored once and solved
//! for every right-hand side (a Jacobian's columns, a JVP, a VJP through `Kᵀ`).
//!
//! `K` is the block `(G + R)_SS` of the active contacts when every one of them sticks
//! (symmetric positive semi-definite: Cholesky with diagonal pivoting), and otherwise a
//! general square matrix (LU with partial pivoting). When the factor's pivots say that `K`
//! is singular to `rank_tolerance` (redundant contacts: four corners of a sole carry six
//! independent forces, not twelve), the least-norm least-squares solution `K⁺ b` is used
//! instead: of the answers that satisfy the linearized conditions (as well as they can be
//! satisfied), the smallest change of `λ`. A symmetric `K` stops its pivoted Cholesky at
//! rank `r`, `K = P F Fᵀ Pᵀ` with `F` (`m × r`) of full column rank, and
//! `K⁺ = P F (Fᵀ F)⁻² Fᵀ Pᵀ = P F⁺ᵀ F⁺ Pᵀ` with `F⁺ = (Fᵀ F)⁻¹ Fᵀ` from the Cholesky
//! factor of the `r × r` Gram matrix `Fᵀ F` (two triangular solves; its condition number
//! is that of `K`'s `r` kept pivots, which `rank_tolerance` bounds); a general `K` goes
//! through the SVD with singular values below `rank_tolerance · σ_max` dropped.

use nalgebra::{DMatrix, Dyn, PermutationSequence};
use serde::Serialize;

/// How the system was solved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinearMethod {
    /// No active contact: nothing to solve.
    Empty,
    /// Cholesky (pivoted) of the symmetric `(G + R)_SS` (every active contact sticks).
    Cholesky,
    /// LU with partial pivoting.
    Lu,
    /// Least-norm solution through the pseudo-inverse (rank-deficient `K`).
    LeastNorm,
}

enum Factor {
    Empty,
    /// `K = P F Fᵀ Pᵀ`, `F` lower triangular: row `a` of `F` is row `order[a]` of `K`.
    Cholesky {
        order: Vec<usize>,
        lower: DMatrix<f64>,
    },
    /// `K⁺ = P F⁺ᵀ F⁺ Pᵀ` of a rank-deficient symmetric `K` (module docs): `pinv` is
    /// `F⁺` (`r × m`).
    SymmetricPseudo {
        order: Vec<usize>,
        pinv: DMatrix<f64>,
    },
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
            return Self::symmetric(&k, rank_tolerance);
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

    /// A symmetric positive semi-definite `K` by its pivoted Cholesky factor: the factor
    /// itself at full rank, `F⁺` otherwise (module docs; the SVD's `K⁺` should the Gram
    /// matrix of the kept columns not be numerically positive definite).
    fn symmetric(k: &DMatrix<f64>, rank_tolerance: f64) -> Self {
        let dim = k.nrows();
        let (order, lower, rank) = pivoted_cholesky(k, rank_tolerance);
        if rank == dim {
            return Self {
                factor: Factor::Cholesky { order, lower },
                method: LinearMethod::Cholesky,
                rank,
                dim,
            };
        }
        let kept = lower.columns(0, rank);
        let Some(gram) = kept.tr_mul(&kept).cholesky() else {
            return Self::pseudo_inverse(k.clone(), rank_tolerance);
        };
        Self {
            factor: Factor::SymmetricPseudo {
                order,
                pinv: gram.solve(&kept.transpose()),
            },
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
            Factor::Cholesky { .. } | Factor::SymmetricPseudo { .. } => self.solve_symmetric(b),
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

    /// `K⁻¹` (or `K⁺`) itself, for a Jacobian with one column per entry: from the
    /// symmetric factors without solving the identity's columns, `K⁻¹ = P F⁻ᵀ F⁻¹ Pᵀ`
    /// and `K⁺ = P F⁺ᵀ F⁺ Pᵀ`, one triangle of each product.
    pub(crate) fn inverse(&self) -> DMatrix<f64> {
        match &self.factor {
            Factor::Cholesky { order, lower } => {
                let mut w = DMatrix::identity(self.dim, self.dim);
                lower.solve_lower_triangular_mut(&mut w);
                scattered_gram(order, &w)
            }
            Factor::SymmetricPseudo { order, pinv } => scattered_gram(order, pinv),
            _ => {
                let mut b = DMatrix::identity(self.dim, self.dim);
                self.solve_in_place(&mut b);
                b
            }
        }
    }

    /// `b ← K⁻ᵀ b` (or `(K⁺)ᵀ b`), every column: `P K = L U` gives `Kᵀ = Uᵀ Lᵀ P`.
    pub(crate) fn solve_transpose_in_place(&self, b: &mut DMatrix<f64>) {
        match &self.factor {
            Factor::Empty => {}
            Factor::Cholesky { .. } | Factor::SymmetricPseudo { .. } => self.solve_symmetric(b),
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

    /// `b ← K⁻¹ b` or `K⁺ b` of a symmetric `K` (its own transpose): rows into the
    /// factor's order, `(F Fᵀ)⁻¹` or `F⁺ᵀ F⁺`, rows back.
    fn solve_symmetric(&self, b: &mut DMatrix<f64>) {
        let order = match &self.factor {
            Factor::Cholesky { order, .. } | Factor::SymmetricPseudo { order, .. } => order,
            _ => return,
        };
        let mut y = DMatrix::zeros(b.nrows(), b.ncols());
        for (a, &i) in order.iter().enumerate() {
            y.row_mut(a).copy_from(&b.row(i));
        }
        match &self.factor {
            Factor::Cholesky { lower, .. } => {
                lower.solve_lower_triangular_mut(&mut y);
                lower.tr_solve_lower_triangular_mut(&mut y);
            }
            Factor::SymmetricPseudo { pinv, .. } => y = pinv.tr_mul(&(pinv * y)),
            _ => {}
        }
        for (a, &i) in order.iter().enumerate() {
            b.row_mut(i).copy_from(&y.row(a));
        }
    }
}

/// `P Wᵀ W Pᵀ`: entry `(order[a], order[b])` is the dot product of columns `a` and `b` of
/// `W`, computed once for both triangles.
fn scattered_gram(order: &[usize], w: &DMatrix<f64>) -> DMatrix<f64> {
    let m = order.len();
    let mut out = DMatrix::zeros(m, m);
    for (a, &i) in order.iter().enumerate() {
        let column = w.column(a);
        for (b, &j) in order.iter().enumerate().take(a + 1) {
            let x = column.dot(&w.column(b));
            out[(i, j)] = x;
            out[(j, i)] = x;
        }
    }
    out
}

/// Cholesky with diagonal pivoting of a symmetric positive semi-definite `k` (Higham,
/// "Accuracy and Stability of Numerical Algorithms", §10.3): at step `j` the largest
/// diagonal entry of the remaining Schur complement is the pivot, and the factorization
/// stops when it is at most `tolerance` times the first pivot. Returns the order of the
/// rows (`order[a]` is row `a` of the factor), the lower-triangular factor `F` (`m × m`,
/// columns past the rank zero) with `P F Fᵀ Pᵀ ≈ k`, and the rank.
fn pivoted_cholesky(k: &DMatrix<f64>, tolerance: f64) -> (Vec<usize>, DMatrix<f64>, usize) {
    let m = k.nrows();
    let mut order: Vec<usize> = (0..m).collect();
    let mut schur = k.clone();
    let mut lower = DMatrix::zeros(m, m);
    let mut first = 0.0;
    for j in 0..m {
        let (offset, pivot) = schur.diagonal().rows(j, m - j).iter().enumerate().fold(
            (0, f64::NEG_INFINITY),
            |best, (i, &d)| {
                if d > best.1 {
                    (i, d)
                } else {
                    best
                }
            },
        );
        if j == 0 {
            first = pivot;
        }
        if !(pivot.is_finite() && pivot > tolerance * first && pivot > 0.0) {
            return (order, lower, j);
        }
        let p = j + offset;
        order.swap(j, p);
        schur.swap_rows(j, p);
        schur.swap_columns(j, p);
        lower.swap_rows(j, p);
        let root = pivot.sqrt();
        lower[(j, j)] = root;
        for i in j + 1..m {
            lower[(i, j)] = schur[(i, j)] / root;
        }
        // The Schur complement, both triangles (the swaps mix them): S_il −= F_ij F_lj.
        for l in j + 1..m {
            let f_l = lower[(l, j)];
            for i in j + 1..m {
                schur[(i, l)] -= lower[(i, j)] * f_l;
            }
        }
    }
    (order, lower, m)
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
        assert!((k * system.inverse()).is_identity(1e-12), "K K⁻¹ = I");
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
    fn a_rank_deficient_symmetric_system_gets_the_pseudo_inverse() {
        // K = B Bᵀ, 7 × 7 of rank 4, against the SVD's pseudo-inverse.
        let b = DMatrix::from_fn(7, 4, |i, j| {
            ((i * 5 + j * 3) % 7) as f64 - 2.5 + 0.1 * j as f64
        });
        let k = &b * b.transpose();
        let system = LinearSystem::new(k.clone(), true, 1e-10);
        assert_eq!(system.method(), LinearMethod::LeastNorm);
        assert_eq!(system.rank(), (4, 7));
        let expected = k.clone().pseudo_inverse(1e-9).expect("an SVD");
        let mut x = DMatrix::identity(7, 7);
        system.solve_in_place(&mut x);
        let error = (&x - &expected).amax() / expected.amax();
        assert!(error < 1e-12, "pseudo-inverse off by {error:.2e}");
        let error = (system.inverse() - &expected).amax() / expected.amax();
        assert!(
            error < 1e-12,
            "pseudo-inverse formed apart off by {error:.2e}"
        );
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
