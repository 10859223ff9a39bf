//! Euclidean projections onto shapes, in the shape's own frame: what NESMINO uses instead
//! of support points. Closed form for points, segments and boxes; a safeguarded Newton
//! iteration on the Lagrange multiplier for ellipsoids; an inflation radius `r` moves the
//! core's projection `q` towards `p` by at most `r`, since the projection onto
//! `C ⊕ B(0, r)` is `p` when `‖p − q‖ ≤ r` and `q + r (p − q)/‖p − q‖` otherwise.

use nalgebra::Vector3;

use super::error::CollisionError;
use super::shape::{Core, Shape};

/// Newton iterations allowed for the ellipsoid's multiplier (it converges in < 30).
const ELLIPSOID_NEWTON_CAP: usize = 100;

/// The name of a shape's core, for messages.
pub fn core_name(core: &Core) -> &'static str {
    match core {
        Core::Point => "sphere",
        Core::Segment { .. } => "capsule",
        Core::Cuboid { .. } => "box",
        Core::Cylinder { .. } => "cylinder",
        Core::Cone { .. } => "cone",
        Core::Ellipsoid { .. } => "ellipsoid",
        Core::Hull(_) => "convex hull",
        Core::Halfspace { .. } => "halfspace",
        Core::HeightField(_) => "height field",
    }
}

/// The point of `shape` (core inflated by its radius) closest to `p` (local frame).
pub fn project_local(shape: &Shape, p: &Vector3<f64>) -> Result<Vector3<f64>, CollisionError> {
    let q = match &shape.core {
        Core::Point => Vector3::zeros(),
        Core::Segment { half_length } => {
            Vector3::new(0.0, 0.0, p.z.clamp(-half_length, *half_length))
        }
        Core::Cuboid { half_extents } => p.sup(&-half_extents).inf(half_extents),
        Core::Ellipsoid { radii } => project_on_ellipsoid(radii, p),
        other => {
            return Err(CollisionError::UnsupportedShape {
                algorithm: "NESMINO (projection)",
                core: core_name(other),
            })
        }
    };
    Ok(inflate(&q, p, shape.radius))
}

/// Projection onto `core ⊕ B(0, r)` from the core's projection `q` of `p`.
fn inflate(q: &Vector3<f64>, p: &Vector3<f64>, r: f64) -> Vector3<f64> {
    let d = p - q;
    let norm = d.norm();
    if norm <= r {
        *p
    } else {
        q + d * (r / norm)
    }
}

/// Projection onto `{x : Σ (xᵢ/rᵢ)² ≤ 1}`: `xᵢ = rᵢ² pᵢ / (rᵢ² + λ)` with `λ ≥ 0` the root
/// of `φ(λ) = Σ rᵢ² pᵢ² / (rᵢ² + λ)² − 1`, convex and decreasing, so that Newton's
/// method from `λ = 0` increases monotonically to it.
fn project_on_ellipsoid(radii: &Vector3<f64>, p: &Vector3<f64>) -> Vector3<f64> {
    if radii.min() <= 0.0 {
        return p.sup(&-radii).inf(radii);
    }
    let inside = p.component_div(radii).norm_squared() <= 1.0;
    if inside {
        return *p;
    }
    let r2 = radii.component_mul(radii);
    let mut lambda = 0.0_f64;
    for _ in 0..ELLIPSOID_NEWTON_CAP {
        let (phi, dphi) = (0..3).fold((-1.0, 0.0), |(f, df), i| {
            let t = radii[i] * p[i] / (r2[i] + lambda);
            (f + t * t, df - 2.0 * t * t / (r2[i] + lambda))
        });
        if phi <= 0.0 || dphi == 0.0 {
            break;
        }
        let next = lambda - phi / dphi;
        if next <= lambda {
            break;
        }
        lambda = next;
    }
    Vector3::from_fn(|i, _| r2[i] * p[i] / (r2[i] + lambda))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_outside_a_sphere_lands_on_its_surface() {
        let s = Shape::ellipsoid(Vector3::repeat(0.5)).unwrap();
        let q = project_local(&s, &Vector3::new(3.0, 4.0, 0.0)).unwrap();
        assert!((q - Vector3::new(0.3, 0.4, 0.0)).norm() < 1e-12, "{q}");
    }

    #[test]
    fn the_ellipsoid_projection_is_normal_to_the_surface() {
        let radii = Vector3::new(0.1, 0.2, 0.05);
        let s = Shape::ellipsoid(radii).unwrap();
        let p = Vector3::new(0.3, -0.1, 0.2);
        let q = project_local(&s, &p).unwrap();
        assert!((q.component_div(&radii).norm() - 1.0).abs() < 1e-12);
        // p − q is along the outward normal ∇(Σ xᵢ²/rᵢ²) ∝ q/r².
        let normal = q.component_div(&radii.component_mul(&radii));
        assert!((p - q).cross(&normal).norm() < 1e-10 * normal.norm());
    }

    #[test]
    fn an_inflated_box_projects_on_its_rounded_corner() {
        let s = Shape::cuboid(Vector3::repeat(1.0))
            .unwrap()
            .inflated(0.5)
            .unwrap();
        let q = project_local(&s, &Vector3::new(3.0, 1.0, 1.0)).unwrap();
        assert!((q - Vector3::new(1.5, 1.0, 1.0)).norm() < 1e-12, "{q}");
    }

    #[test]
    fn a_cylinder_is_refused_by_name() {
        let s = Shape::cylinder(1.0, 1.0).unwrap();
        let e = project_local(&s, &Vector3::x()).unwrap_err();
        assert!(e.to_string().contains("cylinder"), "{e}");
    }
}
