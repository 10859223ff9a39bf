//! The mode of each contact at an answer: take-off, stick or slide, decided from `λ` and
//! `c = (G + R) λ + g` with one relative tolerance `τ` (docs/derivatives.md, "Modes").
//!
//! Every decision compares two dimensionless quantities, one per side, each divided by the
//! ruler's scales (`λ_s = max(‖λ‖∞, v_s / max_k (G + R)_kk)`, `v_s = ‖g‖∞`):
//!
//! - take-off or active: the normal force `λ_N / λ_s` against the normal gap `γ / v_s`,
//!   `γ` the model's dual slack along the normal (`c_N` for the NCP, the LCP and RaiSim,
//!   `c_N − μ ‖c_T‖` for the CCP, whose sliding contacts separate);
//! - stick or slide (an active contact): the slip `‖c_T‖ / v_s` against the cone margin
//!   `(μ λ_N − ‖λ_T‖) / λ_s` (per tangent axis on the LCP's pyramid).
//!
//! The smaller one is taken as zero: at an exact answer one of the two is zero. When both
//! are at most `τ` the contact sits on a mode boundary and the one-sided choice is fixed:
//! take-off (the derivative of the side where the contact opens) between take-off and
//! contact, stick (the side where it keeps sticking) between stick and slide, whose
//! sliding equations divide by `‖c_T‖`. The mode report carries the other mode.
//! A frictionless contact (`μ = 0`) is sliding (`λ_T = 0` whatever `c_T`), on the
//! boundary when `‖c_T‖ ≤ τ v_s`, where its slip direction is taken as zero.

use nalgebra::Vector3;
use serde::Serialize;

use crate::problem::ContactModel;

/// The mode of a contact at an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ContactMode {
    /// No force (`λ_i = 0`), the contact opens: `dλ_i = 0`.
    TakeOff,
    /// The contact pushes and does not move (`c_i = 0`): `d c_i = 0`.
    Stick,
    /// The contact pushes and slips, its force on the friction cone's boundary.
    Slide,
}

impl ContactMode {
    /// The mode's name as in files (`take_off`, `stick`, `slide`).
    pub fn as_str(&self) -> &'static str {
        match self {
            ContactMode::TakeOff => "take_off",
            ContactMode::Stick => "stick",
            ContactMode::Slide => "slide",
        }
    }
}

/// The mode of one contact and, when it sits on a mode boundary, the other mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ModeReport {
    /// The mode whose conditions were differentiated.
    pub mode: ContactMode,
    /// `Some(other)` when both quantities that decide between `mode` and `other` are
    /// within the tolerance: the derivative is `mode`'s one-sided derivative.
    pub boundary_with: Option<ContactMode>,
}

impl ModeReport {
    /// True when the contact sits on a mode boundary.
    pub fn at_boundary(&self) -> bool {
        self.boundary_with.is_some()
    }
}

/// A contact's mode with what its linearization needs to know.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Decision {
    pub(crate) report: ModeReport,
    /// LCP: which tangent axes slide (on a facet of the pyramid).
    pub(crate) sliding_axes: [bool; 2],
    /// True when the slip direction is taken as zero (frictionless, not slipping).
    pub(crate) no_direction: bool,
}

/// The scales and tolerance of a contact's decisions: the ruler's scales of that contact
/// ([`crate::metrics::residuals::Scales::of_contact`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Scales {
    /// `λ_i,s` (N·s).
    pub(crate) impulse: f64,
    /// `v_i` (m/s).
    pub(crate) velocity: f64,
    /// `τ` (dimensionless).
    pub(crate) tolerance: f64,
}

/// `x / s`, 0 for `x = 0` whatever `s`, infinite for `x > 0 = s`.
fn ratio(x: f64, s: f64) -> f64 {
    if x == 0.0 {
        0.0
    } else if s > 0.0 {
        x / s
    } else {
        f64::INFINITY
    }
}

/// `a` is taken as zero against `b`, with `both_small` when both are within `tol`.
fn smaller(a: f64, b: f64, tol: f64) -> (bool, bool) {
    let both_small = a <= tol && b <= tol;
    (both_small || a <= b, both_small)
}

/// The model's dual slack along the normal (module docs).
fn normal_gap(model: ContactModel, mu: f64, c: &Vector3<f64>) -> f64 {
    match model {
        ContactModel::Ccp => c.z - mu * c.xy().norm(),
        ContactModel::Ncp | ContactModel::Lcp | ContactModel::Raisim => c.z,
    }
}

/// The mode of contact `(λ_i, c_i)` of a `model` problem with friction `μ`.
pub(crate) fn decide(
    model: ContactModel,
    mu: f64,
    lambda: &Vector3<f64>,
    c: &Vector3<f64>,
    scales: &Scales,
) -> Decision {
    let tol = scales.tolerance;
    let force = ratio(lambda.z.max(0.0), scales.impulse);
    let gap = ratio(normal_gap(model, mu, c).max(0.0), scales.velocity);
    let (opens, open_boundary) = smaller(force, gap, tol);
    let active = active_mode(model, mu, lambda, c, scales);
    if opens {
        return Decision {
            report: ModeReport {
                mode: ContactMode::TakeOff,
                boundary_with: open_boundary.then_some(active.report.mode),
            },
            sliding_axes: [false; 2],
            no_direction: false,
        };
    }
    active
}

/// Stick or slide of a contact that pushes.
fn active_mode(
    model: ContactModel,
    mu: f64,
    lambda: &Vector3<f64>,
    c: &Vector3<f64>,
    scales: &Scales,
) -> Decision {
    let tol = scales.tolerance;
    let slip_of = |x: f64| ratio(x, scales.velocity);
    if mu == 0.0 {
        let slipping = slip_of(c.xy().norm()) > tol;
        return Decision {
            report: ModeReport {
                mode: ContactMode::Slide,
                boundary_with: (!slipping).then_some(ContactMode::Stick),
            },
            sliding_axes: [true; 2],
            no_direction: !slipping,
        };
    }
    let margin_of = |t: f64| {
        let m = mu * lambda.z - t;
        if m <= 0.0 {
            0.0
        } else {
            ratio(m, scales.impulse)
        }
    };
    if model == ContactModel::Lcp {
        let mut sliding_axes = [false; 2];
        let mut boundary = false;
        for (k, axis) in sliding_axes.iter_mut().enumerate() {
            let (sticks, both) = smaller(slip_of(c[k].abs()), margin_of(lambda[k].abs()), tol);
            *axis = !sticks;
            boundary |= both;
        }
        let slides = sliding_axes.iter().any(|&s| s);
        let (mode, other) = if slides {
            (ContactMode::Slide, ContactMode::Stick)
        } else {
            (ContactMode::Stick, ContactMode::Slide)
        };
        return Decision {
            report: ModeReport {
                mode,
                boundary_with: boundary.then_some(other),
            },
            sliding_axes,
            no_direction: false,
        };
    }
    let (sticks, boundary) = smaller(slip_of(c.xy().norm()), margin_of(lambda.xy().norm()), tol);
    let (mode, other) = if sticks {
        (ContactMode::Stick, ContactMode::Slide)
    } else {
        (ContactMode::Slide, ContactMode::Stick)
    };
    Decision {
        report: ModeReport {
            mode,
            boundary_with: boundary.then_some(other),
        },
        sliding_axes: [!sticks; 2],
        no_direction: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCALES: Scales = Scales {
        impulse: 1.0,
        velocity: 1.0,
        tolerance: 1e-8,
    };

    #[test]
    fn clear_modes_are_decided_without_a_boundary() {
        let model = ContactModel::Ncp;
        let take_off = decide(
            model,
            0.5,
            &Vector3::zeros(),
            &Vector3::new(0.1, 0.0, 0.3),
            &SCALES,
        );
        assert_eq!(take_off.report.mode, ContactMode::TakeOff);
        assert!(!take_off.report.at_boundary());
        let stick = decide(
            model,
            0.5,
            &Vector3::new(0.1, 0.0, 1.0),
            &Vector3::zeros(),
            &SCALES,
        );
        assert_eq!(stick.report.mode, ContactMode::Stick);
        let lambda = Vector3::new(-0.5, 0.0, 1.0);
        let slide = decide(model, 0.5, &lambda, &Vector3::new(0.2, 0.0, 0.0), &SCALES);
        assert_eq!(slide.report.mode, ContactMode::Slide);
        assert!(!slide.report.at_boundary());
    }

    #[test]
    fn boundaries_take_the_documented_side() {
        let model = ContactModel::Ncp;
        // λ = 0 and c = 0: take-off, on the boundary with stick.
        let weak = decide(model, 0.5, &Vector3::zeros(), &Vector3::zeros(), &SCALES);
        assert_eq!(weak.report.mode, ContactMode::TakeOff);
        assert_eq!(weak.report.boundary_with, Some(ContactMode::Stick));
        // On the cone's boundary and not slipping: stick, on the boundary with slide.
        let edge = decide(
            model,
            0.5,
            &Vector3::new(0.5, 0.0, 1.0),
            &Vector3::zeros(),
            &SCALES,
        );
        assert_eq!(edge.report.mode, ContactMode::Stick);
        assert_eq!(edge.report.boundary_with, Some(ContactMode::Slide));
        // Frictionless and not slipping: slide without a direction.
        let smooth = decide(
            model,
            0.0,
            &Vector3::new(0.0, 0.0, 1.0),
            &Vector3::zeros(),
            &SCALES,
        );
        assert_eq!(smooth.report.mode, ContactMode::Slide);
        assert!(smooth.no_direction);
    }

    #[test]
    fn a_sliding_ccp_contact_is_active_although_it_separates() {
        // CCP sliding: c_N = μ ‖c_T‖ > 0 with λ on the cone's boundary.
        let lambda = Vector3::new(-0.5, 0.0, 1.0);
        let c = Vector3::new(0.2, 0.0, 0.1);
        let ccp = decide(ContactModel::Ccp, 0.5, &lambda, &c, &SCALES);
        assert_eq!(ccp.report.mode, ContactMode::Slide);
    }

    #[test]
    fn the_pyramid_decides_each_axis() {
        // Slides along t1 (λ_1 = −μ λ_N), sticks along t2.
        let lambda = Vector3::new(-0.5, 0.1, 1.0);
        let c = Vector3::new(0.3, 0.0, 0.0);
        let d = decide(ContactModel::Lcp, 0.5, &lambda, &c, &SCALES);
        assert_eq!(d.report.mode, ContactMode::Slide);
        assert_eq!(d.sliding_axes, [true, false]);
    }
}
