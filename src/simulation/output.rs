//! Results directories: a manifest of runs (`contactbench.json`) and atomic publication
//! (everything is written into a temporary sibling directory renamed at the end, so a
//! failed command leaves nothing half-written in `--out`).
//!
//! ```text
//! OUT/contactbench.json                 manifest: every run with its summary
//! OUT/<scenario>/<solver>/steps.csv     one row per step
//! OUT/<scenario>/<solver>/contacts.csv  one row per contact and step
//! OUT/<scenario>/<solver>/summary.json  the run's summary
//! ```

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::recorder::{read_json, write_json, RecordError, RunRecord, RunSummary};

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
}

impl ResultsManifest {
    /// Reads `dir/contactbench.json`.
    pub fn read(dir: &Path) -> Result<Self, RecordError> {
        read_json(&dir.join(MANIFEST))
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

/// A directory name made of `[A-Za-z0-9._-]` only.
pub fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Writes a run's files under `root/<scenario>/<solver_dir>` and returns its entry.
pub fn write_run(
    root: &Path,
    record: &RunRecord,
    solver_dir: &str,
) -> Result<RunEntry, RecordError> {
    let rel = format!("{}/{}", sanitize(&record.scenario), sanitize(solver_dir));
    record.write(&root.join(&rel))?;
    Ok(RunEntry {
        path: rel,
        summary: record.summary(),
    })
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

/// A temporary directory beside the final one, renamed onto it by [`Staging::publish`] and
/// removed if dropped before.
#[derive(Debug)]
pub struct Staging {
    temp: PathBuf,
    target: PathBuf,
    published: bool,
}

impl Staging {
    /// Creates `<target>.tmp-<pid>` beside `target`. Refuses a `target` that exists, is not
    /// empty and is not a results directory (no manifest), so that nothing else is replaced.
    pub fn new(target: &Path) -> Result<Self, RecordError> {
        let io = |path: &Path, error| RecordError::Io {
            path: path.display().to_string(),
            error,
        };
        if target.exists() && !is_replaceable(target) {
            return Err(io(
                target,
                std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    "exists and is not a contactbench results directory; refusing to replace it",
                ),
            ));
        }
        let name = target
            .file_name()
            .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
        let temp = target.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
        if temp.exists() {
            std::fs::remove_dir_all(&temp).map_err(|e| io(&temp, e))?;
        }
        std::fs::create_dir_all(&temp).map_err(|e| io(&temp, e))?;
        Ok(Self {
            temp,
            target: target.to_path_buf(),
            published: false,
        })
    }

    /// Where to write.
    pub fn path(&self) -> &Path {
        &self.temp
    }

    /// Replaces the target by the temporary directory.
    pub fn publish(mut self) -> Result<PathBuf, RecordError> {
        let io = |path: &Path, error| RecordError::Io {
            path: path.display().to_string(),
            error,
        };
        if self.target.exists() {
            std::fs::remove_dir_all(&self.target).map_err(|e| io(&self.target, e))?;
        }
        std::fs::rename(&self.temp, &self.target).map_err(|e| io(&self.target, e))?;
        self.published = true;
        Ok(self.target.clone())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.published {
            // Best effort: a failed command must not leave its partial output behind.
            let _ = std::fs::remove_dir_all(&self.temp);
        }
    }
}

/// An empty directory or one holding a manifest (or a report) may be replaced.
fn is_replaceable(dir: &Path) -> bool {
    dir.join(MANIFEST).is_file()
        || dir.join("report.md").is_file()
        || std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_none())
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
    fn sanitize_keeps_safe_characters() {
        assert_eq!(sanitize("ncp-admm:eps_abs=1e-8"), "ncp-admm_eps_abs_1e-8");
    }
}
