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
//! - RaiSim: the KKT conditions of the per-contact problem (20), whose sliding branch is
//!   eq. (21); see [`raisim_contact_residual`].
//!
//! Physical checks of the NCP's three laws are here too: the Signorini condition (8) and
//! the maximum dissipation principle (11).

use nalgebra::{DVector, Matrix3, Vector3};

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

/// RaiSim's own residual for one contact: the optimality conditions of the per-contact
/// problem (20), `min ½ λᵀ G_ii λ + g̃ᵀ λ` over `K_μ ∩ {c_N = 0}`, with its take-off branch.
///
/// `block` is the contact's `3 × 3` diagonal block of `G + R`. The worst of:
/// - `dist_K(λ)` (Coulomb);
/// - `max(0, −c_N)` and `|λ_N c_N|` (Signorini, eq. 8, which RaiSim enforces);
/// - eq. (21): a sliding contact's tangential velocity opposes
///   `d = λ_T + μ² λ_N G_NT / G_NN` rather than `λ_T`: `‖ ‖d‖ c_T + ‖c_T‖ d ‖` (force ×
///   velocity like `ε_c`; zero when they are opposed or either vanishes, and continuous
///   as `λ → 0`);
/// - a sliding contact sits on the cone's boundary: `‖c_T‖ · max(0, μ λ_N − ‖λ_T‖)`.
///
/// At a sticking contact (`c = 0`) or a take-off (`λ = 0`, `c_N ≥ 0`) it is zero.
pub fn raisim_contact_residual(
    mu: f64,
    block: &Matrix3<f64>,
    lambda: &Vector3<f64>,
    c: &Vector3<f64>,
) -> f64 {
    let primal = cones::distance_ice_cream(mu, lambda);
    let (penetration, normal_complementarity) = signorini_contact_violation(lambda, c);
    let c_t = c.xy();
    let slip = c_t.norm();
    let d = raisim_friction_direction(mu, block, lambda);
    let opposition = (c_t * d.norm() + d * slip).norm();
    let on_boundary = slip * (mu * lambda.z - lambda.xy().norm()).max(0.0);
    primal
        .max(penetration)
        .max(normal_complementarity)
        .max(opposition)
        .max(on_boundary)
}

/// The vector `d = λ_T + μ² λ_N G_NT / G_NN` of eq. (21): at a RaiSim sliding solution the
/// tangential velocity is `c_T = −κ d`, `κ ≥ 0` (MDP would require `d = λ_T`).
pub fn raisim_friction_direction(
    mu: f64,
    block: &Matrix3<f64>,
    lambda: &Vector3<f64>,
) -> nalgebra::Vector2<f64> {
    let g_nn = block[(2, 2)];
    let shift = if g_nn > 0.0 {
        mu * mu * lambda.z / g_nn
    } else {
        0.0
    };
    nalgebra::Vector2::new(
        lambda.x + shift * block[(2, 0)],
        lambda.y + shift * block[(2, 1)],
    )
}

/// RaiSim's residual `max_i` [`raisim_contact_residual`], with the diagonal blocks of
/// `G + R`.
pub fn raisim_residual(problem: &ContactProblem, lambda: &DVector<f64>, c: &DVector<f64>) -> f64 {
    (0..problem.num_contacts()).fold(0.0, |acc: f64, i| {
        acc.max(raisim_contact_residual(
            problem.mu_of(i),
            &problem.diagonal_block(i),
            &contact_vector(lambda, i),
            &contact_vector(c, i),
        ))
    })
}

/// Signorini violation of one contact (eq. 8): `(max(0, −c_N), |λ_N c_N|)`, the
/// penetration velocity and the normal complementarity.
pub fn signorini_contact_violation(lambda: &Vector3<f64>, c: &Vector3<f64>) -> (f64, f64) {
    ((-c.z).max(0.0), (lambda.z * c.z).abs())
}

/// Maximum-dissipation violation of one contact (eq. 11), `‖λ_T + μ λ_N c_T / ‖c_T‖‖`,
/// defined only for a sliding contact (`‖c_T‖ > sliding_tolerance`); `None` otherwise.
pub fn mdp_contact_violation(
    mu: f64,
    lambda: &Vector3<f64>,
    c: &Vector3<f64>,
    sliding_tolerance: f64,
) -> Option<f64> {
    let c_t = c.xy();
    let slip = c_t.norm();
    if slip > sliding_tolerance {
        Some((lambda.xy() + c_t * (mu * lambda.z / slip)).norm())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ncp_residual_of_a_sliding_contact_obeying_mdp_is_zero() {
        // c = (1, 0, 0), λ = (−μ, 0, 1): ĉ = (1, 0, μ), ⟨λ, ĉ⟩ = −μ + μ = 0.
        let mu = 0.5;
        let r = ncp_contact_residual(
            mu,
            &Vector3::new(-mu, 0.0, 1.0),
            &Vector3::new(1.0, 0.0, 0.0),
        );
        assert!(r.max() < 1e-15);
        // The CCP sees ⟨λ, c⟩ = −μ and c outside K*: both = 0.5 here.
        let r = ccp_contact_residual(
            mu,
            &Vector3::new(-mu, 0.0, 1.0),
            &Vector3::new(1.0, 0.0, 0.0),
        );
        assert!((r.complementarity - 0.5).abs() < 1e-15);
        // dist of (1, 0, 0) to K_{1/μ} = K_2: projection onto the ray through (2, 0, 1) is
        // s (2, 0, 1) with s = 2/5, distance ‖(0.2, 0, −0.4)‖ = 1/√5.
        assert!((r.dual_feasibility - 1.0 / 5f64.sqrt()).abs() < 1e-15);
    }

    #[test]
    fn lcp_residual_uses_the_pyramid() {
        // λ = (μ, μ, 1) is a corner of the pyramid but outside the ice-cream cone.
        let mu = 0.4;
        let lambda = Vector3::new(mu, mu, 1.0);
        let c = Vector3::new(-1.0, -1.0, 0.0);
        // ĉ = (−1, −1, 2μ): in the dual pyramid (μ(1 + 1) = 2μ ≤ 2μ), ⟨λ, ĉ⟩ = −2μ + 2μ = 0.
        assert!(lcp_contact_residual(mu, &lambda, &c).max() < 1e-15);
        let ncp = ncp_contact_residual(mu, &lambda, &c);
        // dist of (μ, μ, 1) to K_μ: ‖λ_T‖ = μ√2, projection s = (μ·μ√2 + 1)/(μ² + 1).
        let t = mu * 2f64.sqrt();
        let s = (mu * t + 1.0) / (mu * mu + 1.0);
        let expected = ((t - mu * s).powi(2) + (1.0 - s).powi(2)).sqrt();
        assert!((ncp.primal_feasibility - expected).abs() < 1e-15);
    }

    #[test]
    fn signorini_and_mdp_by_hand() {
        let lambda = Vector3::new(0.3, -0.4, 2.0);
        let c = Vector3::new(3.0, 4.0, -0.5);
        assert_eq!(signorini_contact_violation(&lambda, &c), (0.5, 1.0));
        // μ = 0.25: λ_T + μ λ_N c_T/‖c_T‖ = (0.3, −0.4) + 0.5 (0.6, 0.8) = (0.6, 0).
        let v = mdp_contact_violation(0.25, &lambda, &c, 1e-9);
        assert!(v.is_some_and(|v| (v - 0.6).abs() < 1e-15));
        assert_eq!(
            mdp_contact_violation(0.25, &lambda, &Vector3::zeros(), 1e-9),
            None
        );
    }

    #[test]
    fn raisim_residual_accepts_eq_21_and_rejects_mdp() {
        // G_NT = (a, 0): d = λ_T + μ² λ_N (a, 0) / 1.
        let (mu, a) = (0.5, 0.5);
        let block = Matrix3::new(1.0, 0.0, a, 0.0, 1.0, 0.0, a, 0.0, 1.0);
        let lambda = Vector3::new(0.0, mu, 1.0);
        let d = raisim_friction_direction(mu, &block, &lambda);
        assert!((d - nalgebra::Vector2::new(0.125, 0.5)).norm() < 1e-15);
        let raisim_c = Vector3::new(-d.x, -d.y, 0.0);
        assert!(raisim_contact_residual(mu, &block, &lambda, &raisim_c) < 1e-15);
        // The MDP velocity (0, −1, 0) is not RaiSim's: ‖ ‖d‖ (0, −1) + 1 · d ‖.
        let mdp_c = Vector3::new(0.0, -1.0, 0.0);
        let expected = (nalgebra::Vector2::new(0.0, -d.norm()) + d).norm();
        let r = raisim_contact_residual(mu, &block, &lambda, &mdp_c);
        assert!((r - expected).abs() < 1e-15 && r > 0.1);
    }
}
