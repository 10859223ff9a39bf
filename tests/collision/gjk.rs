//! GJK's contract: iteration cap, warm start, boolean early exit, variants agreeing.

use contactbench::collision::benchmark::{
    place_at_distance, random_direction, random_ellipsoid, random_rotation, run_gjk,
    variant_settings, PlacedPair,
};
use contactbench::collision::simplex::Simplex;
use contactbench::collision::{
    signed_distance, ContactSettings, GjkResult, GjkSettings, GjkVariant,
};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn ellipsoid_pairs(count: usize, seed: u64) -> Vec<PlacedPair> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..count)
        .map(|_| {
            let a = random_ellipsoid(&mut rng, 0.05, 0.2).unwrap();
            let b = random_ellipsoid(&mut rng, 0.05, 0.2).unwrap();
            let (ra, rb) = (random_rotation(&mut rng), random_rotation(&mut rng));
            let dir = random_direction(&mut rng);
            let target = rng.random_range(0.001..0.1);
            place_at_distance(&a, &b, ra, rb, &dir, target).unwrap()
        })
        .collect()
}

#[test]
fn iteration_cap_is_reported_not_hidden() {
    let pair = &ellipsoid_pairs(1, 1)[0];
    let settings = GjkSettings {
        max_iterations: 2,
        ..GjkSettings::default()
    };
    let result = run_gjk(pair, &settings, &mut Simplex::default());
    assert!(
        matches!(result, GjkResult::NotConverged { iterations: 2, .. }),
        "{result:?}"
    );
    let mut contact_settings = ContactSettings::default();
    contact_settings.gjk.max_iterations = 2;
    let c = signed_distance(
        &pair.a,
        &pair.pose_a,
        &pair.b,
        &pair.pose_b,
        &contact_settings,
        None,
    )
    .unwrap();
    assert!(!c.converged);
    assert!(
        c.distance >= pair.distance - 1e-9,
        "an unconverged GJK bounds from above"
    );
}

#[test]
fn warm_start_from_previous_solution_saves_iterations() {
    let settings = ContactSettings::default();
    let (mut cold, mut warm) = (0, 0);
    for pair in ellipsoid_pairs(200, 2) {
        let first = signed_distance(
            &pair.a,
            &pair.pose_a,
            &pair.b,
            &pair.pose_b,
            &settings,
            None,
        )
        .unwrap();
        let mut moved = pair.pose_b;
        moved.translation.vector += first.normal * 1e-3;
        let c = signed_distance(&pair.a, &pair.pose_a, &pair.b, &moved, &settings, None).unwrap();
        let w = signed_distance(
            &pair.a,
            &pair.pose_a,
            &pair.b,
            &moved,
            &settings,
            Some(&first.warm_start),
        )
        .unwrap();
        assert!((c.distance - w.distance).abs() < 1e-6);
        cold += c.gjk_iterations;
        warm += w.gjk_iterations;
    }
    assert!(warm < cold, "warm {warm} vs cold {cold} iterations");
}

#[test]
fn variants_agree_and_boolean_bound_is_a_lower_bound() {
    for pair in ellipsoid_pairs(200, 3) {
        let mut distances = Vec::new();
        for variant in [
            GjkVariant::Vanilla,
            GjkVariant::Polyak,
            GjkVariant::Nesterov { normalize: true },
            GjkVariant::Nesterov { normalize: false },
        ] {
            let mut simplex = Simplex::default();
            match run_gjk(
                &pair,
                &variant_settings(variant, false, &pair),
                &mut simplex,
            ) {
                GjkResult::Separated { distance, .. } => distances.push(distance),
                other => panic!("{variant:?}: {other:?}"),
            }
            match run_gjk(&pair, &variant_settings(variant, true, &pair), &mut simplex) {
                GjkResult::SeparatingPlane { lower_bound, .. } => {
                    assert!(lower_bound > 0.0 && lower_bound <= pair.distance + 1e-9)
                }
                other => panic!("{variant:?}: {other:?}"),
            }
        }
        for d in &distances {
            assert!(
                (d - pair.distance).abs() < 1e-6,
                "{distances:?} vs {}",
                pair.distance
            );
        }
    }
}
