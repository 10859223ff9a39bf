//! NESMINO (Qin & An, "Smoothing algorithms for computing the projection onto a Minkowski
//! sum of convex sets", 2019), the baseline of "Collision Detection Accelerated" §IV-C:
//! Nesterov's fast (projected) gradient method on the shapes themselves rather than on
//! their Minkowski difference.
//!
//! The distance `min_{a ∈ A, b ∈ B} ‖a − b‖` is smoothed with Nesterov's technique,
//! `f_μ(z) = max_{‖u‖ ≤ 1} ⟨u, z⟩ − μ‖u‖²/2`, whose gradient `z / max(μ, ‖z‖)` is
//! `1/μ`-Lipschitz; `f_μ` is an increasing function of `‖z‖`, so the minimizer is the
//! same. `F(a, b) = f_μ(a − b)` has a `2/μ`-Lipschitz gradient, and the method is
//!
//! ```text
//! (a⁺, b⁺) = (P_A(ȳ_a − (μ/2) ∇f_μ(ȳ_a − ȳ_b)),  P_B(ȳ_b + (μ/2) ∇f_μ(ȳ_a − ȳ_b)))
//! t⁺ = (1 + √(1 + 4t²)) / 2,   ȳ = (a⁺, b⁺) + ((t − 1)/t⁺) ((a⁺, b⁺) − (a, b))
//! ```
//!
//! with `P_A`, `P_B` the projections onto the shapes ([`super::projection`]). The
//! smoothing parameter `μ` decides everything: with `μ = ‖a₀ − b₀‖` ([`Smoothing::Initial`])
//! `f_μ` is the scaled squared norm on the first iterate's sublevel set and each step moves
//! the points by half their separation; with a small `μ` ([`Smoothing::Fixed`], e.g. the
//! accuracy `√ε` Qin & An's analysis ties it to) a step moves them by at most `μ/2` until
//! momentum builds up. The iterate `x = a − b` stays in
//! `D` (the shapes with their inflation radii), so it stops on the same Frank-Wolfe
//! duality gap as GJK and Frank-Wolfe (one support call of `D` per iteration, not counted
//! as work of the method), or, when asked,
//! on the rule of "Collision Detection Accelerated": within a distance of a reference
//! solution.

use nalgebra::{Isometry3, Vector3};

use super::error::CollisionError;
use super::frank_wolfe::{duality_gap, BaselineSettings, BaselineStop, MinimumNormResult};
use super::gjk::MinkowskiDifference;
use super::projection::project_local;
use super::shape::Shape;

/// A stopping rule on the distance to a known solution.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReferenceStop {
    /// The reference iterate `x*` (A's frame, m).
    pub x: Vector3<f64>,
    /// Stop when `‖x_k − x*‖` is at most this (m; the paper's `√ε = 1e-4`).
    pub radius: f64,
}

/// The smoothing parameter `μ` of NESMINO.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Smoothing {
    /// `μ = ‖a₀ − b₀‖`, the initial distance.
    Initial,
    /// A fixed `μ` (m).
    Fixed(f64),
}

/// NESMINO from the points `a0 ∈ A`, `b0 ∈ B` (A's frame; B placed by `b_in_a`).
/// Shapes without a projection (cylinders, cones, hulls, halfspaces) are refused.
pub fn nesmino(
    a: &Shape,
    b: &Shape,
    b_in_a: &Isometry3<f64>,
    start: (Vector3<f64>, Vector3<f64>),
    settings: &BaselineSettings,
    smoothing: Smoothing,
    reference: Option<ReferenceStop>,
) -> Result<MinimumNormResult, CollisionError> {
    let project_a = |p: &Vector3<f64>| project_local(a, p);
    let project_b = |p: &Vector3<f64>| -> Result<Vector3<f64>, CollisionError> {
        let local = b_in_a.inverse_transform_point(&(*p).into()).coords;
        Ok(b_in_a
            .transform_point(&project_local(b, &local)?.into())
            .coords)
    };
    let mut diff = MinkowskiDifference::new(a, b, *b_in_a);
    let (mut pa, mut pb) = (project_a(&start.0)?, project_b(&start.1)?);
    let mu = match smoothing {
        Smoothing::Initial => (pa - pb).norm(),
        Smoothing::Fixed(mu) => mu,
    }
    .max(f64::MIN_POSITIVE);
    let (mut ya, mut yb) = (pa, pb);
    let mut t = 1.0_f64;
    let mut gap = f64::INFINITY;
    for k in 0..settings.max_iterations {
        let x = pa - pb;
        if let Some(stop) = stopped(&mut diff, &x, settings, reference, &mut gap) {
            return Ok(MinimumNormResult::at(pa, pb, k, gap, stop));
        }
        let step = smoothed_gradient(&(ya - yb), mu) * (mu / 2.0);
        let next_a = project_a(&(ya - step))?;
        let next_b = project_b(&(yb + step))?;
        let next_t = (1.0 + (1.0 + 4.0 * t * t).sqrt()) / 2.0;
        let beta = (t - 1.0) / next_t;
        ya = next_a + (next_a - pa) * beta;
        yb = next_b + (next_b - pb) * beta;
        (pa, pb, t) = (next_a, next_b, next_t);
    }
    let x = pa - pb;
    let stop = stopped(&mut diff, &x, settings, reference, &mut gap);
    Ok(MinimumNormResult::at(
        pa,
        pb,
        settings.max_iterations,
        gap,
        stop.unwrap_or(BaselineStop::IterationCap),
    ))
}

/// `∇f_μ(z) = z / max(μ, ‖z‖)`.
fn smoothed_gradient(z: &Vector3<f64>, mu: f64) -> Vector3<f64> {
    z / mu.max(z.norm())
}

/// The stopping test on `x ∈ D`: the reference rule when given, else the duality gap.
fn stopped(
    diff: &mut MinkowskiDifference<'_>,
    x: &Vector3<f64>,
    settings: &BaselineSettings,
    reference: Option<ReferenceStop>,
    gap: &mut f64,
) -> Option<BaselineStop> {
    if let Some(reference) = reference {
        return ((x - reference.x).norm() <= reference.radius).then_some(BaselineStop::Reference);
    }
    *gap = duality_gap(x, &diff.inflated_support(x).w);
    (*gap <= settings.tolerance).then_some(BaselineStop::DualityGap)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Translation3, UnitQuaternion};

    #[test]
    fn two_balls_converge_to_the_gap_between_them() {
        let a = Shape::sphere(0.1).unwrap();
        let b = Shape::ellipsoid(Vector3::repeat(0.2)).unwrap();
        let pose =
            Isometry3::from_parts(Translation3::new(0.0, 0.5, 0.0), UnitQuaternion::identity());
        let r = nesmino(
            &a,
            &b,
            &pose,
            (Vector3::zeros(), pose.translation.vector),
            &BaselineSettings::default(),
            Smoothing::Initial,
            None,
        )
        .unwrap();
        assert_eq!(r.stop, BaselineStop::DualityGap);
        assert!((r.distance - 0.2).abs() < 1e-6, "{}", r.distance);
    }
}
