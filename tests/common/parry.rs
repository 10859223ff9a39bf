//! parry3d as an oracle: our hulls and poses in parry's types, and the random hulls both
//! the cross-check tests and the collision benchmark draw. Shared by
//! `tests/collision/vs_parry.rs` and `benches/collision.rs`.

use std::sync::Arc;

use contactbench::collision::benchmark::random_direction;
use contactbench::collision::ConvexHull;
use nalgebra::{Isometry3, Vector3};
use parry3d_f64::math::{Pose, Rotation, Vector};
use parry3d_f64::shape::ConvexPolyhedron;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// The hull of `points` random points on an ellipsoid with semi-axes in [0.05, 0.2] m.
pub fn random_hull(rng: &mut ChaCha8Rng, points: usize) -> Arc<ConvexHull> {
    let radii = Vector3::from_fn(|_, _| rng.random_range(0.05..0.2));
    let cloud: Vec<Vector3<f64>> = (0..points)
        .map(|_| random_direction(rng).component_mul(&radii))
        .collect();
    Arc::new(ConvexHull::from_points(&cloud, "random cloud").expect("finite cloud"))
}

/// The same hull as a parry polyhedron.
pub fn parry_polyhedron(hull: &ConvexHull) -> ConvexPolyhedron {
    let pts: Vec<Vector> = hull
        .vertices()
        .iter()
        .map(|v| Vector::new(v.x, v.y, v.z))
        .collect();
    ConvexPolyhedron::from_convex_hull(&pts).expect("solid hull")
}

/// A nalgebra pose as a parry pose.
pub fn to_parry_pose(p: &Isometry3<f64>) -> Pose {
    let t = p.translation.vector;
    let q = p.rotation.coords;
    Pose::from_parts(
        Vector::new(t.x, t.y, t.z),
        Rotation::from_xyzw(q.x, q.y, q.z, q.w),
    )
}
