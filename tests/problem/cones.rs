//! Seeded random vectors: every projection lands in its cone, is idempotent, is the
//! nearest point, and splits `x` as Moreau's decomposition `x = P_K(x) + P_{K°}(x)` with
//! the polar cone `K° = −K*`, i.e. `x = P_K(x) − P_{K*}(−x)`, the two parts orthogonal.
//! For the ice-cream cone, its dual, the pyramid and the dual pyramid.

use contactbench::problem::cones;
use nalgebra::Vector3;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

const DRAWS: usize = 5000;
const TOL: f64 = 1e-10;

type Projection = fn(f64, &Vector3<f64>) -> Vector3<f64>;
type Membership = fn(f64, &Vector3<f64>) -> bool;

/// `(name, P_K, P_{K*}, membership test of K)`.
fn cone_pairs() -> Vec<(&'static str, Projection, Projection, Membership)> {
    vec![
        (
            "ice-cream",
            cones::project_ice_cream,
            cones::project_dual_ice_cream,
            |mu, x| x.xy().norm() <= mu * x.z + TOL * (1.0 + x.norm()),
        ),
        (
            "dual ice-cream",
            cones::project_dual_ice_cream,
            cones::project_ice_cream,
            |mu, x| mu * x.xy().norm() <= x.z + TOL * (1.0 + x.norm()),
        ),
        (
            "pyramid",
            cones::project_pyramid,
            cones::project_dual_pyramid,
            |mu, x| x.x.abs().max(x.y.abs()) <= mu * x.z + TOL * (1.0 + x.norm()),
        ),
        (
            "dual pyramid",
            cones::project_dual_pyramid,
            cones::project_pyramid,
            |mu, x| mu * (x.x.abs() + x.y.abs()) <= x.z + TOL * (1.0 + x.norm()),
        ),
    ]
}

fn draws(seed: u64) -> Vec<(f64, Vector3<f64>)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..DRAWS)
        .map(|_| {
            let mu = rng.random_range(0.05..2.0);
            let scale = 10f64.powf(rng.random_range(-3.0..3.0));
            let x = Vector3::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            ) * scale;
            (mu, x)
        })
        .collect()
}

#[test]
fn projections_land_in_their_cone() {
    for (name, project, _, inside) in cone_pairs() {
        for (mu, x) in draws(1) {
            let p = project(mu, &x);
            assert!(inside(mu, &p), "{name}: mu={mu}, x={x:?} -> {p:?}");
        }
    }
}

#[test]
fn projections_are_idempotent() {
    for (name, project, _, _) in cone_pairs() {
        for (mu, x) in draws(2) {
            let p = project(mu, &x);
            let pp = project(mu, &p);
            assert!(
                (p - pp).norm() <= TOL * (1.0 + x.norm()),
                "{name}: mu={mu}, x={x:?}"
            );
        }
    }
}

#[test]
fn moreau_decomposition_with_the_dual_cone() {
    for (name, project, project_dual, _) in cone_pairs() {
        for (mu, x) in draws(3) {
            let p = project(mu, &x);
            let q = project_dual(mu, &(-x));
            let scale = 1.0 + x.norm();
            assert!(
                (x - (p - q)).norm() <= 1e-9 * scale,
                "{name}: mu={mu}, x={x:?}"
            );
            assert!(
                p.dot(&q).abs() <= 1e-9 * scale * scale,
                "{name}: mu={mu}, x={x:?}"
            );
        }
    }
}

#[test]
fn projection_is_no_farther_than_any_point_of_the_cone() {
    // Against random points of the cone (the projection is the nearest point).
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    for (name, project, _, inside) in cone_pairs() {
        for (mu, x) in draws(5).into_iter().take(500) {
            let d = (x - project(mu, &x)).norm();
            for _ in 0..20 {
                let z = Vector3::new(
                    rng.random_range(-2.0..2.0),
                    rng.random_range(-2.0..2.0),
                    rng.random_range(-2.0..2.0),
                ) * x.norm();
                let y = project(mu, &z);
                assert!(inside(mu, &y));
                assert!(
                    (x - y).norm() >= d - 1e-9 * (1.0 + x.norm()),
                    "{name}: mu={mu}"
                );
            }
        }
    }
}

#[test]
fn distances_are_the_projection_residuals() {
    for (mu, x) in draws(6) {
        let d = cones::distance_ice_cream(mu, &x);
        assert!(
            (d - (x - cones::project_ice_cream(mu, &x)).norm()).abs() <= 1e-12 * (1.0 + x.norm())
        );
        let d = cones::distance_dual_pyramid(mu, &x);
        assert!(
            (d - (x - cones::project_dual_pyramid(mu, &x)).norm()).abs()
                <= 1e-12 * (1.0 + x.norm())
        );
    }
}
