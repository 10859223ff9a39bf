//! GJK/EPA against parry3d on the same pairs: convex hulls of 240 and 1811 vertices (the
//! sizes of GJK++ Tab. I) placed in close proximity or shallow penetration, signed distance
//! in [−0.01, 0.01] m. 128 pairs per set, drawn once from a seeded RNG and cycled.
//!
//! Ids: `contact/hull{N}/{ours-vanilla,ours-polyak,ours-nesterov,parry}` (full signed
//! distance query: GJK, then EPA on overlap) and `gjk/hull{N}/{vanilla,polyak,nesterov}`
//! (GJK alone, distance query, as in GJK++ Tab. I).
//!
//! `pile/{8,27,64,216}`: the simulator's collision stage (broad phase and narrow phase of
//! every allowed pair) on the columns of cubes of `scenarios/pile_columns.yaml` at their
//! initial poses, each cube resting on the one below through its corner spheres.

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;

#[path = "../tests/common/parry.rs"]
mod parry_oracle;

use contactbench::collision::benchmark::{
    place_at_distance, random_direction, random_rotation, run_gjk, variant_settings, PlacedPair,
};
use contactbench::collision::simplex::Simplex;
use contactbench::collision::{
    signed_distance, ContactDetector, ContactSettings, ConvexHull, GjkVariant, Shape,
};
use contactbench::dynamics::{forward_kinematics, Data};
use contactbench::simulation::{Scenario, World};
use criterion::{criterion_group, criterion_main, Criterion};
use parry3d_f64::math::Pose;
use parry3d_f64::query::details::contact_support_map_support_map;
use parry3d_f64::shape::ConvexPolyhedron;
use parry_oracle::{parry_polyhedron, random_hull, to_parry_pose};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

const PAIRS: usize = 128;

struct BenchPair {
    pair: PlacedPair,
    parry_a: Arc<ConvexPolyhedron>,
    parry_b: Arc<ConvexPolyhedron>,
    pos12: Pose,
}

fn pairs(vertices: usize, seed: u64) -> Vec<BenchPair> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let hulls: Vec<Arc<ConvexHull>> = (0..4).map(|_| random_hull(&mut rng, vertices)).collect();
    let polys: Vec<Arc<ConvexPolyhedron>> = hulls
        .iter()
        .map(|h| Arc::new(parry_polyhedron(h)))
        .collect();
    (0..PAIRS)
        .map(|_| {
            let i = rng.random_range(0..hulls.len());
            let j = rng.random_range(0..hulls.len());
            let a = Shape::convex_hull(hulls[i].clone());
            let b = Shape::convex_hull(hulls[j].clone());
            let target = rng.random_range(-0.01..0.01);
            let (ra, rb) = (random_rotation(&mut rng), random_rotation(&mut rng));
            let dir = random_direction(&mut rng);
            let pair = place_at_distance(&a, &b, ra, rb, &dir, target).expect("valid pair");
            let pos12 = to_parry_pose(&pair.pose_a.inv_mul(&pair.pose_b));
            BenchPair {
                pair,
                parry_a: polys[i].clone(),
                parry_b: polys[j].clone(),
                pos12,
            }
        })
        .collect()
}

fn bench_contacts(c: &mut Criterion) {
    for (vertices, seed) in [(240, 1), (1811, 2)] {
        let set = pairs(vertices, seed);
        let mut group = c.benchmark_group(format!("contact/hull{vertices}"));
        for variant in [
            GjkVariant::Vanilla,
            GjkVariant::Polyak,
            GjkVariant::Nesterov { normalize: true },
        ] {
            let mut settings = ContactSettings::default();
            settings.gjk.variant = variant;
            let mut k = 0;
            group.bench_function(format!("ours-{}", variant.name()), |bencher| {
                bencher.iter(|| {
                    let p = &set[k % PAIRS].pair;
                    k += 1;
                    black_box(signed_distance(
                        black_box(&p.a),
                        &p.pose_a,
                        &p.b,
                        &p.pose_b,
                        &settings,
                        None,
                    ))
                })
            });
        }
        let mut k = 0;
        group.bench_function("parry", |bencher| {
            bencher.iter(|| {
                let p = &set[k % PAIRS];
                k += 1;
                black_box(contact_support_map_support_map(
                    black_box(&p.pos12),
                    &*p.parry_a,
                    &*p.parry_b,
                    10.0,
                ))
            })
        });
        group.finish();
    }
}

fn bench_gjk(c: &mut Criterion) {
    for (vertices, seed) in [(240, 1), (1811, 2)] {
        let set = pairs(vertices, seed);
        let mut group = c.benchmark_group(format!("gjk/hull{vertices}"));
        for variant in [
            GjkVariant::Vanilla,
            GjkVariant::Polyak,
            GjkVariant::Nesterov { normalize: true },
        ] {
            let mut k = 0;
            let mut simplex = Simplex::default();
            group.bench_function(variant.name(), |bencher| {
                bencher.iter(|| {
                    let p = &set[k % PAIRS].pair;
                    k += 1;
                    let settings = variant_settings(variant, false, p);
                    black_box(run_gjk(black_box(p), &settings, &mut simplex))
                })
            });
        }
        group.finish();
    }
}

/// A pile's detector and its objects' poses at the initial state.
fn pile(side: usize) -> (ContactDetector, Vec<nalgebra::Isometry3<f64>>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/pile_columns.yaml");
    let columns = format!("world.generate.columns={{nx: {side}, ny: {side}, height: {side}}}");
    let scenario = Scenario::load(&path, &[columns]).expect("valid pile scenario");
    let world = World::build(&scenario).expect("buildable pile");
    let mut data = Data::new(&world.model);
    forward_kinematics(&world.model, &mut data, &world.q0).expect("finite initial state");
    let poses = world
        .objects
        .iter()
        .map(|o| data.omi[o.joint] * o.placement)
        .collect();
    let objects = world
        .objects
        .iter()
        .map(|o| (o.shape.clone(), o.joint))
        .collect();
    (ContactDetector::new(objects, &world.filter), poses)
}

fn bench_pile(c: &mut Criterion) {
    let mut group = c.benchmark_group("pile");
    let settings = ContactSettings {
        margin: 1e-3,
        ..Default::default()
    };
    for side in [2, 3, 4, 6] {
        let (mut detector, poses) = pile(side);
        group.bench_function(format!("{}", side * side * side), |bencher| {
            bencher.iter(|| {
                detector
                    .detect(black_box(&poses), &settings)
                    .expect("finite poses");
                black_box(detector.contacts().len())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_contacts, bench_gjk, bench_pile);
criterion_main!(benches);
