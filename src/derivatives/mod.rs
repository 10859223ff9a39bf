//! Derivatives of a contact solver's answer `λ*(G, g, μ, R)` (docs/derivatives.md).
//!
//! [`differentiate`] linearizes the conditions of the solver's contact model at its
//! answer, contact by contact in the mode the answer shows ([`modes`]), and factors the
//! resulting square system once ([`SolutionDerivative`]); Jacobian-vector products,
//! vector-Jacobian products and the full Jacobians with respect to `g`, `G`'s entries, `μ`
//! and `R` are then solves with that factor. [`FiniteDifferences`] is the reference
//! method behind the same questions: central differences of a solver's answers.
//!
//! Per contact `i` the conditions are written `P_i dλ_i + Q_i dc_i + r_i dμ_i (+ B_i dA_i) = 0`
//! with `dc = (G + R) dλ + (dG + dR) λ + dg`:
//!
//! - take-off: `dλ_i = 0` (the contact leaves the system);
//! - stick: `dc_i = 0`;
//! - slide (NCP, de Saxcé): `dc_N = 0` and `λ_T = −μ λ_N c_T / ‖c_T‖` differentiated
//!   (Le Lidec et al. 2024); CCP: the same tangential law with `c_N = μ ‖c_T‖` (the cone
//!   program's KKT conditions on the cone's boundary); LCP: per tangent axis on a facet
//!   `λ_k = −μ λ_N sign(c_k)`, `dc_k = 0` on the others; RaiSim: `dc_N = 0`, `‖λ_T‖ = μ λ_N`
//!   and `c_T` parallel to `d = λ_T + μ² λ_N G_NT / G_NN` (its eq. 21), whose `B_i` carries
//!   the diagonal block's entries.
//!
//! This module sits above [`crate::solvers`] (it reads the model of a solver's answer
//! and, for the finite differences, calls a solver) and below [`crate::simulation`],
//! whose step derivatives are built on [`SolutionDerivative::jvp_free_velocity`].

pub mod finite;
pub mod implicit;
mod linear;
pub mod modes;

pub use finite::FiniteDifferences;
pub use implicit::{
    differentiate, differentiate_report, ProblemCotangent, ProblemDirection, SolutionDerivative,
};
pub use linear::LinearMethod;
pub use modes::{ContactMode, ModeReport};

use serde::Serialize;
use thiserror::Error;

use crate::problem::ContactModel;
use crate::problem::ProblemError;
use crate::solvers::SolverError;

/// Why a derivative could not be computed.
#[derive(Debug, Error)]
pub enum DerivativeError {
    /// The solver's report says it did not converge: its answer is not a solution.
    #[error("the solve did not converge ({status}): its answer has no derivative")]
    NotConverged {
        /// The solver's status.
        status: String,
    },
    /// The answer does not satisfy the model's conditions to the accepted residual.
    #[error(
        "the answer is not a solution of the {model} model: relative criterion {residual:e} \
         above {limit:e} (DerivativeSettings::max_residual)"
    )]
    NotASolution {
        /// The model.
        model: &'static str,
        /// The answer's relative criterion.
        residual: f64,
        /// The largest accepted.
        limit: f64,
    },
    /// A contact whose conditions have no derivative at the answer.
    #[error("contact {contact}: not differentiable: {reason}")]
    NotDifferentiable {
        /// The contact.
        contact: usize,
        /// Why.
        reason: String,
    },
    /// An input of the wrong size.
    #[error("{field}: expected {expected}, got {got}")]
    Size {
        /// The input.
        field: &'static str,
        /// Its expected size.
        expected: String,
        /// Its size.
        got: String,
    },
    /// A non-finite input or result (never returned as a number).
    #[error("{field}: non-finite value at index {index}")]
    NonFinite {
        /// The input or result.
        field: &'static str,
        /// The first non-finite entry.
        index: usize,
    },
    /// A setting out of range.
    #[error("setting {field} = {value}: {reason}")]
    InvalidSetting {
        /// The setting.
        field: &'static str,
        /// Its value.
        value: f64,
        /// What is wrong.
        reason: &'static str,
    },
    /// A perturbed problem of the finite differences is invalid.
    #[error("finite differences: {0}")]
    Problem(#[from] ProblemError),
    /// The solver of the finite differences refused a problem.
    #[error("finite differences: {0}")]
    Solver(#[from] SolverError),
    /// A solve of the finite differences did not converge.
    #[error("finite differences: the solve at {point} did not converge ({status})")]
    ReferenceNotConverged {
        /// Which perturbed problem.
        point: String,
        /// The solver's status.
        status: String,
    },
}

/// The most Newton steps [`DerivativeSettings::polish_steps`] allows.
pub const MAX_POLISH_STEPS: usize = 20;

/// The tolerances of [`differentiate`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DerivativeSettings {
    /// Relative tolerance of the mode decisions ([`modes`]): the `τ` used is the larger of
    /// this and the answer's relative criterion, since no decision is finer than the
    /// answer. Default `1e-8`.
    pub mode_tolerance: f64,
    /// Largest relative criterion (the ruler's, of the model) of an answer that is
    /// differentiated; above it [`DerivativeError::NotASolution`]. Default `1e-4`.
    pub max_residual: f64,
    /// A pivot (Cholesky's squared, LU's absolute) below this times the largest makes the
    /// system rank-deficient, solved least-norm with the singular values below this times
    /// the largest dropped. Default `1e-10`.
    pub rank_tolerance: f64,
    /// Newton steps on the conditions of the decided modes before differentiating
    /// ("polish", docs/derivatives.md): each is kept only while the answer's relative
    /// criterion decreases, and the derivative is then that of the polished answer
    /// ([`SolutionDerivative::lambda`]). Default 0 (the answer as given).
    pub polish_steps: usize,
}

impl Default for DerivativeSettings {
    fn default() -> Self {
        Self {
            mode_tolerance: 1e-8,
            max_residual: 1e-4,
            rank_tolerance: 1e-10,
            polish_steps: 0,
        }
    }
}

impl DerivativeSettings {
    /// Checks every field's range.
    pub fn validate(&self) -> Result<(), DerivativeError> {
        let invalid = |field, value, reason| {
            Err(DerivativeError::InvalidSetting {
                field,
                value,
                reason,
            })
        };
        if !(self.mode_tolerance.is_finite() && self.mode_tolerance > 0.0) {
            return invalid(
                "mode_tolerance",
                self.mode_tolerance,
                "must be finite and > 0",
            );
        }
        if !(self.max_residual.is_finite() && self.max_residual > 0.0) {
            return invalid("max_residual", self.max_residual, "must be finite and > 0");
        }
        if !(self.rank_tolerance > 0.0 && self.rank_tolerance < 1.0) {
            return invalid("rank_tolerance", self.rank_tolerance, "must lie in ]0, 1[");
        }
        if self.polish_steps > MAX_POLISH_STEPS {
            return invalid(
                "polish_steps",
                self.polish_steps as f64,
                "must be at most 20 (Newton converges in a few)",
            );
        }
        Ok(())
    }
}

/// The model's name as in files.
pub(crate) fn model_name(model: ContactModel) -> &'static str {
    match model {
        ContactModel::Lcp => "lcp",
        ContactModel::Ccp => "ccp",
        ContactModel::Raisim => "raisim",
        ContactModel::Ncp => "ncp",
    }
}

/// `Err(NonFinite)` at the first non-finite entry of `values`.
pub(crate) fn check_finite(field: &'static str, values: &[f64]) -> Result<(), DerivativeError> {
    match values.iter().position(|x| !x.is_finite()) {
        Some(index) => Err(DerivativeError::NonFinite { field, index }),
        None => Ok(()),
    }
}
