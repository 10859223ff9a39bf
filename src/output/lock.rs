//! The lock of an output directory: the file [`LOCK`] inside it, carrying a signature
//! (a file of that name without it is a user's and is never opened for writing nor
//! removed), locked with the OS (released when the process dies): exclusive for one
//! writer, shared for the writers of a store.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::signal::{register, unregister, Live};
use super::{io_error, new_run_id, refused, OutputError, WORK_PREFIX};

/// Name of the lock file inside an output directory.
pub const LOCK: &str = ".contactbench-lock";

/// Content of every lock file contactbench creates.
const SIGNATURE: &[u8] = b"contactbench output lock\n";

/// Exclusive (one writer) or shared (writers of a store).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LockKind {
    Exclusive,
    Shared,
}

/// A held lock; dropping it releases it and removes the file when nobody else holds it.
#[derive(Debug)]
pub(crate) struct DirLock {
    path: PathBuf,
    file: Option<File>,
}

impl DirLock {
    /// Takes the lock of `dir` without waiting: [`OutputError::Locked`] when another
    /// process holds it in a conflicting way.
    pub(crate) fn acquire(dir: &Path, kind: LockKind) -> Result<Self, OutputError> {
        let path = dir.join(LOCK);
        let locked = || OutputError::Locked {
            path: dir.display().to_string(),
            lock: path.display().to_string(),
        };
        for _ in 0..5 {
            let file = open_lock_file(dir, &path)?;
            let attempt = match kind {
                LockKind::Exclusive => file.try_lock(),
                LockKind::Shared => file.try_lock_shared(),
            };
            match attempt {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => return Err(locked()),
                Err(std::fs::TryLockError::Error(error)) => return Err(io_error(&path, error)),
            }
            // A holder removes the file when it leaves: if it did so between our open and
            // our lock, we hold a file nobody else will see; open again.
            if same_file(&file, &path) {
                // Removed on a signal only when exclusive: other writers may hold a
                // shared lock on the same file.
                if kind == LockKind::Exclusive {
                    register(Live::Lock(path.clone()));
                }
                return Ok(Self {
                    path,
                    file: Some(file),
                });
            }
        }
        Err(locked())
    }

    /// Releases the lock now.
    pub(crate) fn release(&mut self) {
        if let Some(file) = self.file.take() {
            // Removed only when no other process holds it (an exclusive lock is then
            // ours), so that a waiting writer retries on a new file.
            if file.try_lock().is_ok() && same_file(&file, &self.path) {
                let _ = std::fs::remove_file(&self.path);
            }
            unregister(&self.path);
        }
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        self.release();
    }
}

/// Opens the lock file of `dir`, creating it with its signature when absent; a file of
/// that name that contactbench did not create is refused, never written.
fn open_lock_file(dir: &Path, path: &Path) -> Result<File, OutputError> {
    for _ in 0..50 {
        match std::fs::symlink_metadata(path) {
            Ok(meta) if !meta.is_file() => {
                return Err(refused(
                    path,
                    "is in the way: contactbench keeps its lock under this name and did not \
                     create it; move it away",
                ))
            }
            Ok(_) => {
                let mut file = File::options()
                    .read(true)
                    .write(true)
                    .open(path)
                    .map_err(|e| io_error(path, e))?;
                let mut head = Vec::new();
                (&mut file)
                    .take(SIGNATURE.len() as u64 + 1)
                    .read_to_end(&mut head)
                    .map_err(|e| io_error(path, e))?;
                if head == SIGNATURE {
                    return Ok(file);
                }
                if !head.is_empty() {
                    return Err(refused(
                        path,
                        "is in the way: contactbench keeps its lock under this name and did \
                         not create it; move it away",
                    ));
                }
                // Empty: being created by a process without hard links; look again.
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => create_lock_file(dir, path)?,
            Err(e) => return Err(io_error(path, e)),
        }
    }
    Err(refused(
        path,
        "is an empty file: contactbench keeps its lock under this name; move it away",
    ))
}

/// Creates the lock file whole: its signature is written to a temporary file linked to
/// the lock's name (which fails if it exists), so nobody sees it half-written.
fn create_lock_file(dir: &Path, path: &Path) -> Result<(), OutputError> {
    let temp = dir.join(format!("{WORK_PREFIX}tmp-{}", new_run_id()));
    let mut file = File::options()
        .write(true)
        .create_new(true)
        .open(&temp)
        .map_err(|e| OutputError::Unwritable {
            path: dir.display().to_string(),
            error: e,
        })?;
    let written = file.write_all(SIGNATURE);
    drop(file);
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(io_error(&temp, e));
    }
    let linked = std::fs::hard_link(&temp, path);
    let _ = std::fs::remove_file(&temp);
    match linked {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        // A file system without hard links: create it in place.
        Err(_) => match File::options().write(true).create_new(true).open(path) {
            Ok(mut file) => file.write_all(SIGNATURE).map_err(|e| io_error(path, e)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(io_error(path, e)),
        },
    }
}

/// Whether `path` is the file we hold (checked with `head == SIGNATURE` by callers
/// listing a directory).
pub(crate) fn is_lock_file(path: &Path) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    if !meta.is_file() || meta.len() != SIGNATURE.len() as u64 {
        return false;
    }
    std::fs::read(path).is_ok_and(|bytes| bytes == SIGNATURE)
}

#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_file: &File, path: &Path) -> bool {
    path.is_file()
}
