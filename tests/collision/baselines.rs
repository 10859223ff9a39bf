//! The baselines of the collision papers (Frank-Wolfe, NESMINO, the collision QP solved by
//! clarabel) reach the same distance as GJK, to 1e-6 m, on pairs with a closed-form
//! distance and on random pairs; at the papers' tolerance 1e-8 the Frank-Wolfe duality gap
//! is what stops every method, except Frank-Wolfe on a shape resting on a face, its
//! `O(1/ε)` worst case, where it hits its iteration cap.

use std::sync::Arc;

use contactbench::collision::benchmark::{
    centre_guess, normal_ellipsoid, place_at_distances, run_gjk_from, PlacedPair,
};
use contactbench::collision::frank_wolfe::{frank_wolfe, BaselineSettings, BaselineStop};
use contactbench::collision::gjk::MinkowskiDifference;
use contactbench::collision::nesmino::{nesmino, Smoothing};
use contactbench::collision::qp::collision_qp;
use contactbench::collision::simplex::Simplex;
use contactbench::collision::{
    ConvexHull, Core, GjkQuery, GjkResult, GjkSettings, GjkVariant, MomentumSchedule,
    SeparationStop, Shape,
};
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const TOLERANCE: f64 = 1e-8;

const VARIANTS: [(GjkVariant, MomentumSchedule); 6] = [
    (GjkVariant::Vanilla, MomentumSchedule::Coal),
    (GjkVariant::Polyak, MomentumSchedule::Coal),
    (GjkVariant::Polyak, MomentumSchedule::Paper),
    (GjkVariant::PolyakNormalized, MomentumSchedule::Coal),
    (
        GjkVariant::Nesterov { normalize: true },
        MomentumSchedule::Coal,
    ),
    (
        GjkVariant::Nesterov { normalize: false },
        MomentumSchedule::Paper,
    ),
];

fn placed(a: Shape, b: Shape, pose_b: Isometry3<f64>) -> PlacedPair {
    PlacedPair {
        a,
        b,
        pose_a: Isometry3::identity(),
        pose_b,
        distance: f64::NAN,
    }
}

fn at(x: f64, y: f64, z: f64) -> Isometry3<f64> {
    Isometry3::from_parts(Translation3::new(x, y, z), UnitQuaternion::identity())
}

/// GJK's distance between the shapes (cores' distance less the radii) and what stopped it.
fn gjk_distance(
    pair: &PlacedPair,
    variant: GjkVariant,
    schedule: MomentumSchedule,
) -> (f64, SeparationStop) {
    let settings = GjkSettings {
        variant,
        schedule,
        query: GjkQuery::Distance,
        tolerance: TOLERANCE,
        max_iterations: 1000,
    };
    let mut simplex = Simplex::default();
    match run_gjk_from(pair, &centre_guess(pair), &settings, &mut simplex) {
        GjkResult::Separated { distance, stop, .. } => {
            (distance - pair.a.radius - pair.b.radius, stop)
        }
        other => panic!("{variant:?} on a separated pair: {other:?}"),
    }
}

/// Whether Frank-Wolfe is expected to reach the tolerance within its cap.
#[derive(Clone, Copy, PartialEq)]
enum FrankWolfe {
    Converges,
    StallsOnAFace,
}

/// The baselines' distances (NESMINO only where both shapes have a projection); each
/// must have stopped on its criterion.
fn baseline_distances(pair: &PlacedPair, fw_expected: FrankWolfe) -> Vec<(&'static str, f64)> {
    let b_in_a = pair.pose_a.inv_mul(&pair.pose_b);
    let settings = BaselineSettings {
        tolerance: TOLERANCE,
        max_iterations: 1_000_000,
    };
    let mut diff = MinkowskiDifference::new(&pair.a, &pair.b, b_in_a);
    let start = diff.inflated_support(&centre_guess(pair));
    let fw = frank_wolfe(&mut diff, &start, &settings);
    let mut out = Vec::new();
    match fw_expected {
        FrankWolfe::Converges => {
            assert_eq!(fw.stop, BaselineStop::DualityGap, "Frank-Wolfe: {fw:?}");
            assert!(fw.duality_gap <= TOLERANCE);
            out.push(("Frank-Wolfe", fw.distance));
        }
        FrankWolfe::StallsOnAFace => {
            assert_eq!(fw.stop, BaselineStop::IterationCap, "Frank-Wolfe: {fw:?}");
            assert!(fw.duality_gap > TOLERANCE);
        }
    }
    let hulls = [&pair.a, &pair.b]
        .iter()
        .any(|s| matches!(s.core, Core::Hull(_)));
    for (name, smoothing) in [
        ("NESMINO", Smoothing::Initial),
        ("NESMINO μ = 1e-4", Smoothing::Fixed(1e-4)),
    ] {
        match nesmino(
            &pair.a,
            &pair.b,
            &b_in_a,
            (start.a, start.b),
            &settings,
            smoothing,
            None,
        ) {
            Ok(nes) => {
                assert!(!hulls);
                assert_eq!(nes.stop, BaselineStop::DualityGap, "{name}: {nes:?}");
                out.push((name, nes.distance));
            }
            Err(e) => assert!(hulls && e.to_string().contains("convex hull"), "{e}"),
        }
    }
    let qp = collision_qp(&pair.a, &pair.b, &b_in_a).expect("the QP is solved");
    out.push(("QP", qp.distance));
    out
}

fn check(pair: &PlacedPair, expected: f64, what: &str) {
    check_with(pair, expected, what, FrankWolfe::Converges);
}

fn check_with(pair: &PlacedPair, expected: f64, what: &str, fw: FrankWolfe) {
    for (variant, schedule) in VARIANTS {
        let (d, stop) = gjk_distance(pair, variant, schedule);
        assert!(
            (d - expected).abs() < 1e-6,
            "{what}: GJK {variant:?} {schedule:?} {d} vs {expected}"
        );
        assert_eq!(
            stop,
            SeparationStop::DualityGap,
            "{what}: {variant:?} {schedule:?}"
        );
    }
    for (name, d) in baseline_distances(pair, fw) {
        assert!(
            (d - expected).abs() < 1e-6,
            "{what}: {name} {d} vs {expected}"
        );
    }
}

#[test]
fn every_method_finds_the_gap_between_two_spheres() {
    let pair = placed(
        Shape::sphere(0.1).unwrap(),
        Shape::sphere(0.2).unwrap(),
        at(0.3, 0.4, 0.0),
    );
    check(&pair, 0.2, "sphere-sphere");
}

#[test]
fn every_method_finds_the_gap_between_axis_aligned_boxes() {
    let a = Shape::cuboid(Vector3::new(0.1, 0.2, 0.3)).unwrap();
    let b = Shape::cuboid(Vector3::new(0.2, 0.1, 0.1)).unwrap();
    // Face to face along x: the faces overlap in y and z.
    check(
        &placed(a.clone(), b.clone(), at(0.5, 0.05, -0.1)),
        0.2,
        "box-box, faces",
    );
    // Edge to edge: 0.2 m apart along x and along y.
    check(
        &placed(a, b, at(0.5, 0.5, 0.0)),
        0.08_f64.sqrt(),
        "box-box, edges",
    );
}

#[test]
fn every_method_finds_the_height_of_a_tilted_ellipsoid_above_a_plate() {
    let radii = Vector3::new(0.1, 0.2, 0.05);
    let rotation = UnitQuaternion::from_euler_angles(0.4, -0.3, 1.1);
    let plate = Shape::cuboid(Vector3::new(0.5, 0.5, 0.01)).unwrap();
    let ellipsoid = Shape::ellipsoid(radii).unwrap();
    let height = 0.5;
    // Lowest point of the ellipsoid: its centre less √(e_zᵀ R D² Rᵀ e_z).
    let local_z = rotation.inverse_transform_vector(&Vector3::z());
    let reach = radii.component_mul(&local_z).norm();
    let pair = placed(
        plate,
        ellipsoid,
        Isometry3::from_parts(Translation3::new(0.1, -0.2, height), rotation),
    );
    check_with(
        &pair,
        height - reach - 0.01,
        "ellipsoid-plate",
        FrankWolfe::StallsOnAFace,
    );
}

#[test]
fn every_method_finds_the_gap_between_an_ellipsoid_and_a_ball_on_its_axis() {
    // A point on a principal axis outside an ellipsoid is nearest to that axis' vertex.
    let radii = Vector3::new(0.1, 0.2, 0.05);
    let rotation = UnitQuaternion::from_euler_angles(0.4, -0.3, 1.1);
    let ellipsoid = Shape::ellipsoid(radii).unwrap();
    for (axis, h) in [(0, 0.4), (1, 0.35), (2, 0.3)] {
        let centre = rotation * Vector3::ith(axis, h);
        let ball = Shape::sphere(0.05).unwrap();
        let pair = PlacedPair {
            pose_a: Isometry3::from_parts(Translation3::identity(), rotation),
            ..placed(
                ellipsoid.clone(),
                ball,
                Isometry3::from_parts(centre.into(), UnitQuaternion::identity()),
            )
        };
        check(
            &pair,
            h - radii[axis] - 0.05,
            &format!("ellipsoid-ball on axis {axis}"),
        );
    }
}

#[test]
fn on_random_ellipsoids_and_hulls_every_method_agrees_with_gjk() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut pairs = Vec::new();
    for _ in 0..20 {
        let a = normal_ellipsoid(&mut rng, 0.1, 0.025).unwrap();
        let b = normal_ellipsoid(&mut rng, 0.1, 0.025).unwrap();
        pairs.extend(place_at_distances(&mut rng, &a, &b, &[0.01, 0.05, 0.3]).unwrap());
    }
    // Hulls of points on ellipsoids: the QP sees their faces, the others their vertices.
    for _ in 0..5 {
        let hull = |rng: &mut ChaCha8Rng| {
            let e = normal_ellipsoid(rng, 0.1, 0.025).unwrap();
            let points: Vec<Vector3<f64>> = (0..60)
                .map(|_| {
                    use contactbench::collision::SupportMap;
                    e.local_support(&contactbench::collision::benchmark::random_direction(rng))
                })
                .collect();
            Shape::convex_hull(Arc::new(
                ConvexHull::from_points(&points, "random").unwrap(),
            ))
        };
        let (a, b) = (hull(&mut rng), hull(&mut rng));
        pairs.extend(place_at_distances(&mut rng, &a, &b, &[0.01, 0.2]).unwrap());
    }
    for (k, pair) in pairs.iter().enumerate() {
        let (reference, stop) = gjk_distance(pair, GjkVariant::Vanilla, MomentumSchedule::Coal);
        assert_eq!(stop, SeparationStop::DualityGap, "pair {k}");
        assert!(
            (reference - pair.distance).abs() < 1e-6,
            "pair {k}: GJK {reference} vs placement {}",
            pair.distance
        );
        check(pair, reference, &format!("random pair {k}"));
    }
}
