//! Closed-form answers: sphere–sphere, sphere–halfspace, box–halfspace, capsule–capsule,
//! box–box face contact; distances to 1e-9, EPA penetrations to 1e-6, for every variant.

use contactbench::collision::{
    signed_distance, Contact, ContactSettings, GjkSettings, GjkVariant, Shape,
};
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};

const VARIANTS: [GjkVariant; 4] = [
    GjkVariant::Vanilla,
    GjkVariant::Polyak,
    GjkVariant::Nesterov { normalize: true },
    GjkVariant::Nesterov { normalize: false },
];

fn at(x: f64, y: f64, z: f64) -> Isometry3<f64> {
    Isometry3::translation(x, y, z)
}

fn query(a: &Shape, pa: &Isometry3<f64>, b: &Shape, pb: &Isometry3<f64>, v: GjkVariant) -> Contact {
    let settings = ContactSettings {
        gjk: GjkSettings {
            variant: v,
            ..GjkSettings::default()
        },
        ..ContactSettings::default()
    };
    signed_distance(a, pa, b, pb, &settings, None).expect("valid input")
}

fn assert_contact(c: &Contact, distance: f64, normal: Vector3<f64>, tol: f64) {
    assert!(c.converged, "not converged: {c:?}");
    assert!(
        (c.distance - distance).abs() <= tol,
        "distance {} vs {distance}",
        c.distance
    );
    assert!(
        (c.normal - normal).norm() <= tol.max(1e-9),
        "normal {:?} vs {normal:?}",
        c.normal
    );
    let gap = c.point_b - c.point_a - c.normal * c.distance;
    assert!(
        gap.norm() <= tol.max(1e-9),
        "witnesses inconsistent: {gap:?}"
    );
    let frame = c.frame.matrix();
    assert!((frame.column(2) - c.normal).norm() < 1e-12);
    assert!((frame.transpose() * frame - nalgebra::Matrix3::identity()).norm() < 1e-12);
    assert!((frame.determinant() - 1.0).abs() < 1e-12);
}

#[test]
fn sphere_sphere_separated_and_penetrating() {
    let a = Shape::sphere(0.5).unwrap();
    let b = Shape::sphere(0.3).unwrap();
    for v in VARIANTS {
        let c = query(&a, &at(0.0, 0.0, 0.0), &b, &at(1.0, 0.0, 0.0), v);
        assert_contact(&c, 0.2, Vector3::x(), 1e-9);
        assert!((c.point_a - Vector3::new(0.5, 0.0, 0.0)).norm() < 1e-9);
        let c = query(&a, &at(0.0, 0.0, 0.0), &b, &at(0.0, -0.7, 0.0), v);
        assert_contact(&c, -0.1, -Vector3::y(), 1e-9);
    }
}

#[test]
fn sphere_and_box_on_halfspace() {
    let ground = Shape::halfspace(Vector3::z(), 0.0).unwrap();
    let ball = Shape::sphere(0.1).unwrap();
    let c = query(
        &ground,
        &Isometry3::identity(),
        &ball,
        &at(0.3, 0.2, 0.05),
        GjkVariant::Vanilla,
    );
    assert_contact(&c, -0.05, Vector3::z(), 1e-12);
    assert!((c.point_b - Vector3::new(0.3, 0.2, -0.05)).norm() < 1e-12);
    let cube = Shape::cuboid(Vector3::new(0.1, 0.2, 0.3)).unwrap();
    let tilt = UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::FRAC_PI_2);
    let pose = Isometry3::from_parts(Translation3::new(0.0, 0.0, 0.25), tilt);
    // Rotated by 90° about x, the box's half height along world z is 0.2.
    let c = query(
        &ground,
        &Isometry3::identity(),
        &cube,
        &pose,
        GjkVariant::Vanilla,
    );
    assert_contact(&c, 0.05, Vector3::z(), 1e-12);
    // Box as A, ground as B: the normal is reversed.
    let c = query(
        &cube,
        &pose,
        &ground,
        &Isometry3::identity(),
        GjkVariant::Vanilla,
    );
    assert_contact(&c, 0.05, -Vector3::z(), 1e-12);
}

#[test]
fn capsule_capsule_parallel_and_crossing() {
    let cap = Shape::capsule(0.1, 0.5).unwrap();
    for v in VARIANTS {
        let c = query(&cap, &at(0.0, 0.0, 0.0), &cap, &at(0.0, 0.3, 0.2), v);
        assert_contact(&c, 0.1, Vector3::y(), 1e-9);
        // Crossing at right angles, axes d apart along x: signed distance d − 0.2.
        let turn = UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::FRAC_PI_2);
        let pose = Isometry3::from_parts(Translation3::new(0.25, 0.0, 0.0), turn);
        let c = query(&cap, &at(0.0, 0.0, 0.0), &cap, &pose, v);
        assert_contact(&c, 0.05, Vector3::x(), 1e-9);
        let pose = Isometry3::from_parts(Translation3::new(0.15, 0.0, 0.0), turn);
        let c = query(&cap, &at(0.0, 0.0, 0.0), &cap, &pose, v);
        assert_contact(&c, -0.05, Vector3::x(), 1e-9);
        let pose = Isometry3::from_parts(Translation3::new(0.05, 0.0, 0.0), turn);
        let c = query(&cap, &at(0.0, 0.0, 0.0), &cap, &pose, v);
        assert_contact(&c, -0.15, Vector3::x(), 1e-6);
    }
}

#[test]
fn box_box_face_contact() {
    let a = Shape::cuboid(Vector3::new(0.5, 0.5, 0.5)).unwrap();
    let b = Shape::cuboid(Vector3::new(0.2, 0.3, 0.25)).unwrap();
    for v in VARIANTS {
        let c = query(&a, &at(0.0, 0.0, 0.0), &b, &at(0.1, -0.1, 0.8), v);
        assert_contact(&c, 0.05, Vector3::z(), 1e-9);
        let c = query(&a, &at(0.0, 0.0, 0.0), &b, &at(0.1, -0.1, 0.7), v);
        assert_contact(&c, -0.05, Vector3::z(), 1e-6);
        let c = query(&a, &at(0.0, 0.0, 0.0), &b, &at(-0.6, 0.05, 0.1), v);
        assert_contact(&c, -0.1, -Vector3::x(), 1e-6);
    }
}
