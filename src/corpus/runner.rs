//! Runs a shard's tasks in parallel (rayon), each solve capped in iterations and in time
//! (the budget's timeout is the solver's `max_time`), every answer measured by [`crate::metrics::compute_metrics`], each
//! result written once, atomically, to `results/<task key>.json`. A task whose result file
//! already exists is skipped (resume after an interrupted or preempted job).

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::tasks::{results_dir, Task};
use super::CorpusError;
use crate::metrics::compute_metrics;
use crate::problem::io::{read_problem, write_atomically, ProblemFile};
use crate::solvers::SolverSpec;

/// Limits every solve of a corpus run shares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    /// Iteration cap, replacing each solver specification's `max_iter` when given.
    pub max_iter: Option<usize>,
    /// Wall-time limit of one solve (s), passed to the solver as its `max_time` (it stops
    /// with status `MaxTime`). A solve that took longer counts as not solved.
    pub timeout: f64,
}

/// The record of one task, as written to its result file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskResult {
    /// The problem file, as given.
    pub problem: String,
    /// The solver specification text.
    pub solver: String,
    /// Position of the solver in the command's list.
    pub solver_rank: usize,
    /// Number of contacts, when the problem loaded.
    pub contacts: Option<usize>,
    /// The solver's own verdict (`converged`, `max iterations reached`, `failed: …`), or
    /// `error` when the problem did not load or the solver could not be built or run.
    pub status: String,
    /// Whether the solver says it converged on its own test.
    pub converged: bool,
    /// Iterations performed.
    pub iterations: Option<usize>,
    /// Wall time of the solve (s).
    pub solve_time_s: Option<f64>,
    /// The solver's own residual at exit.
    pub own_residual: Option<f64>,
    /// The time limit this result was run under (s).
    pub timeout_s: f64,
    /// Every metric of the answer ([`crate::metrics::ProblemMetrics`], serialized whole).
    pub metrics: Option<Value>,
    /// The answer `λ` (`[t1, t2, n]` per contact).
    pub lambda: Option<Vec<f64>>,
    /// Why there is no answer.
    pub error: Option<String>,
}

impl TaskResult {
    fn failed(task: &Task, contacts: Option<usize>, timeout: f64, error: String) -> Self {
        Self {
            problem: task.problem.display().to_string(),
            solver: task.solver.clone(),
            solver_rank: task.solver_rank,
            contacts,
            status: "error".into(),
            converged: false,
            iterations: None,
            solve_time_s: None,
            own_residual: None,
            timeout_s: timeout,
            metrics: None,
            lambda: None,
            error: Some(error),
        }
    }
}

/// What a shard run did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunSummary {
    /// Tasks solved (or recorded as failed) in this run.
    pub ran: usize,
    /// Tasks skipped because their result file already existed.
    pub skipped: usize,
}

/// The result file of `task` under `out`.
pub fn result_path(out: &Path, task: &Task) -> PathBuf {
    results_dir(out).join(format!("{}.json", task.key()))
}

/// Runs `tasks` (already sliced to a shard) in parallel on `threads` threads (0: rayon's
/// default), writing one result file per task under `out/results/`, skipping tasks whose
/// file exists. Each problem is read once. `progress` is called after each task.
pub fn run_tasks(
    tasks: &[Task],
    budget: Budget,
    out: &Path,
    threads: usize,
    progress: &(dyn Fn(&TaskResult) + Sync),
) -> Result<RunSummary, CorpusError> {
    let dir = results_dir(out);
    std::fs::create_dir_all(&dir).map_err(|e| CorpusError::io(&dir, e))?;
    let todo: Vec<&Task> = tasks
        .iter()
        .filter(|t| read_result(&result_path(out, t)).is_err())
        .collect();
    let skipped = tasks.len() - todo.len();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| CorpusError::io(out, e))?;
    pool.install(|| {
        let mut paths: Vec<&PathBuf> = todo.iter().map(|t| &t.problem).collect();
        paths.sort();
        paths.dedup();
        let problems: BTreeMap<&PathBuf, Arc<Result<ProblemFile, String>>> = paths
            .par_iter()
            .map(|p| (*p, Arc::new(read_problem(p).map_err(|e| e.to_string()))))
            .collect();
        todo.par_iter()
            .map(|task| {
                let problem = match problems.get(&task.problem) {
                    Some(loaded) => loaded.as_ref().as_ref().map_err(Clone::clone),
                    None => Err("not loaded".to_string()),
                };
                let result = run_task(task, problem, budget);
                let bytes = serde_json::to_vec_pretty(&result)
                    .map_err(|e| CorpusError::io(&task.problem, e))?;
                let path = result_path(out, task);
                write_atomically(&path, &bytes).map_err(|e| CorpusError::io(&path, e))?;
                progress(&result);
                Ok(())
            })
            .collect::<Result<Vec<()>, CorpusError>>()
    })?;
    Ok(RunSummary {
        ran: todo.len(),
        skipped,
    })
}

/// Solves one task; a problem that did not load, a solver that cannot be built, refuses
/// the problem or panics is a result with an error.
pub fn run_task(task: &Task, problem: Result<&ProblemFile, String>, budget: Budget) -> TaskResult {
    let file = match problem {
        Ok(file) => file,
        Err(error) => return TaskResult::failed(task, None, budget.timeout, error),
    };
    let problem = &file.problem;
    let contacts = Some(problem.num_contacts());
    let fail = |error: String| TaskResult::failed(task, contacts, budget.timeout, error);
    let mut spec = match task.solver.parse::<SolverSpec>() {
        Ok(spec) => spec,
        Err(e) => return fail(e.to_string()),
    };
    if let Some(max_iter) = budget.max_iter {
        spec.settings.max_iter = max_iter;
    }
    spec.settings.max_time = Some(solver_time_limit(spec.settings.max_time, budget.timeout));
    let mut solver = match spec.build() {
        Ok(solver) => solver,
        Err(e) => return fail(e.to_string()),
    };
    let report = match catch_unwind(AssertUnwindSafe(|| solver.solve(problem, None))) {
        Ok(Ok(report)) => report,
        Ok(Err(e)) => return fail(e.to_string()),
        Err(_) => return fail("the solver panicked".into()),
    };
    let metrics = serde_json::to_value(compute_metrics(problem, &report.lambda)).ok();
    TaskResult {
        problem: task.problem.display().to_string(),
        solver: task.solver.clone(),
        solver_rank: task.solver_rank,
        contacts,
        status: report.status.to_string(),
        converged: report.status.is_converged(),
        iterations: Some(report.iterations),
        solve_time_s: Some(report.solve_time.as_secs_f64()),
        own_residual: Some(report.residual),
        timeout_s: budget.timeout,
        metrics,
        lambda: Some(report.lambda.iter().copied().collect()),
        error: None,
    }
}

/// The solver's own `max_time` under a corpus budget: the timeout, or the specification's
/// own limit when it is smaller. The solver then stops itself with status `MaxTime` at the
/// budget (checked once per iteration) instead of running past it; the report still judges
/// the measured time against the timeout.
fn solver_time_limit(own: Option<f64>, timeout: f64) -> f64 {
    own.map_or(timeout, |t| t.min(timeout))
}

/// Reads one result file.
pub fn read_result(path: &Path) -> Result<TaskResult, CorpusError> {
    let text = std::fs::read_to_string(path).map_err(|e| CorpusError::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| CorpusError::Result {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// Every result file under each `dir/results/`, sorted by problem then solver rank. The
/// same task found twice (two output directories) is kept once.
pub fn load_results(dirs: &[PathBuf]) -> Result<Vec<TaskResult>, CorpusError> {
    let mut results: BTreeMap<(String, usize, String), TaskResult> = BTreeMap::new();
    for dir in dirs {
        let results_dir = results_dir(dir);
        let entries =
            std::fs::read_dir(&results_dir).map_err(|e| CorpusError::io(&results_dir, e))?;
        for entry in entries {
            let path = entry.map_err(|e| CorpusError::io(&results_dir, e))?.path();
            if path.extension().is_some_and(|e| e == "json") {
                let r = read_result(&path)?;
                results.insert((r.problem.clone(), r.solver_rank, r.solver.clone()), r);
            }
        }
    }
    if results.is_empty() {
        return Err(CorpusError::Empty(format!(
            "no result file under {}",
            dirs.iter()
                .map(|d| results_dir(d).display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(results.into_values().collect())
}
