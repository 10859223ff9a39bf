//! The per-step metrics setting (`simulation.step_metrics`): a metric that was not
//! computed is absent from the record (`None`), an empty cell in `steps.csv` and `null` in
//! `summary.json`, never 0.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use contactbench::simulation::recorder::RunRecord;
use contactbench::simulation::runner::simulate;
use contactbench::simulation::{Scenario, StepMetrics};
use contactbench::solvers::SolverSpec;

const INTERNAL: [&str; 3] = [
    "internal_forces",
    "internal_forces_required",
    "internal_forces_spurious",
];

fn scenario(step_metrics: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/cube_slide.yaml");
    let overrides = vec![
        "simulation.duration=0.02".to_string(),
        format!("simulation.step_metrics={step_metrics}"),
    ];
    Scenario::load(&path, &overrides).unwrap_or_else(|e| panic!("{e}"))
}

fn run(step_metrics: &str) -> RunRecord {
    let spec: SolverSpec = "ncp-admm".parse().unwrap_or_else(|e| panic!("{e}"));
    let record = simulate(&scenario(step_metrics), &spec).unwrap_or_else(|e| panic!("{e}"));
    assert!(record.failure.is_none(), "{:?}", record.failure);
    assert!(record.steps.iter().skip(1).all(|s| !s.contacts.is_empty()));
    record
}

/// `steps.csv` written by the record, as text cells by column name.
fn written_columns(record: &RunRecord, name: &str) -> BTreeMap<String, Vec<String>> {
    let dir: PathBuf = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "contactbench-step-metrics-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = record.write(&dir) {
        panic!("{e}");
    }
    let mut reader =
        csv::Reader::from_path(dir.join("steps.csv")).unwrap_or_else(|e| panic!("{e}"));
    let headers = reader.headers().unwrap_or_else(|e| panic!("{e}")).clone();
    let mut columns: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for row in reader.records() {
        let row = row.unwrap_or_else(|e| panic!("{e}"));
        for (h, cell) in headers.iter().zip(row.iter()) {
            columns
                .entry(h.to_string())
                .or_default()
                .push(cell.to_string());
        }
    }
    let summary =
        std::fs::read_to_string(dir.join("summary.json")).unwrap_or_else(|e| panic!("{e}"));
    columns.insert("summary".into(), vec![summary]);
    let _ = std::fs::remove_dir_all(&dir);
    columns
}

fn summary_field(columns: &BTreeMap<String, Vec<String>>, field: &str) -> serde_json::Value {
    let text = &columns["summary"][0];
    let json: serde_json::Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}"));
    json[field].clone()
}

#[test]
fn without_metrics_the_record_has_none_and_the_files_empty_cells() {
    let record = run("none");
    assert!(record.steps.iter().all(|s| s.metrics.is_none()));
    let columns = written_columns(&record, "none");
    for name in ["ncp_criterion", "relative_criterion", "primal_feasibility"]
        .into_iter()
        .chain(INTERNAL)
    {
        assert!(
            columns[name].iter().all(String::is_empty),
            "{name}: {:?}",
            columns[name]
        );
    }
    assert_eq!(record.summary().max_ncp_criterion, None);
    assert!(summary_field(&columns, "max_ncp_criterion").is_null());
    assert!(summary_field(&columns, "max_penetration_velocity").is_null());
}

#[test]
fn without_internal_forces_only_those_are_absent() {
    let record = run("without_internal_forces");
    let columns = written_columns(&record, "no-if");
    for s in record.steps.iter().skip(1) {
        let Some(m) = &s.metrics else {
            panic!("step {}: no metrics", s.step);
        };
        assert_eq!(
            (
                m.internal_forces,
                m.internal_forces_required,
                m.internal_forces_spurious
            ),
            (None, None, None)
        );
    }
    for name in INTERNAL {
        assert!(columns[name].iter().all(String::is_empty), "{name}");
    }
    // Step 0 (the initial state) has no metric; every solved step has its residuals.
    assert!(columns["ncp_criterion"][1..]
        .iter()
        .all(|c| c.parse::<f64>().is_ok()));
    let max = summary_field(&columns, "max_ncp_criterion");
    assert!(max.as_f64().is_some_and(|v| v >= 0.0), "{max}");
}

#[test]
fn all_metrics_fill_every_cell_of_a_solved_step() {
    let record = run("all");
    let columns = written_columns(&record, "all");
    for name in ["ncp_criterion"].into_iter().chain(INTERNAL) {
        assert!(
            columns[name][0].is_empty(),
            "{name}: the initial state solves nothing"
        );
        assert!(
            columns[name][1..]
                .iter()
                .all(|c| c.parse::<f64>().is_ok_and(f64::is_finite)),
            "{name}: {:?}",
            columns[name]
        );
    }
}

#[test]
fn the_setting_is_read_from_the_scenario_and_a_wrong_value_is_refused() {
    assert_eq!(
        scenario("without_internal_forces").simulation.step_metrics,
        StepMetrics::WithoutInternalForces
    );
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/cube_slide.yaml");
    let Err(e) = Scenario::load(&path, &["simulation.step_metrics=some".to_string()]) else {
        panic!("step_metrics=some accepted");
    };
    assert!(e.to_string().contains("step_metrics"), "{e}");
}
