//! Every read of an untrusted file is bounded before it allocates, and every loop over
//! what a user controls ends: declared sizes (HDF5 shapes and matrix sizes, `.npy`
//! headers, zip entries, COLLADA counts) are checked against caps and against the bytes
//! the file holds; files are read through a size cap; URDF loading takes time linear in
//! the links; folder walks end on link loops; command-line counts are capped.
//!
//! The binary's allocator refuses any single allocation over `ALLOCATION_LIMIT`: a
//! reader that trusts a declared size aborts the binary (a failed test) instead of
//! taking gigabytes from the machine, so none of these tests can allocate gigabytes, even
//! against a broken reader.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use contactbench::collision::mesh::ConvexHull;
use contactbench::model::{Model, ModelError, RootJoint};
use contactbench::problem::fclib::{MAX_DENSE_DIM, MAX_FCLIB_BYTES};
use contactbench::problem::io::{
    create_problem, read_lambda, read_problem, ProblemFileError, MAX_JSON_BYTES, MAX_LAMBDA_BYTES,
};
use contactbench::problem::npz::npy_bytes;
use hdf5_pure::FileBuilder;
use nalgebra::{DMatrix, Vector3};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

fn temp(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "contactbench-input-limits-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// Runs the binary with `args` in `dir`; a run longer than `limit` is killed and fails.
fn run_for(dir: &Path, args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_contactbench"))
        .args(args)
        .current_dir(dir)
        .env(
            "CONTACTBENCH_CACHE",
            std::env::var("CONTACTBENCH_CACHE").unwrap_or_default(),
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary");
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("contactbench {args:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().expect("output")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `f` on its own thread; fails if it takes longer than `limit` (a loop that does
/// not end, or a quadratic one on a large input).
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(f());
    });
    receive
        .recv_timeout(limit)
        .unwrap_or_else(|_| panic!("not done within {limit:?}"))
}

fn too_large(result: Result<impl std::fmt::Debug, ProblemFileError>) -> (String, u64) {
    match result {
        Err(ProblemFileError::TooLarge { what, limit, .. }) => (what, limit),
        other => panic!("expected TooLarge, got {other:?}"),
    }
}

// ---- FCLIB (HDF5) ---------------------------------------------------------------------

/// A local FCLIB problem whose `W` (three triplets) declares `rows` rows and columns.
fn fclib_declaring(path: &Path, rows: i32) {
    let mut b = FileBuilder::new();
    let mut local = b.create_group("fclib_local");
    local.create_dataset("spacedim").with_i32_data(&[3]);
    let mut w = local.create_group("W");
    for (key, v) in [("m", rows), ("n", rows), ("nz", 3), ("nzmax", 3)] {
        w.create_dataset(key).with_i32_data(&[v]);
    }
    w.create_dataset("p").with_i32_data(&[0, 1, 2]);
    w.create_dataset("i").with_i32_data(&[0, 1, 2]);
    w.create_dataset("x").with_f64_data(&[1.0, 1.0, 1.0]);
    local.add_group(w.finish());
    let mut v = local.create_group("vectors");
    v.create_dataset("q").with_f64_data(&[0.0, 0.0, -1.0]);
    v.create_dataset("mu").with_f64_data(&[0.5]);
    local.add_group(v.finish());
    b.add_group(local.finish());
    b.write(path).expect("write");
}

#[test]
fn an_fclib_file_declaring_two_billion_rows_is_refused_before_allocating() {
    let dir = temp("fclib_rows");
    let path = dir.join("huge.hdf5");
    fclib_declaring(&path, i32::MAX);
    assert!(std::fs::metadata(&path).expect("written").len() < 20_000);
    let clock = Instant::now();
    let (what, limit) = too_large(read_problem(&path));
    assert_eq!(what, "fclib_local/W/m = 2147483647 rows");
    assert_eq!(limit, MAX_DENSE_DIM as u64);
    assert!(
        clock.elapsed() < Duration::from_secs(5),
        "{:?}",
        clock.elapsed()
    );
    // The same file at three rows is a valid problem.
    fclib_declaring(&path, 3);
    assert!(read_problem(&path).is_ok());
}

// ---- numpy .npz -------------------------------------------------------------------------

/// An npz archive of the given entries (name, bytes, compression).
fn npz(path: &Path, entries: &[(&str, Vec<u8>, CompressionMethod)]) {
    let file = std::fs::File::create(path).expect("create");
    let mut zip = ZipWriter::new(file);
    for (name, bytes, method) in entries {
        let options = SimpleFileOptions::default()
            .compression_method(*method)
            .large_file(bytes.len() > u32::MAX as usize);
        zip.start_file(*name, options).expect("entry");
        zip.write_all(bytes).expect("bytes");
    }
    zip.finish().expect("finish");
}

fn unit_arrays() -> Vec<(&'static str, Vec<u8>, CompressionMethod)> {
    vec![
        (
            "g.npy",
            npy_bytes(&[3], &[0.0, 0.0, -1.0]),
            CompressionMethod::Stored,
        ),
        (
            "mus.npy",
            npy_bytes(&[1], &[0.5]),
            CompressionMethod::Stored,
        ),
    ]
}

#[test]
fn an_npz_entry_is_inflated_only_as_far_as_its_header_declares() {
    // G.npy declares 3 x 3 values, then 128 MiB of zeros follow in the deflated entry.
    let dir = temp("npz_bomb");
    let path = dir.join("bomb.npz");
    let file = std::fs::File::create(&path).expect("create");
    let mut zip = ZipWriter::new(file);
    let deflated = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    zip.start_file("G.npy", deflated).expect("entry");
    zip.write_all(&npy_bytes(&[3, 3], &[0.0; 9]))
        .expect("header");
    let block = vec![0u8; 1 << 20];
    for _ in 0..128 {
        zip.write_all(&block).expect("zeros");
    }
    for (name, bytes, method) in unit_arrays() {
        zip.start_file(
            name,
            SimpleFileOptions::default().compression_method(method),
        )
        .expect("entry");
        zip.write_all(&bytes).expect("bytes");
    }
    zip.finish().expect("finish");
    let size = std::fs::metadata(&path).expect("written").len();
    assert!(size < 1 << 20, "{size} bytes");
    let clock = Instant::now();
    let file = read_problem(&path).expect("the declared 3 x 3 G is read");
    assert_eq!(file.problem.delassus(), &DMatrix::zeros(3, 3));
    assert!(
        clock.elapsed() < Duration::from_secs(5),
        "{:?}",
        clock.elapsed()
    );
}

#[test]
fn an_npz_array_declaring_a_huge_shape_is_refused_from_its_header() {
    let dir = temp("npz_shape");
    let path = dir.join("shape.npz");
    // A header declaring 21,000 x 21,000 values (3.5 GB) over nine of them.
    let mut g = npy_bytes(&[3, 3], &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
    let at = g.windows(6).position(|w| w == b"(3, 3)").expect("shape");
    g.splice(at..at + 6, b"(21000, 21000)".iter().copied());
    let mut entries = unit_arrays();
    entries.push(("G.npy", g, CompressionMethod::Deflated));
    npz(&path, &entries);
    let (what, limit) = too_large(read_problem(&path));
    assert_eq!(what, "G.npy: shape [21000, 21000] (441000000 values)");
    assert_eq!(limit, (MAX_DENSE_DIM * MAX_DENSE_DIM) as u64);
}

// ---- JSON problems and warm starts ------------------------------------------------------

#[test]
fn dev_zero_as_a_problem_or_a_warm_start_is_refused_at_its_first_byte() {
    let zero = Path::new("/dev/zero");
    let clock = Instant::now();
    for result in [
        read_problem(zero).map(|_| ()),
        read_lambda(zero).map(|_| ()),
    ] {
        match result {
            Err(ProblemFileError::Json {
                line: 1,
                column: 1,
                message,
                ..
            }) => assert!(message.contains("found byte 0x00"), "{message}"),
            other => panic!("expected a JSON error at 1:1, got {other:?}"),
        }
    }
    assert!(
        clock.elapsed() < Duration::from_secs(5),
        "{:?}",
        clock.elapsed()
    );
}

/// A sparse file of `size` bytes that starts with `head` (no disk space used).
fn sparse(path: &Path, head: &[u8], size: u64) {
    let mut file = std::fs::File::create(path).expect("create");
    file.write_all(head).expect("head");
    file.set_len(size).expect("size");
}

#[test]
fn files_over_their_size_cap_are_refused_before_they_are_read() {
    let dir = temp("size_caps");
    let cases: [(&str, &[u8], u64); 3] = [
        ("big.json", b"{\"G\": [", MAX_JSON_BYTES),
        ("big_warm.json", b"[", MAX_LAMBDA_BYTES),
        ("big.hdf5", b"\x89HDF\r\n\x1a\n", MAX_FCLIB_BYTES),
    ];
    for (name, head, limit) in cases {
        let path = dir.join(name);
        sparse(&path, head, limit + 1);
        let result = if name == "big_warm.json" {
            read_lambda(&path).map(|_| ())
        } else {
            read_problem(&path).map(|_| ())
        };
        let (what, got) = too_large(result);
        assert_eq!(what, format!("the file ({} bytes)", limit + 1), "{name}");
        assert_eq!(got, limit, "{name}");
    }
}

#[test]
fn json_files_with_a_byte_order_mark_are_read() {
    let dir = temp("bom");
    let text = std::fs::read_to_string(repo("tests/data/sliding_problem.json")).expect("shipped");
    let problem = dir.join("bom.json");
    std::fs::write(&problem, format!("\u{feff}{text}")).expect("write");
    let file = read_problem(&problem).expect("a BOM is accepted");
    assert_eq!(file.problem.num_contacts(), 1);
    let warm = dir.join("warm.json");
    std::fs::write(&warm, "\u{feff}[0.0, 0.5, 1.0]").expect("write");
    assert_eq!(read_lambda(&warm).expect("a BOM is accepted").len(), 3);
}

#[test]
fn solve_all_json_output_is_a_warm_start() {
    let dir = temp("warm_all");
    let problem = repo("tests/data/sliding_problem.json");
    let problem = problem.to_str().expect("utf8");
    let o = run_for(
        &dir,
        &["solve", problem, "--all", "--json"],
        Duration::from_secs(120),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let warm = dir.join("all.json");
    std::fs::write(&warm, &o.stdout).expect("write");
    let output: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let solver = output["lambda_solver"]
        .as_str()
        .expect("a converged solver")
        .to_string();
    assert!(output["solvers"]
        .as_array()
        .expect("solvers")
        .iter()
        .any(|s| s["solver"] == solver.as_str()));
    // The same solver, warm-started with its own answer.
    let o = run_for(
        &dir,
        &[
            "solve",
            problem,
            "--solver",
            &solver,
            "--warm-start",
            warm.to_str().expect("utf8"),
        ],
        Duration::from_secs(120),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("status:  converged after"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn a_warm_start_of_the_wrong_shape_names_the_field_not_line_zero() {
    let dir = temp("warm_shape");
    for (text, expected) in [
        (
            r#"{"lambda": [0.0, "x", 1.0]}"#,
            "lambda[1]: \"x\" is not a number",
        ),
        (r#"{"lambda": 3}"#, "lambda: not an array of numbers"),
        (r#"{"forces": [1.0]}"#, "lambda: missing"),
        (
            r#"{"problem": "p.json", "solvers": []}"#,
            "lambda: missing: no solver of this `solve --json` output converged",
        ),
        ("[1.0, null]", "[1]: null is not a number"),
        ("\"text\"", "expected a JSON object or array"),
    ] {
        let path = dir.join("warm.json");
        std::fs::write(&path, text).expect("write");
        let err = read_lambda(&path).expect_err(text).to_string();
        assert!(err.contains(expected), "{text}: {err}");
        assert!(!err.contains("line 0"), "{text}: {err}");
    }
}

#[test]
fn create_problem_never_replaces_an_existing_file() {
    let dir = temp("create");
    let file = read_problem(&repo("tests/data/sliding_problem.json")).expect("shipped");
    for name in ["p.json", "p.npz", "p.hdf5"] {
        let path = dir.join(name);
        std::fs::write(&path, "the user's").expect("write");
        match create_problem(&path, &file.problem, None, None) {
            Err(ProblemFileError::Exists { path: p }) => assert_eq!(p, path),
            other => panic!("{name}: expected Exists, got {other:?}"),
        }
        assert_eq!(std::fs::read_to_string(&path).expect("kept"), "the user's");
        std::fs::remove_file(&path).expect("remove");
        create_problem(&path, &file.problem, None, None).expect("a new file");
        assert_eq!(
            read_problem(&path).expect("written").problem.num_contacts(),
            1
        );
    }
    let names: Vec<String> = std::fs::read_dir(&dir)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 3, "no temporary file left: {names:?}");
}

// ---- URDF ---------------------------------------------------------------------------------

/// A URDF chain of `links` links (each with an inertial and a box), as
/// `tools/long_urdf.py N chain` writes it.
fn chain_urdf(links: usize) -> String {
    let mut text = String::from("<?xml version=\"1.0\"?>\n<robot name=\"long\">\n");
    for k in 0..links {
        text.push_str(&format!(
            "  <link name=\"link_{k}\">\n    <inertial><origin xyz=\"0 0 0.05\" rpy=\"0 0 0\"/><mass value=\"0.1\"/>\n      <inertia ixx=\"1e-4\" ixy=\"0\" ixz=\"0\" iyy=\"1e-4\" iyz=\"0\" izz=\"1e-4\"/></inertial>\n    <collision><origin xyz=\"0 0 0.05\"/><geometry><box size=\"0.02 0.02 0.1\"/></geometry></collision>\n  </link>\n"
        ));
        if k > 0 {
            text.push_str(&format!(
                "  <joint name=\"joint_{k}\" type=\"revolute\">\n    <parent link=\"link_{}\"/><child link=\"link_{k}\"/>\n    <origin xyz=\"0 0 0.1\" rpy=\"0 0 0\"/><axis xyz=\"0 1 0\"/>\n    <limit lower=\"-1\" upper=\"1\" effort=\"10\" velocity=\"5\"/>\n  </joint>\n",
                k - 1
            ));
        }
    }
    text.push_str("</robot>\n");
    text
}

#[test]
fn a_urdf_of_twenty_thousand_links_loads_in_linear_time() {
    // Measured in release: 0.8 s for 20,000 links, 3.8 s for 100,000
    // (docs/reliability.md); quadratic loading took more than 120 s for 20,000.
    let dir = temp("urdf_long");
    let path = dir.join("chain.urdf");
    std::fs::write(&path, chain_urdf(20_000)).expect("write");
    let model = within(Duration::from_secs(60), move || {
        Model::from_urdf(&path, RootJoint::Fixed)
    })
    .expect("a valid chain");
    assert_eq!(model.nq(), 19_999);
    assert_eq!(model.geometries.len(), 20_000);
}

fn load_urdf(dir: &Path, name: &str, text: &str) -> Result<Model, ModelError> {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    Model::from_urdf(&path, RootJoint::Fixed)
}

const INERTIAL: &str = r#"<inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>"#;

fn link(name: &str, inside: &str) -> String {
    format!("<link name=\"{name}\">{INERTIAL}{inside}</link>\n")
}

fn joint(name: &str, parent: &str, child: &str, limit: &str) -> String {
    format!("<joint name=\"{name}\" type=\"revolute\"><parent link=\"{parent}\"/><child link=\"{child}\"/><axis xyz=\"0 0 1\"/>{limit}</joint>\n")
}

const LIMIT: &str = r#"<limit lower="-1" upper="1" effort="1" velocity="1"/>"#;

fn assert_refused(result: Result<Model, ModelError>, parts: &[&str]) {
    let err = match result {
        Err(e @ ModelError::InvalidElement { .. }) => e.to_string(),
        other => panic!("expected InvalidElement naming {parts:?}, got {other:?}"),
    };
    for part in parts {
        assert!(err.contains(part), "'{err}' does not name '{part}'");
    }
}

#[test]
fn duplicate_link_or_joint_names_are_refused_naming_both_lines() {
    let dir = temp("urdf_names");
    let text = format!(
        "<robot name=\"r\">\n{}{}{}{}</robot>",
        link("a", ""),
        link("b", ""),
        link("a", ""),
        joint("j", "a", "b", LIMIT)
    );
    assert_refused(
        load_urdf(&dir, "links.urdf", &text),
        &[
            "links.urdf",
            "link 'a'",
            "line 4",
            "a second link named 'a' (the first is at line 2)",
        ],
    );
    let text = format!(
        "<robot name=\"r\">\n{}{}{}{}{}</robot>",
        link("a", ""),
        link("b", ""),
        link("c", ""),
        joint("j", "a", "b", LIMIT),
        joint("j", "b", "c", LIMIT)
    );
    assert_refused(
        load_urdf(&dir, "joints.urdf", &text),
        &[
            "joints.urdf",
            "joint 'j'",
            "line 6",
            "a second joint named 'j' (the first is at line 5)",
        ],
    );
}

#[test]
fn joint_limits_with_lower_above_upper_are_refused() {
    let dir = temp("urdf_limits");
    for (limit, expected) in [
        (
            r#"<limit lower="1" upper="-1" effort="1" velocity="1"/>"#,
            "<limit>: lower 1 is above upper -1",
        ),
        (
            r#"<limit lower="-1" upper="1" effort="-1" velocity="1"/>"#,
            "<limit>: effort -1 is negative",
        ),
    ] {
        let text = format!(
            "<robot name=\"r\">\n{}{}{}</robot>",
            link("a", ""),
            link("b", ""),
            joint("knee", "a", "b", limit)
        );
        assert_refused(
            load_urdf(&dir, "limits.urdf", &text),
            &["limits.urdf", "joint 'knee'", "line 4", expected],
        );
    }
}

#[test]
fn a_mesh_path_that_leaves_its_package_is_refused() {
    let dir = temp("urdf_escape");
    // A real file outside the package: found, and refused all the same.
    std::fs::create_dir_all(dir.join("pkg/meshes")).expect("dirs");
    std::fs::write(dir.join("secret.stl"), "solid x\nendsolid x\n").expect("write");
    for uri in [
        "package://pkg/../secret.stl",
        "package://pkg/meshes/../../secret.stl",
    ] {
        let collision =
            format!("<collision><geometry><mesh filename=\"{uri}\"/></geometry></collision>");
        let text = format!("<robot name=\"r\">\n{}</robot>", link("shell", &collision));
        assert_refused(
            load_urdf(&dir, "escape.urdf", &text),
            &[
                "escape.urdf",
                "link 'shell'",
                "line 2",
                &format!("<mesh filename=\"{uri}\">: the path leaves its package through '..'"),
            ],
        );
    }
    // Inside the package, `..` is fine.
    std::fs::write(dir.join("pkg/meshes/cube.stl"), "solid x\nendsolid x\n").expect("write");
    let collision = "<collision><geometry><mesh filename=\"package://pkg/meshes/../meshes/cube.stl\"/></geometry></collision>";
    let text = format!("<robot name=\"r\">\n{}</robot>", link("shell", collision));
    assert!(load_urdf(&dir, "inside.urdf", &text).is_ok());
}

#[test]
fn geometry_sizes_of_zero_or_1e300_are_refused() {
    let dir = temp("urdf_sizes");
    for (shape, expected) in [
        (
            r#"<box size="0 0.1 0.1"/>"#,
            "<box size=\"0 0.1 0.1\">: 0 is outside [1e-6, 1e3]",
        ),
        (
            r#"<sphere radius="1e300"/>"#,
            "<sphere radius=\"1e300\">: 1e300 is outside [1e-6, 1e3]",
        ),
        (
            r#"<cylinder radius="0.1" length="0"/>"#,
            "<cylinder length=\"0\">: 0 is outside",
        ),
        (r#"<sphere radius="-0.1"/>"#, "-0.1 is outside"),
    ] {
        let collision = format!("<collision>\n<geometry>{shape}</geometry></collision>");
        let text = format!("<robot name=\"r\">\n{}</robot>", link("foot", &collision));
        assert_refused(
            load_urdf(&dir, "sizes.urdf", &text),
            &["sizes.urdf", "link 'foot'", "line 3", expected],
        );
    }
}

// ---- Meshes -------------------------------------------------------------------------------

/// A one-triangle COLLADA file; `floats` is the float array's count, `position` the source
/// its vertices name, `nesting` wraps the scene's node in that many more nodes.
fn collada(floats: &str, position: &str, nesting: usize) -> String {
    format!(
        r##"<?xml version="1.0"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
<asset><up_axis>Z_UP</up_axis></asset>
<library_geometries><geometry id="g"><mesh>
<source id="p"><float_array id="pa" count="{floats}">0 0 0 1 0 0 0 1 0</float_array>
<technique_common><accessor source="#pa" count="3" stride="3"><param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/></accessor></technique_common></source>
<vertices id="v"><input semantic="POSITION" source="{position}"/></vertices>
<triangles count="1"><input semantic="VERTEX" source="#v" offset="0"/><p>0 1 2</p></triangles>
</mesh></geometry></library_geometries>
<library_visual_scenes><visual_scene id="s">{}<node><instance_geometry url="#g"/></node>{}</visual_scene></library_visual_scenes>
<scene><instance_visual_scene url="#s"/></scene>
</COLLADA>
"##,
        "<node>".repeat(nesting),
        "</node>".repeat(nesting)
    )
}

fn collada_error(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    let err = ConvexHull::from_mesh_file(&path, &Vector3::repeat(1.0))
        .expect_err("refused")
        .to_string();
    assert!(err.contains(name) && err.contains("COLLADA"), "{err}");
    err
}

#[test]
fn a_collada_file_declaring_billions_of_values_is_refused_before_reading_them() {
    let dir = temp("collada_count");
    // The same file with its true count is a triangle.
    let path = dir.join("ok.dae");
    std::fs::write(&path, collada("9", "#p", 0)).expect("write");
    assert!(ConvexHull::from_mesh_file(&path, &Vector3::repeat(1.0)).is_ok());
    let err = collada_error(&dir, "huge.dae", &collada("4000000000", "#p", 0));
    assert!(
        err.contains("<float_array count=\"4000000000\">") && err.contains("more than the file's"),
        "{err}"
    );
}

#[test]
fn a_deeply_nested_collada_file_is_refused_not_a_stack_overflow() {
    let dir = temp("collada_deep");
    let err = collada_error(&dir, "deep.dae", &collada("9", "#p", 20_000));
    assert!(err.contains("nested deeper than 64 levels"), "{err}");
}

#[test]
fn a_collada_file_naming_a_missing_source_is_an_error_not_a_panic() {
    let dir = temp("collada_dangling");
    let err = collada_error(&dir, "dangling.dae", &collada("9", "#nowhere", 0));
    assert!(err.contains("malformed file"), "{err}");
}

// ---- Command-line counts and folder walks -----------------------------------------------

/// A binary STL of a unit cube scaled by `s`.
fn cube_stl(s: f32) -> Vec<u8> {
    let corner = |k: usize| {
        [
            (k & 1) as f32 * s,
            ((k >> 1) & 1) as f32 * s,
            ((k >> 2) & 1) as f32 * s,
        ]
    };
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
    let mut out = vec![0u8; 80];
    out.extend((faces.len() as u32).to_le_bytes());
    for f in faces {
        out.extend([0u8; 12]);
        for v in f {
            for x in corner(v) {
                out.extend(x.to_le_bytes());
            }
        }
        out.extend([0u8; 2]);
    }
    out
}

#[test]
fn collision_bench_ends_on_a_mesh_folder_with_symbolic_link_loops() {
    let dir = temp("mesh_loop");
    let meshes = dir.join("meshes");
    std::fs::create_dir_all(meshes.join("sub")).expect("dirs");
    std::fs::write(meshes.join("a.stl"), cube_stl(0.1)).expect("write");
    std::fs::write(meshes.join("sub/b.stl"), cube_stl(0.2)).expect("write");
    // Two links back to the top: followed blindly, 2^40 paths before ELOOP.
    std::os::unix::fs::symlink(&meshes, meshes.join("sub/up")).expect("link");
    std::os::unix::fs::symlink(&meshes, meshes.join("sub/again")).expect("link");
    let o = run_for(
        &dir,
        &[
            "collision-bench",
            "--mesh-dir",
            "meshes",
            "--pairs",
            "20",
            "--repeats",
            "1",
        ],
        Duration::from_secs(60),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("convex hulls of 2 STL meshes"), "{out}");
}

#[test]
fn bench_step_counts_beyond_their_caps_are_refused_before_allocating() {
    let dir = temp("bench_step");
    let scenario = repo("scenarios/cube_slide.yaml");
    let scenario = scenario.to_str().expect("utf8");
    for (flag, value, expected) in [
        (
            "--repeats",
            "100000000",
            "--repeats 100000000: at most 10000 blocks",
        ),
        (
            "--steps",
            "100000000",
            "--steps 100000000 x --repeats 7 = 7e8 steps exceeds the cap of 1e7 steps",
        ),
    ] {
        let o = run_for(
            &dir,
            &["bench-step", scenario, flag, value],
            Duration::from_secs(60),
        );
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(expected), "{}", stderr(&o));
    }
}
