//! `contactbench model` and `contactbench robots list` through the binary: the JSON output
//! uses the golden files' field names and matches Pinocchio.

use crate::common::dynamics as dynamics_support;

use std::process::Command;

use dynamics_support::*;
use serde_json::Value;

fn contactbench(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_contactbench"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn model_json_matches_the_golden_file() {
    let gold = golden("pinocchio_solo12.json");
    let case = &gold["cases"][2];
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("contactbench-model-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut paths = Vec::new();
    for key in ["q", "v", "tau"] {
        let path = dir.join(format!("{key}.json"));
        std::fs::write(&path, case[key].to_string()).unwrap();
        paths.push(path.display().to_string());
    }
    let (ok, stdout, stderr) = contactbench(&[
        "model",
        "solo12",
        "--q",
        &paths[0],
        "--v",
        &paths[1],
        "--tau",
        &paths[2],
        "--frames",
        "FL_FOOT,HR_FOOT",
        "--json",
    ]);
    assert!(ok, "{stderr}");
    let out: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(out["nq"], 19);
    let key = "mass_matrix";
    assert_close(key, &matrix(&out[key]), &matrix(&case[key]), 1e-9);
    for key in [
        "nonlinear_effects",
        "generalized_gravity",
        "aba_acceleration",
    ] {
        assert_close_vec(key, &vector(&out[key]), &vector(&case[key]), 1e-9);
    }
    for key in ["kinetic_energy", "potential_energy"] {
        assert_close_scalar(
            key,
            out[key].as_f64().unwrap(),
            case[key].as_f64().unwrap(),
            1e-9,
        );
    }
    for frame in ["FL_FOOT", "HR_FOOT"] {
        let (a, b) = (&out["frames"][frame], &case["frames"][frame]);
        assert_close_vec(
            "position",
            &vector(&a["position"]),
            &vector(&b["position"]),
            1e-9,
        );
        let key = "jacobian_linear_world_aligned";
        assert_close(key, &matrix(&a[key]), &matrix(&b[key]), 1e-9);
    }
}

#[test]
fn model_text_and_errors() {
    let (ok, stdout, _) = contactbench(&["model", "talos"]);
    assert!(ok);
    assert!(
        stdout.contains("nq 39  nv 38  total mass 90.272192 kg"),
        "{stdout}"
    );
    assert!(stdout.contains("left_sole_link"));
    let (ok, _, stderr) = contactbench(&[
        "model", "solo12", "--config", "standing", "--frames", "FL_TOE",
    ]);
    assert!(!ok);
    assert!(stderr.contains("unknown frame 'FL_TOE'"), "{stderr}");
    let (ok, _, stderr) = contactbench(&["model", "solo12", "--config", "lying"]);
    assert!(!ok);
    assert!(stderr.contains("standing"), "{stderr}");
    let (ok, stdout, _) = contactbench(&["robots", "list"]);
    assert!(ok);
    assert!(
        stdout.contains("solo12") && stdout.contains("allegro"),
        "{stdout}"
    );
}
