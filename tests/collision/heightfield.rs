//! Height fields: closed-form contacts on a tilted cell and on a ridge, the footprint's
//! edge, boxes, the generators and malformed input.

use std::path::PathBuf;
use std::sync::Arc;

use contactbench::collision::heightfield::contactbench_height;
use contactbench::collision::{
    contact, signed_distance, ContactSettings, HeightField, HeightFieldError, Shape,
};
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};

fn field_of(z: impl Fn(f64, f64) -> f64, size: f64, spacing: f64) -> Arc<HeightField> {
    match HeightField::sampled("test", [size, size], spacing, z) {
        Ok(f) => Arc::new(f),
        Err(e) => panic!("valid height field: {e}"),
    }
}

fn sphere_contact(
    field: &Arc<HeightField>,
    centre: Vector3<f64>,
    radius: f64,
) -> Option<contactbench::collision::Contact> {
    let ground = Shape::heightfield(field.clone());
    let Ok(sphere) = Shape::sphere(radius) else {
        panic!("valid sphere");
    };
    let settings = ContactSettings {
        margin: 0.05,
        ..Default::default()
    };
    match contact(
        &ground,
        &Isometry3::identity(),
        &sphere,
        &Isometry3::from(Translation3::from(centre)),
        &settings,
        None,
    ) {
        Ok(c) => c,
        Err(e) => panic!("a sphere over a height field has an answer: {e}"),
    }
}

fn temp_file(name: &str, bytes: &[u8]) -> PathBuf {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "contactbench-heightfield-{}-{name}",
        std::process::id()
    ));
    if let Err(e) = std::fs::write(&path, bytes) {
        panic!("cannot write {}: {e}", path.display());
    }
    path
}

#[test]
fn a_sphere_over_a_tilted_cell_matches_the_plane_distance() {
    // z = a x + b y: every cell lies in the plane with normal (−a, −b, 1)/‖·‖.
    let (a, b) = (0.3, -0.2);
    let field = field_of(|x, y| a * x + b * y, 1.0, 0.1);
    let centre = Vector3::new(0.013, 0.027, 0.05);
    let radius = 0.016;
    let Some(c) = sphere_contact(&field, centre, radius) else {
        panic!("within the margin");
    };
    let norm = (1.0 + a * a + b * b).sqrt();
    let expected = (centre.z - a * centre.x - b * centre.y) / norm - radius;
    let normal = Vector3::new(-a, -b, 1.0) / norm;
    assert!(
        (c.distance - expected).abs() < 1e-14,
        "{} vs {expected}",
        c.distance
    );
    assert!((c.normal - normal).amax() < 1e-14, "{}", c.normal);
    assert!((c.point_b - c.point_a - c.normal * c.distance).amax() < 1e-14);
    // The witness on the surface lies in the plane.
    assert!((c.point_a.z - a * c.point_a.x - b * c.point_a.y).abs() < 1e-14);
}

#[test]
fn a_sphere_over_a_ridge_touches_the_ridge_line_along_the_bisector_side() {
    // z = −k |x|: a ridge along y at x = 0 (a row of samples); a centre at (δ, y, h)
    // with δ/h < k lies in the ridge's Voronoi region: the closest point is (0, y, 0).
    let k = 0.5;
    let field = field_of(|x, _| -k * x.abs(), 1.0, 0.05);
    let (delta, h, radius) = (0.01, 0.05, 0.016);
    let centre = Vector3::new(delta, 0.0123, h);
    let Some(c) = sphere_contact(&field, centre, radius) else {
        panic!("within the margin");
    };
    let expected = delta.hypot(h) - radius;
    assert!(
        (c.distance - expected).abs() < 1e-14,
        "{} vs {expected}",
        c.distance
    );
    let normal = Vector3::new(delta, 0.0, h) / delta.hypot(h);
    assert!((c.normal - normal).amax() < 1e-14, "{}", c.normal);
    assert!((c.point_a - Vector3::new(0.0, 0.0123, 0.0)).amax() < 1e-14);
}

#[test]
fn a_sphere_in_a_valley_touches_a_face_at_the_face_distance() {
    // z = k |x|: centred over the valley the two faces are equally far, h / √(1 + k²).
    let k = 0.5;
    let field = field_of(|x, _| k * x.abs(), 1.0, 0.05);
    let (h, radius) = (0.05, 0.016);
    let Some(c) = sphere_contact(&field, Vector3::new(0.0, 0.031, h), radius) else {
        panic!("within the margin");
    };
    let expected = h / (1.0 + k * k).sqrt() - radius;
    assert!(
        (c.distance - expected).abs() < 1e-14,
        "{} vs {expected}",
        c.distance
    );
    assert!((c.normal.x.abs() - k / (1.0 + k * k).sqrt()).abs() < 1e-14);
}

#[test]
fn a_sphere_sunk_below_the_surface_has_a_negative_distance_and_an_upward_normal() {
    let field = field_of(|_, _| 0.1, 1.0, 0.1);
    let Some(c) = sphere_contact(&field, Vector3::new(0.05, 0.05, 0.095), 0.016) else {
        panic!("penetrating");
    };
    assert!(
        (c.distance - (-0.005 - 0.016)).abs() < 1e-14,
        "{}",
        c.distance
    );
    assert!((c.normal - Vector3::z()).amax() < 1e-14);
}

#[test]
fn a_sphere_outside_the_footprint_has_no_contact_and_no_distance() {
    let field = field_of(|_, _| 0.0, 1.0, 0.1);
    assert!(sphere_contact(&field, Vector3::new(0.7, 0.0, 0.0), 0.016).is_none());
    let ground = Shape::heightfield(field);
    let Ok(sphere) = Shape::sphere(0.016) else {
        panic!("valid sphere");
    };
    let far = Isometry3::from(Translation3::new(0.7, 0.0, 0.0));
    let result = signed_distance(
        &ground,
        &Isometry3::identity(),
        &sphere,
        &far,
        &ContactSettings::default(),
        None,
    );
    assert!(result.is_err());
}

#[test]
fn a_tilted_box_touches_through_its_deepest_corner() {
    let field = field_of(|_, _| 0.0, 2.0, 0.1);
    let ground = Shape::heightfield(field);
    let Ok(cube) = Shape::cuboid(Vector3::new(0.1, 0.1, 0.1)) else {
        panic!("valid box");
    };
    let angle = 0.3_f64;
    let pose = Isometry3::from_parts(
        Translation3::new(0.0, 0.0, 0.14),
        UnitQuaternion::from_euler_angles(angle, 0.0, 0.0),
    );
    // The lowest corner of a box rolled by θ about x is at z − 0.1 (cos θ + sin θ).
    let expected = 0.14 - 0.1 * (angle.cos() + angle.sin());
    let settings = ContactSettings {
        margin: 0.02,
        ..Default::default()
    };
    let Ok(Some(c)) = contact(
        &ground,
        &Isometry3::identity(),
        &cube,
        &pose,
        &settings,
        None,
    ) else {
        panic!("the corner is within the margin");
    };
    assert!(
        (c.distance - expected).abs() < 1e-14,
        "{} vs {expected}",
        c.distance
    );
}

#[test]
fn the_formula_and_the_roughness_are_sampled_as_stated() {
    let Ok(field) = HeightField::contactbench([1.0, 1.0], 0.02) else {
        panic!("valid formula grid");
    };
    assert_eq!(field.counts(), (51, 51));
    let [x0, y0, ..] = field.footprint();
    let Some(z) = field.height_at(x0 + 0.02 * 7.0, y0 + 0.02 * 11.0) else {
        panic!("inside");
    };
    assert!((z - contactbench_height(x0 + 0.14, y0 + 0.22)).abs() < 1e-12);
    let rough = |seed| HeightField::roughness([2.0, 2.0], 0.02, 0.1, 0.3, seed);
    let (Ok(a), Ok(b), Ok(c)) = (rough(3), rough(3), rough(4)) else {
        panic!("valid roughness");
    };
    assert_eq!(a, b);
    assert_ne!(a, c);
    let (lo, hi) = a.height_range();
    assert!(lo >= -0.1 && hi <= 0.1 && hi - lo > 0.1, "{lo} {hi}");
}

#[test]
fn a_csv_and_an_npy_file_give_the_same_field() {
    let csv = temp_file("grid.csv", b"# heights\n0, 0.1, 0.2\n0.3, 0.4, 0.5\n");
    let mut npy = b"\x93NUMPY\x01\x00".to_vec();
    let mut header = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }".to_string();
    while !(10 + header.len() + 1).is_multiple_of(64) {
        header.push(' ');
    }
    header.push('\n');
    npy.extend_from_slice(&(header.len() as u16).to_le_bytes());
    npy.extend_from_slice(header.as_bytes());
    for h in [0.0_f64, 0.1, 0.2, 0.3, 0.4, 0.5] {
        npy.extend_from_slice(&h.to_le_bytes());
    }
    let npy = temp_file("grid.npy", &npy);
    let (Ok(a), Ok(b)) = (
        HeightField::from_file(&csv, 0.1, None),
        HeightField::from_file(&npy, 0.1, None),
    ) else {
        panic!("both files are valid");
    };
    assert_eq!(a.counts(), (3, 2));
    assert_eq!(a.height_at(0.1, 0.05), b.height_at(0.1, 0.05));
    assert_eq!(a.height_at(0.1, 0.05), Some(0.5));
}

#[test]
fn malformed_height_fields_are_refused_naming_the_file_and_the_field() {
    let nan = temp_file("nan.csv", b"0, 0\n0, NaN\n");
    let Err(e) = HeightField::from_file(&nan, 0.1, None) else {
        panic!("NaN refused");
    };
    assert!(matches!(
        e,
        HeightFieldError::NonFinite {
            row: 1,
            column: 1,
            ..
        }
    ));
    assert!(
        e.to_string().contains("nan.csv") && e.to_string().contains("heights"),
        "{e}"
    );

    let ragged = temp_file("ragged.csv", b"0, 0, 0\n0, 0\n");
    let Err(e) = HeightField::from_file(&ragged, 0.1, None) else {
        panic!("ragged rows refused");
    };
    assert!(
        e.to_string().contains("ragged.csv") && e.to_string().contains("line 2"),
        "{e}"
    );

    let good = temp_file("good.csv", b"0, 0\n0, 0\n");
    let Err(e) = HeightField::from_file(&good, -0.1, None) else {
        panic!("negative spacing refused");
    };
    assert!(
        e.to_string().contains("good.csv") && e.to_string().contains("spacing"),
        "{e}"
    );

    let missing = PathBuf::from("no/such/heights.csv");
    let Err(e) = HeightField::from_file(&missing, 0.1, None) else {
        panic!("missing file refused");
    };
    assert!(e.to_string().contains("no/such/heights.csv"), "{e}");

    let one_row = temp_file("row.csv", b"0, 0, 0\n");
    assert!(matches!(
        HeightField::from_file(&one_row, 0.1, None),
        Err(HeightFieldError::Size { .. })
    ));
    assert!(HeightField::new("grid", 2, 2, 0.1, [0.0, 0.0], vec![0.0; 3]).is_err());
}
