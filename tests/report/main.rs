//! `contactbench paper`: the contact paper's, the collision papers' and the gradient study's
//! pages; the figures they and `report` draw.

mod figures;
mod paper;
mod paper_collision;
mod paper_gradients;
mod paper_timing;
mod paper_walking;
mod snapshot;
mod tables;

use std::sync::{Mutex, MutexGuard};

/// The collision pages read their mesh directory from `CONTACTBENCH_MESHES`, which a test
/// sets in this process; a process's environment is shared by its threads (and read by C
/// libraries such as the fonts' without Rust's lock), so every test of this binary holds
/// this lock while it runs.
static ENVIRONMENT: Mutex<()> = Mutex::new(());

/// Holds the other tests of this binary off; a failed test does not stop the others.
fn environment_lock() -> MutexGuard<'static, ()> {
    ENVIRONMENT
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
