//! Cross-check against parry3d (independent GJK/EPA): random pairs of ellipsoids and of
//! convex hulls at signed distances from −0.1 to 1 (times the shapes' size); same signed
//! distance and normal within tolerance. parry runs on the same geometry: the ellipsoid
//! through parry's own `SupportMap` trait, the hulls through `ConvexPolyhedron`.

use crate::common::parry as parry_oracle;

use contactbench::collision::benchmark::{
    place_at_distance, random_direction, random_ellipsoid, random_rotation,
};
use contactbench::collision::{signed_distance, ContactSettings, Core, Shape};
use nalgebra::{Isometry3, UnitQuaternion, Vector3};
use parry3d_f64::math::{Pose, Vector};
use parry3d_f64::query::details::contact_support_map_support_map;
use parry3d_f64::shape::SupportMap;
use parry_oracle::{parry_polyhedron, random_hull, to_parry_pose};
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

/// One of our primitives and parry's equivalent (parry's axial shapes are along y, ours
/// along z: `axial` says the parry pose needs the extra rotation z → y).
fn random_primitive(rng: &mut ChaCha8Rng) -> (Shape, parry3d_f64::shape::SharedShape, bool) {
    use parry3d_f64::shape::SharedShape;
    let r = rng.random_range(0.03..0.15);
    let h = rng.random_range(0.03..0.15);
    match rng.random_range(0..5) {
        0 => (Shape::sphere(r).unwrap(), SharedShape::ball(r), false),
        1 => {
            let he = Vector3::new(r, h, rng.random_range(0.03..0.15));
            (
                Shape::cuboid(he).unwrap(),
                SharedShape::cuboid(he.x, he.y, he.z),
                false,
            )
        }
        2 => (
            Shape::capsule(r, h).unwrap(),
            SharedShape::capsule_z(h, r),
            false,
        ),
        3 => (
            Shape::cylinder(r, h).unwrap(),
            SharedShape::cylinder(h, r),
            true,
        ),
        _ => (Shape::cone(r, h).unwrap(), SharedShape::cone(h, r), true),
    }
}

/// parry pose of a shape whose parry version has its axis along y.
fn parry_pose_of(pose: &Isometry3<f64>, axial: bool) -> Pose {
    if axial {
        let z_to_y =
            UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::FRAC_PI_2);
        to_parry_pose(&(pose * z_to_y))
    } else {
        to_parry_pose(pose)
    }
}

#[test]
fn primitives_agree_with_parry() {
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let settings = ContactSettings::default();
    let pairs = 1000;
    let mut normal_mismatches = 0;
    let mut parry_looser = 0;
    for i in 0..pairs {
        let (a, pa, axial_a) = random_primitive(&mut rng);
        let (b, pb, axial_b) = random_primitive(&mut rng);
        let target = rng.random_range(-0.01..0.1);
        let (ra, rb) = (random_rotation(&mut rng), random_rotation(&mut rng));
        let dir = random_direction(&mut rng);
        let pair = place_at_distance(&a, &b, ra, rb, &dir, target).expect("valid pair");
        let ours = signed_distance(&a, &pair.pose_a, &b, &pair.pose_b, &settings, None)
            .expect("valid pair");
        assert!(ours.converged, "pair {i}: not converged");
        let theirs = parry3d_f64::query::contact(
            &parry_pose_of(&pair.pose_a, axial_a),
            pa.as_ref(),
            &parry_pose_of(&pair.pose_b, axial_b),
            pb.as_ref(),
            10.0,
        )
        .expect("supported pair")
        .unwrap_or_else(|| panic!("pair {i}: parry found no contact"));
        let certified = ours.distance > 0.0
            && ours.distance
                - separating_plane_bound(&a, &pair.pose_a, &b, &pair.pose_b, &ours.normal)
                <= 1e-9;
        // Agreement to 1e-6, or parry is farther from the truth than our certified value.
        assert!(
            (ours.distance - theirs.dist).abs() <= 1e-6
                || (certified && ours.distance < theirs.dist),
            "pair {i} ({:?} / {:?}): distance {} vs parry {}",
            a.core,
            b.core,
            ours.distance,
            theirs.dist
        );
        parry_looser += usize::from((ours.distance - theirs.dist).abs() > 1e-6);
        let n = Vector3::new(theirs.normal1.x, theirs.normal1.y, theirs.normal1.z);
        if (ours.normal - n).norm() > 1e-3 {
            // A certified separated normal is the unique optimum (seen: parry's normals
            // off by up to 1e-2 on such pairs, with a larger distance than ours).
            normal_mismatches += usize::from(!certified);
        }
    }
    assert!(
        normal_mismatches * 50 <= pairs,
        "{normal_mismatches} of {pairs} normals differ"
    );
    eprintln!("primitives: parry looser than 1e-6 on {parry_looser} of {pairs} pairs");
}

/// A box against a sphere, in either order, is closed form: its signed distance, normal
/// and witness points match parry's (a projection of the centre on the box) to round-off,
/// the sphere's centre anywhere from inside the box to beyond its inflated reach.
#[test]
fn boxes_against_spheres_match_parry_to_round_off_in_either_order() {
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let settings = ContactSettings::default();
    let (mut inside, mut worst) = (0, 0.0_f64);
    for i in 0..2000 {
        let h = Vector3::from_fn(|_, _| rng.random_range(0.02..0.15));
        let r = rng.random_range(0.005..0.05);
        let cube = Shape::cuboid(h).expect("valid box");
        let ball = Shape::sphere(r).expect("valid sphere");
        let pose_box = Isometry3::from_parts(
            Vector3::from_fn(|_, _| rng.random_range(-1.0..1.0)).into(),
            random_rotation(&mut rng),
        );
        let local = Vector3::from_fn(|k, _| rng.random_range(-1.4..1.4) * (h[k] + r));
        inside += usize::from(local.abs().iter().zip(h.iter()).all(|(p, hk)| p < hk));
        let pose_ball = Isometry3::from_parts(
            (pose_box * nalgebra::Point3::from(local)).coords.into(),
            random_rotation(&mut rng),
        );
        let theirs = parry3d_f64::query::contact(
            &to_parry_pose(&pose_box),
            &parry3d_f64::shape::Cuboid::new(Vector::new(h.x, h.y, h.z)),
            &to_parry_pose(&pose_ball),
            &parry3d_f64::shape::Ball::new(r),
            10.0,
        )
        .expect("supported pair")
        .unwrap_or_else(|| panic!("pair {i}: parry found no contact"));
        let ab = signed_distance(&cube, &pose_box, &ball, &pose_ball, &settings, None)
            .expect("valid pair");
        let ba = signed_distance(&ball, &pose_ball, &cube, &pose_box, &settings, None)
            .expect("valid pair");
        let to_vector = |v: Vector| Vector3::new(v.x, v.y, v.z);
        let gaps = [
            (ab.distance - theirs.dist).abs(),
            (ab.normal - to_vector(theirs.normal1)).amax(),
            (ab.point_a - to_vector(theirs.point1)).amax(),
            (ab.point_b - to_vector(theirs.point2)).amax(),
            (ba.distance - ab.distance).abs(),
            (ba.normal + ab.normal).amax(),
            (ba.point_a - ab.point_b).amax(),
            (ba.point_b - ab.point_a).amax(),
        ];
        let gap = gaps.iter().copied().fold(0.0, f64::max);
        assert!(gap <= 1e-12, "pair {i}: gaps {gaps:?}");
        assert!(ab.converged && ab.gjk_iterations == 0 && ab.epa_iterations == 0);
        worst = worst.max(gap);
    }
    assert!(inside > 100, "{inside} centres inside their box");
    eprintln!("boxes against spheres: largest gap to parry {worst:e}");
}
