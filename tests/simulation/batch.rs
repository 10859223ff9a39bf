//! Batches: runs in parallel, failures (errors and panics) recorded while the others go on,
//! the results directory published whole, the baseline gate, and the report's files.
//! A stand-in runner produces a free-fall record so that these tests check the plumbing,
//! not the physics.

use std::path::{Path, PathBuf};

use contactbench::metrics::energy::MechanicalEnergy;
use contactbench::report;
use contactbench::simulation::batch::{self, Baseline, BatchSettings, Tolerances};
use contactbench::simulation::output::Replace;
use contactbench::simulation::output::ResultsManifest;
use contactbench::simulation::recorder::Recorder;
use contactbench::simulation::recorder::{ContactRecord, RunRecord, StepRecord};
use contactbench::simulation::{Scenario, SolverFactory};
use contactbench::solvers::SolveStatus;
use nalgebra::DVector;

fn scenario() -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/cube_slide.yaml");
    Scenario::load(&path, &[]).expect("shipped scenario")
}

/// A body falling from 1 m for 0.1 s, with one fake contact per step.
fn free_fall(scenario: &Scenario, spec: &dyn SolverFactory) -> Result<RunRecord, String> {
    match spec.name().as_str() {
        "lcp-pgs" => return Err("synthetic setup failure".into()),
        "raisim" => panic!("synthetic panic"),
        _ => {}
    }
    let dt = 0.01;
    let steps = (0..=10)
        .map(|k| {
            let t = k as f64 * dt;
            let z = 1.0 - 0.5 * 9.81 * t * t;
            let vz = -9.81 * t;
            StepRecord {
                step: k,
                time: t,
                q: DVector::from_vec(vec![0.0, 0.0, z]),
                v: DVector::from_vec(vec![0.0, 0.0, vz]),
                base_position: [0.0, 0.0, z],
                contacts: vec![ContactRecord {
                    pair: "ball|ground".into(),
                    point: [0.0, 0.0, 0.0],
                    signed_distance: z,
                    lambda: [0.0, 0.0, 0.001 * k as f64],
                    velocity: [0.0, 0.0, vz],
                }],
                metrics: Default::default(),
                energy: MechanicalEnergy {
                    kinetic: 0.5 * vz * vz,
                    potential: 9.81 * z,
                },
                iterations: k,
                status: "converged".into(),
                solver_status: Some(SolveStatus::Converged),
                converged: true,
                collision_failures: 0,
                timings: Default::default(),
                task: None,
            }
        })
        .collect();
    Ok(RunRecord {
        scenario: scenario.name.clone(),
        solver: spec.name(),
        dt,
        q_names: vec!["x".into(), "y".into(), "z".into()],
        v_names: vec!["vx".into(), "vy".into(), "vz".into()],
        task: false,
        steps,
        failure: None,
        analytical_energy: Some(vec![9.81; 11]),
        warnings: Vec::new(),
        origin: None,
    })
}

/// [`free_fall`] as a batch runner.
fn free_fall_runner(
    scenario: &Scenario,
    spec: &dyn SolverFactory,
    recorder: &mut dyn Recorder,
) -> Result<Option<String>, String> {
    free_fall(scenario, spec)?
        .replay(recorder)
        .map_err(|e| e.to_string())
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("contactbench-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn failures_are_recorded_and_the_others_go_on() {
    let jobs = batch::jobs(vec![scenario()], None);
    assert_eq!(jobs.len(), 6);
    let out = temp_dir("batch");
    let manifest =
        batch::run_batch(&jobs, &out, &free_fall_runner, false, Replace::Never).expect("batch");
    let outcome = |id: &str| {
        manifest
            .runs
            .iter()
            .find(|r| r.summary.solver.starts_with(id))
            .map(|r| (r.summary.outcome.clone(), r.summary.failure.clone()))
            .expect("run listed")
    };
    assert_eq!(outcome("ncp-admm").0, "completed");
    assert_eq!(outcome("lcp-pgs").0, "failed");
    assert!(outcome("raisim")
        .1
        .expect("reason")
        .contains("synthetic panic"));
    assert_eq!(
        manifest
            .runs
            .iter()
            .filter(|r| r.summary.outcome == "completed")
            .count(),
        4
    );
    let reread = ResultsManifest::read(&out).expect("manifest on disk");
    assert_eq!(reread, manifest);
    assert!(out.join("cube_slide/ncp-admm/steps.csv").is_file());
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn baseline_gate_flags_moved_and_failed_runs() {
    let jobs = batch::jobs(vec![scenario()], None);
    let out = temp_dir("baseline");
    let manifest =
        batch::run_batch(&jobs, &out, &free_fall_runner, false, Replace::Never).expect("batch");
    let summaries: Vec<_> = manifest.runs.iter().map(|r| r.summary.clone()).collect();
    let tol = Tolerances::default();
    assert!(batch::compare(&summaries, &summaries, &tol).is_empty());

    let mut moved = summaries.clone();
    moved[0].final_base_position[0] += 10.0 * tol.position;
    let regressions = batch::compare(&moved, &summaries, &tol);
    assert_eq!(regressions.len(), 1);
    assert!(regressions[0].what.contains("final base position"));

    let mut failed = summaries.clone();
    failed[1].outcome = "failed".into();
    assert_eq!(batch::compare(&failed, &summaries, &tol).len(), 1);
    assert_eq!(batch::compare(&summaries[1..], &summaries, &tol).len(), 1);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn baseline_gate_refuses_runs_of_another_length_and_other_settings() {
    let jobs = batch::jobs(vec![scenario()], None);
    let out = temp_dir("baseline-length");
    let manifest =
        batch::run_batch(&jobs, &out, &free_fall_runner, false, Replace::Never).expect("batch");
    let summaries: Vec<_> = manifest.runs.iter().map(|r| r.summary.clone()).collect();
    let mut longer = summaries.clone();
    longer[0].steps *= 2;
    let regressions = batch::compare(&longer, &summaries, &Tolerances::default());
    assert_eq!(regressions.len(), 1);
    assert!(
        regressions[0].what.starts_with("not comparable"),
        "{regressions:?}"
    );

    let made_with = BatchSettings {
        overrides: vec!["simulation.duration=0.5".into()],
        solvers: vec!["ncp-admm".into()],
    };
    let stored = Baseline {
        settings: made_with.clone(),
        runs: summaries[..1].to_vec(),
    };
    assert_eq!(stored.settings_mismatch(&made_with), None);
    let why = stored
        .settings_mismatch(&BatchSettings::default())
        .expect("a mismatch");
    assert!(
        why.contains("running the batch with --set simulation.duration=0.5 --solver ncp-admm"),
        "{why}"
    );
    let unlisted = stored.without_entry(&summaries);
    assert_eq!(unlisted.len(), summaries.len() - 1);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn report_writes_png_svg_and_markdown() {
    let jobs = batch::jobs(vec![scenario()], None);
    let out = temp_dir("report");
    batch::run_batch(&jobs, &out, &free_fall_runner, false, Replace::Never).expect("batch");
    let md = report::make_report(&out).expect("report");
    let text = std::fs::read_to_string(&md).expect("report.md");
    for stem in ["energy", "trajectory"] {
        for ext in ["png", "svg", "pdf"] {
            let file = out.join(format!("report/cube_slide_{stem}.{ext}"));
            assert!(file.metadata().expect(ext).len() > 1000, "{stem}.{ext}");
        }
        assert!(text.contains(&format!("cube_slide_{stem}.png")));
    }
    // A free fall has no contact, hence no solve: no residual, force or timing figure.
    for stem in ["residuals", "forces", "timings"] {
        assert!(!out.join(format!("report/cube_slide_{stem}.png")).exists());
    }
    assert!(text.contains("failed: synthetic setup failure"));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn existing_foreign_directory_is_not_replaced() {
    let out = temp_dir("foreign");
    std::fs::create_dir_all(&out).expect("dir");
    std::fs::write(out.join("notes.txt"), "mine").expect("file");
    let jobs = batch::jobs(vec![scenario()], None);
    assert!(batch::run_batch(&jobs, &out, &free_fall_runner, false, Replace::Never).is_err());
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).expect("kept"),
        "mine"
    );
    let name = out
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    let siblings: Vec<_> = std::fs::read_dir(out.parent().expect("parent"))
        .expect("tmp")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains(&name) && e.path() != out)
        .collect();
    assert!(siblings.is_empty(), "staging left behind");
    let inside: Vec<_> = std::fs::read_dir(&out)
        .expect("out")
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(".contactbench-")
        })
        .collect();
    assert!(inside.is_empty(), "work files left behind: {inside:?}");
    let _ = std::fs::remove_dir_all(&out);
}
