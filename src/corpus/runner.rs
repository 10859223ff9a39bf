//! Runs a shard's tasks in parallel (rayon), each solve capped in iterations and in time
//! (the budget's timeout is the solver's `max_time`), every answer measured by
//! [`crate::metrics::compute_metrics`], each result written once, whole, to
//! `results/<task key>.json` in a shared output ([`crate::output::SharedDir`]: several
//! shards may write it at once). A task whose result file is there is skipped (resume
//! after an interrupted or preempted job); the key follows the problem's content and the
//! solver's full settings ([`super::tasks::Task::new`]). An interruption stops the run
//! between tasks, keeping every result written.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use super::tasks::Budget;
use super::tasks::{Task, RESULTS};
use super::CorpusError;
use crate::metrics::compute_metrics;
use crate::output::{signal, OutputError, SharedDir};
use crate::problem::io::{read_problem, ProblemFile};
use crate::solvers::SolverSpec;

/// The record of one task, as written to its result file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskResult {
    /// The task's key (its file name without `.json`).
    pub key: String,
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
            key: task.key.clone(),
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

/// The result file of `task` in a corpus output, relative to it.
pub fn result_path(task: &Task) -> String {
    format!("{RESULTS}/{}.json", task.key)
}

/// Runs `tasks` (already sliced to a shard) in parallel on `threads` threads (0: rayon's
/// default), writing one result file per task into `out`'s results, skipping the tasks
/// whose result is there. A file at a task's place that is not that task's result is
/// refused before anything runs (it is never overwritten). Each problem is read once.
/// `progress` is called after each task. An interruption stops between tasks:
/// [`OutputError::Interrupted`], every result written so far kept.
pub fn run_tasks(
    tasks: &[Task],
    budget: Budget,
    out: &SharedDir,
    threads: usize,
    progress: &(dyn Fn(&TaskResult) + Sync),
) -> Result<RunSummary, CorpusError> {
    out.dir(RESULTS)?;
    let mut todo: Vec<&Task> = Vec::new();
    for task in tasks {
        let path = out.path().join(result_path(task));
        if std::fs::symlink_metadata(&path).is_err() {
            todo.push(task);
            continue;
        }
        match read_result(&path) {
            Ok(result) if result.key == task.key => {}
            _ => {
                return Err(OutputError::Refused {
                    path: path.display().to_string(),
                    message: "is not the result contactbench wrote for this task; it is never \
                              overwritten: move it away"
                        .into(),
                }
                .into())
            }
        }
    }
    let skipped = tasks.len() - todo.len();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| CorpusError::io(out.path(), e))?;
    let ran = pool.install(|| {
        let mut paths: Vec<&PathBuf> = todo.iter().map(|t| &t.problem).collect();
        paths.sort();
        paths.dedup();
        let problems: BTreeMap<&PathBuf, Arc<Result<ProblemFile, String>>> = paths
            .par_iter()
            .map(|p| (*p, Arc::new(read_problem(p).map_err(|e| e.to_string()))))
            .collect();
        todo.par_iter()
            .map(|task| {
                if signal::requested() {
                    return Ok(0);
                }
                let problem = match problems.get(&task.problem) {
                    Some(loaded) => loaded.as_ref().as_ref().map_err(Clone::clone),
                    None => Err("not loaded".to_string()),
                };
                let result = run_task(task, problem, budget);
                let bytes = serde_json::to_vec_pretty(&result)
                    .map_err(|e| CorpusError::io(&task.problem, e))?;
                out.write(&result_path(task), &bytes, false)?;
                progress(&result);
                Ok(1)
            })
            .sum::<Result<usize, CorpusError>>()
    })?;
    if signal::requested() {
        return Err(OutputError::Interrupted {
            path: out.path().display().to_string(),
        }
        .into());
    }
    Ok(RunSummary { ran, skipped })
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
    budget.apply(&mut spec);
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
        key: task.key.clone(),
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

/// Reads one result file.
pub fn read_result(path: &Path) -> Result<TaskResult, CorpusError> {
    let text = std::fs::read_to_string(path).map_err(|e| CorpusError::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| CorpusError::Result {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}
