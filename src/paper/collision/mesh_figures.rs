//! The mesh benchmark of GJK++ §IV-B (Fig. 9, 10, and the data of Fig. 8 and 11): random
//! pairs of robot meshes, random poses set to fixed distances, every variant timed on
//! each problem; and Fig. 9 (distance computation) and Fig. 10 (boolean collision check):
//! iterations and time against the signed distance.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::bench::{self, iterations, micros, run_all, Query, Results, Timing, TOLERANCE};
use super::corpus::{corpus, Corpus};
use super::fig7::DISTANCES;
use super::{
    algo_style, not_measurable, pm, Algo, GJK, MESH_ALGOS, NESTEROV_COAL, NESTEROV_PAPER,
    POLYAK_COAL, POLYAK_PAPER,
};
use crate::collision::Shape;
use crate::paper::claims::{num, Claim};
use crate::paper::page::Page;
use crate::paper::{Context, Experiment, PaperError};
use crate::report::axis::Scale;
use crate::report::chart::{Curve, Figure, LineChart, Panel};
use crate::report::tables::markdown_table;

/// Smallest and largest hull vertex counts of the benchmark's meshes (YCB: 100 to 8000).
const VERTEX_RANGE: (usize, usize) = (50, 8000);

/// The mesh benchmark of one run size.
pub struct MeshBench {
    /// Its corpus.
    pub corpus: Arc<Corpus>,
    /// Names of the meshes drawn.
    pub meshes: Vec<String>,
    /// Pairs, poses per pair.
    pub pairs: usize,
    /// Poses per pair.
    pub poses: usize,
    /// Every variant of [`MESH_ALGOS`] on every problem, timed.
    pub results: Results,
}

type BenchCache = Mutex<HashMap<bool, Arc<MeshBench>>>;

/// The benchmark of this run size, computed once per process (Fig. 8-11 share it).
pub fn mesh_bench(quick: bool) -> Result<Arc<MeshBench>, String> {
    static CACHE: OnceLock<BenchCache> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(b) = cache.lock().ok().and_then(|c| c.get(&quick).cloned()) {
        return Ok(b);
    }
    let bench = Arc::new(build(quick)?);
    if let Ok(mut c) = cache.lock() {
        c.insert(quick, bench.clone());
    }
    Ok(bench)
}

fn build(quick: bool) -> Result<MeshBench, String> {
    let corpus = corpus(!quick)?;
    let (count, pairs, poses) = if quick { (20, 30, 4) } else { (40, 100, 10) };
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut candidates: Vec<_> = corpus
        .sized()
        .filter(|m| m.vertices >= VERTEX_RANGE.0 && m.vertices <= VERTEX_RANGE.1)
        .collect();
    if candidates.len() < 2 {
        return Err(format!(
            "fewer than two meshes of {}-{} hull vertices in {}",
            VERTEX_RANGE.0,
            VERTEX_RANGE.1,
            corpus.describe()
        ));
    }
    candidates.shuffle(&mut rng);
    candidates.truncate(count);
    candidates.sort_by(|a, b| a.name.cmp(&b.name));
    let shapes: Vec<(Shape, Shape)> = (0..pairs)
        .map(|_| {
            let i = rng.random_range(0..candidates.len());
            let j = (i + rng.random_range(1..candidates.len())) % candidates.len();
            (
                Shape::convex_hull(candidates[i].hull.clone()),
                Shape::convex_hull(candidates[j].hull.clone()),
            )
        })
        .collect();
    let problems =
        bench::problems(&mut rng, &shapes, poses, &DISTANCES).map_err(|e| e.to_string())?;
    let results = run_all(
        Arc::new(problems),
        &MESH_ALGOS,
        Some(Timing::for_size(quick)),
    );
    Ok(MeshBench {
        meshes: candidates.iter().map(|m| m.name.clone()).collect(),
        corpus: corpus.clone(),
        pairs,
        poses,
        results,
    })
}

impl MeshBench {
    /// Setup lines shared by the pages of the benchmark.
    pub fn setup_lines(&self, quick: bool) -> Vec<String> {
        let mut lines = self.corpus.setup_lines();
        lines.push(format!(
            "{} meshes of {}-{} hull vertices drawn at random (seed 5): {}.",
            self.meshes.len(),
            VERTEX_RANGE.0,
            VERTEX_RANGE.1,
            self.meshes
                .iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        lines.push(format!(
            "{} random pairs of distinct meshes, {} random poses each, every pose set to the \
             signed distances {} m along the axis of the closest points ({} problems; the \
             paper: every pair of YCB objects, 100 poses).",
            self.pairs,
            self.poses,
            DISTANCES.map(num).join(", "),
            self.results.problems.len()
        ));
        lines.push(format!(
            "Duality-gap tolerance {TOLERANCE:e}, collision threshold 1e-4 m, GJK from the \
             bounding-box centres; every problem timed {} times per variant and query, mean of \
             the fastest 90 %.",
            Timing::for_size(quick).runs
        ));
        lines
    }
}

/// Fig. 9 or Fig. 10.
pub struct MeshFigure {
    id: &'static str,
    paper_ref: &'static str,
    title: &'static str,
    query: Query,
}

/// GJK++ Fig. 9.
pub static FIG9: MeshFigure = MeshFigure {
    id: "gjk-fig9",
    paper_ref: "GJK++ Fig. 9",
    title: "Distance computation on meshes: iterations and time against the distance",
    query: Query::Distance,
};

/// GJK++ Fig. 10.
pub static FIG10: MeshFigure = MeshFigure {
    id: "gjk-fig10",
    paper_ref: "GJK++ Fig. 10",
    title: "Boolean collision check on meshes: iterations and time against the distance",
    query: Query::Collision,
};

fn curve_panel(results: &Results, query: Query, time: bool, zoom: bool) -> Panel {
    let f = if time { micros } else { iterations };
    Panel::Line(LineChart {
        title: format!(
            "{} ({})",
            if time { "(b) time" } else { "(a) iterations" },
            if zoom {
                "−0.1 to 0.1 m"
            } else {
                "−0.1 to 1 m"
            }
        ),
        x_label: "signed distance (m)".into(),
        y_label: if time {
            "time (µs, mean)"
        } else {
            "iterations (mean)"
        }
        .into(),
        curves: MESH_ALGOS
            .iter()
            .map(|algo| {
                let points = DISTANCES
                    .iter()
                    .filter(|d| !zoom || d.abs() <= 0.1)
                    .map(|d| (*d, results.at_target(algo, query, *d, f).0))
                    .collect();
                Curve::styled(algo.label, points, algo_style(algo)).marked()
            })
            .collect(),
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        ..LineChart::default()
    })
}

fn table(results: &Results, query: Query) -> (String, String) {
    let mut header = vec!["distance (m)"];
    let labels: Vec<String> = MESH_ALGOS
        .iter()
        .flat_map(|a| [format!("{} iterations", a.label), format!("{} µs", a.label)])
        .collect();
    header.extend(labels.iter().map(String::as_str));
    let rows: Vec<Vec<String>> = DISTANCES
        .iter()
        .map(|d| {
            let mut row = vec![num(*d)];
            for a in &MESH_ALGOS {
                let (n, ns) = results.at_target(a, query, *d, iterations);
                let (t, ts) = results.at_target(a, query, *d, micros);
                row.push(pm(n, ns));
                row.push(pm(t, ts));
            }
            row
        })
        .collect();
    (
        format!("Iterations and time, {} (mean ± std)", query.name()),
        markdown_table(&header, &rows),
    )
}

/// The close and shallow distances where the paper claims a speed-up.
pub const NEAR: [f64; 8] = [-0.01, -0.005, -0.001, 0.001, 0.005, 0.01, 0.05, 0.1];

impl MeshFigure {
    fn claims(&self, results: &Results) -> Vec<Claim> {
        let q = self.query;
        let t = |d: f64, a: &Algo| results.at_target(a, q, d, micros).0;
        let count = |ok: &dyn Fn(f64) -> bool| NEAR.iter().filter(|d| ok(**d)).count() as f64;
        let n = NEAR.len() as f64;
        let mut claims = Vec::new();
        for (polyak, nesterov) in [(POLYAK_COAL, NESTEROV_COAL), (POLYAK_PAPER, NESTEROV_PAPER)] {
            claims.push(Claim::at_least(
                &format!(
                    "Polyak and Nesterov reduce the execution time compared to GJK when shapes are shallowly intersecting or in close proximity (§IV-B); {} and {}",
                    polyak.label, nesterov.label
                ),
                "distances in [−0.01, 0.1] m (of 8) where both mean times are below GJK's",
                count(&|d| t(d, &polyak) < t(d, &GJK) && t(d, &nesterov) < t(d, &GJK)),
                n,
            ));
        }
        claims.push(Claim::at_least(
            "Polyak gives less acceleration than Nesterov in close proximity and shallow overlap (§IV-B)",
            "distances in [−0.01, 0.1] m (of 8) where Nesterov δ=(k+2)/(k+3) is faster than Polyak δ=1/(k+1)",
            count(&|d| t(d, &NESTEROV_COAL) < t(d, &POLYAK_COAL)),
            n,
        ));
        claims
    }
}

impl Experiment for MeshFigure {
    fn id(&self) -> &'static str {
        self.id
    }

    fn paper_ref(&self) -> &'static str {
        self.paper_ref
    }

    fn title(&self) -> &'static str {
        self.title
    }

    fn run(&self, ctx: &Context) -> Result<Page, PaperError> {
        let mut page = Page {
            id: self.id.into(),
            title: self.title.into(),
            paper_ref: self.paper_ref.into(),
            ..Page::default()
        };
        let bench = match mesh_bench(ctx.quick) {
            Ok(b) => b,
            Err(reason) => {
                page.notes.push(format!("No mesh benchmark: {reason}."));
                page.claims.push(not_measurable(
                    "Polyak and Nesterov reduce the execution time on close or shallowly overlapping meshes",
                    "mean times per distance",
                    &reason,
                ));
                return Ok(page);
            }
        };
        let results = &bench.results;
        let stem = ctx.figure(
            self.id,
            &Figure::grid(
                format!("{}: {}", self.paper_ref, self.query.name()),
                2,
                vec![
                    curve_panel(results, self.query, false, false),
                    curve_panel(results, self.query, true, false),
                    curve_panel(results, self.query, false, true),
                    curve_panel(results, self.query, true, true),
                ],
            ),
        )?;
        page.setup = bench.setup_lines(ctx.quick);
        page.figures.push((
            "Mean iterations (a) and time (b) against the signed distance".into(),
            stem,
        ));
        page.tables.push(table(results, self.query));
        page.claims = self.claims(results);
        let (capped, other) = results.irregular();
        page.notes.push(format!(
            "Runs that hit the iteration cap: {capped}; stopped on a floating-point fixed point \
             instead of the duality gap: {other} (of {} runs).",
            results.problems.len() * MESH_ALGOS.len() * 2
        ));
        page.data.push(csv(ctx, self.id, results)?);
        Ok(page)
    }
}

/// Per-problem data of the benchmark.
pub fn csv(ctx: &Context, id: &str, results: &Results) -> Result<String, PaperError> {
    let mut rows = Vec::new();
    for (k, (p, outcomes)) in results.problems.iter().zip(&results.outcomes).enumerate() {
        for (a, algo) in results.algos.iter().enumerate() {
            for (q, query) in Query::BOTH.iter().enumerate() {
                let o = &outcomes[a][q];
                rows.push(vec![
                    k.to_string(),
                    p.pair_id.to_string(),
                    num(p.target),
                    num(p.pair.distance),
                    algo.label.to_string(),
                    query.name().to_string(),
                    o.iterations.to_string(),
                    format!("{:.4}", o.micros),
                ]);
            }
        }
    }
    ctx.csv(
        &format!("{id}.csv"),
        &[
            "problem",
            "pair",
            "target_distance_m",
            "distance_m",
            "variant",
            "query",
            "iterations",
            "time_us",
        ],
        &rows,
    )
}
