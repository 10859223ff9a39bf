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
//! - `(M⁻¹)_jj = Σ_k (L⁻ᵀ e_j)_k² / D_k` over the chain of `j`, without inverting `M`.
//!
//! No method allocates after [`MassLtdl::new`].

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
    /// `L` below the diagonal (row `k`, ancestor columns), `D` on the diagonal.
    factor: DMatrix<f64>,
    /// `1 / D_k`.
    inverse_d: Vec<f64>,
    /// Scratch vector of dimension nv.
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
        MassLtdl {
            parent,
            factor: DMatrix::zeros(nv, nv),
            inverse_d: vec![0.0; nv],
            work: vec![0.0; nv],
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
        self.factor[(k, k)]
    }

    /// `L[k][i]` for `i` an ancestor of `k` (0 elsewhere below the diagonal).
    pub fn l(&self, k: usize, i: usize) -> f64 {
        if i == k {
            1.0
        } else {
            self.factor[(k, i)]
        }
    }

    /// Factorizes `mass` (nv × nv, e.g. `data.mass_matrix` after [`super::crba()`]); only
    /// the entries between a dof and its ancestors are read (Table 6.3).
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
        self.factor.copy_from(mass);
        let h = &mut self.factor;
        for k in (0..nv).rev() {
            let hkk = h[(k, k)];
            if !(hkk > 0.0 && hkk.is_finite()) {
                return Err(DynamicsError::NotPositiveDefinite("the mass matrix"));
            }
            let mut i = self.parent[k];
            while i != ROOT {
                let a = h[(k, i)] / hkk;
                let mut j = i;
                while j != ROOT {
                    h[(i, j)] -= a * h[(k, j)];
                    j = self.parent[j];
                }
                h[(k, i)] = a;
                i = self.parent[i];
            }
            self.inverse_d[k] = 1.0 / hkk;
        }
        Ok(())
    }

    /// `b ← M⁻¹ b` (nv entries).
    pub fn solve_in_place(&self, b: &mut [f64]) -> Result<(), DynamicsError> {
        self.check_len(b.len())?;
        let nv = self.dim();
        // Lᵀ y = b, leaves first: y_k is final once every descendant has been subtracted.
        for k in (0..nv).rev() {
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
            let mut i = self.parent[k];
            let mut xk = b[k];
            while i != ROOT {
                xk -= self.factor[(k, i)] * b[i];
                i = self.parent[i];
            }
            b[k] = xk;
        }
        Ok(())
    }

    /// `b ← L⁻ᵀ b` for `b` zero outside `support`: the dofs listed in decreasing order,
    /// closed under ancestors (a union of chains to the root). The result stays on
    /// `support`.
    pub fn solve_lt_on(&self, b: &mut [f64], support: &[usize]) -> Result<(), DynamicsError> {
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

    /// `(M⁻¹)_jj` for every dof `j` into `out` (nv entries), from `L⁻ᵀ e_j` on the chain of
    /// `j` (module docs): `M` is never inverted.
    pub fn inverse_diagonal(&mut self, out: &mut [f64]) -> Result<(), DynamicsError> {
        self.check_len(out.len())?;
        let mut work = std::mem::take(&mut self.work);
        for (j, o) in out.iter_mut().enumerate() {
            work[j] = 1.0;
            let mut k = j;
            while k != ROOT {
                self.subtract_from_ancestors(k, &mut work);
                k = self.parent[k];
            }
            let mut sum = 0.0;
            let mut k = j;
            while k != ROOT {
                sum += work[k] * work[k] * self.inverse_d[k];
                work[k] = 0.0;
                k = self.parent[k];
            }
            *o = sum;
        }
        self.work = work;
        Ok(())
    }

    /// `b_i −= L[k][i] b_k` for every ancestor `i` of `k` (one column of `Lᵀ y = b`).
    #[inline]
    fn subtract_from_ancestors(&self, k: usize, b: &mut [f64]) {
        let bk = b[k];
        if bk == 0.0 {
            return;
        }
        let mut i = self.parent[k];
        while i != ROOT {
            b[i] -= self.factor[(k, i)] * bk;
            i = self.parent[i];
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
