//! Cross-check against parry3d (independent GJK/EPA): random pairs of ellipsoids and of
//! convex hulls at signed distances from −0.1 to 1 (times the shapes' size); same signed
//! distance and normal within tolerance. parry runs on the same geometry: the ellipsoid
//! through parry's own `SupportMap` trait, the hulls through `ConvexPolyhedron`.

use std::sync::Arc;

use contactbench::collision::benchmark::{
    place_at_distance, random_direction, random_ellipsoid, random_rotation,
};
use contactbench::collision::{signed_distance, ContactSettings, ConvexHull, Core, Shape};
use nalgebra::{Isometry3, UnitQuaternion, Vector3};
use parry3d_f64::math::{Pose, Rotation, Vector};
use parry3d_f64::query::details::contact_support_map_support_map;
use parry3d_f64::shape::{ConvexPolyhedron, SupportMap};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

struct ParryEllipsoid(Vector3<f64>);

impl SupportMap for ParryEllipsoid {
    fn local_support_point(&self, dir: Vector) -> Vector {
        let r = self.0;
        let s = Vector::new(r.x * dir.x, r.y * dir.y, r.z * dir.z);
        let n = s.length();
        if n > 0.0 {
            Vector::new(r.x * s.x, r.y * s.y, r.z * s.z) / n
        } else {
            Vector::ZERO
        }
    }
}

fn to_parry_pose(p: &Isometry3<f64>) -> Pose {
    let t = p.translation.vector;
    let q = p.rotation.coords;
    Pose::from_parts(
        Vector::new(t.x, t.y, t.z),
        Rotation::from_xyzw(q.x, q.y, q.z, q.w),
    )
}

/// parry's signed distance and world normal for the pair (A at `pa`, B at `pb`).
fn parry_contact(
    a: &dyn SupportMap,
    pa: &Isometry3<f64>,
    b: &dyn SupportMap,
    pb: &Isometry3<f64>,
) -> Option<(f64, Vector3<f64>)> {
    let pos12 = to_parry_pose(&pa.inv_mul(pb));
    let c = contact_support_map_support_map(&pos12, a, b, 10.0)?;
    let n = Vector3::new(c.normal1.x, c.normal1.y, c.normal1.z);
    Some((c.dist, pa.rotation * n))
}

fn random_hull(rng: &mut ChaCha8Rng, points: usize) -> Arc<ConvexHull> {
    let radii = Vector3::from_fn(|_, _| rng.random_range(0.05..0.2));
    let cloud: Vec<Vector3<f64>> = (0..points)
        .map(|_| random_direction(rng).component_mul(&radii))
        .collect();
    Arc::new(ConvexHull::from_points(&cloud, "random cloud").expect("finite cloud"))
}

fn parry_polyhedron(hull: &ConvexHull) -> ConvexPolyhedron {
    let pts: Vec<Vector> = hull
        .vertices()
        .iter()
        .map(|v| Vector::new(v.x, v.y, v.z))
        .collect();
    ConvexPolyhedron::from_convex_hull(&pts).expect("solid hull")
}

/// Lower bound of the distance certified by the plane of normal `n` (GJK++ Alg. 2):
/// `min_B ⟨n, p⟩ − max_A ⟨n, p⟩`, independent of how `n` was found.
fn separating_plane_bound(
    a: &Shape,
    pa: &Isometry3<f64>,
    b: &Shape,
    pb: &Isometry3<f64>,
    n: &Vector3<f64>,
) -> f64 {
    use contactbench::collision::SupportMap as _;
    let top_a = pa.transform_point(
        &a.local_support(&pa.rotation.inverse_transform_vector(n))
            .into(),
    );
    let bottom_b = pb.transform_point(
        &b.local_support(&pb.rotation.inverse_transform_vector(&-n))
            .into(),
    );
    n.dot(&(bottom_b - top_a)) - a.radius - b.radius
}

struct Outcome {
    pairs: usize,
    normal_mismatches: usize,
}

fn cross_check<F>(mut make: F, pairs: usize, seed: u64, dist_tol: f64, normal_tol: f64) -> Outcome
where
    F: FnMut(&mut ChaCha8Rng) -> (Shape, Box<dyn SupportMap>, Shape, Box<dyn SupportMap>),
{
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let settings = ContactSettings::default();
    let mut normal_mismatches = 0;
    for i in 0..pairs {
        let (a, pa_shape, b, pb_shape) = make(&mut rng);
        let size = 0.1;
        let target = rng.random_range(-0.1..1.0) * size;
        let (ra, rb): (UnitQuaternion<f64>, UnitQuaternion<f64>) =
            (random_rotation(&mut rng), random_rotation(&mut rng));
        let dir = random_direction(&mut rng);
        let pair = place_at_distance(&a, &b, ra, rb, &dir, target).expect("valid pair");
        let ours = signed_distance(&a, &pair.pose_a, &b, &pair.pose_b, &settings, None)
            .expect("valid pair");
        assert!(ours.converged, "pair {i}: not converged");
        let (dist, normal) = parry_contact(&*pa_shape, &pair.pose_a, &*pb_shape, &pair.pose_b)
            .unwrap_or_else(|| panic!("pair {i}: parry found no contact"));
        assert!(
            (ours.distance - dist).abs() <= dist_tol,
            "pair {i}: distance {} vs parry {dist}",
            ours.distance
        );
        if ours.distance > 0.0 {
            let gap = ours.distance
                - separating_plane_bound(&a, &pair.pose_a, &b, &pair.pose_b, &ours.normal);
            assert!(
                gap <= 1e-6,
                "pair {i}: our normal certifies only {gap} below our distance"
            );
        }
        if (ours.normal - normal).norm() > normal_tol {
            normal_mismatches += 1;
        }
    }
    Outcome {
        pairs,
        normal_mismatches,
    }
}

#[test]
fn ellipsoids_agree_with_parry() {
    let outcome = cross_check(
        |rng| {
            let a = random_ellipsoid(rng, 0.05, 0.2).unwrap();
            let b = random_ellipsoid(rng, 0.05, 0.2).unwrap();
            let pa = match &a.core {
                Core::Ellipsoid { radii } => ParryEllipsoid(*radii),
                _ => unreachable!(),
            };
            let pb = match &b.core {
                Core::Ellipsoid { radii } => ParryEllipsoid(*radii),
                _ => unreachable!(),
            };
            (a, Box::new(pa), b, Box::new(pb))
        },
        2000,
        7,
        // parry's GJK stops earlier on smooth shapes (seen: 1.7e-6 above our value, and
        // GJK's value is an upper bound of the true distance); its normals differ from
        // ours by up to ~6e-3 on separated pairs, where ours are certified below.
        1e-5,
        1e-2,
    );
    assert!(
        outcome.normal_mismatches * 100 <= outcome.pairs,
        "{} of {} normals differ",
        outcome.normal_mismatches,
        outcome.pairs
    );
}

#[test]
fn convex_hulls_agree_with_parry() {
    let outcome = cross_check(
        |rng| {
            let ha = random_hull(rng, 60);
            let hb = random_hull(rng, 60);
            let pa = parry_polyhedron(&ha);
            let pb = parry_polyhedron(&hb);
            (
                Shape::convex_hull(ha),
                Box::new(pa),
                Shape::convex_hull(hb),
                Box::new(pb),
            )
        },
        2000,
        11,
        1e-6,
        1e-3,
    );
    assert!(
        outcome.normal_mismatches * 100 <= outcome.pairs,
        "{} of {} normals differ",
        outcome.normal_mismatches,
        outcome.pairs
    );
}
