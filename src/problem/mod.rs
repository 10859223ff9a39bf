//! The contact problem `(G, g, μ, R)` of design.md §3, the friction cones and problem
//! files ([`io`]: our JSON, FCLIB HDF5, numpy `.npz`).
//!
//! For `n` contacts, `G` is the `3n × 3n` Delassus matrix `J M⁻¹ Jᵀ`, `g` the free contact
//! velocity `J v_f + b`, `μ` the friction coefficients and `R` an optional diagonal
//! compliance. Per contact the order is `[t1, t2, n]`. The contact velocity produced by
//! forces `λ` is `c = (G + R) λ + g`.

pub mod build;
pub mod cones;
pub(crate) mod conic;
pub mod coupling;
pub mod delassus;
pub mod fclib;
mod file;
pub mod generators;
pub mod io;
pub mod json;
pub mod npz;
pub mod params;

pub use coupling::ContactJacobian;
pub use delassus::{
    fill_reducing_positions, Delassus, FactorizedDelassus, OperatorPattern, ShiftedDelassus,
};
pub use params::StepParameters;

use std::sync::OnceLock;

use crate::dynamics::first_non_finite;
use nalgebra::{DMatrix, DVector, Matrix3, Vector3};
use nalgebra_sparse::CsrMatrix;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The contact model a problem is solved under (a solver's own, or the one a metric
/// judges by): which cone and which residual are its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContactModel {
    /// Linear complementarity on the 4-facet pyramid.
    Lcp,
    /// Cone complementarity (Anitescu's relaxation).
    Ccp,
    /// RaiSim's per-contact model (eq. 21).
    Raisim,
    /// Nonlinear complementarity: Signorini, Coulomb and maximum dissipation.
    Ncp,
}

/// Why a contact problem was refused.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ProblemError {
    /// A field has the wrong size.
    #[error("{field}: expected {expected}, got {got}")]
    Size {
        /// The field (`G`, `g`, `mu`, `R`, `lambda`, ...).
        field: &'static str,
        /// What its size should be.
        expected: String,
        /// What it is.
        got: String,
    },
    /// A field holds a NaN or an infinite value.
    #[error("{field}: non-finite value at {index}")]
    NonFinite {
        /// The field.
        field: &'static str,
        /// Where, as `i` or `(i, j)`.
        index: String,
    },
    /// A field holds a value so large that products of two such values overflow.
    #[error("{field}: |{field}[{index}]| = {value:e} exceeds {limit:e} (products would overflow)")]
    Magnitude {
        /// The field.
        field: &'static str,
        /// Where, as `i` or `(i, j)`.
        index: String,
        /// The value.
        value: f64,
        /// The largest magnitude accepted, [`MAGNITUDE_LIMIT`].
        limit: f64,
    },
    /// `G` is far from symmetric (more than round-off of assembly or printing).
    #[error(
        "G is not symmetric: |G[{i},{j}] - G[{j},{i}]| = {gap:e}, {relative:.2e} of max|G| \
         (at most {tolerance:e} is taken as round-off and symmetrized)"
    )]
    Asymmetric {
        /// Row.
        i: usize,
        /// Column.
        j: usize,
        /// The asymmetry.
        gap: f64,
        /// `gap / max|G|`.
        relative: f64,
        /// The relative asymmetry accepted, [`SYMMETRY_TOLERANCE`].
        tolerance: f64,
    },
    /// `G` has a clearly negative eigenvalue.
    #[error(
        "G is not positive semi-definite: smallest eigenvalue {min_eigenvalue:e}, \
         {relative:.2e} of ‖G‖_F (down to -{tolerance:e} is taken as round-off)"
    )]
    Indefinite {
        /// The smallest eigenvalue found (of the symmetrized `G`).
        min_eigenvalue: f64,
        /// `min_eigenvalue / ‖G‖_F`.
        relative: f64,
        /// The relative negative eigenvalue accepted, [`PSD_TOLERANCE`].
        tolerance: f64,
    },
    /// A matrix that must be symmetric positive definite (`M`, a shifted `G`) failed its
    /// Cholesky factorization.
    #[error("{field} is not positive definite: its Cholesky factorization failed ({what})")]
    NotPositiveDefinite {
        /// The matrix.
        field: &'static str,
        /// What the factorization reported.
        what: String,
    },
    /// A friction coefficient or compliance is negative.
    #[error("{field}[{index}] = {value} is negative")]
    Negative {
        /// The field (`mu` or `R`).
        field: &'static str,
        /// Which entry.
        index: usize,
        /// Its value.
        value: f64,
    },
}

/// What [`ContactProblem::new`] changed or tolerated in the data it was given.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "note", rename_all = "snake_case")]
pub enum ValidationNote {
    /// `G` was slightly asymmetric and was replaced by `(G + Gᵀ)/2`.
    Symmetrized {
        /// `max |G_ij − G_ji|` before.
        max_gap: f64,
        /// The same, divided by `max |G_ij|`.
        relative_gap: f64,
    },
    /// The (symmetrized) `G` has small negative eigenvalues, taken as round-off.
    NegativeEigenvalueTolerated {
        /// The smallest eigenvalue.
        min_eigenvalue: f64,
        /// The same, divided by `‖G‖_F`.
        relative: f64,
    },
}

impl std::fmt::Display for ValidationNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ValidationNote::Symmetrized {
                max_gap,
                relative_gap,
            } => write!(
                f,
                "G symmetrized as (G + G^T)/2: max |G_ij - G_ji| was {max_gap:.3e} \
                 ({relative_gap:.2e} of max |G|)"
            ),
            ValidationNote::NegativeEigenvalueTolerated {
                min_eigenvalue,
                relative,
            } => write!(
                f,
                "G has a small negative eigenvalue {min_eigenvalue:.3e} ({relative:.2e} of \
                 ‖G‖_F), taken as round-off"
            ),
        }
    }
}

/// Largest magnitude accepted in any field (`G`, `g`, `R`, `μ`, a warm start): the product
/// of two such numbers, `1e300`, still fits in an `f64`.
pub const MAGNITUDE_LIMIT: f64 = 1e150;
/// Asymmetry of `G`, relative to `max |G_ij|`, taken as round-off and symmetrized; more is
/// refused. An iteratively reduced FCLIB matrix (LMGC, conjugate gradient at rtol 1e-2) is
/// 1.8e-3 asymmetric; a wrong reduction of the same data (M's lower triangle missing) is
/// 0.16 (tests/problem/validation.rs).
pub const SYMMETRY_TOLERANCE: f64 = 1e-2;
/// Negative eigenvalue of `G`, relative to `‖G‖_F`, taken as round-off; more is refused.
/// ContactBench's rank-deficient test matrices printed to 8-9 digits reach -7.2e-9
/// relative to their largest eigenvalue (tests/data/contactbench/).
pub const PSD_TOLERANCE: f64 = 1e-6;

/// The buffers of a [`ContactProblem`], from [`ContactProblem::into_parts`].
#[derive(Debug, Clone, Default)]
pub struct ProblemParts {
    /// `G`.
    pub delassus: DMatrix<f64>,
    /// `g`.
    pub free_velocity: DVector<f64>,
    /// `μ`.
    pub mu: DVector<f64>,
    /// `R`, if any.
    pub compliance: Option<DVector<f64>>,
    /// `J`, if attached.
    pub jacobian: Option<ContactJacobian>,
}

/// A validated contact problem.
#[derive(Debug, Clone, PartialEq)]
pub struct ContactProblem {
    delassus: Delassus,
    dense: DenseCache,
    free_velocity: DVector<f64>,
    mu: DVector<f64>,
    compliance: Option<DVector<f64>>,
    jacobian: Option<ContactJacobian>,
    velocity_scale: f64,
    group_velocity_scales: GroupVelocityScales,
    notes: Vec<ValidationNote>,
}

/// The velocity scale of each contact's group ([`coupling::group_velocity_scales`]),
/// computed on first use and kept (it depends on `G` and `g` only). A cache: two problems
/// compare equal whether or not theirs is filled.
#[derive(Debug, Clone, Default)]
struct GroupVelocityScales(OnceLock<Vec<f64>>);

impl PartialEq for GroupVelocityScales {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// The dense `G` of a factorized operator, formed on first use of
/// [`ContactProblem::delassus`] and kept. A cache: it never takes part in comparisons.
#[derive(Debug, Clone, Default)]
struct DenseCache(OnceLock<DMatrix<f64>>);

impl PartialEq for DenseCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl ContactProblem {
    /// The door for problems from files and other tools: checks sizes, finiteness and
    /// magnitudes (at most [`MAGNITUDE_LIMIT`]) of every field, `μ ≥ 0`, `R ≥ 0`; replaces
    /// a `G` whose asymmetry is at most [`SYMMETRY_TOLERANCE`] of `max |G|` by
    /// `(G + Gᵀ)/2`; accepts negative eigenvalues down to `-PSD_TOLERANCE ‖G‖_F`
    /// (round-off of printed matrices). What it changed or tolerated is in
    /// [`ContactProblem::validation_notes`]. Zero contacts is a valid empty problem.
    pub fn new(
        delassus: DMatrix<f64>,
        free_velocity: DVector<f64>,
        mu: DVector<f64>,
        compliance: Option<DVector<f64>>,
    ) -> Result<Self, ProblemError> {
        check_sizes(&delassus, &free_velocity, &mu, compliance.as_ref())?;
        check_finite_matrix("G", &delassus)?;
        check_finite_vector("g", &free_velocity)?;
        check_finite_vector("mu", &mu)?;
        check_magnitude("G", delassus.iter().copied(), delassus.nrows())?;
        check_magnitude_vector("g", &free_velocity)?;
        check_magnitude_vector("mu", &mu)?;
        check_nonnegative("mu", &mu)?;
        if let Some(r) = &compliance {
            check_finite_vector("R", r)?;
            check_magnitude_vector("R", r)?;
            check_nonnegative("R", r)?;
        }
        let mut notes = Vec::new();
        let delassus = symmetrized(delassus, &mut notes)?;
        check_positive_semidefinite(&delassus, &mut notes)?;
        let mut problem = Self::from_parts(delassus, free_velocity, mu, compliance);
        problem.notes = notes;
        Ok(problem)
    }

    /// The simulator's door, where `G = J M⁻¹ Jᵀ` is symmetric positive semi-definite by
    /// construction: checks sizes, finiteness and signs (`μ ≥ 0`, `R ≥ 0`) only, in time
    /// linear in the data (no eigen-decomposition, no symmetrization).
    pub fn from_assembly(
        delassus: DMatrix<f64>,
        free_velocity: DVector<f64>,
        mu: DVector<f64>,
        compliance: Option<DVector<f64>>,
    ) -> Result<Self, ProblemError> {
        check_sizes(&delassus, &free_velocity, &mu, compliance.as_ref())?;
        check_finite_matrix("G", &delassus)?;
        check_finite_vector("g", &free_velocity)?;
        check_finite_vector("mu", &mu)?;
        check_nonnegative("mu", &mu)?;
        if let Some(r) = &compliance {
            check_finite_vector("R", r)?;
            check_nonnegative("R", r)?;
        }
        Ok(Self::from_parts(delassus, free_velocity, mu, compliance))
    }

    /// A problem on a factorized operator `G = J M⁻¹ Jᵀ` (built from a model or an FCLIB
    /// global problem): checks sizes, finiteness and signs of `g`, `μ`, `R` (the operator
    /// checked its own). `G` is formed only if [`ContactProblem::delassus`] is called.
    pub fn from_operator(
        operator: FactorizedDelassus,
        free_velocity: DVector<f64>,
        mu: DVector<f64>,
        compliance: Option<DVector<f64>>,
    ) -> Result<Self, ProblemError> {
        let dim = 3 * mu.len();
        if operator.dim() != dim {
            return Err(ProblemError::Size {
                field: "J",
                expected: format!("{dim} rows (3 x {} contacts)", mu.len()),
                got: format!("{} rows", operator.dim()),
            });
        }
        check_size("g", dim, free_velocity.len())?;
        if let Some(r) = &compliance {
            check_size("R", dim, r.len())?;
        }
        check_finite_vector("g", &free_velocity)?;
        check_finite_vector("mu", &mu)?;
        check_magnitude_vector("g", &free_velocity)?;
        check_magnitude_vector("mu", &mu)?;
        check_nonnegative("mu", &mu)?;
        if let Some(r) = &compliance {
            check_finite_vector("R", r)?;
            check_magnitude_vector("R", r)?;
            check_nonnegative("R", r)?;
        }
        Ok(Self::with_operator(
            Delassus::Factorized(operator),
            free_velocity,
            mu,
            compliance,
        ))
    }

    fn from_parts(
        delassus: DMatrix<f64>,
        free_velocity: DVector<f64>,
        mu: DVector<f64>,
        compliance: Option<DVector<f64>>,
    ) -> Self {
        Self::with_operator(Delassus::Dense(delassus), free_velocity, mu, compliance)
    }

    fn with_operator(
        delassus: Delassus,
        free_velocity: DVector<f64>,
        mu: DVector<f64>,
        compliance: Option<DVector<f64>>,
    ) -> Self {
        let velocity_scale = free_velocity.amax();
        Self {
            delassus,
            dense: DenseCache::default(),
            free_velocity,
            mu,
            compliance,
            jacobian: None,
            velocity_scale,
            group_velocity_scales: GroupVelocityScales::default(),
            notes: Vec::new(),
        }
    }

    /// What [`ContactProblem::new`] changed or tolerated (empty for a clean problem and
    /// for [`ContactProblem::from_assembly`]).
    pub fn validation_notes(&self) -> &[ValidationNote] {
        &self.notes
    }

    /// `‖g‖∞` (m/s), the problem's largest free velocity.
    pub fn velocity_scale(&self) -> f64 {
        self.velocity_scale
    }

    /// `v_i = max ‖g_j‖∞` over the contacts `j` coupled with contact `i` through `G`
    /// (its group, [`coupling`]): the velocity scale of contact `i` in the relative
    /// criterion (docs/ruler.md). Panics if `i ≥ n`.
    pub fn velocity_scale_of(&self, i: usize) -> f64 {
        self.group_velocity_scales.0.get_or_init(|| {
            coupling::scales_of_groups(&self.delassus.contact_groups(), &self.free_velocity)
        })[i]
    }

    /// The same problem with `extra` added to its diagonal compliance (`3n`, `≥ 0`): how
    /// a solver that softens the problem (ccp-newton) measures its own answers.
    pub fn with_added_compliance(&self, extra: &DVector<f64>) -> Result<Self, ProblemError> {
        check_size("R", self.dim(), extra.len())?;
        check_finite_vector("R", extra)?;
        check_nonnegative("R", extra)?;
        let mut softer = self.clone();
        softer.compliance = Some(match &self.compliance {
            Some(r) => r + extra,
            None => extra.clone(),
        });
        Ok(softer)
    }

    /// Attaches the contact Jacobian `J` (`3n × nv`), used by metrics such as the
    /// internal-force norm.
    pub fn with_jacobian(mut self, jacobian: DMatrix<f64>) -> Result<Self, ProblemError> {
        if jacobian.nrows() != self.dim() {
            return Err(ProblemError::Size {
                field: "J",
                expected: format!("{} rows", self.dim()),
                got: format!("{} rows", jacobian.nrows()),
            });
        }
        check_finite_matrix("J", &jacobian)?;
        self.jacobian = Some(ContactJacobian::Dense(jacobian));
        Ok(self)
    }

    /// Attaches the contact Jacobian `J` (`3n × nv`) by its sparse rows: what a
    /// simulator's large problems carry, so that no `3n × nv` matrix is formed.
    pub fn with_sparse_jacobian(mut self, jacobian: CsrMatrix<f64>) -> Result<Self, ProblemError> {
        if jacobian.nrows() != self.dim() {
            return Err(ProblemError::Size {
                field: "J",
                expected: format!("{} rows", self.dim()),
                got: format!("{} rows", jacobian.nrows()),
            });
        }
        if let Some(k) = first_non_finite(jacobian.values()) {
            return Err(ProblemError::NonFinite {
                field: "J",
                index: format!("stored entry {k}"),
            });
        }
        self.jacobian = Some(ContactJacobian::Sparse(jacobian));
        Ok(self)
    }

    /// Takes the problem apart, so that a simulator can refill the same buffers at its
    /// next step instead of allocating new ones.
    /// A factorized operator gives back an empty `G`.
    pub fn into_parts(self) -> ProblemParts {
        let delassus = match self.delassus {
            Delassus::Dense(g) => g,
            Delassus::Factorized(_) => DMatrix::zeros(0, 0),
        };
        ProblemParts {
            delassus,
            free_velocity: self.free_velocity,
            mu: self.mu,
            compliance: self.compliance,
            jacobian: self.jacobian,
        }
    }

    /// Number of contacts `n`.
    pub fn num_contacts(&self) -> usize {
        self.mu.len()
    }

    /// Dimension `3n` of `λ` and `c`.
    pub fn dim(&self) -> usize {
        3 * self.mu.len()
    }

    /// The Delassus matrix `G` (without compliance); for a factorized operator, formed
    /// on the first call (`3n` operator products, `(3n)²` memory) and kept.
    pub fn delassus(&self) -> &DMatrix<f64> {
        match &self.delassus {
            Delassus::Dense(g) => g,
            Delassus::Factorized(f) => self.dense.0.get_or_init(|| f.to_dense()),
        }
    }

    /// The Delassus operator (dense or factorized), what solvers work with.
    pub fn operator(&self) -> &Delassus {
        &self.delassus
    }

    /// The free velocity `g`.
    pub fn free_velocity(&self) -> &DVector<f64> {
        &self.free_velocity
    }

    /// Friction coefficients, one per contact.
    pub fn mu(&self) -> &DVector<f64> {
        &self.mu
    }

    /// Friction coefficient of contact `i`.
    pub fn mu_of(&self, i: usize) -> f64 {
        self.mu[i]
    }

    /// The diagonal compliance `R`, if any.
    pub fn compliance(&self) -> Option<&DVector<f64>> {
        self.compliance.as_ref()
    }

    /// The contact Jacobian as a matrix, when the problem carries it dense (built from a
    /// file, a generator, or a simulator's problem below the size where its operator is
    /// factorized); see [`ContactProblem::contact_jacobian`] for either form.
    pub fn jacobian(&self) -> Option<&DMatrix<f64>> {
        match &self.jacobian {
            Some(ContactJacobian::Dense(j)) => Some(j),
            _ => None,
        }
    }

    /// The contact Jacobian in the form the problem carries it (dense or by sparse rows),
    /// when the problem was built from a model.
    pub fn contact_jacobian(&self) -> Option<&ContactJacobian> {
        self.jacobian.as_ref()
    }

    /// `G + R`, the matrix that maps forces to velocities.
    pub fn effective_delassus(&self) -> DMatrix<f64> {
        let mut m = self.delassus().clone();
        if let Some(r) = &self.compliance {
            for (i, ri) in r.iter().enumerate() {
                m[(i, i)] += ri;
            }
        }
        m
    }

    /// The `3 × 3` diagonal block of `G + R` for contact `i` (the matrix per-contact
    /// solvers work with). Panics if `i ≥ n`.
    pub fn diagonal_block(&self, i: usize) -> Matrix3<f64> {
        let mut block = self.delassus.diagonal_block(i);
        if let Some(r) = &self.compliance {
            for k in 0..3 {
                block[(k, k)] += r[3 * i + k];
            }
        }
        block
    }

    /// Contact velocity `c = (G + R) λ + g`.
    pub fn velocity(&self, lambda: &DVector<f64>) -> DVector<f64> {
        let mut c = DVector::zeros(self.dim());
        self.velocity_into(lambda, &mut c);
        c
    }

    /// [`ContactProblem::velocity`] into `c` (size `3n`), without allocating and with the
    /// same arithmetic, so that a solver's last iterate and its report agree to the bit.
    pub fn velocity_into(&self, lambda: &DVector<f64>, c: &mut DVector<f64>) {
        match &self.delassus {
            Delassus::Dense(g) => {
                c.copy_from(&self.free_velocity);
                c.gemv(1.0, g, lambda, 1.0);
            }
            Delassus::Factorized(f) => {
                f.apply_into(lambda.as_slice(), c.as_mut_slice());
                *c += &self.free_velocity;
            }
        }
        if let Some(r) = &self.compliance {
            for (ci, (ri, li)) in c.iter_mut().zip(r.iter().zip(lambda.iter())) {
                *ci += ri * li;
            }
        }
    }

    /// Checks that a force vector (warm start, reference) has size `3n`, finite entries
    /// and magnitudes at most [`MAGNITUDE_LIMIT`].
    pub fn check_lambda(&self, lambda: &DVector<f64>) -> Result<(), ProblemError> {
        check_size("lambda", self.dim(), lambda.len())?;
        check_finite_vector("lambda", lambda)?;
        check_magnitude_vector("lambda", lambda)
    }
}

/// The 3-vector of contact `i` in a stacked vector.
pub fn contact_vector(x: &DVector<f64>, i: usize) -> Vector3<f64> {
    Vector3::new(x[3 * i], x[3 * i + 1], x[3 * i + 2])
}

/// Writes the 3-vector of contact `i` into a stacked vector.
pub fn set_contact_vector(x: &mut DVector<f64>, i: usize, v: &Vector3<f64>) {
    x[3 * i] = v.x;
    x[3 * i + 1] = v.y;
    x[3 * i + 2] = v.z;
}

fn check_sizes(
    delassus: &DMatrix<f64>,
    free_velocity: &DVector<f64>,
    mu: &DVector<f64>,
    compliance: Option<&DVector<f64>>,
) -> Result<(), ProblemError> {
    let n = mu.len();
    let dim = 3 * n;
    if delassus.nrows() != dim || delassus.ncols() != dim {
        return Err(ProblemError::Size {
            field: "G",
            expected: format!("{dim}x{dim} (3 x {n} contacts)"),
            got: format!("{}x{}", delassus.nrows(), delassus.ncols()),
        });
    }
    check_size("g", dim, free_velocity.len())?;
    if let Some(r) = compliance {
        check_size("R", dim, r.len())?;
    }
    Ok(())
}

fn check_size(field: &'static str, expected: usize, got: usize) -> Result<(), ProblemError> {
    if expected == got {
        Ok(())
    } else {
        Err(ProblemError::Size {
            field,
            expected: expected.to_string(),
            got: got.to_string(),
        })
    }
}

fn check_finite_vector(field: &'static str, x: &DVector<f64>) -> Result<(), ProblemError> {
    match first_non_finite(x.as_slice()) {
        Some(i) => Err(ProblemError::NonFinite {
            field,
            index: i.to_string(),
        }),
        None => Ok(()),
    }
}

fn check_finite_matrix(field: &'static str, m: &DMatrix<f64>) -> Result<(), ProblemError> {
    // Column-major slice: the same order as `m.iter()`, without the strided iterator.
    match first_non_finite(m.as_slice()) {
        Some(k) => Err(ProblemError::NonFinite {
            field,
            index: format!("({}, {})", k % m.nrows(), k / m.nrows()),
        }),
        None => Ok(()),
    }
}

/// Refuses an entry beyond [`MAGNITUDE_LIMIT`]; `values` in column-major order, `rows` the
/// row count (1 for a vector) to name the entry.
fn check_magnitude(
    field: &'static str,
    values: impl Iterator<Item = f64>,
    rows: usize,
) -> Result<(), ProblemError> {
    for (k, value) in values.enumerate() {
        if value.abs() > MAGNITUDE_LIMIT {
            let index = if rows > 1 {
                format!("{}, {}", k % rows, k / rows)
            } else {
                k.to_string()
            };
            return Err(ProblemError::Magnitude {
                field,
                index,
                value,
                limit: MAGNITUDE_LIMIT,
            });
        }
    }
    Ok(())
}

fn check_magnitude_vector(field: &'static str, x: &DVector<f64>) -> Result<(), ProblemError> {
    check_magnitude(field, x.iter().copied(), 1)
}

fn check_nonnegative(field: &'static str, x: &DVector<f64>) -> Result<(), ProblemError> {
    match x.iter().position(|v| *v < 0.0) {
        Some(index) => Err(ProblemError::Negative {
            field,
            index,
            value: x[index],
        }),
        None => Ok(()),
    }
}

/// `(G + Gᵀ)/2` when `G`'s asymmetry is round-off-sized ([`SYMMETRY_TOLERANCE`] of
/// `max |G|`), noting what was done; an error otherwise.
fn symmetrized(
    g: DMatrix<f64>,
    notes: &mut Vec<ValidationNote>,
) -> Result<DMatrix<f64>, ProblemError> {
    let scale = g.amax();
    let mut worst = (0, 0, 0.0);
    for i in 0..g.nrows() {
        for j in (i + 1)..g.ncols() {
            let gap = (g[(i, j)] - g[(j, i)]).abs();
            if gap > worst.2 {
                worst = (i, j, gap);
            }
        }
    }
    let (i, j, gap) = worst;
    if gap == 0.0 {
        return Ok(g);
    }
    let relative = gap / scale;
    if relative > SYMMETRY_TOLERANCE {
        return Err(ProblemError::Asymmetric {
            i,
            j,
            gap,
            relative,
            tolerance: SYMMETRY_TOLERANCE,
        });
    }
    notes.push(ValidationNote::Symmetrized {
        max_gap: gap,
        relative_gap: relative,
    });
    Ok((&g + g.transpose()) * 0.5)
}

/// Accepts a symmetric `G` whose smallest eigenvalue is at least `-PSD_TOLERANCE ‖G‖_F`.
/// A Cholesky factorization proves definiteness cheaply; only a `G` it fails on (singular
/// or indefinite) pays for the eigenvalues.
fn check_positive_semidefinite(
    g: &DMatrix<f64>,
    notes: &mut Vec<ValidationNote>,
) -> Result<(), ProblemError> {
    if g.nrows() == 0 || g.clone().cholesky().is_some() {
        return Ok(());
    }
    let scale = g.norm();
    let min_eigenvalue = g.clone().symmetric_eigenvalues().min();
    if min_eigenvalue >= 0.0 {
        return Ok(());
    }
    let relative = min_eigenvalue / scale;
    if relative < -PSD_TOLERANCE {
        return Err(ProblemError::Indefinite {
            min_eigenvalue,
            relative,
            tolerance: PSD_TOLERANCE,
        });
    }
    notes.push(ValidationNote::NegativeEigenvalueTolerated {
        min_eigenvalue,
        relative,
    });
    Ok(())
}
