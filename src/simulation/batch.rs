//! Batches of runs (every scenario × solver) in parallel on the cores, with a progress
//! bar; a failing run is recorded as failed and the others go on. A batch can be compared
//! with a stored baseline of summaries as a regression gate.

use std::io::IsTerminal;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::factory::SolverFactory;
use super::output::{sanitize, solver_dirs, Replace, ResultsManifest, RunEntry, Staging};
use super::recorder::{RecordError, Recorder, RunHeader, RunSummary, RunWriter, StepRecord};
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

/// A recorder that counts the steps it passes on: the progress within a run.
struct Counting<'a> {
    inner: &'a mut dyn Recorder,
    steps: &'a ProgressBar,
    counted: &'a mut u64,
}

impl Recorder for Counting<'_> {
    fn start(&mut self, header: RunHeader) -> Result<(), RecordError> {
        self.inner.start(header)
    }

    fn record(
        &mut self,
        step: &StepRecord,
        analytical_energy: Option<f64>,
    ) -> Result<(), RecordError> {
        self.steps.inc(1);
        *self.counted += 1;
        self.inner.record(step, analytical_energy)
    }
}

/// The steps a job records: the initial state and every time step.
fn job_steps(job: &Job) -> u64 {
    job.scenario.num_steps() as u64 + 1
}

/// Runs one job into `dir`, streaming its steps to disk and counting them on `steps` (a
/// run that stops early counts its steps not taken as done); an error or a panic becomes
/// the run's failure.
fn run_job(
    job: &Job,
    runner: &Runner,
    dir: &Path,
    steps: &ProgressBar,
) -> Result<RunSummary, RecordError> {
    let mut writer = RunWriter::create(dir)?.with_origin(job.scenario.origin());
    let mut counted = 0;
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut counting = Counting {
            inner: &mut writer,
            steps,
            counted: &mut counted,
        };
        runner(&job.scenario, job.factory.as_ref(), &mut counting)
    }));
    steps.inc(job_steps(job).saturating_sub(counted));
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
/// entries in job order. `progress` shows, on a terminal, a bar of the steps done of
/// every run with the time left; off a terminal (a log, a pipe), a line on stderr per
/// finished run.
pub fn run_jobs(
    jobs: &[Job],
    root: &Path,
    runner: &Runner,
    progress: bool,
) -> Result<Vec<RunEntry>, RecordError> {
    let on_terminal = std::io::stderr().is_terminal();
    let total: u64 = jobs.iter().map(job_steps).sum();
    let bar = if progress && on_terminal {
        ProgressBar::new(total)
    } else {
        ProgressBar::hidden()
    };
    if let Ok(style) = ProgressStyle::with_template(
        "{elapsed_precise} [{bar:30}] {human_pos}/{human_len} steps, {eta} left; {msg}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    let finished = AtomicUsize::new(0);
    bar.set_message(format!("0/{} runs", jobs.len()));
    let results: Vec<Result<RunEntry, RecordError>> = jobs
        .par_iter()
        .map(|job| {
            let rel = format!(
                "{}/{}",
                sanitize(&job.scenario.name),
                sanitize(&job.solver_dir)
            );
            let summary = run_job(job, runner, &root.join(&rel), &bar)?;
            let done = finished.fetch_add(1, Ordering::Relaxed) + 1;
            bar.set_message(format!("{done}/{} runs", jobs.len()));
            if progress && !on_terminal {
                eprintln!(
                    "[{done}/{}] {} / {}: {} ({} steps)",
                    jobs.len(),
                    job.scenario.name,
                    job.solver,
                    summary.outcome,
                    summary.steps
                );
            }
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

/// The settings of a batch that change its runs, as a baseline records them: the `--set`
/// overrides and the `--solver` texts (empty: each scenario's own solvers). Each run's
/// duration and time step are in its summary (`steps`, `dt`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchSettings {
    /// `path=value` overrides, in the order given.
    pub overrides: Vec<String>,
    /// Solver texts run on every scenario, in the order given.
    pub solvers: Vec<String>,
}

impl BatchSettings {
    /// The command-line flags that give these settings (`--set a=b --solver s`), or
    /// "no --set and no --solver".
    pub fn flags(&self) -> String {
        let flags: Vec<String> = self
            .overrides
            .iter()
            .map(|o| format!("--set {o}"))
            .chain(self.solvers.iter().map(|s| format!("--solver {s}")))
            .collect();
        if flags.is_empty() {
            "no --set and no --solver".into()
        } else {
            flags.join(" ")
        }
    }
}

/// A stored baseline of the regression gate: the settings of the batch that wrote it and
/// its runs' summaries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// What the batch was run with.
    pub settings: BatchSettings,
    /// Every run's summary, in the batch's order.
    pub runs: Vec<RunSummary>,
}

impl Baseline {
    /// Why a batch run with `current` cannot be compared with this baseline, saying which
    /// flags compare like with like; `None` when the settings are the same.
    pub fn settings_mismatch(&self, current: &BatchSettings) -> Option<String> {
        (self.settings != *current).then(|| {
            format!(
                "the baseline was made with {}, this batch has {}: runs of other durations \
                 or solvers are not comparable. Compare like with like by running the batch \
                 with {}, or write a new baseline with --write-baseline",
                self.settings.flags(),
                current.flags(),
                self.settings.flags()
            )
        })
    }

    /// The runs of `current` that have no entry in this baseline: (scenario, solver).
    pub fn without_entry(&self, current: &[RunSummary]) -> Vec<(String, String)> {
        current
            .iter()
            .filter(|r| {
                !self
                    .runs
                    .iter()
                    .any(|b| b.scenario == r.scenario && b.solver == r.solver)
            })
            .map(|r| (r.scenario.clone(), r.solver.clone()))
            .collect()
    }
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
/// of the same time step and number of steps, reach its end if it did (`completed` or `unconverged`), and within the tolerances on the final base position, the
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
        if let Some(what) = not_comparable(run, base) {
            regressions.push(regress(what));
            continue;
        }
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

/// Why a run and its baseline entry are not runs of the same length: another time step,
/// or another number of steps while both reached their end.
fn not_comparable(run: &RunSummary, base: &RunSummary) -> Option<String> {
    let same_length = !(run.reached_end() && base.reached_end()) || run.steps == base.steps;
    (run.dt != base.dt || !same_length).then(|| {
        format!(
            "not comparable: {} steps of {} s, the baseline {} steps of {} s (the scenario's \
             duration or time step changed; write the baseline again)",
            run.steps, run.dt, base.steps, base.dt
        )
    })
}

/// True when `value` is above `limit` or NaN (a NaN is always a regression).
fn exceeds(value: f64, limit: f64) -> bool {
    value.is_nan() || value > limit
}
