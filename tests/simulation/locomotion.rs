//! Solo-12 trotting under its own controller: distance, falls, determinism.

use std::path::Path;

use contactbench::simulation::recorder::RunRecord;
use contactbench::simulation::runner::simulate;
use contactbench::simulation::Scenario;
use contactbench::solvers::SolverSpec;
use nalgebra::{Quaternion, UnitQuaternion};

fn run(file: &str, solver: &str, overrides: &[&str]) -> RunRecord {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(file);
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let scenario = Scenario::load(&path, &overrides).unwrap_or_else(|e| panic!("{e}"));
    let spec: SolverSpec = solver.parse().unwrap_or_else(|e| panic!("{e}"));
    let record = simulate(&scenario, &spec).unwrap_or_else(|e| panic!("{e}"));
    assert!(record.failure.is_none(), "{:?}", record.failure);
    record
}

/// Largest base height change (m) and roll or pitch (rad) along the run.
fn excursions(r: &RunRecord) -> (f64, f64) {
    let z0 = r.steps[0].base_position[2];
    r.steps.iter().fold((0.0_f64, 0.0_f64), |(dz, tilt), s| {
        let q = &s.q;
        let rotation = UnitQuaternion::from_quaternion(Quaternion::new(q[6], q[3], q[4], q[5]));
        let (roll, pitch, _) = rotation.euler_angles();
        (
            dz.max((s.base_position[2] - z0).abs()),
            tilt.max(roll.abs()).max(pitch.abs()),
        )
    })
}

#[test]
fn solo_trots_a_metre_on_flat_ground_and_twice_the_same() {
    let a = run(
        "solo_trot_flat.yaml",
        "ncp-admm:eps_rel=1e-6,max_iter=500",
        &[],
    );
    let last = a.steps.last().expect("steps");
    let start = a.steps[0].base_position;
    let travelled = last.base_position[0] - start[0];
    let drift = (last.base_position[1] - start[1]).abs();
    let (dz, tilt) = excursions(&a);
    println!(
        "solo12 trot (ncp-admm, flat): {travelled:.3} m forward, {drift:.3} m sideways, \
         height within {dz:.4} m, tilt within {tilt:.3} rad"
    );
    assert!(travelled >= 1.0, "travelled {travelled} m");
    assert!(
        dz < 0.1 && tilt < 0.6,
        "fell: height {dz} m, tilt {tilt} rad"
    );
    let b = run(
        "solo_trot_flat.yaml",
        "ncp-admm:eps_rel=1e-6,max_iter=500",
        &[],
    );
    for (x, y) in a.steps.iter().zip(&b.steps) {
        assert_eq!(x.q, y.q);
        assert_eq!(x.v, y.v);
    }
    assert_eq!(a.steps.len(), b.steps.len());
}

fn terrain_scenario(name: &str, csv: &str, position: [f64; 3]) -> Result<Scenario, String> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "contactbench-terrain-{name}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("heights.csv"), csv).map_err(|e| e.to_string())?;
    let text = format!(
        "world:\n  bodies:\n    - {{name: ball, shape: {{sphere: 0.1}}, mass: 1.0}}\n  terrain:\n    \
         heightfield: {{file: heights.csv, spacing: 0.5}}\n  friction: 0.5\n\
         initial_state:\n  bodies:\n    ball: {{position: {position:?}}}\n\
         simulation: {{dt: 1.0e-3, duration: 0.5}}\nsolvers: [ncp-admm]\n"
    );
    Scenario::from_yaml(&text, &dir.join("terrain.yaml"), &[]).map_err(|e| e.to_string())
}

fn simulate_ball(scenario: &Scenario) -> RunRecord {
    let spec: SolverSpec = "ncp-admm".parse().unwrap_or_else(|e| panic!("{e}"));
    let record = simulate(scenario, &spec).unwrap_or_else(|e| panic!("{e}"));
    assert!(record.failure.is_none(), "{:?}", record.failure);
    record
}

#[test]
fn a_ball_settles_on_a_raised_height_field_and_falls_past_its_edge() {
    // A 1 m square at height 0.2 m (3 × 3 samples, 0.5 m apart, centred on the origin).
    let csv = "0.2, 0.2, 0.2\n0.2, 0.2, 0.2\n0.2, 0.2, 0.2\n";
    let on = terrain_scenario("on", csv, [0.1, 0.0, 0.35]).unwrap_or_else(|e| panic!("{e}"));
    let r = simulate_ball(&on);
    let z = r.steps.last().expect("steps").base_position[2];
    println!("ball on a height field at 0.2 m: rests at z = {z:.5} m");
    assert!((z - 0.3).abs() < 1e-3, "rests at {z} m");
    let off = terrain_scenario("off", csv, [0.8, 0.0, 0.35]).unwrap_or_else(|e| panic!("{e}"));
    let r = simulate_ball(&off);
    let last = r.steps.last().expect("steps");
    let free_fall = 0.35 - 0.5 * 9.81 * last.time * last.time;
    assert!(r.steps.iter().all(|s| s.contacts.is_empty()));
    assert!(
        (last.base_position[2] - free_fall).abs() < 0.01,
        "{}",
        last.base_position[2]
    );
}

#[test]
fn a_malformed_terrain_file_is_refused_naming_the_file_and_the_field() {
    let Err(e) = terrain_scenario("nan", "0, 0\n0, nan\n", [0.0, 0.0, 0.5])
        .and_then(|s| contactbench::simulation::World::build(&s).map_err(|e| e.to_string()))
    else {
        panic!("a NaN height is refused");
    };
    assert!(
        e.contains("world.terrain.heightfield.file") && e.contains("heights.csv"),
        "{e}"
    );
    assert!(e.contains("row 1, column 1"), "{e}");
}
