//! GJK++ Fig. 7: iterations of GJK, Polyak- and Nesterov-accelerated GJK on random pairs
//! of ellipsoids against their signed distance, for distance computation and the boolean
//! collision check.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use super::bench::{self, Query, TOLERANCE};
use super::{algo_style, Algo, ELLIPSOID_ALGOS, GJK, NESTEROV_RAW, POLYAK_COAL};
use crate::collision::benchmark::normal_ellipsoid;
use crate::collision::CollisionError;
use crate::paper::claims::{num, Claim};
use crate::paper::page::Page;
use crate::paper::{Context, Experiment, PaperError};
use crate::report::axis::Scale;
use crate::report::chart::{Curve, Figure, LineChart, Panel};
use crate::report::tables::markdown_table;

/// GJK++ Fig. 7.
pub struct Fig7;

/// The fixed signed distances every pose is set to (m), over the paper's [−0.1, 1] m.
pub const DISTANCES: [f64; 12] = [
    -0.1, -0.05, -0.01, -0.005, -0.001, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0,
];

const A: usize = ELLIPSOID_ALGOS.len();

/// Sums of iterations per distance, variant and query: `n`, `Σx`, `Σx²`, and the runs
/// that did not stop on their criterion.
#[derive(Debug, Clone)]
struct Sums {
    n: Vec<f64>,
    sum: Vec<[[f64; 2]; A]>,
    sum2: Vec<[[f64; 2]; A]>,
    irregular: usize,
}

impl Sums {
    fn new() -> Self {
        Self {
            n: vec![0.0; DISTANCES.len()],
            sum: vec![[[0.0; 2]; A]; DISTANCES.len()],
            sum2: vec![[[0.0; 2]; A]; DISTANCES.len()],
            irregular: 0,
        }
    }

    fn merge(mut self, other: Sums) -> Sums {
        for t in 0..DISTANCES.len() {
            self.n[t] += other.n[t];
            for a in 0..A {
                for q in 0..2 {
                    self.sum[t][a][q] += other.sum[t][a][q];
                    self.sum2[t][a][q] += other.sum2[t][a][q];
                }
            }
        }
        self.irregular += other.irregular;
        self
    }

    fn mean_std(&self, t: usize, algo: &Algo, query: Query) -> (f64, f64) {
        let Some(a) = ELLIPSOID_ALGOS.iter().position(|x| x == algo) else {
            return (f64::NAN, f64::NAN);
        };
        let q = bench::query_index(query);
        let n = self.n[t];
        if n == 0.0 {
            return (f64::NAN, f64::NAN);
        }
        let mean = self.sum[t][a][q] / n;
        (mean, (self.sum2[t][a][q] / n - mean * mean).max(0.0).sqrt())
    }

    fn mean(&self, target: f64, algo: &Algo, query: Query) -> f64 {
        DISTANCES
            .iter()
            .position(|d| *d == target)
            .map_or(f64::NAN, |t| self.mean_std(t, algo, query).0)
    }
}

/// The poses of one pair of ellipsoids, every variant and query run on each.
fn pair_sums(seed: u64, poses: usize) -> Result<Sums, CollisionError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let a = normal_ellipsoid(&mut rng, 0.1, 0.025)?;
    let b = normal_ellipsoid(&mut rng, 0.1, 0.025)?;
    let problems = bench::problems(&mut rng, &[(a, b)], poses, &DISTANCES)?;
    let mut sums = Sums::new();
    for p in &problems {
        let Some(t) = DISTANCES.iter().position(|d| *d == p.target) else {
            continue;
        };
        sums.n[t] += 1.0;
        for (a, algo) in ELLIPSOID_ALGOS.iter().enumerate() {
            for (q, query) in Query::BOTH.iter().enumerate() {
                let o = bench::run(p, algo, *query, None);
                let k = o.iterations as f64;
                sums.sum[t][a][q] += k;
                sums.sum2[t][a][q] += k * k;
                sums.irregular += usize::from(!(o.converged && o.gap_stop));
            }
        }
    }
    Ok(sums)
}

fn panel(sums: &Sums, query: Query, zoom: bool) -> Panel {
    let keep = |d: f64| !zoom || d.abs() <= 0.1;
    Panel::Line(LineChart {
        title: format!(
            "{} ({})",
            match query {
                Query::Distance => "(a) distance computation",
                Query::Collision => "(b) boolean collision check",
            },
            if zoom {
                "−0.1 to 0.1 m"
            } else {
                "−0.1 to 1 m"
            }
        ),
        x_label: "signed distance (m)".into(),
        y_label: "iterations (mean)".into(),
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        curves: ELLIPSOID_ALGOS
            .iter()
            .map(|algo| {
                let points = DISTANCES
                    .iter()
                    .enumerate()
                    .filter(|(_, d)| keep(**d))
                    .map(|(t, d)| (*d, sums.mean_std(t, algo, query).0))
                    .collect();
                Curve::styled(algo.label, points, algo_style(algo)).marked()
            })
            .collect(),
        ..LineChart::default()
    })
}

impl Experiment for Fig7 {
    fn id(&self) -> &'static str {
        "gjk-fig7"
    }

    fn paper_ref(&self) -> &'static str {
        "GJK++ Fig. 7"
    }

    fn title(&self) -> &'static str {
        "Iterations on ellipsoids against the distance between them"
    }

    fn run(&self, ctx: &Context) -> Result<Page, PaperError> {
        let (pairs, poses) = if ctx.quick { (50, 10) } else { (1000, 100) };
        let sums = (0..pairs as u64)
            .into_par_iter()
            .map(|k| pair_sums(1000 + k, poses))
            .try_reduce(Sums::new, |a, b| Ok(a.merge(b)))
            .map_err(|e| PaperError::RunFailed {
                run: "gjk-fig7".into(),
                reason: e.to_string(),
            })?;
        let stem = ctx.figure(
            "gjk-fig7",
            &Figure::grid(
                "GJK++ Fig. 7: iterations on random ellipsoid pairs",
                2,
                vec![
                    panel(&sums, Query::Distance, false),
                    panel(&sums, Query::Collision, false),
                    panel(&sums, Query::Distance, true),
                    panel(&sums, Query::Collision, true),
                ],
            ),
        )?;
        let mut page = Page::headed(self);
        page.setup = vec![
            format!(
                "{pairs} pairs of ellipsoids with semi-axes drawn from N(0.1, 0.025) m (seeds \
                 1000…), {poses} random poses per pair, each set to the {} signed distances {} m \
                 along the axis of the closest points: {} problems per distance (the paper: \
                 1000 pairs × 100 poses).",
                DISTANCES.len(),
                DISTANCES.map(num).join(", "),
                pairs * poses
            ),
            format!(
                "Duality-gap tolerance {TOLERANCE:e}; collision threshold 1e-4 m; GJK from the \
                 bounding-box centres. Nesterov without normalization is GJK++'s choice for \
                 strictly convex shapes; the normalized one is shown beside it."
            ),
        ];
        page.figures
            .push(("Mean iterations against the signed distance".into(), stem));
        page.tables.push(table(&sums, Query::Distance));
        page.tables.push(table(&sums, Query::Collision));
        page.claims = claims(&sums);
        page.notes.push(format!(
            "Runs that hit the cap or stopped on a floating-point fixed point instead of the \
             duality gap: {} of {}.",
            sums.irregular,
            pairs * poses * DISTANCES.len() * A * 2
        ));
        Ok(page)
    }
}

fn table(sums: &Sums, query: Query) -> (String, String) {
    let mut header = vec!["distance (m)"];
    header.extend(ELLIPSOID_ALGOS.iter().map(|a| a.label));
    let rows: Vec<Vec<String>> = DISTANCES
        .iter()
        .enumerate()
        .map(|(t, d)| {
            let mut row = vec![num(*d)];
            row.extend(ELLIPSOID_ALGOS.iter().map(|a| {
                let (m, s) = sums.mean_std(t, a, query);
                super::pm(m, s)
            }));
            row
        })
        .collect();
    (
        format!("Iterations, {} (mean ± std)", query.name()),
        markdown_table(&header, &rows),
    )
}

fn claims(sums: &Sums) -> Vec<Claim> {
    let d = Query::Distance;
    let shallow = [-0.01, -0.005, -0.001];
    let close = [0.001, 0.005, 0.01, 0.05, 0.1];
    let count = |targets: &[f64], ok: &dyn Fn(f64) -> bool| {
        targets.iter().filter(|t| ok(**t)).count() as f64
    };
    let m = |t: f64, a: &Algo, q: Query| sums.mean(t, a, q);
    vec![
        Claim::at_least(
            "shallowly intersecting: Polyak and Nesterov converge with the same or fewer iterations than GJK (§IV-A)",
            "distances of −0.01, −0.005, −0.001 m (of 3) where both are ≤ GJK",
            count(&shallow, &|t| m(t, &POLYAK_COAL, d) <= m(t, &GJK, d) && m(t, &NESTEROV_RAW, d) <= m(t, &GJK, d)),
            3.0,
        ),
        Claim::ratio_at_least(
            "the shallower the penetration, the more Nesterov accelerates over GJK (§IV-A)",
            ("GJK/Nesterov at −0.001 m", m(-0.001, &GJK, d) / m(-0.001, &NESTEROV_RAW, d)),
            ("GJK/Nesterov at −0.1 m", m(-0.1, &GJK, d) / m(-0.1, &NESTEROV_RAW, d)),
            1.0,
        ),
        Claim::at_least(
            "in close proximity, Nesterov needs significantly fewer iterations than GJK and Polyak (§IV-A)",
            "distances in (0, 0.1] m (of 5) where Nesterov < GJK and < Polyak",
            count(&close, &|t| m(t, &NESTEROV_RAW, d) < m(t, &GJK, d) && m(t, &NESTEROV_RAW, d) < m(t, &POLYAK_COAL, d)),
            5.0,
        ),
        Claim::ratio_at_least(
            "distant shapes (1 m): Nesterov is detrimental to distance computation (§IV-A)",
            ("Nesterov at 1 m", m(1.0, &NESTEROV_RAW, d)),
            ("GJK at 1 m", m(1.0, &GJK, d)),
            1.0,
        ),
        Claim::at_most(
            "Polyak stays competitive with GJK when strongly overlapping or distant (§IV-A)",
            "largest Polyak / GJK at −0.1 m and 1 m",
            (m(-0.1, &POLYAK_COAL, d) / m(-0.1, &GJK, d)).max(m(1.0, &POLYAK_COAL, d) / m(1.0, &GJK, d)),
            1.1,
        ),
        Claim::at_least(
            "a similar pattern holds for the boolean collision check (Fig. 7b): Nesterov needs no more iterations than GJK in close proximity",
            "distances in (0, 0.1] m (of 5) where Nesterov ≤ GJK, collision check",
            count(&close, &|t| m(t, &NESTEROV_RAW, Query::Collision) <= m(t, &GJK, Query::Collision)),
            5.0,
        ),
    ]
}
