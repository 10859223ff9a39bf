//! The simulator's collision stage (`ContactDetector`): the same contacts as the scene's
//! broad + narrow phase on the pairs a filter allows, GJK warm starts kept per pair between
//! calls, and every query that hit an iteration cap counted, including those
//! whose estimate falls beyond the margin, which `contact()` drops.

use contactbench::collision::{
    detect_contacts, CollisionError, CollisionObject, ContactDetector, ContactSettings, PairFilter,
    PairSet, Shape,
};
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};

fn pose(x: f64, y: f64, z: f64, angle: f64) -> Isometry3<f64> {
    Isometry3::from_parts(
        Translation3::new(x, y, z),
        UnitQuaternion::from_euler_angles(angle, 0.5 * angle, -0.3 * angle),
    )
}

/// A ground, boxes, balls and capsules in a row, some touching, owned one per body.
fn scene(shift: f64) -> Vec<CollisionObject> {
    let mut objects = vec![CollisionObject {
        shape: Shape::halfspace(Vector3::z(), 0.0).unwrap(),
        pose: Isometry3::identity(),
        owner: 0,
        name: "ground".into(),
    }];
    for i in 0..9 {
        let shape = match i % 3 {
            0 => Shape::cuboid(Vector3::new(0.1, 0.08, 0.06)).unwrap(),
            1 => Shape::sphere(0.07).unwrap(),
            _ => Shape::capsule(0.04, 0.1).unwrap(),
        };
        let x = 0.17 * i as f64 + shift * (i % 2) as f64;
        let z = 0.05 + 0.01 * (i % 4) as f64;
        objects.push(CollisionObject {
            shape,
            pose: pose(x, 0.01 * i as f64, z, 0.4 * i as f64 + shift),
            owner: i + 1,
            name: format!("body{i}"),
        });
    }
    objects
}

fn detector_for(objects: &[CollisionObject], filter: &PairFilter) -> ContactDetector {
    ContactDetector::new(
        objects.iter().map(|o| (o.shape.clone(), o.owner)).collect(),
        filter,
    )
}

fn poses(objects: &[CollisionObject]) -> Vec<Isometry3<f64>> {
    objects.iter().map(|o| o.pose).collect()
}

#[test]
fn same_contacts_as_the_scene_on_the_allowed_pairs() {
    let objects = scene(0.0);
    let settings = ContactSettings {
        margin: 0.01,
        ..ContactSettings::default()
    };
    let everything = PairFilter::default();
    let some = PairFilter {
        allowed: Some(PairSet::from_iter([
            (0, 1),
            (0, 2),
            (2, 3),
            (3, 4),
            (4, 5),
            (9, 0),
        ])),
        ..PairFilter::default()
    };
    for filter in [everything, some] {
        let expected = detect_contacts(&objects, &filter, &settings).unwrap();
        let mut detector = detector_for(&objects, &filter);
        detector.detect(&poses(&objects), &settings).unwrap();
        let got = detector.contacts();
        assert!(!expected.is_empty());
        assert_eq!(got.len(), expected.len());
        for (g, e) in got.iter().zip(&expected) {
            assert_eq!((g.a, g.b), (e.a, e.b));
            assert!((g.contact.distance - e.contact.distance).abs() < 1e-9);
            assert!((g.contact.normal - e.contact.normal).norm() < 1e-6);
        }
        for (&p, c) in detector.contact_pairs().iter().zip(got) {
            assert_eq!(detector.pairs()[p], (c.a, c.b));
        }
        assert_eq!(detector.outcomes().not_converged(), 0);
    }
}

#[test]
fn only_the_allowed_pairs_reach_the_narrow_phase() {
    let objects = scene(0.0);
    let filter = PairFilter {
        allowed: Some(PairSet::from_iter([(0, 1), (0, 4)])),
        ..PairFilter::default()
    };
    let mut detector = detector_for(&objects, &filter);
    assert_eq!(detector.pairs(), &[(0, 1), (0, 4)]);
    assert_eq!(detector.objects(), &[0, 1, 4]);
    // Poses of objects in no pair are never read: poison them.
    let mut p = poses(&objects);
    for (k, pose) in p.iter_mut().enumerate() {
        if ![0, 1, 4].contains(&k) {
            pose.translation.vector.x = f64::NAN;
        }
    }
    detector
        .detect(&p, &ContactSettings::default())
        .expect("only the allowed pairs' poses are read");
    assert_eq!(detector.outcomes().narrow_phase, 2);
    p[4].translation.vector.z = f64::INFINITY;
    let err = detector.detect(&p, &ContactSettings::default());
    assert!(
        matches!(err, Err(CollisionError::NonFinitePose { .. })),
        "{err:?}"
    );
    let err = detector.detect(&p[..3], &ContactSettings::default());
    assert!(matches!(
        err,
        Err(CollisionError::PoseCount {
            expected: 10,
            got: 3
        })
    ));
}

#[test]
fn warm_starts_are_kept_per_pair_between_calls() {
    let filter = PairFilter::default();
    let settings = ContactSettings {
        margin: 0.01,
        ..ContactSettings::default()
    };
    let mut warm = detector_for(&scene(0.0), &filter);
    warm.detect(&poses(&scene(0.0)), &settings).unwrap();
    let (mut cold_iterations, mut warm_iterations) = (0, 0);
    for k in 1..=20 {
        // Bodies drift a little, as between time steps.
        let moved = scene(1e-4 * k as f64);
        warm.detect(&poses(&moved), &settings).unwrap();
        let mut cold = detector_for(&moved, &filter);
        cold.detect(&poses(&moved), &settings).unwrap();
        assert_eq!(warm.contacts().len(), cold.contacts().len());
        for (w, c) in warm.contacts().iter().zip(cold.contacts()) {
            assert!((w.contact.distance - c.contact.distance).abs() < 1e-9);
            warm_iterations += w.contact.gjk_iterations;
            cold_iterations += c.contact.gjk_iterations;
        }
    }
    assert!(cold_iterations > 0);
    assert!(
        warm_iterations < cold_iterations,
        "warm {warm_iterations} vs cold {cold_iterations} GJK iterations"
    );
}

#[test]
fn queries_that_hit_their_cap_are_counted_even_beyond_the_margin() {
    // Two rotated boxes 2 cm apart: beyond a 1 mm margin, and GJK needs more than one
    // iteration to tell.
    let a = Shape::cuboid(Vector3::new(0.1, 0.08, 0.06)).unwrap();
    let b = Shape::cuboid(Vector3::new(0.07, 0.09, 0.05)).unwrap();
    let objects = vec![
        CollisionObject {
            shape: a,
            pose: pose(0.0, 0.0, 0.5, 0.3),
            owner: 1,
            name: "a".into(),
        },
        CollisionObject {
            shape: b,
            pose: pose(0.0, 0.0, 0.5, 1.1),
            owner: 2,
            name: "b".into(),
        },
    ];
    let mut settings = ContactSettings {
        margin: 1e-3,
        ..ContactSettings::default()
    };
    // Overlapping: EPA capped at one iteration.
    settings.epa.max_iterations = 1;
    let mut detector = detector_for(&objects, &PairFilter::default());
    detector.detect(&poses(&objects), &settings).unwrap();
    assert_eq!(detector.contacts().len(), 1);
    assert_eq!(detector.outcomes().epa_not_converged, 1);
    assert_eq!(detector.outcomes().gjk_not_converged, 0);
    // GJK capped at one iteration, its upper bound beyond the margin: no contact is
    // reported, but the failure is counted, whether the boxes really are 2.4 mm apart
    // (x = 0.21) or overlap by 7.4 mm (x = 0.2: a contact that a capped GJK misses).
    settings.epa.max_iterations = 128;
    for (x, distance) in [(0.21, 0.0024), (0.2, -0.0074)] {
        let mut moved = poses(&objects);
        moved[1].translation.vector.x = x;
        settings.gjk.max_iterations = 256;
        let mut exact = detector_for(&objects, &PairFilter::default());
        exact.detect(&moved, &settings).unwrap();
        assert_eq!(exact.outcomes().not_converged(), 0);
        let found = exact.contacts().first().map(|c| c.contact.distance);
        match found {
            Some(d) => assert!((d - distance).abs() < 1e-4, "x = {x}: {d}"),
            None => assert!(distance > settings.margin, "x = {x}: no contact"),
        }
        settings.gjk.max_iterations = 1;
        let mut capped = detector_for(&objects, &PairFilter::default());
        capped.detect(&moved, &settings).unwrap();
        assert_eq!(capped.contacts().len(), 0, "x = {x}");
        assert_eq!(capped.outcomes().gjk_not_converged, 1, "x = {x}");
        assert_eq!(capped.outcomes().not_converged(), 1, "x = {x}");
    }
}

#[test]
fn the_simulator_records_each_steps_outcomes() {
    use contactbench::simulation::runner::simulator;
    use contactbench::simulation::Scenario;
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/cube_slide.yaml");
    let scenario = Scenario::load(std::path::Path::new(path), &[]).unwrap();
    let spec: contactbench::solvers::SolverSpec = "ncp-admm".parse().unwrap();
    let mut sim = simulator(&scenario, &spec).unwrap();
    for _ in 0..5 {
        let record = sim.step().unwrap();
        // The 8 corner spheres against the ground, nothing else.
        assert_eq!(sim.collision_outcomes().narrow_phase, 8);
        assert_eq!(record.collision_failures, 0);
        assert_eq!(sim.collision_outcomes().not_converged(), 0);
    }
}

/// A ground and an `n × n` grid of 0.1 m boxes on it, `pitch` apart (axis-aligned).
fn grid(n: usize, pitch: f64) -> Vec<CollisionObject> {
    let mut objects = vec![CollisionObject {
        shape: Shape::halfspace(Vector3::z(), 0.0).unwrap(),
        pose: Isometry3::identity(),
        owner: 0,
        name: "ground".into(),
    }];
    for k in 0..n * n {
        let (x, y) = ((k % n) as f64, (k / n) as f64);
        objects.push(CollisionObject {
            shape: Shape::cuboid(Vector3::repeat(0.05)).unwrap(),
            pose: pose(pitch * x, pitch * y, 0.05, 0.0),
            owner: k + 1,
            name: format!("box{k}"),
        });
    }
    objects
}

/// The pairs of `detector` that keep a state between calls, as object pairs.
fn pairs_with_state(detector: &ContactDetector) -> Vec<(usize, usize)> {
    detector
        .pairs_with_state()
        .map(|p| detector.pairs()[p])
        .collect()
}

#[test]
fn a_pair_keeps_a_state_only_while_its_boxes_overlap() {
    // 10 × 10 boxes 5 mm apart, margin 1 cm: the boxes of a box and of its 8 neighbours
    // overlap (342 pairs of the 5050 allowed), no others; the box-ground pairs take the
    // closed form (no GJK, no state).
    let (n, margin) = (10_usize, 0.01);
    let settings = ContactSettings {
        margin,
        ..ContactSettings::default()
    };
    let neighbours = |pitch: f64| -> Vec<(usize, usize)> {
        let mut pairs = Vec::new();
        for a in 0..n * n {
            for b in a + 1..n * n {
                let (dx, dy) = ((a % n).abs_diff(b % n), (a / n).abs_diff(b / n));
                if pitch < 0.1 + margin && dx <= 1 && dy <= 1 {
                    pairs.push((a + 1, b + 1));
                }
            }
        }
        pairs
    };
    let close = grid(n, 0.105);
    let mut detector = detector_for(&close, &PairFilter::default());
    assert_eq!(detector.pairs().len(), 5050);
    for (pitch, expected) in [(0.105, 342), (0.2, 0), (0.105, 342)] {
        detector.detect(&poses(&grid(n, pitch)), &settings).unwrap();
        let kept = pairs_with_state(&detector);
        assert_eq!(kept.len(), expected, "pitch {pitch}");
        assert_eq!(kept, neighbours(pitch), "pitch {pitch}");
        assert!(kept.len() <= detector.outcomes().narrow_phase);
    }
}
