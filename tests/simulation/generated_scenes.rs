//! The generated scenes that scale with a count: balls poured into a box of fixed walls and
//! a cluttered table. Their body count, their start without overlap, their determinism for
//! a seed, the refusal of a bad parameter, and a short run.

use std::path::Path;

use contactbench::collision::{signed_distance, ContactSettings};
use contactbench::dynamics::{forward_kinematics, Data};
use contactbench::simulation::scenario::MAX_BODIES;
use contactbench::simulation::world::{Role, World};
use contactbench::simulation::{simulate, Scenario, ScenarioError};
use contactbench::solvers::SolverSpec;

fn shipped(file: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(file);
    std::fs::read_to_string(path).expect("shipped scenario")
}

fn load(file: &str, overrides: &[&str]) -> Result<Scenario, ScenarioError> {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Scenario::from_yaml(&shipped(file), Path::new(file), &overrides)
}

/// The smallest signed distance (m) over the object pairs the world tests, at its start.
fn smallest_start_distance(scenario: &Scenario) -> f64 {
    let world = World::build(scenario).unwrap_or_else(|e| panic!("{e}"));
    let mut data = Data::new(&world.model);
    forward_kinematics(&world.model, &mut data, &world.q0).expect("kinematics");
    let pose = |i: usize| data.omi[world.objects[i].joint] * world.objects[i].placement;
    let pairs = world
        .filter
        .allowed
        .as_ref()
        .expect("the world lists its pairs");
    let settings = ContactSettings::default();
    pairs
        .iter()
        .map(|&(i, j)| {
            let (a, b) = (&world.objects[i], &world.objects[j]);
            signed_distance(&a.shape, &pose(i), &b.shape, &pose(j), &settings, None)
                .unwrap_or_else(|e| panic!("{} against {}: {e}", a.name, b.name))
                .distance
        })
        .fold(f64::INFINITY, f64::min)
}

fn positions(scenario: &Scenario) -> Vec<[f64; 3]> {
    scenario
        .initial_state
        .bodies
        .values()
        .map(|s| s.position)
        .collect()
}

fn refused_field(result: Result<Scenario, ScenarioError>) -> (String, String) {
    match result {
        Err(ScenarioError::Invalid { field, message, .. }) => (field, message),
        Err(other) => panic!("refused without a field: {other}"),
        Ok(_) => panic!("accepted"),
    }
}

#[test]
fn poured_balls_start_apart_inside_four_fixed_walls() {
    let scenario = load(
        "pile_spheres_box.yaml",
        &["world.generate.spheres_in_box.count=40"],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scenario.world.bodies.len(), 40);
    assert_eq!(scenario.world.fixed.len(), 4);
    let world = World::build(&scenario).unwrap_or_else(|e| panic!("{e}"));
    let walls = world
        .objects
        .iter()
        .filter(|o| matches!(o.role, Role::Fixed(_)))
        .count();
    assert_eq!(walls, 4);
    // The lattice leaves at least 0.05 r = 2.5 mm between a ball and a wall, 0.1 r
    // between two balls.
    let gap = smallest_start_distance(&scenario);
    println!("poured balls: smallest start distance {gap:.4} m");
    assert!(gap >= 0.0025 - 1e-12, "overlap at the start: {gap} m");
}

#[test]
fn the_cluttered_table_starts_with_every_object_resting_and_none_overlapping() {
    let scenario = load("clutter_table.yaml", &["world.generate.clutter.count=25"])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scenario.world.bodies.len(), 25);
    assert_eq!(scenario.world.fixed.len(), 1);
    let kinds = |prefix: &str| {
        scenario
            .world
            .bodies
            .iter()
            .filter(|b| b.name.starts_with(prefix))
            .count()
    };
    assert!(kinds("box_") > 0 && kinds("ball_") > 0, "not assorted");
    // Objects rest on the top (distance 0 up to round-off), none inside another.
    let gap = smallest_start_distance(&scenario);
    println!("cluttered table: smallest start distance {gap:.2e} m");
    assert!(gap.abs() < 1e-9, "smallest start distance {gap} m");
}

#[test]
fn generated_scenes_are_the_same_for_a_seed_and_differ_for_another() {
    for (file, seed) in [
        (
            "pile_spheres_box.yaml",
            "world.generate.spheres_in_box.seed",
        ),
        ("clutter_table.yaml", "world.generate.clutter.seed"),
    ] {
        let at = |s: u64| {
            let set = format!("{seed}={s}");
            let scenario = load(file, &[&set]).unwrap_or_else(|e| panic!("{e}"));
            (positions(&scenario), scenario.world.bodies.len())
        };
        assert_eq!(at(3), at(3), "{file}");
        assert_ne!(at(3).0, at(4).0, "{file}");
    }
}

#[test]
fn bad_generated_scene_parameters_are_refused_naming_the_field() {
    let cases = [
        (
            "pile_spheres_box.yaml",
            "world.generate.spheres_in_box.count=0",
            "world.generate.spheres_in_box.count",
            format!("must lie in [1, {MAX_BODIES}]"),
        ),
        (
            "pile_spheres_box.yaml",
            "world.generate.spheres_in_box.width=0.1",
            "world.generate.spheres_in_box.width",
            "at least 2.5 radius".to_string(),
        ),
        (
            "clutter_table.yaml",
            "world.generate.clutter.size=-0.1",
            "world.generate.clutter.size",
            "must lie in".to_string(),
        ),
        (
            "clutter_table.yaml",
            "world.generate.clutter.count=400",
            "world.generate.clutter.count",
            "found no free place".to_string(),
        ),
    ];
    for (file, set, field, says) in cases {
        let (at, message) = refused_field(load(file, &[set]));
        assert_eq!(at, field, "{set}");
        assert!(message.contains(&says), "{set}: {message}");
    }
}

#[test]
fn poured_balls_settle_inside_the_box() {
    let scenario = load(
        "pile_spheres_box.yaml",
        &[
            "world.generate.spheres_in_box.count=8",
            "simulation.duration=0.4",
        ],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let spec: SolverSpec = "ncp-admm:eps_rel=1e-6,max_iter=1000"
        .parse()
        .unwrap_or_else(|e| panic!("{e}"));
    let record = simulate(&scenario, &spec).unwrap_or_else(|e| panic!("{e}"));
    assert!(record.failure.is_none(), "{:?}", record.failure);
    let last = record.steps.last().expect("steps");
    // q: 7 coordinates per ball, position first; the box's inner half side is 0.25 m.
    for ball in last.q.as_slice().chunks(7) {
        let [x, y, z] = [ball[0], ball[1], ball[2]];
        assert!(
            x.abs() < 0.25 && y.abs() < 0.25,
            "a ball left the box: {x}, {y}"
        );
        assert!(z > 0.05 - 1e-3, "a ball sank: {z}");
    }
}
