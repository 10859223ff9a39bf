//! Interruption by the user (SIGINT, SIGTERM, SIGHUP): run loops check [`requested`]
//! between steps and stop, so that staging directories are removed on the way out and
//! nothing half-written is published. The flag and the signal handling live with the
//! output discipline ([`crate::output::signal`]).

pub use crate::output::signal::{request, requested};
