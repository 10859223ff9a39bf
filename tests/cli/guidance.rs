//! What the command line tells its user: a regression gate that compares like with like,
//! "did you mean", the folder `report` wants, legends and units, debug-build timings,
//! repeated solves, a line per finished run in a log, and an error of many tasks once.

use super::support::{run_in, scenario_file, short_cube, stderr, temp};

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `batch` of the shipped cube slide and `extra`, 0.02 s with ncp-admm, against or into
/// `baseline.json` in `dir`, with or without the `--set`/`--solver` flags.
fn gate(
    dir: &std::path::Path,
    extra: &[&str],
    flags: bool,
    baseline: &str,
) -> std::process::Output {
    let cube = scenario_file("cube_slide.yaml");
    let mut args = vec!["batch", cube.as_str()];
    args.extend_from_slice(extra);
    if flags {
        args.extend(["--set", "simulation.duration=0.02", "--solver", "ncp-admm"]);
    }
    args.extend(["--out", "out", "--force", baseline, "baseline.json"]);
    run_in(dir, &args)
}

#[test]
fn the_gate_refuses_a_baseline_of_other_settings_and_lists_runs_it_has_no_entry_for() {
    let dir = temp("gate");
    let wrote = gate(&dir, &[], true, "--write-baseline");
    assert!(wrote.status.success(), "{}", stderr(&wrote));
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("baseline.json")).expect("written"))
            .expect("JSON");
    assert_eq!(
        stored["settings"],
        serde_json::json!({"overrides": ["simulation.duration=0.02"], "solvers": ["ncp-admm"]})
    );

    let other = gate(&dir, &[], false, "--baseline");
    assert_eq!(other.status.code(), Some(2), "{}", stderr(&other));
    assert!(
        stderr(&other)
            .contains("running the batch with --set simulation.duration=0.02 --solver ncp-admm"),
        "{}",
        stderr(&other)
    );

    let ball = scenario_file("ball_drop.yaml");
    let same = gate(&dir, &[ball.as_str()], true, "--baseline");
    assert!(same.status.success(), "{}", stderr(&same));
    assert!(
        stderr(&same)
            .contains("1 run(s) have no entry in it and are not compared: ball_drop / ncp-admm"),
        "{}",
        stderr(&same)
    );
    assert!(
        stderr(&same).contains("baseline: 1 runs within tolerance"),
        "{}",
        stderr(&same)
    );
}

#[test]
fn a_baseline_without_its_settings_is_refused_with_how_to_write_it_again() {
    let dir = temp("gate-old");
    std::fs::write(dir.join("baseline.json"), "[]").expect("write");
    let old = gate(&dir, &[], true, "--baseline");
    assert_eq!(old.status.code(), Some(2), "{}", stderr(&old));
    assert!(stderr(&old).contains("older format"), "{}", stderr(&old));
}

#[test]
fn a_misspelt_solver_or_parameter_gets_a_did_you_mean_and_the_shared_settings() {
    let dir = temp("hints");
    let cube = scenario_file("cube_slide.yaml");
    let solver = run_in(
        &dir,
        &["run", &cube, "--solver", "ncp-admn", "--out", "out"],
    );
    assert_eq!(solver.status.code(), Some(2));
    assert!(
        stderr(&solver).contains("hint: did you mean 'ncp-admm'?"),
        "{}",
        stderr(&solver)
    );

    let param = run_in(
        &dir,
        &[
            "run",
            &cube,
            "--solver",
            "ncp-admm:eps=1e-8",
            "--out",
            "out",
        ],
    );
    assert_eq!(param.status.code(), Some(2));
    let err = stderr(&param);
    assert!(
        err.contains("did you mean 'eps_rel', 'eps_abs' or 'eps_step'?"),
        "{err}"
    );
    assert!(
        err.contains("shared settings: stop, eps_rel, eps_abs"),
        "{err}"
    );

    let command = run_in(&dir, &["sovle"]);
    assert_eq!(command.status.code(), Some(2));
    assert!(
        stderr(&command).contains("similar subcommand"),
        "{}",
        stderr(&command)
    );
}

#[test]
fn report_on_a_runs_folder_names_the_results_directory() {
    let dir = temp("report-sub");
    let cube = short_cube(&dir, "cube.yaml", "ncp-admm", "ncp-admm");
    let ran = run_in(
        &dir,
        &[
            "run",
            &cube.display().to_string(),
            "--solver",
            "ncp-admm",
            "--out",
            "res",
        ],
    );
    assert!(ran.status.success(), "{}", stderr(&ran));
    let sub = run_in(&dir, &["report", "res/cube_slide/ncp-admm"]);
    assert_eq!(sub.status.code(), Some(2));
    assert!(
        stderr(&sub).contains("point report at that directory: contactbench report res"),
        "{}",
        stderr(&sub)
    );
}

#[test]
fn a_batch_off_a_terminal_prints_a_line_per_finished_run() {
    let dir = temp("log-lines");
    let cube = short_cube(&dir, "cube.yaml", "ncp-admm", "ncp-admm");
    let ran = run_in(
        &dir,
        &[
            "batch",
            &cube.display().to_string(),
            "--solver",
            "ncp-admm",
            "--solver",
            "lcp-pgs",
            "--out",
            "res",
        ],
    );
    assert!(ran.status.success(), "{}", stderr(&ran));
    let lines: Vec<String> = stderr(&ran)
        .lines()
        .filter(|l| l.starts_with('['))
        .map(String::from)
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("cube_slide / lcp-pgs") && l.ends_with(": completed (20 steps)")),
        "{lines:?}"
    );
}

#[test]
fn solve_all_has_a_legend_no_negative_zero_and_repeats_give_a_median() {
    let dir = temp("solve-table");
    let problem = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/contactbench/2cubes_t0_8c.json");
    let all = run_in(
        &dir,
        &[
            "solve",
            &problem.display().to_string(),
            "--all",
            "--repeat",
            "3",
        ],
    );
    let text = stdout(&all);
    assert!(
        text.contains("ncp_rel           the relative NCP criterion r"),
        "{text}"
    );
    assert!(text.contains("(N s; -: no J or no split)"), "{text}");
    assert!(!text.contains("-0.00e0"), "{text}");
    assert!(
        text.contains("time of 3 solves from the same start, median (min - max):"),
        "{text}"
    );
    if cfg!(debug_assertions) {
        assert!(
            stderr(&all).contains("solve: this contactbench is a debug build"),
            "{}",
            stderr(&all)
        );
    }
}

#[test]
fn an_error_shared_by_many_tasks_is_printed_once_with_a_count() {
    let dir = temp("repeated");
    std::fs::write(dir.join("broken.json"), "{\"G\": [[1.0]], \"g\": [0.0]").expect("write");
    let bench = run_in(
        &dir,
        &[
            "bench-problems",
            "broken.json",
            "--solver",
            "ncp-admm",
            "--solver",
            "lcp-pgs",
            "--solver",
            "raisim",
            "--out",
            "res",
        ],
    );
    let err = stderr(&bench);
    let shown = err.lines().filter(|l| l.contains("broken.json /")).count();
    assert_eq!(shown, 1, "{err}");
    assert!(err.contains("the same error in 3 tasks"), "{err}");
}
