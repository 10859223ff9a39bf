//! A run's memory does not grow with its number of steps: `run --out`
//! streams every step to its CSV files. Kept in memory, each step would take about
//! 1.7 kB.
//!
//! Measured as the peak of live heap bytes (`allocator`), in process, through the same
//! streaming writer as the CLI (the CLI's peak resident memory moves by megabytes with the
//! machine's load).

use std::path::{Path, PathBuf};

use contactbench::simulation::recorder::RunWriter;
use contactbench::simulation::runner::simulate_into;
use contactbench::simulation::Scenario;

use crate::allocator as heap;

fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "contactbench-run-memory-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Peak live heap bytes of an ncp-admm `ball_drop` run of `steps` steps written to CSV.
fn run_peak_bytes(steps: u32) -> usize {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/ball_drop.yaml");
    let duration = format!("simulation.duration={}", f64::from(steps) * 1e-3);
    let scenario = Scenario::load(&path, &[duration]).expect("shipped scenario");
    let solver = scenario
        .solver_override("ncp-admm")
        .expect("built-in solver");
    let dir = out_dir(&steps.to_string());
    let (summary, peak) = heap::peak_during(|| {
        let mut writer = RunWriter::create(&dir).expect("output directory");
        let failure = simulate_into(&scenario, &solver, &mut writer).expect("valid scenario");
        assert_eq!(failure, None);
        writer
            .finish(&Default::default(), None)
            .expect("summary written")
    });
    assert_eq!(summary.steps, steps as usize);
    let csv = std::fs::read_to_string(dir.join("steps.csv")).expect("steps.csv");
    assert_eq!(
        csv.lines().count(),
        steps as usize + 2,
        "header and every step"
    );
    let _ = std::fs::remove_dir_all(&dir);
    peak
}

#[test]
fn run_memory_does_not_grow_with_the_number_of_steps() {
    let _alone = crate::allocator::alone();
    let short = run_peak_bytes(2_000);
    let long = run_peak_bytes(40_000);
    let extra = long.saturating_sub(short);
    // What grows: the summary's wall-time histograms (buckets 0.1 % apart) meet more
    // distinct times in a longer run; measured +27.5 kB. Kept in memory, 38,000 more
    // steps would be about 65 MB.
    println!("peak live heap: {short} B for 2,000 steps, {long} B for 40,000 (+{extra} B)");
    assert!(
        extra < 256 * 1024,
        "peak live heap {short} B for 2,000 steps, {long} B for 40,000: +{extra} B"
    );
}
