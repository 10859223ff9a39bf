//! The command line on bad input: a clear message with the location, a non-zero exit, and
//! nothing written in `--out`; and a small run end to end.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn contactbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_contactbench"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs")
}

fn temp(name: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("contactbench-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Writes a variant of the shipped cube scenario with `from` replaced by `to`.
fn variant(dir: &Path, from: &str, to: &str) -> PathBuf {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/cube_slide.yaml"),
    )
    .expect("shipped scenario");
    assert!(text.contains(from), "{from}");
    let path = dir.join("bad.yaml");
    std::fs::write(&path, text.replacen(from, to, 1)).expect("write");
    path
}

fn assert_refused(args: &[&str], out: &Path, expected: &[&str]) {
    let output = contactbench(args);
    assert!(!output.status.success(), "accepted: {args:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    for e in expected {
        assert!(stderr.contains(e), "missing '{e}' in: {stderr}");
    }
    assert!(!out.exists(), "{} was written", out.display());
}

#[test]
fn bad_scenarios_are_refused_with_their_location() {
    let dir = temp("bad");
    let out = dir.join("out");
    let out_s = out.to_str().expect("utf8");
    let cases: [(&str, &str, &[&str]); 5] = [
        (
            "solver: ncp-pgs",
            "solver: ncp-magic",
            &["bad.yaml:", "solvers[1]", "unknown solver 'ncp-magic'"],
        ),
        (
            "dt: 1.0e-3",
            "dt: -1.0e-3",
            &["bad.yaml:20:", "simulation.dt"],
        ),
        (
            "  duration: 0.5\n",
            "",
            &["bad.yaml:", "missing field `duration`"],
        ),
        ("friction: 0.4", "friction: [0.4", &["bad.yaml:"]),
        (
            "  bodies:\n",
            "  robot: robot_x\n  bodies:\n",
            &["bad.yaml:", "world.robot", "unknown robot 'robot_x'"],
        ),
    ];
    for (from, to, expected) in cases {
        let file = variant(&dir, from, to);
        assert_refused(
            &["run", file.to_str().expect("utf8"), "--out", out_s],
            &out,
            expected,
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unknown_solver_flag_and_frame_are_refused() {
    let dir = temp("flags");
    let out = dir.join("out");
    let out_s = out.to_str().expect("utf8");
    assert_refused(
        &[
            "run",
            "scenarios/cube_slide.yaml",
            "--solver",
            "lcp-magic",
            "--out",
            out_s,
        ],
        &out,
        &["unknown solver 'lcp-magic'"],
    );
    let text = std::fs::read_to_string("scenarios/solo_standing.yaml")
        .or_else(|_| {
            std::fs::read_to_string(
                Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/solo_standing.yaml"),
            )
        })
        .expect("shipped scenario");
    let bad = dir.join("solo.yaml");
    std::fs::write(&bad, text.replacen("frame: HR_FOOT", "frame: HR_HAND", 1)).expect("write");
    assert_refused(
        &["run", bad.to_str().expect("utf8"), "--out", out_s],
        &out,
        &["solo.yaml:", "world.contact_spheres[3].frame", "HR_HAND"],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_prints_a_summary_and_writes_the_results() {
    let dir = temp("run");
    let out = dir.join("out");
    let output = contactbench(&[
        "run",
        "scenarios/cube_slide.yaml",
        "--solver",
        "ncp-admm",
        "--set",
        "simulation.duration=0.05",
        "--out",
        out.to_str().expect("utf8"),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("| cube_slide | ncp-admm:max_iter=500 | completed | 50 |"),
        "{stdout}"
    );
    assert!(out.join("contactbench.json").is_file());
    assert!(out.join("cube_slide/ncp-admm/steps.csv").is_file());
    let dump = dir.join("problem.json");
    let output = contactbench(&[
        "dump",
        "scenarios/cube_slide.yaml",
        "--step",
        "3",
        "--out",
        dump.to_str().expect("utf8"),
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let problem = contactbench::problem::io::read_problem(&dump).expect("a problem file");
    assert_eq!(problem.problem.num_contacts(), 4);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_step_over_pile_sizes_prints_the_growth_exponent_of_its_points() {
    let output = contactbench(&[
        "bench-step",
        "scenarios/pile_columns.yaml",
        "--steps",
        "2",
        "--repeats",
        "1",
        "--settle",
        "1",
        "--metrics",
        "none",
        "--json",
        "--sweep",
        "world.generate.columns={nx: 1, ny: 1, height: 1}",
        "--sweep",
        "world.generate.columns={nx: 2, ny: 2, height: 2}",
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}"));
    let points: Vec<(f64, f64)> = json["points"]
        .as_array()
        .unwrap_or_else(|| panic!("points in {stdout}"))
        .iter()
        .map(|p| {
            (
                p["contacts"].as_f64().unwrap_or(0.0),
                p["step_us"].as_f64().unwrap_or(0.0),
            )
        })
        .collect();
    // A cube rests on its 4 bottom corners; 8 cubes in 2 layers touch 32 times.
    assert_eq!(points.iter().map(|p| p.0).collect::<Vec<_>>(), [4.0, 32.0]);
    let slope = (points[1].1 / points[0].1).ln() / (points[1].0 / points[0].0).ln();
    let fitted = json["growth_exponent"].as_f64().unwrap_or(f64::NAN);
    assert!(
        (fitted - slope).abs() <= 1e-12 * slope.abs().max(1.0),
        "{fitted} vs {slope}"
    );
}
