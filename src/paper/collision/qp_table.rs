//! GJK++ Tab. II (and the tutorial's table): GJK and its accelerations against a generic
//! QP solver on the collision QP of eq. (2), on pairs of identical shapes: a cube, then
//! meshes of about 250 and 940 vertices.

use std::sync::Arc;

use nalgebra::Vector3;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::bench::{
    micros, problems_in_range, run, Problem, Query, Timing, KEPT_FRACTION, TOLERANCE,
};
use super::corpus::{corpus, Corpus};
use super::{mean_std, not_measurable, pm, Algo, GJK, MESH_ALGOS, NESTEROV_COAL, POLYAK_COAL};
use crate::collision::benchmark::mean_of_fastest;
use crate::collision::qp::collision_qp;
use crate::collision::{CollisionError, ConvexHull, Shape};
use crate::paper::claims::{num, Claim, Comparison};
use crate::paper::page::Page;
use crate::paper::{Context, Experiment, PaperError};
use crate::report::tables::markdown_table;

/// GJK++ Tab. II.
pub struct QpTable;

/// Half side of the cube (m): colbench's `create_cube(0.3, 0.3, 0.3)`, a 0.3 m cube.
const CUBE_HALF: f64 = 0.15;
/// Signed distances of the problems (m): close, separated (the QP of two overlapping
/// shapes has no unique solution).
const RANGE: (f64, f64) = (0.001, 0.1);

/// A row of the paper's table: (N_v, N_f), then ProxQP, GJK, Nesterov, Polyak (mean,
/// std, µs).
type PaperRow = ((usize, usize), [(f64, f64); 4]);

const PAPER: [PaperRow; 3] = [
    ((8, 6), [(5.3, 2.7), (0.2, 0.03), (0.2, 0.05), (0.2, 0.05)]),
    (
        (250, 496),
        [(2e3, 0.6e3), (0.8, 0.3), (0.7, 0.2), (0.6, 0.2)],
    ),
    (
        (940, 1876),
        [(20e3, 14e3), (2.1, 0.5), (1.4, 0.3), (1.4, 0.4)],
    ),
];

/// A shape of the table: how GJK sees it and how the QP sees it (the cube: 8 vertices for
/// GJK as in the paper, its 6 faces for the QP).
struct Subject {
    label: String,
    gjk_shape: Shape,
    qp_shape: Shape,
    vertices: usize,
    faces: usize,
}

/// One shape's measurements.
struct Row {
    subject: Subject,
    qp: Vec<f64>,
    gjk: Vec<Vec<f64>>,
    qp_constraints: usize,
    qp_iterations: f64,
    largest_gap: f64,
}

fn cube() -> Result<Subject, CollisionError> {
    let corners: Vec<Vector3<f64>> = (0..8)
        .map(|k| {
            Vector3::new(
                if k & 1 == 0 { -CUBE_HALF } else { CUBE_HALF },
                if k & 2 == 0 { -CUBE_HALF } else { CUBE_HALF },
                if k & 4 == 0 { -CUBE_HALF } else { CUBE_HALF },
            )
        })
        .collect();
    let hull = ConvexHull::from_points(&corners, "cube")?;
    Ok(Subject {
        label: "cube".into(),
        gjk_shape: Shape::convex_hull(Arc::new(hull)),
        qp_shape: Shape::cuboid(Vector3::repeat(CUBE_HALF))?,
        vertices: 8,
        faces: 6,
    })
}

fn subjects(corpus: &Corpus) -> Result<(Vec<Subject>, Vec<String>), CollisionError> {
    let mut out = vec![cube()?];
    let mut missing = Vec::new();
    let mut taken: Vec<&str> = Vec::new();
    for ((n, _), _) in &PAPER[1..] {
        match corpus.closest(*n, &taken) {
            Ok(m) => {
                taken.push(m.name.as_str());
                let shape = Shape::convex_hull(m.hull.clone());
                out.push(Subject {
                    label: format!("`{}`", m.name),
                    gjk_shape: shape.clone(),
                    qp_shape: shape,
                    vertices: m.vertices,
                    faces: m.faces,
                });
            }
            Err(why) => missing.push(why),
        }
    }
    Ok((out, missing))
}

fn fail(e: CollisionError) -> PaperError {
    PaperError::RunFailed {
        run: "gjk-tab2".into(),
        reason: e.to_string(),
    }
}

fn measure(subject: Subject, ctx: &Context) -> Result<Row, PaperError> {
    let poses = if ctx.quick { 5 } else { 20 };
    let qp_runs = if ctx.quick { 3 } else { 10 };
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let shapes = [(subject.gjk_shape.clone(), subject.gjk_shape.clone())];
    let problems: Vec<Problem> =
        problems_in_range(&mut rng, &shapes, poses, RANGE).map_err(fail)?;
    let timing = Some(Timing::for_size(ctx.quick));
    let gjk: Vec<Vec<f64>> = MESH_ALGOS
        .iter()
        .map(|a| {
            problems
                .iter()
                .map(|p| micros(&run(p, a, Query::Distance, timing)))
                .collect()
        })
        .collect();
    let mut qp = Vec::new();
    let (mut constraints, mut iterations, mut largest_gap) = (0, 0.0, 0.0_f64);
    for p in &problems {
        let b_in_a = p.pair.pose_a.inv_mul(&p.pair.pose_b);
        let answer = collision_qp(&subject.qp_shape, &subject.qp_shape, &b_in_a).map_err(fail)?;
        constraints = answer.constraints;
        iterations += f64::from(answer.iterations);
        largest_gap = largest_gap.max((answer.distance - p.pair.distance).abs());
        qp.push(mean_of_fastest(qp_runs, KEPT_FRACTION, || {
            std::hint::black_box(collision_qp(&subject.qp_shape, &subject.qp_shape, &b_in_a).ok());
        }));
    }
    Ok(Row {
        subject,
        qp,
        gjk,
        qp_constraints: constraints,
        qp_iterations: iterations / problems.len().max(1) as f64,
        largest_gap,
    })
}

impl Row {
    fn gjk_mean(&self, algo: &Algo) -> (f64, f64) {
        MESH_ALGOS
            .iter()
            .position(|a| a == algo)
            .map_or((f64::NAN, f64::NAN), |k| mean_std(&self.gjk[k]))
    }
}

impl Experiment for QpTable {
    fn id(&self) -> &'static str {
        "gjk-tab2"
    }

    fn paper_ref(&self) -> &'static str {
        "GJK++ Tab. II"
    }

    fn title(&self) -> &'static str {
        "GJK and its accelerations against a generic QP solver"
    }

    fn run(&self, ctx: &Context) -> Result<Page, PaperError> {
        let mut page = Page::headed(self);
        let (subjects, missing, corpus_lines) = match corpus(!ctx.quick) {
            Ok(c) => {
                let (s, m) = subjects(&c).map_err(fail)?;
                (s, m, c.setup_lines())
            }
            Err(reason) => (vec![cube().map_err(fail)?], vec![reason], Vec::new()),
        };
        let rows: Vec<Row> = subjects
            .into_iter()
            .map(|s| measure(s, ctx))
            .collect::<Result<_, _>>()?;
        page.setup = corpus_lines;
        page.setup.push(format!(
            "Pairs of identical shapes: the {} m cube (8 vertices for GJK, its 6 faces for the \
             QP, as in the paper) and the hulls closest to 250 and 940 vertices; {} random poses \
             each at a signed distance drawn uniformly in [{}, {}] m (seed 2); GJK's duality-gap \
             tolerance {:e}, timed {} times per problem (mean of the fastest 90 %).",
            2.0 * CUBE_HALF,
            if ctx.quick { 5 } else { 20 },
            RANGE.0,
            RANGE.1,
            TOLERANCE,
            Timing::for_size(ctx.quick).runs
        ));
        page.setup.push(format!(
            "QP: eq. (2) written in the frame of A with every face of each hull as a linear \
             inequality, solved by clarabel 0.11 (interior point, default tolerances 1e-8; the \
             paper runs ProxQP with eps_abs = 1e-4); timed as building the constraints, \
             setting clarabel up and solving, {} times per problem, mean of the fastest 90 %.",
            if ctx.quick { 3 } else { 10 }
        ));
        for why in &missing {
            page.setup.push(format!("Missing mesh: {why}."));
        }
        page.tables.push(table(&rows));
        page.comparisons = comparisons(&rows);
        page.claims = claims(&rows, &missing);
        let largest = rows.iter().map(|r| r.largest_gap).fold(0.0, f64::max);
        page.notes.push(format!(
            "The QP solves the same problems: its distance differs from the placement's \
             (GJK + EPA) by at most {} m over every problem.",
            num(largest)
        ));
        page.data.push(csv(ctx, &rows)?);
        Ok(page)
    }
}

fn table(rows: &[Row]) -> (String, String) {
    let mut header = vec![
        "shape",
        "N_v",
        "N_f (QP constraints)",
        "clarabel QP (µs)",
        "QP iterations",
    ];
    header.extend(MESH_ALGOS.iter().map(|a| a.label));
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let (qm, qs) = mean_std(&r.qp);
            let mut row = vec![
                r.subject.label.clone(),
                r.subject.vertices.to_string(),
                format!("{} ({})", r.subject.faces, r.qp_constraints),
                pm(qm, qs),
                format!("{:.1}", r.qp_iterations),
            ];
            row.extend(MESH_ALGOS.iter().map(|a| {
                let (m, s) = r.gjk_mean(a);
                pm(m, s)
            }));
            row
        })
        .collect();
    (
        "Distance computation time (µs, mean ± std over problems)".into(),
        markdown_table(&header, &body),
    )
}

/// The paper's row matching a subject (by position: cube, ~250, ~940).
fn paper_of(rows: &[Row], k: usize) -> Option<&PaperRow> {
    let target = match k {
        0 => 8,
        _ => rows.get(k)?.subject.vertices,
    };
    PAPER.iter().min_by_key(|((n, _), _)| n.abs_diff(target))
}

fn comparisons(rows: &[Row]) -> Vec<Comparison> {
    let mut out = Vec::new();
    for (k, r) in rows.iter().enumerate() {
        let Some(((nv, _), paper)) = paper_of(rows, k) else {
            continue;
        };
        let qp = mean_std(&r.qp).0;
        for (name, value, ours) in [
            ("QP", paper[0].0, qp),
            ("GJK", paper[1].0, r.gjk_mean(&GJK).0),
            ("Nesterov", paper[2].0, r.gjk_mean(&NESTEROV_COAL).0),
            ("Polyak", paper[3].0, r.gjk_mean(&POLYAK_COAL).0),
        ] {
            out.push(Comparison::number(
                format!("N_v = {nv}: {name} (µs)"),
                value,
                Some(ours),
            ));
        }
        out.push(Comparison::number(
            format!("N_v = {nv}: QP / GJK"),
            paper[0].0 / paper[1].0,
            Some(qp / r.gjk_mean(&GJK).0),
        ));
    }
    out
}

fn claims(rows: &[Row], missing: &[String]) -> Vec<Claim> {
    let ratio = |r: &Row| mean_std(&r.qp).0 / r.gjk_mean(&GJK).0;
    let mut out = vec![Claim::ratio_at_least(
        "for very simple convex meshes like a cube, GJK is more than 10 times faster than the QP solver (§IV-C)",
        ("QP time", mean_std(&rows[0].qp).0),
        ("GJK time", rows[0].gjk_mean(&GJK).0),
        10.0,
    )];
    let meshes = &rows[1..];
    let statement = "on meshes of hundreds of vertices GJK is thousands to tens of thousands of times faster (§IV-C)";
    out.push(if meshes.len() == 2 {
        Claim::at_least(
            statement,
            "smallest QP / GJK over the two meshes",
            meshes.iter().map(ratio).fold(f64::INFINITY, f64::min),
            1000.0,
        )
    } else {
        not_measurable(
            statement,
            "QP / GJK ≥ 1000 on both meshes",
            &missing.join("; "),
        )
    });
    let statement =
        "the accelerations are at least as fast as GJK on the largest mesh (Tab. II, 940 vertices)";
    out.push(match meshes.last() {
        Some(r) if meshes.len() == 2 => Claim::ratio_at_most(
            statement,
            (
                "slower of Polyak δ=1/(k+1), Nesterov δ=(k+2)/(k+3)",
                r.gjk_mean(&POLYAK_COAL).0.max(r.gjk_mean(&NESTEROV_COAL).0),
            ),
            ("GJK", r.gjk_mean(&GJK).0),
            1.0,
        ),
        _ => not_measurable(statement, "accelerated / GJK ≤ 1", &missing.join("; ")),
    });
    out
}

fn csv(ctx: &Context, rows: &[Row]) -> Result<String, PaperError> {
    let mut out = Vec::new();
    for r in rows {
        for (k, t) in r.qp.iter().enumerate() {
            out.push(vec![
                r.subject.label.clone(),
                k.to_string(),
                "clarabel QP".into(),
                format!("{t:.3}"),
            ]);
        }
        for (a, algo) in MESH_ALGOS.iter().enumerate() {
            for (k, t) in r.gjk[a].iter().enumerate() {
                out.push(vec![
                    r.subject.label.clone(),
                    k.to_string(),
                    algo.label.into(),
                    format!("{t:.4}"),
                ]);
            }
        }
    }
    ctx.csv(
        "gjk-tab2.csv",
        &["shape", "problem", "solver", "time_us"],
        &out,
    )
}
