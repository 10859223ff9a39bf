//! The points through which a convex shape rests on a plane.
//!
//! A pair of shapes gives one contact (its deepest point), which is exact for a strictly
//! convex shape on a plane but not for a flat face: a box lying on the ground would touch
//! it at one corner and rock. A shape resting on a plane `{⟨n, p⟩ ≤ c}` touches it on the
//! convex hull of its extreme points in `−n`, so it rests on the plane through the
//! vertices of its core (each inflated by the shape's radius): a box by its 8 corners, a
//! capsule by the balls at its segment's ends, a sphere by itself, a cylinder or a cone by
//! points of its rims, a mesh by its hull's vertices. Each point becomes a sphere of the
//! shape's radius that touches the ground alone, so that every corner of a face carries
//! its own contact.

use nalgebra::Vector3;

use super::shape::{Core, Shape};
use super::support::SupportMap;

/// Points on each rim of a cylinder or a cone: the polygon inscribed in a rim of radius
/// `r` lies within `r (1 − cos(π / 16)) ≈ 0.019 r` of it.
pub const RIM_POINTS: usize = 16;

/// A hull with at most this many vertices rests on all of them; a larger one on its
/// extreme vertices in [`HULL_DIRECTIONS`] directions.
pub const MAX_HULL_POINTS: usize = 64;

/// Directions (evenly spread on the sphere) whose extreme vertices stand for a large hull.
pub const HULL_DIRECTIONS: usize = 128;

/// A sphere through which a shape touches a plane, in the shape's frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroundPoint {
    /// Centre (m, shape frame).
    pub centre: Vector3<f64>,
    /// Radius (m): the shape's inflation radius.
    pub radius: f64,
}

/// The points through which `shape` rests on a plane (module docs); empty for the
/// ground's own shapes (a halfspace, a height field).
pub fn ground_points(shape: &Shape) -> Vec<GroundPoint> {
    let centres = match &shape.core {
        Core::Point => vec![Vector3::zeros()],
        Core::Segment { half_length } => vec![
            Vector3::new(0.0, 0.0, -half_length),
            Vector3::new(0.0, 0.0, *half_length),
        ],
        Core::Cuboid { half_extents } => box_corners(half_extents),
        Core::Cylinder {
            radius,
            half_length,
        } => {
            let mut points = rim(*radius, -half_length);
            points.extend(rim(*radius, *half_length));
            points
        }
        Core::Cone {
            radius,
            half_length,
        } => {
            let mut points = rim(*radius, -half_length);
            points.push(Vector3::new(0.0, 0.0, *half_length));
            points
        }
        Core::Ellipsoid { .. } => extreme_points(shape),
        Core::Hull(hull) if hull.vertices().len() <= MAX_HULL_POINTS => hull.vertices().to_vec(),
        Core::Hull(_) => extreme_points(shape),
        Core::Halfspace { .. } | Core::HeightField(_) => Vec::new(),
    };
    centres
        .into_iter()
        .map(|centre| GroundPoint {
            centre,
            radius: shape.radius,
        })
        .collect()
}

/// The 8 corners `(±h.x, ±h.y, ±h.z)`.
fn box_corners(h: &Vector3<f64>) -> Vec<Vector3<f64>> {
    let mut corners = Vec::with_capacity(8);
    for sz in [-1.0, 1.0] {
        for sy in [-1.0, 1.0] {
            for sx in [-1.0, 1.0] {
                corners.push(Vector3::new(sx * h.x, sy * h.y, sz * h.z));
            }
        }
    }
    corners
}

/// [`RIM_POINTS`] points of the circle of `radius` at height `z`.
fn rim(radius: f64, z: f64) -> Vec<Vector3<f64>> {
    (0..RIM_POINTS)
        .map(|k| {
            let angle = std::f64::consts::TAU * k as f64 / RIM_POINTS as f64;
            Vector3::new(radius * angle.cos(), radius * angle.sin(), z)
        })
        .collect()
}

/// The distinct support points of `shape`'s core in [`HULL_DIRECTIONS`] directions of a
/// Fibonacci lattice on the sphere.
fn extreme_points(shape: &Shape) -> Vec<Vector3<f64>> {
    let golden = std::f64::consts::PI * (3.0 - 5.0_f64.sqrt());
    let mut points: Vec<Vector3<f64>> = Vec::new();
    for k in 0..HULL_DIRECTIONS {
        let z = 1.0 - 2.0 * (k as f64 + 0.5) / HULL_DIRECTIONS as f64;
        let r = (1.0 - z * z).sqrt();
        let angle = golden * k as f64;
        let p = shape.local_support(&Vector3::new(r * angle.cos(), r * angle.sin(), z));
        if !points.contains(&p) {
            points.push(p);
        }
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_box_rests_on_its_eight_corners() {
        let points = ground_points(&Shape::cuboid(Vector3::new(0.1, 0.2, 0.3)).unwrap());
        assert_eq!(points.len(), 8);
        assert!(points
            .iter()
            .all(|p| p.radius == 0.0 && (p.centre.z.abs() - 0.3).abs() < 1e-15));
    }

    #[test]
    fn a_capsule_rests_on_the_balls_at_its_ends() {
        let points = ground_points(&Shape::capsule(0.05, 0.2).unwrap());
        assert_eq!(points.len(), 2);
        assert!(points.iter().all(|p| p.radius == 0.05));
    }

    #[test]
    fn a_cylinder_rests_on_its_rims() {
        let points = ground_points(&Shape::cylinder(0.1, 0.2).unwrap());
        assert_eq!(points.len(), 2 * RIM_POINTS);
        assert!(points
            .iter()
            .all(|p| (p.centre.xy().norm() - 0.1).abs() < 1e-15));
    }
}
