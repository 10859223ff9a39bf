//! The measurement shared by the collision pages: collision problems (placed pairs at
//! fixed distances), one GJK variant run on a problem for its iterations or timed under
//! the papers' protocol, and the per-distance statistics the figures plot.

use std::sync::Arc;

use nalgebra::Vector3;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use super::{mean_std, Algo};
use crate::collision::benchmark::{
    centre_guess, mean_of_fastest, place_at_distances, run_gjk_from, PlacedPair,
};
use crate::collision::simplex::Simplex;
use crate::collision::{CollisionError, GjkQuery, GjkResult, GjkSettings, SeparationStop, Shape};

/// Tolerance on the Frank-Wolfe duality gap (m², both papers).
pub const TOLERANCE: f64 = 1e-8;
/// Distance below which shapes collide in the boolean check, `ε_col = √ε` (m, GJK++ §II).
pub const COLLISION_THRESHOLD: f64 = 1e-4;
/// GJK iteration cap (no run of the pages comes near it).
pub const MAX_ITERATIONS: usize = 1000;
/// Fraction of the fastest runs averaged (GJK++ §IV).
pub const KEPT_FRACTION: f64 = 0.9;

/// Distance computation or boolean collision check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Query {
    /// `T_D`: the distance, to the duality-gap tolerance.
    Distance,
    /// `T_C`: collision or not, stopping at the first separating plane beyond `ε_col`.
    Collision,
}

impl Query {
    /// Both, in the papers' order.
    pub const BOTH: [Query; 2] = [Query::Distance, Query::Collision];

    /// `distance` or `collision`.
    pub fn name(self) -> &'static str {
        match self {
            Query::Distance => "distance",
            Query::Collision => "collision",
        }
    }

    /// `T_D` or `T_C`.
    pub fn symbol(self) -> &'static str {
        match self {
            Query::Distance => "T_D",
            Query::Collision => "T_C",
        }
    }
}

/// One collision problem: a placed pair, the distance it was placed at, its pair's index
/// and GJK's initial guess (the bounding-box centres).
#[derive(Debug, Clone)]
pub struct Problem {
    /// The shapes and poses (with the measured signed distance).
    pub pair: PlacedPair,
    /// Target signed distance (m).
    pub target: f64,
    /// Index of the pair of shapes.
    pub pair_id: usize,
    /// `x₀ = c¹ − c²` in A's frame.
    pub x0: Vector3<f64>,
}

/// `poses` random poses of every pair of `shapes`, each set to every distance of
/// `targets`.
pub fn problems(
    rng: &mut ChaCha8Rng,
    shapes: &[(Shape, Shape)],
    poses: usize,
    targets: &[f64],
) -> Result<Vec<Problem>, CollisionError> {
    let mut out = Vec::with_capacity(shapes.len() * poses * targets.len());
    for (pair_id, (a, b)) in shapes.iter().enumerate() {
        for _ in 0..poses {
            for (pair, target) in place_at_distances(rng, a, b, targets)?
                .into_iter()
                .zip(targets)
            {
                out.push(Problem {
                    x0: centre_guess(&pair),
                    pair,
                    target: *target,
                    pair_id,
                });
            }
        }
    }
    Ok(out)
}

/// Problems whose targets are drawn uniformly in `[lo, hi]`, one per pose.
pub fn problems_in_range(
    rng: &mut ChaCha8Rng,
    shapes: &[(Shape, Shape)],
    poses: usize,
    (lo, hi): (f64, f64),
) -> Result<Vec<Problem>, CollisionError> {
    let mut out = Vec::new();
    for (pair_id, (a, b)) in shapes.iter().enumerate() {
        for _ in 0..poses {
            let target = rng.random_range(lo..=hi);
            for pair in place_at_distances(rng, a, b, &[target])? {
                out.push(Problem {
                    x0: centre_guess(&pair),
                    pair,
                    target,
                    pair_id,
                });
            }
        }
    }
    Ok(out)
}

/// GJK settings of a variant and query under the papers' protocol.
pub fn settings(algo: &Algo, query: Query) -> GjkSettings {
    GjkSettings {
        variant: algo.variant,
        schedule: algo.schedule,
        query: match query {
            Query::Distance => GjkQuery::Distance,
            Query::Collision => GjkQuery::Collision {
                threshold: COLLISION_THRESHOLD,
            },
        },
        tolerance: TOLERANCE,
        max_iterations: MAX_ITERATIONS,
    }
}

/// What one variant did on one problem.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    /// Iterations counted as HPP-FCL and coal count them (and the papers report): updates
    /// of the simplex, that is [`GjkResult::iterations`] less the final support call that
    /// certifies convergence (the iteration cap when it was hit).
    pub iterations: usize,
    /// Mean of the fastest runs (µs), NaN when not timed.
    pub micros: f64,
    /// False when GJK hit its iteration cap.
    pub converged: bool,
    /// True when a separated answer was stopped by the duality gap, or the answer is not
    /// a separated one (overlap, separating plane).
    pub gap_stop: bool,
}

/// How a problem is timed: `runs` timed calls, the fastest [`KEPT_FRACTION`] averaged.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// Timed calls per problem.
    pub runs: usize,
}

impl Timing {
    /// 100 runs (GJK++ §IV), 20 at the CI size.
    pub fn for_size(quick: bool) -> Self {
        Self {
            runs: if quick { 20 } else { 100 },
        }
    }
}

/// Runs `algo` on `problem` from `x0` once (iterations), then `timing.runs` times if asked.
pub fn run_from(
    problem: &Problem,
    x0: &Vector3<f64>,
    algo: &Algo,
    query: Query,
    timing: Option<Timing>,
) -> Outcome {
    let settings = settings(algo, query);
    let mut simplex = Simplex::default();
    let result = run_gjk_from(&problem.pair, x0, &settings, &mut simplex);
    let micros = timing.map_or(f64::NAN, |t| {
        mean_of_fastest(t.runs, KEPT_FRACTION, || {
            std::hint::black_box(run_gjk_from(
                std::hint::black_box(&problem.pair),
                x0,
                &settings,
                &mut simplex,
            ));
        })
    });
    let converged = !matches!(result, GjkResult::NotConverged { .. });
    Outcome {
        iterations: if converged {
            result.iterations().saturating_sub(1)
        } else {
            result.iterations()
        },
        micros,
        converged,
        gap_stop: !matches!(
            result,
            GjkResult::Separated {
                stop: SeparationStop::NoNewSupport | SeparationStop::NoProgress,
                ..
            } | GjkResult::NotConverged { .. }
        ),
    }
}

/// [`run_from`] from the bounding-box centres.
pub fn run(problem: &Problem, algo: &Algo, query: Query, timing: Option<Timing>) -> Outcome {
    run_from(problem, &problem.x0, algo, query, timing)
}

/// Outcomes of every problem × variant × query: `outcomes[p][a][q]`.
#[derive(Debug, Clone)]
pub struct Results {
    /// The variants, in column order.
    pub algos: Vec<Algo>,
    /// The problems.
    pub problems: Arc<Vec<Problem>>,
    /// `[problem][algo][query]`, queries in [`Query::BOTH`] order.
    pub outcomes: Vec<Vec<[Outcome; 2]>>,
}

/// Runs every variant on every problem, both queries. Untimed runs are spread over the
/// cores; timed ones run one at a time, so that they do not compete with each other.
pub fn run_all(problems: Arc<Vec<Problem>>, algos: &[Algo], timing: Option<Timing>) -> Results {
    let one = |p: &Problem| -> Vec<[Outcome; 2]> {
        algos
            .iter()
            .map(|a| Query::BOTH.map(|q| run(p, a, q, timing)))
            .collect()
    };
    let outcomes = if timing.is_some() {
        problems.iter().map(one).collect()
    } else {
        problems.par_iter().map(one).collect()
    };
    Results {
        algos: algos.to_vec(),
        problems,
        outcomes,
    }
}

impl Results {
    /// Index of a variant.
    pub fn index(&self, algo: &Algo) -> Option<usize> {
        self.algos.iter().position(|a| a == algo)
    }

    /// Values of `f` over the problems kept by `keep`, for one variant and query.
    pub fn values(
        &self,
        algo: &Algo,
        query: Query,
        keep: impl Fn(&Problem) -> bool,
        f: impl Fn(&Outcome) -> f64,
    ) -> Vec<f64> {
        let Some(a) = self.index(algo) else {
            return Vec::new();
        };
        let q = query_index(query);
        self.problems
            .iter()
            .zip(&self.outcomes)
            .filter(|(p, _)| keep(p))
            .map(|(_, o)| f(&o[a][q]))
            .collect()
    }

    /// Mean and standard deviation of iterations or times at one target distance.
    pub fn at_target(
        &self,
        algo: &Algo,
        query: Query,
        target: f64,
        f: impl Fn(&Outcome) -> f64,
    ) -> (f64, f64) {
        mean_std(&self.values(algo, query, |p| p.target == target, f))
    }

    /// Per-problem ratios `f(reference) / f(algo)` on the problems kept by `keep`.
    pub fn ratios(
        &self,
        reference: &Algo,
        algo: &Algo,
        query: Query,
        keep: impl Fn(&Problem) -> bool + Copy,
        f: impl Fn(&Outcome) -> f64 + Copy,
    ) -> Vec<f64> {
        self.values(reference, query, keep, f)
            .iter()
            .zip(self.values(algo, query, keep, f))
            .map(|(r, a)| r / a)
            .collect()
    }

    /// Runs that hit the cap or stopped on something else than the duality gap.
    pub fn irregular(&self) -> (usize, usize) {
        let mut capped = 0;
        let mut other = 0;
        for o in self.outcomes.iter().flatten().flatten() {
            capped += usize::from(!o.converged);
            other += usize::from(o.converged && !o.gap_stop);
        }
        (capped, other)
    }
}

/// Position of a query in [`Query::BOTH`].
pub fn query_index(query: Query) -> usize {
    match query {
        Query::Distance => 0,
        Query::Collision => 1,
    }
}

/// Iterations as a float.
pub fn iterations(o: &Outcome) -> f64 {
    o.iterations as f64
}

/// Time (µs).
pub fn micros(o: &Outcome) -> f64 {
    o.micros
}
