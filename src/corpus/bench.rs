//! `bench-problems` and `merge` as library calls: a corpus output is a shared output
//! ([`crate::output::SharedDir`]) whose `results/` and `plan.json` the shards add to at
//! once; its report files are published into it (or another folder) as an update of
//! ours: a file of the same name that contactbench did not write is never overwritten.
//!
//! ```text
//! OUT/.contactbench-output.json   marker (shared: results, plan.json; the report's files)
//! OUT/plan.json                   every task with its key, the shard count, the Slurm array
//! OUT/results/<key>.json          one result per task
//! OUT/report.md results.csv results.json profile.png profile.svg   the report
//! ```

use std::path::{Path, PathBuf};

use super::plan::{collect, Plan, PLAN};
use super::report::{build_report, write_report, CorpusReport, Judge};
use super::runner::{run_tasks, RunSummary, TaskResult};
use super::tasks::{problem_files, tasks, ArrayGeometry, Budget, Shard, SlurmTask, RESULTS};
use super::CorpusError;
use crate::output::{SharedDir, Staging};

/// The paths of a corpus output that its shards add to.
pub const SHARED: [&str; 2] = [RESULTS, PLAN];

/// Which shard to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardChoice {
    /// `--shard K/N`.
    Given(Shard),
    /// A Slurm job array task ([`SlurmTask::shard`]).
    Slurm(SlurmTask),
    /// Every task.
    All,
}

/// What a corpus run does.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// Solver specification texts, in report order.
    pub solvers: Vec<String>,
    /// Limits of every solve.
    pub budget: Budget,
    /// Which shard.
    pub shard: ShardChoice,
    /// Worker threads (0: one per core).
    pub threads: usize,
    /// How the report judges.
    pub judge: Judge,
}

/// What a corpus run did.
#[derive(Debug, Clone)]
pub struct BenchOutcome {
    /// Problem files.
    pub problems: usize,
    /// Tasks in the plan.
    pub total: usize,
    /// The shard run.
    pub shard: Shard,
    /// Tasks of the shard.
    pub mine: usize,
    /// Ran and skipped.
    pub summary: RunSummary,
    /// The report's `report.md`, when the run was not sharded.
    pub report: Option<PathBuf>,
}

/// Runs every problem × solver (or a shard of them) into the corpus output `out`,
/// resuming from the results there, and, when not sharded, publishes the report into it.
/// `out` must be absent, empty or a corpus output: anything else is refused before any
/// solve.
pub fn bench_problems(
    inputs: &[PathBuf],
    out: &Path,
    options: &BenchOptions,
    progress: &(dyn Fn(&TaskResult) + Sync),
) -> Result<BenchOutcome, CorpusError> {
    let problems = problem_files(inputs)?;
    if options.solvers.is_empty() {
        return Err(CorpusError::Empty("no solver".into()));
    }
    let all = tasks(&problems, &options.solvers, options.budget);
    let dir = SharedDir::open(out, &SHARED)?;
    let recorded = Plan::read(out).ok();
    let same = |p: &Plan| p.same_tasks(&Plan::of(&all, p.shard_count, None));
    let (shard, array) = match options.shard {
        ShardChoice::Given(shard) => (shard, None),
        ShardChoice::All => (Shard::ALL, None),
        ShardChoice::Slurm(task) => {
            let known = recorded.as_ref().filter(|p| same(p)).and_then(|p| p.array);
            let (shard, array) = task.shard(known)?;
            (shard, Some(array))
        }
    };
    let array = array.or_else(|| recorded.as_ref().filter(|p| same(p)).and_then(|p| p.array));
    Plan::of(&all, shard.count, keep_array(array, shard)).write(&dir)?;
    let total = all.len();
    let mine = shard.select(all);
    let summary = run_tasks(&mine, options.budget, &dir, options.threads, progress)?;
    drop(dir);
    let report = if shard.count == 1 {
        let collected = collect(&[out.to_path_buf()])?;
        let report = build_report(collected.results, &options.judge);
        Some(publish_report(&report, out)?)
    } else {
        None
    };
    Ok(BenchOutcome {
        problems: problems.len(),
        total,
        shard,
        mine: mine.len(),
        summary,
        report,
    })
}

/// The array recorded in the plan: only one of as many shards as this run's.
fn keep_array(array: Option<ArrayGeometry>, shard: Shard) -> Option<ArrayGeometry> {
    array.filter(|a| a.count == shard.count)
}

/// What a merge found and wrote.
#[derive(Debug, Clone)]
pub struct MergeOutcome {
    /// Tasks in the plan.
    pub planned: usize,
    /// Planned tasks without a result: `problem / solver (shard K/N)`.
    pub missing: Vec<String>,
    /// The missing tasks' shards, with how many each.
    pub missing_shards: String,
    /// The report (`None` when tasks are missing and a partial report was not asked for).
    pub report: Option<(CorpusReport, PathBuf)>,
}

/// Merges the results of corpus outputs (the shards of one run, in one folder or
/// several) by their plan, and publishes the report into `out` (default: the first
/// folder). With missing tasks, the report is written only when `partial` (and says it
/// is partial).
pub fn merge(
    dirs: &[PathBuf],
    out: Option<&Path>,
    judge: &Judge,
    partial: bool,
) -> Result<MergeOutcome, CorpusError> {
    let collected = collect(dirs)?;
    let missing: Vec<String> = collected
        .missing
        .iter()
        .map(|(task, shard)| {
            format!(
                "{} / {} (shard {shard}/{})",
                task.problem, task.solver, collected.plan.shard_count
            )
        })
        .collect();
    let mut outcome = MergeOutcome {
        planned: collected.plan.tasks.len(),
        missing_shards: collected.missing_shards(),
        missing,
        report: None,
    };
    if !outcome.missing.is_empty() && !partial {
        return Ok(outcome);
    }
    if collected.results.is_empty() {
        return Err(CorpusError::Empty("no result to merge".into()));
    }
    let mut report = build_report(collected.results, judge);
    report.missing = outcome.missing.clone();
    let target = out.map_or_else(|| dirs[0].clone(), Path::to_path_buf);
    let path = publish_report(&report, &target)?;
    outcome.report = Some((report, path));
    Ok(outcome)
}

/// Publishes a report's files into `out` as an update of ours (absent, empty, or an
/// output of ours whose files of those names are ours and unchanged). Returns the path
/// of `report.md`.
pub fn publish_report(report: &CorpusReport, out: &Path) -> Result<PathBuf, CorpusError> {
    let staging = Staging::update(out)?;
    write_report(report, staging.path())?;
    let dir = staging.publish()?;
    Ok(dir.join("report.md"))
}
