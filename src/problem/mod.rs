//! The contact problem `(G, g, μ, R)` of design.md §3, the friction cones and problem
//! files ([`io`]: our JSON, FCLIB HDF5, numpy `.npz`).
//!
//! For `n` contacts, `G` is the `3n × 3n` Delassus matrix `J M⁻¹ Jᵀ`, `g` the free contact
//! velocity `J v_f + b`, `μ` the friction coefficients and `R` an optional diagonal
//! compliance. Per contact the order is `[t1, t2, n]`. The contact velocity produced by
//! forces `λ` is `c = (G + R) λ + g`.

pub mod build;
pub mod cones;
pub mod fclib;
pub mod generators;
pub mod io;
pub mod json;
pub mod npz;

use nalgebra::{DMatrix, DVector, Matrix3, Vector3};
use thiserror::Error;

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
    /// `G` is not symmetric.
    #[error("G is not symmetric: |G[{i},{j}] - G[{j},{i}]| = {gap:e}")]
    Asymmetric {
        /// Row.
        i: usize,
        /// Column.
        j: usize,
        /// The asymmetry.
        gap: f64,
    },
    /// `G` has a clearly negative eigenvalue.
    #[error("G is not positive semi-definite: smallest eigenvalue {min_eigenvalue:e}")]
    Indefinite {
        /// The smallest eigenvalue found.
        min_eigenvalue: f64,
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

/// Relative tolerance on the symmetry of `G`.
const SYMMETRY_TOLERANCE: f64 = 1e-9;
/// Relative tolerance on negative eigenvalues of `G`.
const PSD_TOLERANCE: f64 = 1e-9;

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
    pub jacobian: Option<DMatrix<f64>>,
}

/// A validated contact problem.
#[derive(Debug, Clone, PartialEq)]
pub struct ContactProblem {
    delassus: DMatrix<f64>,
    free_velocity: DVector<f64>,
    mu: DVector<f64>,
    compliance: Option<DVector<f64>>,
    jacobian: Option<DMatrix<f64>>,
}

impl ContactProblem {
    /// Builds and validates a problem: sizes, finiteness, symmetry and positive
    /// semi-definiteness of `G`, `μ ≥ 0`, `R ≥ 0`. Zero contacts is a valid empty problem.
    pub fn new(
        delassus: DMatrix<f64>,
        free_velocity: DVector<f64>,
        mu: DVector<f64>,
        compliance: Option<DVector<f64>>,
    ) -> Result<Self, ProblemError> {
        let n = mu.len();
        let dim = 3 * n;
        check_size("mu", n, mu.len())?;
        check_finite_vector("mu", &mu)?;
        if delassus.nrows() != dim || delassus.ncols() != dim {
            return Err(ProblemError::Size {
                field: "G",
                expected: format!("{dim}x{dim} (3 x {n} contacts)"),
                got: format!("{}x{}", delassus.nrows(), delassus.ncols()),
            });
        }
        check_size("g", dim, free_velocity.len())?;
        check_finite_matrix("G", &delassus)?;
        check_finite_vector("g", &free_velocity)?;
        check_nonnegative("mu", &mu)?;
        if let Some(r) = &compliance {
            check_size("R", dim, r.len())?;
            check_finite_vector("R", r)?;
            check_nonnegative("R", r)?;
        }
        check_symmetric(&delassus)?;
        check_positive_semidefinite(&delassus)?;
        Ok(Self {
            delassus,
            free_velocity,
            mu,
            compliance,
            jacobian: None,
        })
    }

    /// The simulator's door: a problem assembled as `G = J M⁻¹ Jᵀ`, symmetric and PSD by
    /// construction, is checked for sizes and finiteness only (no symmetry test, no
    /// eigen-decomposition); files and users go through [`ContactProblem::new`].
    pub fn from_assembly(
        delassus: DMatrix<f64>,
        free_velocity: DVector<f64>,
        mu: DVector<f64>,
        compliance: Option<DVector<f64>>,
    ) -> Result<Self, ProblemError> {
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
        check_finite_vector("mu", &mu)?;
        check_finite_matrix("G", &delassus)?;
        check_finite_vector("g", &free_velocity)?;
        if let Some(r) = &compliance {
            check_size("R", dim, r.len())?;
            check_finite_vector("R", r)?;
        }
        Ok(Self {
            delassus,
            free_velocity,
            mu,
            compliance,
            jacobian: None,
        })
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
        self.jacobian = Some(jacobian);
        Ok(self)
    }

    /// Takes the problem apart, so that a simulator can refill the same buffers at its
    /// next step instead of allocating new ones.
    pub fn into_parts(self) -> ProblemParts {
        ProblemParts {
            delassus: self.delassus,
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

    /// The Delassus matrix `G` (without compliance).
    pub fn delassus(&self) -> &DMatrix<f64> {
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

    /// The contact Jacobian, when the problem was built from a model.
    pub fn jacobian(&self) -> Option<&DMatrix<f64>> {
        self.jacobian.as_ref()
    }

    /// `G + R`, the matrix that maps forces to velocities.
    pub fn effective_delassus(&self) -> DMatrix<f64> {
        let mut m = self.delassus.clone();
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
        let mut block: Matrix3<f64> = self.delassus.fixed_view::<3, 3>(3 * i, 3 * i).into_owned();
        if let Some(r) = &self.compliance {
            for k in 0..3 {
                block[(k, k)] += r[3 * i + k];
            }
        }
        block
    }

    /// Contact velocity `c = (G + R) λ + g`.
    pub fn velocity(&self, lambda: &DVector<f64>) -> DVector<f64> {
        let mut c = &self.delassus * lambda + &self.free_velocity;
        if let Some(r) = &self.compliance {
            c += r.component_mul(lambda);
        }
        c
    }

    /// Checks that a force vector (warm start, reference) has size `3n` and finite entries.
    pub fn check_lambda(&self, lambda: &DVector<f64>) -> Result<(), ProblemError> {
        check_size("lambda", self.dim(), lambda.len())?;
        check_finite_vector("lambda", lambda)
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
    match x.iter().position(|v| !v.is_finite()) {
        Some(i) => Err(ProblemError::NonFinite {
            field,
            index: i.to_string(),
        }),
        None => Ok(()),
    }
}

fn check_finite_matrix(field: &'static str, m: &DMatrix<f64>) -> Result<(), ProblemError> {
    for j in 0..m.ncols() {
        for i in 0..m.nrows() {
            if !m[(i, j)].is_finite() {
                return Err(ProblemError::NonFinite {
                    field,
                    index: format!("({i}, {j})"),
                });
            }
        }
    }
    Ok(())
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

fn check_symmetric(g: &DMatrix<f64>) -> Result<(), ProblemError> {
    let scale = g.amax().max(1.0);
    for i in 0..g.nrows() {
        for j in (i + 1)..g.ncols() {
            let gap = (g[(i, j)] - g[(j, i)]).abs();
            if gap > SYMMETRY_TOLERANCE * scale {
                return Err(ProblemError::Asymmetric { i, j, gap });
            }
        }
    }
    Ok(())
}

fn check_positive_semidefinite(g: &DMatrix<f64>) -> Result<(), ProblemError> {
    if g.nrows() == 0 {
        return Ok(());
    }
    let min_eigenvalue = g.clone().symmetric_eigenvalues().min();
    if min_eigenvalue < -PSD_TOLERANCE * g.amax().max(1.0) {
        Err(ProblemError::Indefinite { min_eigenvalue })
    } else {
        Ok(())
    }
}
