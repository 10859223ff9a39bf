//! An output several processes add to at once (the shards of a corpus run or of a batch):
//! each holds a shared lock, so that no single writer replaces it meanwhile, and writes
//! files whole into the paths its marker declares shared. The marker is created once, by
//! whichever writer comes first.

use std::path::{Path, PathBuf};

use super::file::place_file;
use super::lock::{DirLock, LockKind};
use super::marker::{OutputMarker, MARKER};
use super::signal::unregister;
use super::tree::{inspect, prepare_dir, Holds};
use super::{io_error, new_run_id, refused, target_name, OutputError};

/// An output directory held with a shared lock.
#[derive(Debug)]
pub struct SharedDir {
    target: PathBuf,
    marker: OutputMarker,
    created_target: bool,
    lock: Option<DirLock>,
}

impl SharedDir {
    /// Opens (creating when absent or empty) an output whose marker declares `shared`:
    /// an output of ours declaring at least those paths, or a new one. Anything else is
    /// refused before any work.
    pub fn open(target: &Path, shared: &[&str]) -> Result<Self, OutputError> {
        target_name(target)?;
        let created_target = prepare_dir(target)?;
        if !created_target {
            // A folder that is not ours is refused before our lock file goes into it.
            inspect(target)?;
        }
        let mut dir = Self {
            target: target.to_path_buf(),
            marker: OutputMarker::new(String::new(), Vec::new(), None, Vec::new()),
            created_target,
            lock: None,
        };
        dir.lock = Some(DirLock::acquire(target, LockKind::Shared)?);
        dir.marker = match inspect(target)? {
            Holds::Marked(marker) => marker,
            Holds::Nothing => create_marker(target, shared)?,
        };
        let declares = shared
            .iter()
            .all(|s| dir.marker.shared.iter().any(|m| m == s));
        if !declares {
            return Err(refused(
                target,
                format!(
                    "holds other contactbench results (not a store of {}); choose a new directory",
                    shared.join(", ")
                ),
            ));
        }
        Ok(dir)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.target
    }

    /// The output's marker.
    pub fn marker(&self) -> &OutputMarker {
        &self.marker
    }

    /// `rel` (a shared path or inside one) as a directory, created when absent; every
    /// directory on the way must be a real one.
    pub fn dir(&self, rel: &str) -> Result<PathBuf, OutputError> {
        self.check_shared(rel)?;
        let mut place = self.target.clone();
        for part in rel.split('/') {
            place.push(part);
            match std::fs::create_dir(&place) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if !std::fs::symlink_metadata(&place).is_ok_and(|m| m.is_dir()) {
                        return Err(refused(
                            &place,
                            "is not a directory; contactbench never writes through it",
                        ));
                    }
                }
                Err(e) => return Err(io_error(&place, e)),
            }
        }
        Ok(place)
    }

    /// Writes `bytes` whole at `rel` (in a shared path): a file already there is kept
    /// (`Ok(false)`) unless `replace`, and is replaced only when it is a regular file.
    pub fn write(&self, rel: &str, bytes: &[u8], replace: bool) -> Result<bool, OutputError> {
        self.check_shared(rel)?;
        let path = self.target.join(rel);
        let parent = match rel.rsplit_once('/') {
            Some((dir, _)) => self.dir(dir)?,
            None => self.target.clone(),
        };
        if !parent.starts_with(&self.target) {
            return Err(refused(&path, "is outside the output"));
        }
        place_file(&path, bytes, replace)
    }

    fn check_shared(&self, rel: &str) -> Result<(), OutputError> {
        let plain = !rel.is_empty()
            && rel
                .split('/')
                .all(|p| !p.is_empty() && p != "." && p != ".." && !p.contains('\\'));
        if plain && self.marker.is_shared(rel) {
            Ok(())
        } else {
            Err(refused(
                &self.target.join(rel),
                "is not a shared path of this output",
            ))
        }
    }
}

impl Drop for SharedDir {
    fn drop(&mut self) {
        if let Some(mut lock) = self.lock.take() {
            lock.release();
        }
        if self.created_target {
            if self.marker.run_id.is_empty() {
                // Refused before its marker was written: removed when still empty.
                let _ = std::fs::remove_dir(&self.target);
            }
            unregister(&self.target);
        }
    }
}

/// Writes a new marker declaring `shared`, whole and only if none is there yet; a marker
/// written meanwhile by another writer is read instead.
fn create_marker(target: &Path, shared: &[&str]) -> Result<OutputMarker, OutputError> {
    let marker = OutputMarker::new(
        new_run_id(),
        Vec::new(),
        None,
        shared.iter().map(|s| s.to_string()).collect(),
    );
    let text = serde_json::to_vec_pretty(&marker).map_err(|e| {
        io_error(
            target,
            std::io::Error::new(std::io::ErrorKind::InvalidData, e),
        )
    })?;
    if place_file(&target.join(MARKER), &text, false)? {
        Ok(marker)
    } else {
        OutputMarker::read(target)
    }
}
