//! A user's robot manifest: named robots of their own in a YAML file
//! (`$CONTACTBENCH_ROBOTS`), seen by `Catalogue`, by scenarios, by `contactbench model`
//! and `contactbench robots list`; errors name the file, the line and the field; a
//! scenario's robot that cannot be loaded keeps the model's error as its source.

use std::error::Error as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use contactbench::model::robots::{self, Catalogue};
use contactbench::model::{Model, ModelError, RootJoint};
use contactbench::simulation::{Scenario, ScenarioError, World};

fn temp(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "contactbench-user-robots-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    dir
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

/// The repository's test pendulum, copied to `dir/pendulum/pendulum.urdf`.
fn copy_pendulum(dir: &Path) -> PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/model_pendulum.urdf");
    std::fs::create_dir_all(dir.join("pendulum")).unwrap_or_else(|e| panic!("{e}"));
    let to = dir.join("pendulum/pendulum.urdf");
    std::fs::copy(&from, &to).unwrap_or_else(|e| panic!("{e}"));
    to
}

/// A user manifest in `dir` naming the pendulum (by a relative path) and the cached
/// Solo-12 (by absolute paths, with its package directory, SRDF and reference).
fn user_manifest(dir: &Path) -> PathBuf {
    copy_pendulum(dir);
    let builtin = robots::manifest().unwrap_or_else(|e| panic!("{e}"));
    let solo = builtin.robot("solo12").unwrap_or_else(|e| panic!("{e}"));
    builtin.fetch(false).unwrap_or_else(|e| panic!("{e}"));
    let srdf = solo
        .srdf
        .as_ref()
        .unwrap_or_else(|| panic!("solo12 has an SRDF"));
    let file = dir.join("robots.yaml");
    write(
        &file,
        &format!(
            "# my robots\nrobots:\n  - name: pendulum\n    urdf: pendulum/pendulum.urdf\n\
             \x20 - name: my_solo\n    urdf: {}\n    packages: [{}]\n    srdf: {}\n\
             \x20   root: free_flyer\n    reference: standing\n",
            builtin.robots_dir().join(&solo.urdf).display(),
            builtin.package_dir().join("share").display(),
            builtin.robots_dir().join(srdf).display(),
        ),
    );
    file
}

fn contactbench(args: &[&str], user_manifest: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_contactbench"))
        .args(args)
        .env("CONTACTBENCH_ROBOTS", user_manifest)
        .output()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_user_manifest_names_the_test_pendulum_and_a_cached_robot() {
    let dir = temp("names");
    let file = user_manifest(&dir);
    let catalogue = Catalogue::with_user_file(&file).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        catalogue.names(),
        ["solo12", "talos", "allegro", "pendulum", "my_solo"]
    );

    let pendulum = catalogue.load("pendulum").unwrap_or_else(|e| panic!("{e}"));
    let direct = Model::from_urdf(dir.join("pendulum/pendulum.urdf"), RootJoint::Fixed)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(pendulum.name, "pendulum");
    assert_eq!((pendulum.nq(), pendulum.nv()), (2, 1));
    assert_eq!(pendulum.joints, direct.joints);
    assert_eq!(pendulum.inertias, direct.inertias);

    let mine = catalogue.load("my_solo").unwrap_or_else(|e| panic!("{e}"));
    let solo = catalogue.load("solo12").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(mine.name, "my_solo");
    assert_eq!((mine.nq(), mine.nv()), (19, 18));
    assert_eq!(mine.joints, solo.joints);
    assert_eq!(mine.inertias, solo.inertias);
    assert_eq!(mine.geometries, solo.geometries);
    assert_eq!(
        mine.reference_configuration("standing").ok(),
        solo.reference_configuration("standing").ok()
    );
}

#[test]
fn an_unknown_name_lists_the_built_in_and_the_user_robots() {
    let dir = temp("unknown");
    let file = user_manifest(&dir);
    let catalogue = Catalogue::with_user_file(&file).unwrap_or_else(|e| panic!("{e}"));
    let err = catalogue
        .load("atlas")
        .err()
        .unwrap_or_else(|| panic!("atlas loaded"));
    assert!(matches!(err, ModelError::UnknownRobot { .. }), "{err:?}");
    let message = err.to_string();
    for name in ["solo12", "talos", "allegro", "pendulum", "my_solo"] {
        assert!(message.contains(name), "{message}");
    }
    assert!(message.contains(&file.display().to_string()), "{message}");
    // Without a user manifest the message says how to add one.
    let builtin = Catalogue::with_user(None).unwrap_or_else(|e| panic!("{e}"));
    let message = builtin
        .load("atlas")
        .err()
        .unwrap_or_else(|| panic!("atlas loaded"))
        .to_string();
    assert!(message.contains("CONTACTBENCH_ROBOTS"), "{message}");
}

/// The `RobotManifest` error of a user manifest with this text, as (line, field, message).
fn manifest_error(dir: &Path, yaml: &str) -> (PathBuf, usize, String, String) {
    let file = dir.join("bad.yaml");
    write(&file, yaml);
    match Catalogue::with_user_file(&file) {
        Err(ModelError::RobotManifest {
            file,
            line,
            field,
            message,
            ..
        }) => (file, line, field, message),
        other => panic!("{yaml}: {other:?}"),
    }
}

#[test]
fn a_malformed_user_manifest_is_a_typed_error_with_file_line_and_field() {
    let dir = temp("malformed");
    copy_pendulum(&dir);
    let bad = dir.join("bad.yaml");
    // A misspelt field.
    let (file, line, field, message) = manifest_error(
        &dir,
        "robots:\n  - name: pendulum\n    urdf: pendulum/pendulum.urdf\n    srdff: x.srdf\n",
    );
    assert_eq!((file, line), (bad.clone(), 4));
    assert!(field.starts_with("robots[0]"), "{field}");
    assert!(message.contains("srdff"), "{message}");
    // A wrong type.
    let (_, line, field, _) = manifest_error(
        &dir,
        "robots:\n  - name: pendulum\n    urdf: pendulum/pendulum.urdf\n    packages: 3\n",
    );
    assert_eq!((line, field.as_str()), (4, "robots[0].packages"));
    // An unknown root.
    let (_, line, field, message) = manifest_error(
        &dir,
        "robots:\n  - name: pendulum\n    urdf: pendulum/pendulum.urdf\n    root: floating\n",
    );
    assert_eq!((line, field.as_str()), (4, "robots[0].root"));
    assert!(message.contains("floating"), "{message}");
    // Not YAML.
    let (_, line, _, _) = manifest_error(&dir, "robots:\n  - name: [pendulum\n");
    assert!(line >= 2, "line {line}");
    // A built-in name: refused, not overridden.
    let (_, line, field, message) = manifest_error(
        &dir,
        "robots:\n  - name: pendulum\n    urdf: pendulum/pendulum.urdf\n  - name: solo12\n    urdf: pendulum/pendulum.urdf\n",
    );
    assert_eq!((line, field.as_str()), (4, "robots[1].name"));
    assert!(message.contains("built-in"), "{message}");
    // ... at the name's column (`  - name: solo12`: column 11).
    match Catalogue::with_user_file(&bad) {
        Err(ModelError::RobotManifest { column, .. }) => assert_eq!(column, 11),
        other => panic!("{other:?}"),
    }
    // A name given twice.
    let (_, line, field, message) = manifest_error(
        &dir,
        "robots:\n  - name: pendulum\n    urdf: pendulum/pendulum.urdf\n  - name: pendulum\n    urdf: pendulum/pendulum.urdf\n",
    );
    assert_eq!((line, field.as_str()), (4, "robots[1].name"));
    assert!(message.contains("line 2"), "{message}");
    // A file that is not there.
    let missing = dir.join("nowhere.yaml");
    let err = Catalogue::with_user_file(&missing)
        .err()
        .unwrap_or_else(|| panic!("a missing manifest loaded"));
    assert!(
        matches!(&err, ModelError::Io { file, .. } if file == &missing),
        "{err:?}"
    );
}

#[test]
fn a_user_robot_that_does_not_load_names_its_entry_and_keeps_the_cause() {
    let dir = temp("broken");
    write(&dir.join("broken.urdf"), "<robot name='x'><link name=");
    let file = dir.join("robots.yaml");
    write(
        &file,
        "robots:\n  - name: fine\n    urdf: broken.urdf\n  - name: broken\n    urdf: broken.urdf\n",
    );
    let catalogue = Catalogue::with_user_file(&file).unwrap_or_else(|e| panic!("{e}"));
    let err = catalogue
        .load("broken")
        .err()
        .unwrap_or_else(|| panic!("loaded"));
    let ModelError::UserRobot(user) = &err else {
        panic!("{err:?}")
    };
    assert_eq!((user.line, user.name.as_str()), (4, "broken"));
    assert!(
        matches!(&user.source, ModelError::MalformedUrdf { file, .. } if file.ends_with("broken.urdf")),
        "{:?}",
        user.source
    );
    let cause = err
        .source()
        .and_then(|s| s.downcast_ref::<ModelError>())
        .unwrap_or_else(|| panic!("no ModelError source"));
    assert!(matches!(cause, ModelError::MalformedUrdf { .. }));
}

/// A scenario of the pendulum, given as `robot`, hit off-centre by a falling ball, for
/// 0.2 s.
fn pendulum_scenario(robot: &str) -> String {
    format!(
        "name: swing\nworld:\n  robot: {robot}\n  ground: false\n\
         \x20 bodies:\n    - {{name: ball, shape: {{sphere: 0.05}}, mass: 0.1}}\n\
         initial_state:\n  bodies:\n    ball: {{position: [0.02, 0.0, -0.38]}}\n\
         simulation: {{dt: 1.0e-3, duration: 0.2}}\nsolvers:\n  - {{solver: ncp-admm}}\n"
    )
}

#[test]
fn scenarios_model_and_robots_list_see_the_user_robots() {
    let dir = temp("cli");
    let file = user_manifest(&dir);

    let list = contactbench(&["robots", "list"], &file);
    let stdout = text(&list.stdout);
    assert!(list.status.success(), "{}", text(&list.stderr));
    assert!(stdout.contains(&file.display().to_string()), "{stdout}");
    for name in ["solo12", "pendulum", "my_solo"] {
        assert!(
            stdout.lines().any(|l| l.starts_with(&format!("{name} "))),
            "{stdout}"
        );
    }

    let model = contactbench(&["model", "pendulum", "--json"], &file);
    assert!(model.status.success(), "{}", text(&model.stderr));
    let json: serde_json::Value =
        serde_json::from_slice(&model.stdout).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (json["nq"].as_u64(), json["nv"].as_u64()),
        (Some(2), Some(1))
    );

    // The same scenario by name (through the environment variable) and by path: the same
    // steps, byte for byte.
    write(&dir.join("by_name.yaml"), &pendulum_scenario("pendulum"));
    write(
        &dir.join("by_path.yaml"),
        &pendulum_scenario("pendulum/pendulum.urdf"),
    );
    let steps: Vec<_> = ["by_name", "by_path"]
        .into_iter()
        .map(|which| {
            let scenario = dir.join(format!("{which}.yaml"));
            run_steps(&scenario, &dir.join(format!("out_{which}")), &[], &file)
        })
        .collect();
    assert!(!steps[0].is_empty());
    assert_eq!(steps[0], steps[1]);

    // The shipped Solo-12 scenario with the user's copy of Solo-12: the built-in run's
    // steps, byte for byte.
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/solo_standing.yaml");
    let yaml = std::fs::read_to_string(&shipped).unwrap_or_else(|e| panic!("{e}"));
    let mine = yaml.replace("  robot: solo12\n", "  robot: my_solo\n");
    assert_ne!(mine, yaml);
    write(&dir.join("solo_standing.yaml"), &mine);
    let options = ["--solver", "ncp-admm", "--set", "simulation.duration=0.05"];
    let steps: Vec<_> = [
        ("builtin", shipped),
        ("mine", dir.join("solo_standing.yaml")),
    ]
    .into_iter()
    .map(|(which, scenario)| {
        let out = dir.join(format!("out_solo_{which}"));
        run_steps(&scenario, &out, &options, &file)
    })
    .collect();
    assert!(!steps[0].is_empty());
    assert_eq!(steps[0], steps[1]);
}

/// `contactbench run SCENARIO OPTIONS --out OUT` with the user manifest `file`; the run's
/// CSV files as [`read_steps`] reads them.
fn run_steps(scenario: &Path, out: &Path, options: &[&str], file: &Path) -> Vec<(String, String)> {
    let scenario_arg = scenario.display().to_string();
    let out_arg = out.display().to_string();
    let mut args = vec!["run", scenario_arg.as_str()];
    args.extend_from_slice(options);
    args.extend(["--out", out_arg.as_str()]);
    let run = contactbench(&args, file);
    assert!(
        run.status.success(),
        "{}: {}",
        scenario.display(),
        text(&run.stderr)
    );
    read_steps(out)
}

/// Every CSV file under `dir`, sorted by name, without its wall-clock columns
/// (`*_time_s`: measured, not computed).
fn read_steps(dir: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{e}")) {
            let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "csv") {
                let name = path
                    .strip_prefix(dir)
                    .unwrap_or(&path)
                    .display()
                    .to_string();
                let body = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
                files.push((name, without_wall_clock(&body)));
            }
        }
    }
    files.sort();
    files
}

fn without_wall_clock(csv: &str) -> String {
    let header = csv.lines().next().unwrap_or("");
    let keep: Vec<bool> = header.split(',').map(|h| !h.ends_with("_time_s")).collect();
    csv.lines()
        .map(|line| {
            line.split(',')
                .zip(&keep)
                .filter(|(_, k)| **k)
                .map(|(cell, _)| cell)
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn urdf_only_fields_with_a_named_robot_are_refused() {
    let dir = temp("urdf-only");
    let file = dir.join("scenario.yaml");
    for (line, field) in [
        ("  robot_packages: [meshes]", "world.robot_packages"),
        ("  robot_srdf: solo.srdf", "world.robot_srdf"),
        ("  robot_root: free_flyer", "world.robot_root"),
    ] {
        write(
            &file,
            &format!(
                "name: t\nworld:\n  robot: solo12\n{line}\n\
                 solvers:\n  - {{solver: ncp-admm}}\nsimulation: {{dt: 1.0e-3, duration: 0.01}}\n"
            ),
        );
        match Scenario::load(&file, &[]) {
            Err(ScenarioError::Invalid { line, field: f, .. }) => {
                assert_eq!((line, f.as_str()), (4, field))
            }
            other => panic!("{field}: {other:?}"),
        }
    }
}

#[test]
fn a_scenario_robot_that_cannot_be_read_keeps_the_model_error_as_source() {
    let dir = temp("source");
    let scenario = dir.join("scenario.yaml");
    write(
        &scenario,
        "name: t\nworld:\n  ground: true\n  robot: nowhere.urdf\n\
         solvers:\n  - {solver: ncp-admm}\nsimulation: {dt: 1.0e-3, duration: 0.01}\n",
    );
    let loaded = Scenario::load(&scenario, &[]).unwrap_or_else(|e| panic!("{e}"));
    let err = World::build(&loaded)
        .err()
        .unwrap_or_else(|| panic!("the world built"));
    let ScenarioError::Robot(robot) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        (
            &robot.file,
            robot.line,
            robot.field.as_str(),
            robot.robot.as_str()
        ),
        (&scenario, 4, "world.robot", "nowhere.urdf")
    );
    assert!(
        matches!(&robot.source, ModelError::Io { file, .. } if file == &dir.join("nowhere.urdf")),
        "{:?}",
        robot.source
    );
    let cause = err
        .source()
        .and_then(|s| s.downcast_ref::<ModelError>())
        .unwrap_or_else(|| panic!("no ModelError source"));
    assert!(matches!(cause, ModelError::Io { .. }));

    // A URDF that does not parse: the parser's message is in the chain, not in the text.
    write(&dir.join("broken.urdf"), "<robot name='x'><link name=");
    write(
        &scenario,
        "name: t\nworld:\n  robot: broken.urdf\n\
         solvers:\n  - {solver: ncp-admm}\nsimulation: {dt: 1.0e-3, duration: 0.01}\n",
    );
    let loaded = Scenario::load(&scenario, &[]).unwrap_or_else(|e| panic!("{e}"));
    let err = World::build(&loaded)
        .err()
        .unwrap_or_else(|| panic!("the world built"));
    assert!(
        matches!(&err, ScenarioError::Robot(robot)
            if matches!(robot.source, ModelError::MalformedUrdf { .. })),
        "{err:?}"
    );

    // The command line prints the whole chain: scenario file, line, field, then the cause.
    let run = contactbench(
        &[
            "run",
            &scenario.display().to_string(),
            "--out",
            &dir.join("out").display().to_string(),
        ],
        Path::new(""),
    );
    assert_eq!(run.status.code(), Some(2), "{}", text(&run.stderr));
    let stderr = text(&run.stderr);
    let expected = format!(
        "{}:3: world.robot: cannot load the robot 'broken.urdf': {}: malformed URDF",
        scenario.display(),
        dir.join("broken.urdf").display()
    );
    assert!(stderr.contains(&expected), "{stderr}\nexpected: {expected}");
}
