//! `report`'s memory does not grow with the number of steps: it reads each run in one
//! streamed pass and keeps bounded summaries of its curves. Kept whole, each step's
//! columns took about 400 bytes.
//!
//! Measured as the peak of live heap bytes (`heap`), in process, through the same
//! library call as the CLI.

use std::path::{Path, PathBuf};

use contactbench::output::Replace;
use contactbench::report::make_report_with;
use contactbench::simulation::batch::{jobs_overriding, run_batch, Runner};
use contactbench::simulation::runner::simulate_into;
use contactbench::simulation::Scenario;

use crate::allocator as heap;

fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "contactbench-report-memory-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Peak live heap bytes of the report of an ncp-admm `ball_drop` run of `steps` steps.
fn report_peak_bytes(steps: u32) -> usize {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/ball_drop.yaml");
    let duration = format!("simulation.duration={}", f64::from(steps) * 1e-3);
    let scenario = Scenario::load(&path, &[duration]).unwrap_or_else(|e| panic!("{e}"));
    let jobs =
        jobs_overriding(vec![scenario], &["ncp-admm".into()]).unwrap_or_else(|e| panic!("{e}"));
    let runner: &Runner = &|scenario, solver, recorder| {
        simulate_into(scenario, solver, recorder).map_err(|e| e.to_string())
    };
    let dir = out_dir(&steps.to_string());
    let manifest =
        run_batch(&jobs, &dir, runner, false, Replace::Never).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(manifest.runs[0].summary.steps, steps as usize);
    let (report, peak) = heap::peak_during(|| make_report_with(&dir, Replace::Never));
    assert!(report.is_ok_and(|p| p.is_file()));
    let _ = std::fs::remove_dir_all(&dir);
    peak
}

#[test]
fn report_memory_does_not_grow_with_the_number_of_steps() {
    let _alone = crate::allocator::alone();
    let short = report_peak_bytes(40_000);
    let long = report_peak_bytes(160_000);
    let extra = long.saturating_sub(short);
    println!("peak live heap: {short} B for 40,000 steps, {long} B for 160,000 (+{extra} B)");
    assert!(
        extra < 1024 * 1024,
        "peak live heap {short} B for 40,000 steps, {long} B for 160,000: +{extra} B"
    );
}
