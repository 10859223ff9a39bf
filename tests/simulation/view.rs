//! `simulation::view`: a trajectory written as an animated glTF binary file, read back and
//! checked against the glTF 2.0 container and accessor rules.

use std::path::Path;

use contactbench::simulation::runner::simulator;
use contactbench::simulation::view::export_glb;
use contactbench::simulation::Scenario;
use serde_json::Value;

fn export(file: &Path, overrides: &[&str]) -> (Vec<u8>, usize) {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let scenario = Scenario::load(file, &overrides).unwrap_or_else(|e| panic!("{e}"));
    let spec = scenario.solver_specs().remove(0);
    let sim = simulator(&scenario, &spec).unwrap_or_else(|e| panic!("{e}"));
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("contactbench-view-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let name = file.file_stem().and_then(|s| s.to_str()).unwrap_or("run");
    let out = dir.join(format!("{name}.glb"));
    let summary = export_glb(sim, scenario.num_steps(), scenario.simulation.dt, &out)
        .unwrap_or_else(|e| panic!("{e}"));
    let bytes = std::fs::read(&out).expect("written");
    let _ = std::fs::remove_file(&out);
    assert_eq!(bytes.len(), summary.bytes);
    assert_eq!(summary.frames, scenario.num_steps() + 1);
    (bytes, summary.contact_slots)
}

fn u32_at(bytes: &[u8], at: usize) -> usize {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]) as usize
}

/// Reads the GLB container (header, JSON chunk, BIN chunk) and checks every buffer view
/// and accessor lies in the binary chunk, and that the animation's times increase.
fn read_glb(bytes: &[u8]) -> Value {
    assert_eq!(&bytes[0..4], b"glTF");
    assert_eq!(u32_at(bytes, 4), 2);
    assert_eq!(u32_at(bytes, 8), bytes.len());
    let json_length = u32_at(bytes, 12);
    assert_eq!(&bytes[16..20], b"JSON");
    assert_eq!(json_length % 4, 0);
    let document: Value =
        serde_json::from_slice(&bytes[20..20 + json_length]).expect("the JSON chunk parses");
    let bin = 20 + json_length;
    let bin_length = u32_at(bytes, bin);
    assert_eq!(&bytes[bin + 4..bin + 8], b"BIN\0");
    assert_eq!(bin + 8 + bin_length, bytes.len());
    assert_eq!(document["buffers"][0]["byteLength"], bin_length);
    let views = document["bufferViews"].as_array().expect("views");
    for view in views {
        let end =
            view["byteOffset"].as_u64().unwrap_or(0) + view["byteLength"].as_u64().unwrap_or(0);
        assert!(end as usize <= bin_length);
    }
    for accessor in document["accessors"].as_array().expect("accessors") {
        let width = match accessor["type"].as_str() {
            Some("SCALAR") => 1,
            Some("VEC3") => 3,
            Some("VEC4") => 4,
            other => panic!("accessor type {other:?}"),
        };
        let view = &views[accessor["bufferView"].as_u64().expect("view") as usize];
        let count = accessor["count"].as_u64().expect("count");
        assert_eq!(
            count * width * 4,
            view["byteLength"].as_u64().expect("length")
        );
    }
    let samplers = document["animations"][0]["samplers"]
        .as_array()
        .expect("samplers");
    let input = samplers[0]["input"].as_u64().expect("input") as usize;
    let times = &document["accessors"][input];
    assert!(times["min"][0].as_f64() < times["max"][0].as_f64());
    document
}

fn node_names(document: &Value) -> Vec<String> {
    document["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .filter_map(|n| n["name"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn a_robot_trajectory_is_an_animated_glb_with_its_links_and_contacts() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/solo_standing.yaml");
    let (bytes, slots) = export(&file, &["simulation.duration=0.05"]);
    let document = read_glb(&bytes);
    let names = node_names(&document);
    assert!(slots >= 4, "Solo-12 stands on its 4 feet: {slots} contacts");
    assert!(names.iter().any(|n| n == "contact3/force"), "{names:?}");
    assert!(names.iter().any(|n| n.starts_with("FL_")), "{names:?}");
    let channels = document["animations"][0]["channels"]
        .as_array()
        .expect("channels");
    assert_eq!(
        channels.len(),
        (names.len() - 1 - 3 * slots) * 2 + 3 * 3 * slots
    );
}

#[test]
fn a_pile_of_cubes_is_exported_with_every_cube() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/pile_pyramid.yaml");
    let (bytes, slots) = export(&file, &["simulation.duration=0.02"]);
    let document = read_glb(&bytes);
    let names = node_names(&document);
    assert_eq!(
        names.iter().filter(|n| n.starts_with("cube")).count(),
        14,
        "{names:?}"
    );
    assert!(slots > 0);
}
