//! The plan of a corpus run (`plan.json` next to `results/`): every task with its key, the
//! shard count and the Slurm array that first wrote the folder. A merge reads the plan,
//! so it knows which results are missing and from which shard, and counts each task once
//! whatever spelling of a path wrote it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::runner::{read_result, TaskResult};
use super::tasks::{ArrayGeometry, Task, RESULTS};
use super::CorpusError;
use crate::output::SharedDir;

/// Name of the plan file in a corpus output.
pub const PLAN: &str = "plan.json";

/// Largest plan read.
const MAX_PLAN_BYTES: u64 = 256 << 20;

/// One task of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlannedTask {
    /// Its key: the result is `results/<key>.json`.
    pub key: String,
    /// The problem file, as the run that wrote the plan named it.
    pub problem: String,
    /// The solver specification text.
    pub solver: String,
    /// Position of the solver in the command's list.
    pub solver_rank: usize,
}

/// A corpus run's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// Every task, in shard order (task `i` belongs to shard `i mod shard_count + 1`).
    pub tasks: Vec<PlannedTask>,
    /// How many shards the run was split into (1: not sharded).
    pub shard_count: usize,
    /// The Slurm job array that first wrote the folder, when it was one.
    #[serde(default)]
    pub array: Option<ArrayGeometry>,
}

impl Plan {
    /// The plan of a task list.
    pub fn of(tasks: &[Task], shard_count: usize, array: Option<ArrayGeometry>) -> Self {
        Self {
            tasks: tasks
                .iter()
                .map(|t| PlannedTask {
                    key: t.key.clone(),
                    problem: t.problem.display().to_string(),
                    solver: t.solver.clone(),
                    solver_rank: t.solver_rank,
                })
                .collect(),
            shard_count,
            array,
        }
    }

    /// Reads `dir/plan.json`.
    pub fn read(dir: &Path) -> Result<Self, CorpusError> {
        use std::io::Read;
        let path = dir.join(PLAN);
        let mut text = String::new();
        std::fs::File::open(&path)
            .and_then(|f| f.take(MAX_PLAN_BYTES).read_to_string(&mut text))
            .map_err(|e| CorpusError::io(&path, e))?;
        serde_json::from_str(&text).map_err(|e| CorpusError::Result {
            path,
            message: e.to_string(),
        })
    }

    /// Writes the plan into a corpus output, unless the same plan is there; a
    /// `plan.json` that is not a plan (edited by hand, a link) is never replaced.
    pub fn write(&self, out: &SharedDir) -> Result<(), CorpusError> {
        let path = out.path().join(PLAN);
        if std::fs::symlink_metadata(&path).is_ok() {
            match Self::read(out.path()) {
                Ok(p) if &p == self => return Ok(()),
                Ok(_) if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) => {}
                _ => {
                    return Err(crate::output::OutputError::Refused {
                        path: path.display().to_string(),
                        message: "is not a plan contactbench wrote; it is never replaced: move \
                                  it away"
                            .into(),
                    }
                    .into())
                }
            }
        }
        let bytes = serde_json::to_vec_pretty(self).map_err(|e| CorpusError::io(out.path(), e))?;
        out.write(PLAN, &bytes, true)?;
        Ok(())
    }

    /// Whether two plans list the same tasks.
    pub fn same_tasks(&self, other: &Self) -> bool {
        self.tasks.len() == other.tasks.len()
            && self
                .tasks
                .iter()
                .zip(&other.tasks)
                .all(|(a, b)| a.key == b.key)
    }

    /// The shard (1-based) of planned task `i`.
    pub fn shard_of(&self, i: usize) -> usize {
        i % self.shard_count.max(1) + 1
    }
}

/// The results of a plan found in corpus outputs.
#[derive(Debug, Clone)]
pub struct Collected {
    /// The plan.
    pub plan: Plan,
    /// One result per planned task found, named as the plan names its problem.
    pub results: Vec<TaskResult>,
    /// Planned tasks without a result, with their shard.
    pub missing: Vec<(PlannedTask, usize)>,
}

impl Collected {
    /// The shards that have missing tasks, with how many each, as text.
    pub fn missing_shards(&self) -> String {
        let mut counts: std::collections::BTreeMap<usize, usize> = Default::default();
        for (_, shard) in &self.missing {
            *counts.entry(*shard).or_default() += 1;
        }
        counts
            .iter()
            .map(|(shard, n)| format!("shard {shard}/{}: {n}", self.plan.shard_count))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Reads the plan of every folder (they must agree) and every planned task's result from
/// any of them; results of other plans are left out.
pub fn collect(dirs: &[PathBuf]) -> Result<Collected, CorpusError> {
    let Some(first) = dirs.first() else {
        return Err(CorpusError::Empty("no folder to merge".into()));
    };
    let plan = Plan::read(first)?;
    for dir in &dirs[1..] {
        if !Plan::read(dir)?.same_tasks(&plan) {
            return Err(CorpusError::Result {
                path: dir.join(PLAN),
                message: format!(
                    "plans a different task list than {}: merge the folders of one run",
                    first.join(PLAN).display()
                ),
            });
        }
    }
    let mut results = Vec::new();
    let mut missing = Vec::new();
    for (i, task) in plan.tasks.iter().enumerate() {
        let found = dirs
            .iter()
            .map(|d| d.join(RESULTS).join(format!("{}.json", task.key)))
            .find(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file()));
        match found {
            Some(path) => {
                let mut result = read_result(&path)?;
                if result.key != task.key {
                    return Err(CorpusError::Result {
                        path,
                        message: "is not the result of the task its name says".into(),
                    });
                }
                result.problem = task.problem.clone();
                result.solver_rank = task.solver_rank;
                results.push(result);
            }
            None => missing.push((task.clone(), plan.shard_of(i))),
        }
    }
    Ok(Collected {
        plan,
        results,
        missing,
    })
}
