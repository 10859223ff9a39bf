//! GJK++ Fig. 8 (and CDA Fig. 6): the support-direction normalization of Alg. 7 on and
//! off, on meshes in close proximity (0 < dist ≤ 0.1 m).

use std::sync::Arc;

use super::bench::{iterations, micros, run_all, Problem, Query, Results, Timing};
use super::mesh_figures::mesh_bench;
use super::{
    algo_style, mean_std, not_measurable, pm, Algo, GJK, NESTEROV_COAL, NESTEROV_PAPER,
    NESTEROV_RAW, POLYAK_COAL, POLYAK_NORMALIZED,
};
use crate::paper::claims::Claim;
use crate::paper::page::Page;
use crate::paper::{Context, Experiment, PaperError};
use crate::report::axis::Scale;
use crate::report::chart::{BoxChart, BoxGroup, BoxSpec, Figure, Panel};
use crate::report::tables::markdown_table;

/// GJK++ Fig. 8.
pub struct Fig8;

const ALGOS: [Algo; 6] = [
    GJK,
    POLYAK_COAL,
    POLYAK_NORMALIZED,
    NESTEROV_RAW,
    NESTEROV_PAPER,
    NESTEROV_COAL,
];

/// The boxes of each panel, by family (the legend names each box's variant).
const FAMILIES: [(&str, &[Algo]); 3] = [
    ("GJK", &[GJK]),
    ("Polyak", &[POLYAK_COAL, POLYAK_NORMALIZED]),
    ("Nesterov", &[NESTEROV_RAW, NESTEROV_PAPER, NESTEROV_COAL]),
];

fn close(p: &Problem) -> bool {
    p.target > 0.0 && p.target <= 0.1
}

fn panel(results: &Results, query: Query, time: bool) -> Panel {
    let f = if time { micros } else { iterations };
    Panel::Box(BoxChart {
        title: format!(
            "{}, {}",
            query.name(),
            if time { "time" } else { "iterations" }
        ),
        y_label: if time { "time (µs)" } else { "iterations" }.into(),
        // Linear for iterations: a collision check can take 0 counted iterations.
        y_scale: if time { Scale::Log } else { Scale::Linear },
        groups: FAMILIES
            .iter()
            .map(|(label, algos)| BoxGroup {
                label: (*label).into(),
                boxes: algos
                    .iter()
                    .map(|a| BoxSpec {
                        samples: results.values(a, query, close, f),
                        color: algo_style(a).color,
                        filled: true,
                    })
                    .collect(),
            })
            .collect(),
        legend: ALGOS
            .iter()
            .map(|a| (a.label.to_string(), algo_style(a).color, true))
            .collect(),
    })
}

impl Experiment for Fig8 {
    fn id(&self) -> &'static str {
        "gjk-fig8"
    }

    fn paper_ref(&self) -> &'static str {
        "GJK++ Fig. 8"
    }

    fn title(&self) -> &'static str {
        "Support-direction normalization on and off, meshes in close proximity"
    }

    fn run(&self, ctx: &Context) -> Result<Page, PaperError> {
        let mut page = Page::headed(self);
        let bench = match mesh_bench(ctx.quick) {
            Ok(b) => b,
            Err(reason) => {
                page.claims.push(not_measurable(
                    "normalizing the support direction benefits Nesterov-accelerated GJK",
                    "times with and without normalization",
                    &reason,
                ));
                return Ok(page);
            }
        };
        let problems: Vec<Problem> = bench
            .results
            .problems
            .iter()
            .filter(|p| close(p))
            .cloned()
            .collect();
        let results = run_all(
            Arc::new(problems),
            &ALGOS,
            Some(Timing::for_size(ctx.quick)),
        );
        let stem = ctx.figure(
            "gjk-fig8",
            &Figure::grid(
                "GJK++ Fig. 8: normalization of the support direction, 0 < dist ≤ 0.1 m",
                2,
                vec![
                    panel(&results, Query::Distance, true),
                    panel(&results, Query::Collision, true),
                    panel(&results, Query::Distance, false),
                    panel(&results, Query::Collision, false),
                ],
            ),
        )?;
        page.setup = bench.setup_lines(ctx.quick);
        page.setup.push(format!(
            "The {} problems of the mesh benchmark with a signed distance in (0, 0.1] m, timed \
             again with every variant below.",
            results.problems.len()
        ));
        page.figures
            .push(("Time and iterations per variant".into(), stem));
        page.tables.push(table(&results));
        page.claims = claims(&results);
        Ok(page)
    }
}

fn table(results: &Results) -> (String, String) {
    let header = ["variant", "T_D (µs)", "N_D", "T_C (µs)", "N_C"];
    let rows: Vec<Vec<String>> = ALGOS
        .iter()
        .map(|a| {
            let mut row = vec![a.label.to_string()];
            for q in Query::BOTH {
                let (t, ts) = mean_std(&results.values(a, q, close, micros));
                let (n, ns) = mean_std(&results.values(a, q, close, iterations));
                row.push(pm(t, ts));
                row.push(pm(n, ns));
            }
            row
        })
        .collect();
    (
        "Means ± std over the problems".into(),
        markdown_table(&header, &rows),
    )
}

fn claims(results: &Results) -> Vec<Claim> {
    let mean = |a: &Algo, q: Query, f: fn(&super::bench::Outcome) -> f64| {
        mean_std(&results.values(a, q, close, f)).0
    };
    let mut out = Vec::new();
    for q in Query::BOTH {
        out.push(Claim::ratio_at_most(
            &format!(
                "normalization prevents Nesterov from stopping its acceleration too early and reduces its iterations ({}, §IV-B)",
                q.name()
            ),
            ("Nesterov normalized iterations", mean(&NESTEROV_PAPER, q, iterations)),
            ("unnormalized", mean(&NESTEROV_RAW, q, iterations)),
            1.0,
        ));
        out.push(Claim::ratio_at_most(
            &format!(
                "normalized Nesterov needs fewer iterations than GJK ({}, Fig. 8)",
                q.name()
            ),
            (
                "Nesterov normalized iterations",
                mean(&NESTEROV_PAPER, q, iterations),
            ),
            ("GJK", mean(&GJK, q, iterations)),
            1.0,
        ));
    }
    out.push(Claim::ratio_at_most(
        "normalizing the support direction benefits Nesterov-accelerated GJK in time (distance, Fig. 8)",
        ("Nesterov normalized time", mean(&NESTEROV_PAPER, Query::Distance, micros)),
        ("unnormalized", mean(&NESTEROV_RAW, Query::Distance, micros)),
        1.0,
    ));
    out.push(Claim::ratio_at_least(
        "Polyak does not benefit from normalization (distance, Fig. 8)",
        (
            "Polyak normalized time",
            mean(&POLYAK_NORMALIZED, Query::Distance, micros),
        ),
        ("Polyak", mean(&POLYAK_COAL, Query::Distance, micros)),
        0.95,
    ));
    out
}
