//! Randomized-smoothing derivatives of collision detection: every estimator against the
//! exact derivatives of two spheres and of a box over a slab, the error falling as the
//! samples grow, the Gumbel estimator on meshes, determinism and bad input.

use std::sync::Arc;

use contactbench::collision::benchmark::standard_normal;
use contactbench::collision::contact::signed_distance_hinted;
use contactbench::collision::simplex::{Simplex, SupportPoint};
use contactbench::collision::smoothing::hessian::{support_hessian, HessianMethod};
use contactbench::collision::smoothing::oracle::{box_on_slab, sphere_sphere};
use contactbench::collision::smoothing::{
    derivatives_at, derivatives_from, pair_derivatives, BaseQuery, Estimator, GeometryJacobians,
    Pair, PairGeometry, SmoothingError,
};
use contactbench::collision::{Contact, ContactSettings, ConvexHull, Shape};
use nalgebra::{Isometry3, SMatrix, SVector, Translation3, UnitQuaternion, Vector3, Vector6};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn shape(s: Result<Shape, contactbench::collision::CollisionError>) -> Shape {
    match s {
        Ok(s) => s,
        Err(e) => panic!("valid shape: {e}"),
    }
}

fn pose(t: [f64; 3], rpy: [f64; 3]) -> Isometry3<f64> {
    Isometry3::from_parts(
        Translation3::new(t[0], t[1], t[2]),
        UnitQuaternion::from_euler_angles(rpy[0], rpy[1], rpy[2]),
    )
}

fn estimate(pair: &Pair<'_>, estimator: Estimator) -> (PairGeometry, GeometryJacobians) {
    estimate_with(pair, estimator, &ContactSettings::default())
}

fn estimate_with(
    pair: &Pair<'_>,
    estimator: Estimator,
    settings: &ContactSettings,
) -> (PairGeometry, GeometryJacobians) {
    match pair_derivatives(pair, &estimator, settings) {
        Ok(d) => (d.geometry, d.jacobians),
        Err(e) => panic!("{} failed: {e}", estimator.name()),
    }
}

/// Largest entry of the difference, over the largest entry of the oracle's witness
/// Jacobians.
fn relative_error(ours: &GeometryJacobians, exact: &GeometryJacobians) -> f64 {
    ours.max_difference(exact) / exact.witness_scale()
}

fn assert_geometry(ours: &PairGeometry, exact: &PairGeometry, tol: f64) {
    assert!(
        (ours.point_a - exact.point_a).amax() < tol,
        "{ours:?} vs {exact:?}"
    );
    assert!(
        (ours.point_b - exact.point_b).amax() < tol,
        "{ours:?} vs {exact:?}"
    );
    assert!(
        (ours.normal - exact.normal).amax() < tol,
        "{ours:?} vs {exact:?}"
    );
    assert!(
        (ours.distance - exact.distance).abs() < tol,
        "{ours:?} vs {exact:?}"
    );
}

fn zeroth(samples: usize, noise: f64, seed: u64) -> Estimator {
    Estimator::ZerothOrder {
        samples,
        noise,
        seed,
    }
}

fn gaussian(samples: usize, noise: f64, seed: u64) -> Estimator {
    Estimator::FirstOrderGaussian {
        samples,
        noise,
        seed,
    }
}

const CENTRAL: Estimator = Estimator::FiniteDifferences {
    step: 1e-6,
    central: true,
};

/// Mean relative error over `seeds` seeds of `make(seed)`.
fn mean_error(
    pair: &Pair<'_>,
    exact: &GeometryJacobians,
    seeds: u64,
    make: impl Fn(u64) -> Estimator,
) -> f64 {
    (0..seeds)
        .map(|seed| relative_error(&estimate(pair, make(seed)).1, exact))
        .sum::<f64>()
        / seeds as f64
}

fn spheres() -> (Shape, Shape) {
    (shape(Shape::sphere(0.1)), shape(Shape::sphere(0.15)))
}

const SEPARATED: ([f64; 3], [f64; 3]) = ([0.2, 0.1, 0.15], [0.3, -0.2, 0.5]);
const PENETRATING: ([f64; 3], [f64; 3]) = ([0.12, 0.08, 0.1], [0.3, -0.2, 0.5]);

#[test]
fn closed_form_first_order_matches_the_two_spheres_oracle() {
    let (a, b) = spheres();
    for (t, rpy) in [SEPARATED, PENETRATING] {
        let b_in_a = pose(t, rpy);
        let pair = Pair {
            a: &a,
            b: &b,
            b_in_a,
        };
        let Some((geometry, exact)) = sphere_sphere(0.1, 0.15, &b_in_a) else {
            panic!("spheres not concentric");
        };
        let (ours, jac) = estimate(&pair, Estimator::FirstOrderExact);
        assert_geometry(&ours, &geometry, 1e-9);
        let err = relative_error(&jac, &exact);
        eprintln!("exact first order, d = {:.3}: {err:e}", geometry.distance);
        assert!(err < 1e-8, "relative error {err:e}");
        let (_, fd) = estimate(&pair, CENTRAL);
        let err = relative_error(&fd, &exact);
        eprintln!("central differences, d = {:.3}: {err:e}", geometry.distance);
        assert!(err < 1e-6, "relative error {err:e}");
    }
}

#[test]
fn zeroth_order_error_falls_as_samples_grow_on_two_spheres() {
    let (a, b) = spheres();
    for (t, rpy) in [SEPARATED, PENETRATING] {
        let b_in_a = pose(t, rpy);
        let pair = Pair {
            a: &a,
            b: &b,
            b_in_a,
        };
        let Some((_, exact)) = sphere_sphere(0.1, 0.15, &b_in_a) else {
            panic!("spheres not concentric");
        };
        let errors: Vec<f64> = [16, 256, 4096]
            .iter()
            .map(|&m| mean_error(&pair, &exact, 4, |seed| zeroth(m, 1e-3, seed)))
            .collect();
        eprintln!("zeroth order, 16/256/4096 samples: {errors:?}");
        assert!(errors[1] < errors[0] / 2.5, "{errors:?}");
        assert!(errors[2] < errors[1] / 2.5, "{errors:?}");
    }
}

#[test]
fn first_order_gaussian_error_falls_as_samples_grow_on_two_spheres() {
    let (a, b) = spheres();
    for (t, rpy) in [SEPARATED, PENETRATING] {
        let b_in_a = pose(t, rpy);
        let pair = Pair {
            a: &a,
            b: &b,
            b_in_a,
        };
        let Some((_, exact)) = sphere_sphere(0.1, 0.15, &b_in_a) else {
            panic!("spheres not concentric");
        };
        let errors: Vec<f64> = [16, 256, 4096]
            .iter()
            .map(|&m| mean_error(&pair, &exact, 4, |seed| gaussian(m, 1e-3, seed)))
            .collect();
        eprintln!("first order gaussian, 16/256/4096 samples: {errors:?}");
        assert!(errors[1] < errors[0] / 2.5, "{errors:?}");
        assert!(errors[2] < errors[1] / 2.5, "{errors:?}");
    }
}

fn slab() -> Shape {
    shape(Shape::cuboid(Vector3::new(1.0, 1.0, 0.1)))
}

const BOX: [f64; 3] = [0.05, 0.08, 0.03];

#[test]
fn estimators_converge_to_the_box_on_slab_oracle() {
    let a = slab();
    let b = shape(Shape::cuboid(Vector3::from(BOX)));
    for height in [0.2, 0.1] {
        let b_in_a = pose([0.1, -0.05, height], [0.4, 0.3, 0.2]);
        let pair = Pair {
            a: &a,
            b: &b,
            b_in_a,
        };
        let Some((geometry, exact)) = box_on_slab(&Vector3::from(BOX), 0.1, &b_in_a) else {
            panic!("unique lowest vertex");
        };
        let (ours, fd) = estimate(&pair, CENTRAL);
        assert_geometry(&ours, &geometry, 1e-9);
        let err = relative_error(&fd, &exact);
        eprintln!(
            "box, d = {:.3}: central differences {err:e}",
            geometry.distance
        );
        assert!(err < 1e-6, "relative error {err:e}");
        let zeroth_errors: Vec<f64> = [16, 256, 4096]
            .iter()
            .map(|&m| mean_error(&pair, &exact, 4, |seed| zeroth(m, 1e-4, seed)))
            .collect();
        // The slab's smoothed support has a tangential curvature of order (face size)/ε:
        // the 1st-order estimator's bias falls with the noise, its variance is already
        // small at 64 samples.
        let first_errors: Vec<f64> = [1e-2, 1e-3, 1e-4]
            .iter()
            .map(|&noise| mean_error(&pair, &exact, 4, |seed| gaussian(64, noise, seed)))
            .collect();
        eprintln!("box zeroth {zeroth_errors:?} first (noise 1e-2/1e-3/1e-4) {first_errors:?}");
        assert!(
            zeroth_errors[2] < zeroth_errors[0] / 6.0,
            "{zeroth_errors:?}"
        );
        assert!(first_errors[1] < first_errors[0] / 3.0, "{first_errors:?}");
        assert!(first_errors[2] < first_errors[1] / 3.0, "{first_errors:?}");
    }
}

#[test]
fn closed_form_first_order_matches_central_differences_on_ellipsoids() {
    let a = shape(Shape::ellipsoid(Vector3::new(0.1, 0.06, 0.12)));
    let b = shape(Shape::ellipsoid(Vector3::new(0.05, 0.09, 0.07)));
    // Separated, then penetrating: EPA's polytope of the ellipsoids limits the accuracy
    // of the differences (measured 4e-5 and 5e-3).
    for (t, rpy, tolerance) in [
        ([0.15, 0.1, 0.2], [0.3, -0.2, 0.5], 2e-4),
        ([0.08, 0.05, 0.1], [0.3, -0.2, 0.5], 1e-2),
    ] {
        let pair = Pair {
            a: &a,
            b: &b,
            b_in_a: pose(t, rpy),
        };
        // GJK and EPA on curved shapes stop at a tolerance: their witnesses are that far
        // from the optimum, so the differences need tight tolerances and a larger step.
        let mut tight = ContactSettings::default();
        tight.gjk.tolerance = 1e-18;
        tight.gjk.max_iterations = 10_000;
        tight.epa.tolerance = 1e-13;
        tight.epa.max_iterations = 20_000;
        let (geometry, exact) = estimate_with(&pair, Estimator::FirstOrderExact, &tight);
        let step = Estimator::FiniteDifferences {
            step: 1e-4,
            central: true,
        };
        let (_, fd) = estimate_with(&pair, step, &tight);
        let err = relative_error(&fd, &exact);
        eprintln!("ellipsoids, d = {:.3}: {err:e}", geometry.distance);
        assert!(err < tolerance, "relative error {err:e}");
    }
}

#[test]
fn gaussian_support_hessian_converges_to_the_ellipsoid_closed_form() {
    let e = shape(Shape::ellipsoid(Vector3::new(0.1, 0.06, 0.12)));
    let u = Vector3::new(0.3, -0.5, 0.8).normalize();
    let Ok(exact) = support_hessian(&e, &u, &HessianMethod::Exact, 0) else {
        panic!("closed form");
    };
    let errors: Vec<f64> = [16, 256, 4096, 65536]
        .iter()
        .map(|&samples| {
            let method = HessianMethod::Gaussian {
                samples,
                noise: 1e-2,
                seed: 3,
            };
            let Ok(h) = support_hessian(&e, &u, &method, 0) else {
                panic!("gaussian");
            };
            (h - exact).amax() / exact.amax()
        })
        .collect();
    eprintln!("gaussian hessian: {errors:?}");
    assert!(errors[3] < errors[0] / 10.0, "{errors:?}");
    assert!(errors[3] < 0.02, "{errors:?}");
}

/// The hull of `n` points spread evenly on a sphere of `radius` (Fibonacci lattice).
fn mesh_sphere(radius: f64, n: usize) -> Shape {
    let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    let points: Vec<Vector3<f64>> = (0..n)
        .map(|k| {
            let z = 1.0 - 2.0 * (k as f64 + 0.5) / n as f64;
            let r = (1.0 - z * z).sqrt();
            let phi = golden * k as f64;
            Vector3::new(r * phi.cos(), r * phi.sin(), z) * radius
        })
        .collect();
    match ConvexHull::from_points(&points, "sphere lattice") {
        Ok(h) => Shape::convex_hull(Arc::new(h)),
        Err(e) => panic!("hull: {e}"),
    }
}

#[test]
fn gumbel_on_a_sphere_mesh_approaches_the_sphere_as_rings_grow() {
    let a = mesh_sphere(0.1, 3000);
    let b = mesh_sphere(0.15, 3000);
    for (t, rpy) in [SEPARATED, PENETRATING] {
        let b_in_a = pose(t, rpy);
        let pair = Pair {
            a: &a,
            b: &b,
            b_in_a,
        };
        let Some((_, exact)) = sphere_sphere(0.1, 0.15, &b_in_a) else {
            panic!("spheres not concentric");
        };
        let errors: Vec<f64> = [0, 1, 3, 8]
            .iter()
            .map(|&rings| {
                let est = Estimator::FirstOrderGumbel { rings, noise: 1e-4 };
                relative_error(&estimate(&pair, est).1, &exact)
            })
            .collect();
        let (_, flat) = estimate(&pair, Estimator::FirstOrderExact);
        let flat_error = relative_error(&flat, &exact);
        eprintln!("gumbel rings 0/1/3/8: {errors:?}; zero hessian: {flat_error:e}");
        assert!(errors[3] < errors[0] / 3.0, "{errors:?}");
        assert!(errors[3] < flat_error / 3.0, "{errors:?} vs {flat_error}");
    }
}

#[test]
fn every_estimator_is_deterministic_for_its_seed() {
    let (a, b) = spheres();
    let pair = Pair {
        a: &a,
        b: &b,
        b_in_a: pose(SEPARATED.0, SEPARATED.1),
    };
    for make in [zeroth as fn(usize, f64, u64) -> Estimator, gaussian] {
        let first = estimate(&pair, make(20, 1e-3, 7));
        let again = estimate(&pair, make(20, 1e-3, 7));
        let other = estimate(&pair, make(20, 1e-3, 8));
        assert_eq!(first, again);
        assert_ne!(first.1, other.1);
    }
}

#[test]
fn bad_parameters_and_pairs_give_typed_errors() {
    let (a, b) = spheres();
    let pair = Pair {
        a: &a,
        b: &b,
        b_in_a: pose(SEPARATED.0, SEPARATED.1),
    };
    let settings = ContactSettings::default();
    let run = |p: &Pair<'_>, e: Estimator| pair_derivatives(p, &e, &settings);
    assert!(matches!(
        run(&pair, zeroth(10, 0.0, 1)),
        Err(SmoothingError::InvalidParameter { field: "noise", .. })
    ));
    assert!(matches!(
        run(&pair, gaussian(0, 1e-3, 1)),
        Err(SmoothingError::InvalidParameter {
            field: "samples",
            ..
        })
    ));
    assert!(matches!(
        run(&pair, gaussian(10, f64::NAN, 1)),
        Err(SmoothingError::InvalidParameter { field: "noise", .. })
    ));
    assert!(matches!(
        run(
            &pair,
            Estimator::FirstOrderGumbel {
                rings: 1,
                noise: 1e-3
            }
        ),
        Err(SmoothingError::NotAMesh("sphere"))
    ));
    let touching = Pair {
        b_in_a: pose([0.25, 0.0, 0.0], [0.0, 0.0, 0.0]),
        ..pair
    };
    let Ok(touch) = run(&touching, Estimator::FirstOrderExact) else {
        panic!("touching shapes have witness derivatives");
    };
    assert!(!touch.normal_defined);
    assert_eq!(touch.jacobians.normal, nalgebra::Matrix3x6::zeros());
    assert!(touch.jacobians.point_a.iter().all(|v| v.is_finite()));
    let Ok(apart) = run(&pair, Estimator::FirstOrderExact) else {
        panic!("separated spheres");
    };
    assert!(apart.normal_defined);
    let nan = Pair {
        b_in_a: pose([f64::NAN, 0.0, 0.0], [0.0, 0.0, 0.0]),
        ..pair
    };
    assert!(matches!(
        run(&nan, CENTRAL),
        Err(SmoothingError::Collision(_))
    ));
    let ground = shape(Shape::halfspace(Vector3::z(), 0.0));
    let on_ground = Pair {
        a: &ground,
        b: &b,
        b_in_a: pose([0.0, 0.0, 0.3], [0.0, 0.0, 0.0]),
    };
    assert!(matches!(
        run(&on_ground, Estimator::FirstOrderExact),
        Err(SmoothingError::Collision(_))
    ));
    let cylinder = shape(Shape::cylinder(0.1, 0.2));
    let Ok(_) = run(
        &Pair {
            a: &cylinder,
            ..pair
        },
        Estimator::FirstOrderExact,
    ) else {
        panic!("a cylinder has a closed-form rim Hessian");
    };
}

#[test]
fn the_samples_page_draws_its_figure_and_its_claims_hold_at_the_quick_size() {
    let out = std::env::temp_dir().join(format!("contactbench-rs-samples-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let options = contactbench::paper::Options {
        only: vec!["rs-samples".into()],
        quick: true,
        ..Default::default()
    };
    let outcome = match contactbench::paper::run_paper(&out, &options) {
        Ok(o) => o,
        Err(e) => panic!("paper: {e}"),
    };
    let Some(Ok(page)) = outcome.lines.first().map(|l| &l.outcome) else {
        panic!("the page was not written");
    };
    assert_eq!(page.claims.len(), 4);
    for claim in &page.claims {
        assert_eq!(
            claim.verdict,
            contactbench::paper::claims::Verdict::Holds,
            "{}: {}",
            claim.claim,
            claim.measured
        );
    }
    assert!(out.join("rs-samples").join("rs-samples.png").is_file());
    assert!(out.join("rs-samples").join("rs-samples.csv").is_file());
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_vanishing_gumbel_temperature_gives_an_error_not_an_infinite_derivative() {
    let cube = |h: f64| {
        let corners: Vec<Vector3<f64>> = (0..8)
            .map(|k| {
                Vector3::new(
                    if k & 1 == 0 { -h } else { h },
                    if k & 2 == 0 { -h } else { h },
                    if k & 4 == 0 { -h } else { h },
                )
            })
            .collect();
        match ConvexHull::from_points(&corners, "cube") {
            Ok(hull) => Shape::convex_hull(Arc::new(hull)),
            Err(e) => panic!("hull: {e}"),
        }
    };
    let (a, b) = (cube(0.1), cube(0.05));
    // Face to face: every vertex of the facing faces ties in the soft-max.
    let pair = Pair {
        a: &a,
        b: &b,
        b_in_a: pose([0.0, 0.0, 0.2], [0.0, 0.0, 0.0]),
    };
    let tiny = Estimator::FirstOrderGumbel {
        rings: 2,
        noise: 1e-300,
    };
    match pair_derivatives(&pair, &tiny, &ContactSettings::default()) {
        Ok(d) => {
            let j = d.jacobians;
            assert!(j.point_a.iter().all(|v| v.is_finite()));
            assert!(j.point_b.iter().all(|v| v.is_finite()));
            assert!(j.normal.iter().all(|v| v.is_finite()));
            assert!(j.distance.iter().all(|v| v.is_finite()));
        }
        Err(e) => assert!(matches!(e, SmoothingError::Singular), "{e}"),
    }
}

/// Eq. (6) recomputed sample by sample as the estimator runs it (same normal draws, each
/// sample's GJK from the unperturbed final simplex re-placed at its pose), but every
/// sample's hill climbing started cold.
fn zeroth_order_with_cold_hill_climbing(
    pair: &Pair<'_>,
    base: &Contact,
    samples: usize,
    noise: f64,
    seed: u64,
) -> SMatrix<f64, 10, 6> {
    let settings = ContactSettings::default();
    let stacked = |c: &Contact| {
        let mut g = SVector::<f64, 10>::zeros();
        g.fixed_rows_mut::<3>(0).copy_from(&c.point_a);
        g.fixed_rows_mut::<3>(3).copy_from(&c.point_b);
        g.fixed_rows_mut::<3>(6).copy_from(&c.normal);
        g[9] = c.distance;
        g
    };
    let query = |pose: &Isometry3<f64>, simplex: &mut Simplex| {
        signed_distance_hinted(
            pair.a,
            pair.b,
            pose,
            &settings,
            &base.warm_start,
            &mut [usize::MAX; 2],
            simplex,
        )
        .unwrap_or_else(|e| panic!("{e}"))
    };
    let mut nominal = Simplex::default();
    query(&pair.b_in_a, &mut nominal);
    let g0 = stacked(base);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut sum = SMatrix::<f64, 10, 6>::zeros();
    for _ in 0..samples {
        let z = Vector6::from_fn(|_, _| standard_normal(&mut rng));
        let moved = pair.perturbed(&(z * noise));
        let relative = moved * pair.b_in_a.inverse();
        let mut start = Simplex::default();
        for p in nominal.points() {
            let b = relative.transform_point(&p.b.into()).coords;
            start.push(SupportPoint {
                w: p.a - b,
                a: p.a,
                b,
            });
        }
        sum += (stacked(&query(&moved, &mut start)) - g0) * z.transpose();
    }
    sum / (samples as f64 * noise)
}

#[test]
fn zeroth_order_on_meshes_does_not_depend_on_where_the_hill_climbing_starts() {
    let a = mesh_sphere(0.1, 2000);
    let b = mesh_sphere(0.15, 2000);
    let settings = ContactSettings::default();
    // 5 mm apart (samples on both sides of contact) and 5 mm deep (EPA on every sample).
    for gap in [0.005, -0.005] {
        let b_in_a = pose([0.25 + gap, 0.01, -0.02], [0.3, -0.2, 0.5]);
        let pair = Pair {
            a: &a,
            b: &b,
            b_in_a,
        };
        let base = pair
            .contact(&settings, None)
            .unwrap_or_else(|e| panic!("{e}"));
        let estimator = Estimator::ZerothOrder {
            samples: 64,
            noise: 1e-2,
            seed: 7,
        };
        let warm = derivatives_at(&pair, &base, &estimator, &settings)
            .unwrap_or_else(|e| panic!("{e}"))
            .jacobians;
        let cold = zeroth_order_with_cold_hill_climbing(&pair, &base, 64, 1e-2, 7);
        let rows = |k: usize| cold.fixed_rows::<3>(k).into_owned();
        assert_eq!(warm.point_a, rows(0), "gap {gap}");
        assert_eq!(warm.point_b, rows(3), "gap {gap}");
        assert_eq!(warm.normal, rows(6), "gap {gap}");
        assert_eq!(
            warm.distance,
            cold.fixed_rows::<1>(9).into_owned(),
            "gap {gap}"
        );
    }
}

#[test]
fn a_kept_base_query_gives_the_estimates_of_the_contact_alone() {
    let a = mesh_sphere(0.1, 2000);
    let b = mesh_sphere(0.15, 2000);
    let settings = ContactSettings::default();
    let estimators = [
        Estimator::ZerothOrder {
            samples: 32,
            noise: 1e-2,
            seed: 3,
        },
        Estimator::FiniteDifferences {
            step: 1e-6,
            central: true,
        },
        Estimator::FirstOrderGumbel {
            rings: 2,
            noise: 1e-4,
        },
    ];
    for gap in [0.005, -0.005] {
        let pair = Pair {
            a: &a,
            b: &b,
            b_in_a: pose([0.25 + gap, -0.02, 0.01], [-0.4, 0.1, 0.7]),
        };
        let base = pair
            .contact(&settings, None)
            .unwrap_or_else(|e| panic!("{e}"));
        let start = BaseQuery::at(&pair, base.clone(), &settings).unwrap_or_else(|e| panic!("{e}"));
        for estimator in &estimators {
            let alone = derivatives_at(&pair, &base, estimator, &settings)
                .unwrap_or_else(|e| panic!("{e}"));
            let kept = derivatives_from(&pair, &start, estimator, &settings)
                .unwrap_or_else(|e| panic!("{e}"));
            // The same base query used again: nothing of the first use is carried over.
            let again = derivatives_from(&pair, &start, estimator, &settings)
                .unwrap_or_else(|e| panic!("{e}"));
            let name = estimator.name();
            assert_eq!(alone.jacobians, kept.jacobians, "{name}, gap {gap}");
            assert_eq!(alone.geometry, kept.geometry, "{name}, gap {gap}");
            assert_eq!(kept, again, "{name}, gap {gap}");
            // Only the 0th-order estimator given a contact alone re-runs the base query.
            let rerun = usize::from(matches!(estimator, Estimator::ZerothOrder { .. }));
            assert_eq!(alone.queries, kept.queries + rerun, "{name}, gap {gap}");
        }
    }
}
