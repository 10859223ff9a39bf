//! Bad input ends in a clear error, never a crash or an unbounded run: deep nesting in a
//! URDF or YAML file, oversized files, a report of NaN or missing or outside files, sweeps
//! and batches over the step cap, unknown keys and `--set` errors located in the file,
//! invalid UTF-8 at its byte, URDF errors naming the link, and absurd values refused or
//! named as a divergence.

use std::path::Path;

use contactbench::model::{Model, ModelError, RootJoint};
use contactbench::simulation::{Scenario, ScenarioError};

use crate::support::{run_in, scenario_file, short_cube, stderr, temp};

#[test]
fn deeply_nested_urdf_is_a_typed_error() {
    let dir = temp("deep");
    let depth = 20_000;
    let text = format!(
        "<robot name=\"r\"><link name=\"a\">{}{}</link></robot>",
        "<visual>".repeat(depth),
        "</visual>".repeat(depth)
    );
    let path = dir.join("deep.urdf");
    std::fs::write(&path, text).expect("write");
    let err = Model::from_urdf(&path, RootJoint::Fixed).expect_err("refused");
    assert!(matches!(err, ModelError::MalformedUrdf { .. }), "{err:?}");
    assert!(err.to_string().contains("nested deeper than 32"), "{err}");
    let o = run_in(&dir, &["model", path.to_str().expect("utf8")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn report_refuses_nan_missing_files_and_paths_outside() {
    let dir = temp("report");
    let scenario = short_cube(&dir, "s.yaml", "name: cube_slide", "name: cube_slide");
    let s = scenario.to_str().expect("utf8");
    let fresh = |name: &str| {
        let o = run_in(&dir, &["run", s, "--out", name, "--solver", "ncp-admm"]);
        assert!(o.status.success(), "{}", stderr(&o));
        dir.join(name)
    };
    let nan = fresh("nan");
    let steps = nan.join("cube_slide/ncp-admm/steps.csv");
    let text = std::fs::read_to_string(&steps).expect("csv");
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let header: Vec<&str> = lines[0].split(',').collect();
    let k = header
        .iter()
        .position(|h| *h == "solve_time_s")
        .expect("column");
    let mut cells: Vec<String> = lines[5].split(',').map(str::to_string).collect();
    cells[k] = "NaN".into();
    lines[5] = cells.join(",");
    std::fs::write(&steps, lines.join("\n") + "\n").expect("write");
    let missing = fresh("missing");
    std::fs::remove_file(missing.join("cube_slide/ncp-admm/steps.csv")).expect("rm");
    let outside = fresh("outside");
    let manifest = outside.join("contactbench.json");
    let text = std::fs::read_to_string(&manifest)
        .expect("manifest")
        .replace("\"cube_slide/ncp-admm\"", "\"../../../../etc\"");
    std::fs::write(&manifest, text).expect("write");
    for (results, expected) in [
        (
            &nan,
            "steps.csv: row 5, column solve_time_s: 'NaN' is not a finite number",
        ),
        (&missing, "steps.csv: missing"),
        (
            &outside,
            "run path '../../../../etc' is not a relative path inside",
        ),
    ] {
        let o = run_in(&dir, &["report", results.to_str().expect("utf8")]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains(expected), "{}", stderr(&o));
        assert!(!results.join("report").exists());
    }
}

#[test]
fn sweep_and_batch_respect_the_step_cap() {
    let dir = temp("cap");
    let s = scenario_file("cube_slide.yaml");
    let o = run_in(&dir, &["sweep", &s, "--dt", "1e-9"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("exceeds the cap of 1e7 steps"),
        "{}",
        stderr(&o)
    );
    // The reference run (dt = 1e-4) counts too.
    let o = run_in(
        &dir,
        &[
            "sweep",
            &s,
            "--dt",
            "1e-2",
            "--set",
            "simulation.duration=2000",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("reference time step"), "{}", stderr(&o));
    let o = run_in(
        &dir,
        &["batch", &s, "--set", "simulation.dt=1e-9", "--out", "out"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!dir.join("out").exists());
}

#[test]
fn deeply_nested_yaml_is_refused_by_the_parser_budget() {
    let depth = 100_000;
    for text in [
        format!(
            "name: a\nworld: {}{}\n",
            "[".repeat(depth),
            "]".repeat(depth)
        ),
        format!(
            "name: a\nworld: {}{}\n",
            "{a: ".repeat(depth),
            "}".repeat(depth)
        ),
    ] {
        for overrides in [vec![], vec!["simulation.dt=1e-3".to_string()]] {
            let err = Scenario::from_yaml(&text, Path::new("deep.yaml"), &overrides)
                .expect_err("refused");
            assert!(
                matches!(
                    err,
                    ScenarioError::Parse { .. } | ScenarioError::Invalid { .. }
                ),
                "{err}"
            );
            assert!(err.to_string().starts_with("deep.yaml:"), "{err}");
        }
    }
}

#[test]
fn oversized_input_files_are_refused_before_parsing() {
    let dir = temp("size");
    let scenario = dir.join("big.yaml");
    let mut text = std::fs::read_to_string(scenario_file("cube_slide.yaml")).expect("shipped");
    text.push_str(&format!("# {}\n", "x".repeat(5 << 20)));
    std::fs::write(&scenario, text).expect("write");
    let err = Scenario::load(&scenario, &[]).expect_err("refused");
    assert!(
        err.to_string().contains("larger than 4194304 bytes"),
        "{err}"
    );
}

#[test]
fn an_unknown_key_in_a_solver_entry_is_located_and_printed_once() {
    let dir = temp("solverkey");
    let scenario = short_cube(
        &dir,
        "s.yaml",
        "{solver: ncp-pgs, eps_rel: 1.0e-6, max_iter: 500}",
        "{solver: ncp-pgs, eps_rel: 1.0e-6, max_iter: 500, rhoo: 2}",
    );
    let o = run_in(
        &dir,
        &["run", scenario.to_str().expect("utf8"), "--out", "out"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("s.yaml:25: solvers[1]:"), "{err}");
    assert_eq!(err.matches("rhoo").count(), 1, "{err}");
}

#[test]
fn set_errors_name_the_field_and_its_line() {
    let s = scenario_file("cube_slide.yaml");
    let dir = temp("set");
    let o = run_in(
        &dir,
        &["run", &s, "--set", "simulation.dt=fast", "--out", "out"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("cube_slide.yaml:20: simulation.dt:"), "{err}");
    assert!(err.contains("--set simulation.dt=fast"), "{err}");
    assert!(!err.contains(":1:1"), "{err}");
    // A type error elsewhere in the file, with a --set present, still names its field.
    let bad = short_cube(&dir, "bad.yaml", "friction: 0.4", "friction: lots");
    let o = run_in(
        &dir,
        &[
            "run",
            bad.to_str().expect("utf8"),
            "--set",
            "simulation.dt=1e-3",
        ],
    );
    assert!(
        stderr(&o).contains("bad.yaml:13: world.friction:"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn invalid_utf8_gives_the_byte_position_once() {
    let dir = temp("utf8");
    let mut bytes = std::fs::read(scenario_file("cube_slide.yaml")).expect("shipped");
    let at = bytes.iter().position(|&b| b == b'\n').expect("a line") + 3;
    bytes[at] = 0xff;
    std::fs::write(dir.join("s.yaml"), &bytes).expect("write");
    let o = run_in(&dir, &["run", "s.yaml"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "invalid byte 0xff at byte {at} (line 2, column 3)"
        )),
        "{}",
        stderr(&o)
    );
    let urdf = dir.join("bad.urdf");
    std::fs::write(&urdf, b"<robot name=\"r\">\n<link name=\"\xfe\"/></robot>").expect("write");
    let o = run_in(&dir, &["model", urdf.to_str().expect("utf8")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("at byte 29 (line 2, column 13)"), "{err}");
    assert_eq!(err.matches("UTF-8").count(), 1, "{err}");
}

#[test]
fn urdf_errors_name_the_link() {
    let dir = temp("urdf");
    let joint = |p: &str, c: &str| {
        format!("<joint name=\"j_{c}\" type=\"revolute\"><parent link=\"{p}\"/><child link=\"{c}\"/><axis xyz=\"0 0 1\"/><limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/></joint>")
    };
    let link = |name: &str, inertial: &str| {
        format!("<link name=\"{name}\"><inertial>{inertial}</inertial></link>")
    };
    let good =
        "<mass value=\"1\"/><inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/>";
    let cases = [
        ("missing.urdf", format!("{}\n{}{}", link("base", good), link("thigh", "<mass value=\"1\"/>"), joint("base", "thigh")), "link 'thigh': line 2: <inertial> without <inertia"),
        ("massless.urdf", format!("{}{}{}", link("base", good), "<link name=\"shin\"/>", joint("base", "shin")), "joint 'j_shin' moves no mass"),
        ("zero_mass.urdf", format!("{}{}{}", link("base", good), link("shin", "<mass value=\"0\"/><inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/>"), joint("base", "shin")), "link 'shin': invalid inertia: mass 0"),
        ("loop.urdf", format!("{}{}{}{}", link("a", good), link("b", good), joint("a", "b"), joint("b", "a")), "no root link: links 'a', 'b'"),
        ("origin.urdf", format!("{}\n<link name=\"foot\"><collision><origin xyz=\"0 0\"/><geometry><sphere radius=\"0.1\"/></geometry></collision></link>{}", link("base", good), joint("base", "foot")), "link 'foot': line 2: <origin xyz=\"0 0\">: expected 3 finite number(s)"),
        ("limit.urdf", format!("{}{}<joint name=\"knee\" type=\"revolute\"><parent link=\"base\"/><child link=\"shin\"/><limit lower=\"-1\" upper=\"1\"/></joint>", link("base", good), link("shin", good)), "joint 'knee': line 1: <limit> without its velocity attribute"),
    ];
    for (name, body, expected) in cases {
        let path = dir.join(name);
        std::fs::write(&path, format!("<robot name=\"r\">{body}</robot>")).expect("write");
        let err = Model::from_urdf(&path, RootJoint::Fixed)
            .expect_err(name)
            .to_string();
        assert!(err.contains(expected), "{name}: {err}");
        assert!(err.contains(name), "{name}: {err}");
    }
    // Allowed but noted: principal moments violating the triangle inequality.
    let path = dir.join("triangle.urdf");
    let flat =
        "<mass value=\"1\"/><inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"3\"/>";
    std::fs::write(
        &path,
        format!(
            "<robot name=\"r\">{}{}{}</robot>",
            link("base", good),
            link("disk", flat),
            joint("base", "disk")
        ),
    )
    .expect("write");
    let model = Model::from_urdf(&path, RootJoint::Fixed).expect("loads");
    assert_eq!(model.notes.len(), 1);
    assert!(
        model.notes[0].contains("link 'disk'") && model.notes[0].contains("33.3 %"),
        "{:?}",
        model.notes
    );
}

#[test]
fn absurd_values_are_refused_or_named_as_divergence() {
    let dir = temp("absurd");
    for (from, to, expected) in [
        (
            "box: [0.2, 0.2, 0.2]",
            "box: [1.0e9, 0.2, 0.2]",
            "s.yaml:11: world.bodies[0].shape: size 1e9",
        ),
        (
            "mass: 1.0",
            "mass: 5.0e-324",
            "s.yaml:12: world.bodies[0].mass: 5e-324",
        ),
    ] {
        let scenario = short_cube(&dir, "s.yaml", from, to);
        let o = run_in(
            &dir,
            &["run", scenario.to_str().expect("utf8"), "--out", "out"],
        );
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(expected), "{}", stderr(&o));
    }
    let push = short_cube(
        &dir,
        "push.yaml",
        "analytical:",
        "external_forces:\n  - {body: cube, profile: {constant: {force: [1.0e6, 0.0, 0.0]}}}\nanalytical:",
    );
    let o = run_in(
        &dir,
        &[
            "run",
            push.to_str().expect("utf8"),
            "--out",
            "push",
            "--solver",
            "ncp-admm",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("diverged at step"), "{err}");
    assert!(!err.contains("positive definite"), "{err}");
}
