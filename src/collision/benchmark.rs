//! The GJK++ §IV protocol: seeded random pairs (ellipsoids with semi-axes drawn from
//! `N(0.1, 0.025)` m, convex hulls) with uniform random orientations, each pose placed at
//! a list of fixed signed distances along the axis of its closest points, GJK started
//! from the difference of the bounding-box centres, and each problem timed as the mean
//! of the fastest 90 % of 100 runs. Used by `contactbench collision-bench`, the collision
//! pages of `contactbench paper` and `benches/collision.rs`.

use std::time::Instant;

use nalgebra::{Isometry3, Quaternion, Translation3, UnitQuaternion, Vector3};
use rand::{Rng, RngExt};

use super::contact::{local_centre, signed_distance, ContactSettings};
use super::error::CollisionError;
use super::gjk::{gjk, GjkQuery, GjkResult, GjkSettings, GjkVariant, MinkowskiDifference};
use super::shape::{Core, Shape};
use super::simplex::Simplex;

/// Two shapes placed at a known signed distance.
#[derive(Debug, Clone)]
pub struct PlacedPair {
    /// Shape A.
    pub a: Shape,
    /// Shape B.
    pub b: Shape,
    /// Pose of A in the world.
    pub pose_a: Isometry3<f64>,
    /// Pose of B in the world.
    pub pose_b: Isometry3<f64>,
    /// Signed distance measured after placement (vanilla GJK + EPA, m).
    pub distance: f64,
}

/// A uniformly distributed rotation (Shoemake's method, three uniforms).
pub fn random_rotation<R: Rng>(rng: &mut R) -> UnitQuaternion<f64> {
    let (u1, u2, u3): (f64, f64, f64) = (rng.random(), rng.random(), rng.random());
    let tau = std::f64::consts::TAU;
    let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
    UnitQuaternion::from_quaternion(Quaternion::new(
        b * (tau * u3).cos(),
        a * (tau * u2).sin(),
        a * (tau * u2).cos(),
        b * (tau * u3).sin(),
    ))
}

/// A uniformly distributed unit vector.
pub fn random_direction<R: Rng>(rng: &mut R) -> Vector3<f64> {
    let z: f64 = rng.random_range(-1.0..1.0);
    let phi: f64 = rng.random_range(0.0..std::f64::consts::TAU);
    let r = (1.0 - z * z).max(0.0).sqrt();
    Vector3::new(r * phi.cos(), r * phi.sin(), z)
}

/// An ellipsoid with semi-axes drawn uniformly in `[min, max]` (m).
pub fn random_ellipsoid<R: Rng>(rng: &mut R, min: f64, max: f64) -> Result<Shape, CollisionError> {
    Shape::ellipsoid(Vector3::from_fn(|_, _| rng.random_range(min..=max)))
}

/// A standard normal draw (Box-Muller, from two uniforms in (0, 1]).
pub fn standard_normal<R: Rng>(rng: &mut R) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// An ellipsoid with semi-axes drawn from `N(mean, std)` (m), each floored at
/// `mean / 10` so that no draw is flat or negative (the papers' ellipsoids:
/// `N(0.1, 0.025)`, where the floor is 4 standard deviations away).
pub fn normal_ellipsoid<R: Rng>(rng: &mut R, mean: f64, std: f64) -> Result<Shape, CollisionError> {
    Shape::ellipsoid(Vector3::from_fn(|_, _| {
        (mean + std * standard_normal(rng)).max(mean / 10.0)
    }))
}

/// Radius of a ball around the frame's origin containing the shape (m).
pub fn bounding_radius(shape: &Shape) -> f64 {
    let core = match &shape.core {
        Core::Point => 0.0,
        Core::Segment { half_length } => *half_length,
        Core::Cuboid { half_extents } => half_extents.norm(),
        Core::Cylinder {
            radius,
            half_length,
        }
        | Core::Cone {
            radius,
            half_length,
        } => radius.hypot(*half_length),
        Core::Ellipsoid { radii } => radii.max(),
        Core::Hull(hull) => hull.vertices().iter().fold(0.0_f64, |m, v| m.max(v.norm())),
        Core::Halfspace { .. } | Core::HeightField(_) => f64::INFINITY,
    };
    core + shape.radius
}

/// Places B (orientation `rotation_b`) around A (at the origin, orientation
/// `rotation_a`) along `direction` so that their signed distance is close to `target`:
/// B starts far away and is moved along the contact normal by the distance error, which is
/// exact for separated targets. Returns the measured signed distance with the poses.
pub fn place_at_distance(
    a: &Shape,
    b: &Shape,
    rotation_a: UnitQuaternion<f64>,
    rotation_b: UnitQuaternion<f64>,
    direction: &Vector3<f64>,
    target: f64,
) -> Result<PlacedPair, CollisionError> {
    let settings = ContactSettings::default();
    let pose_a = Isometry3::from_parts(Translation3::identity(), rotation_a);
    let far = bounding_radius(a) + bounding_radius(b) + target.abs() + 1.0;
    let mut pose_b = Isometry3::from_parts(Translation3::from(direction * far), rotation_b);
    let first = signed_distance(a, &pose_a, b, &pose_b, &settings, None)?;
    pose_b.translation.vector += first.normal * (target - first.distance);
    let measured = signed_distance(a, &pose_a, b, &pose_b, &settings, None)?;
    Ok(PlacedPair {
        a: a.clone(),
        b: b.clone(),
        pose_a,
        pose_b,
        distance: measured.distance,
    })
}

/// One random relative pose of `a` and `b` (uniform orientations and direction) set to
/// each of `targets` (m): B comes from far away along the direction, then moves along the
/// normal of the closest points by the distance error, as GJK++ §IV does ("we translate
/// the shapes along the axis given by their closest points"). The signed distance of each
/// placement is measured (GJK, or EPA when the shapes overlap).
pub fn place_at_distances<R: Rng>(
    rng: &mut R,
    a: &Shape,
    b: &Shape,
    targets: &[f64],
) -> Result<Vec<PlacedPair>, CollisionError> {
    let (rotation_a, rotation_b) = (random_rotation(rng), random_rotation(rng));
    let direction = random_direction(rng);
    let settings = ContactSettings::default();
    let pose_a = Isometry3::from_parts(Translation3::identity(), rotation_a);
    let far = bounding_radius(a) + bounding_radius(b) + 1.0;
    let far_pose = Isometry3::from_parts(Translation3::from(direction * far), rotation_b);
    let first = signed_distance(a, &pose_a, b, &far_pose, &settings, None)?;
    targets
        .iter()
        .map(|target| {
            let mut pose_b = far_pose;
            pose_b.translation.vector += first.normal * (target - first.distance);
            let measured = signed_distance(a, &pose_a, b, &pose_b, &settings, None)?;
            Ok(PlacedPair {
                a: a.clone(),
                b: b.clone(),
                pose_a,
                pose_b,
                distance: measured.distance,
            })
        })
        .collect()
}

/// GJK++'s initial guess `x₀ = c¹ − c²`, the difference of the shapes' bounding-box
/// centres, in the frame of A.
pub fn centre_guess(pair: &PlacedPair) -> Vector3<f64> {
    let b_in_a = pair.pose_a.inv_mul(&pair.pose_b);
    local_centre(&pair.a) - b_in_a.transform_point(&local_centre(&pair.b).into()).coords
}

/// One GJK run on a placed pair from `x0` (A's frame).
pub fn run_gjk_from(
    pair: &PlacedPair,
    x0: &Vector3<f64>,
    settings: &GjkSettings,
    simplex: &mut Simplex,
) -> GjkResult {
    let b_in_a = pair.pose_a.inv_mul(&pair.pose_b);
    let mut diff = MinkowskiDifference::new(&pair.a, &pair.b, b_in_a);
    gjk(&mut diff, x0, settings, simplex)
}

/// One GJK run on a placed pair from the bounding-box centres ([`centre_guess`]).
pub fn run_gjk(pair: &PlacedPair, settings: &GjkSettings, simplex: &mut Simplex) -> GjkResult {
    run_gjk_from(pair, &centre_guess(pair), settings, simplex)
}

/// Mean wall time (µs) of the fastest `keep` fraction of `runs` timed calls of `f`
/// (GJK++ §IV: "we solve each problem 100 times ... and report the average of the 90 %
/// lowest computation times").
pub fn mean_of_fastest<F: FnMut()>(runs: usize, keep: f64, mut f: F) -> f64 {
    let runs = runs.max(1);
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let kept = ((runs as f64 * keep).round() as usize).clamp(1, runs);
    times[..kept].iter().sum::<f64>() / kept as f64
}

/// GJK settings for a variant and query; for a collision query the threshold is the
/// sum of the inflation radii (the cores collide when closer than that).
pub fn variant_settings(variant: GjkVariant, collision: bool, pair: &PlacedPair) -> GjkSettings {
    GjkSettings {
        variant,
        query: if collision {
            GjkQuery::Collision {
                threshold: pair.a.radius + pair.b.radius,
            }
        } else {
            GjkQuery::Distance
        },
        ..GjkSettings::default()
    }
}

/// Iterations and mean wall time (µs, over `repeats` runs) of one variant on one pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measurement {
    /// GJK iterations.
    pub iterations: usize,
    /// Mean time of one call (µs).
    pub micros: f64,
    /// False when GJK hit its iteration cap.
    pub converged: bool,
}

/// Measures one variant on one pair: iterations of one run; time of one call as the
/// smallest mean over three batches of `repeats` runs (robust to a busy machine).
pub fn measure(pair: &PlacedPair, settings: &GjkSettings, repeats: usize) -> Measurement {
    let mut simplex = Simplex::default();
    let result = run_gjk(pair, settings, &mut simplex);
    let repeats = repeats.max(1);
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let start = Instant::now();
        for _ in 0..repeats {
            std::hint::black_box(run_gjk(std::hint::black_box(pair), settings, &mut simplex));
        }
        best = best.min(start.elapsed().as_secs_f64() * 1e6 / repeats as f64);
    }
    Measurement {
        iterations: result.iterations(),
        micros: best,
        converged: !matches!(result, GjkResult::NotConverged { .. }),
    }
}
