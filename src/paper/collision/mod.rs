//! The collision papers, reproduced: GJK++ (Montaut et al., "GJK++: Leveraging
//! Acceleration Methods for Faster Collision Detection", T-RO; `../shared/papers/001_…`),
//! its earlier version "Collision Detection Accelerated: An Optimization Perspective"
//! (`003_…`, CDA below) and the tutorial slides (`004_…`, whose table is GJK++ Tab. II).
//! One [`Experiment`] per table and figure, run by `contactbench paper --paper collision`
//! (or `--only gjk-tab1,…`), each page with the paper's numbers beside ours and its claims
//! tested on our measurements.
//!
//! The protocol is the papers' (GJK++ §IV): duality-gap tolerance `ε = 1e-8`, collision
//! threshold `ε_col = √ε = 1e-4` m, GJK started from the difference of the bounding-box
//! centres, each problem timed as the mean of the fastest 90 % of 100 runs, 100 random
//! poses per pair of shapes moved along their closest points' axis to fixed distances,
//! ellipsoids with semi-axes drawn from `N(0.1, 0.025)` m. Meshes are convex hulls of the
//! robots' meshes of the `example-robot-data` wheel ([`corpus`]).

pub mod bench;
pub mod corpus;
mod fig11;
mod fig13;
mod fig7;
mod fig8;
mod iterations;
mod mesh_figures;
mod qp_table;
mod tab1;

use plotters::style::RGBColor;

use super::claims::{Claim, Verdict};
use super::page::{short_summary_markdown, SummaryLine};
use super::Experiment;
use crate::collision::{GjkVariant, MomentumSchedule};
use crate::report::style::{Dash, LineStyle, Marker};

/// Every collision experiment, in the papers' order.
pub fn all() -> Vec<&'static dyn Experiment> {
    vec![
        &tab1::GJK_TAB1,
        &qp_table::QpTable,
        &fig7::Fig7,
        &fig8::Fig8,
        &mesh_figures::FIG9,
        &mesh_figures::FIG10,
        &fig11::Fig11,
        &fig13::Fig13,
        &tab1::CDA_TAB1,
        &iterations::Iterations,
    ]
}

/// Their ids.
pub fn ids() -> Vec<&'static str> {
    all().iter().map(|e| e.id()).collect()
}

/// True for the id of a collision experiment.
pub fn is_collision(id: &str) -> bool {
    all().iter().any(|e| e.id() == id)
}

/// What the papers show that is not reproduced, and why.
pub const NOT_REPRODUCED: [(&str, &str); 3] = [
    (
        "GJK++ Fig. 12 (FCL's GJK, libccd's GJK and MPR, Bullet)",
        "none of these libraries is linked here; GJK itself is compared with coal 3 \
         (HPP-FCL's successor, the papers' implementation) on the same problems by \
         tools/coal_gjk.sh (docs/collision.md)",
    ),
    (
        "CDA Fig. 4 (duality gap along the iterations of one pair)",
        "a per-pair illustration; the iteration counts it explains are Fig. 7 and the \
         iterations table (cda-tab2)",
    ),
    (
        "GJK++ Fig. 14 (the YCB objects dropped in a funnel by Bullet)",
        "the warm-start study (gjk-fig13) runs on smooth synthetic trajectories of the \
         robots' meshes instead: no mesh-mesh rigid-body simulator here",
    ),
];

/// One GJK variant with its momentum schedule, as a row or curve of the pages.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Algo {
    /// Label in tables and legends.
    pub label: &'static str,
    /// Short label, under a box of a box plot.
    pub short: &'static str,
    /// Variant.
    pub variant: GjkVariant,
    /// Momentum schedule.
    pub schedule: MomentumSchedule,
}

/// Vanilla GJK (Alg. 4).
pub const GJK: Algo = Algo {
    label: "GJK",
    short: "GJK",
    variant: GjkVariant::Vanilla,
    schedule: MomentumSchedule::Coal,
};
/// Polyak with HPP-FCL's `δ_k = 1/(k+1)`.
pub const POLYAK_COAL: Algo = Algo {
    label: "Polyak δ=1/(k+1)",
    short: "Polyak 1/(k+1)",
    variant: GjkVariant::Polyak,
    schedule: MomentumSchedule::Coal,
};
/// Polyak with the paper's `δ_k = (k+1)/(k+3)`.
pub const POLYAK_PAPER: Algo = Algo {
    label: "Polyak δ=(k+1)/(k+3)",
    short: "Polyak (k+1)/(k+3)",
    variant: GjkVariant::Polyak,
    schedule: MomentumSchedule::Paper,
};
/// Polyak with the normalization of Alg. 7 (GJK++ Fig. 8).
pub const POLYAK_NORMALIZED: Algo = Algo {
    label: "Polyak normalized δ=1/(k+1)",
    short: "Polyak norm.",
    variant: GjkVariant::PolyakNormalized,
    schedule: MomentumSchedule::Coal,
};
/// Nesterov with normalization and the paper's `δ_k = (k+1)/(k+3)` (Alg. 6, 7).
pub const NESTEROV_PAPER: Algo = Algo {
    label: "Nesterov normalized δ=(k+1)/(k+3)",
    short: "Nesterov norm. (k+1)/(k+3)",
    variant: GjkVariant::Nesterov { normalize: true },
    schedule: MomentumSchedule::Paper,
};
/// Nesterov with normalization and HPP-FCL's `δ_k = (k+2)/(k+3)`.
pub const NESTEROV_COAL: Algo = Algo {
    label: "Nesterov normalized δ=(k+2)/(k+3)",
    short: "Nesterov norm. (k+2)/(k+3)",
    variant: GjkVariant::Nesterov { normalize: true },
    schedule: MomentumSchedule::Coal,
};
/// Nesterov without normalization (CDA Alg. 7; GJK++ for strictly convex shapes).
pub const NESTEROV_RAW: Algo = Algo {
    label: "Nesterov unnormalized",
    short: "Nesterov raw",
    variant: GjkVariant::Nesterov { normalize: false },
    schedule: MomentumSchedule::Paper,
};

/// The variants of the timing tables and mesh figures.
pub const MESH_ALGOS: [Algo; 5] = [
    GJK,
    POLYAK_COAL,
    POLYAK_PAPER,
    NESTEROV_PAPER,
    NESTEROV_COAL,
];
/// The variants of the ellipsoid figure (strictly convex shapes: GJK++ runs Nesterov
/// without normalization there, and the normalized one is shown beside it).
pub const ELLIPSOID_ALGOS: [Algo; 5] =
    [GJK, POLYAK_COAL, POLYAK_PAPER, NESTEROV_RAW, NESTEROV_PAPER];

/// A fixed look per variant in every figure.
pub fn algo_style(algo: &Algo) -> LineStyle {
    let (color, dash, marker) = match (algo.variant, algo.schedule) {
        (GjkVariant::Vanilla, _) => (RGBColor(0, 158, 115), Dash::Solid, Marker::Circle),
        (GjkVariant::Polyak, MomentumSchedule::Coal) => {
            (RGBColor(0, 114, 178), Dash::Solid, Marker::Triangle)
        }
        (GjkVariant::Polyak, MomentumSchedule::Paper) => (
            RGBColor(86, 180, 233),
            Dash::Dashed { on: 10, off: 5 },
            Marker::Triangle,
        ),
        (GjkVariant::PolyakNormalized, _) => (
            RGBColor(31, 59, 115),
            Dash::Dashed { on: 3, off: 4 },
            Marker::Square,
        ),
        (GjkVariant::Nesterov { normalize: true }, MomentumSchedule::Paper) => {
            (RGBColor(213, 94, 0), Dash::Solid, Marker::Cross)
        }
        (GjkVariant::Nesterov { normalize: true }, MomentumSchedule::Coal) => (
            RGBColor(230, 159, 0),
            Dash::Dashed { on: 10, off: 5 },
            Marker::Cross,
        ),
        (GjkVariant::Nesterov { normalize: false }, _) => (
            RGBColor(204, 121, 167),
            Dash::Dashed { on: 3, off: 4 },
            Marker::Square,
        ),
    };
    LineStyle {
        color,
        dash,
        marker,
    }
}

/// A claim the data here cannot test, with the computed reason: the third verdict.
pub fn not_measurable(claim: &str, test: &str, reason: &str) -> Claim {
    Claim {
        claim: claim.to_string(),
        test: test.to_string(),
        measured: "–".to_string(),
        verdict: Verdict::NotMeasurable(reason.to_string()),
        threshold: String::new(),
        margin: None,
        why: None,
        timing: false,
    }
}

/// Mean and (population) standard deviation; NaN for no sample.
pub fn mean_std(values: &[f64]) -> (f64, f64) {
    if values.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

/// The `q`-quantile (0 ≤ q ≤ 1, linear interpolation); NaN for no sample.
pub fn quantile(values: &[f64], q: f64) -> f64 {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted.sort_by(f64::total_cmp);
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// `mean ± std` with a precision suited to the magnitude.
pub fn pm(mean: f64, std: f64) -> String {
    if !mean.is_finite() {
        return "–".into();
    }
    let digits = if mean.abs() >= 100.0 {
        0
    } else if mean.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{mean:.digits$} ± {std:.digits$}")
}

/// The summary page of a collision run.
pub fn summary_markdown(lines: &[SummaryLine], quick: bool) -> String {
    short_summary_markdown(
        "GJK++ and \"Collision Detection Accelerated\" (Montaut et al.)",
        "collision",
        lines,
        quick,
        &NOT_REPRODUCED,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_and_skip_non_finite_values() {
        let v = [3.0, 1.0, f64::NAN, 2.0];
        assert_eq!(quantile(&v, 0.5), 2.0);
        assert_eq!(quantile(&v, 0.25), 1.5);
        assert!(quantile(&[], 0.5).is_nan());
    }

    #[test]
    fn ids_are_unique_and_distinct_from_the_contact_paper() {
        let ids = ids();
        for (k, id) in ids.iter().enumerate() {
            assert!(!ids[..k].contains(id), "{id} twice");
            assert!(
                !crate::paper::experiments::ids().contains(id),
                "{id} clashes"
            );
        }
    }
}
