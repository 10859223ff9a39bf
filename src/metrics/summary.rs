//! Every metric of design.md §5 for one `(problem, λ)`, per contact and aggregated: the
//! single ruler applied to every solver's answer. Units: impulses N·s, velocities m/s;
//! the relative criterion is dimensionless (docs/ruler.md). A NaN or an infinity in `λ`
//! makes every aggregated residual NaN (never 0).

use nalgebra::{DVector, Matrix3};
use serde::{Deserialize, Serialize};

use super::forces::{internal_force_split, internal_force_split_at, internal_forces};
use super::residuals::{
    ccp_residual_with_primal, lcp_contact_residual, max_nan, mdp_contact_violation,
    ncp_contact_residual, raisim_contact_residual, signorini_contact_violation, Scales,
};
use crate::problem::{contact_vector, ContactModel, ContactProblem};

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
            complementarity: max_nan(self.complementarity, other.complementarity),
            penetration_velocity: max_nan(self.penetration_velocity, other.penetration_velocity),
        }
    }
}

/// The metrics of one contact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContactMetrics {
    /// `ε_p = dist_{K_μ}(λ)` (N·s).
    pub primal_feasibility: f64,
    /// `ε_d = dist_{K*_μ}(ĉ)`, `ĉ = c + Γ(c, μ)` (m/s).
    pub dual_feasibility: f64,
    /// `ε_c = |⟨λ, ĉ⟩|` (N·s·m/s).
    pub complementarity: f64,
    /// The relative NCP criterion of this contact, on its own scales (docs/ruler.md).
    pub relative_criterion: f64,
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
    /// `max_i ε_p` (N·s).
    pub primal_feasibility: f64,
    /// `max_i ε_d` (m/s).
    pub dual_feasibility: f64,
    /// `max_i ε_c` (N·s·m/s).
    pub complementarity: f64,
    /// The relative NCP criterion `r` (dimensionless, docs/ruler.md).
    pub relative_criterion: f64,
    /// `max_i max(ε_p, ε_d, ε_c)` (NCP criterion, eq. 14; mixed units).
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
    /// Norm of the part of `λ` in `null(Jᵀ)` (N·s); `None` when the problem has no `J`.
    pub internal_forces: Option<f64>,
    /// The least internal force among answers of the solver's model with the same `Jᵀλ`
    /// (N·s); `None` without `J`, without a model, or when its SOCP was not solved.
    pub internal_forces_required: Option<f64>,
    /// The distance from `λ` to that answer (N·s), what the solver injected.
    pub internal_forces_spurious: Option<f64>,
    /// Per-contact values.
    pub contacts: Vec<ContactMetrics>,
}

impl ProblemMetrics {
    /// Names of the aggregated metrics as one-number columns (per-step CSV), in the order
    /// of [`ProblemMetrics::column_values`].
    pub const COLUMNS: [&'static str; 14] = [
        "primal_feasibility",
        "dual_feasibility",
        "complementarity",
        "relative_criterion",
        "ncp_criterion",
        "ccp_residual",
        "lcp_residual",
        "raisim_residual",
        "signorini_violation",
        "penetration_velocity",
        "mdp_violation",
        "internal_forces",
        "internal_forces_required",
        "internal_forces_spurious",
    ];

    /// The aggregated metrics as numbers, in the order of [`ProblemMetrics::COLUMNS`]:
    /// the Signorini violation split into its two parts, the internal forces NaN when
    /// they were not computed.
    pub fn column_values(&self) -> [f64; 14] {
        [
            self.primal_feasibility,
            self.dual_feasibility,
            self.complementarity,
            self.relative_criterion,
            self.ncp_criterion,
            self.ccp_residual,
            self.lcp_residual,
            self.raisim_residual,
            self.signorini_violation.complementarity,
            self.signorini_violation.penetration_velocity,
            self.mdp_violation,
            self.internal_forces.unwrap_or(f64::NAN),
            self.internal_forces_required.unwrap_or(f64::NAN),
            self.internal_forces_spurious.unwrap_or(f64::NAN),
        ]
    }

    /// [`ProblemMetrics::column_values`] with `None` where a metric was not computed (the
    /// internal forces without `J`, their split without a model or a solved SOCP): an
    /// empty cell in a file, not a number.
    pub fn column_options(&self) -> [Option<f64>; 14] {
        let values = self.column_values();
        let absent = [
            ("internal_forces", self.internal_forces.is_none()),
            (
                "internal_forces_required",
                self.internal_forces_required.is_none(),
            ),
            (
                "internal_forces_spurious",
                self.internal_forces_spurious.is_none(),
            ),
        ];
        std::array::from_fn(|k| {
            let name = Self::COLUMNS[k];
            let missing = absent.iter().any(|(n, a)| *n == name && *a);
            (!missing).then_some(values[k])
        })
    }

    /// Adds the split of the internal forces into required and spurious parts for an
    /// answer of `model` (a small SOCP: [`internal_force_split`]); a no-op without `J`
    /// or where the split's premise fails ([`split_applies`]).
    pub fn with_internal_force_split(
        mut self,
        problem: &ContactProblem,
        lambda: &DVector<f64>,
        model: ContactModel,
    ) -> Self {
        let split = split_applies(problem)
            .then(|| internal_force_split(problem, lambda, model))
            .flatten();
        if let Some(split) = split {
            self.internal_forces_required = Some(split.required);
            self.internal_forces_spurious = Some(split.spurious);
        }
        self
    }
}

/// Whether the split of the internal forces into required and spurious parts applies:
/// its premise (every `λ + N z` has the contact velocity of `λ`) holds only without
/// compliance. With one, the records leave the split empty (the total stays;
/// docs/ruler.md §8).
pub fn split_applies(problem: &ContactProblem) -> bool {
    problem
        .compliance()
        .is_none_or(|r| r.iter().all(|x| *x == 0.0))
}

/// All metrics of `λ` for `problem`, with `c = (G + R) λ + g` and the default sliding
/// tolerance, except the split of the internal forces (which needs the model: see
/// [`compute_model_metrics`]). `λ` must have size `3n` (see
/// [`ContactProblem::check_lambda`]).
pub fn compute_metrics(problem: &ContactProblem, lambda: &DVector<f64>) -> ProblemMetrics {
    compute_metrics_with(problem, lambda, DEFAULT_SLIDING_TOLERANCE)
}

/// [`compute_metrics`] and the split of the internal forces for an answer of `model`
/// (one null space of `Jᵀ` for the total and the split).
pub fn compute_model_metrics(
    problem: &ContactProblem,
    lambda: &DVector<f64>,
    model: ContactModel,
) -> ProblemMetrics {
    compute_model_metrics_at_velocity(problem, lambda, &problem.velocity(lambda), model)
}

/// [`compute_metrics`] with `c = (G + R) λ + g` already computed by
/// [`ContactProblem::velocity`] (a simulation's record uses the same `c` for its
/// per-contact velocities).
pub fn compute_metrics_at_velocity(
    problem: &ContactProblem,
    lambda: &DVector<f64>,
    c: &DVector<f64>,
) -> ProblemMetrics {
    ProblemMetrics {
        internal_forces: internal_forces(problem, lambda),
        ..metrics_at_velocity(problem, lambda, c, DEFAULT_SLIDING_TOLERANCE)
    }
}

/// [`compute_model_metrics`] with `c = (G + R) λ + g` already computed by
/// [`ContactProblem::velocity`].
pub fn compute_model_metrics_at_velocity(
    problem: &ContactProblem,
    lambda: &DVector<f64>,
    c: &DVector<f64>,
    model: ContactModel,
) -> ProblemMetrics {
    let mut metrics = metrics_at_velocity(problem, lambda, c, DEFAULT_SLIDING_TOLERANCE);
    let split = split_applies(problem)
        .then(|| internal_force_split_at(problem, lambda, c, model))
        .flatten();
    match split {
        Some(split) => {
            metrics.internal_forces = Some(split.total);
            metrics.internal_forces_required = Some(split.required);
            metrics.internal_forces_spurious = Some(split.spurious);
        }
        None => metrics.internal_forces = internal_forces(problem, lambda),
    }
    metrics
}

/// [`compute_metrics`] with a chosen sliding tolerance (m/s).
pub fn compute_metrics_with(
    problem: &ContactProblem,
    lambda: &DVector<f64>,
    sliding_tolerance: f64,
) -> ProblemMetrics {
    ProblemMetrics {
        internal_forces: internal_forces(problem, lambda),
        ..metrics_without_internal_forces(problem, lambda, sliding_tolerance)
    }
}

/// Every metric but the internal forces (`None`).
fn metrics_without_internal_forces(
    problem: &ContactProblem,
    lambda: &DVector<f64>,
    sliding_tolerance: f64,
) -> ProblemMetrics {
    metrics_at_velocity(
        problem,
        lambda,
        &problem.velocity(lambda),
        sliding_tolerance,
    )
}

/// [`metrics_without_internal_forces`] with `c = (G + R) λ + g` already computed.
fn metrics_at_velocity(
    problem: &ContactProblem,
    lambda: &DVector<f64>,
    c: &DVector<f64>,
    sliding_tolerance: f64,
) -> ProblemMetrics {
    let contacts: Vec<ContactMetrics> = (0..problem.num_contacts())
        .map(|i| {
            let lambda_i = contact_vector(lambda, i);
            // (G + R)_ii once, for RaiSim's residual and the relative criterion's scales.
            let block = problem.diagonal_block(i);
            contact_metrics(
                problem.mu_of(i),
                &block,
                (&lambda_i, &contact_vector(c, i)),
                &Scales::of_contact_with_block(problem, i, &lambda_i, &block),
                sliding_tolerance,
            )
        })
        .collect();
    let finite = lambda.iter().chain(c.iter()).all(|x| x.is_finite());
    aggregate(contacts, finite)
}

fn contact_metrics(
    mu: f64,
    block: &Matrix3<f64>,
    (lambda, c): (&nalgebra::Vector3<f64>, &nalgebra::Vector3<f64>),
    scales: &Scales,
    sliding_tolerance: f64,
) -> ContactMetrics {
    let ncp = ncp_contact_residual(mu, lambda, c);
    let (penetration_velocity, complementarity) = signorini_contact_violation(lambda, c);
    let mdp_violation = mdp_contact_violation(mu, lambda, c, sliding_tolerance);
    ContactMetrics {
        primal_feasibility: ncp.primal_feasibility,
        dual_feasibility: ncp.dual_feasibility,
        complementarity: ncp.complementarity,
        relative_criterion: ncp.relative(scales, lambda),
        ncp_criterion: ncp.max(),
        ccp_residual: ccp_residual_with_primal(mu, ncp.primal_feasibility, lambda, c).max(),
        lcp_residual: lcp_contact_residual(mu, lambda, c).max(),
        raisim_residual: raisim_contact_residual(mu, block, lambda, c).max(),
        signorini_violation: SignoriniViolation {
            complementarity,
            penetration_velocity,
        },
        sliding: mdp_violation.is_some(),
        mdp_violation,
    }
}

/// Worst contact of every metric; `finite` is false when `λ` or `c` holds a non-finite
/// value, which makes every residual NaN (a contact's parts can hide an infinity: the
/// distance of an infinite vector to a cone is NaN or 0).
fn aggregate(contacts: Vec<ContactMetrics>, finite: bool) -> ProblemMetrics {
    let worst = |f: fn(&ContactMetrics) -> f64| {
        if finite {
            contacts.iter().map(f).fold(0.0, max_nan)
        } else {
            f64::NAN
        }
    };
    ProblemMetrics {
        primal_feasibility: worst(|m| m.primal_feasibility),
        dual_feasibility: worst(|m| m.dual_feasibility),
        complementarity: worst(|m| m.complementarity),
        relative_criterion: worst(|m| m.relative_criterion),
        ncp_criterion: worst(|m| m.ncp_criterion),
        ccp_residual: worst(|m| m.ccp_residual),
        lcp_residual: worst(|m| m.lcp_residual),
        raisim_residual: worst(|m| m.raisim_residual),
        signorini_violation: if finite {
            contacts
                .iter()
                .fold(SignoriniViolation::default(), |acc, m| {
                    acc.max_with(&m.signorini_violation)
                })
        } else {
            SignoriniViolation {
                complementarity: f64::NAN,
                penetration_velocity: f64::NAN,
            }
        },
        mdp_violation: worst(|m| m.mdp_violation.unwrap_or(0.0)),
        sliding_contacts: contacts.iter().filter(|m| m.sliding).count(),
        internal_forces: None,
        internal_forces_required: None,
        internal_forces_spurious: None,
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
        assert_eq!(m.relative_criterion, 0.0);
    }

    #[test]
    fn a_nan_answer_has_nan_metrics_never_zero() {
        // ccp-newton's answer on G = I, g = (1e308, 0, −1) was (NaN, NaN, inf).
        let Ok(p) = single_contact(0.5, Matrix3::identity(), Vector3::new(0.0, 0.0, -1.0)) else {
            panic!("valid problem");
        };
        let m = compute_metrics(
            &p,
            &DVector::from_vec(vec![f64::NAN, f64::NAN, f64::INFINITY]),
        );
        for (name, value) in ProblemMetrics::COLUMNS.iter().zip(m.column_values()) {
            assert!(value.is_nan(), "{name} = {value}");
        }
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

    #[test]
    fn the_internal_force_split_is_left_empty_with_compliance() {
        // Two contacts on a body moving along z: an internal direction exists.
        let j = nalgebra::DMatrix::from_row_slice(6, 1, &[0.0, 0.0, 1.0, 0.0, 0.0, 1.0]);
        let g = DVector::from_row_slice(&[0.0, 0.0, -1.0, 0.0, 0.0, -1.0]);
        let lambda = DVector::from_row_slice(&[0.0, 0.0, 0.8, 0.0, 0.0, 0.2]);
        let problem = |r: Option<f64>| {
            ContactProblem::new(
                &j * j.transpose(),
                g.clone(),
                DVector::from_element(2, 0.5),
                r.map(|r| DVector::from_element(6, r)),
            )
            .and_then(|p| p.with_jacobian(j.clone()))
            .expect("valid problem")
        };
        let rigid = compute_model_metrics(&problem(None), &lambda, ContactModel::Ccp);
        assert!(rigid.internal_forces_spurious.is_some_and(|s| s > 0.4));
        let compliant = compute_model_metrics(&problem(Some(0.1)), &lambda, ContactModel::Ccp);
        assert_eq!(compliant.internal_forces_spurious, None);
        assert_eq!(compliant.internal_forces_required, None);
        assert!(
            compliant.internal_forces.is_some_and(|t| t > 0.4),
            "the total stays"
        );
    }
}
