//! Bad scenario files give typed errors that name the file, the line and the field.

use std::path::{Path, PathBuf};

use contactbench::simulation::scenario::{Actuation, ForceProfile, ShapeSpec};
use contactbench::simulation::{Scenario, ScenarioError};

const GOOD: &str = "\
name: t
world:
  bodies:
    - name: cube
      shape: {box: [0.2, 0.2, 0.2]}
      mass: 1.0
  friction: 0.4
initial_state:
  bodies:
    cube: {position: [0.0, 0.0, 0.1]}
simulation:
  dt: 1.0e-3
  duration: 0.5
solvers:
  - {solver: ncp-admm, eps_rel: 1.0e-8}
  - lcp-pgs:max_iter=50
";

fn file() -> PathBuf {
    PathBuf::from("scenarios/t.yaml")
}

fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    Scenario::from_yaml(text, &file(), &[])
}

fn message(text: &str) -> String {
    match parse(text) {
        Ok(_) => panic!("accepted a bad scenario"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn good_scenario_parses_with_defaults() {
    let s = parse(GOOD).expect("valid");
    assert_eq!(s.name, "t");
    assert_eq!(s.world.bodies[0].shape, ShapeSpec::Box([0.2, 0.2, 0.2]));
    assert_eq!(s.actuation, Actuation::None);
    assert_eq!(s.num_steps(), 500);
    let specs = s.solver_specs();
    assert_eq!(specs.len(), 2);
    assert_eq!(specs[0].settings.eps_rel, 1e-8);
    assert_eq!(specs[1].settings.max_iter, 50);
    assert!(s.world.ground);
}

#[test]
fn unknown_solver_names_the_list_item_and_its_line() {
    let text = GOOD.replace("lcp-pgs:max_iter=50", "lcp-magic");
    let msg = message(&text);
    assert!(msg.starts_with("scenarios/t.yaml:16: solvers[1]:"), "{msg}");
    assert!(msg.contains("unknown solver 'lcp-magic'"), "{msg}");
}

#[test]
fn negative_dt_names_the_field_and_its_line() {
    let msg = message(&GOOD.replace("dt: 1.0e-3", "dt: -1.0e-3"));
    assert!(
        msg.starts_with("scenarios/t.yaml:12: simulation.dt:"),
        "{msg}"
    );
}

#[test]
fn missing_field_is_reported_with_a_location() {
    let msg = message(&GOOD.replace("  duration: 0.5\n", ""));
    assert!(msg.starts_with("scenarios/t.yaml:"), "{msg}");
    assert!(msg.contains("missing field `duration`"), "{msg}");
}

#[test]
fn unknown_field_is_reported_with_line_and_column() {
    let msg = message(&GOOD.replace("mass: 1.0", "mas: 1.0"));
    assert!(msg.starts_with("scenarios/t.yaml:6:7:"), "{msg}");
    assert!(msg.contains("unknown field `mas`"), "{msg}");
}

#[test]
fn yaml_syntax_error_is_reported_with_line_and_column() {
    let msg = message(&GOOD.replace("friction: 0.4", "friction: [0.4"));
    assert!(msg.starts_with("scenarios/t.yaml:"), "{msg}");
    let line: usize = msg
        .split(':')
        .nth(1)
        .and_then(|l| l.parse().ok())
        .expect("line");
    assert!(line >= 7, "{msg}");
}

#[test]
fn negative_mass_and_unknown_body_are_refused() {
    let msg = message(&GOOD.replace("mass: 1.0", "mass: -1.0"));
    assert!(
        msg.starts_with("scenarios/t.yaml:6: world.bodies[0].mass:"),
        "{msg}"
    );
    let msg = message(&GOOD.replace("    cube: {position", "    box: {position"));
    assert!(msg.contains("initial_state.bodies.box"), "{msg}");
    assert!(msg.starts_with("scenarios/t.yaml:10:"), "{msg}");
}

#[test]
fn overrides_change_values_before_validation() {
    let s = Scenario::from_yaml(
        GOOD,
        &file(),
        &["world.bodies.0.mass=5".into(), "simulation.dt=1e-2".into()],
    )
    .expect("valid");
    assert_eq!(s.world.bodies[0].mass, 5.0);
    assert_eq!(s.simulation.dt, 1e-2);
    let err = Scenario::from_yaml(GOOD, &file(), &["simulation.dt=-1".into()]);
    assert!(matches!(err, Err(ScenarioError::Invalid { .. })));
    let err = Scenario::from_yaml(GOOD, &file(), &["world.bodies.3.mass=1".into()]);
    assert!(matches!(err, Err(ScenarioError::Override { .. })));
}

#[test]
fn missing_file_is_an_io_error() {
    let err = Scenario::load(Path::new("tests/data/no_such_file.yaml"), &[]);
    assert!(matches!(err, Err(ScenarioError::Io { .. })));
}

#[test]
fn shipped_scenarios_parse() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).expect("scenarios/") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "yaml") {
            Scenario::load(&path, &[]).unwrap_or_else(|e| panic!("{e}"));
            count += 1;
        }
    }
    assert!(count >= 4);
}

#[test]
fn force_profiles_parse() {
    let text = format!(
        "{GOOD}external_forces:\n  - body: cube\n    from: 0.1\n    profile:\n      sinusoid: {{amplitude: [1, 0, 0], frequency: 2}}\n"
    );
    let s = parse(&text).expect("valid");
    assert!(matches!(
        s.external_forces[0].profile,
        ForceProfile::Sinusoid { frequency, .. } if frequency == 2.0
    ));
    assert_eq!(s.external_forces[0].at(0.05), [0.0; 3]);
}

#[test]
fn a_tolerance_of_the_criterion_not_in_use_is_refused_with_its_place() {
    // eps_abs with the default stop (relative) would be silently ignored.
    let msg = message(&GOOD.replace(
        "{solver: ncp-admm, eps_rel: 1.0e-8}",
        "{solver: ncp-admm, eps_abs: 1.0e-8}",
    ));
    assert!(msg.starts_with("scenarios/t.yaml:15: solvers[0]:"), "{msg}");
    assert!(
        msg.contains("eps_abs") && msg.contains("stop: relative"),
        "{msg}"
    );
    // With stop: absolute it is the tolerance in use.
    let s = parse(&GOOD.replace(
        "{solver: ncp-admm, eps_rel: 1.0e-8}",
        "{solver: ncp-admm, stop: absolute, eps_abs: 1.0e-8}",
    ));
    let specs = s.map(|s| s.solver_specs()).unwrap_or_default();
    assert_eq!(specs.first().map(|s| s.settings.eps_abs), Some(1e-8));
}
