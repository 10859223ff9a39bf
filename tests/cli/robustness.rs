//! The command line's edges: `solve --json` is a valid
//! warm start, `model --frames` without a configuration, shell completions, exit code 2
//! for `dump`'s input errors, a closed pipe, and `batch --shard K/N` whose shards together
//! are the whole batch.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use contactbench::simulation::output::ResultsManifest;
use contactbench::simulation::shards::shard_dir_name;

fn contactbench(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_contactbench"))
        .args(args)
        .current_dir(dir)
        .env("CONTACTBENCH_CACHE", cache())
        .output()
        .unwrap_or_else(|e| panic!("cannot run contactbench: {e}"))
}

fn cache() -> std::ffi::OsString {
    std::env::var_os("CONTACTBENCH_CACHE").unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("robots/cache")
            .into()
    })
}

fn temp(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("contactbench-robust-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    dir
}

fn repo(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(path)
        .display()
        .to_string()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn solve_json_output_is_a_warm_start() {
    let dir = temp("warm");
    // 8 contacts (ContactBench's two cubes), on which ncp-admm takes 184 iterations cold.
    let problem = repo("tests/data/contactbench/2cubes_t0_8c.json");
    let first = contactbench(&dir, &["solve", &problem, "--solver", "ncp-admm", "--json"]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    std::fs::write(dir.join("warm.json"), &first.stdout).unwrap_or_else(|e| panic!("{e}"));
    let again = contactbench(
        &dir,
        &[
            "solve",
            &problem,
            "--solver",
            "ncp-admm",
            "--warm-start",
            "warm.json",
            "--json",
        ],
    );
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    let json = |out: &Output| -> serde_json::Value {
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}"))
    };
    let (cold, warm) = (json(&first), json(&again));
    assert_eq!(warm["solvers"][0]["status"], "converged", "{warm}");
    // Started at its own answer, the solver accepts it at once (the cold solve iterated).
    let iterations = |v: &serde_json::Value| v["solvers"][0]["iterations"].as_u64();
    assert_eq!(iterations(&warm), Some(0), "{warm}");
    assert!(iterations(&cold) > Some(10), "{cold}");
    let lambda = |v: &serde_json::Value| -> Vec<f64> {
        serde_json::from_value(v["lambda"].clone()).unwrap_or_else(|e| panic!("{e}"))
    };
    for (a, b) in lambda(&cold).iter().zip(lambda(&warm)) {
        assert_eq!(a.to_bits(), b.to_bits(), "{a} vs {b}");
    }
}

/// `model solo12 --frames FL_FOOT` needs no `--config` when the robot has a reference
/// configuration. Without one, the frames are at the reference configuration
/// the manifest names (solo12: standing), the same numbers as `--config standing`; a URDF
/// path without a manifest entry is at its neutral configuration.
#[test]
fn model_frames_without_a_configuration_use_the_robots_reference_one() {
    let dir = temp("frames");
    let json = |args: &[&str]| -> (serde_json::Value, String) {
        let out = contactbench(&dir, args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}"));
        (value, text(&out.stderr))
    };
    let (value, err) = json(&["model", "solo12", "--frames", "FL_FOOT", "--json"]);
    assert!(err.contains("reference configuration 'standing'"), "{err}");
    let (standing, _) = json(&[
        "model", "solo12", "--frames", "FL_FOOT", "--config", "standing", "--json",
    ]);
    assert!(value["frames"]["FL_FOOT"].is_object(), "{value}");
    assert_eq!(value["frames"], standing["frames"]);
    assert_eq!(value["q"], standing["q"]);
    let pendulum = repo("tests/data/model_pendulum.urdf");
    let (value, err) = json(&["model", &pendulum, "--frames", "tip", "--json"]);
    assert!(err.contains("neutral configuration"), "{err}");
    assert!(value["frames"]["tip"].is_object(), "{value}");
}

#[test]
fn completions_are_printed_for_bash() {
    let dir = temp("completions");
    let out = contactbench(&dir, &["completions", "bash"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let script = text(&out.stdout);
    assert!(script.contains("_contactbench()"), "{script}");
    assert!(script.contains("bench-problems"), "{script}");
}

#[test]
fn dump_input_errors_exit_with_2() {
    let dir = temp("dump");
    let s = repo("scenarios/cube_slide.yaml");
    for args in [
        vec!["dump", s.as_str(), "--step", "0"],
        vec!["dump", s.as_str(), "--step", "99999999"],
        vec!["dump", s.as_str(), "--step", "1", "--solver", "no-such"],
        vec!["dump", "missing.yaml", "--step", "1"],
    ] {
        let out = contactbench(&dir, &args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn a_closed_pipe_is_not_a_panic() {
    let dir = temp("pipe");
    for args in [
        vec!["model", "solo12"],
        vec!["solve", "--all", "tests/data/sliding_problem.json"],
        vec!["completions", "zsh"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_contactbench"))
            .args(&args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("CONTACTBENCH_CACHE", cache())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        // Close the pipe before the command writes anything (`| head -0`): its first
        // write fails with EPIPE.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
        let err = text(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_ne!(out.status.code(), Some(101), "{args:?}: {err}");
    }
    drop(dir);
}

/// `(path, scenario, solver, steps, final q)` of every run of a results directory.
fn runs(dir: &Path) -> BTreeSet<(String, String, String, usize, String)> {
    let manifest = ResultsManifest::read(dir).unwrap_or_else(|e| panic!("{e}"));
    manifest
        .runs
        .into_iter()
        .map(|r| {
            (
                r.path,
                r.summary.scenario,
                r.summary.solver,
                r.summary.steps,
                format!("{:?}", r.summary.final_q),
            )
        })
        .collect()
}

#[test]
fn batch_shards_together_are_the_whole_batch() {
    let dir = temp("shard");
    let common = [
        repo("scenarios/cube_slide.yaml"),
        repo("scenarios/cube_stack.yaml"),
        "--set".into(),
        "simulation.duration=0.02".into(),
        "--json".into(),
    ];
    let run = |extra: &[&str]| {
        let mut args: Vec<&str> = vec!["batch"];
        args.extend(common.iter().map(String::as_str));
        args.extend(extra);
        let out = contactbench(&dir, &args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
    };
    run(&["--out", "full"]);
    let full = runs(&dir.join("full"));
    assert!(full.len() >= 4, "{full:?}");
    let mut union = BTreeSet::new();
    for k in 1..=3 {
        let out = format!("shard{k}");
        run(&["--out", &out, "--shard", &format!("{k}/3")]);
        // A shard writes its own results directory inside `--out`.
        let shard = runs(&dir.join(&out).join(shard_dir_name(k, 3)));
        assert!(!shard.is_empty() && shard.len() < full.len(), "{shard:?}");
        assert!(union.is_disjoint(&shard), "shards overlap: {shard:?}");
        union.extend(shard);
    }
    assert_eq!(union, full);
    let bad = contactbench(&dir, &["batch", &common[0], "--out", "x", "--shard", "4/3"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad.stderr));
}
