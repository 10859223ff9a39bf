//! Frank-Wolfe with line search on the Minkowski difference `D = A − B` (GJK++ and
//! "Collision Detection Accelerated", Alg. 1): the baseline GJK improves on by keeping a
//! simplex instead of a single point.
//!
//! Iteration `k`: `s_k = S_D(x_k)` (eq. 9), stop when the duality gap
//! `g_FW(x_k) = 2⟨x_k, x_k − s_k⟩ ≤ ε` (eq. 16-17), else `x_{k+1} = proj_[x_k, s_k](0)`
//! (the exact line search of eq. 13). The witness points follow the same convex
//! combinations, so `x_k = a_k − b_k` with `a_k ∈ A`, `b_k ∈ B` at every iteration.
//! Unlike GJK, it works on the whole shapes (cores inflated by their radii), so that its
//! answer is the shapes' distance.

use nalgebra::Vector3;

use super::gjk::MinkowskiDifference;
use super::simplex::SupportPoint;

/// Settings shared by the minimum-norm baselines (Frank-Wolfe, NESMINO).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BaselineSettings {
    /// Tolerance `ε` on the Frank-Wolfe duality gap (m², default 1e-8 as in the papers).
    pub tolerance: f64,
    /// Iteration cap (default 10⁶: Frank-Wolfe needs `O(1/ε)` iterations on polytopes).
    pub max_iterations: usize,
}

impl Default for BaselineSettings {
    fn default() -> Self {
        Self {
            tolerance: 1e-8,
            max_iterations: 1_000_000,
        }
    }
}

/// What stopped a baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaselineStop {
    /// The Frank-Wolfe duality gap reached the tolerance.
    DualityGap,
    /// The iterate came within the requested distance of a reference solution (the
    /// NESMINO stopping rule of "Collision Detection Accelerated", §IV-C).
    Reference,
    /// The iteration cap was hit.
    IterationCap,
}

/// The answer of a minimum-norm baseline (points in the frame of shape A, cores only).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MinimumNormResult {
    /// `‖x‖ = ‖a − b‖`, an upper bound on the core distance (m).
    pub distance: f64,
    /// The point of A's core.
    pub point_a: Vector3<f64>,
    /// The point of B's core.
    pub point_b: Vector3<f64>,
    /// Iterations: updates of the iterate (Frank-Wolfe's line searches, NESMINO's pairs
    /// of projections); the support call that certifies convergence is not counted.
    pub iterations: usize,
    /// The last Frank-Wolfe duality gap computed (m²).
    pub duality_gap: f64,
    /// What stopped the baseline.
    pub stop: BaselineStop,
}

impl MinimumNormResult {
    /// The answer at the witness points `point_a` and `point_b`, with the distance between them.
    pub(crate) fn at(
        point_a: Vector3<f64>,
        point_b: Vector3<f64>,
        iterations: usize,
        duality_gap: f64,
        stop: BaselineStop,
    ) -> Self {
        Self {
            distance: (point_a - point_b).norm(),
            point_a,
            point_b,
            iterations,
            duality_gap,
            stop,
        }
    }

    /// The iterate `x = a − b`.
    pub fn x(&self) -> Vector3<f64> {
        self.point_a - self.point_b
    }
}

/// `g_FW(x) = 2⟨x, x − s⟩` (eq. 17).
pub fn duality_gap(x: &Vector3<f64>, s: &Vector3<f64>) -> f64 {
    2.0 * x.dot(&(x - s))
}

/// Frank-Wolfe from `start`, a point of `D` with its witnesses (the papers take the
/// difference of the shapes' centres, `x₀ = c¹ − c²`; [`MinkowskiDifference::inflated_support`]
/// gives one otherwise).
pub fn frank_wolfe(
    diff: &mut MinkowskiDifference<'_>,
    start: &SupportPoint,
    settings: &BaselineSettings,
) -> MinimumNormResult {
    let (mut a, mut b) = (start.a, start.b);
    let mut gap = f64::INFINITY;
    for k in 0..settings.max_iterations {
        let x = a - b;
        let s = diff.inflated_support(&x);
        gap = duality_gap(&x, &s.w);
        if gap <= settings.tolerance {
            return MinimumNormResult::at(a, b, k, gap, BaselineStop::DualityGap);
        }
        let t = segment_step(&x, &s.w);
        a += (s.a - a) * t;
        b += (s.b - b) * t;
    }
    MinimumNormResult::at(
        a,
        b,
        settings.max_iterations,
        gap,
        BaselineStop::IterationCap,
    )
}

/// The step `t ∈ [0, 1]` with `x + t (s − x) = proj_[x, s](0)` (eq. 13).
fn segment_step(x: &Vector3<f64>, s: &Vector3<f64>) -> f64 {
    let edge = s - x;
    let len2 = edge.norm_squared();
    if len2 > 0.0 {
        (-x.dot(&edge) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collision::Shape;
    use nalgebra::{Isometry3, Translation3, UnitQuaternion};

    #[test]
    fn two_spheres_converge_to_the_gap_between_them() {
        let (a, b) = (Shape::sphere(0.0).unwrap(), Shape::sphere(0.0).unwrap());
        let pose =
            Isometry3::from_parts(Translation3::new(0.3, 0.4, 0.0), UnitQuaternion::identity());
        let mut diff = MinkowskiDifference::new(&a, &b, pose);
        let start = diff.support(&Vector3::x());
        let r = frank_wolfe(&mut diff, &start, &BaselineSettings::default());
        assert_eq!(r.stop, BaselineStop::DualityGap);
        assert!((r.distance - 0.5).abs() < 1e-12, "{}", r.distance);
    }
}
