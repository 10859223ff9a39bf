//! The gradient study the contact models paper leaves as future work ("spurious contact
//! forces may catastrophically impact the computation of derivatives", §IV-B): the
//! gradient of a task quantity under every contact model and solver, by the simulator's
//! step derivatives and by central differences of the same simulator, run by
//! `contactbench paper --paper gradients`.
//!
//! - `gradients`: the sliding cube's and the pushed cube's final position with respect to
//!   the push, Solo-12's foot impulse with respect to a knee torque; the spurious internal
//!   force at the same states; the relaxation's gradients beside NCP's.

mod study;
mod tasks;

use super::page::{short_summary_markdown, SummaryLine};
use super::Experiment;

/// Every experiment of the study.
pub fn all() -> Vec<&'static dyn Experiment> {
    vec![&study::Gradients]
}

/// Their ids.
pub fn ids() -> Vec<&'static str> {
    all().iter().map(|e| e.id()).collect()
}

/// True for the id of one of the study's experiments.
pub fn is_gradients(id: &str) -> bool {
    all().iter().any(|e| e.id() == id)
}

/// What the study does not cover, and why.
pub const NOT_REPRODUCED: [(&str, &str); 1] = [(
    "gradients through collision geometry that turns (curved shape against curved shape)",
    "the step derivatives hold the contact frames fixed (docs/derivatives.md); every \
     contact here is a sphere or a rounded corner on the ground, where that is exact",
)];

/// The summary page of a run of the study.
pub fn summary_markdown(lines: &[SummaryLine], quick: bool) -> String {
    short_summary_markdown(
        "The gradient study of \"Contact Models in Robotics\" (Le Lidec et al.)",
        "gradients",
        lines,
        quick,
        &NOT_REPRODUCED,
    )
}
