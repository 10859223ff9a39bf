//! Interruption (SIGINT, SIGTERM, SIGHUP) and the work files alive in this process.
//!
//! The command line's signal handler calls [`on_signal`]. The first signal asks every
//! loop to stop ([`requested`]: run loops between steps, corpus runs between tasks), so
//! that the command returns through its error path and removes its staging directory;
//! a command with nothing alive on disk exits at once. If the command has not finished
//! [`GRACE`] later (an experiment or a solve that does not look at the flag), or at a
//! second signal, the work files are removed here and the process exits with 130. A
//! publication in progress is never cut: the removal waits for it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// Time a command has to stop by itself after the first signal.
pub const GRACE: Duration = Duration::from_secs(5);

/// Exit code of an interrupted command.
pub const EXIT_INTERRUPTED: i32 = 130;

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Asks every run of this process to stop at its next step.
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Whether an interruption was requested.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// A work file or directory of this process, and what to do with it on a signal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Live {
    /// A staging directory or a temporary file: removed.
    Temp(PathBuf),
    /// A lock file: removed.
    Lock(PathBuf),
    /// A target directory this process created: removed if empty.
    Created(PathBuf),
}

impl Live {
    fn path(&self) -> &Path {
        match self {
            Self::Temp(p) | Self::Lock(p) | Self::Created(p) => p,
        }
    }
}

static LIVE: Mutex<Vec<Live>> = Mutex::new(Vec::new());

/// Held while an output is being moved into place.
static PUBLISHING: Mutex<()> = Mutex::new(());

fn live() -> MutexGuard<'static, Vec<Live>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

pub(crate) fn register(entry: Live) {
    live().push(entry);
}

pub(crate) fn unregister(path: &Path) {
    live().retain(|e| e.path() != path);
}

/// Blocks the signal cleanup while held (a publication in progress).
pub(crate) fn publishing() -> MutexGuard<'static, ()> {
    PUBLISHING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether this process has work files on disk.
pub fn has_live_outputs() -> bool {
    !live().is_empty()
}

/// Removes every work file of this process: staging directories and temporary files,
/// then lock files, then the target directories it created if they are empty. Waits for
/// a publication in progress.
pub fn remove_live_outputs() {
    let _publishing = publishing();
    let mut entries = std::mem::take(&mut *live());
    entries.sort_by_key(|e| match e {
        Live::Temp(_) => 0,
        Live::Lock(_) => 1,
        Live::Created(_) => 2,
    });
    for entry in entries {
        let _ = match &entry {
            Live::Temp(p) if p.is_dir() => std::fs::remove_dir_all(p),
            Live::Temp(p) | Live::Lock(p) => std::fs::remove_file(p),
            Live::Created(p) => std::fs::remove_dir(p),
        };
    }
}

/// What the signal handler does (see the module's documentation).
pub fn on_signal() {
    if requested() {
        stop_now();
    }
    request();
    if !has_live_outputs() {
        std::process::exit(EXIT_INTERRUPTED);
    }
    eprintln!("\ninterrupted: stopping (press Ctrl-C again to stop at once)");
    std::thread::spawn(|| {
        std::thread::sleep(GRACE);
        stop_now();
    });
}

fn stop_now() -> ! {
    remove_live_outputs();
    std::process::exit(EXIT_INTERRUPTED)
}
