//! Output directories: a manifest of runs (`contactbench.json`), a marker that says which
//! files contactbench wrote, and atomic publication.
//!
//! ```text
//! OUT/contactbench.json                 manifest: every run with its summary
//! OUT/.contactbench-output.json         marker: run id and the files written
//! OUT/<scenario>/<solver>/steps.csv     one row per step
//! OUT/<scenario>/<solver>/contacts.csv  one row per contact and step
//! OUT/<scenario>/<solver>/summary.json  the run's summary
//! ```
//!
//! What contactbench promises about an output directory (docs/reliability.md):
//! - **complete or absent**: everything is written into a staging directory beside the
//!   target (`.<name>.staging-<run id>`), renamed onto it at the end; a failed or
//!   interrupted command removes its staging directory and leaves the target untouched;
//! - **never touch what is not ours**: a directory is replaced only when it carries our
//!   marker, every file in it is listed in that marker (a file the user added refuses the
//!   replacement, naming the file), and replacing was asked for ([`Replace::Ours`],
//!   `--force` on the command line); an existing directory without our marker is never
//!   replaced, emptied or written into; the current directory and its parents never are;
//! - **one writer**: a lock file beside the target (`.<name>.lock`, an OS file lock that
//!   dies with its process) refuses a second concurrent writer.

use std::fs::{File, OpenOptions};
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::recorder::{read_json, write_json, OutputError, RecordError, RunSummary};

/// Name of the manifest file at the root of a results directory.
pub const MANIFEST: &str = "contactbench.json";

/// Name of the marker file that identifies a directory contactbench wrote.
pub const MARKER: &str = ".contactbench-output.json";

/// Deepest directory tree walked when listing or checking an output directory.
const MAX_WALK_DEPTH: usize = 16;

/// The marker written in every output directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputMarker {
    /// Unique id of the command that wrote the directory.
    pub run_id: String,
    /// `contactbench <version>`.
    pub created_by: String,
    /// Every file written, relative to the directory, `/`-separated, sorted.
    pub files: Vec<String>,
}

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

/// A unique id for this command: time (ns since the epoch) and process id, in hex.
pub fn new_run_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{nanos:x}-{:x}", std::process::id())
}

/// Whether an existing output directory may be replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replace {
    /// Never: the target must not exist (or be an empty directory).
    Never,
    /// When it is ours: it carries our marker and holds only the files the marker lists.
    Ours,
}

/// Staging directories and lock files alive in this process, removed by
/// [`remove_live_outputs`] when the process is stopped by a signal.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn register(path: &Path) {
    LIVE.lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(path.to_path_buf());
}

fn unregister(path: &Path) {
    LIVE.lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|p| p != path);
}

/// Removes every staging directory and lock file of this process (for a signal handler
/// about to exit): a killed command leaves nothing behind.
pub fn remove_live_outputs() {
    let paths = std::mem::take(&mut *LIVE.lock().unwrap_or_else(|e| e.into_inner()));
    for path in paths {
        if path.is_dir() {
            let _ = std::fs::remove_dir_all(&path);
        } else {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// An exclusive lock on an output directory: the file `.<name>.lock` beside it, locked
/// with the OS (released when the process dies), removed when dropped.
#[derive(Debug)]
struct DirLock {
    path: PathBuf,
    _file: File,
}

impl DirLock {
    fn acquire(target: &Path, lock: PathBuf) -> Result<Self, RecordError> {
        for _ in 0..3 {
            let file = OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&lock)
                .map_err(|error| io_error(&lock, error))?;
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(OutputError::Locked {
                        path: target.display().to_string(),
                        lock: lock.display().to_string(),
                    }
                    .into())
                }
                Err(std::fs::TryLockError::Error(error)) => return Err(io_error(&lock, error)),
            }
            // The previous holder removes the file when done: if it did so between our
            // open and our lock, we hold a lock on a file nobody else will see; retry.
            if same_file(&file, &lock) {
                register(&lock);
                return Ok(Self {
                    path: lock,
                    _file: file,
                });
            }
        }
        Err(OutputError::Locked {
            path: target.display().to_string(),
            lock: lock.display().to_string(),
        }
        .into())
    }
}

#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_file: &File, path: &Path) -> bool {
    path.is_file()
}

impl Drop for DirLock {
    fn drop(&mut self) {
        // Removed while still locked, so that a waiting process retries on a new file.
        let _ = std::fs::remove_file(&self.path);
        unregister(&self.path);
    }
}

fn io_error(path: &Path, error: std::io::Error) -> RecordError {
    RecordError::Io {
        path: path.display().to_string(),
        error,
    }
}

fn refused(path: &Path, message: impl Into<String>) -> RecordError {
    OutputError::Refused {
        path: path.display().to_string(),
        message: message.into(),
    }
    .into()
}

/// What is at the target before publication.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TargetState {
    Absent,
    EmptyDir,
    Ours,
}

/// Checks what is at `target` against the replacement policy.
fn target_state(target: &Path, replace: Replace) -> Result<TargetState, RecordError> {
    let meta = match std::fs::symlink_metadata(target) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(TargetState::Absent),
        Err(e) => return Err(io_error(target, e)),
        Ok(meta) => meta,
    };
    if meta.file_type().is_symlink() {
        return Err(refused(
            target,
            "is a symbolic link; contactbench never replaces it",
        ));
    }
    if !meta.is_dir() {
        return Err(refused(
            target,
            "exists and is not a directory; contactbench never replaces it",
        ));
    }
    if let (Ok(cwd), Ok(canonical)) = (std::env::current_dir(), target.canonicalize()) {
        if cwd.starts_with(&canonical) {
            return Err(refused(
                target,
                "is the current directory or one of its parents; choose a new directory",
            ));
        }
    }
    let mut entries = std::fs::read_dir(target).map_err(|e| io_error(target, e))?;
    if entries.next().is_none() {
        return Ok(TargetState::EmptyDir);
    }
    let Ok(marker) = read_json::<OutputMarker>(&target.join(MARKER)) else {
        return Err(refused(
            target,
            "exists and was not written by contactbench (no readable marker file); \
             contactbench never replaces it: choose a new directory",
        ));
    };
    if replace == Replace::Never {
        return Err(refused(
            target,
            format!(
                "holds earlier contactbench results (run {}); pass --force to replace them, \
                 or choose a new directory",
                marker.run_id
            ),
        ));
    }
    check_ours(target, &marker)?;
    Ok(TargetState::Ours)
}

/// Every file under `dir` is the marker or listed in it; a subdirectory with a marker of
/// its own (a report) is checked against that one.
fn check_ours(dir: &Path, marker: &OutputMarker) -> Result<(), RecordError> {
    let mut files = Vec::new();
    list_files(dir, dir, &mut files, 0)?;
    for (rel, path) in files {
        if rel == MARKER || marker.files.binary_search(&rel).is_ok() || is_nested_work_file(&rel) {
            continue;
        }
        // A file of a nested output directory (with its own marker) is checked by it.
        let nested = Path::new(&rel)
            .ancestors()
            .skip(1)
            .filter(|a| !a.as_os_str().is_empty())
            .find(|a| dir.join(a).join(MARKER).is_file());
        if let Some(sub) = nested {
            let sub_dir = dir.join(sub);
            let sub_marker: OutputMarker = read_json(&sub_dir.join(MARKER))?;
            let inner = rel[sub.as_os_str().len() + 1..].to_string();
            if inner == MARKER || sub_marker.files.binary_search(&inner).is_ok() {
                continue;
            }
        }
        return Err(refused(
            &path,
            format!(
                "was not written by contactbench; move it out of {} before replacing it",
                dir.display()
            ),
        ));
    }
    Ok(())
}

/// Every file (and symbolic link, and anything that is not a directory) under `dir`, as
/// (`/`-separated path relative to `root`, full path).
fn list_files(
    root: &Path,
    dir: &Path,
    out: &mut Vec<(String, PathBuf)>,
    depth: usize,
) -> Result<(), RecordError> {
    if depth > MAX_WALK_DEPTH {
        return Err(refused(dir, "is nested too deeply for an output directory"));
    }
    let entries = std::fs::read_dir(dir).map_err(|e| io_error(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| io_error(dir, e))?;
        let path = entry.path();
        let kind = entry.file_type().map_err(|e| io_error(&path, e))?;
        if kind.is_dir() {
            list_files(root, &path, out, depth + 1)?;
        } else {
            let rel = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            out.push((rel, path));
        }
    }
    Ok(())
}

/// Removes `.<name>.staging-*` directories beside the target: only the holder of the
/// target's lock creates them, so when we hold it they were left by a process that was
/// killed without a chance to clean up (SIGKILL, power loss).
fn remove_stale_staging(parent: &Path, name: &str) {
    let prefix = format!(".{name}.staging-");
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let file_name = entry.file_name().to_string_lossy().into_owned();
        if file_name.starts_with(&prefix) && entry.file_type().is_ok_and(|t| t.is_dir()) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Whether a top-level entry of an output directory is the lock file or a staging
/// directory of a nested output (a report being written, or left by a killed process).
fn is_nested_work_file(rel: &str) -> bool {
    let first = rel.split('/').next().unwrap_or(rel);
    first.starts_with('.') && (first.ends_with(".lock") || first.contains(".staging-"))
}

/// A staging directory beside the target, renamed onto it by [`Staging::publish`] and
/// removed if dropped before (error, panic, interruption). Holds the target's lock.
#[derive(Debug)]
pub struct Staging {
    temp: PathBuf,
    target: PathBuf,
    replace: Replace,
    run_id: String,
    published: bool,
    _lock: DirLock,
}

impl Staging {
    /// A staging directory for `target` that may replace an earlier output of ours
    /// ([`Replace::Ours`]): for derived outputs such as a report.
    pub fn new(target: &Path) -> Result<Self, RecordError> {
        Self::create(target, Replace::Ours)
    }

    /// Takes the target's lock, checks the target against `replace` (before anything is
    /// computed, so that a refusal comes first) and creates `.<name>.staging-<run id>`.
    pub fn create(target: &Path, replace: Replace) -> Result<Self, RecordError> {
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| !n.is_empty())
            .ok_or_else(|| {
                refused(
                    target,
                    "is not a directory name (use a path such as results/run1)",
                )
            })?;
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&parent).map_err(|e| io_error(&parent, e))?;
        let lock = DirLock::acquire(target, parent.join(format!(".{name}.lock")))?;
        remove_stale_staging(&parent, &name);
        target_state(target, replace)?;
        let run_id = new_run_id();
        let temp = parent.join(format!(".{name}.staging-{run_id}"));
        std::fs::create_dir(&temp).map_err(|e| io_error(&temp, e))?;
        register(&temp);
        Ok(Self {
            temp,
            target: target.to_path_buf(),
            replace,
            run_id,
            published: false,
            _lock: lock,
        })
    }

    /// Where to write.
    pub fn path(&self) -> &Path {
        &self.temp
    }

    /// The run id written in the marker.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Writes the marker (listing every file written), then puts the staging directory in
    /// place of the target: an absent target or an empty directory is simply replaced;
    /// an earlier output of ours (checked again) is moved aside, replaced, then removed.
    pub fn publish(mut self) -> Result<PathBuf, RecordError> {
        if super::interrupt::requested() {
            return Err(OutputError::Interrupted {
                path: self.target.display().to_string(),
            }
            .into());
        }
        let mut files = Vec::new();
        list_files(&self.temp, &self.temp, &mut files, 0)?;
        let mut files: Vec<String> = files.into_iter().map(|(rel, _)| rel).collect();
        files.sort();
        let marker = OutputMarker {
            run_id: self.run_id.clone(),
            created_by: format!("contactbench {}", env!("CARGO_PKG_VERSION")),
            files,
        };
        write_json(&self.temp.join(MARKER), &marker)?;
        match target_state(&self.target, self.replace)? {
            TargetState::Absent => {}
            TargetState::EmptyDir => {
                std::fs::remove_dir(&self.target).map_err(|e| io_error(&self.target, e))?;
            }
            TargetState::Ours => return self.swap(),
        }
        std::fs::rename(&self.temp, &self.target).map_err(|e| io_error(&self.target, e))?;
        self.published = true;
        unregister(&self.temp);
        Ok(self.target.clone())
    }

    /// Replaces an earlier output of ours: old → aside, staging → target, aside removed.
    fn swap(mut self) -> Result<PathBuf, RecordError> {
        let aside = self.temp.with_file_name(format!(
            "{}.old",
            self.temp
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
        ));
        std::fs::rename(&self.target, &aside).map_err(|e| io_error(&self.target, e))?;
        if let Err(e) = std::fs::rename(&self.temp, &self.target) {
            // Put the earlier output back; the staging directory is removed on drop.
            let _ = std::fs::rename(&aside, &self.target);
            return Err(io_error(&self.target, e));
        }
        self.published = true;
        unregister(&self.temp);
        std::fs::remove_dir_all(&aside).map_err(|e| io_error(&aside, e))?;
        Ok(self.target.clone())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.published {
            // Best effort: a failed command must not leave its partial output behind.
            let _ = std::fs::remove_dir_all(&self.temp);
            unregister(&self.temp);
        }
    }
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
