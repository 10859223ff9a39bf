//! `contactbench solve` end to end: text, `--all`, `--json` and errors.

use std::path::PathBuf;
use std::process::Command;

fn contactbench(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_contactbench"))
        .args(args)
        .output();
    let Ok(out) = out else {
        panic!("cannot run contactbench");
    };
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn data(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn one_solver_prints_the_answer_and_every_metric() {
    let (code, out, err) = contactbench(&[
        "solve",
        &data("sliding_problem.json"),
        "--solver",
        "ncp-pgs",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("converged"), "{out}");
    for name in [
        "primal_feasibility",
        "dual_feasibility",
        "complementarity",
        "ncp_criterion",
        "ccp_residual",
        "lcp_residual",
        "signorini_violation",
        "mdp_violation",
        "internal_forces",
    ] {
        assert!(out.contains(name), "{name} missing from:\n{out}");
    }
}

#[test]
fn the_file_solver_is_the_default_and_json_uses_design_names() {
    // The file names raisim with eps_rel = 1e-9.
    let (code, out, err) = contactbench(&["solve", &data("sliding_problem.json"), "--json"]);
    assert_eq!(code, 0, "{err}");
    let value: serde_json::Value = match serde_json::from_str(&out) {
        Ok(v) => v,
        Err(e) => panic!("{e}: {out}"),
    };
    let run = &value["solvers"][0];
    assert_eq!(run["solver"], "raisim");
    assert_eq!(run["status"], "converged");
    assert!(run["iterations"].as_u64().is_some());
    assert!(run["solve_time_s"].as_f64().is_some());
    assert_eq!(run["criterion"], "relative");
    assert!(run["criteria"]["relative"]
        .as_f64()
        .is_some_and(|r| r <= 1e-9));
    assert_eq!(run["lambda"].as_array().map(Vec::len), Some(3));
    assert_eq!(run["c"].as_array().map(Vec::len), Some(3));
    let mdp = run["metrics"]["mdp_violation"].as_f64();
    // RaiSim's eq. 21 answer on this problem: ‖(0, 0.5) − 0.5 d/‖d‖‖, d = (0.125, 0.5).
    let d = (0.125f64.powi(2) + 0.25).sqrt();
    let expected = ((0.5 * 0.125 / d).powi(2) + (0.5 - 0.5 * 0.5 / d).powi(2)).sqrt();
    assert!(
        mdp.is_some_and(|m| (m - expected).abs() < 1e-6),
        "{mdp:?} vs {expected}"
    );
    for name in [
        "ncp_criterion",
        "ccp_residual",
        "lcp_residual",
        "signorini_violation",
    ] {
        assert!(!run["metrics"][name].is_null(), "{name}");
    }
}

#[test]
fn all_prints_one_row_per_builtin_solver() {
    let (code, out, err) = contactbench(&[
        "solve",
        &data("sliding_problem.json"),
        "--all",
        "--eps-rel",
        "1e-8",
    ]);
    assert_eq!(code, 0, "{err}");
    for id in contactbench::solvers::SolverId::ALL {
        assert!(
            out.lines().any(|l| l.starts_with(id.as_str())),
            "{id} missing:\n{out}"
        );
    }
}

#[test]
fn a_non_converged_solve_exits_with_1() {
    // A result, not an input error (2 is for bad input, as in every command).
    let (code, out, _) = contactbench(&[
        "solve",
        &data("sliding_problem.json"),
        "--solver",
        "ccp-pgs",
        "--max-iter",
        "1",
        "--eps-rel",
        "1e-12",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("max iterations"), "{out}");
}

#[test]
fn a_tolerance_for_the_criterion_not_in_use_is_an_error() {
    // --eps-abs with the default stop (relative) would be silently ignored.
    let (code, _, err) = contactbench(&[
        "solve",
        &data("sliding_problem.json"),
        "--solver",
        "ncp-pgs",
        "--eps-abs",
        "1e-8",
    ]);
    assert_ne!(code, 0);
    assert!(
        err.contains("eps_abs = 1e-8") && err.contains("stop: relative"),
        "{err}"
    );
    // With --stop absolute it is the tolerance in use, and the report names it.
    let (code, out, err) = contactbench(&[
        "solve",
        &data("sliding_problem.json"),
        "--solver",
        "ncp-pgs",
        "--stop",
        "absolute",
        "--eps-abs",
        "1e-8",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let value: serde_json::Value = match serde_json::from_str(&out) {
        Ok(v) => v,
        Err(e) => panic!("{e}: {out}"),
    };
    let run = &value["solvers"][0];
    assert_eq!(run["criterion"], "absolute");
    assert_eq!(run["residual"], run["criteria"]["absolute"]);
    assert!(run["residual"].as_f64().is_some_and(|r| r <= 1e-8), "{run}");
    // The spec of the file asks for eps_rel: --stop absolute alone would leave it unused.
    let (code, _, err) =
        contactbench(&["solve", &data("sliding_problem.json"), "--stop", "absolute"]);
    assert_ne!(code, 0);
    assert!(err.contains("eps_rel unused"), "{err}");
}

#[test]
fn errors_name_the_file() {
    let (code, _, err) = contactbench(&["solve", &data("bad_syntax.json"), "--all"]);
    assert_ne!(code, 0);
    assert!(err.contains("bad_syntax.json: line 4"), "{err}");
    let (code, _, err) =
        contactbench(&["solve", &data("sliding_problem.json"), "--solver", "nope"]);
    assert_ne!(code, 0);
    assert!(err.contains("unknown solver 'nope'"), "{err}");
}

#[test]
fn what_validation_did_is_said() {
    // The FCLIB matrix reduced by a conjugate gradient is 1.8e-3 asymmetric: symmetrized,
    // and the command says so (stderr, and in --json).
    let (code, _, err) = contactbench(&[
        "solve",
        &data("fclib/lmgc46_cg.json"),
        "--solver",
        "ccp-ipm",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("G symmetrized"), "{err}");
    let (_, out, _) = contactbench(&[
        "solve",
        &data("fclib/lmgc46_cg.json"),
        "--solver",
        "ccp-ipm",
        "--json",
    ]);
    let value: serde_json::Value = match serde_json::from_str(&out) {
        Ok(v) => v,
        Err(e) => panic!("{e}: {out}"),
    };
    assert_eq!(value["validation_notes"][0]["note"], "symmetrized");
}
