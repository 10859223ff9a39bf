//! A scenario's numbers are checked where they are read: a non-finite value anywhere in
//! the file, a force that ends before it starts and a time step that leaves no step are
//! refused with the file, the line and the field; a run or a sweep cell of zero steps is
//! a failure, never a completed run or a perfect score.

use std::path::{Path, PathBuf};
use std::process::Command;

use contactbench::simulation::runner::simulate_into;
use contactbench::simulation::sweep::{check_limits, sweep, SweepKind};
use contactbench::simulation::{simulate, Scenario, ScenarioError};
use contactbench::solvers::{SolverId, SolverSpec};

fn cube_text() -> String {
    std::fs::read_to_string(shipped("scenarios/cube_slide.yaml")).expect("shipped scenario")
}

fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(name)
}

/// The cube scenario with `from` replaced by `to`, as if read from `bad.yaml`.
fn load_variant(from: &str, to: &str) -> Result<Scenario, ScenarioError> {
    let text = cube_text();
    assert!(text.contains(from), "{from}");
    Scenario::from_yaml(&text.replacen(from, to, 1), Path::new("bad.yaml"), &[])
}

/// The line, field and message of a refusal at load.
fn where_refused(result: Result<Scenario, ScenarioError>) -> (usize, String, String) {
    let Err(error) = result else {
        panic!("accepted")
    };
    let message = error.to_string();
    match error {
        ScenarioError::Parse {
            file, line, field, ..
        }
        | ScenarioError::Invalid {
            file, line, field, ..
        } => {
            assert_eq!(file, Path::new("bad.yaml"));
            (line, field, message)
        }
        other => panic!("refused without a location: {other}"),
    }
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .map(|k| k + 1)
        .unwrap_or_else(|| panic!("{needle}"))
}

#[test]
fn a_non_finite_number_in_any_field_of_a_scenario_file_is_refused_with_its_line_and_field() {
    let cases = [
        ("dt: 1.0e-3", "dt: .nan", "simulation.dt"),
        ("duration: 0.5", "duration: .inf", "simulation.duration"),
        ("baumgarte: 0.1", "baumgarte: -.inf", "simulation.baumgarte"),
        ("friction: 0.4", "friction: .NaN", "world.friction"),
        (
            "position: [0.0, 0.0, 0.1]",
            "position: [0.0, .inf, 0.1]",
            "initial_state.bodies.cube.position[1]",
        ),
        (
            "velocity: [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]",
            "velocity: [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]\n      orientation: [0, 0, .inf, 1]",
            "initial_state.bodies.cube.orientation[2]",
        ),
        (
            "sliding: {mass: 1.0, v0: 1.0, mu: 0.4}",
            "sliding: {mass: 1.0, v0: .nan, mu: 0.4}",
            "analytical.sliding.v0",
        ),
    ];
    for (from, to, field) in cases {
        let (line, got, message) = where_refused(load_variant(from, to));
        let written = to.lines().last().expect("one line").trim();
        let expected_line = line_of(&cube_text().replacen(from, to, 1), written);
        assert_eq!((line, got.as_str()), (expected_line, field), "{to}");
        assert!(
            message.starts_with(&format!("bad.yaml:{line}")),
            "{message}"
        );
        assert!(message.contains("must be finite"), "{message}");
    }
}

#[test]
fn an_external_force_starting_at_nan_is_refused_with_its_field() {
    let force = "external_forces:\n  - {body: cube, from: .nan, profile: {constant: {force: [1, 0, 0]}}}\nsimulation:";
    let (line, field, _) = where_refused(load_variant("simulation:", force));
    assert_eq!((line, field.as_str()), (20, "external_forces[0].from"));
}

#[test]
fn an_external_force_ending_before_it_starts_is_refused_with_its_field() {
    let force = "external_forces:\n  - body: cube\n    from: 0.3\n    until: 0.1\n    profile: {constant: {force: [1, 0, 0]}}\nsimulation:";
    let (line, field, message) = where_refused(load_variant("simulation:", force));
    assert_eq!((line, field.as_str()), (22, "external_forces[0].until"));
    assert!(message.contains("before"), "{message}");
    let ok = force.replace("until: 0.1", "until: 0.3");
    assert!(
        load_variant("simulation:", &ok).is_ok(),
        "from = until is a force that never acts, not an error"
    );
}

#[test]
fn a_time_step_longer_than_twice_the_duration_is_refused_at_load() {
    let (line, field, _) = where_refused(load_variant("dt: 1.0e-3", "dt: 1.1"));
    assert_eq!((line, field.as_str()), (20, "simulation.dt"));
    // One step is still a run: round(0.5 / 0.9) = 1.
    let one = load_variant("dt: 1.0e-3", "dt: 0.9").expect("one step");
    assert_eq!(one.num_steps(), 1);
}

#[test]
fn a_huge_time_step_set_on_the_command_line_is_refused_at_load() {
    let result = Scenario::load(
        &shipped("scenarios/cube_slide.yaml"),
        &["simulation.dt=1e300".to_string()],
    );
    let message = match result {
        Err(e) => e.to_string(),
        Ok(s) => panic!("accepted: {} steps", s.num_steps()),
    };
    assert!(message.contains("simulation.dt"), "{message}");
    assert!(message.contains("0 steps"), "{message}");
}

#[test]
fn a_non_finite_number_set_on_the_command_line_is_refused() {
    for value in [".nan", ".inf", "-.inf", "1e999"] {
        let result = Scenario::load(
            &shipped("scenarios/cube_slide.yaml"),
            &[format!("simulation.baumgarte={value}")],
        );
        let Err(error) = result else {
            panic!("accepted: {value}")
        };
        assert!(
            error.to_string().contains("must be finite"),
            "{value}: {error}"
        );
    }
}

#[test]
fn the_run_command_refuses_a_huge_time_step_and_writes_nothing() {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("scenario-input-checks-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let output = Command::new(env!("CARGO_BIN_EXE_contactbench"))
        .args(["run", "scenarios/cube_slide.yaml", "--solver", "ncp-admm"])
        .args(["--set", "simulation.dt=1e300", "--out"])
        .arg(&out)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "exit 0; stderr: {stderr}");
    assert!(
        stderr.contains("cube_slide.yaml:20: simulation.dt"),
        "{stderr}"
    );
    assert!(!out.exists(), "{} was written", out.display());
}

#[test]
fn a_run_of_zero_steps_is_an_error_not_a_completed_run() {
    let mut scenario = load_variant("duration: 0.5", "duration: 0.01").expect("valid");
    scenario.simulation.dt = 1.0;
    let spec = SolverSpec::new(SolverId::NcpAdmm);
    match simulate(&scenario, &spec) {
        Err(e) => assert!(e.to_string().contains("0 steps"), "{e}"),
        Ok(record) => panic!(
            "completed with {} records, failure {:?}",
            record.steps.len(),
            record.failure
        ),
    }
}

#[test]
fn a_sweep_refuses_a_time_step_that_leaves_no_step() {
    let scenario = load_variant("duration: 0.5", "duration: 0.01").expect("valid");
    let error = check_limits(&scenario, SweepKind::TimeStep, &[1e-3, 1.0])
        .expect_err("dt = 1 s leaves no step in 0.01 s");
    let message = error.to_string();
    assert!(
        message.contains("--dt 1e0") && message.contains("0 steps"),
        "{message}"
    );
    assert!(check_limits(&scenario, SweepKind::TimeStep, &[1e-3, 5e-3]).is_ok());
}

#[test]
fn a_sweep_never_scores_a_run_of_zero_steps_as_a_perfect_zero() {
    let scenario = load_variant("duration: 0.5", "duration: 0.01").expect("valid");
    let runner = |s: &Scenario,
                  f: &dyn contactbench::simulation::SolverFactory,
                  r: &mut dyn contactbench::simulation::recorder::Recorder| {
        simulate_into(s, f, r).map_err(|e| e.to_string())
    };
    let table = sweep(
        &scenario,
        &[SolverSpec::new(SolverId::NcpAdmm)],
        SweepKind::TimeStep,
        &[1e-3, 1.0],
        &runner,
    );
    let cells = &table.rows[0].cells;
    assert!(
        cells[0].consistency_error.is_some_and(|e| e > 0.0),
        "{:?}",
        cells[0]
    );
    assert_eq!(cells[1].consistency_error, None, "{:?}", cells[1]);
    let failure = cells[1].failure.as_deref().unwrap_or("");
    assert!(failure.contains("0 steps"), "{failure}");
}

fn pile_text() -> String {
    std::fs::read_to_string(shipped("scenarios/pile_columns.yaml")).expect("shipped scenario")
}

#[test]
fn a_generated_pile_is_swept_by_set_and_its_bad_counts_name_the_field_and_line() {
    let text = pile_text();
    let path = Path::new("bad.yaml");
    let three = ["world.generate.columns={nx: 3, ny: 3, height: 3}".to_string()];
    let Ok(pile) = Scenario::from_yaml(&text, path, &three) else {
        panic!("a 3 × 3 × 3 pile loads");
    };
    assert_eq!(pile.world.bodies.len(), 27);
    assert_eq!(pile.initial_state.bodies.len(), 27);
    assert!(pile.world.generate.is_none());
    let line = text
        .lines()
        .position(|l| l.contains("columns:"))
        .map(|i| i + 1);
    let zero = Scenario::from_yaml(&text.replacen("nx: 2", "nx: 0", 1), path, &[]);
    let (at, field, message) = where_refused(zero);
    assert_eq!(
        (Some(at), field.as_str()),
        (line, "world.generate.columns.nx")
    );
    assert!(message.contains("must lie in [1, 100]"), "{message}");
    let heavy = Scenario::from_yaml(&text.replacen("mass: 1.0", "mass: -1.0", 1), path, &[]);
    assert_eq!(where_refused(heavy).1, "world.generate.columns.mass");
}

#[test]
fn a_pile_too_large_for_memory_is_refused_before_the_run() {
    let big = ["world.generate.columns={nx: 20, ny: 20, height: 10}".to_string()];
    let (_, field, message) = where_refused(Scenario::from_yaml(
        &pile_text(),
        Path::new("bad.yaml"),
        &big,
    ));
    assert_eq!(field, "world.generate");
    assert!(message.contains("4000 bodies: at most 2985"), "{message}");
    assert!(message.contains("7.2 GiB here"), "{message}");
    assert!(message.contains("GiB budget"), "{message}");
}
