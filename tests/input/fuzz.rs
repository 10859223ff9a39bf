//! Seeded mutation fuzzing of every input format a user hands contactbench: scenario YAML
//! (with and without a `--set` override), problem JSON, FCLIB HDF5, npz, warm starts,
//! URDF, SRDF, STL, COLLADA and OBJ. Each case mutates a valid seed file (byte flips,
//! insertions of hostile tokens, huge sizes written over binary fields, deletions,
//! duplications, truncations, deep nesting) and parses it; a panic fails the test (and an
//! abort, such as a stack overflow, kills it), and so does a case slower than
//! `HANG_LIMIT`. The binary's allocator refuses any single allocation over
//! `ALLOCATION_LIMIT`, so a size a mutated file declares and a reader trusts aborts the
//! binary too.
//!
//! `cargo test --test input fuzz::` runs `DEFAULT_CASES` cases per format (what CI runs);
//! `CONTACTBENCH_FUZZ_CASES=N` runs N, `CONTACTBENCH_FUZZ_SEED=S` another sequence. The
//! counts measured are in docs/reliability.md.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use contactbench::collision::mesh::ConvexHull;
use contactbench::model::{Model, RootJoint};
use contactbench::problem::io::{read_lambda, read_problem};
use contactbench::simulation::Scenario;
use nalgebra::Vector3;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Cases per format when `CONTACTBENCH_FUZZ_CASES` is not set.
const DEFAULT_CASES: usize = 300;
/// A case slower than this is a hang.
const HANG_LIMIT: Duration = Duration::from_secs(5);

/// Tokens that have broken parsers before: huge and odd numbers, nesting, bad UTF-8.
const TOKENS: &[&[u8]] = &[
    b"1e308",
    b"-1e308",
    b"1e999",
    b"5e-324",
    b"-0",
    b"nan",
    b".nan",
    b"NaN",
    b"inf",
    b"-.inf",
    b"18446744073709551616",
    b"-1",
    b"0",
    b"[[[[[[[[[[[[[[[[",
    b"{{{{{{{{{{{{{{{{",
    b"]]]]",
    b"}}}}",
    b"- - - - - - - -",
    b"&a [*a, *a]",
    b"*a",
    b"!!binary",
    b"\"",
    b"'",
    b":",
    b"\n  ",
    b"\t",
    b"\xff\xfe",
    b"\xc3",
    b"\0",
    b"<link name=\"x\">",
    b"</link>",
    b"<joint name=\"x\" type=\"floating\">",
    b"<inertial><mass value=\"0\"/></inertial>",
    b"<![CDATA[",
    b"&amp;",
    b"&#xD800;",
    b"<!DOCTYPE x [<!ENTITY a \"aaaa\">]>",
    b"solid x\nfacet normal 0 0 1\nouter loop\nvertex 1e308 0 0\nendloop\nendfacet\nendsolid x\n",
    b"\xef\xbb\xbf",
    b"count=\"4000000000\"",
    b"offset=\"4294967295\"",
    b"<link name=\"link_0\"/>",
    b"<joint name=\"joint_1\" type=\"fixed\"><parent link=\"a\"/><child link=\"b\"/></joint>",
    b"package://pkg/../../x.stl",
    b"quat_xyzw=\"0 0 0 1\"",
    b"version=\"1.2\"",
    b"<group_state name=\"s\" group=\"all\">",
    b"\"lambda\": ",
    b"\"solvers\": [",
    b"'shape': (4000000000, 4000000000), ",
    b"(15001, 15001)",
    b"'descr': '<c16', ",
];

/// Sizes a binary header may declare (HDF5 dimensions and matrix sizes, zip entry sizes,
/// the triangle count of a binary STL), written little-endian over 4 or 8 bytes of a
/// case: the edges of their integer types and values just over the readers' caps.
const DECLARED_SIZES: &[u64] = &[
    u64::MAX,
    1 << 63,
    1 << 40,
    u32::MAX as u64,
    (1 << 31) - 1,
    1 << 31,
    1_000_001,
    15_001,
];

fn cases() -> usize {
    std::env::var("CONTACTBENCH_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_CASES)
}

fn seed() -> u64 {
    std::env::var("CONTACTBENCH_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(13)
}

/// Writes one of [`DECLARED_SIZES`] little-endian over 4 or 8 bytes of `out` that held a
/// small integer (1 to 65,535, as the sizes, counts and offsets of a small binary file
/// do), if 64 tries find one; returns whether it wrote.
fn overwrite_declared_size(rng: &mut ChaCha8Rng, out: &mut [u8]) -> bool {
    let width = if rng.random() { 4 } else { 8 };
    if out.len() < width {
        return false;
    }
    for _ in 0..64 {
        let at = rng.random_range(0..=out.len() - width);
        let mut held = [0u8; 8];
        held[..width].copy_from_slice(&out[at..at + width]);
        if (1..=65_535).contains(&u64::from_le_bytes(held)) {
            let value = DECLARED_SIZES[rng.random_range(0..DECLARED_SIZES.len())];
            out[at..at + width].copy_from_slice(&value.to_le_bytes()[..width]);
            return true;
        }
    }
    false
}

/// One random mutation (or a few) of `input`. One case in four of a binary file only has
/// sizes written over it: its offsets stay valid, so its readers reach the checks of what
/// it declares instead of stopping at a broken structure.
fn mutate(rng: &mut ChaCha8Rng, input: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    if rng.random_range(0..4) == 0 {
        let mut wrote = false;
        for _ in 0..rng.random_range(1..=3) {
            wrote |= overwrite_declared_size(rng, &mut out);
        }
        if wrote {
            return out;
        }
    }
    for _ in 0..rng.random_range(1..=4) {
        let n = out.len();
        let at = if n == 0 { 0 } else { rng.random_range(0..=n) };
        match rng.random_range(0..9) {
            0 if n > 0 => {
                let k = rng.random_range(0..n);
                out[k] ^= 1 << rng.random_range(0..8);
            }
            1 => {
                let byte: u8 = rng.random();
                out.insert(at, byte);
            }
            2 if n > 0 => {
                let end = (at + rng.random_range(1..64)).min(n);
                out.drain(at.min(end)..end);
            }
            3 if n > 0 => {
                let start = rng.random_range(0..n);
                let end = (start + rng.random_range(1..256)).min(n);
                let chunk = out[start..end].to_vec();
                for _ in 0..rng.random_range(1..8) {
                    out.splice(at..at, chunk.iter().copied());
                }
            }
            4 => out.truncate(at),
            5 => {
                let depth = rng.random_range(1..20_000);
                let (open, close): (&[u8], &[u8]) = match rng.random_range(0..3) {
                    0 => (b"[", b"]"),
                    1 => (b"{a: ", b"}"),
                    _ => (b"<a>", b"</a>"),
                };
                let mut nest = open.repeat(depth);
                nest.extend(close.repeat(depth));
                out.splice(at..at, nest);
            }
            // A text file holds no small binary integer: a token is inserted instead.
            6 if overwrite_declared_size(rng, &mut out) => {}
            _ => {
                let token = TOKENS[rng.random_range(0..TOKENS.len())];
                out.splice(at..at, token.iter().copied());
            }
        }
    }
    out
}

fn temp(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("contactbench-fuzz-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Runs `parse` on `cases` mutations of the seeds; returns (cases, accepted, slowest).
fn fuzz(name: &str, seeds: &[Vec<u8>], parse: &dyn Fn(&[u8]) -> bool) -> (usize, usize, Duration) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed() ^ name.len() as u64);
    let (n, mut accepted, mut slowest) = (cases(), 0, Duration::ZERO);
    for case in 0..n {
        let input = mutate(&mut rng, &seeds[case % seeds.len()]);
        let clock = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| parse(&input)));
        let elapsed = clock.elapsed();
        slowest = slowest.max(elapsed);
        match outcome {
            Ok(ok) => accepted += usize::from(ok),
            Err(_) => {
                let dump = temp(name).join(format!("panic-{case}.bin"));
                let _ = std::fs::write(&dump, &input);
                panic!("{name}: case {case} panicked (input in {})", dump.display());
            }
        }
        assert!(
            elapsed < HANG_LIMIT,
            "{name}: case {case} took {elapsed:?} (a hang)"
        );
    }
    println!(
        "{name}: {n} cases, 0 panics, 0 hangs, {accepted} accepted, slowest {:.1} ms",
        slowest.as_secs_f64() * 1e3
    );
    (n, accepted, slowest)
}

fn files(dir: &str, ext: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("seed directory")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| std::fs::read(p).expect("seed"))
        .collect()
}

#[test]
fn scenario_yaml() {
    let seeds = files("scenarios", "yaml");
    assert!(seeds.len() >= 8);
    let file = Path::new("fuzz.yaml");
    let overrides = ["simulation.duration=0.1".to_string()];
    fuzz("scenario_yaml", &seeds, &|bytes| {
        let Ok(text) = std::str::from_utf8(bytes) else {
            return false;
        };
        let plain = Scenario::from_yaml(text, file, &[]).is_ok();
        let set = Scenario::from_yaml(text, file, &overrides).is_ok();
        plain || set
    });
}

#[test]
fn problem_json() {
    let mut seeds = files("tests/data", "json");
    seeds.retain(|s| s.starts_with(b"{") && !s.windows(4).any(|w| w == b"\"nq\""));
    assert!(!seeds.is_empty());
    let dir = temp("problem");
    fuzz("problem_json", &seeds, &|bytes| {
        let path = dir.join("case.json");
        std::fs::write(&path, bytes).expect("write");
        read_problem(&path).is_ok()
    });
}

#[test]
fn problem_fclib() {
    // The small FCLIB files (local in three sparse layouts, global, unsupported variants);
    // the 0.5 MB Spheres file would only slow each case down.
    let mut seeds = files("tests/data/fclib", "hdf5");
    seeds.retain(|s| s.len() < 100_000);
    assert!(seeds.len() >= 6);
    let dir = temp("fclib");
    fuzz("problem_fclib", &seeds, &|bytes| {
        let path = dir.join("case.hdf5");
        std::fs::write(&path, bytes).expect("write");
        read_problem(&path).is_ok()
    });
}

#[test]
fn problem_npz() {
    let seeds = files("tests/data/fclib", "npz");
    assert!(!seeds.is_empty());
    let dir = temp("npz");
    fuzz("problem_npz", &seeds, &|bytes| {
        let path = dir.join("case.npz");
        std::fs::write(&path, bytes).expect("write");
        read_problem(&path).is_ok()
    });
}

#[test]
fn warm_start_json() {
    let seeds = vec![
        b"[0.0, 0.5, 1.0]".to_vec(),
        b"{\"lambda\": [0.0, 0.5, 1.0], \"status\": \"converged\"}".to_vec(),
        b"{\"problem\": \"p.json\", \"solvers\": [{\"solver\": \"ncp-pgs\", \"lambda\": [0.0, 0.5, 1.0]}], \"lambda\": [0.0, 0.5, 1.0], \"lambda_solver\": \"ncp-pgs\"}".to_vec(),
    ];
    let dir = temp("warm");
    fuzz("warm_start_json", &seeds, &|bytes| {
        let path = dir.join("case.json");
        std::fs::write(&path, bytes).expect("write");
        read_lambda(&path).is_ok()
    });
}

#[test]
fn urdf() {
    let seeds = files("tests/data", "urdf");
    assert!(seeds.len() >= 2);
    let dir = temp("urdf");
    fuzz("urdf", &seeds, &|bytes| {
        let path = dir.join("case.urdf");
        std::fs::write(&path, bytes).expect("write");
        Model::from_urdf(&path, RootJoint::FreeFlyer).is_ok()
    });
}

#[test]
fn srdf() {
    let urdf = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/model_pendulum.urdf");
    let model = Model::from_urdf(&urdf, RootJoint::Fixed).expect("shipped URDF");
    let joints: Vec<String> = model.joint_names()[1..]
        .iter()
        .map(|j| format!("<joint name=\"{j}\" value=\"0.5\"/>"))
        .collect();
    let seed = format!(
        "<?xml version=\"1.0\"?>\n<robot name=\"{}\">\n<group name=\"all\"/>\n<group_state name=\"rest\" group=\"all\">\n{}\n</group_state>\n<disable_collisions link1=\"a\" link2=\"b\" reason=\"Adjacent\"/>\n</robot>\n",
        model.name,
        joints.join("\n")
    );
    let dir = temp("srdf");
    fuzz("srdf", &[seed.into_bytes()], &|bytes| {
        let path = dir.join("case.srdf");
        std::fs::write(&path, bytes).expect("write");
        model.clone().load_srdf(&path).is_ok()
    });
}

/// A cube as ASCII and binary STL.
fn stl_seeds() -> Vec<Vec<u8>> {
    let corners: Vec<[f32; 3]> = (0..8)
        .map(|k| [(k & 1) as f32, ((k >> 1) & 1) as f32, ((k >> 2) & 1) as f32])
        .collect();
    let faces = [
        [0, 2, 1],
        [1, 2, 3],
        [4, 5, 6],
        [5, 7, 6],
        [0, 1, 4],
        [1, 5, 4],
        [2, 6, 3],
        [3, 6, 7],
        [0, 4, 2],
        [2, 4, 6],
        [1, 3, 5],
        [3, 7, 5],
    ];
    let mut ascii = String::from("solid cube\n");
    let mut binary = vec![0u8; 80];
    binary.extend((faces.len() as u32).to_le_bytes());
    for f in faces {
        ascii.push_str("facet normal 0 0 0\n outer loop\n");
        binary.extend([0u8; 12]);
        for v in f {
            let p = corners[v];
            ascii.push_str(&format!("  vertex {} {} {}\n", p[0], p[1], p[2]));
            for x in p {
                binary.extend(x.to_le_bytes());
            }
        }
        ascii.push_str(" endloop\nendfacet\n");
        binary.extend([0u8; 2]);
    }
    ascii.push_str("endsolid cube\n");
    vec![ascii.into_bytes(), binary]
}

#[test]
fn stl() {
    let seeds = stl_seeds();
    let dir = temp("stl");
    let seed_path = dir.join("seed.stl");
    std::fs::write(&seed_path, &seeds[1]).expect("write");
    assert!(ConvexHull::from_stl(&seed_path, &Vector3::repeat(1.0)).is_ok());
    fuzz("stl", &seeds, &|bytes| {
        let path = dir.join("case.stl");
        std::fs::write(&path, bytes).expect("write");
        ConvexHull::from_stl(&path, &Vector3::repeat(1.0)).is_ok()
    });
}

/// A unit cube as COLLADA (triangles over one position source).
fn collada_seed() -> Vec<u8> {
    let corners: Vec<String> = (0..8)
        .map(|k| format!("{} {} {}", k & 1, (k >> 1) & 1, (k >> 2) & 1))
        .collect();
    let faces = "0 2 1 1 2 3 4 5 6 5 7 6 0 1 4 1 5 4 2 6 3 3 6 7 0 4 2 2 4 6 1 3 5 3 7 5";
    format!(
        r##"<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit name="meter" meter="1"/><up_axis>Z_UP</up_axis></asset>
  <library_geometries><geometry id="g"><mesh>
    <source id="p"><float_array id="pa" count="24">{}</float_array>
      <technique_common><accessor source="#pa" count="8" stride="3"><param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/></accessor></technique_common>
    </source>
    <vertices id="v"><input semantic="POSITION" source="#p"/></vertices>
    <triangles count="12"><input semantic="VERTEX" source="#v" offset="0"/><p>{faces}</p></triangles>
  </mesh></geometry></library_geometries>
  <library_visual_scenes><visual_scene id="s"><node><instance_geometry url="#g"/></node></visual_scene></library_visual_scenes>
  <scene><instance_visual_scene url="#s"/></scene>
</COLLADA>
"##,
        corners.join(" ")
    )
    .into_bytes()
}

#[test]
fn collada() {
    let dir = temp("collada");
    let seed_path = dir.join("seed.dae");
    std::fs::write(&seed_path, collada_seed()).expect("write");
    assert!(ConvexHull::from_mesh_file(&seed_path, &Vector3::repeat(1.0)).is_ok());
    fuzz("collada", &[collada_seed()], &|bytes| {
        let path = dir.join("case.dae");
        std::fs::write(&path, bytes).expect("write");
        ConvexHull::from_mesh_file(&path, &Vector3::repeat(1.0)).is_ok()
    });
}

/// A unit cube as Wavefront OBJ.
fn obj_seed() -> Vec<u8> {
    let mut text = String::from("# cube\no cube\n");
    for k in 0..8 {
        text.push_str(&format!("v {} {} {}\n", k & 1, (k >> 1) & 1, (k >> 2) & 1));
    }
    for f in [
        [1, 3, 2],
        [2, 3, 4],
        [5, 6, 7],
        [6, 8, 7],
        [1, 2, 5],
        [2, 6, 5],
        [3, 7, 4],
        [4, 7, 8],
        [1, 5, 3],
        [3, 5, 7],
        [2, 4, 6],
        [4, 8, 6],
    ] {
        text.push_str(&format!("f {} {} {}\n", f[0], f[1], f[2]));
    }
    text.into_bytes()
}

#[test]
fn obj() {
    let dir = temp("obj");
    let seed_path = dir.join("seed.obj");
    std::fs::write(&seed_path, obj_seed()).expect("write");
    assert!(ConvexHull::from_mesh_file(&seed_path, &Vector3::repeat(1.0)).is_ok());
    fuzz("obj", &[obj_seed()], &|bytes| {
        let path = dir.join("case.obj");
        std::fs::write(&path, bytes).expect("write");
        ConvexHull::from_mesh_file(&path, &Vector3::repeat(1.0)).is_ok()
    });
}
