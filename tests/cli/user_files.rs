//! Issue 13, "Never lose a user's files, never call NaN converged": one test (or more)
//! per item of its list, each built from the failing case the issue reports.
//! Item 2's solver side (NumericalError statuses, NaN residuals) is tested with the
//! solvers; here, what the recording and summaries do with non-finite values.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use contactbench::metrics::energy::MechanicalEnergy;
use contactbench::model::{Model, ModelError, RootJoint};
use contactbench::simulation::output::{Replace, Staging, MARKER};
use contactbench::simulation::recorder::{read_columns, RecordError, RunRecord, StepRecord};
use contactbench::simulation::{Scenario, ScenarioError};
use contactbench::solvers::SolveStatus;
use nalgebra::DVector;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_contactbench"));
    c.env(
        "CONTACTBENCH_CACHE",
        std::env::var_os("CONTACTBENCH_CACHE").unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("robots/cache")
                .into()
        }),
    );
    c
}

fn run_in(dir: &Path, args: &[&str]) -> Output {
    bin()
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the binary runs")
}

fn temp(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("contactbench-r13-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn scenario_file(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(name)
        .display()
        .to_string()
}

/// A short cube slide as a scenario file in `dir`, with `from` replaced by `to`.
fn short_cube(dir: &Path, file: &str, from: &str, to: &str) -> PathBuf {
    let text = std::fs::read_to_string(scenario_file("cube_slide.yaml")).expect("shipped");
    assert!(text.contains(from), "{from}");
    let text = text
        .replacen(from, to, 1)
        .replacen("duration: 0.5", "duration: 0.02", 1);
    let path = dir.join(file);
    std::fs::write(&path, text).expect("write");
    path
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Nothing contactbench made is left in or under `dir` (staging directories, locks,
/// temporary files: every work entry is named `.contactbench-…`, the marker aside).
fn no_leftovers(dir: &Path) {
    let mut left = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("dir").filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with(".contactbench-") && name != MARKER {
                left.push(entry.path().display().to_string());
            } else if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(entry.path());
            }
        }
    }
    assert!(left.is_empty(), "left behind: {left:?}");
}

// ---- item 1: --out deletes user data ------------------------------------------------

#[test]
fn item1_a_directory_holding_report_md_survives() {
    let dir = temp("mydocs");
    let docs = dir.join("mydocs");
    std::fs::create_dir_all(docs.join("src")).expect("dirs");
    for (f, text) in [
        ("report.md", "r"),
        ("thesis.tex", "t"),
        ("src/main.rs", "m"),
        ("contactbench.json", "{}"),
    ] {
        std::fs::write(docs.join(f), text).expect("write");
    }
    let scenario = short_cube(&dir, "s.yaml", "name: cube_slide", "name: cube_slide");
    for force in [false, true] {
        let mut args = vec!["run", scenario.to_str().expect("utf8"), "--out", "mydocs"];
        if force {
            args.push("--force");
        }
        let out = run_in(&dir, &args);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("not written by contactbench"),
            "{}",
            stderr(&out)
        );
        for (f, text) in [
            ("report.md", "r"),
            ("thesis.tex", "t"),
            ("src/main.rs", "m"),
            ("contactbench.json", "{}"),
        ] {
            assert_eq!(std::fs::read_to_string(docs.join(f)).expect("kept"), text);
        }
    }
    no_leftovers(&dir);
}

#[test]
fn item1_out_dot_keeps_the_users_file() {
    let dir = temp("dot");
    let scenario = short_cube(&dir, "s.yaml", "name: cube_slide", "name: cube_slide");
    std::fs::write(dir.join("notes.txt"), "mine").expect("write");
    // Earlier results of ours in the directory change nothing.
    let first = run_in(
        &dir,
        &["run", scenario.to_str().expect("utf8"), "--out", "earlier"],
    );
    assert!(first.status.success(), "{}", stderr(&first));
    for out in [".", "./", "..", "earlier/.."] {
        for force in [false, true] {
            let mut args = vec!["run", scenario.to_str().expect("utf8"), "--out", out];
            if force {
                args.push("--force");
            }
            let o = run_in(&dir, &args);
            assert_eq!(o.status.code(), Some(2), "--out {out}: {}", stderr(&o));
        }
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).expect("kept"),
        "mine"
    );
    assert!(dir.join("earlier").join(MARKER).is_file());
    no_leftovers(&dir);
}

#[test]
fn item1_scenario_names_stay_one_safe_component() {
    let dir = temp("names");
    for name in ["..", ".", "/tmp/elsewhere", "a/b", ".hidden"] {
        let scenario = short_cube(
            &dir,
            "s.yaml",
            "name: cube_slide",
            &format!("name: '{name}'"),
        );
        let o = run_in(&dir, &["run", scenario.to_str().expect("utf8")]);
        assert_eq!(o.status.code(), Some(2), "name {name:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("s.yaml:6: name:"),
            "{name:?}: {}",
            stderr(&o)
        );
    }
    assert!(dir.join("s.yaml").is_file());
    assert!(!dir.join("results").exists());
    assert!(!Path::new("/tmp/elsewhere").exists());
}

#[test]
fn item1_duplicate_scenario_names_in_a_batch_are_refused() {
    let dir = temp("dup");
    let a = short_cube(&dir, "a.yaml", "name: cube_slide", "name: same");
    let b = short_cube(&dir, "b.yaml", "name: cube_slide", "name: same");
    let o = run_in(
        &dir,
        &[
            "batch",
            a.to_str().expect("utf8"),
            b.to_str().expect("utf8"),
            "--out",
            "out",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("b.yaml:6: name:") && stderr(&o).contains("a.yaml"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.join("out").exists());
}

#[test]
fn item1_a_second_writer_of_one_directory_is_refused() {
    let dir = temp("lock");
    let target = dir.join("out");
    let held = Staging::create(&target, Replace::Never).expect("first writer");
    let scenario = short_cube(&dir, "s.yaml", "name: cube_slide", "name: cube_slide");
    let o = run_in(
        &dir,
        &["run", scenario.to_str().expect("utf8"), "--out", "out"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("another contactbench process"),
        "{}",
        stderr(&o)
    );
    std::fs::write(held.path().join("mine.txt"), "first").expect("write");
    held.publish().expect("the first writer publishes");
    assert_eq!(
        std::fs::read_to_string(target.join("mine.txt")).expect("kept"),
        "first"
    );
    no_leftovers(&dir);
}

#[test]
fn item1_earlier_results_are_replaced_only_with_force_and_only_if_ours() {
    let dir = temp("force");
    let scenario = short_cube(&dir, "s.yaml", "name: cube_slide", "name: cube_slide");
    let s = scenario.to_str().expect("utf8");
    assert!(run_in(&dir, &["run", s, "--out", "out"]).status.success());
    let again = run_in(&dir, &["run", s, "--out", "out"]);
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(stderr(&again).contains("--force"), "{}", stderr(&again));
    assert!(run_in(&dir, &["run", s, "--out", "out", "--force"])
        .status
        .success());
    // A report (an output of ours nested in the results, with its own marker) is
    // replaced only with --force, and does not block replacing the results.
    assert!(run_in(&dir, &["report", "out"]).status.success());
    assert_eq!(run_in(&dir, &["report", "out"]).status.code(), Some(2));
    assert!(run_in(&dir, &["report", "out", "--force"]).status.success());
    assert!(run_in(&dir, &["run", s, "--out", "out", "--force"])
        .status
        .success());
    assert!(!dir.join("out/report").exists());
    std::fs::write(dir.join("out/cube_slide/notes.txt"), "mine").expect("write");
    let o = run_in(&dir, &["run", s, "--out", "out", "--force"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("notes.txt"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(dir.join("out/cube_slide/notes.txt")).expect("kept"),
        "mine"
    );
    // Without --out, each run gets a new directory.
    for expected in ["results/cube_slide", "results/cube_slide-2"] {
        let o = run_in(&dir, &["run", s]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(String::from_utf8_lossy(&o.stdout).contains(&format!("results: {expected}")));
    }
    no_leftovers(&dir);
    no_leftovers(&dir.join("results"));
}

#[test]
fn item1_staging_left_by_a_killed_process_is_removed_by_the_next_writer() {
    let dir = temp("stale");
    // What SIGKILL leaves: the target it created, holding a stamped staging directory
    // and a signed lock file nobody holds.
    let staging = dir.join("out/.contactbench-staging-dead");
    std::fs::create_dir_all(staging.join("cube_slide")).expect("dirs");
    std::fs::write(
        staging.join(".contactbench-staging"),
        "contactbench staging directory\n",
    )
    .expect("stamp");
    std::fs::write(
        dir.join("out/.contactbench-lock"),
        "contactbench output lock\n",
    )
    .expect("lock");
    let scenario = short_cube(&dir, "s.yaml", "name: cube_slide", "name: cube_slide");
    let o = run_in(
        &dir,
        &["run", scenario.to_str().expect("utf8"), "--out", "out"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.join("out").join(MARKER).is_file());
    no_leftovers(&dir);
}

#[cfg(unix)]
#[test]
fn item1_sigterm_and_sigint_leave_no_staging_directory() {
    for signal in ["-TERM", "-INT"] {
        let dir = temp(&format!("signal{signal}"));
        let scenario = short_cube(&dir, "s.yaml", "duration: 0.5", "duration: 1000.0");
        let mut child = bin()
            .args([
                "run",
                scenario.to_str().expect("utf8"),
                "--out",
                "out",
                "--solver",
                "ncp-admm",
            ])
            .current_dir(&dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        let staged = (0..400).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(25));
            std::fs::read_dir(dir.join("out")).is_ok_and(|entries| {
                entries.filter_map(Result::ok).any(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .contains(".contactbench-staging-")
                })
            })
        });
        assert!(staged, "no staging directory appeared");
        let killed = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .expect("kill");
        assert!(killed.success());
        let status = child.wait().expect("wait");
        assert_eq!(status.code(), Some(130), "{signal}");
        assert!(!dir.join("out").exists());
        no_leftovers(&dir);
    }
}

// ---- item 2: NaN never reads as converged or as 0 -----------------------------------

fn step(k: usize, ncp: f64, contacts: usize) -> StepRecord {
    let metrics = Some(contactbench::metrics::ProblemMetrics {
        ncp_criterion: ncp,
        ..Default::default()
    });
    StepRecord {
        step: k,
        time: k as f64 * 1e-3,
        q: DVector::zeros(1),
        v: DVector::zeros(1),
        base_position: [0.0; 3],
        contacts: (0..contacts)
            .map(|_| contactbench::simulation::recorder::ContactRecord {
                pair: "a|b".into(),
                point: [0.0; 3],
                signed_distance: 0.0,
                lambda: [0.0; 3],
                velocity: [0.0; 3],
            })
            .collect(),
        metrics,
        energy: MechanicalEnergy::default(),
        iterations: 3,
        status: "max iterations reached".into(),
        solver_status: (contacts > 0).then_some(SolveStatus::MaxIterations),
        converged: contacts == 0,
        collision_failures: 0,
        timings: Default::default(),
    }
}

#[test]
fn item2_a_nan_residual_is_not_summarized_as_zero_nor_written_as_zero() {
    let record = RunRecord {
        scenario: "s".into(),
        solver: "x".into(),
        dt: 1e-3,
        q_names: vec!["x".into()],
        v_names: vec!["vx".into()],
        steps: vec![
            step(0, 0.0, 0),
            step(1, 1e-3, 1),
            step(2, f64::NAN, 1),
            step(3, 0.0, 0),
        ],
        ..Default::default()
    };
    let summary = record.summary();
    assert!(
        summary.max_ncp_criterion.is_some_and(f64::is_nan),
        "{summary:?}"
    );
    assert_eq!(summary.outcome, "unconverged");
    assert_eq!(summary.unconverged_steps, 2);
    assert_eq!(summary.solver_statuses.get("max_iterations"), Some(&2));
    let dir = temp("nan");
    record.write(&dir.join("run")).expect("write");
    let text = std::fs::read_to_string(dir.join("run/steps.csv")).expect("csv");
    let header: Vec<&str> = text.lines().next().expect("header").split(',').collect();
    let column = header
        .iter()
        .position(|h| *h == "ncp_criterion")
        .expect("column");
    let cells: Vec<String> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(column).expect("cell").to_string())
        .collect();
    // No contact: no value (empty), not 0; the NaN stays NaN.
    assert_eq!(cells, ["", "0.001", "NaN", ""]);
    let err = read_columns(&dir.join("run/steps.csv")).expect_err("NaN refused");
    assert!(
        matches!(err, RecordError::NotFinite { row: 3, .. }),
        "{err}"
    );
}

// ---- item 3: crashes ----------------------------------------------------------------

#[test]
fn item3_deeply_nested_urdf_is_a_typed_error() {
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
fn item3_report_refuses_nan_missing_files_and_paths_outside() {
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

// ---- item 4: unbounded resources ----------------------------------------------------

#[test]
fn item4_sweep_and_batch_respect_the_step_cap() {
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
fn item4_deeply_nested_yaml_is_refused_by_the_parser_budget() {
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
fn item4_oversized_input_files_are_refused_before_parsing() {
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

// Item 4's memory test is `tests/run_memory.rs`: it counts the heap in its own test
// binary.

// ---- item 5: unclear errors ---------------------------------------------------------

#[test]
fn item5_an_unknown_key_in_a_solver_entry_is_located_and_printed_once() {
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
fn item5_set_errors_name_the_field_and_its_line() {
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
fn item5_invalid_utf8_gives_the_byte_position_once() {
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
fn item5_urdf_errors_name_the_link() {
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
fn item5_absurd_values_are_refused_or_named_as_divergence() {
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
