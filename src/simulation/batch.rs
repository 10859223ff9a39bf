//! Batches of runs (every scenario × solver) in parallel on the cores, with a progress
//! bar; a failing run is recorded as failed and the others go on. A batch can be compared
//! with a stored baseline of summaries as a regression gate.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::Arc;

use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::factory::SolverFactory;
use super::output::{sanitize, solver_dirs, Replace, ResultsManifest, RunEntry, Staging};
use super::recorder::{RecordError, Recorder, RunHeader, RunSummary, RunWriter};
use super::scenario::{Scenario, ScenarioError};
use crate::solvers::SolverSpec;

/// One run to do: a scenario with one of its solvers.
#[derive(Debug, Clone)]
pub struct Job {
    /// The scenario.
    pub scenario: Arc<Scenario>,
    /// What builds the solver (a built-in spec or a user's [`super::factory::UserSolver`]).
    pub factory: Arc<dyn SolverFactory>,
    /// Its text form, as recorded.
    pub solver: String,
    /// Directory name of the run (unique within the scenario).
    pub solver_dir: String,
}

/// What runs one job: it hands every step to the recorder as it is computed and returns
/// why the run stopped early, if it did; `Err` when the run could not start. The
/// simulator ([`super::runner::simulate_into`]), or a stand-in in tests.
pub type Runner = dyn Fn(&Scenario, &dyn SolverFactory, &mut dyn Recorder) -> Result<Option<String>, String>
    + Sync;

/// The text form of a spec: the id, then the settings that differ from the defaults.
pub fn spec_text(spec: &SolverSpec) -> String {
    SolverFactory::label(spec)
}

/// Refuses two scenarios with the same name in one batch (their runs would share a
/// directory), naming both files.
pub fn check_unique_names(scenarios: &[Scenario]) -> Result<(), ScenarioError> {
    for (k, s) in scenarios.iter().enumerate() {
        if let Some(first) = scenarios[..k].iter().find(|o| o.name == s.name) {
            return Err(s.invalid(
                "name",
                format!(
                    "scenario name '{}' is also the name of {}: the runs would share a \
                     directory; give one of them another `name`",
                    s.name,
                    first.source.display()
                ),
            ));
        }
    }
    Ok(())
}

/// The jobs of a list of scenarios: each with its own solvers, or with `solvers` when given.
pub fn jobs(scenarios: Vec<Scenario>, solvers: Option<&[SolverSpec]>) -> Vec<Job> {
    let mut out = Vec::new();
    for scenario in scenarios {
        let specs = match solvers {
            Some(list) => list.to_vec(),
            None => scenario.solver_specs(),
        };
        let factories: Vec<Arc<dyn SolverFactory>> = specs
            .into_iter()
            .map(|s| Arc::new(s) as Arc<dyn SolverFactory>)
            .collect();
        out.extend(jobs_with(vec![scenario], &factories));
    }
    out
}

/// The jobs of every scenario × every factory (a user's solvers, built-in ones, or both):
/// how a user's own solver runs in a batch.
pub fn jobs_with(scenarios: Vec<Scenario>, solvers: &[Arc<dyn SolverFactory>]) -> Vec<Job> {
    let names: Vec<String> = solvers.iter().map(|f| f.name()).collect();
    let dirs = solver_dirs(&names);
    let mut out = Vec::new();
    for scenario in scenarios {
        let scenario = Arc::new(scenario);
        for (factory, dir) in solvers.iter().zip(&dirs) {
            out.push(Job {
                scenario: Arc::clone(&scenario),
                solver: factory.label(),
                factory: Arc::clone(factory),
                solver_dir: dir.clone(),
            });
        }
    }
    out
}

/// The jobs of a list of scenarios with the solvers of `--solver` texts, each keeping its
/// scenario's settings unless the text overrides them ([`Scenario::solver_override`]).
pub fn jobs_overriding(
    scenarios: Vec<Scenario>,
    texts: &[String],
) -> Result<Vec<Job>, ScenarioError> {
    let mut out = Vec::new();
    for scenario in scenarios {
        let specs = texts
            .iter()
            .map(|t| {
                scenario
                    .solver_override(t)
                    .and_then(|spec| spec.build().map(|_| spec))
                    .map_err(|e| ScenarioError::Override {
                        assignment: format!("--solver {t}"),
                        message: format!("{}: {e}", scenario.name),
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        out.extend(jobs(vec![scenario], Some(&specs)));
    }
    Ok(out)
}

/// Runs one job into `dir`, streaming its steps to disk; an error or a panic becomes the
/// run's failure.
fn run_job(job: &Job, runner: &Runner, dir: &Path) -> Result<RunSummary, RecordError> {
    let mut writer = RunWriter::create(dir)?;
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        runner(&job.scenario, job.factory.as_ref(), &mut writer)
    }));
    let failure = match outcome {
        Ok(Ok(failure)) => failure,
        Ok(Err(message)) => Some(message),
        Err(panic) => {
            let text = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Some(format!("panicked: {text}"))
        }
    };
    let header = RunHeader {
        scenario: job.scenario.name.clone(),
        solver: job.solver.clone(),
        dt: job.scenario.simulation.dt,
        ..Default::default()
    };
    writer.finish(&header, failure)
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
            let rel = format!(
                "{}/{}",
                sanitize(&job.scenario.name),
                sanitize(&job.solver_dir)
            );
            let summary = run_job(job, runner, &root.join(&rel))?;
            bar.set_message(format!("{} / {}", job.scenario.name, job.solver));
            bar.inc(1);
            Ok(RunEntry { path: rel, summary })
        })
        .collect();
    bar.finish_and_clear();
    results.into_iter().collect()
}

/// Runs every job and publishes the results directory `out` (manifest and runs) at once.
/// `replace` says whether an earlier results directory of ours may be replaced; the
/// directory is checked (and locked) before anything runs. On an error or an
/// interruption nothing is left in `out` and nothing beside it.
pub fn run_batch(
    jobs: &[Job],
    out: &Path,
    runner: &Runner,
    progress: bool,
    replace: Replace,
) -> Result<ResultsManifest, RecordError> {
    let staging = Staging::create(out, replace)?;
    let runs = run_jobs(jobs, staging.path(), runner, progress)?;
    let manifest = ResultsManifest { runs, shard: None };
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
/// reach its end if it did (`completed` or `unconverged`), and within the tolerances on the final base position, the
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
        if base.reached_end() && !run.reached_end() {
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
        match (run.max_ncp_criterion, base.max_ncp_criterion) {
            (Some(value), Some(baseline)) => {
                let limit = (baseline * tol.residual_factor).max(tol.residual_floor);
                if exceeds(value, limit) {
                    regressions.push(regress(format!(
                        "max NCP criterion {value:.2e} vs baseline {baseline:.2e} (limit {limit:.2e})"
                    )));
                }
            }
            (None, Some(_)) => regressions.push(regress(
                "max NCP criterion not computed (step_metrics: none), the baseline has one".into(),
            )),
            (_, None) => {}
        }
    }
    regressions
}

/// True when `value` is above `limit` or NaN (a NaN is always a regression).
fn exceeds(value: f64, limit: f64) -> bool {
    value.is_nan() || value > limit
}
