//! Self-collision (`world.self_collision`): a robot's links touch each other, except a
//! parent and its child and the link pairs its SRDF disables.

use std::collections::BTreeSet;
use std::path::Path;

use contactbench::simulation::recorder::RunRecord;
use contactbench::simulation::runner::simulate;
use contactbench::simulation::Scenario;
use contactbench::solvers::SolverSpec;

fn run(overrides: &[&str]) -> RunRecord {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/self_collision/folded_arm.yaml");
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let scenario = Scenario::load(&path, &overrides).unwrap_or_else(|e| panic!("{e}"));
    let spec: SolverSpec = "ncp-admm".parse().unwrap_or_else(|e| panic!("{e}"));
    let record = simulate(&scenario, &spec).unwrap_or_else(|e| panic!("{e}"));
    assert!(record.failure.is_none(), "{:?}", record.failure);
    record
}

/// The pairs in contact at any step of the run.
fn pairs(record: &RunRecord) -> BTreeSet<String> {
    record
        .steps
        .iter()
        .flat_map(|s| s.contacts.iter().map(|c| c.pair.clone()))
        .collect()
}

#[test]
fn a_folded_arm_s_hand_collides_with_its_upper_link_but_not_with_its_forearm() {
    let record = run(&[]);
    let first = &record.steps[1];
    assert!(
        first.contacts.iter().any(|c| c.pair == "upper_0|hand_0"),
        "{:?}",
        first.contacts
    );
    assert_eq!(
        pairs(&record),
        BTreeSet::from(["upper_0|hand_0".to_string()])
    );
    let pushed = first
        .contacts
        .iter()
        .map(|c| c.lambda[2])
        .fold(0.0, f64::max);
    assert!(pushed > 0.0, "no normal impulse: {:?}", first.contacts);
}

#[test]
fn a_link_pair_disabled_in_the_srdf_does_not_collide() {
    let record = run(&["world.robot_srdf=hand_upper_disabled.srdf"]);
    assert!(pairs(&record).is_empty(), "{:?}", pairs(&record));
}

#[test]
fn self_collision_is_off_unless_the_scenario_asks() {
    let record = run(&["world.self_collision=false"]);
    assert!(pairs(&record).is_empty(), "{:?}", pairs(&record));
}

#[test]
fn self_collision_without_a_robot_is_refused_naming_the_field() {
    let text = "world:\n  bodies: [{name: cube, shape: {box: [0.1, 0.1, 0.1]}, mass: 1}]\n  self_collision: true\nsimulation: {dt: 1.0e-3, duration: 0.01}\nsolvers: [ncp-admm]\n";
    let err = Scenario::from_yaml(text, Path::new("no_robot.yaml"), &[]).unwrap_err();
    assert!(err.to_string().contains("world.self_collision"), "{err}");
}
