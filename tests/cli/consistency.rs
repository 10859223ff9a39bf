//! The simulation commands agree with each other: `--solver X` keeps the
//! scenario's settings, `--json` means "the result as JSON on stdout" in every command,
//! CSV headers carry units, and a run with unconverged steps says so.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use contactbench::simulation::output::ResultsManifest;
use contactbench::simulation::Scenario;

fn contactbench(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_contactbench"))
        .args(args)
        .current_dir(dir)
        .env(
            "CONTACTBENCH_CACHE",
            std::env::var_os("CONTACTBENCH_CACHE").unwrap_or_else(|| {
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("robots/cache")
                    .into()
            }),
        )
        .output()
        .expect("the binary runs")
}

fn temp(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("contactbench-cli12-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn scenario(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn solver_flag_keeps_the_scenarios_settings_unless_overridden() {
    let s = Scenario::load(Path::new(&scenario("cube_slide.yaml")), &[]).expect("shipped");
    // Listed in the scenario: its entry's settings.
    let listed = s.solver_override("ncp-pgs").expect("spec");
    assert_eq!(
        (listed.settings.eps_rel, listed.settings.max_iter),
        (1e-6, 500)
    );
    // Overridden in the text: that value, the rest from the scenario.
    let changed = s.solver_override("ncp-pgs:eps_rel=1e-7").expect("spec");
    assert_eq!(
        (changed.settings.eps_rel, changed.settings.max_iter),
        (1e-7, 500)
    );
    // Another criterion: the scenario's relative tolerance is not carried over (it would
    // be refused as unused).
    let absolute = s
        .solver_override("ncp-pgs:stop=absolute,eps_abs=1e-8")
        .expect("spec");
    assert_eq!(
        (
            absolute.settings.stop,
            absolute.settings.eps_abs,
            absolute.settings.max_iter
        ),
        (contactbench::solvers::Criterion::Absolute, 1e-8, 500)
    );
    // Not listed: the settings every entry shares.
    let other = s.solver_override("ccp-ipm").expect("spec");
    assert_eq!(
        (other.settings.eps_rel, other.settings.max_iter),
        (1e-6, 500)
    );
    assert!(s.solver_override("ncp-magic").is_err());
}

/// Runs `COMMAND cube_slide.yaml --out out --json` (0.02 s of ncp-admm) in `dir` and checks
/// that its stdout is, as JSON, the results manifest it wrote to `dir/out`.
fn json_result_is_the_manifest_on_disk(dir: &Path, command: &str) {
    let out = contactbench(
        dir,
        &[
            command,
            &scenario("cube_slide.yaml"),
            "--solver",
            "ncp-admm",
            "--set",
            "simulation.duration=0.02",
            "--out",
            "out",
            "--json",
        ],
    );
    assert!(
        out.status.success(),
        "{command}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let manifest: ResultsManifest =
        serde_json::from_slice(&out.stdout).expect("stdout is the manifest as JSON");
    assert_eq!(
        manifest,
        ResultsManifest::read(&dir.join("out")).expect("on disk")
    );
}

#[test]
fn json_is_the_result_on_stdout_in_run_and_sweep() {
    let dir = temp("json");
    json_result_is_the_manifest_on_disk(&dir, "run");
    let sweep = contactbench(
        &dir,
        &[
            "sweep",
            &scenario("cube_slide.yaml"),
            "--solver",
            "ncp-admm",
            "--set",
            "simulation.duration=0.02",
            "--dt",
            "1e-3",
            "--json",
            "--out",
            "sweep",
        ],
    );
    assert!(
        sweep.status.success(),
        "{}",
        String::from_utf8_lossy(&sweep.stderr)
    );
    let table: serde_json::Value = serde_json::from_slice(&sweep.stdout).expect("JSON");
    assert_eq!(table["rows"][0]["solver"], "ncp-admm:max_iter=500");
    assert!(dir.join("sweep/sweep.json").is_file() && dir.join("sweep/sweep.md").is_file());
}

#[test]
fn csv_headers_carry_units_and_unconverged_runs_say_so() {
    let dir = temp("csv");
    let out = contactbench(
        &dir,
        &[
            "run",
            &scenario("cube_stack.yaml"),
            "--solver",
            "lcp-pgs",
            "--set",
            "simulation.duration=0.5",
            "--out",
            "out",
        ],
    );
    // Unconverged steps are a result, not a failure: exit 0, said on the terminal.
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("| unconverged |"), "{stdout}");
    assert!(
        stderr.contains("the solver did not converge on") && stderr.contains("max_iterations"),
        "{stderr}"
    );
    let manifest = ResultsManifest::read(&dir.join("out")).expect("manifest");
    let summary = &manifest.runs[0].summary;
    assert_eq!(summary.outcome, "unconverged");
    assert!(summary.unconverged_steps > 0);
    assert_eq!(
        summary.solver_statuses.values().sum::<usize>(),
        500,
        "{:?}",
        summary.solver_statuses
    );
    let steps =
        std::fs::read_to_string(dir.join("out/cube_stack/lcp-pgs/steps.csv")).expect("steps.csv");
    let header = steps.lines().next().expect("header");
    for column in [
        "time_s",
        "base_x_m",
        "mechanical_energy_J",
        "solve_time_s",
        "solver_status",
        "collision_failures",
    ] {
        assert!(
            header.split(',').any(|h| h == column),
            "{column} in {header}"
        );
    }
    let contacts = std::fs::read_to_string(dir.join("out/cube_stack/lcp-pgs/contacts.csv"))
        .expect("contacts.csv");
    assert!(contacts.starts_with(
        "step,time_s,contact,pair,x_m,y_m,z_m,signed_distance_m,lambda_t1_N_s,lambda_t2_N_s,lambda_n_N_s,c_t1_m_per_s,c_t2_m_per_s,c_n_m_per_s"
    ));
}

#[test]
fn an_unknown_solver_and_an_unknown_parameter_both_exit_with_2() {
    let dir = temp("exit");
    let s = scenario("cube_slide.yaml");
    for solver in ["ncp-magic", "ncp-admm:rhoo=1", "ncp-admm:eps_abs=-1"] {
        for command in ["run", "sweep"] {
            let mut args = vec![command, s.as_str(), "--solver", solver];
            if command == "sweep" {
                args.extend(["--dt", "1e-2"]);
            }
            let out = contactbench(&dir, &args);
            assert_eq!(out.status.code(), Some(2), "{command} --solver {solver}");
        }
    }
    // `solve` too: an unknown solver or parameter, or an invalid value, is an input error
    // (2); a solver that ran and did not converge is a result (1).
    let problem = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/sliding_problem.json")
        .display()
        .to_string();
    for solver in ["ncp-magic", "ncp-admm:rhoo=1", "ncp-admm:eps_abs=-1"] {
        let out = contactbench(&dir, &["solve", &problem, "--solver", solver]);
        assert_eq!(out.status.code(), Some(2), "solve --solver {solver}");
    }
    let unconverged = contactbench(
        &dir,
        &[
            "solve",
            &problem,
            "--solver",
            "ccp-pgs:max_iter=1,eps_rel=1e-12",
        ],
    );
    assert_eq!(unconverged.status.code(), Some(1));
    let bad_flag = contactbench(&dir, &["run", &s, "--no-such-flag"]);
    assert_eq!(bad_flag.status.code(), Some(2));
    assert!(!dir.join("results").exists());
}

#[test]
fn dump_and_baseline_files_are_not_overwritten() {
    let dir = temp("files");
    let s = scenario("cube_slide.yaml");
    std::fs::write(dir.join("mine.json"), "keep").expect("write");
    let dump = contactbench(&dir, &["dump", &s, "--step", "3", "--out", "mine.json"]);
    assert_eq!(
        dump.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&dump.stderr)
    );
    let batch = contactbench(
        &dir,
        &[
            "batch",
            &s,
            "--solver",
            "ncp-admm",
            "--out",
            "out",
            "--write-baseline",
            "mine.json",
        ],
    );
    assert_eq!(
        batch.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&batch.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("mine.json")).expect("kept"),
        "keep"
    );
    assert!(!dir.join("out").exists());
    let forced = contactbench(
        &dir,
        &["dump", &s, "--step", "3", "--out", "mine.json", "--force"],
    );
    assert!(
        forced.status.success(),
        "{}",
        String::from_utf8_lossy(&forced.stderr)
    );
}

/// `--solver ncp-pgs` keeps the scenario's own `eps_abs` (it once dropped it). The
/// paper's stack lists every solver with `stop: absolute, eps_abs: 1e-12, max_iter: 100`:
/// a listed solver keeps its entry, an unlisted one the settings all entries share, and a
/// run records the solver with them.
#[test]
fn solver_flag_keeps_the_scenarios_absolute_criterion_and_eps_abs() {
    use contactbench::solvers::Criterion;
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/paper/cube_stack.yaml");
    let s = Scenario::load(&path, &[]).expect("shipped");
    for id in ["ncp-pgs", "ncp-stagproj"] {
        let spec = s.solver_override(id).expect("spec");
        assert_eq!(
            (
                spec.settings.stop,
                spec.settings.eps_abs,
                spec.settings.max_iter
            ),
            (Criterion::Absolute, 1e-12, 100),
            "{id}"
        );
    }
    // Only the criterion changed: the scenario's eps_abs is dropped with it, max_iter kept.
    let relative = s
        .solver_override("ncp-pgs:stop=relative,eps_rel=1e-7")
        .expect("spec");
    assert_eq!(
        (
            relative.settings.stop,
            relative.settings.eps_rel,
            relative.settings.max_iter
        ),
        (Criterion::Relative, 1e-7, 100)
    );
    // The same through the command line: the recorded solver carries eps_abs=1e-12.
    let dir = temp("epsabs");
    let out = contactbench(
        &dir,
        &[
            "run",
            path.to_str().expect("utf8"),
            "--solver",
            "ncp-pgs",
            "--set",
            "simulation.duration=0.01",
            "--out",
            "out",
            "--json",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let manifest: ResultsManifest = serde_json::from_slice(&out.stdout).expect("manifest");
    let solver = &manifest.runs[0].summary.solver;
    assert!(
        solver.starts_with("ncp-pgs:")
            && solver.contains("stop=absolute")
            && solver.contains("eps_abs=1e-12")
            && solver.contains("max_iter=100"),
        "{solver}"
    );
}

/// `--json` is "the result as JSON on stdout" in `batch` too, and every command that has
/// `--json` or `--out` says so in the same words in its `--help`.
#[test]
fn json_is_the_result_on_stdout_in_batch_and_every_help_says_the_same() {
    let dir = temp("jsonbatch");
    json_result_is_the_manifest_on_disk(&dir, "batch");

    let help = contactbench(&dir, &["--help"]);
    let help = String::from_utf8_lossy(&help.stdout).to_string();
    let commands: Vec<String> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect();
    assert!(commands.len() >= 15, "{commands:?}");
    let (mut with_json, mut with_out) = (Vec::new(), Vec::new());
    for command in &commands {
        let text = contactbench(&dir, &[command, "--help"]);
        assert!(text.status.success(), "{command} --help");
        let text = String::from_utf8_lossy(&text.stdout).to_string();
        // clap's layout: the flag, then its description up to the next flag.
        let describe = |flag: &str| -> Option<String> {
            let start = text.lines().position(|l| {
                l.trim_start().starts_with(flag)
                    || l.trim_start()
                        .starts_with(&format!("-{}, {flag}", &flag[2..3]))
            })?;
            let mut lines = text.lines().skip(start);
            let mut said = lines.next().unwrap_or("").to_string();
            for l in lines.take_while(|l| !l.trim_start().starts_with('-') && !l.is_empty()) {
                said.push(' ');
                said.push_str(l.trim());
            }
            Some(said)
        };
        if let Some(said) = describe("--json") {
            with_json.push(command.clone());
            assert!(
                said.contains("JSON") && said.contains("stdout"),
                "{command} --json: {said}"
            );
        }
        if let Some(said) = describe("--out") {
            with_out.push(command.clone());
            assert!(!said.contains("stdout"), "{command} --out: {said}");
        }
    }
    for command in ["run", "batch", "sweep", "solve", "model", "solvers"] {
        assert!(with_json.contains(&command.to_string()), "{with_json:?}");
    }
    for command in ["run", "batch", "sweep", "dump", "paper", "bench-problems"] {
        assert!(with_out.contains(&command.to_string()), "{with_out:?}");
    }
}
