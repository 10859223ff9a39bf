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

use super::page::SummaryLine;
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
    let mut out = String::from(
        "# \"Differentiable Collision Detection: a Randomized Smoothing Approach\" \
         (Montaut et al.), reproduced\n\n",
    );
    out.push_str(&format!(
        "Written by `contactbench paper --paper smoothing{} --out DIR`. Each page puts the \
         paper's numbers beside ours and tests the paper's claims on our measurements; a \
         claim that does not hold is a finding, reported with its numbers.\n\n",
        if quick { " --quick" } else { "" }
    ));
    out.push_str(
        "| experiment | paper | claims that hold | page | wall time (s) |\n|---|---|---|---|---|\n",
    );
    for line in lines {
        let (score, link) = match &line.outcome {
            Ok(page) => {
                let tally = page.tally();
                (
                    format!("{} / {}", tally.holds, tally.total()),
                    format!("[{}]({}/README.md)", line.id, line.id),
                )
            }
            Err(e) => (format!("error: {e}"), "–".to_string()),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {:.1} |\n",
            line.title, line.paper_ref, score, link, line.seconds
        ));
    }
    out.push_str("\n## Claims, one line each\n\n");
    for line in lines {
        if let Ok(page) = &line.outcome {
            for c in &page.claims {
                out.push_str(&format!(
                    "- {} ({}): {}; {} ({}).\n",
                    line.paper_ref,
                    line.id,
                    c.claim,
                    c.verdict.text(),
                    c.measured
                ));
            }
        }
    }
    out.push_str("\n## Not reproduced\n\n");
    for (what, why) in NOT_REPRODUCED {
        out.push_str(&format!("- {what}: {why}\n"));
    }
    out
}
