//! STL reading (binary and ASCII written here), the hull, the geometry
//! conversion with its cache, and the scene: broad phase, filter, contacts.

use std::path::Path;

use contactbench::collision::{
    detect_contacts, shape_from_geometry, CollisionObject, ContactSettings, ConvexHull, Core,
    PairFilter, PairSet, Shape,
};
use contactbench::model::GeometryShape;
use nalgebra::{Isometry3, Vector3};
/// A triangle of an STL file (no normal: readers recompute or ignore it).
struct Triangle {
    vertices: [[f32; 3]; 3],
}

/// The unit cube's six faces as quads of corner indices (corner `i` at
/// `(i & 1, (i >> 1) & 1, (i >> 2) & 1)`).
const CUBE_FACES: [[usize; 4]; 6] = [
    [0, 1, 3, 2],
    [4, 6, 7, 5],
    [0, 4, 5, 1],
    [2, 3, 7, 6],
    [0, 2, 6, 4],
    [1, 5, 7, 3],
];

/// Triangles of the unit cube [0, 1]³ (12 triangles, 8 distinct vertices).
fn cube_triangles() -> Vec<Triangle> {
    let corners: Vec<[f32; 3]> = (0..8)
        .map(|i| [(i & 1) as f32, ((i >> 1) & 1) as f32, ((i >> 2) & 1) as f32])
        .collect();
    let quads = CUBE_FACES;
    let mut tris = Vec::new();
    for q in quads {
        for t in [[q[0], q[1], q[2]], [q[0], q[2], q[3]]] {
            tris.push(Triangle {
                vertices: t.map(|i| corners[i]),
            });
        }
    }
    tris
}

/// A binary STL file: 80-byte header (saying "solid", as SolidWorks writes it), triangle
/// count, then per triangle a zero normal,
/// three vertices (little-endian f32) and a zero attribute word.
fn write_binary(path: &Path, tris: &[Triangle]) {
    let mut bytes = vec![b' '; 80];
    bytes[..10].copy_from_slice(b"solid cube");
    bytes.extend_from_slice(&(tris.len() as u32).to_le_bytes());
    for t in tris {
        bytes.extend_from_slice(&[0u8; 12]);
        for v in &t.vertices {
            for c in v {
                bytes.extend_from_slice(&c.to_le_bytes());
            }
        }
        bytes.extend_from_slice(&[0u8; 2]);
    }
    std::fs::write(path, bytes).unwrap();
}

fn write_ascii(path: &Path, tris: &[Triangle]) {
    let mut s = String::from("solid cube\n");
    for t in tris {
        s.push_str("facet normal 0 0 0\nouter loop\n");
        for v in &t.vertices {
            s.push_str(&format!("vertex {} {} {}\n", v[0], v[1], v[2]));
        }
        s.push_str("endloop\nendfacet\n");
    }
    s.push_str("endsolid cube\n");
    std::fs::write(path, s).unwrap();
}

#[test]
fn binary_and_ascii_stl_give_the_same_hull() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("contactbench-coll-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let binary = dir.join("cube.stl");
    let ascii = dir.join("cube_ascii.STL");
    let tris = cube_triangles();
    write_binary(&binary, &tris);
    write_ascii(&ascii, &tris);
    let scale = Vector3::new(2.0, 1.0, 1.0);
    for path in [&binary, &ascii] {
        let hull = ConvexHull::from_stl(path, &scale).unwrap();
        assert_eq!(hull.vertices().len(), 8);
        assert_eq!(hull.faces().len(), 12);
        assert!((hull.centre() - Vector3::new(1.0, 0.5, 0.5)).norm() < 1e-12);
    }
    let g = GeometryShape::Mesh {
        path: binary.clone(),
        scale,
    };
    let s1 = shape_from_geometry(&g).unwrap();
    let s2 = shape_from_geometry(&g).unwrap();
    match (&s1.core, &s2.core) {
        (Core::Hull(h1), Core::Hull(h2)) => assert!(std::sync::Arc::ptr_eq(h1, h2)),
        _ => panic!("mesh geometry must become a hull"),
    }
    let missing = GeometryShape::Mesh {
        path: dir.join("missing.stl"),
        scale,
    };
    assert!(shape_from_geometry(&missing).is_err());
    std::fs::remove_dir_all(&dir).ok();
}

/// The unit cube of [`cube_triangles`] as a COLLADA file in centimetres (`<unit
/// meter="0.01">`, coordinates 0..100), its up axis `up`.
fn cube_collada(up: &str) -> String {
    let corners: Vec<String> = (0..8)
        .map(|i| {
            format!(
                "{} {} {}",
                (i & 1) * 100,
                ((i >> 1) & 1) * 100,
                ((i >> 2) & 1) * 100
            )
        })
        .collect();
    let quads = CUBE_FACES;
    let indices: Vec<String> = quads
        .iter()
        .flat_map(|q| [q[0], q[1], q[2], q[0], q[2], q[3]])
        .map(|i| i.to_string())
        .collect();
    format!(
        r##"<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit name="centimeter" meter="0.01"/><up_axis>{up}</up_axis></asset>
  <library_geometries>
    <geometry id="cube-mesh" name="cube">
      <mesh>
        <source id="cube-positions">
          <float_array id="cube-positions-array" count="24">{}</float_array>
          <technique_common>
            <accessor source="#cube-positions-array" count="8" stride="3">
              <param name="X" type="float"/>
              <param name="Y" type="float"/>
              <param name="Z" type="float"/>
            </accessor>
          </technique_common>
        </source>
        <vertices id="cube-vertices">
          <input semantic="POSITION" source="#cube-positions"/>
        </vertices>
        <triangles count="12">
          <input semantic="VERTEX" source="#cube-vertices" offset="0"/>
          <p>{}</p>
        </triangles>
      </mesh>
    </geometry>
  </library_geometries>
  <library_visual_scenes>
    <visual_scene id="Scene" name="Scene">
      <node id="cube" name="cube" type="NODE">
        <matrix sid="transform">1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1</matrix>
        <instance_geometry url="#cube-mesh"/>
      </node>
    </visual_scene>
  </library_visual_scenes>
  <scene><instance_visual_scene url="#Scene"/></scene>
</COLLADA>
"##,
        corners.join(" "),
        indices.join(" ")
    )
}

#[test]
fn a_collada_cube_gives_the_hull_of_the_same_cube_in_stl() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("contactbench-collada-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let stl = dir.join("cube.stl");
    write_binary(&stl, &cube_triangles());
    let dae = dir.join("cube.dae");
    std::fs::write(&dae, cube_collada("Z_UP")).unwrap();
    let scale = Vector3::new(2.0, 1.0, 1.0);
    let from_stl = ConvexHull::from_mesh_file(&stl, &scale).unwrap();
    let from_dae = ConvexHull::from_mesh_file(&dae, &scale).unwrap();
    // The file's centimetres become metres: the same 8 vertices (up to the f32 product
    // 100 × 0.01) and 12 faces.
    let sorted = |h: &ConvexHull| {
        let mut v: Vec<[f64; 3]> = h.vertices().iter().map(|p| [p.x, p.y, p.z]).collect();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v
    };
    let (a, b) = (sorted(&from_stl), sorted(&from_dae));
    assert_eq!((a.len(), from_stl.faces().len()), (8, 12));
    assert_eq!((b.len(), from_dae.faces().len()), (8, 12));
    for (p, q) in a.iter().zip(&b) {
        for k in 0..3 {
            assert!((p[k] - q[k]).abs() < 1e-6, "{p:?} vs {q:?}");
        }
    }
    assert!((from_dae.centre() - from_stl.centre()).norm() < 1e-6);
    // A Y_UP file is refused, naming the file and the format.
    let y_up = dir.join("cube_y_up.dae");
    std::fs::write(&y_up, cube_collada("Y_UP")).unwrap();
    let err = ConvexHull::from_mesh_file(&y_up, &scale)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("cube_y_up.dae") && err.contains("COLLADA") && err.contains("Y_UP"),
        "{err}"
    );
    // A file that is not COLLADA.
    let broken = dir.join("broken.dae");
    std::fs::write(&broken, "<COLLADA><library_geometries>").unwrap();
    let err = ConvexHull::from_mesh_file(&broken, &scale)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("broken.dae") && err.contains("COLLADA"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn hull_of_random_cloud_contains_every_point() {
    // Points on and inside a sphere: the hull keeps surface points only and every input
    // point lies below every face.
    let mut pts = Vec::new();
    for i in 0..400 {
        let t = i as f64 * 0.618_033_988_75;
        let z = 1.0 - 2.0 * (i as f64 + 0.5) / 400.0;
        let r = (1.0 - z * z).sqrt();
        let scale = if i % 3 == 0 { 0.5 } else { 1.0 };
        pts.push(
            Vector3::new(
                r * (t * std::f64::consts::TAU).cos(),
                r * (t * std::f64::consts::TAU).sin(),
                z,
            ) * scale,
        );
    }
    let hull = ConvexHull::from_points(&pts, "cloud").unwrap();
    assert!(hull.vertices().len() < pts.len());
    let v = hull.vertices();
    for f in hull.faces() {
        let [a, b, c] = f.map(|i| v[i as usize]);
        let n = (b - a).cross(&(c - a)).normalize();
        for p in &pts {
            assert!(n.dot(&(p - a)) <= 1e-9);
        }
    }
}

fn object(shape: Shape, x: f64, z: f64, owner: usize) -> CollisionObject {
    CollisionObject {
        shape,
        pose: Isometry3::translation(x, 0.0, z),
        owner,
        name: format!("object at {x}"),
    }
}

#[test]
fn scene_finds_ground_contacts_and_respects_filters() {
    let ground = Shape::halfspace(Vector3::z(), 0.0).unwrap();
    let ball = Shape::sphere(0.1).unwrap();
    let objects = vec![
        object(ground, 0.0, 0.0, 0),
        object(ball.clone(), 0.0, 0.05, 1),
        object(ball.clone(), 0.15, 0.05, 1),
        object(ball.clone(), 5.0, 1.0, 2),
    ];
    let settings = ContactSettings::default();
    let all = detect_contacts(&objects, &PairFilter::default(), &settings).unwrap();
    let pairs: Vec<(usize, usize)> = all.iter().map(|c| (c.a, c.b)).collect();
    assert_eq!(pairs, vec![(0, 1), (0, 2), (1, 2)]);
    for c in &all[..2] {
        assert!((c.contact.distance + 0.05).abs() < 1e-12);
        assert!((c.contact.normal - Vector3::z()).norm() < 1e-12);
    }
    let same_owner = PairFilter {
        skip_same_owner: true,
        ..PairFilter::default()
    };
    let some = detect_contacts(&objects, &same_owner, &settings).unwrap();
    assert_eq!(some.len(), 2);
    let only = PairFilter {
        allowed: Some(PairSet::from_iter([(2, 0)])),
        ..PairFilter::default()
    };
    let one = detect_contacts(&objects, &only, &settings).unwrap();
    assert_eq!(one.len(), 1);
    assert_eq!((one[0].a, one[0].b), (0, 2));
    let bad = PairFilter {
        allowed: Some(PairSet::from_iter([(0, 9)])),
        ..PairFilter::default()
    };
    assert!(detect_contacts(&objects, &bad, &settings).is_err());
}

#[test]
fn hill_climbing_support_matches_a_linear_scan() {
    use contactbench::collision::SupportMap;
    let mut pts = Vec::new();
    for i in 0..500 {
        let t = i as f64 * 2.399_963;
        let z = 1.0 - 2.0 * (i as f64 + 0.5) / 500.0;
        let r = (1.0 - z * z).sqrt();
        pts.push(Vector3::new(0.3 * r * t.cos(), 0.1 * r * t.sin(), 0.2 * z));
    }
    let hull = ConvexHull::from_points(&pts, "cloud").unwrap();
    assert!(hull.vertices().len() > 32, "hill-climbing must be used");
    let mut hint = usize::MAX;
    for k in 0..2000 {
        let a = k as f64 * 0.7548;
        let b = k as f64 * 0.5698;
        let dir = Vector3::new(a.cos() * b.sin(), a.sin() * b.sin(), b.cos());
        let best = pts
            .iter()
            .map(|p| p.dot(&dir))
            .fold(f64::NEG_INFINITY, f64::max);
        let cold = hull.local_support(&dir).dot(&dir);
        let warm = hull.local_support_hinted(&dir, &mut hint).dot(&dir);
        assert!(
            best - cold <= 1e-12 && best - warm <= 1e-12,
            "direction {k}"
        );
    }
}

#[test]
fn warm_started_scene_gives_the_same_contacts() {
    use contactbench::collision::{detect_contacts_warm, WarmStartCache};
    // A box against an ellipsoid goes through GJK (a box against a ball is in closed form
    // and has no warm start to keep).
    let cube = Shape::cuboid(Vector3::new(0.1, 0.1, 0.1)).unwrap();
    let egg = Shape::ellipsoid(Vector3::new(0.05, 0.04, 0.05)).unwrap();
    let objects = vec![
        object(cube.clone(), 0.0, 0.0, 1),
        object(egg, 0.14, 0.0, 2),
        object(cube, 0.3, 0.0, 3),
    ];
    let settings = ContactSettings {
        margin: 0.02,
        ..ContactSettings::default()
    };
    let mut cache = WarmStartCache::new();
    let cold =
        detect_contacts_warm(&objects, &PairFilter::default(), &settings, &mut cache).unwrap();
    assert_eq!(cache.len(), cold.len());
    let warm =
        detect_contacts_warm(&objects, &PairFilter::default(), &settings, &mut cache).unwrap();
    assert_eq!(cold.len(), 2);
    for (c, w) in cold.iter().zip(&warm) {
        assert_eq!((c.a, c.b), (w.a, w.b));
        assert!((c.contact.distance - w.contact.distance).abs() < 1e-9);
        assert!(w.contact.gjk_iterations <= c.contact.gjk_iterations);
    }
}

#[test]
fn sweep_and_prune_finds_the_same_pairs_as_brute_force() {
    use contactbench::collision::contact;
    let mut objects = Vec::new();
    for i in 0..150 {
        let x = (i as f64 * 0.618_034).fract() * 2.0;
        let y = (i as f64 * 0.414_214).fract() * 2.0;
        let z = (i as f64 * 0.732_051).fract() * 2.0;
        let shape = if i % 2 == 0 {
            Shape::sphere(0.1).unwrap()
        } else {
            Shape::cuboid(Vector3::new(0.08, 0.05, 0.12)).unwrap()
        };
        objects.push(CollisionObject {
            shape,
            pose: Isometry3::translation(x, y, z),
            owner: i,
            name: format!("object {i}"),
        });
    }
    objects.push(object(
        Shape::halfspace(Vector3::z(), 0.1).unwrap(),
        0.0,
        0.0,
        999,
    ));
    let settings = ContactSettings {
        margin: 0.01,
        ..ContactSettings::default()
    };
    let found: Vec<(usize, usize)> = detect_contacts(&objects, &PairFilter::default(), &settings)
        .unwrap()
        .iter()
        .map(|c| (c.a, c.b))
        .collect();
    let mut brute = Vec::new();
    for i in 0..objects.len() {
        for j in i + 1..objects.len() {
            let (a, b) = (&objects[i], &objects[j]);
            if contact(&a.shape, &a.pose, &b.shape, &b.pose, &settings, None)
                .unwrap()
                .is_some()
            {
                brute.push((i, j));
            }
        }
    }
    assert!(!brute.is_empty());
    assert_eq!(found, brute);
}
