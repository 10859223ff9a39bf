//! GJK as a fully-corrective Frank-Wolfe method on the Minkowski difference `D = A − B`
//! (GJK++, Montaut et al.): vanilla (Alg. 4), Polyak- and Nesterov-accelerated (Alg. 6),
//! with the support-direction normalization of Alg. 7 and the fixed-point criterion of
//! eq. (32), which hands over to vanilla GJK when momentum stalls.
//!
//! Everything is computed in the frame of shape A; `B` is placed by the pose of B in A.
//! Shapes are searched through their cores: inflation radii are added by the caller.

use nalgebra::{Isometry3, Matrix3, Vector3};

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
    /// Polyak momentum with the normalization of Alg. 7 applied to its two terms (GJK++
    /// Fig. 8 measures it; the paper keeps Polyak unnormalized).
    PolyakNormalized,
    /// Nesterov momentum (Alg. 6, `y = δx + (1−δ)s_prev`), with or without the
    /// normalization of Alg. 7 (recommended for non-strictly convex shapes).
    Nesterov {
        /// Normalize momentum and gradient before mixing them (Alg. 7, eq. 33).
        normalize: bool,
    },
}

impl GjkVariant {
    /// Short name used in tables and bench ids (`vanilla`, `polyak`, `polyak-norm`,
    /// `nesterov`, `nesterov-raw` for Nesterov without normalization).
    pub fn name(&self) -> &'static str {
        match self {
            GjkVariant::Vanilla => "vanilla",
            GjkVariant::Polyak => "polyak",
            GjkVariant::PolyakNormalized => "polyak-norm",
            GjkVariant::Nesterov { normalize: true } => "nesterov",
            GjkVariant::Nesterov { normalize: false } => "nesterov-raw",
        }
    }
}

/// How the momentum parameter `δ_k` of Alg. 6 evolves with the iteration `k`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MomentumSchedule {
    /// The text of GJK++ (Alg. 5-7, eq. 26-28): `δ_k = (k+1)/(k+3)` for every variant.
    #[default]
    Paper,
    /// HPP-FCL / coal 3, the implementation GJK++ measured: Polyak `δ_k = 1/(k+1)`;
    /// Nesterov `δ_k = (k+2)/(k+3)` with the normalization of Alg. 7, `(k+1)/(k+3)`
    /// without. Coal normalizes only pairs that are not both strictly convex: on two
    /// ellipsoids, normalized Nesterov with this `δ` can need thousands of iterations to
    /// reach a duality gap of 1e-12.
    Coal,
}

impl MomentumSchedule {
    /// `δ_k` of `variant` at iteration `k` (Alg. 6 line 1).
    pub fn delta(self, variant: GjkVariant, k: usize) -> f64 {
        let k = k as f64;
        match (self, variant) {
            (MomentumSchedule::Coal, GjkVariant::Polyak | GjkVariant::PolyakNormalized) => {
                1.0 / (k + 1.0)
            }
            (MomentumSchedule::Coal, GjkVariant::Nesterov { normalize: true }) => {
                (k + 2.0) / (k + 3.0)
            }
            _ => (k + 1.0) / (k + 3.0),
        }
    }

    /// `coal` or `paper`.
    pub fn name(self) -> &'static str {
        match self {
            MomentumSchedule::Coal => "coal",
            MomentumSchedule::Paper => "paper",
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

/// Why GJK returned a separation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeparationStop {
    /// The Frank-Wolfe duality gap `2⟨x, x − S_D(x)⟩` reached the tolerance (eq. 17).
    DualityGap,
    /// The support point in direction `x` is already in the simplex: no progress is
    /// possible in floating point.
    NoNewSupport,
    /// `‖x‖` did not decrease: round-off has won.
    NoProgress,
}

/// Settings of one GJK call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GjkSettings {
    /// Variant (default vanilla).
    pub variant: GjkVariant,
    /// Momentum schedule of the accelerated variants (default the paper's).
    pub schedule: MomentumSchedule,
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
            schedule: MomentumSchedule::Paper,
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
        /// What stopped GJK.
        stop: SeparationStop,
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
    /// The rotation of `b_in_a` as a matrix: two matrix-vector products per support call
    /// instead of two quaternion rotations.
    rotation: Matrix3<f64>,
    hint_a: usize,
    hint_b: usize,
    support_calls: usize,
}

impl<'a> MinkowskiDifference<'a> {
    /// `D = A − B` with `b_in_a` the pose of B's frame in A's frame.
    pub fn new(a: &'a Shape, b: &'a Shape, b_in_a: Isometry3<f64>) -> Self {
        Self {
            a,
            b,
            b_in_a,
            rotation: b_in_a.rotation.to_rotation_matrix().into_inner(),
            hint_a: usize::MAX,
            hint_b: usize::MAX,
            support_calls: 0,
        }
    }

    /// `D` with the mesh hill climbing of A and B started from the vertices `hints`
    /// (those of an earlier query of the pair, [`MinkowskiDifference::hints`]).
    pub fn with_hints(mut self, hints: [usize; 2]) -> Self {
        [self.hint_a, self.hint_b] = hints;
        self
    }

    /// The vertices of A and B the last support call found (`usize::MAX` before any).
    pub fn hints(&self) -> [usize; 2] {
        [self.hint_a, self.hint_b]
    }

    /// Sum of the two shapes' inflation radii (m): the cores are searched, the radii added
    /// by the caller.
    pub fn inflation(&self) -> f64 {
        self.a.radius + self.b.radius
    }

    /// Support of the inflated shapes: `S_D(d)` of the cores moved by the radii along
    /// `−d/‖d‖` (the support of a ball of radius `r` in direction `−d`).
    pub fn inflated_support(&mut self, d: &Vector3<f64>) -> SupportPoint {
        let mut s = self.support(d);
        if let Some(unit) = d.try_normalize(0.0) {
            s.a -= unit * self.a.radius;
            s.b += unit * self.b.radius;
            s.w = s.a - s.b;
        }
        s
    }

    /// Support calls made on `D` since it was built.
    pub fn support_calls(&self) -> usize {
        self.support_calls
    }

    /// Pose of B in A's frame.
    pub fn b_in_a(&self) -> &Isometry3<f64> {
        &self.b_in_a
    }

    /// `S_D(d) = argmin_{s ∈ D} ⟨d, s⟩ = S_A(−d) − S_B(d)` (eq. 8, 11).
    pub fn support(&mut self, d: &Vector3<f64>) -> SupportPoint {
        self.support_calls += 1;
        let a = self.a.local_support_hinted(&-d, &mut self.hint_a);
        let d_in_b = self.rotation.tr_mul(d);
        let b_local = self.b.local_support_hinted(&d_in_b, &mut self.hint_b);
        let b = self.rotation * b_local + self.b_in_a.translation.vector;
        SupportPoint { w: a - b, a, b }
    }
}

/// The momentum state of Alg. 6 (`d_{k−1}`, `s_{k−1}`), switched off by eq. (32).
struct Momentum {
    variant: GjkVariant,
    schedule: MomentumSchedule,
    active: bool,
    previous_direction: Vector3<f64>,
    previous_support: Vector3<f64>,
}

impl Momentum {
    fn new(variant: GjkVariant, schedule: MomentumSchedule, x0: Vector3<f64>) -> Self {
        Self {
            variant,
            schedule,
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
        let delta = self.schedule.delta(self.variant, k);
        match self.variant {
            GjkVariant::Vanilla => *x,
            // Eq. (26a): d_k = δ d_{k−1} + (1 − δ) x_k (the gradient 2x up to scale, eq. 9).
            GjkVariant::Polyak => self.previous_direction * delta + x * (1.0 - delta),
            GjkVariant::PolyakNormalized => normalized_mix(&self.previous_direction, x, delta),
            GjkVariant::Nesterov { normalize } => {
                // Eq. (28a): y_k = δ x_k + (1 − δ) s_{k−1}.
                let y = x * delta + self.previous_support * (1.0 - delta);
                if normalize {
                    normalized_mix(&self.previous_direction, &y, delta)
                } else {
                    self.previous_direction * delta + y * (1.0 - delta)
                }
            }
        }
    }
}

/// Eq. (33): `δ d/‖d‖ + (1 − δ) g/‖g‖`, or `g` when a term is zero.
fn normalized_mix(d: &Vector3<f64>, g: &Vector3<f64>, delta: f64) -> Vector3<f64> {
    match (d.try_normalize(0.0), g.try_normalize(0.0)) {
        (Some(d), Some(g_unit)) => d * delta + g_unit * (1.0 - delta),
        _ => *g,
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
    let x = if x0.iter().all(|c| c.is_finite()) && x0.norm_squared() > 0.0 {
        *x0
    } else {
        Vector3::x()
    };
    iterate(diff, x, true, settings, simplex)
}

/// GJK continued from the support points already in `simplex` (an earlier query's final
/// simplex with its points re-placed at this pose: points of `D`, so that the answer is
/// the one a cold start finds, up to the tolerance), or from `x0` when it is empty. A
/// query at a pose near the earlier one starts next to its answer.
pub fn gjk_from_simplex(
    diff: &mut MinkowskiDifference<'_>,
    x0: &Vector3<f64>,
    settings: &GjkSettings,
    simplex: &mut Simplex,
) -> GjkResult {
    if simplex.is_empty() {
        return gjk(diff, x0, settings, simplex);
    }
    let x = simplex.project_origin();
    if simplex.len() == 4 || x.norm_squared() <= settings.tolerance {
        return GjkResult::Overlap { iterations: 0 };
    }
    iterate(diff, x, false, settings, simplex)
}

/// GJK's iterations from the iterate `x` (`first`: `simplex` is empty).
fn iterate(
    diff: &mut MinkowskiDifference<'_>,
    mut x: Vector3<f64>,
    mut first: bool,
    settings: &GjkSettings,
    simplex: &mut Simplex,
) -> GjkResult {
    let eps = settings.tolerance;
    let mut momentum = Momentum::new(settings.variant, settings.schedule, x);
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
                    return separated(simplex, iterations, SeparationStop::DualityGap);
                }
                momentum.active = false;
                s = diff.support(&x);
                if duality_gap(&x, &s.w) <= eps {
                    return separated(simplex, iterations, SeparationStop::DualityGap);
                }
            }
            if simplex.contains(&s.w) {
                if !momentum.active {
                    // No new support point: numerically converged.
                    return separated(simplex, iterations, SeparationStop::NoNewSupport);
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
            return separated(simplex, iterations, SeparationStop::NoProgress);
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

fn separated(simplex: &Simplex, iterations: usize, stop: SeparationStop) -> GjkResult {
    let (point_a, point_b) = simplex.witnesses();
    GjkResult::Separated {
        distance: (point_a - point_b).norm(),
        point_a,
        point_b,
        iterations,
        stop,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedules_are_the_paper_and_coal_rules() {
        let nesterov = GjkVariant::Nesterov { normalize: true };
        let raw = GjkVariant::Nesterov { normalize: false };
        for k in [0, 1, 7] {
            let kf = k as f64;
            let paper = (kf + 1.0) / (kf + 3.0);
            for v in [GjkVariant::Polyak, nesterov, raw] {
                assert_eq!(MomentumSchedule::Paper.delta(v, k), paper);
            }
            assert_eq!(
                MomentumSchedule::Coal.delta(GjkVariant::Polyak, k),
                1.0 / (kf + 1.0)
            );
            assert_eq!(
                MomentumSchedule::Coal.delta(nesterov, k),
                (kf + 2.0) / (kf + 3.0)
            );
            assert_eq!(MomentumSchedule::Coal.delta(raw, k), paper);
        }
    }
}
