//! Every metric of design.md §5 for one `(problem, λ)`, per contact and aggregated: the
//! single ruler applied to every solver's answer.

use nalgebra::{DVector, Matrix3};
use serde::{Deserialize, Serialize};

use super::forces::internal_forces;
use super::residuals::{
    ccp_contact_residual, lcp_contact_residual, mdp_contact_violation, ncp_contact_residual,
    raisim_contact_residual, signorini_contact_violation,
};
use crate::problem::{contact_vector, ContactProblem};

/// Tangential speed (m/s) above which a contact counts as sliding for the MDP metric.
pub const DEFAULT_SLIDING_TOLERANCE: f64 = 1e-6;

/// Violation of the Signorini condition (eq. 8).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SignoriniViolation {
    /// `|λ_N c_N|` (force × velocity).
    pub complementarity: f64,
    /// `max(0, −c_N)` (m/s): normal velocity into the obstacle.
    pub penetration_velocity: f64,
}

impl SignoriniViolation {
    fn max_with(&self, other: &Self) -> Self {
        Self {
            complementarity: self.complementarity.max(other.complementarity),
            penetration_velocity: self.penetration_velocity.max(other.penetration_velocity),
        }
    }
}

/// The metrics of one contact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContactMetrics {
    /// `ε_p = dist_{K_μ}(λ)`.
    pub primal_feasibility: f64,
    /// `ε_d = dist_{K*_μ}(ĉ)`, `ĉ = c + Γ(c, μ)`.
    pub dual_feasibility: f64,
    /// `ε_c = |⟨λ, ĉ⟩|`.
    pub complementarity: f64,
    /// `max(ε_p, ε_d, ε_c)`.
    pub ncp_criterion: f64,
    /// The same without the de Saxcé correction.
    pub ccp_residual: f64,
    /// The same on the pyramid.
    pub lcp_residual: f64,
    /// RaiSim's own residual (problem (20), eq. 21).
    pub raisim_residual: f64,
    /// Signorini violation.
    pub signorini_violation: SignoriniViolation,
    /// `‖c_T‖ > sliding tolerance`.
    pub sliding: bool,
    /// `‖λ_T + μ λ_N c_T/‖c_T‖‖` when sliding, else `None`.
    pub mdp_violation: Option<f64>,
}

/// Every metric of design.md §5 for one answer `λ` to a problem: aggregated (worst contact)
/// and per contact. Serialized under the names of design.md §5.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProblemMetrics {
    /// `max_i ε_p`.
    pub primal_feasibility: f64,
    /// `max_i ε_d`.
    pub dual_feasibility: f64,
    /// `max_i ε_c`.
    pub complementarity: f64,
    /// `max_i max(ε_p, ε_d, ε_c)` (NCP criterion, eq. 14).
    pub ncp_criterion: f64,
    /// CCP residual (eq. 15), worst contact.
    pub ccp_residual: f64,
    /// LCP residual (pyramid), worst contact.
    pub lcp_residual: f64,
    /// RaiSim's own residual, worst contact.
    pub raisim_residual: f64,
    /// Signorini violation, each part's worst contact.
    pub signorini_violation: SignoriniViolation,
    /// MDP violation, worst sliding contact (0 when none slides).
    pub mdp_violation: f64,
    /// Number of sliding contacts.
    pub sliding_contacts: usize,
    /// Norm of the part of `λ` in `null(Jᵀ)`; `None` when the problem has no `J`.
    pub internal_forces: Option<f64>,
    /// Per-contact values.
    pub contacts: Vec<ContactMetrics>,
}

impl ProblemMetrics {
    /// Names of the aggregated metrics as one-number columns (per-step CSV), in the order
    /// of [`ProblemMetrics::column_values`].
    pub const COLUMNS: [&'static str; 11] = [
        "primal_feasibility",
        "dual_feasibility",
        "complementarity",
        "ncp_criterion",
        "ccp_residual",
        "lcp_residual",
        "raisim_residual",
        "signorini_violation",
        "penetration_velocity",
        "mdp_violation",
        "internal_forces",
    ];

    /// The aggregated metrics as numbers, in the order of [`ProblemMetrics::COLUMNS`]:
    /// the Signorini violation split into its two parts, `internal_forces` NaN when the
    /// problem has no `J`.
    pub fn column_values(&self) -> [f64; 11] {
        [
            self.primal_feasibility,
            self.dual_feasibility,
            self.complementarity,
            self.ncp_criterion,
            self.ccp_residual,
            self.lcp_residual,
            self.raisim_residual,
            self.signorini_violation.complementarity,
            self.signorini_violation.penetration_velocity,
            self.mdp_violation,
            self.internal_forces.unwrap_or(f64::NAN),
        ]
    }
}

/// All metrics of `λ` for `problem`, with `c = (G + R) λ + g` and the default sliding
/// tolerance. `λ` must have size `3n` (see [`ContactProblem::check_lambda`]).
pub fn compute_metrics(problem: &ContactProblem, lambda: &DVector<f64>) -> ProblemMetrics {
    compute_metrics_with(problem, lambda, DEFAULT_SLIDING_TOLERANCE)
}

/// [`compute_metrics`] with a chosen sliding tolerance (m/s).
pub fn compute_metrics_with(
    problem: &ContactProblem,
    lambda: &DVector<f64>,
    sliding_tolerance: f64,
) -> ProblemMetrics {
    let c = problem.velocity(lambda);
    let contacts: Vec<ContactMetrics> = (0..problem.num_contacts())
        .map(|i| {
            contact_metrics(
                problem.mu_of(i),
                &problem.diagonal_block(i),
                &contact_vector(lambda, i),
                &contact_vector(&c, i),
                sliding_tolerance,
            )
        })
        .collect();
    aggregate(contacts, internal_forces(problem, lambda))
}

fn contact_metrics(
    mu: f64,
    block: &Matrix3<f64>,
    lambda: &nalgebra::Vector3<f64>,
    c: &nalgebra::Vector3<f64>,
    sliding_tolerance: f64,
) -> ContactMetrics {
    let ncp = ncp_contact_residual(mu, lambda, c);
    let (penetration_velocity, complementarity) = signorini_contact_violation(lambda, c);
    let mdp_violation = mdp_contact_violation(mu, lambda, c, sliding_tolerance);
    ContactMetrics {
        primal_feasibility: ncp.primal_feasibility,
        dual_feasibility: ncp.dual_feasibility,
        complementarity: ncp.complementarity,
        ncp_criterion: ncp.max(),
        ccp_residual: ccp_contact_residual(mu, lambda, c).max(),
        lcp_residual: lcp_contact_residual(mu, lambda, c).max(),
        raisim_residual: raisim_contact_residual(mu, block, lambda, c),
        signorini_violation: SignoriniViolation {
            complementarity,
            penetration_velocity,
        },
        sliding: mdp_violation.is_some(),
        mdp_violation,
    }
}

fn aggregate(contacts: Vec<ContactMetrics>, internal_forces: Option<f64>) -> ProblemMetrics {
    let worst = |f: fn(&ContactMetrics) -> f64| contacts.iter().map(f).fold(0.0, f64::max);
    ProblemMetrics {
        primal_feasibility: worst(|m| m.primal_feasibility),
        dual_feasibility: worst(|m| m.dual_feasibility),
        complementarity: worst(|m| m.complementarity),
        ncp_criterion: worst(|m| m.ncp_criterion),
        ccp_residual: worst(|m| m.ccp_residual),
        lcp_residual: worst(|m| m.lcp_residual),
        raisim_residual: worst(|m| m.raisim_residual),
        signorini_violation: contacts
            .iter()
            .fold(SignoriniViolation::default(), |acc, m| {
                acc.max_with(&m.signorini_violation)
            }),
        mdp_violation: worst(|m| m.mdp_violation.unwrap_or(0.0)),
        sliding_contacts: contacts.iter().filter(|m| m.sliding).count(),
        internal_forces,
        contacts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::generators::single_contact;
    use nalgebra::Vector3;

    #[test]
    fn sliding_contact_metrics_by_hand() {
        // G = I, g = (2, 0, −1), μ = 0.5; λ = (−0.5, 0, 1) gives c = (1.5, 0, 0): the NCP
        // answer (sliding along +x, friction −μ λ_N along x, c_N = 0).
        let Ok(p) = single_contact(0.5, Matrix3::identity(), Vector3::new(2.0, 0.0, -1.0)) else {
            panic!("valid problem");
        };
        let m = compute_metrics(&p, &DVector::from_vec(vec![-0.5, 0.0, 1.0]));
        assert!(m.ncp_criterion < 1e-15);
        assert_eq!(m.sliding_contacts, 1);
        assert!(m.mdp_violation < 1e-15);
        assert_eq!(m.signorini_violation, SignoriniViolation::default());
        // CCP: ⟨λ, c⟩ = −0.75, and c = (1.5, 0, 0) is at distance 1.5/√5 from K_2.
        assert!((m.ccp_residual - 0.75).abs() < 1e-15);
        // G_NT = 0: RaiSim's d equals λ_T, so its residual vanishes too.
        assert!(m.raisim_residual < 1e-15);
        assert_eq!(m.internal_forces, None);
    }

    #[test]
    fn penetrating_answer_violates_signorini() {
        // λ = 0 with g_N = −1: c = g, penetration velocity 1, ε_d = dist of ĉ = (0, 0, −1).
        let Ok(p) = single_contact(0.5, Matrix3::identity(), Vector3::new(0.0, 0.0, -1.0)) else {
            panic!("valid problem");
        };
        let m = compute_metrics(&p, &DVector::zeros(3));
        assert_eq!(m.signorini_violation.penetration_velocity, 1.0);
        assert_eq!(m.signorini_violation.complementarity, 0.0);
        assert!((m.dual_feasibility - 1.0).abs() < 1e-15);
        assert!((m.ncp_criterion - 1.0).abs() < 1e-15);
    }
}
