//! "Differentiable Collision Detection: a Randomized Smoothing Approach" (Montaut et al.
//! 2023, `../shared/papers/002_…`), reproduced with [`crate::collision::smoothing`]: one
//! [`Experiment`] per table or study, run by `contactbench paper --paper smoothing` (or
//! `--only rs-tab2,…`), each page with the paper's numbers beside ours and its claims
//! tested on our measurements.
//!
//! - `rs-samples`: the error of each estimator against the exact derivative as the
//!   samples, the noise and the Gumbel neighbourhood grow (the paper's Fig. 6 study, on
//!   pairs with an oracle);
//! - `rs-tab2`: µs per derivative per estimator and setting, collision / no collision
//!   (Tab. II), on convex hulls of the robots' meshes;
//! - `rs-tab1`: contact-pose generation by Gauss-Newton on random 12-vertex ellipsoid
//!   meshes, terminal-cost quantiles per estimator (Tab. I).

mod samples;
mod tab1;
mod tab2;

use super::page::{short_summary_markdown, SummaryLine};
use super::Experiment;

/// Every experiment of the paper, in its order.
pub fn all() -> Vec<&'static dyn Experiment> {
    vec![&samples::Samples, &tab1::Tab1, &tab2::Tab2]
}

/// Their ids.
pub fn ids() -> Vec<&'static str> {
    all().iter().map(|e| e.id()).collect()
}

/// True for the id of one of this paper's experiments.
pub fn is_smoothing(id: &str) -> bool {
    all().iter().any(|e| e.id() == id)
}

/// What the paper shows that is not reproduced, and why.
pub const NOT_REPRODUCED: [(&str, &str); 2] = [
    (
        "Fig. 1-5 (YCB objects: witness-point clouds, soft-max weights, final poses)",
        "the YCB meshes are not here; the estimators' behaviour these pictures illustrate is \
         measured against exact derivatives instead (rs-samples)",
    ),
    (
        "Tab. II on the YCB dataset",
        "run on convex hulls of the robots' meshes (rs-tab2), chosen like the collision \
         pages' (docs/collision.md)",
    ),
];

/// The summary page of a run of this paper.
pub fn summary_markdown(lines: &[SummaryLine], quick: bool) -> String {
    short_summary_markdown(
        "\"Differentiable Collision Detection: a Randomized Smoothing Approach\" (Montaut et al.)",
        "smoothing",
        lines,
        quick,
        &NOT_REPRODUCED,
    )
}
