//! The output discipline of every command that writes: where it may write, what it may
//! replace or delete, and how it cleans up when it fails or is interrupted. One
//! implementation, used by `run`, `batch`, `sweep`, `paper`, `report`, `bench-problems`,
//! `merge`, `dump`, `batch --write-baseline` and the problem writers; it depends on nothing
//! else in the crate.
//!
//! The rules (docs/reliability.md, "Outputs"):
//!
//! - **Write only into folders we created or marked.** An output directory is written when
//!   it is absent (we create it), empty (written into in place: its mode, owner and mount
//!   stay), or carries our marker ([`MARKER`]). Anything else is refused before any work.
//! - **Never through a symbolic link.** The target itself, anything where a file of ours
//!   goes, and every file we replace must be a real directory or a regular file.
//! - **Never delete what we did not write.** The marker lists every file written with its
//!   size and SHA-256; a file is ours only when it is listed and unchanged. A nested
//!   output (a report inside results) is ours only when its marker names the exact output
//!   and place it was written into ([`Parent`]). Replacing refuses, naming the first file
//!   that is not ours, before anything is deleted.
//! - **Names of our own.** Work files live inside the target, under names that start with
//!   `.contactbench-` and carry a signature (lock) or a stamp (staging): a user's
//!   `.data.lock` or `.mydata.staging-backup/` is never taken for ours.
//! - **One writer** ([`Staging`], an OS lock that dies with its process), or several
//!   writers adding to a shared store ([`SharedDir`], a shared lock).
//! - **Complete or absent**: files are written into a staging directory inside the target
//!   and moved into place at the end, the marker last; an error or a signal removes the
//!   staging directory and, when we created the target, the target (module [`signal`]).

mod file;
mod lock;
mod marker;
mod shared;
pub mod signal;
mod staging;
mod tree;

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use thiserror::Error;

pub use file::write_file;
pub use marker::{FileDigest, OutputMarker, Parent, MARKER};
pub use shared::SharedDir;
pub use staging::{Replace, Staging};

/// Prefix of every work file or directory contactbench makes inside an output directory.
pub const WORK_PREFIX: &str = ".contactbench-";

/// Deepest directory tree walked when checking an output directory.
const MAX_WALK_DEPTH: usize = 16;

/// Most entries walked when checking an output directory.
const MAX_WALK_ENTRIES: usize = 1_000_000;

/// Why an output was refused, could not be written, or was not published.
#[derive(Debug, Error)]
pub enum OutputError {
    /// Writing there would replace or mix with something that is not ours, or that the
    /// user did not ask to replace.
    #[error("{path}: {message}")]
    Refused {
        /// The file or directory.
        path: String,
        /// Why, and what to do.
        message: String,
    },
    /// Another process is writing the same directory.
    #[error("{path}: another contactbench process is writing it (lock file {lock})")]
    Locked {
        /// The directory.
        path: String,
        /// The lock file.
        lock: String,
    },
    /// The output (or its parent directory) cannot be created or written.
    #[error("{path}: cannot be written: {error}")]
    Unwritable {
        /// The path.
        path: String,
        /// The operating system's error.
        error: std::io::Error,
    },
    /// Writing failed once the work had started (a full disk, a removed directory).
    #[error("{path}: {error}")]
    Io {
        /// The path.
        path: String,
        /// The operating system's error.
        error: std::io::Error,
    },
    /// The command was interrupted (SIGINT/SIGTERM/SIGHUP); nothing was published.
    #[error("interrupted: nothing was written to {path}")]
    Interrupted {
        /// The output that was not written.
        path: String,
    },
}

impl OutputError {
    /// Whether the error is about what the user asked for (an output that exists, is not
    /// ours, is locked or cannot be created): exit code 2 on the command line.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            Self::Refused { .. } | Self::Locked { .. } | Self::Unwritable { .. }
        )
    }
}

pub(crate) fn io_error(path: &Path, error: std::io::Error) -> OutputError {
    OutputError::Io {
        path: path.display().to_string(),
        error,
    }
}

pub(crate) fn refused(path: &Path, message: impl Into<String>) -> OutputError {
    OutputError::Refused {
        path: path.display().to_string(),
        message: message.into(),
    }
}

/// A unique id for one output of this process: time (ns since the epoch), process id and
/// a counter, in hex.
pub fn new_run_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{nanos:x}-{:x}-{count:x}", std::process::id())
}

/// The name of a target directory (its last component), or a refusal for `.`, `..`, `/`
/// and the empty path.
pub(crate) fn target_name(target: &Path) -> Result<String, OutputError> {
    target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty())
        .ok_or_else(|| {
            refused(
                target,
                "is not a directory name (use a path such as results/run1)",
            )
        })
}
