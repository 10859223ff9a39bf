//! The Delassus operator `G = J M⁻¹ Jᵀ` of a contact problem, as a matrix or through the
//! model's factors.
//!
//! A solver needs four things from `G`: the product `G λ`, the `3 × 3` diagonal blocks
//! `G_ii` (per-contact solvers), the shifted solve `(G + D)⁻¹ b` for a positive diagonal
//! `D = R + σ I` (the ADMMs' x-update), and, for metrics and files only, the matrix itself.
//! [`Delassus`] gives them for two representations:
//!
//! - [`Delassus::Dense`]: the `3n × 3n` matrix, what problem files hold and what small
//!   problems from a model are assembled into (the simulator's robot steps);
//! - [`Delassus::Factorized`] ([`FactorizedDelassus`]): a sparse `J` (`3n × nv`) and a sparse
//!   mass matrix `M` with its sparse Cholesky factor `M = L Lᵀ`. `G λ = J (M⁻¹ (Jᵀ λ))` costs
//!   two sparse products and two sparse triangular solves, `G_ii = X_iᵀ X_i` with
//!   `X_i = L⁻¹ J_iᵀ`, and the shifted solve goes through the Woodbury identity
//!
//!   ```text
//!   (D + J M⁻¹ Jᵀ)⁻¹ b = D⁻¹ (b − J v),   (M + Jᵀ D⁻¹ J) v = Jᵀ D⁻¹ b,
//!   ```
//!
//!   the Schur complement of the proximal KKT system `[M  −Jᵀ; J  D]` (Carpentier et al.,
//!   RSS 2021, §IV), with one sparse Cholesky factor of the `nv × nv` matrix
//!   `M + Jᵀ D⁻¹ J` per `D`, followed by one step of iterative refinement
//!   `x ← x + (G + D)⁻¹ (b − (G + D) x)`: the subtraction `b − J v` loses the digits of
//!   `‖G‖ / min D`, and one step gives them back. Nothing of size `(3n)²` is formed.
//!
//! Why an enum and not a trait object: there are two representations, both known to the
//! crate; a solver can match on it to keep its dense kernels (and their exact arithmetic:
//! robot records stay bit-identical) while the factorized form scales, and the problem
//! stays `Clone + PartialEq + Debug` without boxing. A solver that only needs the four
//! operations calls the methods of [`Delassus`] and works on both.
//!
//! The sparse Cholesky is nalgebra-sparse's left-looking one; it has no ordering of its
//! own, so the operator renumbers the dofs once, when it is built, by the approximate
//! minimum degree of the pattern of `M + Jᵀ J` (the `amd` crate, SuiteSparse's AMD in
//! Rust): on a pile whose bodies are numbered layer by layer, the model's order makes the
//! shifted matrix banded with the width of a layer and its factor fills that band. `J`,
//! `M`, [`FactorizedDelassus::velocity_change`] and [`FactorizedDelassus::minv_jt`] are in
//! that order of dofs; `G` and everything in contact space do not depend on it.
//!
//! What depends on the pattern of `J` alone is kept in an [`OperatorPattern`], shared by
//! the operators of the same pattern (a simulator's steps while the contacts touch the
//! same dofs): the pattern of `Jᵀ` with where each of its entries comes from in `J`, and,
//! from the first shifted solve on, the pattern of `M + Jᵀ D⁻¹ J`, where each product
//! `J_rk (J_rl / D_r)` lands in it, and its symbolic Cholesky factor. A shifted solve on a
//! kept pattern then only sums the products and refactors numerically: the same sums in
//! the same order, hence the same factor, as a fresh factorization.

use std::sync::{Arc, OnceLock};

use nalgebra::{DMatrix, DVector, Matrix3};
use nalgebra_sparse::factorization::{CscCholesky, CscSymbolicCholesky};
use nalgebra_sparse::ops::serial::spsolve_csc_lower_triangular;
use nalgebra_sparse::ops::Op;
use nalgebra_sparse::pattern::SparsityPattern;
use nalgebra_sparse::{CooMatrix, CscMatrix, CsrMatrix};

use super::coupling::{root, union};
use super::ProblemError;

/// The Delassus operator of a problem (module docs).
#[derive(Debug, Clone, PartialEq)]
pub enum Delassus {
    /// The matrix `G` (`3n × 3n`).
    Dense(DMatrix<f64>),
    /// `J M⁻¹ Jᵀ` through a sparse `J` and the sparse Cholesky factor of `M`.
    Factorized(FactorizedDelassus),
}

impl Delassus {
    /// The dimension `3n`.
    pub fn dim(&self) -> usize {
        match self {
            Delassus::Dense(g) => g.nrows(),
            Delassus::Factorized(f) => f.dim(),
        }
    }

    /// `out = G x` (`x`, `out` of size `3n`).
    pub fn apply_into(&self, x: &[f64], out: &mut [f64]) {
        match self {
            Delassus::Dense(g) => {
                let mut view = nalgebra::DVectorViewMut::from_slice(out, g.nrows());
                view.gemv(
                    1.0,
                    g,
                    &nalgebra::DVectorView::from_slice(x, g.ncols()),
                    0.0,
                );
            }
            Delassus::Factorized(f) => f.apply_into(x, out),
        }
    }

    /// `G x`.
    pub fn apply(&self, x: &DVector<f64>) -> DVector<f64> {
        let mut out = DVector::zeros(self.dim());
        self.apply_into(x.as_slice(), out.as_mut_slice());
        out
    }

    /// The `3 × 3` block `G_ii`. Panics if `i ≥ n`.
    pub fn diagonal_block(&self, i: usize) -> Matrix3<f64> {
        match self {
            Delassus::Dense(g) => g.fixed_view::<3, 3>(3 * i, 3 * i).into_owned(),
            Delassus::Factorized(f) => f.diagonal_blocks[i],
        }
    }

    /// The dense matrix `G` (formed from the factors for [`Delassus::Factorized`]).
    pub fn to_dense(&self) -> DMatrix<f64> {
        match self {
            Delassus::Dense(g) => g.clone(),
            Delassus::Factorized(f) => f.to_dense(),
        }
    }

    /// The factor of `G + D` for the positive diagonal `D` (`3n`), for
    /// [`ShiftedDelassus::solve_into`].
    pub fn shifted(&self, diagonal: &DVector<f64>) -> Result<ShiftedDelassus, ProblemError> {
        check_shift(self.dim(), diagonal)?;
        match self {
            Delassus::Dense(g) => {
                let mut a = g.clone();
                for (k, d) in diagonal.iter().enumerate() {
                    a[(k, k)] += d;
                }
                let factor = a
                    .cholesky()
                    .ok_or_else(|| not_definite("G + D", "dense Cholesky"))?;
                Ok(ShiftedDelassus::Dense(factor))
            }
            Delassus::Factorized(f) => f
                .shifted(diagonal)
                .map(|shift| ShiftedDelassus::Factorized(Box::new(shift))),
        }
    }

    /// The group of every contact (the smallest contact index of its connected component
    /// of the coupling graph, [`super::coupling`]).
    pub fn contact_groups(&self) -> Vec<usize> {
        match self {
            Delassus::Dense(g) => super::coupling::contact_groups(g),
            Delassus::Factorized(f) => f.contact_groups(),
        }
    }
}

/// `G = J M⁻¹ Jᵀ` kept as its factors (module docs); cloned cheaply (shared factors).
#[derive(Debug, Clone)]
pub struct FactorizedDelassus {
    factors: Arc<Factors>,
}

impl std::ops::Deref for FactorizedDelassus {
    type Target = Factors;
    fn deref(&self) -> &Factors {
        &self.factors
    }
}

/// The data of a [`FactorizedDelassus`].
#[derive(Debug)]
pub struct Factors {
    /// `J` (`3n × nv`).
    jacobian: CsrMatrix<f64>,
    /// `Jᵀ` (`nv × 3n`), rows by dof, for `Jᵀ λ` when `J`'s rows are not triples,
    /// formed on first use.
    jacobian_t: OnceLock<CsrMatrix<f64>>,
    /// `M` (`nv × nv`, both triangles).
    mass: CscMatrix<f64>,
    /// How `M⁻¹` is applied.
    mass_solve: MassSolve,
    /// `G_ii`, one per contact.
    diagonal_blocks: Vec<Matrix3<f64>>,
    /// What depends on the pattern of `J` only.
    pattern: Arc<OperatorPattern>,
}

/// What an operator derives from the sparsity pattern of its `J` alone (module docs):
/// built once per pattern and shared by the operators of that pattern.
#[derive(Debug)]
pub struct OperatorPattern {
    /// The pattern of `J` (`3n × nv`, CSR).
    jacobian: SparsityPattern,
    /// The pattern of `Jᵀ` (`nv × 3n`, CSR).
    transpose: SparsityPattern,
    /// For each stored entry of `Jᵀ`, the index of the same entry among `J`'s.
    transpose_source: Vec<usize>,
    /// The pattern of an `nv × nv` diagonal.
    diagonal: SparsityPattern,
    /// Whether each contact's three rows are stored on the same columns (a simulator's
    /// rows on a support): the products then read each column index once for three rows.
    triples: bool,
    /// The shifted matrix's structure, from the first shifted solve on.
    shift: OnceLock<ShiftPattern>,
}

/// The structure of `M + Jᵀ D⁻¹ J` for one pattern of `J` and of `M`.
#[derive(Debug)]
struct ShiftPattern {
    /// The pattern of `M` it was built for.
    mass: SparsityPattern,
    /// Its symbolic Cholesky factor (which holds the pattern of `M + Jᵀ J`, CSC).
    symbolic: CscSymbolicCholesky,
    /// The number of stored entries of `M + Jᵀ J`.
    nnz: usize,
    /// For each row `r` of `J` and each pair `b ≤ a` of its stored entries (in the
    /// row's order, so `col b ≤ col a`), where `J_ra (J_rb / D_r)` lands: the entry
    /// `(col a, col b)` of the lower triangle, the only one the left-looking Cholesky
    /// reads.
    product_index: Vec<usize>,
    /// Where each stored entry of `M` lands.
    mass_index: Vec<usize>,
}

impl OperatorPattern {
    /// The pattern data of a `J` (`3n × nv`) with the sparsity pattern `jacobian` (CSR).
    pub fn of(jacobian: &SparsityPattern) -> Self {
        let (rows, nv) = (jacobian.major_dim(), jacobian.minor_dim());
        // Counting sort of the entries by column: each row of Jᵀ in increasing rows of J.
        let mut offsets = vec![0; nv + 1];
        for &k in jacobian.minor_indices() {
            offsets[k + 1] += 1;
        }
        for k in 0..nv {
            offsets[k + 1] += offsets[k];
        }
        let mut next = offsets.clone();
        let nnz = jacobian.nnz();
        let mut indices = vec![0; nnz];
        let mut transpose_source = vec![0; nnz];
        for r in 0..rows {
            let start = jacobian.major_offsets()[r];
            for (e, &k) in jacobian.lane(r).iter().enumerate() {
                indices[next[k]] = r;
                transpose_source[next[k]] = start + e;
                next[k] += 1;
            }
        }
        let triples = (0..rows / 3).all(|i| {
            let lane = jacobian.lane(3 * i);
            jacobian.lane(3 * i + 1) == lane && jacobian.lane(3 * i + 2) == lane
        });
        Self {
            triples,
            jacobian: jacobian.clone(),
            transpose: SparsityPattern::try_from_offsets_and_indices(nv, rows, offsets, indices)
                .unwrap_or_else(|_| unreachable!("the transpose of a valid pattern is valid")),
            transpose_source,
            diagonal: SparsityPattern::try_from_offsets_and_indices(
                nv,
                nv,
                (0..=nv).collect(),
                (0..nv).collect(),
            )
            .unwrap_or_else(|_| unreachable!("a diagonal is a valid pattern")),
            shift: OnceLock::new(),
        }
    }

    /// `Jᵀ` from `J`'s values (`J` of this pattern).
    fn transpose_of(&self, jacobian: &CsrMatrix<f64>) -> CsrMatrix<f64> {
        let values = jacobian.values();
        let transposed = self.transpose_source.iter().map(|&e| values[e]).collect();
        CsrMatrix::try_from_pattern_and_values(self.transpose.clone(), transposed)
            .unwrap_or_else(|_| unreachable!("one value per stored entry"))
    }
}

impl ShiftPattern {
    /// The structure of `M + Jᵀ D⁻¹ J` for `J`'s and `M`'s patterns: the union of both,
    /// formed as the sparse sum of `M` and `Jᵀ J`, and where each product lands in it.
    fn new(jacobian: &CsrMatrix<f64>, jacobian_t: &CsrMatrix<f64>, mass: &CscMatrix<f64>) -> Self {
        let product: CsrMatrix<f64> = jacobian_t * jacobian;
        let sum = mass + &CscMatrix::from(&product);
        let pattern = sum.pattern();
        let place = |row: usize, col: usize| {
            let lane = pattern.lane(col);
            let at = lane
                .binary_search(&row)
                .unwrap_or_else(|_| unreachable!("M + Jᵀ J holds every product"));
            pattern.major_offsets()[col] + at
        };
        let mut product_index = Vec::new();
        for r in 0..jacobian.nrows() {
            let columns = jacobian.pattern().lane(r);
            for (a, &k) in columns.iter().enumerate() {
                product_index.extend(columns[..=a].iter().map(|&l| place(k, l)));
            }
        }
        let mass_index = (0..mass.ncols())
            .flat_map(|c| mass.pattern().lane(c).iter().map(move |&r| (r, c)))
            .map(|(r, c)| place(r, c))
            .collect();
        Self {
            mass: mass.pattern().clone(),
            nnz: pattern.nnz(),
            symbolic: CscSymbolicCholesky::factor(pattern.clone()),
            product_index,
            mass_index,
        }
    }

    /// The values of `M + Jᵀ D⁻¹ J` (`inverse` = `D⁻¹`) on this structure: each entry
    /// `M_kl + Σ_r J_rk (J_rl D⁻¹_r)` of the lower triangle (the upper one is left zero),
    /// the products summed in increasing rows `r` from zero and `M_kl` added last, as the
    /// sparse product and sum of [`ShiftPattern::new`] compute them.
    fn values(
        &self,
        jacobian: &CsrMatrix<f64>,
        mass: &CscMatrix<f64>,
        inverse: &[f64],
    ) -> Vec<f64> {
        let mut values = vec![0.0; self.nnz];
        let mut index = self.product_index.iter();
        for (r, d) in inverse.iter().enumerate() {
            let (start, end) = (jacobian.row_offsets()[r], jacobian.row_offsets()[r + 1]);
            let row = &jacobian.values()[start..end];
            for (p, a) in row.iter().enumerate() {
                for (b, place) in row[..=p].iter().zip(index.by_ref()) {
                    values[*place] += a * (b * d);
                }
            }
        }
        for (place, m) in self.mass_index.iter().zip(mass.values()) {
            values[*place] += m;
        }
        values
    }
}

/// Refuses a `J` that is not `3n × nv`.
fn check_jacobian_size(jacobian: &CsrMatrix<f64>, nv: usize) -> Result<(), ProblemError> {
    if jacobian.ncols() != nv || !jacobian.nrows().is_multiple_of(3) {
        return Err(ProblemError::Size {
            field: "J",
            expected: format!("3n x {nv}"),
            got: format!("{}x{}", jacobian.nrows(), jacobian.ncols()),
        });
    }
    Ok(())
}

/// `M⁻¹` of a [`FactorizedDelassus`].
#[derive(Debug)]
enum MassSolve {
    /// `1 / M_kk` of a diagonal `M` (the simulator's `D` of `M = Lᵀ D L`): no factor, no
    /// triangular solve.
    Diagonal(Vec<f64>),
    /// `M = L Lᵀ`.
    Cholesky(Box<CscCholesky<f64>>),
}

impl MassSolve {
    /// `v ← M⁻¹ v`.
    fn solve_mut(&self, v: &mut DVector<f64>) {
        match self {
            MassSolve::Diagonal(inverse) => {
                for (x, d) in v.iter_mut().zip(inverse) {
                    *x *= d;
                }
            }
            MassSolve::Cholesky(factor) => factor.solve_mut(v),
        }
    }
}

impl Factors {
    /// `Jᵀ`, formed from `J` on first use.
    fn jacobian_t(&self) -> &CsrMatrix<f64> {
        self.jacobian_t
            .get_or_init(|| self.pattern.transpose_of(&self.jacobian))
    }

    /// `G_ii = X_iᵀ X_i`, `X_i = L⁻¹ J_iᵀ` (three sparse forward solves per contact).
    fn compute_diagonal_blocks(&self) -> Vec<Matrix3<f64>> {
        let l = match &self.mass_solve {
            MassSolve::Diagonal(inverse) => {
                return (0..self.jacobian.nrows() / 3)
                    .map(|i| self.diagonal_block_of_diagonal_mass(i, inverse))
                    .collect();
            }
            MassSolve::Cholesky(factor) => factor.l(),
        };
        let nv = self.mass.nrows();
        let mut x = DMatrix::zeros(nv, 3);
        (0..self.jacobian.nrows() / 3)
            .map(|i| {
                x.fill(0.0);
                for r in 0..3 {
                    let row = self.jacobian.row(3 * i + r);
                    for (&k, a) in row.col_indices().iter().zip(row.values()) {
                        x[(k, r)] = *a;
                    }
                }
                // L is the factor of a successful Cholesky: its diagonal is positive.
                if spsolve_csc_lower_triangular(Op::NoOp(l), &mut x).is_err() {
                    return Matrix3::from_element(f64::NAN);
                }
                let block = x.transpose() * &x;
                Matrix3::from_fn(|r, c| block[(r, c)])
            })
            .collect()
    }
}

impl Factors {
    /// `G_ii = Σ_k J_ik J_ikᵀ / M_kk` for a diagonal `M`, over the entries of contact
    /// `i`'s rows: one pass when its three rows are stored on the same columns (the
    /// simulator's rows on a support), a merge of each pair of rows otherwise.
    fn diagonal_block_of_diagonal_mass(&self, i: usize, inverse: &[f64]) -> Matrix3<f64> {
        let rows: [_; 3] = std::array::from_fn(|r| self.jacobian.row(3 * i + r));
        let columns = rows[0].col_indices();
        if rows[1].col_indices() == columns && rows[2].col_indices() == columns {
            // The same products, summed in the same order, as the merge below.
            let mut block = Matrix3::zeros();
            for (p, &k) in columns.iter().enumerate() {
                let a: [f64; 3] = std::array::from_fn(|r| rows[r].values()[p]);
                for r in 0..3 {
                    for c in 0..3 {
                        block[(r, c)] += a[r] * a[c] * inverse[k];
                    }
                }
            }
            return block;
        }
        Matrix3::from_fn(|r, c| {
            let (a, b) = (&rows[r], &rows[c]);
            let mut sum = 0.0;
            let (mut p, mut q) = (0, 0);
            let (ia, ib) = (a.col_indices(), b.col_indices());
            while p < ia.len() && q < ib.len() {
                match ia[p].cmp(&ib[q]) {
                    std::cmp::Ordering::Less => p += 1,
                    std::cmp::Ordering::Greater => q += 1,
                    std::cmp::Ordering::Equal => {
                        sum += a.values()[p] * b.values()[q] * inverse[ia[p]];
                        p += 1;
                        q += 1;
                    }
                }
            }
            sum
        })
    }
}

/// `J` and `M` with their dofs renumbered in a fill-reducing order: the approximate minimum
/// degree (Amestoy, Davis and Duff 1996) of the pattern of `M + Jᵀ J`, which is the pattern
/// of every shifted matrix `M + Jᵀ D⁻¹ J`. `G = J M⁻¹ Jᵀ` does not depend on the dofs'
/// order. When the ordering fails (it cannot on a valid pattern), the model's order.
fn in_fill_reducing_order(
    jacobian: CsrMatrix<f64>,
    mass: CscMatrix<f64>,
) -> (CsrMatrix<f64>, CscMatrix<f64>) {
    let nv = mass.nrows();
    let Some(position) = fill_reducing_positions(&jacobian, &mass) else {
        return (jacobian, mass);
    };
    let mut j = CooMatrix::new(jacobian.nrows(), nv);
    for (r, c, v) in jacobian.triplet_iter() {
        j.push(r, position[c], *v);
    }
    let mut m = CooMatrix::new(nv, nv);
    for (r, c, v) in mass.triplet_iter() {
        m.push(position[r], position[c], *v);
    }
    (CsrMatrix::from(&j), CscMatrix::from(&m))
}

/// The new place of every dof in the approximate minimum degree order of the pattern of
/// `M + Jᵀ J` (`J` is `3n × nv`, `M` is `nv × nv`): the order in which the factor of every
/// shifted matrix `M + Jᵀ D⁻¹ J` fills least. `None` when the ordering fails (it cannot on
/// a valid pattern). Only the pattern counts: the caller may keep the order while the
/// contacts touch the same dofs.
pub fn fill_reducing_positions(
    jacobian: &CsrMatrix<f64>,
    mass: &CscMatrix<f64>,
) -> Option<Vec<usize>> {
    let nv = mass.nrows();
    let product: CsrMatrix<f64> = &jacobian.transpose() * jacobian;
    let pattern = mass + &CscMatrix::from(&product);
    let (order, _, _) = amd::order(
        nv,
        pattern.col_offsets(),
        pattern.row_indices(),
        &amd::Control::default(),
    )
    .ok()?;
    let mut position = vec![0; nv];
    for (k, &dof) in order.iter().enumerate() {
        position[dof] = k;
    }
    Some(position)
}

/// `1 / d_k` of a finite, positive diagonal `d`; a typed error otherwise.
fn inverse_of_positive_diagonal(diagonal: &[f64]) -> Result<Vec<f64>, ProblemError> {
    check_finite_sparse("M", diagonal)?;
    if let Some(k) = diagonal.iter().position(|d| *d <= 0.0) {
        return Err(not_definite(
            "M",
            format!("diagonal entry {k} is {}", diagonal[k]),
        ));
    }
    Ok(diagonal.iter().map(|d| d.recip()).collect())
}

/// `1 / M_kk` when every stored entry of `M` is on its diagonal and positive.
fn inverse_of_diagonal(mass: &CscMatrix<f64>) -> Option<Vec<f64>> {
    let nv = mass.nrows();
    let mut inverse = vec![0.0; nv];
    for (c, column) in (0..nv).map(|c| (c, mass.col(c))) {
        match (column.row_indices(), column.values()) {
            ([r], [m]) if *r == c && *m > 0.0 => inverse[c] = m.recip(),
            _ => return None,
        }
    }
    Some(inverse)
}

impl PartialEq for FactorizedDelassus {
    fn eq(&self, other: &Self) -> bool {
        self.jacobian == other.jacobian && self.mass == other.mass
    }
}

impl FactorizedDelassus {
    /// The operator of `J` (`3n × nv`) and the symmetric positive definite `M`
    /// (`nv × nv`, both triangles stored). Refuses wrong sizes, non-finite entries and an
    /// `M` whose Cholesky factorization fails.
    pub fn new(jacobian: CsrMatrix<f64>, mass: CscMatrix<f64>) -> Result<Self, ProblemError> {
        let nv = mass.nrows();
        if mass.ncols() != nv {
            return Err(size("M", format!("{nv}x{nv}"), mass.ncols(), mass.nrows()));
        }
        check_jacobian_size(&jacobian, nv)?;
        check_finite_sparse("J", jacobian.values())?;
        check_finite_sparse("M", mass.values())?;
        let (jacobian, mass) = in_fill_reducing_order(jacobian, mass);
        let mass_solve = match inverse_of_diagonal(&mass) {
            Some(inverse) => MassSolve::Diagonal(inverse),
            None => MassSolve::Cholesky(Box::new(
                CscCholesky::factor(&mass).map_err(|e| not_definite("M", e))?,
            )),
        };
        Ok(Self::from_factors(jacobian, mass, mass_solve))
    }

    /// The operator `J M⁻¹ Jᵀ` of a diagonal `M = diag(diagonal)` with positive entries
    /// (the `D` of `M = Lᵀ D L` with `Yᵀ = (L⁻ᵀ Jᵀ)ᵀ` in the place of `J`, as the
    /// simulator assembles it): nothing to factor, and `J`'s columns are kept in the order
    /// given (the caller's, e.g. [`fill_reducing_positions`] kept while the contacts touch
    /// the same dofs). `O(nnz(J))`.
    pub fn with_diagonal_mass(
        jacobian: CsrMatrix<f64>,
        diagonal: &[f64],
    ) -> Result<Self, ProblemError> {
        let nv = diagonal.len();
        check_jacobian_size(&jacobian, nv)?;
        check_finite_sparse("J", jacobian.values())?;
        let inverse = inverse_of_positive_diagonal(diagonal)?;
        let mass = CscMatrix::try_from_csc_data(
            nv,
            nv,
            (0..=nv).collect(),
            (0..nv).collect(),
            diagonal.to_vec(),
        )
        .map_err(|e| ProblemError::Size {
            field: "M",
            expected: format!("a {nv}x{nv} diagonal"),
            got: e.to_string(),
        })?;
        Ok(Self::from_factors(
            jacobian,
            mass,
            MassSolve::Diagonal(inverse),
        ))
    }

    /// [`FactorizedDelassus::with_diagonal_mass`] for a `J` given by its values on the
    /// pattern `pattern` (in its order of stored entries): the pattern's data, the
    /// shifted matrix's symbolic factor included, is shared with the other operators of
    /// that pattern instead of being derived again. `O(nnz(J))`.
    pub fn with_diagonal_mass_on(
        pattern: &Arc<OperatorPattern>,
        values: Vec<f64>,
        diagonal: &[f64],
    ) -> Result<Self, ProblemError> {
        let nv = diagonal.len();
        if values.len() != pattern.jacobian.nnz() || pattern.jacobian.minor_dim() != nv {
            return Err(ProblemError::Size {
                field: "J",
                expected: format!(
                    "{} values on a pattern of {} columns",
                    pattern.jacobian.nnz(),
                    pattern.jacobian.minor_dim()
                ),
                got: format!("{} values, {nv} dofs", values.len()),
            });
        }
        check_finite_sparse("J", &values)?;
        let inverse = inverse_of_positive_diagonal(diagonal)?;
        let jacobian = CsrMatrix::try_from_pattern_and_values(pattern.jacobian.clone(), values)
            .unwrap_or_else(|_| unreachable!("one value per stored entry"));
        let mass =
            CscMatrix::try_from_pattern_and_values(pattern.diagonal.clone(), diagonal.to_vec())
                .unwrap_or_else(|_| unreachable!("one value per diagonal entry"));
        Ok(Self::on_pattern(
            Arc::clone(pattern),
            jacobian,
            mass,
            MassSolve::Diagonal(inverse),
        ))
    }

    /// The pattern data of this operator's `J`, to share with the next operator of the
    /// same pattern ([`FactorizedDelassus::with_diagonal_mass_on`]).
    pub fn pattern(&self) -> &Arc<OperatorPattern> {
        &self.pattern
    }

    fn from_factors(jacobian: CsrMatrix<f64>, mass: CscMatrix<f64>, mass_solve: MassSolve) -> Self {
        let pattern = Arc::new(OperatorPattern::of(jacobian.pattern()));
        Self::on_pattern(pattern, jacobian, mass, mass_solve)
    }

    /// The operator of `J` (whose pattern is `pattern`'s), `M` and its solve.
    fn on_pattern(
        pattern: Arc<OperatorPattern>,
        jacobian: CsrMatrix<f64>,
        mass: CscMatrix<f64>,
        mass_solve: MassSolve,
    ) -> Self {
        let jacobian_t = OnceLock::new();
        let mut factors = Factors {
            jacobian,
            jacobian_t,
            mass,
            mass_solve,
            diagonal_blocks: Vec::new(),
            pattern,
        };
        factors.diagonal_blocks = factors.compute_diagonal_blocks();
        Self {
            factors: Arc::new(factors),
        }
    }

    /// The dimension `3n`.
    pub fn dim(&self) -> usize {
        self.jacobian.nrows()
    }

    /// The number of dofs `nv`.
    pub fn dofs(&self) -> usize {
        self.mass.nrows()
    }

    /// `J`.
    pub fn jacobian(&self) -> &CsrMatrix<f64> {
        &self.jacobian
    }

    /// `M`.
    pub fn mass(&self) -> &CscMatrix<f64> {
        &self.mass
    }

    /// `out = J v` (`v` of size `nv`): each row's sum in its order of entries from
    /// `-0.0`, as `Iterator::sum`, three rows at once on triples.
    fn product(&self, v: &[f64], out: &mut [f64]) {
        if !self.pattern.triples {
            return sparse_product(&self.jacobian, v, out);
        }
        let (offsets, columns) = (self.jacobian.row_offsets(), self.jacobian.col_indices());
        let values = self.jacobian.values();
        for (i, o) in out.chunks_exact_mut(3).enumerate() {
            let (start, len) = (offsets[3 * i], offsets[3 * i + 1] - offsets[3 * i]);
            let rows: [&[f64]; 3] = std::array::from_fn(|r| &values[start + r * len..][..len]);
            let mut sum = [-0.0; 3];
            for (p, &k) in columns[start..start + len].iter().enumerate() {
                for r in 0..3 {
                    sum[r] += rows[r][p] * v[k];
                }
            }
            o.copy_from_slice(&sum);
        }
    }

    /// `v = Jᵀ x` (`x` of size `3n`): each dof's sum over the rows in increasing order
    /// from `-0.0`, as [`sparse_product`] by `Jᵀ`, scattered three rows at once on
    /// triples.
    fn transpose_product(&self, x: &[f64], v: &mut [f64]) {
        if !self.pattern.triples {
            return sparse_product(self.jacobian_t(), x, v);
        }
        v.fill(-0.0);
        let (offsets, columns) = (self.jacobian.row_offsets(), self.jacobian.col_indices());
        let values = self.jacobian.values();
        for (i, xi) in x.chunks_exact(3).enumerate() {
            let (start, len) = (offsets[3 * i], offsets[3 * i + 1] - offsets[3 * i]);
            let rows: [&[f64]; 3] = std::array::from_fn(|r| &values[start + r * len..][..len]);
            for (p, &k) in columns[start..start + len].iter().enumerate() {
                for r in 0..3 {
                    v[k] += rows[r][p] * xi[r];
                }
            }
        }
    }

    /// `out = J M⁻¹ Jᵀ x`.
    pub fn apply_into(&self, x: &[f64], out: &mut [f64]) {
        let mut v = DVector::zeros(self.dofs());
        self.transpose_product(x, v.as_mut_slice());
        self.mass_solve.solve_mut(&mut v);
        self.product(v.as_slice(), out);
    }

    /// `M⁻¹ Jᵀ x` (`nv`): the velocity change of the forces `x`.
    pub fn velocity_change(&self, x: &[f64]) -> DVector<f64> {
        let mut v = DVector::zeros(self.dofs());
        self.transpose_product(x, v.as_mut_slice());
        self.mass_solve.solve_mut(&mut v);
        v
    }

    /// `(J v)_i`, contact `i`'s three rows of `J` times `v` (`nv`).
    pub fn contact_velocity(&self, i: usize, v: &[f64]) -> [f64; 3] {
        std::array::from_fn(|r| {
            let row = self.jacobian.row(3 * i + r);
            row.col_indices()
                .iter()
                .zip(row.values())
                .map(|(&k, a)| a * v[k])
                .sum()
        })
    }

    /// `v += M⁻¹ J_iᵀ δ` for contact `i`'s change of force `δ`, through the columns
    /// `columns` of [`FactorizedDelassus::minv_jt`].
    pub fn add_velocity_change(
        columns: &CscMatrix<f64>,
        i: usize,
        delta: &[f64; 3],
        v: &mut [f64],
    ) {
        for (r, d) in delta.iter().enumerate() {
            if *d == 0.0 {
                continue;
            }
            let column = columns.col(3 * i + r);
            for (&k, a) in column.row_indices().iter().zip(column.values()) {
                v[k] += a * d;
            }
        }
    }

    /// `M⁻¹ Jᵀ` (`nv × 3n`, sparse: its exact zeros left out), the columns per-contact
    /// solvers keep `v = M⁻¹ Jᵀ λ` up to date with.
    pub fn minv_jt(&self) -> CscMatrix<f64> {
        if let MassSolve::Diagonal(inverse) = &self.mass_solve {
            // Jᵀ with row k scaled by 1 / M_kk.
            let mut columns = CscMatrix::from(self.jacobian_t());
            for c in 0..columns.ncols() {
                let mut column = columns.col_mut(c);
                let (rows, values) = column.rows_and_values_mut();
                for (r, v) in rows.iter().zip(values) {
                    *v *= inverse[*r];
                }
            }
            return columns;
        }
        let nv = self.dofs();
        let mut coo = CooMatrix::new(nv, self.dim());
        let mut column = DVector::zeros(nv);
        for c in 0..self.dim() {
            column.fill(0.0);
            let row = self.jacobian.row(c);
            for (&k, a) in row.col_indices().iter().zip(row.values()) {
                column[k] = *a;
            }
            self.mass_solve.solve_mut(&mut column);
            for (k, value) in column.iter().enumerate() {
                if *value != 0.0 {
                    coo.push(k, c, *value);
                }
            }
        }
        CscMatrix::from(&coo)
    }

    /// The dense `G`, column by column (`3n` products).
    pub fn to_dense(&self) -> DMatrix<f64> {
        let dim = self.dim();
        let mut g = DMatrix::zeros(dim, dim);
        let mut e = vec![0.0; dim];
        let mut column = vec![0.0; dim];
        for c in 0..dim {
            e[c] = 1.0;
            self.apply_into(&e, &mut column);
            e[c] = 0.0;
            g.column_mut(c).copy_from_slice(&column);
        }
        // Exactly symmetric, as the assembled G is.
        (&g + g.transpose()) * 0.5
    }

    /// The factor of `M + Jᵀ D⁻¹ J` (module docs), on the structure kept with the
    /// pattern of `J` (built on first use, or apart when `M`'s pattern is not the one
    /// it was built for).
    fn shifted(&self, diagonal: &DVector<f64>) -> Result<FactorizedShift, ProblemError> {
        let inverse: Vec<f64> = diagonal.iter().map(|d| d.recip()).collect();
        let kept = self
            .pattern
            .shift
            .get_or_init(|| ShiftPattern::new(&self.jacobian, self.jacobian_t(), &self.mass));
        let apart;
        let structure = if kept.mass == *self.mass.pattern() {
            kept
        } else {
            apart = ShiftPattern::new(&self.jacobian, self.jacobian_t(), &self.mass);
            &apart
        };
        let values = structure.values(&self.jacobian, &self.mass, &inverse);
        let factor = CscCholesky::factor_numerical(structure.symbolic.clone(), &values)
            .map_err(|e| not_definite("M + J^T D^-1 J", e))?;
        Ok(FactorizedShift {
            operator: self.clone(),
            diagonal: diagonal.clone(),
            inverse,
            factor,
        })
    }

    /// Groups of contacts coupled through `M⁻¹`: contacts whose rows of `J` reach the
    /// same connected component of `M`'s graph (`M⁻¹` of an irreducible block is full).
    fn contact_groups(&self) -> Vec<usize> {
        let nv = self.dofs();
        // A diagonal M joins no two dofs.
        let mut dof_parent: Vec<usize> = (0..nv).collect();
        if !matches!(self.mass_solve, MassSolve::Diagonal(_)) {
            for (c, column) in (0..nv).map(|c| (c, self.mass.col(c))) {
                for &r in column.row_indices() {
                    union(&mut dof_parent, r, c);
                }
            }
        }
        let n = self.dim() / 3;
        let mut parent: Vec<usize> = (0..n).collect();
        let mut owner: Vec<Option<usize>> = vec![None; nv];
        let (offsets, columns) = (self.jacobian.row_offsets(), self.jacobian.col_indices());
        let values = self.jacobian.values();
        for i in 0..n {
            let mut join = |k: usize| {
                let component = root(&dof_parent, k);
                match owner[component] {
                    Some(j) if j != i => union(&mut parent, i, j),
                    Some(_) => {}
                    None => owner[component] = Some(i),
                }
            };
            // The dofs where one of the contact's rows is nonzero: each dof once on
            // triples, once per row otherwise.
            if self.pattern.triples {
                let (start, len) = (offsets[3 * i], offsets[3 * i + 1] - offsets[3 * i]);
                for (p, &k) in columns[start..start + len].iter().enumerate() {
                    if (0..3).any(|r| values[start + r * len + p] != 0.0) {
                        join(k);
                    }
                }
            } else {
                for e in offsets[3 * i]..offsets[3 * i + 3] {
                    if values[e] != 0.0 {
                        join(columns[e]);
                    }
                }
            }
        }
        (0..n).map(|i| root(&parent, i)).collect()
    }
}

/// A factor of `G + D` ([`Delassus::shifted`]).
#[derive(Debug, Clone)]
pub enum ShiftedDelassus {
    /// Dense Cholesky of `G + D`.
    Dense(nalgebra::Cholesky<f64, nalgebra::Dyn>),
    /// Woodbury through `M + Jᵀ D⁻¹ J` (module docs).
    Factorized(Box<FactorizedShift>),
}

/// The factor of `M + Jᵀ D⁻¹ J` with what the Woodbury solve needs.
#[derive(Debug, Clone)]
pub struct FactorizedShift {
    operator: FactorizedDelassus,
    diagonal: DVector<f64>,
    inverse: Vec<f64>,
    factor: CscCholesky<f64>,
}

impl FactorizedShift {
    /// `x = D⁻¹ (b − J v)`, `(M + Jᵀ D⁻¹ J) v = Jᵀ D⁻¹ b`.
    fn woodbury(&self, b: &[f64], x: &mut [f64]) {
        let op = &self.operator;
        for ((xk, bk), d) in x.iter_mut().zip(b).zip(&self.inverse) {
            *xk = bk * d;
        }
        let mut v = DVector::zeros(op.dofs());
        op.transpose_product(x, v.as_mut_slice());
        self.factor.solve_mut(&mut v);
        op.product(v.as_slice(), x);
        for ((xk, bk), d) in x.iter_mut().zip(b).zip(&self.inverse) {
            *xk = (bk - *xk) * d;
        }
    }
}

impl ShiftedDelassus {
    /// `x = (G + D)⁻¹ b` (`b`, `x` of size `3n`).
    pub fn solve_into(&self, b: &[f64], x: &mut [f64]) {
        match self {
            ShiftedDelassus::Dense(factor) => {
                let mut v = DVector::from_column_slice(b);
                factor.solve_mut(&mut v);
                x.copy_from_slice(v.as_slice());
            }
            ShiftedDelassus::Factorized(shift) => {
                shift.woodbury(b, x);
                // One step of iterative refinement: r = b − (G + D) x, x += (G + D)⁻¹ r.
                let mut residual = vec![0.0; b.len()];
                shift.operator.apply_into(x, &mut residual);
                for (k, r) in residual.iter_mut().enumerate() {
                    *r = b[k] - (*r + shift.diagonal[k] * x[k]);
                }
                let mut correction = vec![0.0; b.len()];
                shift.woodbury(&residual, &mut correction);
                for (xk, ck) in x.iter_mut().zip(&correction) {
                    *xk += ck;
                }
            }
        }
    }

    /// `(G + D)⁻¹ b`.
    pub fn solve(&self, b: &DVector<f64>) -> DVector<f64> {
        let mut x = DVector::zeros(b.len());
        self.solve_into(b.as_slice(), x.as_mut_slice());
        x
    }
}

/// `out = A x` for a CSR `A`.
fn sparse_product(a: &CsrMatrix<f64>, x: &[f64], out: &mut [f64]) {
    for (r, o) in out.iter_mut().enumerate() {
        let row = a.row(r);
        *o = row
            .col_indices()
            .iter()
            .zip(row.values())
            .map(|(&k, v)| v * x[k])
            .sum();
    }
}

fn check_shift(dim: usize, diagonal: &DVector<f64>) -> Result<(), ProblemError> {
    if diagonal.len() != dim {
        return Err(ProblemError::Size {
            field: "D",
            expected: dim.to_string(),
            got: diagonal.len().to_string(),
        });
    }
    match diagonal.iter().position(|d| !(d.is_finite() && *d > 0.0)) {
        Some(k) if !diagonal[k].is_finite() => Err(ProblemError::NonFinite {
            field: "D",
            index: k.to_string(),
        }),
        Some(k) => Err(ProblemError::Negative {
            field: "D",
            index: k,
            value: diagonal[k],
        }),
        None => Ok(()),
    }
}

fn check_finite_sparse(field: &'static str, values: &[f64]) -> Result<(), ProblemError> {
    match crate::dynamics::first_non_finite(values) {
        Some(k) => Err(ProblemError::NonFinite {
            field,
            index: format!("stored entry {k}"),
        }),
        None => Ok(()),
    }
}

fn size(field: &'static str, expected: String, cols: usize, rows: usize) -> ProblemError {
    ProblemError::Size {
        field,
        expected,
        got: format!("{rows}x{cols}"),
    }
}

fn not_definite(field: &'static str, what: impl std::fmt::Debug) -> ProblemError {
    ProblemError::NotPositiveDefinite {
        field,
        what: format!("{what:?}"),
    }
}
