//! Results directories: a manifest of runs (`contactbench.json`) and the runs' files,
//! written under the output discipline of [`crate::output`] (marker, staging, lock).
//!
//! ```text
//! OUT/contactbench.json                 manifest: every run with its summary
//! OUT/.contactbench-output.json         marker: run id and every file written, with digests
//! OUT/<scenario>/<solver>/steps.csv     one row per step
//! OUT/<scenario>/<solver>/contacts.csv  one row per contact and step
//! OUT/<scenario>/<solver>/summary.json  the run's summary
//! ```

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::recorder::{read_json, write_json, RecordError, RunSummary};

pub use crate::output::signal::remove_live_outputs;
pub use crate::output::{new_run_id, OutputError, OutputMarker, Replace, Staging, MARKER};

/// Name of the manifest file at the root of a results directory.
pub const MANIFEST: &str = "contactbench.json";

/// One run in a results directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunEntry {
    /// Directory of the run, relative to the results directory.
    pub path: String,
    /// Its summary.
    pub summary: RunSummary,
}

/// The manifest of a results directory.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResultsManifest {
    /// The runs, in the order they were listed.
    pub runs: Vec<RunEntry>,
    /// The slice of a sharded batch these runs are, when they are one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardOf>,
}

/// Which slice of a batch a results directory holds (`batch --shard K/N`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardOf {
    /// `K`, 1-based.
    pub index: usize,
    /// `N`.
    pub count: usize,
    /// SHA-256 of the whole batch's job list (every scenario, solver and setting):
    /// shards of one batch carry the same.
    pub plan: String,
    /// Runs in the whole batch.
    pub runs: usize,
}

/// Files every run directory holds.
pub const RUN_FILES: [&str; 3] = ["steps.csv", "contacts.csv", "summary.json"];

impl ResultsManifest {
    /// Reads `dir/contactbench.json` and checks it: every run path is a relative path
    /// inside `dir` (no `..`, no absolute path, no symbolic link on the way) whose run
    /// files exist. Errors name the file.
    pub fn read(dir: &Path) -> Result<Self, RecordError> {
        let manifest: Self = read_json(&dir.join(MANIFEST))?;
        for run in &manifest.runs {
            let run_dir = checked_relative(dir, &run.path)?;
            for file in RUN_FILES {
                let path = run_dir.join(file);
                if !path.is_file() {
                    return Err(RecordError::Invalid {
                        path: path.display().to_string(),
                        message: format!(
                            "missing (listed by {} as run '{}')",
                            dir.join(MANIFEST).display(),
                            run.path
                        ),
                    });
                }
            }
        }
        Ok(manifest)
    }

    /// Writes `dir/contactbench.json`.
    pub fn write(&self, dir: &Path) -> Result<(), RecordError> {
        write_json(&dir.join(MANIFEST), self)
    }

    /// Names of the scenarios, in order of first appearance.
    pub fn scenarios(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for run in &self.runs {
            if !names.contains(&run.summary.scenario) {
                names.push(run.summary.scenario.clone());
            }
        }
        names
    }
}

/// `dir/rel` when `rel` is a relative path of plain components and nothing on the way is
/// a symbolic link.
fn checked_relative(dir: &Path, rel: &str) -> Result<PathBuf, RecordError> {
    let bad = |message: &str| RecordError::Invalid {
        path: dir.join(MANIFEST).display().to_string(),
        message: format!("run path '{rel}' {message}"),
    };
    let path = Path::new(rel);
    if rel.is_empty() || !path.components().all(|c| matches!(c, Component::Normal(_))) {
        return Err(bad("is not a relative path inside the results directory"));
    }
    let mut current = dir.to_path_buf();
    for component in path.components() {
        current.push(component);
        if std::fs::symlink_metadata(&current).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(bad("goes through a symbolic link"));
        }
    }
    Ok(current)
}

/// A name usable as one path component: `[A-Za-z0-9._-]` (others become `_`), at most 100
/// characters, never empty, never starting with `.` (so never `.` or `..`).
pub fn sanitize(name: &str) -> String {
    let mut out: String = name
        .chars()
        .take(100)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() || out.starts_with('.') {
        out.insert(0, '_');
    }
    out
}

/// Directory names for a list of solver specifications: the solver id, with `-2`, `-3`
/// appended when an id appears more than once.
pub fn solver_dirs(ids: &[String]) -> Vec<String> {
    ids.iter()
        .enumerate()
        .map(|(k, id)| {
            let before = ids[..k].iter().filter(|x| *x == id).count();
            if before == 0 {
                id.clone()
            } else {
                format!("{id}-{}", before + 1)
            }
        })
        .collect()
}

/// `base` if nothing is there, else the first free `base-2`, `base-3`, … (up to 9999): a
/// new directory for a run whose output directory was not given.
pub fn fresh_dir(base: &Path) -> PathBuf {
    if std::fs::symlink_metadata(base).is_err() {
        return base.to_path_buf();
    }
    let name = base
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    (2..10_000)
        .map(|k| base.with_file_name(format!("{name}-{k}")))
        .find(|p| std::fs::symlink_metadata(p).is_err())
        .unwrap_or_else(|| base.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_solver_ids_get_suffixes() {
        let ids = vec!["ncp-admm".to_string(), "lcp-pgs".into(), "ncp-admm".into()];
        assert_eq!(solver_dirs(&ids), vec!["ncp-admm", "lcp-pgs", "ncp-admm-2"]);
    }

    #[test]
    fn sanitize_keeps_one_safe_component() {
        assert_eq!(sanitize("ncp-admm:eps_abs=1e-8"), "ncp-admm_eps_abs_1e-8");
        assert_eq!(sanitize(".."), "_..");
        assert_eq!(sanitize("."), "_.");
        assert_eq!(sanitize(""), "_");
        assert_eq!(sanitize("/etc/passwd"), "_etc_passwd");
        assert_eq!(sanitize(&"x".repeat(300)).len(), 100);
    }

    #[test]
    fn manifest_paths_must_stay_inside() {
        let dir = Path::new("/tmp");
        for bad in ["../../etc", "/etc", "a/../../b", "", "./a"] {
            assert!(checked_relative(dir, bad).is_err(), "{bad}");
        }
        assert!(checked_relative(dir, "scenario/solver").is_ok());
    }
}
