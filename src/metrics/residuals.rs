//! Complementarity residuals of the NCP, CCP and LCP (design.md §5).
//!
//! Per contact `i`, with `c = (G + R) λ + g` and a model-dependent corrected velocity `ĉ`:
//! primal feasibility `ε_p = dist_K(λ)`, dual feasibility `ε_d = dist_{K*}(ĉ)`,
//! complementarity `ε_c = |⟨λ, ĉ⟩|`, and the criterion `max_i max(ε_p, ε_d, ε_c)`.
//!
//! - NCP: ice-cream cone, `ĉ = c + Γ(c, μ)` (de Saxcé correction, eq. 13).
//! - CCP: ice-cream cone, `ĉ = c` (eq. 16).
//! - LCP: pyramid cone, `ĉ = c + (0, 0, μ‖c_T‖₁)` (the facet multipliers' share of the
//!   normal velocity, eq. 11).

use nalgebra::{DVector, Vector3};

use crate::problem::cones;
use crate::problem::{contact_vector, ContactProblem};

/// The three parts of a per-contact complementarity residual.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ContactResidual {
    /// `ε_p`, distance of `λ` to the primal cone.
    pub primal_feasibility: f64,
    /// `ε_d`, distance of the corrected velocity to the dual cone.
    pub dual_feasibility: f64,
    /// `ε_c`, `|⟨λ, ĉ⟩|`.
    pub complementarity: f64,
}

impl ContactResidual {
    /// `max(ε_p, ε_d, ε_c)`.
    pub fn max(&self) -> f64 {
        self.primal_feasibility
            .max(self.dual_feasibility)
            .max(self.complementarity)
    }

    /// Component-wise maximum of two residuals.
    pub fn max_with(&self, other: &Self) -> Self {
        Self {
            primal_feasibility: self.primal_feasibility.max(other.primal_feasibility),
            dual_feasibility: self.dual_feasibility.max(other.dual_feasibility),
            complementarity: self.complementarity.max(other.complementarity),
        }
    }
}

/// NCP residual of one contact: ice-cream cone, de Saxcé-corrected velocity.
pub fn ncp_contact_residual(mu: f64, lambda: &Vector3<f64>, c: &Vector3<f64>) -> ContactResidual {
    let c_hat = c + cones::de_saxce_correction(mu, c);
    ContactResidual {
        primal_feasibility: cones::distance_ice_cream(mu, lambda),
        dual_feasibility: cones::distance_dual_ice_cream(mu, &c_hat),
        complementarity: lambda.dot(&c_hat).abs(),
    }
}

/// CCP residual of one contact: ice-cream cone, uncorrected velocity.
pub fn ccp_contact_residual(mu: f64, lambda: &Vector3<f64>, c: &Vector3<f64>) -> ContactResidual {
    ContactResidual {
        primal_feasibility: cones::distance_ice_cream(mu, lambda),
        dual_feasibility: cones::distance_dual_ice_cream(mu, c),
        complementarity: lambda.dot(c).abs(),
    }
}

/// LCP residual of one contact: pyramid cone, velocity corrected by `μ‖c_T‖₁`.
pub fn lcp_contact_residual(mu: f64, lambda: &Vector3<f64>, c: &Vector3<f64>) -> ContactResidual {
    let c_hat = c + cones::pyramid_correction(mu, c);
    ContactResidual {
        primal_feasibility: cones::distance_pyramid(mu, lambda),
        dual_feasibility: cones::distance_dual_pyramid(mu, &c_hat),
        complementarity: lambda.dot(&c_hat).abs(),
    }
}

/// Worst per-contact residual over all contacts, given `λ` and `c = (G + R)λ + g`.
fn worst_residual(
    problem: &ContactProblem,
    lambda: &DVector<f64>,
    c: &DVector<f64>,
    per_contact: fn(f64, &Vector3<f64>, &Vector3<f64>) -> ContactResidual,
) -> ContactResidual {
    (0..problem.num_contacts()).fold(ContactResidual::default(), |acc, i| {
        let r = per_contact(
            problem.mu_of(i),
            &contact_vector(lambda, i),
            &contact_vector(c, i),
        );
        acc.max_with(&r)
    })
}

/// NCP criterion `max_i max(ε_p, ε_d, ε_c)` with the de Saxcé correction.
pub fn ncp_criterion(problem: &ContactProblem, lambda: &DVector<f64>, c: &DVector<f64>) -> f64 {
    worst_residual(problem, lambda, c, ncp_contact_residual).max()
}

/// CCP residual `max_i max(ε_p, ε_d, ε_c)` without correction.
pub fn ccp_residual(problem: &ContactProblem, lambda: &DVector<f64>, c: &DVector<f64>) -> f64 {
    worst_residual(problem, lambda, c, ccp_contact_residual).max()
}

/// LCP residual `max_i max(ε_p, ε_d, ε_c)` on the pyramid.
pub fn lcp_residual(problem: &ContactProblem, lambda: &DVector<f64>, c: &DVector<f64>) -> f64 {
    worst_residual(problem, lambda, c, lcp_contact_residual).max()
}

/// Component-wise worst NCP residual (for reporting `ε_p`, `ε_d`, `ε_c` separately).
pub fn ncp_residual_parts(
    problem: &ContactProblem,
    lambda: &DVector<f64>,
    c: &DVector<f64>,
) -> ContactResidual {
    worst_residual(problem, lambda, c, ncp_contact_residual)
}
