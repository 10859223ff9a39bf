//! Robots touching the ground through the collision geometry of their links
//! (`world.robot_collision`), and the warning for a body that ends below the ground.

use std::path::{Path, PathBuf};

use contactbench::simulation::recorder::RunRecord;
use contactbench::simulation::runner::simulate;
use contactbench::simulation::Scenario;
use contactbench::solvers::SolverSpec;

fn scenario_path(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/robot_geometry")
        .join(file)
}

fn run(file: &str, overrides: &[&str]) -> RunRecord {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let scenario =
        Scenario::load(&scenario_path(file), &overrides).unwrap_or_else(|e| panic!("{e}"));
    let spec: SolverSpec = "ncp-admm".parse().unwrap_or_else(|e| panic!("{e}"));
    let record = simulate(&scenario, &spec).unwrap_or_else(|e| panic!("{e}"));
    assert!(record.failure.is_none(), "{:?}", record.failure);
    record
}

/// The final base height (m), the largest `|qx|`, `|qy|` of the base quaternion (tilt) and
/// the largest speed coordinate of the last step.
fn final_rest(record: &RunRecord) -> (f64, f64, f64) {
    let last = record.steps.last().expect("steps");
    let tilt = last.q[3].abs().max(last.q[4].abs());
    (last.base_position[2], tilt, last.v.amax())
}

#[test]
fn a_free_urdf_box_rests_on_the_ground_through_its_collision_box() {
    let record = run("free_box.yaml", &[]);
    let (z, tilt, speed) = final_rest(&record);
    println!("free box: z = {z:.6} m, tilt {tilt:.2e}, speed {speed:.2e}");
    assert!((z - 0.05).abs() < 1e-4, "z = {z}");
    assert!(tilt < 1e-3, "tilt {tilt}");
    assert!(speed < 1e-2, "speed {speed}");
    assert!(record.summary().warnings.is_empty());
}

#[test]
fn a_two_link_arm_rests_flat_on_its_box_and_capsule() {
    let record = run("two_link_arm.yaml", &[]);
    let (z, tilt, speed) = final_rest(&record);
    println!("two-link arm: z = {z:.6} m, tilt {tilt:.2e}, speed {speed:.2e}");
    assert!((z - 0.025).abs() < 1e-4, "z = {z}");
    assert!(tilt < 1e-3, "tilt {tilt}");
    assert!(speed < 1e-2, "speed {speed}");
}

#[test]
fn a_free_mesh_box_rests_on_its_hull_vertices() {
    let record = run("mesh_box.yaml", &[]);
    let (z, tilt, _) = final_rest(&record);
    println!("mesh box: z = {z:.6} m, tilt {tilt:.2e}");
    assert!((z - 0.1).abs() < 1e-4, "z = {z}");
    assert!(tilt < 1e-3, "tilt {tilt}");
}

#[test]
fn a_body_without_collision_geometry_that_falls_through_is_warned_about() {
    let record = run("no_geometry.yaml", &[]);
    let summary = record.summary();
    assert_eq!(summary.outcome, "completed");
    assert_eq!(summary.warnings.len(), 1, "{:?}", summary.warnings);
    let warning = &summary.warnings[0];
    assert!(
        warning.contains("root_joint") && warning.contains("no collision object"),
        "{warning}"
    );
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("contactbench-below-ground-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let written = record.write(&dir).expect("written");
    assert_eq!(written.warnings, summary.warnings);
    let text = std::fs::read_to_string(dir.join("summary.json")).expect("summary");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(text.contains("below the ground"), "{text}");
}

#[test]
fn spheres_only_without_contact_spheres_is_refused_naming_the_field() {
    let error = Scenario::load(
        &scenario_path("free_box.yaml"),
        &["world.robot_collision=spheres".to_string()],
    )
    .expect_err("no sphere to touch the ground");
    let text = error.to_string();
    assert!(
        text.contains("world.robot_collision") && text.contains("contact_spheres"),
        "{text}"
    );
}

#[test]
fn a_box_with_spheres_and_geometry_listed_falls_through_when_only_the_spheres_count() {
    let spheres = "world.contact_spheres=[{frame: box, radius: 0.0, offset: [0.0, 0.0, 0.3]}]";
    let record = run("free_box.yaml", &[spheres, "simulation.duration=0.6"]);
    let (z, _, _) = final_rest(&record);
    assert!(
        z < -0.05,
        "the sphere 0.3 m above the box touches nothing: z = {z}"
    );
    assert_eq!(record.summary().warnings.len(), 1);
    let both = run(
        "free_box.yaml",
        &[
            spheres,
            "world.robot_collision=both",
            "simulation.duration=0.6",
        ],
    );
    let (z, _, _) = final_rest(&both);
    assert!((z - 0.05).abs() < 1e-4, "z = {z}");
}
