//! Batches of runs (every scenario × solver) in parallel on the cores, with a progress
//! bar; a failing run is recorded as failed and the others go on. A batch can be compared
//! with a stored baseline of summaries as a regression gate.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::Arc;

use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::output::{solver_dirs, write_run, ResultsManifest, RunEntry, Staging};
use super::recorder::{RecordError, RunRecord, RunSummary};
use super::scenario::Scenario;
use crate::solvers::SolverSpec;

/// One run to do: a scenario with one of its solvers.
#[derive(Debug, Clone)]
pub struct Job {
    /// The scenario.
    pub scenario: Arc<Scenario>,
    /// The solver.
    pub spec: SolverSpec,
    /// Its text form, as recorded.
    pub solver: String,
    /// Directory name of the run (unique within the scenario).
    pub solver_dir: String,
}

/// What runs one job: the simulator, or a stand-in in tests.
pub type Runner = dyn Fn(&Scenario, &SolverSpec) -> Result<RunRecord, String> + Sync;

/// The text form of a spec: the id, then the settings that differ from the defaults.
pub fn spec_text(spec: &SolverSpec) -> String {
    let defaults = crate::solvers::SolverSettings::default();
    let mut parts: Vec<String> = Vec::new();
    let s = &spec.settings;
    if s.stop != defaults.stop {
        parts.push(format!("stop={}", s.stop));
    }
    // Only the tolerance of the criterion in use: the other one would be refused.
    match s.stop {
        crate::solvers::Criterion::Relative if s.eps_rel != defaults.eps_rel => {
            parts.push(format!("eps_rel={:e}", s.eps_rel));
        }
        crate::solvers::Criterion::Absolute if s.eps_abs != defaults.eps_abs => {
            parts.push(format!("eps_abs={:e}", s.eps_abs));
        }
        _ => {}
    }
    if s.eps_step != defaults.eps_step {
        parts.push(format!("eps_step={:e}", s.eps_step));
    }
    if let Some(t) = s.max_time {
        parts.push(format!("max_time={t}"));
    }
    if s.max_iter != defaults.max_iter {
        parts.push(format!("max_iter={}", s.max_iter));
    }
    if s.over_relaxation != defaults.over_relaxation {
        parts.push(format!("over_relaxation={}", s.over_relaxation));
    }
    parts.extend(spec.params.iter().map(|(k, v)| format!("{k}={v}")));
    if parts.is_empty() {
        spec.id.to_string()
    } else {
        format!("{}:{}", spec.id, parts.join(","))
    }
}

/// The jobs of a list of scenarios: each with its own solvers, or with `solvers` when given.
pub fn jobs(scenarios: Vec<Scenario>, solvers: Option<&[SolverSpec]>) -> Vec<Job> {
    let mut out = Vec::new();
    for scenario in scenarios {
        let specs = match solvers {
            Some(list) => list.to_vec(),
            None => scenario.solver_specs(),
        };
        let ids: Vec<String> = specs.iter().map(|s| s.id.to_string()).collect();
        let scenario = Arc::new(scenario);
        for (spec, dir) in specs.into_iter().zip(solver_dirs(&ids)) {
            out.push(Job {
                scenario: Arc::clone(&scenario),
                solver: spec_text(&spec),
                spec,
                solver_dir: dir,
            });
        }
    }
    out
}

/// Runs one job; an error or a panic becomes a failed record.
fn run_job(job: &Job, runner: &Runner) -> RunRecord {
    let outcome = catch_unwind(AssertUnwindSafe(|| runner(&job.scenario, &job.spec)));
    let failure = match outcome {
        Ok(Ok(mut record)) => {
            record.solver = job.solver.clone();
            return record;
        }
        Ok(Err(message)) => message,
        Err(panic) => {
            let text = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            format!("panicked: {text}")
        }
    };
    RunRecord {
        scenario: job.scenario.name.clone(),
        solver: job.solver.clone(),
        dt: job.scenario.simulation.dt,
        failure: Some(failure),
        ..Default::default()
    }
}

/// Runs every job in parallel (rayon), writing each run under `root`; returns the
/// entries in job order. `progress` shows a progress bar on the terminal.
pub fn run_jobs(
    jobs: &[Job],
    root: &Path,
    runner: &Runner,
    progress: bool,
) -> Result<Vec<RunEntry>, RecordError> {
    let bar = if progress {
        ProgressBar::new(jobs.len() as u64)
    } else {
        ProgressBar::hidden()
    };
    if let Ok(style) =
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} runs {msg}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    let results: Vec<Result<RunEntry, RecordError>> = jobs
        .par_iter()
        .map(|job| {
            let record = run_job(job, runner);
            let entry = write_run(root, &record, &job.solver_dir);
            bar.set_message(format!("{} / {}", job.scenario.name, job.solver));
            bar.inc(1);
            entry
        })
        .collect();
    bar.finish_and_clear();
    results.into_iter().collect()
}

/// Runs every job and publishes the results directory `out` (manifest and runs) at once,
/// replacing an older results directory; on an I/O error nothing is left in `out`.
pub fn run_batch(
    jobs: &[Job],
    out: &Path,
    runner: &Runner,
    progress: bool,
) -> Result<ResultsManifest, RecordError> {
    let staging = Staging::new(out)?;
    let runs = run_jobs(jobs, staging.path(), runner, progress)?;
    let manifest = ResultsManifest { runs };
    manifest.write(staging.path())?;
    staging.publish()?;
    Ok(manifest)
}

/// Tolerances of the regression gate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Tolerances {
    /// Largest change of the final base position (m). Default `1e-3`.
    pub position: f64,
    /// Largest change of the final mechanical energy, relative to `max(|E_baseline|, 1 J)`.
    /// Default `1e-2`.
    pub energy: f64,
    /// Largest growth factor of the maximum NCP criterion (above `residual_floor`).
    /// Default `10`.
    pub residual_factor: f64,
    /// NCP criteria below this are never regressions. Default `1e-6`.
    pub residual_floor: f64,
}

impl Default for Tolerances {
    fn default() -> Self {
        Self {
            position: 1e-3,
            energy: 1e-2,
            residual_factor: 10.0,
            residual_floor: 1e-6,
        }
    }
}

/// A run that got worse than its baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct Regression {
    /// Scenario name.
    pub scenario: String,
    /// Solver text.
    pub solver: String,
    /// What changed, with the numbers.
    pub what: String,
}

/// Compares a batch's summaries with a baseline: every baseline run must be present,
/// complete if it completed, and within the tolerances on the final base position, the
/// final energy and the maximum NCP criterion.
pub fn compare(
    current: &[RunSummary],
    baseline: &[RunSummary],
    tol: &Tolerances,
) -> Vec<Regression> {
    let mut regressions = Vec::new();
    for base in baseline {
        let regress = |what: String| Regression {
            scenario: base.scenario.clone(),
            solver: base.solver.clone(),
            what,
        };
        let Some(run) = current
            .iter()
            .find(|r| r.scenario == base.scenario && r.solver == base.solver)
        else {
            regressions.push(regress("missing from the batch".into()));
            continue;
        };
        if base.outcome == "completed" && run.outcome != "completed" {
            regressions.push(regress(format!(
                "failed: {}",
                run.failure.clone().unwrap_or_default()
            )));
            continue;
        }
        let dp = (0..3)
            .map(|k| (run.final_base_position[k] - base.final_base_position[k]).powi(2))
            .sum::<f64>()
            .sqrt();
        if exceeds(dp, tol.position) {
            regressions.push(regress(format!(
                "final base position moved by {dp:.3e} m (tolerance {:.1e} m)",
                tol.position
            )));
        }
        let de = (run.final_energy - base.final_energy).abs() / base.final_energy.abs().max(1.0);
        if exceeds(de, tol.energy) {
            regressions.push(regress(format!(
                "final energy {:.6} J vs baseline {:.6} J (relative change {de:.2e}, tolerance {:.1e})",
                run.final_energy, base.final_energy, tol.energy
            )));
        }
        let limit = (base.max_ncp_criterion * tol.residual_factor).max(tol.residual_floor);
        if exceeds(run.max_ncp_criterion, limit) {
            regressions.push(regress(format!(
                "max NCP criterion {:.2e} vs baseline {:.2e} (limit {limit:.2e})",
                run.max_ncp_criterion, base.max_ncp_criterion
            )));
        }
    }
    regressions
}

/// True when `value` is above `limit` or NaN (a NaN is always a regression).
fn exceeds(value: f64, limit: f64) -> bool {
    value.is_nan() || value > limit
}
