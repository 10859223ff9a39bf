//! Sharded batches: shard `K` of `N` of a batch's runs (run `i` in job order belongs to
//! shard `i mod N + 1`) is a results directory of its own, `shard-K-of-N/`, nested in a
//! folder the shards share; its manifest names the shard and the whole batch's plan.
//! Running a shard again when its results are complete for the same plan does nothing
//! (a re-submitted job array resumes); [`merge_shards`] joins the shards into one
//! results directory and lists the missing ones.

use std::fs;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::batch::{run_jobs, Job, Runner};
use super::output::{ResultsManifest, ShardOf, MANIFEST, RUN_FILES};
use super::recorder::RecordError;
use crate::output::{OutputMarker, Replace, Staging};

/// SHA-256 of a batch's job list: every scenario (after `--set`), solver and directory.
pub fn jobs_plan(jobs: &[Job]) -> String {
    let mut hasher = Sha256::new();
    for job in jobs {
        let scenario = serde_json::to_string(job.scenario.as_ref()).unwrap_or_default();
        for part in [scenario.as_str(), &job.solver, &job.solver_dir] {
            hasher.update(part.as_bytes());
            hasher.update([0]);
        }
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The directory name of shard `index` of `count`, sorted by number.
pub fn shard_dir_name(index: usize, count: usize) -> String {
    let width = count.to_string().len();
    format!("shard-{index:0width$}-of-{count}")
}

/// What running a shard did.
#[derive(Debug, Clone)]
pub struct ShardRun {
    /// The shard's results directory.
    pub dir: PathBuf,
    /// Its manifest.
    pub manifest: ResultsManifest,
    /// Whether its results were already complete (nothing ran).
    pub resumed: bool,
}

/// Runs shard `index` of `count` of `all` into `container/shard-K-of-N/` (a nested output
/// of the shared folder `container`, which must carry contactbench's marker), or finds
/// it complete for the same plan and does nothing.
pub fn run_batch_shard(
    all: &[Job],
    index: usize,
    count: usize,
    container: &Path,
    runner: &Runner,
    progress: bool,
) -> Result<ShardRun, RecordError> {
    let name = shard_dir_name(index, count);
    let dir = container.join(&name);
    let shard = ShardOf {
        index,
        count,
        plan: jobs_plan(all),
        runs: all.len(),
    };
    if let Some(manifest) = complete_shard(&dir).filter(|m| m.shard.as_ref() == Some(&shard)) {
        return Ok(ShardRun {
            dir,
            manifest,
            resumed: true,
        });
    }
    let staging = Staging::nested(container, &name, Replace::Never)?;
    let jobs: Vec<Job> = all
        .iter()
        .enumerate()
        .filter(|(i, _)| i % count + 1 == index)
        .map(|(_, job)| job.clone())
        .collect();
    let runs = run_jobs(&jobs, staging.path(), runner, progress)?;
    let manifest = ResultsManifest {
        runs,
        shard: Some(shard),
    };
    manifest.write(staging.path())?;
    staging.publish()?;
    Ok(ShardRun {
        dir,
        manifest,
        resumed: false,
    })
}

/// The manifest of a shard directory whose output is complete: its marker is ours and
/// its manifest reads with every run's files.
fn complete_shard(dir: &Path) -> Option<ResultsManifest> {
    OutputMarker::read(dir).ok()?;
    ResultsManifest::read(dir).ok()
}

/// Whether `dir` is a sharded batch's shared folder or one of its shards.
pub fn is_shard_output(dir: &Path) -> bool {
    shard_dirs(dir).is_some_and(|d| !d.is_empty())
        || ResultsManifest::read(dir).is_ok_and(|m| m.shard.is_some())
}

/// The `shard-*` directories of a shared folder.
fn shard_dirs(dir: &Path) -> Option<Vec<PathBuf>> {
    let mut found: Vec<PathBuf> = fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("shard-"))
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    found.sort();
    Some(found)
}

/// What a merge of batch shards found and wrote.
#[derive(Debug, Clone)]
pub struct ShardMerge {
    /// The number of shards of the batch.
    pub count: usize,
    /// Shards without complete results.
    pub missing: Vec<usize>,
    /// Runs in the whole batch, and runs found.
    pub runs: (usize, usize),
    /// The merged results directory, when written.
    pub out: Option<PathBuf>,
}

/// Joins the shards found in `dirs` (shared folders or shard directories) of one batch
/// into the results directory `out` (a new output: absent or empty). With shards
/// missing, nothing is written unless `partial`.
pub fn merge_shards(
    dirs: &[PathBuf],
    out: &Path,
    partial: bool,
) -> Result<ShardMerge, RecordError> {
    let mut shards: Vec<(PathBuf, ResultsManifest)> = Vec::new();
    for dir in dirs {
        let candidates = match shard_dirs(dir) {
            Some(found) if !found.is_empty() => found,
            _ => vec![dir.clone()],
        };
        for shard_dir in candidates {
            let manifest = ResultsManifest::read(&shard_dir)?;
            if manifest.shard.is_none() {
                return Err(invalid(
                    &shard_dir,
                    "is not a shard of a batch (no shard in its manifest)",
                ));
            }
            shards.push((shard_dir, manifest));
        }
    }
    let Some(first) = shards.first().and_then(|(_, m)| m.shard.clone()) else {
        return Err(invalid(
            dirs.first().map_or(Path::new("."), PathBuf::as_path),
            "holds no shard",
        ));
    };
    let mut found: Vec<Option<(PathBuf, ResultsManifest)>> = vec![None; first.count];
    for (dir, manifest) in shards {
        let Some(shard) = manifest.shard.clone() else {
            continue;
        };
        if shard.plan != first.plan || shard.count != first.count {
            return Err(invalid(
                &dir,
                "is a shard of another batch (other scenarios, solvers or shard count)",
            ));
        }
        if let Some(slot) = found.get_mut(shard.index.wrapping_sub(1)) {
            slot.get_or_insert((dir, manifest));
        }
    }
    let missing: Vec<usize> = (1..=first.count)
        .filter(|k| found[k - 1].is_none())
        .collect();
    let mut merge = ShardMerge {
        count: first.count,
        runs: (
            first.runs,
            found.iter().flatten().map(|(_, m)| m.runs.len()).sum(),
        ),
        missing,
        out: None,
    };
    if !merge.missing.is_empty() && !partial {
        return Ok(merge);
    }
    let staging = Staging::create(out, Replace::Never)?;
    // Back in job order: run i is the (i / N)-th run of shard i mod N + 1.
    let mut queues: Vec<_> = found
        .into_iter()
        .map(|slot| slot.map(|(dir, m)| (dir, m.runs.into_iter())))
        .collect();
    let mut runs = Vec::new();
    for i in 0..first.runs {
        let Some((dir, queue)) = queues[i % first.count].as_mut() else {
            continue;
        };
        let Some(run) = queue.next() else {
            continue;
        };
        let to = staging.path().join(&run.path);
        fs::create_dir_all(&to).map_err(|e| io(&to, e))?;
        for file in RUN_FILES {
            let from = dir.join(&run.path).join(file);
            fs::copy(&from, to.join(file)).map_err(|e| io(&from, e))?;
        }
        runs.push(run);
    }
    ResultsManifest { runs, shard: None }.write(staging.path())?;
    merge.out = Some(staging.publish()?);
    Ok(merge)
}

fn io(path: &Path, error: std::io::Error) -> RecordError {
    RecordError::Io {
        path: path.display().to_string(),
        error,
    }
}

fn invalid(path: &Path, message: &str) -> RecordError {
    RecordError::Invalid {
        path: path.join(MANIFEST).display().to_string(),
        message: message.to_string(),
    }
}
