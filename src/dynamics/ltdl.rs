//! The LTDL factorization of the joint-space mass matrix with branch-induced sparsity
//! (Featherstone 2008, §6.5, Table 6.3; Pinocchio's `cholesky::decompose`).
//!
//! `M = Lᵀ D L` with `L` unit lower triangular and `D` diagonal, where `L[k][i] ≠ 0` only
//! when dof `i` is an ancestor of dof `k` in the kinematic tree (dofs are numbered so that
//! a parent comes before its children, `λ(k) < k`). The factorization costs
//! `O(Σ_k depth(k)²)` instead of `O(nv³)`, and every solve walks only ancestor chains:
//!
//! - `M x = b`: `Lᵀ y = b` (from the leaves to the root), `z = D⁻¹ y`, `L x = z` (from the
//!   root to the leaves);
//! - `L⁻ᵀ b` of a vector supported on a set of chains (a contact Jacobian row) stays on
//!   those chains, so that `G = J M⁻¹ Jᵀ = (L⁻ᵀ Jᵀ)ᵀ D⁻¹ (L⁻ᵀ Jᵀ)` costs what the chains cost;
//! - `(M⁻¹)_jj = Σ_k (L⁻ᵀ e_j)_k² / D_k` over the chain of `j`, without inverting `M`, and
//!   only for the dofs asked (the PD's actuated joints).
//!
//! Storage: row `k` of `L` keeps only its ancestor entries, `L[k][λ(k)], L[k][λ²(k)], …`
//! contiguously (the ancestors of `λ^m(k)` are the tail of `k`'s list, so the in-place
//! factorization updates rows with plain slice loops). No method allocates after
//! [`MassLtdl::new`].

use std::ops::{Mul, SubAssign};

use nalgebra::DMatrix;

use super::DynamicsError;
use crate::model::{JointKind, Model};

/// No parent: the dof hangs from the world.
const ROOT: usize = usize::MAX;

/// `M = Lᵀ D L` of a model's mass matrix (module docs).
#[derive(Debug, Clone)]
pub struct MassLtdl {
    /// Parent dof `λ(k)` of each dof (`ROOT` for a dof that hangs from the world).
    parent: Vec<usize>,
    /// Row `k`'s ancestors `λ(k), λ²(k), …` are `ancestors[start[k]..start[k + 1]]`.
    ancestors: Vec<usize>,
    /// Offsets of the rows in `ancestors` and `l`.
    start: Vec<usize>,
    /// `L[k][ancestors[t]]` at `l[t]`.
    l: Vec<f64>,
    /// `D_k`.
    d: Vec<f64>,
    /// `1 / D_k`.
    inverse_d: Vec<f64>,
    /// Scratch: one row of `L⁻¹` on a chain ([`MassLtdl::inverse_diagonal_on`]).
    work: Vec<f64>,
}

impl MassLtdl {
    /// The dof tree of `model`: the dofs of a multi-dof joint form a chain, and a joint's
    /// first dof hangs from the last dof of its parent joint.
    pub fn new(model: &Model) -> MassLtdl {
        let nv = model.nv();
        let mut parent = vec![ROOT; nv];
        let mut last_dof = vec![ROOT; model.njoints()];
        for (i, joint) in model.joints.iter().enumerate() {
            let n = joint.nv();
            if joint.kind == JointKind::Universe || n == 0 {
                continue;
            }
            let mut up = last_dof[joint.parent];
            for (k, p) in parent.iter_mut().enumerate().skip(joint.idx_v).take(n) {
                *p = up;
                up = k;
            }
            last_dof[i] = up;
        }
        let mut ancestors = Vec::new();
        let mut start = Vec::with_capacity(nv + 1);
        for k in 0..nv {
            start.push(ancestors.len());
            let mut i = parent[k];
            while i != ROOT {
                ancestors.push(i);
                i = parent[i];
            }
        }
        start.push(ancestors.len());
        let depth = start.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
        MassLtdl {
            l: vec![0.0; ancestors.len()],
            work: vec![0.0; depth],
            parent,
            ancestors,
            start,
            d: vec![0.0; nv],
            inverse_d: vec![0.0; nv],
        }
    }

    /// Dimension nv.
    pub fn dim(&self) -> usize {
        self.parent.len()
    }

    /// The parent dof of `k`, `None` for a dof that hangs from the world.
    pub fn parent(&self, k: usize) -> Option<usize> {
        self.parent.get(k).copied().filter(|&p| p != ROOT)
    }

    /// `D_k`.
    pub fn d(&self, k: usize) -> f64 {
        self.d[k]
    }

    /// `L[k][i]`: 1 on the diagonal, the factor for `i` an ancestor of `k`, 0 elsewhere.
    pub fn l(&self, k: usize, i: usize) -> f64 {
        if i == k {
            return 1.0;
        }
        let row = self.start[k]..self.start[k + 1];
        self.ancestors[row.clone()]
            .iter()
            .position(|&a| a == i)
            .map_or(0.0, |t| self.l[row.start + t])
    }

    /// Factorizes `mass` (nv × nv, e.g. `data.mass_matrix` after [`super::crba()`]); only
    /// the entries between a dof and its ancestors are read (Table 6.3: for `k` from the
    /// leaves, for each ancestor `i` of `k`, `a = H_ki / H_kk`, `H_ij −= a H_kj` for `j = i`
    /// and the ancestors of `i`, `H_ki = a`).
    pub fn factorize(&mut self, mass: &DMatrix<f64>) -> Result<(), DynamicsError> {
        let nv = self.dim();
        if mass.nrows() != nv || mass.ncols() != nv {
            return Err(DynamicsError::WrongSize {
                name: "mass matrix rows",
                dim: "nv",
                expected: nv,
                got: mass.nrows().max(mass.ncols()),
            });
        }
        for k in 0..nv {
            self.d[k] = mass[(k, k)];
            for t in self.start[k]..self.start[k + 1] {
                self.l[t] = mass[(k, self.ancestors[t])];
            }
        }
        for k in (0..nv).rev() {
            let hkk = self.d[k];
            if !(hkk > 0.0 && hkk.is_finite()) {
                return Err(DynamicsError::NotPositiveDefinite("the mass matrix"));
            }
            let (from, to) = (self.start[k], self.start[k + 1]);
            let (before, rows_k) = self.l.split_at_mut(from);
            let row_k = &mut rows_k[..to - from];
            for m in 0..row_k.len() {
                // i = λ^{m+1}(k); its ancestors are k's from position m + 1 on.
                let i = self.ancestors[from + m];
                let a = row_k[m] / hkk;
                self.d[i] -= a * row_k[m];
                // Row i holds exactly the ancestors after position m of row k.
                let tail = &row_k[m + 1..];
                let start_i = self.start[i];
                axpy(-a, tail, &mut before[start_i..start_i + tail.len()]);
                row_k[m] = a;
            }
            self.inverse_d[k] = 1.0 / hkk;
        }
        Ok(())
    }

    /// `b ← M⁻¹ b` (nv entries).
    pub fn solve_in_place(&self, b: &mut [f64]) -> Result<(), DynamicsError> {
        self.check_len(b.len())?;
        // Lᵀ y = b, leaves first: y_k is final once every descendant has been subtracted.
        for k in (0..self.dim()).rev() {
            self.subtract_from_ancestors(k, b);
        }
        self.solve_dl_in_place(b)
    }

    /// `b ← L⁻¹ D⁻¹ b` (nv entries): the second half of `M⁻¹ b`, for a `b` that is already
    /// `L⁻ᵀ` of something (e.g. `M⁻¹ Jᵀ λ = L⁻¹ D⁻¹ (L⁻ᵀ Jᵀ) λ`).
    pub fn solve_dl_in_place(&self, b: &mut [f64]) -> Result<(), DynamicsError> {
        self.check_len(b.len())?;
        for (bk, inv) in b.iter_mut().zip(&self.inverse_d) {
            *bk *= inv;
        }
        // L x = z, root first.
        for k in 0..self.dim() {
            let row = self.start[k]..self.start[k + 1];
            let correction: f64 = self.ancestors[row.clone()]
                .iter()
                .zip(&self.l[row])
                .map(|(&i, l)| l * b[i])
                .sum();
            b[k] -= correction;
        }
        Ok(())
    }

    /// `b ← L⁻ᵀ b` for `b` zero outside `support`: the dofs listed in decreasing order,
    /// closed under ancestors (a union of chains to the root). The result stays on
    /// `support`.
    /// Works on any vector type with `−=` and scaling, e.g. `Vector3` for the three rows of
    /// a contact at once.
    #[inline]
    pub fn solve_lt_on<T>(&self, b: &mut [T], support: &[usize]) -> Result<(), DynamicsError>
    where
        T: Copy + SubAssign + Mul<f64, Output = T>,
    {
        self.check_len(b.len())?;
        for &k in support {
            self.subtract_from_ancestors(k, b);
        }
        Ok(())
    }

    /// `1 / D_k` of every dof.
    pub fn inverse_d(&self) -> &[f64] {
        &self.inverse_d
    }

    /// `(M⁻¹)_jj` for every dof `j` into `out` (nv entries), without inverting `M`
    /// ([`MassLtdl::inverse_diagonal_on`] on every dof).
    pub fn inverse_diagonal(&mut self, out: &mut [f64]) -> Result<(), DynamicsError> {
        self.check_len(out.len())?;
        let mut w = std::mem::take(&mut self.work);
        for (j, o) in out.iter_mut().enumerate() {
            *o = self.inverse_diagonal_entry(j, &mut w);
        }
        self.work = w;
        Ok(())
    }

    /// `(M⁻¹)_jj` for the dofs `j` in `dofs` into `out[j]` (`out` has nv entries, the
    /// others are left as they are), without inverting `M`: with `U = L⁻¹` (unit lower
    /// triangular, the sparsity of `L`), `M⁻¹ = U D⁻¹ Uᵀ` and
    /// `(M⁻¹)_jj = 1 / D_j + Σ_t U[j][a_t]² / D_{a_t}` over the ancestors
    /// `a_0 = λ(j), a_1, …` of `j`. Row `j` of `U` follows from `U L = I` alone, nearest
    /// ancestor first (`U[j][a] = −Σ_{m ∈ (a, j]} U[j][m] L[m][a]`, `U[j][j] = 1`), so each
    /// entry costs one walk of `j`'s chain and no other row of `U` is formed.
    pub fn inverse_diagonal_on(
        &mut self,
        dofs: &[usize],
        out: &mut [f64],
    ) -> Result<(), DynamicsError> {
        self.check_len(out.len())?;
        let nv = self.dim();
        if let Some(&j) = dofs.iter().find(|&&j| j >= nv) {
            return Err(DynamicsError::WrongSize {
                name: "dof index",
                dim: "nv",
                expected: nv,
                got: j,
            });
        }
        let mut w = std::mem::take(&mut self.work);
        for &j in dofs {
            out[j] = self.inverse_diagonal_entry(j, &mut w);
        }
        self.work = w;
        Ok(())
    }

    /// `(M⁻¹)_jj` ([`MassLtdl::inverse_diagonal_on`]), with `w` (at least `j`'s depth long)
    /// holding `−U[j][a_t]` while the chain is walked: `w = L[j][·]`, then for each `t` in
    /// turn `w_t` is final and `w_{t'} −= w_t L[a_t][a_{t'}]` for the ancestors `a_{t'}`
    /// of `a_t`, which are row `a_t`'s own list.
    fn inverse_diagonal_entry(&self, j: usize, w: &mut [f64]) -> f64 {
        let (from, to) = (self.start[j], self.start[j + 1]);
        let w = &mut w[..to - from];
        w.copy_from_slice(&self.l[from..to]);
        let mut sum = 0.0;
        for t in 0..w.len() {
            let a = self.ancestors[from + t];
            let wt = w[t];
            sum += wt * wt * self.inverse_d[a];
            let (_, tail) = w.split_at_mut(t + 1);
            let start_a = self.start[a];
            axpy(-wt, &self.l[start_a..start_a + tail.len()], tail);
        }
        self.inverse_d[j] + sum
    }

    /// `b_i −= L[k][i] b_k` for every ancestor `i` of `k` (one column of `Lᵀ y = b`).
    #[inline]
    fn subtract_from_ancestors<T>(&self, k: usize, b: &mut [T])
    where
        T: Copy + SubAssign + Mul<f64, Output = T>,
    {
        let bk = b[k];
        let row = self.start[k]..self.start[k + 1];
        for (&i, &l) in self.ancestors[row.clone()].iter().zip(&self.l[row]) {
            b[i] -= bk * l;
        }
    }

    fn check_len(&self, len: usize) -> Result<(), DynamicsError> {
        if len != self.dim() {
            return Err(DynamicsError::WrongSize {
                name: "right-hand side",
                dim: "nv",
                expected: self.dim(),
                got: len,
            });
        }
        Ok(())
    }
}

/// `y += alpha x` over equal-length slices, as a plain counted loop: the rows here are a
/// few entries long, where a zipped iterator's set-up costs more than the arithmetic.
#[inline(always)]
fn axpy(alpha: f64, x: &[f64], y: &mut [f64]) {
    let n = y.len().min(x.len());
    let (x, y) = (&x[..n], &mut y[..n]);
    for t in 0..n {
        y[t] += alpha * x[t];
    }
}
