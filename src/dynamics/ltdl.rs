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
//! factorization updates rows with plain slice loops). The rows are loaded either from a
//! dense `M` ([`MassLtdl::factorize`]) or straight from the CRBA
//! ([`super::factorized_mass_and_bias`]). No method allocates after [`MassLtdl::new`].

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
    /// True when dofs `0..TRUNK` are a chain from the root (`λ(k) = k − 1`) and every
    /// other dof descends from dof `TRUNK − 1` (a free flyer's six dofs): then every row
    /// `k ≥ TRUNK` ends with the same `TRUNK` ancestors `TRUNK − 1, …, 0`, and the loops
    /// over a row split into its own short part and a fixed-size tail ([`Trunk`]).
    trunk: bool,
}

/// Length of the common chain at the root that [`MassLtdl`] handles with fixed-size loops.
const TRUNK: usize = 6;

/// The fixed-size tail of a row (module docs of [`MassLtdl::factorize`]).
type Trunk = [f64; TRUNK];

/// The trunk's rows of `L` (row `i < TRUNK`'s `i` entries first in `rows[i]`) and their
/// pivots `D_i` or `1 / D_i`, held apart while the rows below are eliminated
/// ([`MassLtdl::eliminate`]) or read for every entry of `(M⁻¹)_jj`.
struct TrunkBlock {
    rows: [Trunk; TRUNK],
    d: Trunk,
}

impl TrunkBlock {
    /// The trunk's rows as stored in `ltdl`, and `d`'s first `TRUNK` entries.
    #[inline]
    fn load(ltdl: &MassLtdl, d: &[f64]) -> TrunkBlock {
        let mut block = TrunkBlock {
            rows: [[0.0; TRUNK]; TRUNK],
            d: [0.0; TRUNK],
        };
        for (i, row) in block.rows.iter_mut().enumerate() {
            let start = ltdl.start[i];
            row[..i].copy_from_slice(&ltdl.l[start..start + i]);
        }
        block.d.copy_from_slice(&d[..TRUNK]);
        block
    }

    /// Back into `ltdl`'s storage.
    #[inline]
    fn store(&self, ltdl: &mut MassLtdl) {
        for i in 0..TRUNK {
            let start = ltdl.start[i];
            ltdl.l[start..start + i].copy_from_slice(&self.rows[i][..i]);
            ltdl.d[i] = self.d[i];
        }
    }
}

/// `D_k` once every descendant of `k` is eliminated, if positive (and finite).
#[inline]
fn pivot(hkk: f64) -> Result<f64, DynamicsError> {
    // Both comparisons fail on NaN (`is_finite` costs a classification here).
    if hkk > 0.0 && hkk < f64::INFINITY {
        Ok(hkk)
    } else {
        Err(DynamicsError::NotPositiveDefinite("the mass matrix"))
    }
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
        let trunk = nv > TRUNK
            && (0..TRUNK).all(|k| parent[k] == if k == 0 { ROOT } else { k - 1 })
            && (TRUNK..nv).all(|k| {
                let row = &ancestors[start[k]..start[k + 1]];
                row.len() >= TRUNK && row[row.len() - TRUNK..].iter().rev().copied().eq(0..TRUNK)
            });
        MassLtdl {
            trunk,
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
        // M[k][i] at i·nv + k (column-major), read through the slice: the same entries
        // as before (the lower triangle), one bounds check each.
        let m = mass.as_slice();
        for k in 0..nv {
            self.d[k] = m[k * nv + k];
            let (from, to) = (self.start[k], self.start[k + 1]);
            for (l, &i) in self.l[from..to].iter_mut().zip(&self.ancestors[from..to]) {
                *l = m[i * nv + k];
            }
        }
        self.eliminate()
    }

    /// Where [`MassLtdl::eliminate`] reads row `k` of `M`'s lower triangle: `M[k][k]`, and
    /// `M[k][a]` for the ancestors `a = λ(k), λ²(k), …` in that order (e.g.
    /// [`super::crba::crba_into_factor`], which fills every row before eliminating).
    #[inline]
    pub(crate) fn row_mut(&mut self, k: usize) -> (&mut f64, &mut [f64]) {
        (
            &mut self.d[k],
            &mut self.l[self.start[k]..self.start[k + 1]],
        )
    }

    /// The elimination of [`MassLtdl::factorize`] on the rows loaded in place.
    pub(crate) fn eliminate(&mut self) -> Result<(), DynamicsError> {
        let mut general = self.dim();
        if self.trunk {
            // Every row k ≥ TRUNK updates the trunk's rows and pivots, which are kept in
            // locals until their own turn (the same operations in the same order).
            let mut trunk = TrunkBlock::load(self, &self.d);
            for k in (TRUNK..self.dim()).rev() {
                let hkk = pivot(self.d[k])?;
                self.eliminate_with_trunk(k, hkk, &mut trunk);
                self.inverse_d[k] = 1.0 / hkk;
            }
            trunk.store(self);
            general = TRUNK;
        }
        for k in (0..general).rev() {
            let hkk = pivot(self.d[k])?;
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

    /// One step of [`MassLtdl::eliminate`] for a row `k ≥ TRUNK` when [`MassLtdl::trunk`]:
    /// the same operations in the same order (the same result to the bit), with each
    /// update of an ancestor row split into its own part and its last `TRUNK` entries (a
    /// fixed-size loop reading row `k`'s tail from a local copy), and the elimination into
    /// the trunk's rows (`trunk`) unrolled.
    #[inline]
    fn eliminate_with_trunk(&mut self, k: usize, hkk: f64, trunk: &mut TrunkBlock) {
        let (from, to) = (self.start[k], self.start[k + 1]);
        let own = to - from - TRUNK;
        let (before, rows_k) = self.l.split_at_mut(from);
        let (row_k, tail_k) = rows_k[..to - from].split_at_mut(own);
        let tail_k: &mut Trunk = tail_k
            .try_into()
            .expect("a trunk row ends with TRUNK entries");
        let mut tail = *tail_k;
        for m in 0..own {
            let i = self.ancestors[from + m];
            let a = row_k[m] / hkk;
            self.d[i] -= a * row_k[m];
            // Row i (≥ TRUNK) is k's entries after m: its own part, then the trunk.
            let rest = own - m - 1;
            let start_i = self.start[i];
            let (row_i, tail_i) = before[start_i..start_i + rest + TRUNK].split_at_mut(rest);
            axpy(-a, &row_k[m + 1..], row_i);
            let tail_i: &mut Trunk = tail_i.try_into().expect("TRUNK entries");
            for t in 0..TRUNK {
                tail_i[t] += -a * tail[t];
            }
            row_k[m] = a;
        }
        // The trunk's rows: row i < TRUNK holds i − 1, …, 0.
        for m in 0..TRUNK {
            let i = TRUNK - 1 - m;
            let a = tail[m] / hkk;
            trunk.d[i] -= a * tail[m];
            for t in 0..i {
                trunk.rows[i][t] += -a * tail[m + 1 + t];
            }
            tail[m] = a;
        }
        *tail_k = tail;
    }

    /// `b ← M⁻¹ b` (nv entries).
    pub fn solve_in_place(&self, b: &mut [f64]) -> Result<(), DynamicsError> {
        self.check_len(b.len())?;
        // Lᵀ y = b, leaves first: y_k is final once every descendant has been subtracted.
        if self.trunk {
            self.solve_lt_with_trunk(b, (0..self.dim()).rev());
        } else {
            for k in (0..self.dim()).rev() {
                self.subtract_from_ancestors(k, b);
            }
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
        if self.trunk {
            // The same sums in the same order, a row's last TRUNK terms (the trunk's dofs,
            // b's first entries) in a fixed-size loop.
            let (trunk, rest) = b.split_at_mut(TRUNK);
            let trunk: &mut Trunk = trunk.try_into().expect("TRUNK entries");
            for k in 1..TRUNK {
                let row = &self.l[self.start[k]..self.start[k] + k];
                let correction: f64 = row
                    .iter()
                    .enumerate()
                    .map(|(t, l)| l * trunk[k - 1 - t])
                    .sum();
                trunk[k] -= correction;
            }
            for k in TRUNK..self.dim() {
                let (from, to) = (self.start[k], self.start[k + 1]);
                let own = to - from - TRUNK;
                let mut correction: f64 = self.ancestors[from..from + own]
                    .iter()
                    .zip(&self.l[from..from + own])
                    .map(|(&i, l)| l * rest[i - TRUNK])
                    .sum();
                let tail: &Trunk = self.l[to - TRUNK..to].try_into().expect("TRUNK entries");
                for t in 0..TRUNK {
                    correction += tail[t] * trunk[TRUNK - 1 - t];
                }
                rest[k - TRUNK] -= correction;
            }
            return Ok(());
        }
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
        if !self.trunk {
            for &k in support {
                self.subtract_from_ancestors(k, b);
            }
            return Ok(());
        }
        self.solve_lt_with_trunk(b, support.iter().copied());
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
        let trunk = self.inverse_trunk();
        for (j, o) in out.iter_mut().enumerate() {
            *o = self.inverse_diagonal_entry(j, &mut w, trunk.as_ref());
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
        let trunk = self.inverse_trunk();
        for &j in dofs {
            out[j] = self.inverse_diagonal_entry(j, &mut w, trunk.as_ref());
        }
        self.work = w;
        Ok(())
    }

    /// The trunk's rows and `1 / D_i` when [`MassLtdl::trunk`], read once for every entry
    /// of [`MassLtdl::inverse_diagonal_on`].
    fn inverse_trunk(&self) -> Option<TrunkBlock> {
        self.trunk.then(|| TrunkBlock::load(self, &self.inverse_d))
    }

    /// `(M⁻¹)_jj` ([`MassLtdl::inverse_diagonal_on`]), with `w` (at least `j`'s depth long)
    /// holding `−U[j][a_t]` while the chain is walked: `w = L[j][·]`, then for each `t` in
    /// turn `w_t` is final and `w_{t'} −= w_t L[a_t][a_{t'}]` for the ancestors `a_{t'}`
    /// of `a_t`, which are row `a_t`'s own list. `trunk` from [`MassLtdl::inverse_trunk`].
    fn inverse_diagonal_entry(&self, j: usize, w: &mut [f64], trunk: Option<&TrunkBlock>) -> f64 {
        if let Some(trunk) = trunk.filter(|_| j >= TRUNK) {
            return self.inverse_diagonal_entry_with_trunk(j, w, trunk);
        }
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

    /// [`MassLtdl::inverse_diagonal_entry`] for `j ≥ TRUNK` when [`MassLtdl::trunk`]: the
    /// same operations in the same order, with the trunk's part of `w` a fixed-size array
    /// and the trunk's rows and `1 / D_i` read from `trunk`.
    #[inline]
    fn inverse_diagonal_entry_with_trunk(
        &self,
        j: usize,
        w: &mut [f64],
        trunk: &TrunkBlock,
    ) -> f64 {
        let (from, to) = (self.start[j], self.start[j + 1]);
        let own = to - from - TRUNK;
        let w = &mut w[..own];
        w.copy_from_slice(&self.l[from..from + own]);
        let mut tail: Trunk = self.l[to - TRUNK..to].try_into().expect("TRUNK entries");
        let mut sum = 0.0;
        for t in 0..own {
            let a = self.ancestors[from + t];
            let wt = w[t];
            sum += wt * wt * self.inverse_d[a];
            let rest = own - t - 1;
            let start_a = self.start[a];
            let (row_a, tail_a) = self.l[start_a..start_a + rest + TRUNK].split_at(rest);
            axpy(-wt, row_a, &mut w[t + 1..]);
            let tail_a: &Trunk = tail_a.try_into().expect("TRUNK entries");
            for s in 0..TRUNK {
                tail[s] += -wt * tail_a[s];
            }
        }
        for m in 0..TRUNK {
            let a = TRUNK - 1 - m;
            let wt = tail[m];
            sum += wt * wt * trunk.d[a];
            for s in 0..a {
                tail[m + 1 + s] += -wt * trunk.rows[a][s];
            }
        }
        self.inverse_d[j] + sum
    }

    /// `b ← L⁻ᵀ b` over `dofs` (decreasing, closed under ancestors) when
    /// [`MassLtdl::trunk`]: the same updates in the same order as
    /// [`MassLtdl::subtract_from_ancestors`] on each dof, the trunk's in fixed-size loops.
    #[inline]
    fn solve_lt_with_trunk<T, I>(&self, b: &mut [T], dofs: I)
    where
        T: Copy + SubAssign + Mul<f64, Output = T>,
        I: IntoIterator<Item = usize>,
    {
        // The same updates in the same order, the trunk's in fixed-size loops: `b`'s
        // first TRUNK entries are the trunk's dofs, and row k ≥ TRUNK ends with them.
        let (trunk, rest) = b.split_at_mut(TRUNK);
        let trunk: &mut [T; TRUNK] = trunk.try_into().expect("TRUNK entries");
        let mut dofs = dofs.into_iter();
        for k in dofs.by_ref() {
            if k < TRUNK {
                let bk = trunk[k];
                let row = &self.l[self.start[k]..self.start[k] + k];
                for t in 0..k {
                    trunk[k - 1 - t] -= bk * row[t];
                }
                break;
            }
            let bk = rest[k - TRUNK];
            let (from, to) = (self.start[k], self.start[k + 1]);
            let own = to - from - TRUNK;
            for (&i, &l) in self.ancestors[from..from + own]
                .iter()
                .zip(&self.l[from..from + own])
            {
                rest[i - TRUNK] -= bk * l;
            }
            let tail: &Trunk = self.l[to - TRUNK..to].try_into().expect("TRUNK entries");
            for t in 0..TRUNK {
                trunk[TRUNK - 1 - t] -= bk * tail[t];
            }
        }
        for k in dofs {
            let bk = trunk[k];
            let row = &self.l[self.start[k]..self.start[k] + k];
            for t in 0..k {
                trunk[k - 1 - t] -= bk * row[t];
            }
        }
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

#[cfg(test)]
mod tests {
    use nalgebra::Vector3;

    use super::*;
    use crate::model::robots::load_robot;

    /// `M = Lᵀ D L` of a factor with entries on every ancestor of every dof of `tree`'s
    /// dof tree: the sparsity of a mass matrix, with scales spread over a few decades.
    fn tree_mass_matrix(tree: &MassLtdl) -> DMatrix<f64> {
        let nv = tree.dim();
        let mut l = DMatrix::identity(nv, nv);
        let mut d = DMatrix::zeros(nv, nv);
        for k in 0..nv {
            d[(k, k)] = 10f64.powf(((k * 7919 % 13) as f64 - 6.0) / 3.0);
            let mut ancestor = tree.parent(k);
            while let Some(i) = ancestor {
                l[(k, i)] = ((k * 31 + i * 17) as f64 * 0.37).sin();
                ancestor = tree.parent(i);
            }
        }
        l.transpose() * d * l
    }

    /// The trunk's fixed-size loops are the general loops reordered nowhere: factor,
    /// `(M⁻¹)_jj`, `L⁻ᵀ` on a chain and `L⁻¹ D⁻¹` equal to the bit on the dof trees of
    /// Solo-12 and Talos.
    #[test]
    fn the_trunk_path_is_the_general_path_to_the_bit() {
        for name in ["solo12", "talos"] {
            let model = load_robot(name).expect("robot");
            let nv = model.nv();
            let mut fast = MassLtdl::new(&model);
            let mass = tree_mass_matrix(&fast);
            assert!(fast.trunk, "{name}: a free flyer is a trunk");
            let mut slow = fast.clone();
            slow.trunk = false;
            fast.factorize(&mass).expect("spd");
            slow.factorize(&mass).expect("spd");
            assert_eq!(fast.l, slow.l, "{name}: L");
            assert_eq!(fast.d, slow.d, "{name}: D");
            let dofs: Vec<usize> = (0..nv).collect();
            let (mut a, mut b) = (vec![0.0; nv], vec![0.0; nv]);
            fast.inverse_diagonal_on(&dofs, &mut a).expect("sizes");
            slow.inverse_diagonal_on(&dofs, &mut b).expect("sizes");
            assert_eq!(a, b, "{name}: (M⁻¹)_jj");
            let x: Vec<f64> = (0..nv).map(|k| (k as f64 * 0.37).sin()).collect();
            let (mut a, mut b) = (x.clone(), x.clone());
            fast.solve_dl_in_place(&mut a).expect("sizes");
            slow.solve_dl_in_place(&mut b).expect("sizes");
            assert_eq!(a, b, "{name}: L⁻¹ D⁻¹ x");
            let (mut a, mut b) = (x.clone(), x.clone());
            fast.solve_in_place(&mut a).expect("sizes");
            slow.solve_in_place(&mut b).expect("sizes");
            assert_eq!(a, b, "{name}: M⁻¹ x");
            // L⁻ᵀ on the chain of the last dof.
            let mut support = vec![nv - 1];
            while let Some(p) = fast.parent(*support.last().expect("nonempty")) {
                support.push(p);
            }
            let mut y = vec![Vector3::zeros(); nv];
            for &k in &support {
                y[k] = Vector3::new(x[k], -x[k], 2.0 * x[k] + 1.0);
            }
            let (mut a, mut b) = (y.clone(), y);
            fast.solve_lt_on(&mut a, &support).expect("sizes");
            slow.solve_lt_on(&mut b, &support).expect("sizes");
            assert_eq!(a, b, "{name}: L⁻ᵀ y");
        }
    }
}
