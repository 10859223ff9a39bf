//! Interruption by the user (SIGINT, SIGTERM): the command line's signal handler calls
//! [`request`]; run loops check [`requested`] between steps and stop, so that staging
//! directories are removed on the way out and nothing half-written is published.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Asks every run of this process to stop at its next step.
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Whether an interruption was requested.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}
