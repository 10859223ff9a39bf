//! `contactbench solve --derivatives`: `∂λ/∂g` (and `∂λ/∂G` on request) in the text and
//! `--json` outputs, checked against central differences of the command's own answers,
//! and the refusals (no derivative of an answer that did not converge, none with --all).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

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

/// One sliding contact: `G` couples the normal and the first tangent.
fn sliding_problem(g: &[f64]) -> Value {
    json!({
        "G": [[1.0, 0.0, 0.5], [0.0, 1.0, 0.0], [0.5, 0.0, 1.0]],
        "g": g,
        "mu": [0.5],
    })
}

fn write(dir: &Path, name: &str, value: &Value) -> String {
    let path = dir.join(name);
    std::fs::write(&path, value.to_string()).expect("write problem");
    path.display().to_string()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "cb-solve-derivatives-{name}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

const SOLVER: [&str; 4] = ["--solver", "ncp-admm", "--eps-rel", "1e-12"];

fn solve_json(file: &str, extra: &[&str]) -> Value {
    let mut args = vec!["solve", file, "--json"];
    args.extend_from_slice(&SOLVER);
    args.extend_from_slice(extra);
    let (code, out, err) = contactbench(&args);
    assert_eq!(code, 0, "{err}\n{out}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn numbers(value: &Value) -> Vec<f64> {
    value
        .as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}

#[test]
fn the_jacobian_with_respect_to_g_matches_central_differences_of_the_command() {
    let dir = temp_dir("fd");
    let g = [-0.625, -1.0, -1.0];
    let file = write(&dir, "p.json", &sliding_problem(&g));
    let value = solve_json(&file, &["--derivatives"]);
    let d = &value["derivatives"];
    assert_eq!(d["modes"][0]["mode"], "slide", "{d}");
    assert!(d["modes"][0]["boundary_with"].is_null());
    let jacobian: Vec<Vec<f64>> = d["dlambda_dg"]
        .as_array()
        .expect("rows")
        .iter()
        .map(numbers)
        .collect();
    assert_eq!(jacobian.len(), 3);
    let h = 1e-6;
    let mut worst: f64 = 0.0;
    let mut largest: f64 = 0.0;
    for k in 0..3 {
        let mut ends = Vec::new();
        for sign in [1.0, -1.0] {
            let mut gk = g;
            gk[k] += sign * h;
            let name = format!("p{k}{}.json", if sign > 0.0 { "+" } else { "-" });
            let perturbed = write(&dir, &name, &sliding_problem(&gk));
            ends.push(numbers(&solve_json(&perturbed, &[])["lambda"]));
        }
        for (row, jacobian_row) in jacobian.iter().enumerate() {
            let reference = (ends[0][row] - ends[1][row]) / (2.0 * h);
            worst = worst.max((jacobian_row[k] - reference).abs());
            largest = largest.max(reference.abs());
        }
    }
    // Measured 1.6e-10 relative: the answers at eps_rel 1e-12 over 2h = 2e-6, and the
    // sliding law's curvature times h.
    println!("∂λ/∂g: {jacobian:?}, worst error {worst:e} of {largest:e}");
    assert!(largest > 0.1, "a nonzero Jacobian: {jacobian:?}");
    assert!(
        worst <= 1e-7 * largest,
        "∂λ/∂g off by {worst:e} of {largest:e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_jacobian_with_respect_to_g_entries_is_given_on_request() {
    let dir = temp_dir("delassus");
    let file = write(&dir, "p.json", &sliding_problem(&[-0.625, -1.0, -1.0]));
    let value = solve_json(&file, &["--derivatives", "--derivatives-delassus"]);
    let d = &value["derivatives"];
    let lambda = numbers(&value["lambda"]);
    let by_g: Vec<Vec<f64>> = d["dlambda_dg"]
        .as_array()
        .expect("rows")
        .iter()
        .map(numbers)
        .collect();
    let by_delassus: Vec<Vec<f64>> = d["dlambda_d_delassus"]
        .as_array()
        .expect("rows")
        .iter()
        .map(numbers)
        .collect();
    assert_eq!((by_delassus.len(), by_delassus[0].len()), (3, 9));
    // dc = dG λ + dg: the column of G_jk is λ_k times the column of g_j (NCP).
    for (row, row_g) in by_delassus.iter().zip(&by_g) {
        for k in 0..3 {
            for j in 0..3 {
                let expected = row_g[j] * lambda[k];
                assert!((row[j + 3 * k] - expected).abs() <= 1e-12 * (1.0 + expected.abs()));
            }
        }
    }
    let (code, out, err) = contactbench(&[
        "solve",
        &file,
        "--derivatives-delassus",
        "--solver",
        "ncp-admm",
    ]);
    assert_eq!(
        code, 2,
        "--derivatives-delassus needs --derivatives: {out}{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_text_output_names_each_contact_mode_and_the_jacobian() {
    let dir = temp_dir("text");
    let file = write(&dir, "p.json", &sliding_problem(&[-0.625, -1.0, -1.0]));
    let mut args = vec!["solve", file.as_str(), "--derivatives"];
    args.extend_from_slice(&SOLVER);
    let (code, out, err) = contactbench(&args);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("contact 0: slide"), "{out}");
    assert!(out.contains("dlambda/dg"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_answer_that_did_not_converge_has_no_derivative_and_says_why() {
    let dir = temp_dir("unconverged");
    let file = write(&dir, "p.json", &sliding_problem(&[-0.625, -1.0, -1.0]));
    let (code, out, err) = contactbench(&[
        "solve",
        &file,
        "--json",
        "--solver",
        "ncp-pgs",
        "--eps-rel",
        "1e-14",
        "--max-iter",
        "1",
        "--derivatives",
    ]);
    assert_eq!(code, 1, "{err}");
    let value: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let error = value["derivatives"]["error"].as_str().expect("an error");
    assert!(error.contains("did not converge"), "{error}");
    assert!(value["derivatives"].get("dlambda_dg").is_none());
    let (code, _, err) = contactbench(&["solve", &file, "--all", "--derivatives"]);
    assert_eq!(code, 2, "--derivatives with --all is refused: {err}");
    let _ = std::fs::remove_dir_all(&dir);
}
