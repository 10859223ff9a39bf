//! `contactbench paper` on the collision papers: bad meshes are refused with the file
//! named, a page whose meshes are missing says so instead of failing the command, and the
//! pages write their figures and data on a directory of meshes of one's own.
//!
//! The mesh directory is chosen by an environment variable, so one test function runs
//! every case in turn, holding the binary's environment lock, and the variable is removed
//! when it ends, passed or failed.

use std::path::{Path, PathBuf};

use contactbench::collision::benchmark::{normal_ellipsoid, random_direction};
use contactbench::collision::{ConvexHull, SupportMap};
use contactbench::paper::claims::Verdict;
use contactbench::paper::collision::corpus::{scan, solid_hull, Origin, MESHES_ENV};
use contactbench::paper::{run_paper, Options};
use nalgebra::Vector3;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "contactbench-collision-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// An ASCII STL of the hull of `points`.
fn write_stl(path: &Path, points: &[Vector3<f64>]) {
    let hull = ConvexHull::from_points(points, "test").expect("hull");
    let v = hull.vertices();
    let mut text = String::from("solid test\n");
    for f in hull.faces() {
        text.push_str("facet normal 0 0 0\nouter loop\n");
        for i in f {
            let p = v[*i as usize];
            text.push_str(&format!("vertex {} {} {}\n", p.x, p.y, p.z));
        }
        text.push_str("endloop\nendfacet\n");
    }
    text.push_str("endsolid test\n");
    std::fs::write(path, text).expect("write stl");
}

fn bad_meshes_are_refused_with_the_file_named(dir: &Path) {
    let empty = dir.join("empty.stl");
    std::fs::write(&empty, "").expect("write");
    let flat = dir.join("flat.stl");
    std::fs::write(
        &flat,
        "solid f\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid f\n",
    )
    .expect("write");
    let nan = dir.join("nan.stl");
    std::fs::write(
        &nan,
        "solid n\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex nan 0 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid n\n",
    )
    .expect("write");
    let missing = dir.join("no_such_mesh.stl");
    for path in [&empty, &flat, &nan, &missing] {
        let error = solid_hull(path).expect_err("refused").to_string();
        let name = path.file_name().unwrap().to_string_lossy();
        assert!(
            error.contains(name.as_ref()),
            "{error} does not name {name}"
        );
    }
    // A scan keeps going and lists each refused file by name.
    let corpus = scan(dir, Origin::User, Vec::new()).expect("scan");
    for name in ["empty.stl", "flat.stl", "nan.stl"] {
        assert!(
            corpus.refused.iter().any(|(n, _)| n == name),
            "{name} not refused: {:?}",
            corpus.refused
        );
    }
}

fn missing_meshes_make_the_pages_say_so(out: &Path) {
    std::env::set_var(MESHES_ENV, "/no/such/mesh/directory");
    let options = Options {
        only: vec!["gjk-tab1".into(), "gjk-fig9".into()],
        quick: true,
        force: true,
        earlier: None,
    };
    let outcome = run_paper(out, &options).expect("runs");
    assert!(outcome.errors().is_empty(), "{:?}", outcome.errors());
    for line in &outcome.lines {
        let page = line.outcome.as_ref().expect("page");
        assert!(!page.claims.is_empty());
        for claim in &page.claims {
            match &claim.verdict {
                Verdict::NotMeasurable(why) => {
                    assert!(why.contains("/no/such/mesh/directory"), "{why}");
                }
                other => panic!("{}: {other:?}", claim.claim),
            }
        }
    }
    let summary = std::fs::read_to_string(out.join("README.md")).expect("summary");
    assert!(
        summary.starts_with("# GJK++"),
        "the collision summary: {summary}"
    );
}

fn pages_run_on_a_directory_of_meshes(meshes: &Path, out: &Path) {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for (k, count) in [40, 60, 141, 200, 260, 320].iter().enumerate() {
        let e = normal_ellipsoid(&mut rng, 0.1, 0.025).expect("ellipsoid");
        let points: Vec<Vector3<f64>> = (0..*count)
            .map(|_| e.local_support(&random_direction(&mut rng)))
            .collect();
        write_stl(&meshes.join(format!("mesh{k}.stl")), &points);
    }
    std::env::set_var(MESHES_ENV, meshes);
    let options = Options {
        only: vec!["cda-tab1".into(), "gjk-fig9".into(), "gjk-fig13".into()],
        quick: true,
        force: true,
        earlier: None,
    };
    let outcome = run_paper(out, &options).expect("runs");
    assert!(outcome.errors().is_empty(), "{:?}", outcome.errors());
    for file in [
        "cda-tab1/README.md",
        "cda-tab1/cda-tab1.csv",
        "gjk-fig9/gjk-fig9.png",
        "gjk-fig9/gjk-fig9.csv",
        "gjk-fig13/gjk-fig13.png",
    ] {
        let meta = out
            .join(file)
            .metadata()
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(meta.len() > 100, "{file} is nearly empty");
    }
    // CDA's 33- and 141-vertex meshes have counterparts here, its 2500-vertex one has not:
    // the page measures what it can and says what it cannot.
    let page = std::fs::read_to_string(out.join("cda-tab1/README.md")).expect("page");
    assert!(page.contains("none here"), "{page}");
    // The bad files left in the directory are listed by name.
    for name in ["empty.stl", "flat.stl", "nan.stl"] {
        assert!(
            page.lines()
                .any(|l| l.starts_with("- Refused") && l.contains(name)),
            "{name} not listed as refused: {page}"
        );
    }
    assert!(
        page.contains("mesh1.stl") || page.contains("mesh2.stl"),
        "{page}"
    );
}

/// Removes `CONTACTBENCH_MESHES` when dropped, also when a check failed.
struct MeshesUnset;

impl Drop for MeshesUnset {
    fn drop(&mut self) {
        std::env::remove_var(MESHES_ENV);
    }
}

#[test]
fn collision_pages_refuse_bad_meshes_and_report_missing_ones() {
    let _environment = crate::environment_lock();
    let _unset = MeshesUnset;
    let meshes = temp_dir("meshes");
    bad_meshes_are_refused_with_the_file_named(&meshes);
    let out = temp_dir("out");
    missing_meshes_make_the_pages_say_so(&out.join("missing"));
    pages_run_on_a_directory_of_meshes(&meshes, &out.join("own"));
    let _ = std::fs::remove_dir_all(&meshes);
    let _ = std::fs::remove_dir_all(&out);
}
