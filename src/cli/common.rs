//! Helpers shared by the simulation commands: scenario loading, solver overrides, output
//! directories, signals, exit codes and the end-of-run notes.
//!
//! Exit codes (every command): 0 success; 1 a run failed, a sweep cell has no number, or
//! the regression gate found a regression; 2 usage or input error (bad flag, bad scenario,
//! unknown solver or parameter, bad model or problem file, an output directory that
//! exists, is not contactbench's, is locked or cannot be created); 130 interrupted by
//! SIGINT/SIGTERM/SIGHUP.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, OnceLock};

use anyhow::Context;
use contactbench::corpus::CorpusError;
use contactbench::model::{ModelError, TextError};
use contactbench::output::{signal, OutputError, Replace};
use contactbench::paper::PaperError;
use contactbench::problem::io::ProblemFileError;
use contactbench::problem::ProblemError;
use contactbench::report::ReportError;
use contactbench::simulation::batch::{self, Job, Runner};
use contactbench::simulation::recorder::{RecordError, RunSummary};
use contactbench::simulation::runner::{check, simulate_into, SimulationError};
use contactbench::simulation::{Scenario, ScenarioError, SolverFactory, UserSolver};
use contactbench::solvers::{
    check_unused_tolerance, SolverError, SolverId, SolverSettings, SolverSpec,
};

/// An error in what the user asked for (exit code 2).
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// The exit code of a command that returned an error.
pub fn exit_code(err: &anyhow::Error) -> ExitCode {
    let output = err.chain().find_map(output_error);
    if matches!(output, Some(OutputError::Interrupted { .. })) || signal::requested() {
        return ExitCode::from(130);
    }
    let input = output.is_some_and(OutputError::is_usage)
        || err.chain().any(|e| {
            e.is::<UsageError>()
                || e.is::<ScenarioError>()
                || e.is::<SolverError>()
                || e.is::<ProblemError>()
                || e.is::<ProblemFileError>()
                || e.is::<TextError>()
                || matches!(e.downcast_ref::<CorpusError>(), Some(CorpusError::Shard { .. } | CorpusError::Empty(_)))
                || matches!(e.downcast_ref::<ModelError>(), Some(m) if !matches!(m, ModelError::Fetch(_)))
                || matches!(
                    e.downcast_ref::<SimulationError>(),
                    Some(SimulationError::Scenario(_) | SimulationError::Solver(_))
                )
        });
    ExitCode::from(if input { 2 } else { 1 })
}

/// The output error inside an error of any layer (they wrap it without a source).
fn output_error<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a OutputError> {
    let record = |r: &'a RecordError| match r {
        RecordError::Output(o) => Some(o),
        _ => None,
    };
    let report = |r: &'a ReportError| match r {
        ReportError::Record(r) => record(r),
        _ => None,
    };
    e.downcast_ref::<OutputError>()
        .or_else(|| e.downcast_ref::<RecordError>().and_then(record))
        .or_else(|| e.downcast_ref::<ReportError>().and_then(report))
        .or_else(|| match e.downcast_ref::<PaperError>() {
            Some(PaperError::Record(r)) => record(r),
            Some(PaperError::Report(r)) => report(r),
            _ => None,
        })
        .or_else(|| match e.downcast_ref::<CorpusError>() {
            Some(CorpusError::Output(o)) => Some(o),
            _ => None,
        })
}

/// Installs the SIGINT/SIGTERM/SIGHUP handler (ctrlc) of every command
/// ([`signal::on_signal`]): the first signal asks every loop to stop, so that staging
/// directories are removed on the way out and the command exits with 130 (at once when it
/// has nothing on disk; after a grace period, cleaning up itself, when it does not stop);
/// a second signal cleans up and exits at once.
pub fn install_signal_handler() {
    if let Err(e) = ctrlc::set_handler(signal::on_signal) {
        eprintln!("warning: no signal handler ({e}): an interrupted command may leave a staging directory");
    }
}

/// The simulator as a batch runner, streaming each run to its recorder.
pub fn runner() -> &'static Runner {
    &|scenario, solver, recorder| {
        simulate_into(scenario, solver, recorder).map_err(|e| e.to_string())
    }
}

/// Scenario files given directly or found (`*.yaml`, sorted) in directories.
pub fn scenario_files(inputs: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for input in inputs {
        if input.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(input)
                .with_context(|| format!("{}", input.display()))?
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
                .collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(input.clone());
        }
    }
    if files.is_empty() {
        return Err(UsageError("no scenario file found".into()).into());
    }
    Ok(files)
}

/// Loads and checks every scenario (world and solvers), failing on the first bad one
/// before anything runs; two scenarios with one name are refused.
pub fn load_scenarios(files: &[PathBuf], overrides: &[String]) -> anyhow::Result<Vec<Scenario>> {
    let scenarios = files
        .iter()
        .map(|f| {
            let scenario = Scenario::load(Path::new(f), overrides)?;
            check(&scenario)?;
            Ok(scenario)
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    batch::check_unique_names(&scenarios)?;
    Ok(scenarios)
}

/// The jobs: each scenario with its own solvers, or with the `--solver` ones (a built-in
/// one keeping its scenario's settings unless the text overrides them; a user's own one
/// at its settings and the text's).
pub fn jobs(scenarios: Vec<Scenario>, solvers: &[String]) -> anyhow::Result<Vec<Job>> {
    if solvers.is_empty() {
        return Ok(batch::jobs(scenarios, None));
    }
    if solvers.iter().all(|t| user_factory(t).is_none()) {
        return Ok(batch::jobs_overriding(scenarios, solvers)?);
    }
    let mut out = Vec::new();
    for scenario in scenarios {
        let factories = solvers
            .iter()
            .map(|text| scenario_factory(&scenario, text))
            .collect::<anyhow::Result<Vec<_>>>()?;
        out.extend(batch::jobs_with(vec![scenario], &factories));
    }
    Ok(out)
}

/// The factory of one `--solver` text for one scenario: a user's solver, or a built-in
/// one with the scenario's settings under the text's.
pub fn scenario_factory(scenario: &Scenario, text: &str) -> anyhow::Result<Arc<dyn SolverFactory>> {
    if let Some(user) = user_factory(text) {
        return user;
    }
    let mut jobs = batch::jobs_overriding(vec![scenario.clone()], &[text.to_string()])?;
    Ok(jobs.remove(0).factory)
}

/// The user's own solvers of a `contactbench` built with [`super::main_with`].
static USER_SOLVERS: OnceLock<Vec<UserSolver>> = OnceLock::new();

/// Registers the user's own solvers, once, refusing a name that is a built-in id or
/// given twice.
pub fn set_user_solvers(solvers: Vec<UserSolver>) -> anyhow::Result<()> {
    for (k, s) in solvers.iter().enumerate() {
        let name = s.name();
        if name.parse::<SolverId>().is_ok() || solvers[..k].iter().any(|o| o.name() == name) {
            return Err(UsageError(format!(
                "user solver '{name}': the name of a built-in solver or of another user \
                 solver; give it another name"
            ))
            .into());
        }
    }
    USER_SOLVERS
        .set(solvers)
        .map_err(|_| anyhow::anyhow!("the user's solvers are registered once"))
}

/// The user's own solvers (none in the plain `contactbench`).
pub fn user_solvers() -> &'static [UserSolver] {
    USER_SOLVERS.get().map_or(&[], Vec::as_slice)
}

/// The names of the user's own solvers.
pub fn user_solver_names() -> Vec<String> {
    user_solvers().iter().map(|s| s.name()).collect()
}

/// The user's solver named by a solver text (`name` or `name:key=value,…`, shared
/// settings only) at its settings with the text's on top; `None` when the text names no
/// user solver.
pub fn user_factory(text: &str) -> Option<anyhow::Result<Arc<dyn SolverFactory>>> {
    let name = text.split(':').next().unwrap_or("").trim();
    let user = user_solvers().iter().find(|s| s.name() == name)?;
    let settings = || -> anyhow::Result<SolverSettings> {
        let mut given = SolverSpec::text_map(text)?;
        given.remove("solver");
        let keys: Vec<String> = given.keys().cloned().collect();
        let mut map = match serde_json::to_value(user.settings())? {
            serde_json::Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        map.extend(given);
        let settings: SolverSettings = serde_json::from_value(serde_json::Value::Object(map))
            .map_err(|e| SolverError::InvalidParameter {
                solver: name.to_string(),
                message: e.to_string(),
            })?;
        settings.validate()?;
        check_unused_tolerance(&settings, keys.iter().map(String::as_str))?;
        Ok(settings)
    };
    Some(
        settings()
            .map(|s| user.with_settings(s))
            .map_err(|e| e.context(format!("--solver {text}"))),
    )
}

/// The replacement policy of `--force`.
pub fn replace_policy(force: bool) -> Replace {
    if force {
        Replace::Ours
    } else {
        Replace::Never
    }
}

/// Prints, on stderr, one line per run that did not converge on every step or that
/// failed, so that a table reading "unconverged" or "failed" is explained, and one line
/// per warning of a run (a body that ended below the ground).
pub fn print_run_notes(summaries: &[RunSummary]) {
    for s in summaries {
        for warning in &s.warnings {
            eprintln!("warning: {} / {}: {warning}", s.scenario, s.solver);
        }
        if let Some(reason) = &s.failure {
            eprintln!(
                "error: {} / {}: failed after {} steps: {reason}",
                s.scenario, s.solver, s.steps
            );
        } else if s.unconverged_steps > 0 {
            let statuses: Vec<String> = s
                .solver_statuses
                .iter()
                .filter(|(tag, _)| tag.as_str() != "converged")
                .map(|(tag, n)| format!("{tag} {n}"))
                .collect();
            eprintln!(
                "warning: {} / {}: the solver did not converge on {} of {} steps ({}); largest energy gain {:+.3e} J",
                s.scenario,
                s.solver,
                s.unconverged_steps,
                s.steps,
                statuses.join(", "),
                s.max_energy_gain
            );
        }
    }
}

/// Exit code after runs: 1 if one failed, else 0.
pub fn runs_exit_code(summaries: &[RunSummary]) -> ExitCode {
    if summaries.iter().all(RunSummary::reached_end) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Warns, on stderr, that the times a command prints are a debug build's: unoptimized
/// code with debug assertions is 10 to 1000 times slower than a release build.
pub fn warn_if_debug_build(command: &str) {
    if cfg!(debug_assertions) {
        eprintln!(
            "warning: {command}: this contactbench is a debug build; its times are not the \
             solvers' (10 to 1000x slower); time with a release build: `cargo install --path .` \
             or `cargo run --release -- {command} ...`"
        );
    }
}

/// Errors of many tasks, each printed once: the first time in full, then a count of the
/// tasks that had it.
#[derive(Debug, Default)]
pub struct RepeatedErrors {
    seen: Mutex<BTreeMap<String, usize>>,
}

impl RepeatedErrors {
    /// Counts `error`; true the first time it is seen.
    pub fn first_time(&self, error: &str) -> bool {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let count = seen.entry(error.to_string()).or_insert(0);
        *count += 1;
        *count == 1
    }

    /// Prints, on stderr, how many tasks had each error seen more than once.
    pub fn print_counts(&self) {
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        for (error, count) in seen.iter().filter(|(_, &n)| n > 1) {
            eprintln!("  the same error in {count} tasks (printed once above): {error}");
        }
    }
}
