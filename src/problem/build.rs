//! Assembling the contact problem of one time step from a model's quantities
//! (design.md §1, paper eq. 2–4).
//!
//! Given the contact Jacobian `J` (`3n × nv`, rows `[t1, t2, n]` per contact, contact
//! frames), the Cholesky factor `M = L Lᵀ` and the free velocity `v_f`:
//!
//! - `G = J M⁻¹ Jᵀ = (L⁻¹ Jᵀ)ᵀ (L⁻¹ Jᵀ)`, symmetric PSD by construction;
//! - `g = J v_f + b`, `b` zero on tangential rows and, on the normal row, with `φ` the
//!   signed distance: `φ / Δt` for `φ ≥ 0`, `K_b φ / Δt` for `φ < 0` (Baumgarte);
//! - restitution: a contact that was not pushing at the previous step and approaches at
//!   `c_N⁻ < −threshold` gets the target `b_N = e c_N⁻` instead of the gap and Baumgarte
//!   terms, so that it leaves at exactly `e |c_N⁻|`: the bounce starts where the contact
//!   is detected (inside the margin, or after at most one step of penetration), an error
//!   on the height of at most one step of travel, and no energy is added;
//! - compliance: `R = r I` (paper §II).
//!
//! Two implementations: [`assemble`], dense, from a Cholesky factor of `M` (the reference),
//! and [`ContactAssembly`], the simulator's, through the kinematic tree as Pinocchio does:
//! with the LTDL factorization `M = Lᵀ D L` of [`crate::dynamics::MassLtdl`] and `Y = L⁻ᵀ Jᵀ`,
//! `G = Yᵀ D⁻¹ Y`. A contact's Jacobian rows are zero outside the dofs of the chains from
//! its two bodies to the root (its *support*), `L⁻ᵀ` keeps a vector on its support, so each
//! column of `Y` costs a walk up those chains and `G_rs` a sum over the support of `r`'s
//! contact; `M⁻¹ Jᵀ` is never formed: the velocity change `M⁻¹ Jᵀ λ = L⁻¹ D⁻¹ (Y λ)` is one
//! sweep after the solve. [`ContactAssembly`] keeps its buffers between steps (no
//! allocation while the number of contacts stays the same) and hands the problem out
//! through [`ContactProblem::from_assembly`] (sizes and finiteness only). From
//! [`FACTORIZED_FROM_CONTACTS`] contacts on it forms no `G`: it hands out the factorized
//! operator of `Yᵀ` (sparse, on the supports) and `D` ([`ContactProblem::from_operator`],
//! docs/delassus.md), whose cost grows with the contacts and the bodies they touch instead
//! of the square of the contacts.

use std::sync::Arc;

use nalgebra::{DMatrix, DVector, Matrix3, Vector3};
use nalgebra_sparse::{CscMatrix, CsrMatrix};

use super::{
    fill_reducing_positions, ContactJacobian, ContactProblem, FactorizedDelassus, OperatorPattern,
    ProblemError, ProblemParts, StepParameters,
};
use crate::dynamics::{DynamicsError, MassCholesky, MassLtdl};

/// What the bias `b` needs to know about one contact.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactState {
    /// Signed distance `φ` (m), negative when penetrating.
    pub signed_distance: f64,
    /// Normal velocity before the step, `c_N⁻ = (J v)_N` (m/s), negative when approaching.
    pub normal_velocity: f64,
    /// True when the contact carried no normal force at the previous step (or is new).
    pub was_inactive: bool,
    /// Friction coefficient `μ`.
    pub mu: f64,
}

/// A contact problem with the operator that maps its forces back to joint velocities.
#[derive(Debug, Clone)]
pub struct AssembledProblem {
    /// The problem `(G, g, μ, R)` with `J` attached.
    pub problem: ContactProblem,
    /// `M⁻¹ Jᵀ` (`nv × 3n`), so that `v⁺ = v_f + M⁻¹ Jᵀ λ`.
    pub minv_jt: DMatrix<f64>,
}

/// Free velocity `v_f = v + Δt M⁻¹ (τ + J_extᵀ f_ext − nle(q, v))` (paper eq. 2), given the
/// generalized force `f = τ + J_extᵀ f_ext − nle` (`nv`).
pub fn free_velocity(
    mass: &MassCholesky,
    v: &DVector<f64>,
    generalized_force: &DVector<f64>,
    dt: f64,
) -> Result<DVector<f64>, DynamicsError> {
    Ok(v + mass.solve(generalized_force)? * dt)
}

/// `out = Δt M⁻¹ f` through the LTDL factor of `M`, so that `v_f = v + out` (paper eq. 2,
/// as [`free_velocity`]). No allocation.
pub fn free_velocity_change(
    mass: &MassLtdl,
    generalized_force: &DVector<f64>,
    dt: f64,
    out: &mut DVector<f64>,
) -> Result<(), DynamicsError> {
    if out.len() != generalized_force.len() {
        return Err(DynamicsError::WrongSize {
            name: "free velocity",
            dim: "nv",
            expected: generalized_force.len(),
            got: out.len(),
        });
    }
    out.copy_from(generalized_force);
    mass.solve_in_place(out.as_mut_slice())?;
    *out *= dt;
    Ok(())
}

/// Normal bias `b_N` of one contact (design.md §1).
pub fn normal_bias(contact: &ContactState, params: &StepParameters) -> f64 {
    let phi = contact.signed_distance;
    if restitution_applies(contact, params) {
        params.restitution * contact.normal_velocity
    } else if phi >= 0.0 {
        phi / params.dt
    } else {
        params.baumgarte * phi / params.dt
    }
}

/// Restitution acts on a contact that was not pushing and approaches faster than the
/// threshold, when `e > 0`.
pub(crate) fn restitution_applies(contact: &ContactState, params: &StepParameters) -> bool {
    params.restitution > 0.0
        && contact.was_inactive
        && contact.normal_velocity < -params.restitution_threshold
}

/// Assembles `(G, g, μ, R)` and `M⁻¹Jᵀ` (module docs). `jacobian` is `3n × nv`,
/// `free_velocity` is `v_f` (`nv`), `contacts` has `n` entries.
pub fn assemble(
    jacobian: &DMatrix<f64>,
    mass: &MassCholesky,
    free_velocity: &DVector<f64>,
    contacts: &[ContactState],
    params: &StepParameters,
) -> Result<AssembledProblem, ProblemError> {
    let n = contacts.len();
    if mass.dim() != free_velocity.len() {
        return Err(ProblemError::Size {
            field: "M",
            expected: format!("{0}x{0}", free_velocity.len()),
            got: format!("{0}x{0}", mass.dim()),
        });
    }
    if jacobian.nrows() != 3 * n || jacobian.ncols() != free_velocity.len() {
        return Err(ProblemError::Size {
            field: "J",
            expected: format!("{}x{}", 3 * n, free_velocity.len()),
            got: format!("{}x{}", jacobian.nrows(), jacobian.ncols()),
        });
    }
    let (delassus, minv_jt) = delassus_and_minv_jt(jacobian, mass);
    let mut g = jacobian * free_velocity;
    for (i, contact) in contacts.iter().enumerate() {
        g[3 * i + 2] += normal_bias(contact, params);
    }
    let mu = DVector::from_iterator(n, contacts.iter().map(|c| c.mu));
    let compliance =
        (params.compliance > 0.0).then(|| DVector::from_element(3 * n, params.compliance));
    let problem = ContactProblem::from_assembly(delassus, g, mu, compliance)?
        .with_jacobian(jacobian.clone())?;
    Ok(AssembledProblem { problem, minv_jt })
}

/// `G = J M⁻¹ Jᵀ` as `Xᵀ X` with `X = L⁻¹ Jᵀ`, and `M⁻¹ Jᵀ = L⁻ᵀ X` (the factor of a
/// Cholesky decomposition has a positive diagonal, so the triangular solves are defined;
/// sizes are checked by [`assemble`]).
fn delassus_and_minv_jt(
    jacobian: &DMatrix<f64>,
    mass: &MassCholesky,
) -> (DMatrix<f64>, DMatrix<f64>) {
    let l = mass.l();
    let x = l.solve_lower_triangular_unchecked(&jacobian.transpose());
    let delassus = x.transpose() * &x;
    let minv_jt = l.tr_solve_lower_triangular_unchecked(&x);
    (delassus, minv_jt)
}

/// Which form of the Delassus operator [`ContactAssembly::assemble`] hands out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DelassusForm {
    /// Dense below [`FACTORIZED_FROM_CONTACTS`] contacts, factorized from there on.
    #[default]
    Auto,
    /// Always the dense `G = Yᵀ D⁻¹ Y`.
    Dense,
    /// Always the factorized `G = Yᵀ D⁻¹ Y` with `Yᵀ` sparse (module docs).
    Factorized,
}

/// The number of contacts from which [`DelassusForm::Auto`] hands out the factorized
/// operator: the dense `G` costs `(3n)²` entries to form and `(3n)³/3` to factor, the
/// factorized one a sparse Cholesky of the `nv × nv` matrix `D + Y (R + ρI)⁻¹ Yᵀ`. On piles
/// the factorized shifted solve is slower at 16 contacts and faster from about 30 on
/// (docs/delassus.md, `cargo bench --bench delassus`); robots with a few feet stay dense.
pub const FACTORIZED_FROM_CONTACTS: usize = 24;

/// The simulator's workspace for the assembly through the kinematic tree (module docs).
///
/// Per step: [`ContactAssembly::begin`] with the number of contacts; for each contact in
/// order, fill its rows of `J` in [`ContactAssembly::contact_rows_mut`] and declare its
/// support with [`ContactAssembly::push_support`] (which keeps `J` on the support only);
/// then [`ContactAssembly::assemble`]; after the solve,
/// [`ContactAssembly::velocity_change`]; give the problem back with
/// [`ContactAssembly::recycle`] before the next [`ContactAssembly::begin`].
#[derive(Debug, Clone, Default)]
pub struct ContactAssembly {
    nv: usize,
    n: usize,
    /// The next contact's three rows of `J` (`3 × nv`), zero off what the caller writes.
    rows: DMatrix<f64>,
    /// `J` on the supports: the contact's three rows at each dof of `support` (same
    /// layout). `J` is zero elsewhere; no `3n × nv` matrix is kept.
    entries: Vec<Vector3<f64>>,
    /// The dense `J` lent to a dense problem that carries `J` (given back by
    /// [`ContactAssembly::recycle`]).
    dense_jacobian: DMatrix<f64>,
    /// Supports of the contacts, concatenated, each in decreasing dof order.
    support: Vec<usize>,
    /// Contact `i`'s support is `support[offsets[i]..offsets[i + 1]]`.
    offsets: Vec<usize>,
    /// Scratch marks, one per dof.
    marked: Vec<bool>,
    /// The tops of the last support walked this step.
    last_tops: Vec<Option<usize>>,
    /// Whether contact `i`'s support is a single chain from one dof to the root (each
    /// dof's parent is the next one in the list): two such supports share exactly their
    /// common tail, the chain of their lowest common ancestor.
    single_chain: Vec<bool>,
    /// `Y = L⁻ᵀ Jᵀ` on the supports (same layout as `entries`): contact `i`'s three
    /// columns at each dof of its support. `Y` is zero elsewhere, so this is all of it:
    /// its size grows with the contacts, not with contacts × dofs.
    y: Vec<Vector3<f64>>,
    /// `D⁻¹ Y` on the supports (same layout).
    z: Vec<Vector3<f64>>,
    /// Scratch of one contact's three columns of `Y` on all dofs (`nv`), zero between uses.
    column: Vec<Vector3<f64>>,
    /// The fill-reducing order of the dofs of the factorized operator, kept while the
    /// contacts' supports stay the same.
    order: DofOrder,
    /// The pattern of `Yᵀ` in that order, with what the operator derives from it (kept
    /// with the order), and where each of its stored entries is in `y`: entry `e` is
    /// component `source[e] % 3` of `y[source[e] / 3]`.
    operator_pattern: Option<(Arc<OperatorPattern>, Vec<usize>)>,
    /// Buffers of the previous step's problem.
    parts: ProblemParts,
    /// The form of the operator handed out.
    form: DelassusForm,
}

impl ContactAssembly {
    /// A workspace for a model with `nv` dofs.
    pub fn new(nv: usize) -> Self {
        Self {
            nv,
            rows: DMatrix::zeros(3, nv),
            dense_jacobian: DMatrix::zeros(0, nv),
            offsets: vec![0],
            marked: vec![false; nv],
            ..Default::default()
        }
    }

    /// Chooses the form of the operator [`ContactAssembly::assemble`] hands out.
    pub fn set_form(&mut self, form: DelassusForm) {
        self.form = form;
    }

    /// Whether the problem of `n` contacts is handed out factorized.
    fn factorized(&self, n: usize) -> bool {
        match self.form {
            DelassusForm::Auto => n >= FACTORIZED_FROM_CONTACTS,
            DelassusForm::Dense => false,
            DelassusForm::Factorized => true,
        }
    }

    /// Starts a step with `n` contacts: no support declared, the next contact's rows
    /// zeroed.
    pub fn begin(&mut self, n: usize) {
        resize_zeroed(&mut self.rows, 3, self.nv);
        self.n = n;
        self.entries.clear();
        self.support.clear();
        self.offsets.clear();
        self.offsets.push(0);
        self.single_chain.clear();
        self.last_tops.clear();
    }

    /// The next contact's rows of `J` (`3 × nv`, rows `[t1, t2, n]`, zero), for the
    /// caller to fill before [`ContactAssembly::push_support`].
    pub fn contact_rows_mut(&mut self) -> &mut DMatrix<f64> {
        &mut self.rows
    }

    /// Declares the support of the next contact (in order): the dofs of the chains from
    /// each given dof to the root (`None` for a body welded to the world), in the tree of
    /// `factor`, and keeps its rows of `J` there ([`ContactAssembly::contact_rows_mut`],
    /// which must be zero elsewhere; they are zeroed for the next contact).
    pub fn push_support(&mut self, factor: &MassLtdl, tops: &[Option<usize>]) {
        self.push_support_dofs(factor, tops);
        let rows = self.rows.as_mut_slice();
        for &k in &self.support[self.entries.len()..] {
            let column = &mut rows[3 * k..3 * k + 3];
            self.entries
                .push(Vector3::new(column[0], column[1], column[2]));
            column.fill(0.0);
        }
    }

    /// The dofs of [`ContactAssembly::push_support`].
    fn push_support_dofs(&mut self, factor: &MassLtdl, tops: &[Option<usize>]) {
        let start = self.support.len();
        // The corners of a sole, the points of one mesh: the same bodies as the previous
        // contact of this step, hence the same support.
        if self.offsets.len() > 1 && self.last_tops == tops {
            let previous = self.offsets[self.offsets.len() - 2];
            self.support.extend_from_within(previous..start);
            let single = self.single_chain.last().copied().unwrap_or(false);
            self.single_chain.push(single);
            self.offsets.push(self.support.len());
            return;
        }
        self.last_tops.clear();
        self.last_tops.extend_from_slice(tops);
        // A single chain when at most one top adds dofs: the first walks to the root (no
        // dof is marked yet), a later one stops at the first dof already in.
        let mut chains = 0;
        for top in tops {
            let before = self.support.len();
            let mut k = *top;
            while let Some(dof) = k.filter(|&d| d < self.nv) {
                if self.marked[dof] {
                    break;
                }
                self.marked[dof] = true;
                self.support.push(dof);
                k = factor.parent(dof);
            }
            chains += usize::from(self.support.len() > before);
        }
        let chain = &mut self.support[start..];
        if !chain.is_sorted_by(|a, b| a > b) {
            chain.sort_unstable_by(|a, b| b.cmp(a));
        }
        for &dof in chain.iter() {
            self.marked[dof] = false;
        }
        self.single_chain.push(chains <= 1);
        self.offsets.push(self.support.len());
    }

    /// The support of contact `i` (decreasing dofs).
    fn support_of(&self, i: usize) -> &[usize] {
        &self.support[self.offsets[i]..self.offsets[i + 1]]
    }

    /// `J`'s three rows of contact `i` at each dof of its support.
    fn entries_of(&self, i: usize) -> &[Vector3<f64>] {
        &self.entries[self.offsets[i]..self.offsets[i + 1]]
    }

    /// `Y`'s three columns of contact `i` at each dof of its support.
    fn y_of(&self, i: usize) -> &[Vector3<f64>] {
        &self.y[self.offsets[i]..self.offsets[i + 1]]
    }

    /// `D⁻¹ Y`'s three columns of contact `i` at each dof of its support.
    fn z_of(&self, i: usize) -> &[Vector3<f64>] {
        &self.z[self.offsets[i]..self.offsets[i + 1]]
    }

    /// `(J x)_i`, the three rows of contact `i` (on its support).
    pub fn contact_velocity(&self, i: usize, x: &DVector<f64>) -> Vector3<f64> {
        self.support_of(i)
            .iter()
            .zip(self.entries_of(i))
            .fold(Vector3::zeros(), |sum, (&k, column)| sum + column * x[k])
    }

    /// Assembles `(G, g, μ, R)` (module docs) from the factor of `M` and `v_f`; the
    /// problem carries `J` when `attach_jacobian` (for the internal-force metric).
    pub fn assemble(
        &mut self,
        factor: &MassLtdl,
        free_velocity: &DVector<f64>,
        contacts: &[ContactState],
        params: &StepParameters,
        attach_jacobian: bool,
    ) -> Result<ContactProblem, ProblemError> {
        let (n, nv) = (self.n, self.nv);
        if contacts.len() != n || self.offsets.len() != n + 1 {
            return Err(ProblemError::Size {
                field: "contacts",
                expected: format!("{n} states and supports"),
                got: format!(
                    "{} states, {} supports",
                    contacts.len(),
                    self.offsets.len() - 1
                ),
            });
        }
        if free_velocity.len() != nv || factor.dim() != nv {
            return Err(ProblemError::Size {
                field: "v_f",
                expected: nv.to_string(),
                got: format!(
                    "{} (factor of dimension {})",
                    free_velocity.len(),
                    factor.dim()
                ),
            });
        }
        let factorized = self.factorized(n);
        self.fill_y(factor)?;
        let operator = if factorized {
            Some(self.factorized_operator(factor)?)
        } else {
            None
        };
        let mut g = std::mem::take(&mut self.parts.free_velocity);
        resize_vector(&mut g, 3 * n);
        for (i, contact) in contacts.iter().enumerate() {
            let c = self.contact_velocity(i, free_velocity);
            g[3 * i] = c.x;
            g[3 * i + 1] = c.y;
            g[3 * i + 2] = c.z + normal_bias(contact, params);
        }
        let mut mu = std::mem::take(&mut self.parts.mu);
        resize_vector(&mut mu, n);
        for (m, c) in mu.iter_mut().zip(contacts) {
            *m = c.mu;
        }
        let compliance = (params.compliance > 0.0).then(|| {
            let mut r = self.parts.compliance.take().unwrap_or_default();
            resize_vector(&mut r, 3 * n);
            r.fill(params.compliance);
            r
        });
        let problem = match operator {
            Some(operator) => ContactProblem::from_operator(operator, g, mu, compliance)?,
            None => {
                let mut delassus = std::mem::take(&mut self.parts.delassus);
                if delassus.shape() != (3 * n, 3 * n) {
                    // Every entry is written by fill_delassus.
                    delassus = DMatrix::zeros(3 * n, 3 * n);
                }
                self.fill_delassus(&mut delassus);
                ContactProblem::from_assembly(delassus, g, mu, compliance)?
            }
        };
        match (attach_jacobian, factorized) {
            (false, _) => Ok(problem),
            (true, false) => problem.with_jacobian(self.dense_jacobian()),
            (true, true) => problem.with_sparse_jacobian(self.sparse_jacobian()?),
        }
    }

    /// `J` (`3n × nv`) as a matrix, in the buffer kept between steps.
    fn dense_jacobian(&mut self) -> DMatrix<f64> {
        let mut j = std::mem::take(&mut self.dense_jacobian);
        resize_zeroed(&mut j, 3 * self.n, self.nv);
        for i in 0..self.n {
            for (&k, column) in self.support_of(i).iter().zip(self.entries_of(i)) {
                j.fixed_view_mut::<3, 1>(3 * i, k).copy_from(column);
            }
        }
        j
    }

    /// `J` (`3n × nv`) by its rows on the supports (`O(n · depth)`, no `3n × nv` matrix).
    fn sparse_jacobian(&self) -> Result<CsrMatrix<f64>, ProblemError> {
        self.rows_on_supports("J", None, &self.entries)
    }

    /// A `3n × nv` matrix whose contact `i`'s three rows are nonzero on its support only,
    /// `values` (laid out as `entries`) giving the three rows at each dof of the
    /// supports; dof `k` in column `columns[k]` (`k` when `None`).
    fn rows_on_supports(
        &self,
        field: &'static str,
        columns: Option<&[usize]>,
        values: &[Vector3<f64>],
    ) -> Result<CsrMatrix<f64>, ProblemError> {
        let (offsets, indices, source) = self.pattern_on_supports(columns);
        let values = source.iter().map(|&s| values[s / 3][s % 3]).collect();
        CsrMatrix::try_from_csr_data(3 * self.n, self.nv, offsets, indices, values).map_err(
            |what| ProblemError::Size {
                field,
                expected: "contact rows on their supports".into(),
                got: what.to_string(),
            },
        )
    }

    /// The CSR pattern (row offsets, column indices) of [`ContactAssembly::rows_on_supports`]
    /// and where each stored entry is among the supports' three rows: entry `e` is row
    /// `source[e] % 3` at support entry `source[e] / 3`.
    fn pattern_on_supports(
        &self,
        columns: Option<&[usize]>,
    ) -> (Vec<usize>, Vec<usize>, Vec<usize>) {
        let n = self.n;
        let mut offsets = Vec::with_capacity(3 * n + 1);
        offsets.push(0);
        let mut indices = Vec::with_capacity(3 * self.support.len());
        let mut source = Vec::with_capacity(3 * self.support.len());
        // (column, position in the support) of one contact, in increasing columns.
        let mut row: Vec<(usize, usize)> = Vec::new();
        for i in 0..n {
            // Supports are in decreasing dof order, CSR rows in increasing order.
            let support = self.support_of(i);
            row.clear();
            match columns {
                None => row.extend(support.iter().enumerate().rev().map(|(p, &k)| (k, p))),
                Some(columns) => {
                    row.extend(support.iter().enumerate().map(|(p, &k)| (columns[k], p)));
                    row.sort_unstable();
                }
            }
            for r in [0, 1, 2] {
                for &(column, position) in &row {
                    indices.push(column);
                    source.push(3 * (self.offsets[i] + position) + r);
                }
                offsets.push(indices.len());
            }
        }
        (offsets, indices, source)
    }

    /// The factorized operator `G = Yᵀ D⁻¹ Y`: `Yᵀ` (`3n × nv`) sparse with contact `i`'s
    /// rows on its support, and the diagonal `D` of `M = Lᵀ D L` in the place of the mass
    /// matrix of [`FactorizedDelassus`] (module docs of [`super::delassus`]).
    /// Its dofs are in a fill-reducing order (for the factor of the shifted matrix
    /// `D + Y (R + ρI)⁻¹ Yᵀ` of the ADMMs), computed when the supports change and kept
    /// otherwise, with the pattern of `Yᵀ` and the shifted matrix's symbolic factor.
    /// `O(nnz(Y))` when the order is kept.
    fn factorized_operator(
        &mut self,
        factor: &MassLtdl,
    ) -> Result<FactorizedDelassus, ProblemError> {
        let nv = self.nv;
        if !self.order.holds(&self.support, &self.offsets) {
            let y_t = self.rows_on_supports("Y", None, &self.y)?;
            let d = CscMatrix::try_from_csc_data(
                nv,
                nv,
                (0..=nv).collect(),
                (0..nv).collect(),
                (0..nv).map(|k| factor.d(k)).collect(),
            )
            .map_err(|what| ProblemError::Size {
                field: "D",
                expected: format!("a {nv}x{nv} diagonal"),
                got: what.to_string(),
            })?;
            let position = fill_reducing_positions(&y_t, &d).unwrap_or_else(|| (0..nv).collect());
            self.order.keep(&self.support, &self.offsets, position);
            self.operator_pattern = None;
        }
        let position = &self.order.position;
        if self.operator_pattern.is_none() {
            // Row r of Yᵀ for each contact's three rows, dofs in the kept order.
            let (offsets, indices, source) = self.pattern_on_supports(Some(position));
            let pattern = nalgebra_sparse::pattern::SparsityPattern::try_from_offsets_and_indices(
                3 * self.n,
                nv,
                offsets,
                indices,
            )
            .map_err(|what| ProblemError::Size {
                field: "Y",
                expected: "contact rows on their supports".into(),
                got: what.to_string(),
            })?;
            self.operator_pattern = Some((Arc::new(OperatorPattern::of(&pattern)), source));
        }
        let Some((pattern, source)) = &self.operator_pattern else {
            unreachable!("the pattern was just formed")
        };
        let values = source.iter().map(|&s| self.y[s / 3][s % 3]).collect();
        let mut d = vec![0.0; nv];
        for (k, &place) in position.iter().enumerate() {
            d[place] = factor.d(k);
        }
        FactorizedDelassus::with_diagonal_mass_on(pattern, values, &d)
    }

    /// `Y = L⁻ᵀ Jᵀ` and `D⁻¹ Y` on each contact's support, the contact's three columns at
    /// once (`L⁻ᵀ` keeps a vector on its support: the walk up the chains touches no
    /// other dof of the scratch column).
    fn fill_y(&mut self, factor: &MassLtdl) -> Result<(), ProblemError> {
        let nv = self.nv;
        if self.column.len() != nv {
            self.column = vec![Vector3::zeros(); nv];
        }
        self.y.clear();
        self.z.clear();
        let inverse_d = factor.inverse_d();
        for i in 0..self.n {
            let (from, to) = (self.offsets[i], self.offsets[i + 1]);
            let support = &self.support[from..to];
            for (&k, column) in support.iter().zip(&self.entries[from..to]) {
                self.column[k] = *column;
            }
            factor
                .solve_lt_on(&mut self.column, support)
                .map_err(|e| ProblemError::Size {
                    field: "M",
                    expected: format!("a factor of dimension {nv}"),
                    got: e.to_string(),
                })?;
            for &k in support {
                let y = std::mem::take(&mut self.column[k]);
                self.y.push(y);
                self.z.push(y * inverse_d[k]);
            }
        }
        Ok(())
    }

    /// `G_ab = Σ_k Y_ka Y_kbᵀ / D_k` (3 × 3 blocks) over the dofs both supports hold
    /// (`Y_ka` is zero off the support of `a`); blocks `a ≤ b` computed, the others
    /// mirrored, so that `G` is exactly symmetric.
    fn fill_delassus(&self, delassus: &mut DMatrix<f64>) {
        let n = self.n;
        let rows = 3 * n;
        let g = delassus.as_mut_slice();
        for a in 0..n {
            let (support_a, ya) = (self.support_of(a), self.y_of(a));
            for b in a..n {
                let (support_b, zb) = (self.support_of(b), self.z_of(b));
                let mut block = Matrix3::zeros();
                if self.single_chain[a] && self.single_chain[b] {
                    // Two chains share exactly their common tail.
                    let shared = shared_tail(support_a, support_b);
                    let (pa, pb) = (support_a.len() - shared, support_b.len() - shared);
                    for (y, z) in ya[pa..].iter().zip(&zb[pb..]) {
                        block += y * z.transpose();
                    }
                } else {
                    // The dofs of both decreasing lists, in the order of `a`'s.
                    let mut q = 0;
                    for (&k, y) in support_a.iter().zip(ya) {
                        while q < support_b.len() && support_b[q] > k {
                            q += 1;
                        }
                        if q < support_b.len() && support_b[q] == k {
                            block += y * zb[q].transpose();
                        }
                    }
                }
                for r in 0..3 {
                    for c in 0..3 {
                        let value = if a == b && c < r {
                            block[(c, r)]
                        } else {
                            block[(r, c)]
                        };
                        // Column-major: (row, col) at col · rows + row.
                        g[(3 * b + c) * rows + 3 * a + r] = value;
                        g[(3 * a + r) * rows + 3 * b + c] = value;
                    }
                }
            }
        }
    }

    /// `out = M⁻¹ Jᵀ λ = L⁻¹ D⁻¹ (Y λ)` (`nv`), so that `v⁺ = v_f + out`.
    pub fn velocity_change(
        &self,
        factor: &MassLtdl,
        lambda: &DVector<f64>,
        out: &mut DVector<f64>,
    ) -> Result<(), DynamicsError> {
        let nv = self.nv;
        if lambda.len() != 3 * self.n || out.len() != nv {
            return Err(DynamicsError::WrongSize {
                name: "lambda",
                dim: "3 x contacts",
                expected: 3 * self.n,
                got: lambda.len(),
            });
        }
        out.fill(0.0);
        for i in 0..self.n {
            let l = Vector3::new(lambda[3 * i], lambda[3 * i + 1], lambda[3 * i + 2]);
            for (&k, y) in self.support_of(i).iter().zip(self.y_of(i)) {
                out[k] += y.dot(&l);
            }
        }
        factor.solve_dl_in_place(out.as_mut_slice())
    }

    /// Takes back the buffers of a problem this workspace assembled (and `J`, if the
    /// problem carried it).
    pub fn recycle(&mut self, problem: ContactProblem) {
        let mut parts = problem.into_parts();
        if let Some(ContactJacobian::Dense(jacobian)) = parts.jacobian.take() {
            self.dense_jacobian = jacobian;
        }
        self.parts = parts;
    }
}

/// A fill-reducing order of the dofs (`position[k]`, the place of dof `k`) with the
/// supports it was computed for: the pattern of `D + Yᵀ Y` depends on them only.
#[derive(Debug, Clone, Default)]
struct DofOrder {
    support: Vec<usize>,
    offsets: Vec<usize>,
    position: Vec<usize>,
}

impl DofOrder {
    /// Whether the order was computed for these supports.
    fn holds(&self, support: &[usize], offsets: &[usize]) -> bool {
        !self.position.is_empty() && self.support == support && self.offsets == offsets
    }

    fn keep(&mut self, support: &[usize], offsets: &[usize], position: Vec<usize>) {
        self.support.clear();
        self.support.extend_from_slice(support);
        self.offsets.clear();
        self.offsets.extend_from_slice(offsets);
        self.position = position;
    }
}

/// The number of dofs two single-chain supports (decreasing lists) share: their common
/// tail, the chain from their lowest common ancestor to the root. Equal tops mean the
/// same chain.
#[inline]
fn shared_tail(a: &[usize], b: &[usize]) -> usize {
    if a.first() == b.first() {
        return a.len();
    }
    a.iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

/// Gives `m` the shape `rows × cols` (reallocating only when the shape changes), zeroed.
fn resize_zeroed(m: &mut DMatrix<f64>, rows: usize, cols: usize) {
    if m.shape() == (rows, cols) {
        m.as_mut_slice().fill(0.0);
    } else {
        *m = DMatrix::zeros(rows, cols);
    }
}

/// Gives `v` the length `len` (reallocating only when it changes).
fn resize_vector(v: &mut DVector<f64>, len: usize) {
    if v.len() != len {
        *v = DVector::zeros(len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point_mass(m: f64) -> MassCholesky {
        MassCholesky::new(&(DMatrix::identity(3, 3) * m)).expect("SPD")
    }

    fn resting(phi: f64) -> ContactState {
        ContactState {
            signed_distance: phi,
            normal_velocity: 0.0,
            was_inactive: false,
            mu: 0.5,
        }
    }

    #[test]
    fn point_mass_delassus_is_inverse_mass() {
        let j = DMatrix::identity(3, 3);
        let vf = DVector::from_vec(vec![1.0, 0.0, -0.2]);
        let out = assemble(
            &j,
            &point_mass(2.0),
            &vf,
            &[resting(0.0)],
            &StepParameters::default(),
        )
        .expect("valid");
        assert!((out.problem.delassus() - DMatrix::identity(3, 3) * 0.5).amax() < 1e-14);
        assert!((out.problem.free_velocity() - &vf).amax() < 1e-14);
        assert!((out.minv_jt - DMatrix::identity(3, 3) * 0.5).amax() < 1e-14);
    }

    #[test]
    fn gap_and_baumgarte_bias() {
        let params = StepParameters {
            dt: 0.01,
            baumgarte: 0.5,
            ..Default::default()
        };
        assert!((normal_bias(&resting(1e-3), &params) - 0.1).abs() < 1e-12);
        assert!((normal_bias(&resting(-1e-3), &params) + 0.05).abs() < 1e-12);
    }

    #[test]
    fn restitution_only_on_inactive_approaching_contacts() {
        let params = StepParameters {
            restitution: 0.8,
            ..Default::default()
        };
        let approaching = ContactState {
            signed_distance: 5e-4,
            normal_velocity: -2.0,
            was_inactive: true,
            mu: 0.5,
        };
        assert!((normal_bias(&approaching, &params) + 1.6).abs() < 1e-12);
        let pushing = ContactState {
            was_inactive: false,
            ..approaching
        };
        assert!((normal_bias(&pushing, &params) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn compliance_is_diagonal() {
        let params = StepParameters {
            compliance: 1e-3,
            ..Default::default()
        };
        let j = DMatrix::identity(3, 3);
        let vf = DVector::zeros(3);
        let out = assemble(&j, &point_mass(1.0), &vf, &[resting(0.0)], &params).expect("valid");
        let r = out.problem.compliance().expect("compliance");
        assert!(r.iter().all(|x| (*x - 1e-3).abs() < 1e-15));
    }

    #[test]
    fn wrong_jacobian_size_is_refused() {
        let j = DMatrix::identity(6, 3);
        let vf = DVector::zeros(3);
        let err = assemble(
            &j,
            &point_mass(1.0),
            &vf,
            &[resting(0.0)],
            &StepParameters::default(),
        );
        assert!(matches!(err, Err(ProblemError::Size { field: "J", .. })));
    }
}
