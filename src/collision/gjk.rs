//! GJK as a fully-corrective Frank-Wolfe method on the Minkowski difference `D = A − B`
//! (GJK++, Montaut et al.): vanilla (Alg. 4), Polyak- and Nesterov-accelerated (Alg. 6),
//! with the support-direction normalization of Alg. 7 and the fixed-point criterion of
//! eq. (32), which hands over to vanilla GJK when momentum stalls.
//!
//! Everything is computed in the frame of shape A; `B` is placed by the pose of B in A.
//! Shapes are searched through their cores: inflation radii are added by the caller.

use nalgebra::{Isometry3, Vector3};

use super::shape::Shape;
use super::simplex::{Simplex, SupportPoint};
use super::support::SupportMap;

/// Which GJK variant runs (GJK++ §III).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GjkVariant {
    /// Vanilla GJK, support in the direction of the gradient `2x` (Alg. 4).
    #[default]
    Vanilla,
    /// Polyak (heavy-ball) momentum on the support direction (Alg. 6, `y = x`).
    Polyak,
    /// Nesterov momentum (Alg. 6, `y = δx + (1−δ)s_prev`), with or without the
    /// normalization of Alg. 7 (recommended for non-strictly convex shapes).
    Nesterov {
        /// Normalize momentum and gradient before mixing them (Alg. 7, eq. 33).
        normalize: bool,
    },
}

impl GjkVariant {
    /// Short name used in tables and bench ids (`vanilla`, `polyak`, `nesterov`,
    /// `nesterov-raw` for Nesterov without normalization).
    pub fn name(&self) -> &'static str {
        match self {
            GjkVariant::Vanilla => "vanilla",
            GjkVariant::Polyak => "polyak",
            GjkVariant::Nesterov { normalize: true } => "nesterov",
            GjkVariant::Nesterov { normalize: false } => "nesterov-raw",
        }
    }
}

/// What GJK is asked (GJK++ §II).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum GjkQuery {
    /// Distance between the cores (run to the duality-gap tolerance).
    #[default]
    Distance,
    /// Boolean collision check: stop as soon as a separating plane proves the cores are
    /// farther than `threshold` (m) apart (Alg. 2).
    Collision {
        /// Distance below which the cores are considered colliding (m).
        threshold: f64,
    },
}

/// Settings of one GJK call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GjkSettings {
    /// Variant (default vanilla).
    pub variant: GjkVariant,
    /// Query (default distance).
    pub query: GjkQuery,
    /// Tolerance `ε` on the duality gap `g(x) = 2⟨x, x − s⟩` (m², eq. 17/32; default
    /// 1e-12): the returned core distance exceeds the true one by at most `ε / (2 dist)`
    /// and the witness vector is within `√ε` of the optimum (eq. 18). The origin is
    /// considered inside `D` when `‖x‖² ≤ ε`.
    pub tolerance: f64,
    /// Iteration cap (default 256).
    pub max_iterations: usize,
}

impl Default for GjkSettings {
    fn default() -> Self {
        Self {
            variant: GjkVariant::Vanilla,
            query: GjkQuery::Distance,
            tolerance: 1e-12,
            max_iterations: 256,
        }
    }
}

/// The outcome of GJK (witness points in the frame of shape A, cores only).
#[derive(Debug, Clone, PartialEq)]
pub enum GjkResult {
    /// The cores are separated: `distance = ‖point_a − point_b‖`.
    Separated {
        /// Distance between the cores (m).
        distance: f64,
        /// Closest point on A's core.
        point_a: Vector3<f64>,
        /// Closest point on B's core.
        point_b: Vector3<f64>,
        /// Iterations used.
        iterations: usize,
    },
    /// Boolean query only: a separating plane proves the cores are farther apart than the
    /// threshold; `lower_bound` is the distance that plane certifies (Alg. 2).
    SeparatingPlane {
        /// Certified lower bound on the core distance (m).
        lower_bound: f64,
        /// Unit direction `d/‖d‖` of the plane, pointing from B to A.
        direction: Vector3<f64>,
        /// Iterations used.
        iterations: usize,
    },
    /// The cores overlap (the origin is in `D` up to the tolerance); the final simplex
    /// is the starting point of EPA.
    Overlap {
        /// Iterations used.
        iterations: usize,
    },
    /// The iteration cap was hit; the last iterate gives an upper bound on the distance.
    NotConverged {
        /// Iterations used (= the cap).
        iterations: usize,
        /// `‖x‖` of the last iterate, an upper bound on the core distance (m).
        distance_upper_bound: f64,
    },
}

impl GjkResult {
    /// Number of GJK iterations (support calls of the main loop).
    pub fn iterations(&self) -> usize {
        match self {
            GjkResult::Separated { iterations, .. }
            | GjkResult::SeparatingPlane { iterations, .. }
            | GjkResult::Overlap { iterations }
            | GjkResult::NotConverged { iterations, .. } => *iterations,
        }
    }
}

/// The Minkowski difference `D = A − B` of two shapes' cores, B placed in A's frame;
/// keeps the mesh hill-climbing hints between support calls.
#[derive(Debug, Clone)]
pub struct MinkowskiDifference<'a> {
    a: &'a Shape,
    b: &'a Shape,
    b_in_a: Isometry3<f64>,
    hint_a: usize,
    hint_b: usize,
}

impl<'a> MinkowskiDifference<'a> {
    /// `D = A − B` with `b_in_a` the pose of B's frame in A's frame.
    pub fn new(a: &'a Shape, b: &'a Shape, b_in_a: Isometry3<f64>) -> Self {
        Self {
            a,
            b,
            b_in_a,
            hint_a: usize::MAX,
            hint_b: usize::MAX,
        }
    }

    /// Pose of B in A's frame.
    pub fn b_in_a(&self) -> &Isometry3<f64> {
        &self.b_in_a
    }

    /// `S_D(d) = argmin_{s ∈ D} ⟨d, s⟩ = S_A(−d) − S_B(d)` (eq. 8, 11).
    pub fn support(&mut self, d: &Vector3<f64>) -> SupportPoint {
        let a = self.a.local_support_hinted(&-d, &mut self.hint_a);
        let d_in_b = self.b_in_a.rotation.inverse_transform_vector(d);
        let b_local = self.b.local_support_hinted(&d_in_b, &mut self.hint_b);
        let b = self.b_in_a.transform_point(&b_local.into()).coords;
        SupportPoint { w: a - b, a, b }
    }
}

/// The momentum state of Alg. 6 (`d_{k−1}`, `s_{k−1}`), switched off by eq. (32).
struct Momentum {
    variant: GjkVariant,
    active: bool,
    previous_direction: Vector3<f64>,
    previous_support: Vector3<f64>,
}

impl Momentum {
    fn new(variant: GjkVariant, x0: Vector3<f64>) -> Self {
        Self {
            variant,
            active: variant != GjkVariant::Vanilla,
            previous_direction: x0,
            previous_support: x0,
        }
    }

    /// Support direction `d_k` (Alg. 6 lines 1-3, Alg. 7), or `x` when inactive.
    fn direction(&self, k: usize, x: &Vector3<f64>) -> Vector3<f64> {
        if !self.active {
            return *x;
        }
        let delta = (k as f64 + 1.0) / (k as f64 + 3.0);
        match self.variant {
            GjkVariant::Vanilla => *x,
            GjkVariant::Polyak => {
                // HPP-FCL's schedule for Polyak, δ = 1/(k+1): the paper's (k+1)/(k+3)
                // was measured slower than vanilla on shallow overlaps here.
                let polyak = 1.0 / (k as f64 + 1.0);
                self.previous_direction * polyak + x * (1.0 - polyak)
            }
            GjkVariant::Nesterov { normalize } => {
                let y = x * delta + self.previous_support * (1.0 - delta);
                if normalize {
                    let d_prev = self.previous_direction.try_normalize(0.0);
                    let grad = y.try_normalize(0.0);
                    match (d_prev, grad) {
                        (Some(d), Some(g)) => d * delta + g * (1.0 - delta),
                        _ => *x,
                    }
                } else {
                    self.previous_direction * delta + y * (1.0 - delta)
                }
            }
        }
    }
}

/// Runs GJK on `D` from the initial guess `x0` (warm start: the previous separation
/// vector `a − b`, or the difference of the bounding-box centres). `simplex` is the
/// caller's workspace: on `Overlap` it holds the simplex EPA starts from.
pub fn gjk(
    diff: &mut MinkowskiDifference<'_>,
    x0: &Vector3<f64>,
    settings: &GjkSettings,
    simplex: &mut Simplex,
) -> GjkResult {
    simplex.clear();
    let eps = settings.tolerance;
    let mut x = if x0.iter().all(|c| c.is_finite()) && x0.norm_squared() > 0.0 {
        *x0
    } else {
        Vector3::x()
    };
    let mut momentum = Momentum::new(settings.variant, x);
    let mut first = true;
    for k in 0..settings.max_iterations {
        let iterations = k + 1;
        let mut direction = momentum.direction(k, &x);
        if direction.norm_squared() == 0.0 {
            direction = x;
        }
        let mut s = diff.support(&direction);
        if let GjkQuery::Collision { threshold } = settings.query {
            // Alg. 2: ⟨d/‖d‖, s⟩ lower-bounds the distance; above the threshold, stop.
            let lower_bound = direction.normalize().dot(&s.w);
            if lower_bound > threshold {
                return GjkResult::SeparatingPlane {
                    lower_bound,
                    direction: direction.normalize(),
                    iterations,
                };
            }
        }
        if !first {
            // Fixed-point / duality-gap criterion, eq. (32), Alg. 6 lines 5-7.
            if duality_gap(&x, &s.w) <= eps {
                if !momentum.active {
                    return separated(simplex, iterations);
                }
                momentum.active = false;
                s = diff.support(&x);
                if duality_gap(&x, &s.w) <= eps {
                    return separated(simplex, iterations);
                }
            }
            if simplex.contains(&s.w) {
                if !momentum.active {
                    // No new support point: numerically converged.
                    return separated(simplex, iterations);
                }
                momentum.active = false;
                continue;
            }
        }
        first = false;
        momentum.previous_direction = direction;
        momentum.previous_support = s.w;
        simplex.push(s);
        let previous_norm2 = x.norm_squared();
        x = simplex.project_origin();
        let norm2 = x.norm_squared();
        if simplex.len() == 4 || norm2 <= eps {
            return GjkResult::Overlap { iterations };
        }
        if !momentum.active && simplex.len() > 1 && norm2 >= previous_norm2 && k > 0 {
            // Vanilla GJK must decrease ‖x‖; no decrease means round-off has won.
            return separated(simplex, iterations);
        }
    }
    GjkResult::NotConverged {
        iterations: settings.max_iterations,
        distance_upper_bound: if simplex.is_empty() {
            f64::INFINITY
        } else {
            x.norm()
        },
    }
}

/// `g(x) = 2⟨x, x − s⟩` (eq. 32; the Frank-Wolfe duality gap eq. 16 when `s = S_D(x)`).
fn duality_gap(x: &Vector3<f64>, s: &Vector3<f64>) -> f64 {
    2.0 * x.dot(&(x - s))
}

fn separated(simplex: &Simplex, iterations: usize) -> GjkResult {
    let (point_a, point_b) = simplex.witnesses();
    GjkResult::Separated {
        distance: (point_a - point_b).norm(),
        point_a,
        point_b,
        iterations,
    }
}
