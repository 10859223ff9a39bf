//! Complementarity residuals of the NCP, CCP, LCP and RaiSim models (design.md §5), in
//! their units, and the dimensionless relative criterion that every solver stops on by
//! default (docs/ruler.md).
//!
//! Per contact `i`, with `c = (G + R) λ + g` and a model-dependent corrected velocity `ĉ`:
//! primal feasibility `ε_p = dist_K(λ)` (an impulse, N·s), dual feasibility
//! `ε_d = dist_{K*}(ĉ)` (a velocity, m/s), complementarity `ε_c = |⟨λ, ĉ⟩|` (N·s·m/s).
//!
//! - NCP: ice-cream cone, `ĉ = c + Γ(c, μ)` (de Saxcé correction, eq. 13).
//! - CCP: ice-cream cone, `ĉ = c` (eq. 16).
//! - LCP: pyramid cone, `ĉ = c + (0, 0, μ‖c_T‖₁)` (the facet multipliers' share of the
//!   normal velocity, eq. 11).
//! - RaiSim: the KKT conditions of the per-contact problem (20), whose sliding branch is
//!   eq. (21); see [`raisim_contact_residual`], whose terms are sorted by unit into the
//!   same three parts.
//!
//! Two criteria per model, both a maximum over contacts:
//! - **absolute** `max_i max(ε_p, ε_d, ε_c)`: the paper's (Tab. IV), mixing units;
//! - **relative** `r = max_i max(ε_p / λ_i,s, ε_d / v_i, min(ε_c / (‖λ_i‖ v_i), ‖λ_i‖∞ / λ_i,s))`
//!   with scales local to contact `i` ([`Scales`]): `v_i` the largest free velocity
//!   `‖g_j‖∞` among the contacts coupled with `i` through `G` (its group,
//!   `problem::coupling`), and `λ_i,s = max(‖λ_i‖∞, v_i / d_i)`, `d_i` the largest
//!   diagonal entry of its block of `G + R` (`v_i / d_i` is the impulse that changes its
//!   own velocity by `v_i`; 0 when `d_i = 0`). A ratio whose numerator is 0 counts 0. It
//!   is invariant to `λ → sλ, G → G/s` (units of impulse) and `g → tg, G → tG` (units of
//!   velocity). Complementarity holds relatively when either the velocity along the
//!   contact's force, `ε_c / ‖λ_i‖`, is small against `v_i`, or the force is small
//!   against its own floor (it changes its own velocity by at most `ε v_i`).
//!
//!   Why local (docs/ruler.md): with scales from the whole answer (`λ_s = ‖λ‖∞`), an
//!   unrelated internal squeeze of 1e8 N·s between two walls waived the complementarity of
//!   a contact elsewhere that pushed while separating at 10 m/s (ncp-admm and ccp-admm
//!   accepted that warm start after 0 iterations, `r = 1.1e-7`). The scale of a contact's
//!   waiver now comes from that contact, and its velocity scale from the bodies it touches.
//!
//! Non-finite values propagate: a NaN or an infinity in `λ`, `c` or any term makes the
//! criteria NaN, and NaN is never below a tolerance.
//!
//! Physical checks of the NCP's three laws are here too: the Signorini condition (8) and
//! the maximum dissipation principle (11).

use nalgebra::{DVector, Matrix3, Vector3};
use serde::{Deserialize, Serialize};

use crate::dynamics::first_non_finite;
use crate::problem::{cones, contact_vector, ContactModel, ContactProblem};

/// `max(a, b)` that propagates NaN (`f64::max` would drop it).
pub fn max_nan(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

/// `numerator / scale`, 0 when the numerator is 0 (whatever the scale), NaN when either
/// is NaN.
fn ratio(numerator: f64, scale: f64) -> f64 {
    if numerator == 0.0 {
        0.0
    } else {
        numerator / scale
    }
}

/// The scales of the relative criterion at one contact `i` (module doc): `v_i`, the
/// largest free velocity of its group (m/s), and `λ_i,s = max(‖λ_i‖∞, v_i / d_i)` (N·s),
/// `d_i` the largest diagonal entry of its block of `G + R`: its own impulse, but never
/// below the impulse that changes its own velocity by `v_i`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Scales {
    /// `λ_i,s` (N·s).
    pub impulse: f64,
    /// `v_i` (m/s).
    pub velocity: f64,
}

impl Scales {
    /// The scales of contact `i` of `problem` whose impulse is `lambda_i` (NaN when
    /// `lambda_i` holds a NaN).
    pub fn of_contact(problem: &ContactProblem, i: usize, lambda_i: &Vector3<f64>) -> Self {
        // The diagonal of (G + R)_ii, read from the operator's block (G is not formed).
        Self::of_contact_with_block(problem, i, lambda_i, &problem.diagonal_block(i))
    }

    /// [`Scales::of_contact`] with the block `(G + R)_ii` already read.
    pub(super) fn of_contact_with_block(
        problem: &ContactProblem,
        i: usize,
        lambda_i: &Vector3<f64>,
        block: &Matrix3<f64>,
    ) -> Self {
        let velocity = problem.velocity_scale_of(i);
        let stiffness = (0..3).fold(0.0_f64, |m, k| m.max(block[(k, k)]));
        let floor = if stiffness > 0.0 {
            velocity / stiffness
        } else {
            0.0
        };
        Self {
            impulse: lambda_i.iter().fold(floor, |m, x| max_nan(m, x.abs())),
            velocity,
        }
    }
}

/// The three parts of a per-contact complementarity residual, in their units.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ContactResidual {
    /// `ε_p`, distance of `λ` to the primal cone (N·s).
    pub primal_feasibility: f64,
    /// `ε_d`, distance of the corrected velocity to the dual cone (m/s).
    pub dual_feasibility: f64,
    /// `ε_c`, `|⟨λ, ĉ⟩|` (N·s·m/s).
    pub complementarity: f64,
}

impl ContactResidual {
    /// `max(ε_p, ε_d, ε_c)`, the absolute criterion of one contact (NaN-propagating).
    pub fn max(&self) -> f64 {
        max_nan(
            max_nan(self.primal_feasibility, self.dual_feasibility),
            self.complementarity,
        )
    }

    /// `max(ε_p / λ_i,s, ε_d / v_i, min(ε_c / (‖λ_i‖ v_i), ‖λ_i‖∞ / λ_i,s))`, the relative
    /// criterion of a contact whose impulse is `lambda_i` and whose scales are `scales`
    /// (a ratio with numerator 0 counts 0; NaN-propagating).
    pub fn relative(&self, scales: &Scales, lambda_i: &Vector3<f64>) -> f64 {
        let along_force = ratio(self.complementarity, lambda_i.norm() * scales.velocity);
        let force = ratio(lambda_i.amax(), scales.impulse);
        let complementarity = if along_force.is_nan() || force.is_nan() {
            f64::NAN
        } else {
            along_force.min(force)
        };
        max_nan(
            max_nan(
                ratio(self.primal_feasibility, scales.impulse),
                ratio(self.dual_feasibility, scales.velocity),
            ),
            ratio(complementarity, 1.0),
        )
    }

    /// Component-wise maximum of two residuals (NaN-propagating).
    pub fn max_with(&self, other: &Self) -> Self {
        Self {
            primal_feasibility: max_nan(self.primal_feasibility, other.primal_feasibility),
            dual_feasibility: max_nan(self.dual_feasibility, other.dual_feasibility),
            complementarity: max_nan(self.complementarity, other.complementarity),
        }
    }
}

/// Both criteria of one model at one answer.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Criteria {
    /// The relative criterion `r` (dimensionless).
    pub relative: f64,
    /// The absolute criterion `max_i max(ε_p, ε_d, ε_c)` (mixed units).
    pub absolute: f64,
}

impl Criteria {
    /// Both criteria NaN: what a non-finite answer scores.
    pub const NAN: Criteria = Criteria {
        relative: f64::NAN,
        absolute: f64::NAN,
    };
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
    ccp_residual_with_primal(mu, cones::distance_ice_cream(mu, lambda), lambda, c)
}

/// [`ccp_contact_residual`] with its `ε_p` (the NCP's: the same cone) already computed.
pub(super) fn ccp_residual_with_primal(
    mu: f64,
    primal_feasibility: f64,
    lambda: &Vector3<f64>,
    c: &Vector3<f64>,
) -> ContactResidual {
    ContactResidual {
        primal_feasibility,
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

/// The residual of contact `i` of `problem` in `model`, given `λ` and `c` (stacked).
pub fn model_contact_residual(
    model: ContactModel,
    problem: &ContactProblem,
    i: usize,
    lambda: &DVector<f64>,
    c: &DVector<f64>,
) -> ContactResidual {
    let (mu, li, ci) = (
        problem.mu_of(i),
        contact_vector(lambda, i),
        contact_vector(c, i),
    );
    match model {
        ContactModel::Ncp => ncp_contact_residual(mu, &li, &ci),
        ContactModel::Ccp => ccp_contact_residual(mu, &li, &ci),
        ContactModel::Lcp => lcp_contact_residual(mu, &li, &ci),
        ContactModel::Raisim => raisim_contact_residual(mu, &problem.diagonal_block(i), &li, &ci),
    }
}

/// Both criteria of `model` at `λ`, given `c = (G + R) λ + g`: NaN when `λ` or `c` holds
/// a non-finite value.
pub fn model_criteria(
    model: ContactModel,
    problem: &ContactProblem,
    lambda: &DVector<f64>,
    c: &DVector<f64>,
) -> Criteria {
    if first_non_finite(lambda.as_slice()).is_some() || first_non_finite(c.as_slice()).is_some() {
        return Criteria::NAN;
    }
    // One loop per model (the residual inlined in it), the contacts in order.
    let mu = |i: usize| problem.mu_of(i);
    match model {
        ContactModel::Ncp => criteria_over(problem, lambda, c, |i, l, v| {
            ncp_contact_residual(mu(i), l, v)
        }),
        ContactModel::Ccp => criteria_over(problem, lambda, c, |i, l, v| {
            ccp_contact_residual(mu(i), l, v)
        }),
        ContactModel::Lcp => criteria_over(problem, lambda, c, |i, l, v| {
            lcp_contact_residual(mu(i), l, v)
        }),
        ContactModel::Raisim => criteria_over(problem, lambda, c, |i, l, v| {
            raisim_contact_residual(mu(i), &problem.diagonal_block(i), l, v)
        }),
    }
}

/// The relative and absolute criteria, maxima over the contacts of the residuals that
/// `residual(i, λ_i, c_i)` gives, each contact on its own scales.
#[inline(always)]
fn criteria_over(
    problem: &ContactProblem,
    lambda: &DVector<f64>,
    c: &DVector<f64>,
    residual: impl Fn(usize, &Vector3<f64>, &Vector3<f64>) -> ContactResidual,
) -> Criteria {
    let mut criteria = Criteria {
        relative: 0.0,
        absolute: 0.0,
    };
    let contacts = lambda
        .as_slice()
        .chunks_exact(3)
        .zip(c.as_slice().chunks_exact(3));
    for (i, (l, v)) in contacts.enumerate() {
        let lambda_i = Vector3::new(l[0], l[1], l[2]);
        let r = residual(i, &lambda_i, &Vector3::new(v[0], v[1], v[2]));
        let scales = Scales::of_contact(problem, i, &lambda_i);
        criteria = Criteria {
            relative: max_nan(criteria.relative, r.relative(&scales, &lambda_i)),
            absolute: max_nan(criteria.absolute, r.max()),
        };
    }
    criteria
}

/// Component-wise worst residual of `model` over all contacts (NaN when `λ` or `c` is
/// not finite).
pub fn worst_residual(
    model: ContactModel,
    problem: &ContactProblem,
    lambda: &DVector<f64>,
    c: &DVector<f64>,
) -> ContactResidual {
    if !(lambda.iter().all(|x| x.is_finite()) && c.iter().all(|x| x.is_finite())) {
        return ContactResidual {
            primal_feasibility: f64::NAN,
            dual_feasibility: f64::NAN,
            complementarity: f64::NAN,
        };
    }
    (0..problem.num_contacts()).fold(ContactResidual::default(), |acc, i| {
        acc.max_with(&model_contact_residual(model, problem, i, lambda, c))
    })
}

/// NCP criterion `max_i max(ε_p, ε_d, ε_c)` with the de Saxcé correction (absolute).
pub fn ncp_criterion(problem: &ContactProblem, lambda: &DVector<f64>, c: &DVector<f64>) -> f64 {
    model_criteria(ContactModel::Ncp, problem, lambda, c).absolute
}

/// The relative NCP criterion `r` (module doc).
pub fn relative_criterion(
    problem: &ContactProblem,
    lambda: &DVector<f64>,
    c: &DVector<f64>,
) -> f64 {
    model_criteria(ContactModel::Ncp, problem, lambda, c).relative
}

/// CCP residual `max_i max(ε_p, ε_d, ε_c)` without correction (absolute).
pub fn ccp_residual(problem: &ContactProblem, lambda: &DVector<f64>, c: &DVector<f64>) -> f64 {
    model_criteria(ContactModel::Ccp, problem, lambda, c).absolute
}

/// LCP residual `max_i max(ε_p, ε_d, ε_c)` on the pyramid (absolute).
pub fn lcp_residual(problem: &ContactProblem, lambda: &DVector<f64>, c: &DVector<f64>) -> f64 {
    model_criteria(ContactModel::Lcp, problem, lambda, c).absolute
}

/// Component-wise worst NCP residual (for reporting `ε_p`, `ε_d`, `ε_c` separately).
pub fn ncp_residual_parts(
    problem: &ContactProblem,
    lambda: &DVector<f64>,
    c: &DVector<f64>,
) -> ContactResidual {
    worst_residual(ContactModel::Ncp, problem, lambda, c)
}

/// RaiSim's own residual for one contact: the optimality conditions of the per-contact
/// problem (20), `min ½ λᵀ G_ii λ + g̃ᵀ λ` over `K_μ ∩ {c_N = 0}`, with its take-off branch,
/// its terms sorted by unit.
///
/// `block` is the contact's `3 × 3` diagonal block of `G + R`.
/// - primal (N·s): `dist_K(λ)` (Coulomb);
/// - dual (m/s): `max(0, −c_N)` (Signorini, eq. 8: no penetration velocity);
/// - complementarity (N·s·m/s), the worst of: `|λ_N c_N|` (Signorini); eq. (21), a
///   sliding contact's tangential velocity opposes `d = λ_T + μ² λ_N G_NT / G_NN` rather
///   than `λ_T`: `‖ ‖d‖ c_T + ‖c_T‖ d ‖` (zero when they are opposed or either vanishes,
///   and continuous as `λ → 0`); a sliding contact sits on the cone's boundary:
///   `‖c_T‖ · max(0, μ λ_N − ‖λ_T‖)`.
///
/// At a sticking contact (`c = 0`) or a take-off (`λ = 0`, `c_N ≥ 0`) it is zero.
pub fn raisim_contact_residual(
    mu: f64,
    block: &Matrix3<f64>,
    lambda: &Vector3<f64>,
    c: &Vector3<f64>,
) -> ContactResidual {
    let (penetration, normal_complementarity) = signorini_contact_violation(lambda, c);
    let c_t = c.xy();
    let slip = c_t.norm();
    let d = raisim_friction_direction(mu, block, lambda);
    let opposition = (c_t * d.norm() + d * slip).norm();
    let on_boundary = slip * (mu * lambda.z - lambda.xy().norm()).max(0.0);
    ContactResidual {
        primal_feasibility: cones::distance_ice_cream(mu, lambda),
        dual_feasibility: penetration,
        complementarity: max_nan(max_nan(normal_complementarity, opposition), on_boundary),
    }
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

/// RaiSim's residual (absolute), the worst [`raisim_contact_residual`], with the diagonal
/// blocks of `G + R`.
pub fn raisim_residual(problem: &ContactProblem, lambda: &DVector<f64>, c: &DVector<f64>) -> f64 {
    model_criteria(ContactModel::Raisim, problem, lambda, c).absolute
}

/// Signorini violation of one contact (eq. 8): `(max(0, −c_N), |λ_N c_N|)`, the
/// penetration velocity and the normal complementarity (NaN-propagating).
pub fn signorini_contact_violation(lambda: &Vector3<f64>, c: &Vector3<f64>) -> (f64, f64) {
    (max_nan(-c.z, 0.0), (lambda.z * c.z).abs())
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
        assert!(raisim_contact_residual(mu, &block, &lambda, &raisim_c).max() < 1e-15);
        // The MDP velocity (0, −1, 0) is not RaiSim's: ‖ ‖d‖ (0, −1) + 1 · d ‖.
        let mdp_c = Vector3::new(0.0, -1.0, 0.0);
        let expected = (nalgebra::Vector2::new(0.0, -d.norm()) + d).norm();
        let r = raisim_contact_residual(mu, &block, &lambda, &mdp_c).complementarity;
        assert!((r - expected).abs() < 1e-15 && r > 0.1);
    }

    fn one_contact(g: Vector3<f64>) -> ContactProblem {
        match crate::problem::generators::single_contact(0.5, Matrix3::identity(), g) {
            Ok(p) => p,
            Err(e) => panic!("valid problem: {e}"),
        }
    }

    #[test]
    fn relative_criterion_divides_each_part_by_its_scale() {
        // G = I, g = (0, 0, −2), μ = 0.5: λ = (0, 0, 1) leaves c = (0, 0, −1).
        let p = one_contact(Vector3::new(0.0, 0.0, -2.0));
        let lambda = DVector::from_vec(vec![0.0, 0.0, 1.0]);
        let c = p.velocity(&lambda);
        let r = worst_residual(ContactModel::Ncp, &p, &lambda, &c);
        // ε_p = 0, ε_d = dist of (0, 0, −1) to K_2 = 1, ε_c = |−1| = 1.
        assert_eq!(
            (r.primal_feasibility, r.dual_feasibility, r.complementarity),
            (0.0, 1.0, 1.0)
        );
        let scales = Scales::of_contact(&p, 0, &contact_vector(&lambda, 0));
        // λ_s = max(‖λ‖∞ = 1, v_s / max G_kk = 2): the floor.
        assert_eq!((scales.impulse, scales.velocity), (2.0, 2.0));
        // max(0, 1/2, min(1/(1·2), 1/2)) = 0.5.
        let criteria = model_criteria(ContactModel::Ncp, &p, &lambda, &c);
        assert_eq!((criteria.relative, criteria.absolute), (0.5, 1.0));
    }

    #[test]
    fn a_light_contact_is_measured_by_its_own_impulse() {
        // Two decoupled contacts, g_N = −1 each; contact 1 is 100 times stiffer (a light
        // body), so its answer is λ_N = 0.01. Pushing with 0.0101 it separates at
        // c_N = 0.01 = 1e-2 v_1: the product 1.01e-4 over the largest impulse times v_s = 1
        // would score 1.01e-4; the velocity along its force is c_N = 1e-2 v_1 and its force
        // is its own scale (above the floor v_1 / 100), so it scores min(1e-2, 1) = 1e-2.
        let mut g = nalgebra::DMatrix::identity(6, 6);
        for k in 3..6 {
            g[(k, k)] = 100.0;
        }
        let Ok(p) = ContactProblem::new(
            g,
            DVector::from_vec(vec![0.0, 0.0, -1.0, 0.0, 0.0, -1.0]),
            DVector::from_vec(vec![0.5, 0.5]),
            None,
        ) else {
            panic!("valid problem");
        };
        let lambda = DVector::from_vec(vec![0.0, 0.0, 1.0, 0.0, 0.0, 0.0101]);
        let c = p.velocity(&lambda);
        assert!((c[5] - 0.01).abs() < 1e-14);
        let r = model_criteria(ContactModel::Ncp, &p, &lambda, &c).relative;
        assert!((r - 0.01).abs() < 1e-12, "{r:e}");
    }

    #[test]
    fn a_vanishing_answer_is_measured_by_its_size() {
        // Take-off, G = I, g = (0.3, 0.2, 1): λ = 0 is the answer; an interior point
        // returns λ ≈ 2.7e-11 (0, 0, 1). With λ_s = ‖λ‖∞ alone, ε_c / (λ_s v_s) = c_N / v_s
        // = 1 for any such λ; with the floor v_s / max G_kk = 1, the force is 2.7e-11 λ_s.
        let p = one_contact(Vector3::new(0.3, 0.2, 1.0));
        let lambda = DVector::from_vec(vec![0.0, 0.0, 2.7e-11]);
        let c = p.velocity(&lambda);
        let r = model_criteria(ContactModel::Ccp, &p, &lambda, &c).relative;
        assert!(r > 2.6e-11 && r < 2.8e-11, "{r:e}");
    }

    #[test]
    fn zero_numerators_count_zero_whatever_the_scale() {
        // λ = 0 with g = 0: every part and both scales are 0; the answer is exact.
        let p = one_contact(Vector3::zeros());
        let lambda = DVector::zeros(3);
        let c = p.velocity(&lambda);
        let criteria = model_criteria(ContactModel::Ccp, &p, &lambda, &c);
        assert_eq!((criteria.relative, criteria.absolute), (0.0, 0.0));
    }

    #[test]
    fn non_finite_values_make_every_criterion_nan() {
        let p = one_contact(Vector3::new(0.0, 0.0, -1.0));
        for bad in [f64::NAN, f64::INFINITY] {
            let lambda = DVector::from_vec(vec![bad, 0.0, 1.0]);
            let c = p.velocity(&lambda);
            for model in [
                ContactModel::Ncp,
                ContactModel::Ccp,
                ContactModel::Lcp,
                ContactModel::Raisim,
            ] {
                let criteria = model_criteria(model, &p, &lambda, &c);
                assert!(criteria.relative.is_nan() && criteria.absolute.is_nan());
                let parts = worst_residual(model, &p, &lambda, &c);
                assert!(parts.max().is_nan());
            }
        }
        // A NaN inside one contact's parts is not dropped by the maximum over contacts.
        let nan = ContactResidual {
            primal_feasibility: 0.0,
            dual_feasibility: f64::NAN,
            complementarity: 0.0,
        };
        assert!(ContactResidual::default().max_with(&nan).max().is_nan());
        let scales = Scales {
            impulse: 1.0,
            velocity: 1.0,
        };
        assert!(nan.relative(&scales, &Vector3::zeros()).is_nan());
    }
}
