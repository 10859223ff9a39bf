//! One writer's output: checked and locked before any work, written into a staging
//! directory inside the target, moved into place at the end with the marker last.

use std::path::{Path, PathBuf};

use super::lock::{DirLock, LockKind};
use super::marker::{OutputMarker, Parent, MARKER};
use super::signal::{self, publishing, unregister};
use super::tree::{
    create_staging, delete_ours, digests, inspect, move_in, preflight, prepare_dir,
    remove_stale_staging, staged_files, verify_ours, Holds,
};
use super::{io_error, new_run_id, refused, target_name, OutputError};

/// Whether an existing output of ours may be replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replace {
    /// Never: the target must be absent or empty.
    Never,
    /// When it is ours: every file in it is listed in its marker and unchanged
    /// (`--force` on the command line).
    Ours,
}

/// What publishing does with an output of ours already there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The new output replaces the old one whole.
    Whole,
    /// The new files are added; those of the same names (ours, unchanged) are replaced;
    /// everything else is kept.
    Update,
}

/// A staging directory inside the target, moved into place by [`Staging::publish`] and
/// removed if dropped before (error, panic, interruption). Holds the target's lock.
#[derive(Debug)]
pub struct Staging {
    target: PathBuf,
    temp: PathBuf,
    run_id: String,
    replace: Replace,
    mode: Mode,
    nested_in: Option<Parent>,
    shared: Vec<String>,
    created_target: bool,
    published: bool,
    lock: Option<DirLock>,
}

impl Staging {
    /// Takes the target's lock and checks it against `replace` (before anything is
    /// computed, so that a refusal comes first): absent (created), empty (written in
    /// place) or an output of ours (replaced whole at publication, with
    /// [`Replace::Ours`]).
    pub fn create(target: &Path, replace: Replace) -> Result<Self, OutputError> {
        Self::open(target, replace, Mode::Whole, None)
    }

    /// An output nested in an output of ours (`parent`, which must carry our marker):
    /// `parent/name`, whose marker will name `parent` and `name`, so that replacing
    /// `parent` later knows it for ours.
    pub fn nested(parent: &Path, name: &str, replace: Replace) -> Result<Self, OutputError> {
        let outer = OutputMarker::read(parent).map_err(|e| {
            refused(
                parent,
                format!(
                    "was not written by contactbench ({e}); contactbench writes nothing into it"
                ),
            )
        })?;
        let safe = !name.is_empty()
            && name != "."
            && name != ".."
            && !name.contains(['/', '\\'])
            && !outer.is_shared(name);
        if !safe {
            return Err(refused(
                &parent.join(name),
                "is not a name for a nested output",
            ));
        }
        let parent_link = Parent {
            run_id: outer.run_id,
            path: name.to_string(),
        };
        Self::open(&parent.join(name), replace, Mode::Whole, Some(parent_link))
    }

    /// Adds files to an output of ours (or a new one), replacing those of the same names
    /// when they are ours and unchanged, keeping everything else: a corpus report next to
    /// its results.
    pub fn update(target: &Path) -> Result<Self, OutputError> {
        Self::open(target, Replace::Ours, Mode::Update, None)
    }

    /// Declares paths that several writers add to (recorded in the marker: never
    /// replaced, never deleted).
    pub fn share(mut self, paths: &[&str]) -> Self {
        self.shared = paths.iter().map(|p| p.to_string()).collect();
        self
    }

    fn open(
        target: &Path,
        replace: Replace,
        mode: Mode,
        nested_in: Option<Parent>,
    ) -> Result<Self, OutputError> {
        target_name(target)?;
        let created_target = prepare_dir(target)?;
        if !created_target {
            // A folder that is not ours is refused before our lock file goes into it.
            inspect(target)?;
        }
        let mut staging = Self {
            target: target.to_path_buf(),
            temp: PathBuf::new(),
            run_id: new_run_id(),
            replace,
            mode,
            nested_in,
            shared: Vec::new(),
            created_target,
            published: false,
            lock: None,
        };
        staging.lock = Some(DirLock::acquire(target, LockKind::Exclusive)?);
        remove_stale_staging(target);
        staging.check()?;
        staging.temp = create_staging(target, &staging.run_id)?;
        Ok(staging)
    }

    /// Checks what is at the target now; returns our files that publication replaces.
    fn check(&self) -> Result<Replaced, OutputError> {
        let marker = match inspect(&self.target)? {
            Holds::Nothing => return Ok(Replaced::default()),
            Holds::Marked(marker) => marker,
        };
        match self.mode {
            Mode::Whole => {
                if self.replace == Replace::Never {
                    return Err(refused(
                        &self.target,
                        format!(
                            "holds earlier contactbench results (run {}); pass --force to \
                             replace them, or choose a new directory",
                            marker.run_id
                        ),
                    ));
                }
                if !marker.shared.is_empty() {
                    return Err(refused(
                        &self.target,
                        "holds results that several contactbench processes add to (a \
                         bench-problems corpus or batch shards); contactbench never replaces \
                         it: choose a new directory",
                    ));
                }
                if marker.nested_in != self.nested_in {
                    return Err(refused(
                        &self.target,
                        "holds an output contactbench wrote for another place; move it away",
                    ));
                }
                let owned = verify_ours(&self.target, &marker)?;
                let mut files = owned.files;
                files.extend(owned.markers);
                Ok(Replaced {
                    marker: Some(marker),
                    files,
                })
            }
            Mode::Update => Ok(Replaced {
                marker: Some(marker),
                files: Vec::new(),
            }),
        }
    }

    /// Where to write.
    pub fn path(&self) -> &Path {
        &self.temp
    }

    /// The target directory.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The output's id, written in its marker.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Moves the staged files into the target and writes the marker last. Everything is
    /// checked again first (nothing changes when a check fails): the output of ours that
    /// is replaced, and every place a file goes. An interruption requested before
    /// publication publishes nothing.
    pub fn publish(mut self) -> Result<PathBuf, OutputError> {
        let _publishing = publishing();
        if signal::requested() {
            return Err(OutputError::Interrupted {
                path: self.target.display().to_string(),
            });
        }
        let staged = staged_files(&self.temp)?;
        let mut replaced = self.check()?;
        if self.mode == Mode::Update {
            replaced = self.update_replaced(replaced.marker, &staged)?;
        }
        let doomed = replaced.files.clone();
        preflight(&self.target, &staged, &|p| doomed.iter().any(|d| d == p))?;
        let mut entries = digests(&staged)?;
        let marker_path = self.target.join(MARKER);
        let (run_id, nested_in, mut shared) = match (&replaced.marker, self.mode) {
            (Some(old), Mode::Update) => {
                let kept = old
                    .files
                    .iter()
                    .filter(|f| staged.binary_search_by(|(r, _)| r.cmp(&f.path)).is_err());
                entries.extend(kept.cloned());
                entries.sort_by(|a, b| a.path.cmp(&b.path));
                (
                    old.run_id.clone(),
                    old.nested_in.clone(),
                    old.shared.clone(),
                )
            }
            _ => (self.run_id.clone(), self.nested_in.clone(), Vec::new()),
        };
        for path in &self.shared {
            if !shared.contains(path) {
                shared.push(path.clone());
            }
        }
        if replaced.marker.is_some() && self.mode == Mode::Whole {
            // The marker goes first: a directory caught half-replaced is no longer ours.
            std::fs::remove_file(&marker_path).map_err(|e| io_error(&marker_path, e))?;
        }
        delete_ours(&self.target, &replaced.files)?;
        move_in(&self.target, &staged)?;
        let marker = OutputMarker::new(run_id, entries, nested_in, shared);
        let staged_marker = self.temp.join(MARKER);
        marker.write_new(&staged_marker)?;
        std::fs::rename(&staged_marker, &marker_path).map_err(|e| io_error(&marker_path, e))?;
        self.published = true;
        let _ = std::fs::remove_dir_all(&self.temp);
        unregister(&self.temp);
        unregister(&self.target);
        Ok(self.target.clone())
    }

    /// In an update, the files of the old marker that staged files replace: each must be
    /// ours and unchanged; a file of another name is never touched.
    fn update_replaced(
        &self,
        marker: Option<OutputMarker>,
        staged: &[(String, PathBuf)],
    ) -> Result<Replaced, OutputError> {
        let mut files = Vec::new();
        for (rel, _) in staged {
            let place = self.target.join(rel);
            let taken = std::fs::symlink_metadata(&place).is_ok();
            let listed = marker.as_ref().and_then(|m| m.find(rel));
            if marker.as_ref().is_some_and(|m| m.is_shared(rel)) {
                return Err(refused(&place, "is a shared path; it is never replaced"));
            }
            match listed {
                Some(entry) if taken && super::marker::unchanged(&place, entry)? => {
                    files.push(place)
                }
                Some(_) if taken => {
                    return Err(refused(
                        &place,
                        "was changed after contactbench wrote it (or is not a regular file); \
                         contactbench does not overwrite it: move it away",
                    ))
                }
                _ => {}
            }
        }
        Ok(Replaced { marker, files })
    }
}

/// An output of ours that publication replaces, and its files to delete.
#[derive(Debug, Default)]
struct Replaced {
    marker: Option<OutputMarker>,
    files: Vec<PathBuf>,
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.published && !self.temp.as_os_str().is_empty() {
            // A failed command leaves none of its partial output behind.
            let _ = std::fs::remove_dir_all(&self.temp);
            unregister(&self.temp);
        }
        if let Some(mut lock) = self.lock.take() {
            lock.release();
        }
        if self.created_target {
            if !self.published {
                // Removed only when empty: what someone else put there meanwhile stays.
                let _ = std::fs::remove_dir(&self.target);
            }
            unregister(&self.target);
        }
    }
}
