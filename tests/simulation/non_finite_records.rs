//! A NaN in a run's record never reads as converged or as 0: the summary keeps it as NaN
//! and counts the step unconverged, `steps.csv` writes it as `NaN` (and a step without
//! contacts as an empty cell), and reading the file back refuses it.

use std::path::{Path, PathBuf};

use contactbench::metrics::energy::MechanicalEnergy;
use contactbench::simulation::recorder::{read_columns, RecordError, RunRecord, StepRecord};
use contactbench::solvers::SolveStatus;
use nalgebra::DVector;

fn temp(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "contactbench-non-finite-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

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
        task: None,
    }
}

#[test]
fn a_nan_residual_is_not_summarized_as_zero_nor_written_as_zero() {
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
