//! Degenerate and bad input: typed errors or well-defined answers, never a panic or an
//! endless loop.

use std::sync::Arc;

use contactbench::collision::{
    contact, signed_distance, CollisionError, ContactSettings, ConvexHull, GjkVariant, Shape,
};
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};

fn settings(variant: GjkVariant) -> ContactSettings {
    let mut s = ContactSettings::default();
    s.gjk.variant = variant;
    s
}

#[test]
fn negative_or_nan_parameters_are_typed_errors() {
    assert!(matches!(
        Shape::sphere(-1.0),
        Err(CollisionError::InvalidParameter {
            field: "radius",
            ..
        })
    ));
    assert!(matches!(
        Shape::cuboid(Vector3::new(1.0, f64::NAN, 1.0)),
        Err(CollisionError::InvalidParameter {
            field: "half_extents.y",
            ..
        })
    ));
    assert!(matches!(
        Shape::halfspace(Vector3::zeros(), 0.0),
        Err(CollisionError::InvalidNormal(..))
    ));
}

#[test]
fn empty_and_non_finite_meshes_are_typed_errors() {
    assert!(matches!(
        ConvexHull::from_points(&[], "empty"),
        Err(CollisionError::EmptyMesh { .. })
    ));
    let pts = [Vector3::zeros(), Vector3::new(1.0, f64::INFINITY, 0.0)];
    assert!(matches!(
        ConvexHull::from_points(&pts, "bad"),
        Err(CollisionError::NonFiniteVertex { index: 1, .. })
    ));
}

#[test]
fn nan_pose_is_a_typed_error() {
    let s = Shape::sphere(1.0).unwrap();
    let bad = Isometry3::translation(f64::NAN, 0.0, 0.0);
    let r = signed_distance(
        &s,
        &Isometry3::identity(),
        &s,
        &bad,
        &settings(GjkVariant::Vanilla),
        None,
    );
    assert!(matches!(r, Err(CollisionError::NonFinitePose { .. })));
}

#[test]
fn two_halfspaces_are_unsupported() {
    let h = Shape::halfspace(Vector3::z(), 0.0).unwrap();
    let r = signed_distance(
        &h,
        &Isometry3::identity(),
        &h,
        &Isometry3::identity(),
        &settings(GjkVariant::Vanilla),
        None,
    );
    assert!(matches!(r, Err(CollisionError::UnsupportedPair(_))));
}

#[test]
fn coincident_centres_and_zero_size_shapes_give_well_defined_answers() {
    let variants = [
        GjkVariant::Vanilla,
        GjkVariant::Polyak,
        GjkVariant::Nesterov { normalize: true },
    ];
    let sphere = Shape::sphere(0.2).unwrap();
    let point = Shape::sphere(0.0).unwrap();
    let cube = Shape::cuboid(Vector3::new(0.1, 0.1, 0.1)).unwrap();
    let flat_box = Shape::cuboid(Vector3::new(0.1, 0.1, 0.0)).unwrap();
    let id = Isometry3::identity();
    for v in variants {
        let c = signed_distance(&sphere, &id, &sphere, &id, &settings(v), None).unwrap();
        assert!((c.distance + 0.4).abs() < 1e-12, "{c:?}");
        assert!((c.normal.norm() - 1.0).abs() < 1e-12);
        let c = signed_distance(&point, &id, &point, &id, &settings(v), None).unwrap();
        assert_eq!(c.distance, 0.0);
        let c = signed_distance(&cube, &id, &cube, &id, &settings(v), None).unwrap();
        assert!((c.distance + 0.2).abs() < 1e-6, "{c:?}");
        let c = signed_distance(&flat_box, &id, &flat_box, &id, &settings(v), None).unwrap();
        assert!(c.distance.abs() < 1e-12 && c.distance.is_finite(), "{c:?}");
        let far = Isometry3::translation(0.0, 0.0, 1.0);
        let c = signed_distance(&point, &id, &flat_box, &far, &settings(v), None).unwrap();
        assert!((c.distance - 1.0).abs() < 1e-12, "{c:?}");
    }
}

#[test]
fn flat_mesh_is_a_well_defined_polygon() {
    // All vertices in the plane z = 0: a square with an interior point and duplicates.
    let pts = [
        Vector3::new(-1.0, -1.0, 0.0),
        Vector3::new(1.0, -1.0, 0.0),
        Vector3::new(1.0, 1.0, 0.0),
        Vector3::new(-1.0, 1.0, 0.0),
        Vector3::new(0.0, 0.0, 0.0),
        Vector3::new(1.0, 1.0, 0.0),
    ];
    let hull = Arc::new(ConvexHull::from_points(&pts, "flat").unwrap());
    assert!(!hull.is_solid());
    let square = Shape::convex_hull(hull);
    let ball = Shape::sphere(0.5).unwrap();
    let id = Isometry3::identity();
    let c = signed_distance(
        &square,
        &id,
        &ball,
        &Isometry3::translation(0.3, 0.2, 0.7),
        &settings(GjkVariant::Vanilla),
        None,
    )
    .unwrap();
    assert!((c.distance - 0.2).abs() < 1e-12, "{c:?}");
    let c = signed_distance(
        &square,
        &id,
        &ball,
        &Isometry3::translation(0.3, 0.2, 0.1),
        &settings(GjkVariant::Vanilla),
        None,
    )
    .unwrap();
    assert!((c.distance + 0.4).abs() < 1e-9, "{c:?}");
    assert!((c.normal.z.abs() - 1.0).abs() < 1e-9);
}

#[test]
fn margin_reports_close_pairs_with_positive_distance() {
    let a = Shape::cuboid(Vector3::new(0.5, 0.5, 0.5)).unwrap();
    let b = Shape::sphere(0.1).unwrap();
    let id = Isometry3::identity();
    let near = Isometry3::from_parts(
        Translation3::new(0.0, 0.0, 0.62),
        UnitQuaternion::identity(),
    );
    let mut s = settings(GjkVariant::Nesterov { normalize: true });
    assert!(contact(&a, &id, &b, &near, &s, None).unwrap().is_none());
    s.margin = 0.05;
    let c = contact(&a, &id, &b, &near, &s, None)
        .unwrap()
        .expect("inside the margin");
    assert!((c.distance - 0.02).abs() < 1e-9);
    assert!((c.normal - Vector3::z()).norm() < 1e-9);
}
