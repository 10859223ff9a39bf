//! GJK++ Fig. 13: warm-starting GJK and its accelerations along trajectories, for the
//! boolean collision check of the pairs a broad phase does not discard.
//!
//! GJK++ drops pairs of YCB objects in a funnel with Bullet at 120 Hz; no mesh-mesh
//! simulator is here, so the trajectories are smooth synthetic relative motions of pairs
//! of robot meshes through contact: B is placed near A at a random pose, then moves
//! along `t ∈ [−0.5, 0.5]` s with a constant linear and angular velocity about that pose,
//! sampled at 120 Hz. Steps whose world bounding boxes do not overlap are filtered out,
//! as a broad phase would.

use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use plotters::style::RGBColor;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::bench::{run_from, Problem, Query, Timing};
use super::mesh_figures::mesh_bench;
use super::{mean_std, not_measurable, pm, quantile, Algo, GJK, NESTEROV_COAL, POLYAK_COAL};
use crate::collision::benchmark::{centre_guess, place_at_distances, random_direction, PlacedPair};
use crate::collision::broadphase::world_aabb;
use crate::collision::contact::{signed_distance, ContactSettings};
use crate::collision::{CollisionError, Shape};
use crate::paper::claims::{num, Claim};
use crate::paper::page::Page;
use crate::paper::{Context, Experiment, PaperError};
use crate::report::axis::Scale;
use crate::report::chart::{BoxChart, BoxGroup, BoxSpec, Figure, Panel};
use crate::report::tables::markdown_table;

/// GJK++ Fig. 13.
pub struct Fig13;

const ALGOS: [Algo; 3] = [GJK, POLYAK_COAL, NESTEROV_COAL];
const STRATEGIES: [&str; 4] = ["No WS", "OBB WS", "WS prev", "WS T(prev)"];
/// The strategies in words, for the figure's legend (the paper's names in brackets).
const STRATEGY_WORDS: [&str; 4] = [
    "no warm start (No WS)",
    "bounding-box centres (OBB WS)",
    "previous separation vector (WS prev)",
    "previous witnesses, moved (WS T(prev))",
];
const COLORS: [RGBColor; 4] = [
    RGBColor(120, 120, 120),
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
];
/// Steps per trajectory (1 s at 120 Hz).
const STEPS: usize = 120;

/// The previous step's answer: separation vector and witnesses (A's frame, B's frame).
#[derive(Debug, Clone, Copy)]
struct Previous {
    x: Vector3<f64>,
    a_in_a: Vector3<f64>,
    b_in_b: Vector3<f64>,
}

/// Times (µs) of one step: `[algo][strategy]`.
type StepTimes = [[f64; 4]; 3];

fn pose_at(start: &Isometry3<f64>, v: &Vector3<f64>, w: &Vector3<f64>, t: f64) -> Isometry3<f64> {
    let rotation = UnitQuaternion::from_scaled_axis(w * t) * start.rotation;
    Isometry3::from_parts(
        Translation3::from(start.translation.vector + v * t),
        rotation,
    )
}

/// The four initial guesses of a step (A's frame).
fn guesses(pair: &PlacedPair, previous: Option<Previous>) -> [Vector3<f64>; 4] {
    let obb = centre_guess(pair);
    let b_in_a = pair.pose_a.inv_mul(&pair.pose_b);
    let (prev, moved) = match previous {
        Some(p) => {
            let moved = p.a_in_a - b_in_a.transform_point(&p.b_in_b.into()).coords;
            (p.x, if moved.norm() > 1e-9 { moved } else { p.x })
        }
        None => (obb, obb),
    };
    [Vector3::x(), obb, prev, moved]
}

/// The answer a simulator's narrow phase gives at this step (GJK, then EPA).
fn answer(pair: &PlacedPair) -> Result<Previous, CollisionError> {
    let c = signed_distance(
        &pair.a,
        &pair.pose_a,
        &pair.b,
        &pair.pose_b,
        &ContactSettings::default(),
        None,
    )?;
    let to_a = |p: &Vector3<f64>| pair.pose_a.inverse_transform_point(&(*p).into()).coords;
    let to_b = |p: &Vector3<f64>| pair.pose_b.inverse_transform_point(&(*p).into()).coords;
    let normal = pair.pose_a.rotation.inverse_transform_vector(&c.normal);
    Ok(Previous {
        x: -normal * c.distance.abs().max(1e-6),
        a_in_a: to_a(&c.point_a),
        b_in_b: to_b(&c.point_b),
    })
}

fn trajectory(
    rng: &mut ChaCha8Rng,
    a: &Shape,
    b: &Shape,
    timing: Timing,
) -> Result<Vec<StepTimes>, CollisionError> {
    let d0 = rng.random_range(-0.005..=0.02);
    let Some(start) = place_at_distances(rng, a, b, &[d0])?.pop() else {
        return Ok(Vec::new());
    };
    let v = random_direction(rng) * rng.random_range(0.02..=0.1);
    let w = random_direction(rng) * rng.random_range(0.5..=2.0);
    let mut previous: Option<Previous> = None;
    let mut out = Vec::new();
    for k in 0..STEPS {
        let t = k as f64 / STEPS as f64 - 0.5;
        let pair = PlacedPair {
            pose_b: pose_at(&start.pose_b, &v, &w, t),
            ..start.clone()
        };
        let overlap = match (world_aabb(a, &pair.pose_a), world_aabb(b, &pair.pose_b)) {
            (Some(x), Some(y)) => x.intersects(&y),
            _ => true,
        };
        if !overlap {
            previous = None;
            continue;
        }
        let problem = Problem {
            x0: centre_guess(&pair),
            pair,
            target: f64::NAN,
            pair_id: 0,
        };
        let starts = guesses(&problem.pair, previous);
        let times = ALGOS.map(|algo| {
            starts.map(|x0| run_from(&problem, &x0, &algo, Query::Collision, Some(timing)).micros)
        });
        out.push(times);
        previous = Some(answer(&problem.pair)?);
    }
    Ok(out)
}

fn samples(steps: &[StepTimes], a: usize, s: usize) -> Vec<f64> {
    steps.iter().map(|t| t[a][s]).collect()
}

impl Experiment for Fig13 {
    fn id(&self) -> &'static str {
        "gjk-fig13"
    }

    fn paper_ref(&self) -> &'static str {
        "GJK++ Fig. 13"
    }

    fn title(&self) -> &'static str {
        "Warm-start strategies along trajectories (boolean collision check)"
    }

    fn run(&self, ctx: &Context) -> Result<Page, PaperError> {
        let mut page = Page::headed(self);
        let bench = match mesh_bench(ctx.quick) {
            Ok(b) => b,
            Err(reason) => {
                page.claims.push(not_measurable(
                    "OBB WS and WS prev beat No WS and WS T(prev)",
                    "times per strategy",
                    &reason,
                ));
                return Ok(page);
            }
        };
        let hulls: Vec<Shape> = bench
            .meshes
            .iter()
            .filter_map(|name| bench.corpus.meshes.iter().find(|m| &m.name == name))
            .map(|m| Shape::convex_hull(m.hull.clone()))
            .collect();
        let trajectories = if ctx.quick { 20 } else { 100 };
        let timing = Timing::for_size(ctx.quick);
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        let mut steps = Vec::new();
        for _ in 0..trajectories {
            let i = rng.random_range(0..hulls.len());
            let j = (i + rng.random_range(1..hulls.len().max(2))) % hulls.len();
            steps.extend(
                trajectory(&mut rng, &hulls[i], &hulls[j], timing).map_err(|e| {
                    PaperError::RunFailed {
                        run: "gjk-fig13".into(),
                        reason: e.to_string(),
                    }
                })?,
            );
        }
        let chart = BoxChart {
            title: "GJK++ Fig. 13: boolean collision check along trajectories, by warm start"
                .into(),
            y_label: "time (µs)".into(),
            y_scale: Scale::Log,
            groups: ALGOS
                .iter()
                .enumerate()
                .map(|(a, algo)| BoxGroup {
                    label: algo.short.into(),
                    boxes: (0..4)
                        .map(|s| BoxSpec {
                            samples: samples(&steps, a, s),
                            color: COLORS[s],
                            filled: true,
                        })
                        .collect(),
                })
                .collect(),
            legend: STRATEGY_WORDS
                .iter()
                .zip(COLORS)
                .map(|(s, c)| ((*s).to_string(), c, true))
                .collect(),
        };
        let stem = ctx.figure("gjk-fig13", &Figure::single(Panel::Box(chart)))?;
        page.setup = bench.setup_lines(ctx.quick);
        page.setup.truncate(2);
        page.setup.push(format!(
            "{trajectories} trajectories (seed 6) of random pairs of these meshes: B placed at a \
             signed distance drawn in [−0.005, 0.02] m, then moved with a constant velocity of \
             0.02-0.1 m/s and an angular velocity of 0.5-2 rad/s (random directions) over \
             t ∈ [−0.5, 0.5] s, sampled at 120 Hz; the {} steps whose world bounding boxes \
             overlap are kept.",
            steps.len()
        ));
        page.setup.push(format!(
            "Strategies: No WS x₀ = (1, 0, 0); OBB WS the bounding-box centres; WS prev the \
             previous step's separation vector (GJK or EPA: −n·|d| in A's frame), OBB WS when the \
             previous step was filtered out; WS T(prev) the previous witness points moved with \
             the shapes (a − T_B(t)·b). Each step timed {} times, mean of the fastest 90 %.",
            timing.runs
        ));
        page.figures.push(("Time per strategy".into(), stem));
        page.tables.push(table(&steps));
        page.claims = claims(&steps);
        Ok(page)
    }
}

fn table(steps: &[StepTimes]) -> (String, String) {
    let header = ["variant", "strategy", "mean ± std (µs)", "median (µs)"];
    let mut rows = Vec::new();
    for (a, algo) in ALGOS.iter().enumerate() {
        for (s, name) in STRATEGIES.iter().enumerate() {
            let v = samples(steps, a, s);
            let (m, sd) = mean_std(&v);
            rows.push(vec![
                algo.label.into(),
                (*name).into(),
                pm(m, sd),
                num(quantile(&v, 0.5)),
            ]);
        }
    }
    (
        "Boolean collision time per step".into(),
        markdown_table(&header, &rows),
    )
}

fn claims(steps: &[StepTimes]) -> Vec<Claim> {
    if steps.is_empty() {
        return vec![not_measurable(
            "warm starts along trajectories",
            "times per strategy",
            "no step passed the broad phase",
        )];
    }
    let mean = |a: usize, s: usize| mean_std(&samples(steps, a, s)).0;
    let median = |a: usize, s: usize| quantile(&samples(steps, a, s), 0.5);
    let good = |a: usize| mean(a, 1).max(mean(a, 2));
    let bad = |a: usize| mean(a, 0).min(mean(a, 3));
    let gjk_best = (0..4).map(|s| mean(0, s)).fold(f64::INFINITY, f64::min);
    let gjk_best_median = (0..4).map(|s| median(0, s)).fold(f64::INFINITY, f64::min);
    vec![
        Claim::at_least(
            "No WS and WS T(prev) give a worse initial guess than OBB WS and WS prev, for the three methods (§IV-E)",
            "methods (of 3) where both No WS and WS T(prev) are slower on average than both OBB WS and WS prev",
            (0..3).filter(|&a| bad(a) > good(a)).count() as f64,
            3.0,
        ),
        Claim::at_most(
            "for vanilla GJK, the best strategy is WS prev (§IV-E)",
            "GJK's mean with WS prev / its best mean",
            mean(0, 2) / gjk_best,
            1.0,
        ),
        Claim::ratio_at_most(
            "for Polyak, OBB WS and WS prev both beat vanilla GJK's best strategy (§IV-E)",
            ("slower of Polyak's OBB WS and WS prev", good(1)),
            ("GJK's best", gjk_best),
            1.0,
        ),
        Claim::ratio_at_most(
            "for Nesterov, OBB WS and WS prev both outperform GJK with its best strategy (§IV-E)",
            ("slower of Nesterov's OBB WS and WS prev", good(2)),
            ("GJK's best", gjk_best),
            1.0,
        ),
        Claim::ratio_at_least(
            "with OBB WS, Nesterov's median time is about half of GJK's best (0.5 µs against above 1 µs, §IV-E)",
            ("GJK's best median", gjk_best_median),
            ("Nesterov OBB WS median", median(2, 1)),
            2.0,
        ),
    ]
}
