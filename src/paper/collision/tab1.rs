//! GJK++ Tab. I and CDA Tab. I: distance (`T_D`) and boolean collision (`T_C`) times of
//! GJK and its accelerations on pairs of meshes of increasing vertex counts, for close or
//! shallowly overlapping shapes.

use std::sync::Arc;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::bench::{micros, problems_in_range, run_all, Query, Results, Timing, TOLERANCE};
use super::corpus::{corpus, Corpus, MeshEntry};
use super::{
    mean_std, not_measurable, pm, Algo, GJK, MESH_ALGOS, NESTEROV_COAL, NESTEROV_PAPER,
    POLYAK_COAL, POLYAK_PAPER,
};
use crate::collision::Shape;
use crate::paper::claims::{num, Claim, Comparison};
use crate::paper::page::Page;
use crate::paper::{Context, Experiment, PaperError};
use crate::report::tables::markdown_table;

/// One cell of the paper's table: mean ± std (µs) of GJK, Polyak (when the paper has it)
/// and Nesterov on the pair of meshes `i ≤ j` (indices into the spec's vertex counts).
#[derive(Debug, Clone, Copy)]
pub struct PaperCell {
    i: usize,
    j: usize,
    query: Query,
    gjk: (f64, f64),
    polyak: Option<(f64, f64)>,
    nesterov: (f64, f64),
}

const fn cell(
    i: usize,
    j: usize,
    query: Query,
    gjk: (f64, f64),
    polyak: Option<(f64, f64)>,
    nesterov: (f64, f64),
) -> PaperCell {
    PaperCell {
        i,
        j,
        query,
        gjk,
        polyak,
        nesterov,
    }
}

/// A timing table of one of the papers.
pub struct TimingTable {
    id: &'static str,
    paper_ref: &'static str,
    title: &'static str,
    /// Hull vertex counts of the paper's meshes.
    vertices: &'static [usize],
    /// Signed distances of the problems (m).
    range: (f64, f64),
    /// The paper's dataset, for the setup lines.
    dataset: &'static str,
    cells: &'static [PaperCell],
    /// The largest speed-up in the paper's table (mean GJK / best accelerated mean).
    paper_max_speedup: f64,
}

use Query::{Collision as C, Distance as D};

const GJK_CELLS: [PaperCell; 12] = [
    cell(0, 0, D, (1.1, 0.3), Some((0.9, 0.3)), (0.9, 0.3)),
    cell(0, 0, C, (0.9, 0.4), Some((0.7, 0.4)), (0.8, 0.4)),
    cell(0, 1, D, (1.9, 0.5), Some((1.5, 0.5)), (1.4, 0.5)),
    cell(0, 1, C, (1.5, 0.6), Some((1.2, 0.6)), (1.1, 0.6)),
    cell(0, 2, D, (3.2, 0.8), Some((2.3, 0.7)), (2.4, 0.7)),
    cell(0, 2, C, (2.5, 0.9), Some((1.7, 0.8)), (1.9, 1.0)),
    cell(1, 1, D, (2.7, 0.8), Some((2.1, 0.7)), (1.9, 0.6)),
    cell(1, 1, C, (2.3, 0.8), Some((1.6, 0.8)), (1.5, 0.8)),
    cell(1, 2, D, (4.0, 1.0), Some((2.9, 0.9)), (2.9, 1.0)),
    cell(1, 2, C, (3.1, 1.2), Some((2.1, 1.0)), (2.2, 1.3)),
    cell(2, 2, D, (4.4, 1.3), Some((2.9, 1.0)), (3.0, 0.9)),
    cell(2, 2, C, (3.0, 1.9), Some((2.1, 1.4)), (2.1, 1.4)),
];

const CDA_CELLS: [PaperCell; 20] = [
    cell(0, 0, D, (0.8, 0.3), None, (0.8, 0.2)),
    cell(0, 0, C, (0.6, 0.3), None, (0.6, 0.3)),
    cell(0, 1, D, (1.1, 0.4), None, (1.0, 0.3)),
    cell(0, 1, C, (0.8, 0.3), None, (0.7, 0.3)),
    cell(0, 2, D, (1.3, 0.4), None, (1.1, 0.3)),
    cell(0, 2, C, (1.1, 0.5), None, (0.8, 0.4)),
    cell(0, 3, D, (2.5, 0.6), None, (1.8, 0.6)),
    cell(0, 3, C, (1.9, 0.9), None, (1.4, 0.7)),
    cell(1, 1, D, (1.2, 0.3), None, (1.0, 0.2)),
    cell(1, 1, C, (0.9, 0.4), None, (0.7, 0.3)),
    cell(1, 2, D, (1.5, 0.4), None, (1.2, 0.3)),
    cell(1, 2, C, (1.2, 0.5), None, (0.9, 0.4)),
    cell(1, 3, D, (2.6, 0.7), None, (1.9, 0.6)),
    cell(1, 3, C, (2.1, 0.9), None, (1.4, 0.7)),
    cell(2, 2, D, (1.8, 0.6), None, (1.4, 0.4)),
    cell(2, 2, C, (1.4, 0.6), None, (1.0, 0.5)),
    cell(2, 3, D, (3.0, 0.8), None, (2.1, 0.7)),
    cell(2, 3, C, (2.5, 1.1), None, (1.6, 0.8)),
    cell(3, 3, D, (4.1, 1.1), None, (2.7, 0.9)),
    cell(3, 3, C, (3.3, 1.5), None, (2.2, 1.1)),
];

/// GJK++ Tab. I.
pub static GJK_TAB1: TimingTable = TimingTable {
    id: "gjk-tab1",
    paper_ref: "GJK++ Tab. I",
    title: "Distance and collision times on meshes of 240, 1811 and 3585 vertices",
    vertices: &[240, 1811, 3585],
    range: (-0.01, 0.01),
    dataset: "YCB objects, Apple M1 Max",
    cells: &GJK_CELLS,
    paper_max_speedup: 4.4 / 2.9,
};

/// CDA Tab. I.
pub static CDA_TAB1: TimingTable = TimingTable {
    id: "cda-tab1",
    paper_ref: "CDA Tab. I",
    title: "Distance and collision times on meshes of 33, 141, 626 and 2500 vertices",
    vertices: &[33, 141, 626, 2500],
    range: (-0.1, 0.1),
    dataset: "ShapeNet objects",
    cells: &CDA_CELLS,
    paper_max_speedup: 3.0 / 2.1,
};

/// The meshes chosen for the paper's vertex counts (`None` where none is close enough,
/// with the reason).
fn choose<'a>(corpus: &'a Corpus, targets: &[usize]) -> Vec<Result<&'a MeshEntry, String>> {
    let mut taken: Vec<&str> = Vec::new();
    targets
        .iter()
        .map(|&t| {
            let chosen = corpus.closest(t, &taken);
            if let Ok(m) = &chosen {
                taken.push(m.name.as_str());
            }
            chosen
        })
        .collect()
}

/// The pair of a cell, as the table's label: the paper's vertex counts, ours in
/// parentheses (`240 (244) × 1811 (1851)`).
fn pair_label(
    targets: &[usize],
    meshes: &[Result<&MeshEntry, String>],
    i: usize,
    j: usize,
) -> String {
    let n = |k: usize| match &meshes[k] {
        Ok(m) => format!("{} ({})", targets[k], m.vertices),
        Err(_) => format!("{} (none)", targets[k]),
    };
    format!("{} × {}", n(i), n(j))
}

/// Our measurements of one cell: mean and std (µs) per variant.
struct OurCell {
    stats: Vec<(f64, f64)>,
}

impl OurCell {
    fn of(&self, algo: &Algo) -> (f64, f64) {
        MESH_ALGOS
            .iter()
            .position(|a| a == algo)
            .map_or((f64::NAN, f64::NAN), |k| self.stats[k])
    }
}

impl TimingTable {
    fn measure(
        &self,
        ctx: &Context,
        meshes: &[Result<&MeshEntry, String>],
    ) -> Result<Option<Results>, PaperError> {
        let available: Vec<usize> = (0..meshes.len()).filter(|k| meshes[*k].is_ok()).collect();
        let mut shapes = Vec::new();
        let mut pair_ids = Vec::new();
        for (a, &i) in available.iter().enumerate() {
            for &j in &available[a..] {
                if let (Ok(mi), Ok(mj)) = (&meshes[i], &meshes[j]) {
                    shapes.push((
                        Shape::convex_hull(mi.hull.clone()),
                        Shape::convex_hull(mj.hull.clone()),
                    ));
                    pair_ids.push((i, j));
                }
            }
        }
        if shapes.is_empty() {
            return Ok(None);
        }
        let poses = if ctx.quick { 30 } else { 100 };
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut problems =
            problems_in_range(&mut rng, &shapes, poses, self.range).map_err(|e| {
                PaperError::RunFailed {
                    run: self.id.into(),
                    reason: e.to_string(),
                }
            })?;
        // Problems carry the paper's mesh indices as their pair id.
        for p in &mut problems {
            let (i, j) = pair_ids[p.pair_id];
            p.pair_id = i * meshes.len() + j;
        }
        Ok(Some(run_all(
            Arc::new(problems),
            &MESH_ALGOS,
            Some(Timing::for_size(ctx.quick)),
        )))
    }

    fn our_cell(&self, results: &Results, n: usize, c: &PaperCell) -> Option<OurCell> {
        let id = c.i * n + c.j;
        let stats: Vec<(f64, f64)> = MESH_ALGOS
            .iter()
            .map(|a| mean_std(&results.values(a, c.query, |p| p.pair_id == id, micros)))
            .collect();
        stats[0].0.is_finite().then_some(OurCell { stats })
    }
}

impl Experiment for TimingTable {
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
        let corpus = match corpus(!ctx.quick) {
            Ok(c) => c,
            Err(reason) => {
                page.notes.push(format!("No meshes: {reason}."));
                page.claims.push(not_measurable(
                    "Polyak and Nesterov are faster than GJK on close or shallowly overlapping meshes",
                    "timed on the paper's meshes",
                    &reason,
                ));
                return Ok(page);
            }
        };
        let meshes = choose(&corpus, self.vertices);
        let results = self.measure(ctx, &meshes)?;
        let n = self.vertices.len();
        let cells: Vec<(PaperCell, Option<OurCell>)> = self
            .cells
            .iter()
            .map(|c| (*c, results.as_ref().and_then(|r| self.our_cell(r, n, c))))
            .collect();
        page.setup = self.setup(ctx, &corpus, &meshes);
        page.tables.push(self.table(&meshes, &cells));
        page.comparisons = self.comparisons(&meshes, &cells);
        page.claims = self.claims(&meshes, &cells);
        if let Some(results) = &results {
            let (capped, other) = results.irregular();
            page.notes.push(format!(
                "Every run stopped on the duality gap, a separating plane or an overlap except \
                 {capped} that hit the iteration cap and {other} that stopped on a \
                 floating-point fixed point (no new support point, or no decrease of ‖x‖)."
            ));
            page.data.push(self.csv(ctx, results, &meshes)?);
            page.data
                .push(self.problems_csv(ctx, results, &meshes, &corpus.root)?);
        }
        page.notes.push(
            "Times are the mean over problems of each problem's mean of the fastest 90 % of \
             its runs, ± the standard deviation over problems, as in the paper. The paper's \
             times come from HPP-FCL on an Apple M1 Max; ours from this machine (see the \
             collision docs for its load), so absolute times compare hardware as much as \
             implementations, and the speed-ups (GJK / accelerated) are the comparable \
             quantity."
                .into(),
        );
        Ok(page)
    }
}

impl TimingTable {
    fn setup(
        &self,
        ctx: &Context,
        corpus: &Corpus,
        meshes: &[Result<&MeshEntry, String>],
    ) -> Vec<String> {
        let mut lines = corpus.setup_lines();
        for (target, m) in self.vertices.iter().zip(meshes) {
            lines.push(match m {
                Ok(m) => format!(
                    "Paper's {target}-vertex mesh ({}): `{}`, {} hull vertices, {} triangles, \
                     {:.3} m bounding-box diagonal.",
                    self.dataset, m.name, m.vertices, m.faces, m.diagonal
                ),
                Err(why) => format!("Paper's {target}-vertex mesh: none here — {why}."),
            });
        }
        lines.push(format!(
            "Problems: every pair of the chosen meshes (i ≤ j), {} random poses each with a \
             signed distance drawn uniformly in [{}, {}] m (seed 1), B moved along the closest \
             points' axis; GJK from the bounding-box centres; duality-gap tolerance {:e}; \
             collision threshold 1e-4 m.",
            if ctx.quick { 30 } else { 100 },
            self.range.0,
            self.range.1,
            TOLERANCE
        ));
        lines.push(format!(
            "Each problem timed {} times, mean of the fastest 90 %.",
            Timing::for_size(ctx.quick).runs
        ));
        lines
    }

    fn table(
        &self,
        meshes: &[Result<&MeshEntry, String>],
        cells: &[(PaperCell, Option<OurCell>)],
    ) -> (String, String) {
        let mut header = vec!["pair: paper's vertices (ours)", "query"];
        header.extend(MESH_ALGOS.iter().map(|a| a.label));
        header.extend(["paper GJK", "paper Polyak", "paper Nesterov"]);
        let rows: Vec<Vec<String>> = cells
            .iter()
            .map(|(c, ours)| {
                let mut row = vec![
                    pair_label(self.vertices, meshes, c.i, c.j),
                    c.query.symbol().to_string(),
                ];
                for a in &MESH_ALGOS {
                    row.push(ours.as_ref().map_or("–".into(), |o| {
                        let (m, s) = o.of(a);
                        pm(m, s)
                    }));
                }
                row.push(pm(c.gjk.0, c.gjk.1));
                row.push(c.polyak.map_or("–".into(), |p| pm(p.0, p.1)));
                row.push(pm(c.nesterov.0, c.nesterov.1));
                row
            })
            .collect();
        (
            "Times (µs, mean ± std over problems)".into(),
            markdown_table(&header, &rows),
        )
    }

    fn comparisons(
        &self,
        meshes: &[Result<&MeshEntry, String>],
        cells: &[(PaperCell, Option<OurCell>)],
    ) -> Vec<Comparison> {
        let mut out = Vec::new();
        for (c, ours) in cells.iter().filter(|(_, o)| o.is_some()) {
            let label = format!(
                "{} {}",
                pair_label(self.vertices, meshes, c.i, c.j),
                c.query.symbol()
            );
            let get = |a: &Algo| ours.as_ref().map(|o| o.of(a).0);
            out.push(Comparison::number(
                format!("{label}: GJK (µs)"),
                c.gjk.0,
                get(&GJK),
            ));
            let speedup = |a: &Algo| Some(get(&GJK)? / get(a)?);
            if let Some(p) = c.polyak {
                out.push(Comparison::number(
                    format!("{label}: speed-up GJK / Polyak δ=1/(k+1)"),
                    c.gjk.0 / p.0,
                    speedup(&POLYAK_COAL),
                ));
            }
            out.push(Comparison::number(
                format!("{label}: speed-up GJK / Nesterov δ=(k+2)/(k+3)"),
                c.gjk.0 / c.nesterov.0,
                speedup(&NESTEROV_COAL),
            ));
        }
        out
    }

    fn claims(
        &self,
        meshes: &[Result<&MeshEntry, String>],
        cells: &[(PaperCell, Option<OurCell>)],
    ) -> Vec<Claim> {
        let missing: Vec<String> = meshes
            .iter()
            .filter_map(|m| m.as_ref().err().cloned())
            .collect();
        let measured: Vec<&OurCell> = cells.iter().filter_map(|(_, o)| o.as_ref()).collect();
        let reason = missing.join("; ");
        if measured.is_empty() {
            return vec![not_measurable(
                "the accelerations are faster than GJK on the paper's meshes",
                "times per pair of meshes",
                &reason,
            )];
        }
        // Denominator: the cells measured here, and those that are not, said in the test.
        let of = if measured.len() == cells.len() {
            format!("of {}", cells.len())
        } else {
            format!(
                "of the {} measurable here; {} need a mesh that is missing",
                measured.len(),
                cells.len() - measured.len()
            )
        };
        let polyak_present = cells.iter().any(|(c, _)| c.polyak.is_some());
        let (coal, text) = if polyak_present {
            (
                vec![POLYAK_COAL, NESTEROV_COAL],
                vec![POLYAK_PAPER, NESTEROV_PAPER],
            )
        } else {
            (vec![NESTEROV_COAL], vec![NESTEROV_PAPER])
        };
        // CDA claims "better or at least as good"; GJK++ "faster".
        let beats = |o: &OurCell, a: &Algo| {
            if polyak_present {
                o.of(a).0 < o.of(&GJK).0
            } else {
                o.of(a).0 <= o.of(&GJK).0
            }
        };
        let names = |algos: &[Algo]| {
            algos
                .iter()
                .map(|a| a.label)
                .collect::<Vec<_>>()
                .join(" and ")
        };
        let statement = if polyak_present {
            "Polyak and Nesterov are faster than vanilla GJK on close-proximity and shallowly intersecting pairs (§IV-B)"
        } else {
            "Nesterov-accelerated GJK always gives a better or at least as good timing (Tab. I caption)"
        };
        let mut claims = Vec::new();
        for algos in [&coal, &text] {
            let count = measured
                .iter()
                .filter(|o| algos.iter().all(|a| beats(o, a)))
                .count() as f64;
            claims.push(Claim::at_least(
                &format!("{statement}; {}", names(algos)),
                &format!(
                    "cells ({of}) where {} {} GJK",
                    names(algos),
                    if polyak_present {
                        "beat"
                    } else {
                        "match or beat"
                    }
                ),
                count,
                measured.len() as f64,
            ));
        }
        let best_speedup = measured
            .iter()
            .map(|o| {
                o.of(&GJK).0
                    / coal
                        .iter()
                        .chain(&text)
                        .map(|a| o.of(a).0)
                        .fold(f64::INFINITY, f64::min)
            })
            .fold(f64::NAN, f64::max);
        claims.push(Claim::at_least(
            &format!(
                "the accelerations reach the table's largest speed-up, {:.2}× (within 10 %)",
                self.paper_max_speedup
            ),
            &format!("largest GJK / best accelerated mean, cells {of}"),
            best_speedup,
            self.paper_max_speedup / 1.1,
        ));
        let spread = measured
            .iter()
            .filter(|o| o.of(&coal[0]).1 < o.of(&GJK).1)
            .count() as f64;
        claims.push(Claim::at_least(
            "the accelerations reduce the spread of computation times across problems (§IV-B)",
            &format!(
                "cells ({of}) where {} has a smaller std than GJK",
                coal[0].label
            ),
            spread,
            measured.len() as f64,
        ));
        let slowest = measured
            .iter()
            .map(|o| o.of(&GJK).0)
            .fold(f64::NAN, f64::max);
        claims.push(Claim::at_most(
            "collision detection for one pair of objects takes about 1-10 µs (tutorial, slide 1)",
            "slowest GJK mean of the table (µs)",
            slowest,
            10.0,
        ));
        claims
    }

    /// One row per problem with both meshes (name, and path under the corpus `root`) and
    /// both poses (world frame: translation, then the quaternion `x y z w`), for
    /// `tools/coal_gjk.sh` to run coal on the same problems.
    fn problems_csv(
        &self,
        ctx: &Context,
        results: &Results,
        meshes: &[Result<&MeshEntry, String>],
        root: &std::path::Path,
    ) -> Result<String, PaperError> {
        let n = meshes.len();
        let name = |k: usize| meshes[k].as_ref().map_or(String::new(), |m| m.name.clone());
        let path = |k: usize| root.join(name(k)).display().to_string();
        let pose = |iso: &nalgebra::Isometry3<f64>| {
            let t = iso.translation.vector;
            let q = iso.rotation.coords;
            [t.x, t.y, t.z, q.x, q.y, q.z, q.w].map(|v| format!("{v:.17e}"))
        };
        let rows: Vec<Vec<String>> = results
            .problems
            .iter()
            .enumerate()
            .map(|(k, p)| {
                let (i, j) = (p.pair_id / n, p.pair_id % n);
                let mut row = vec![k.to_string(), name(i), name(j), path(i), path(j)];
                row.push(num(p.target));
                row.extend(pose(&p.pair.pose_a));
                row.extend(pose(&p.pair.pose_b));
                row
            })
            .collect();
        let mut header = vec![
            "problem",
            "mesh_a",
            "mesh_b",
            "path_a",
            "path_b",
            "target_distance_m",
        ];
        header.extend([
            "ax", "ay", "az", "aqx", "aqy", "aqz", "aqw", "bx", "by", "bz", "bqx", "bqy", "bqz",
            "bqw",
        ]);
        ctx.csv(&format!("{}-problems.csv", self.id), &header, &rows)
    }

    fn csv(
        &self,
        ctx: &Context,
        results: &Results,
        meshes: &[Result<&MeshEntry, String>],
    ) -> Result<String, PaperError> {
        let n = meshes.len();
        let name = |k: usize| meshes[k].as_ref().map_or(String::new(), |m| m.name.clone());
        let mut rows = Vec::new();
        for (k, (p, outcomes)) in results.problems.iter().zip(&results.outcomes).enumerate() {
            let (i, j) = (p.pair_id / n, p.pair_id % n);
            for (a, algo) in results.algos.iter().enumerate() {
                for (q, query) in Query::BOTH.iter().enumerate() {
                    let o = &outcomes[a][q];
                    rows.push(vec![
                        k.to_string(),
                        name(i),
                        name(j),
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
            &format!("{}.csv", self.id),
            &[
                "problem",
                "mesh_a",
                "mesh_b",
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
}
