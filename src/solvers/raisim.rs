//! raisim: RaiSim's per-contact bisection (Alg. 4; Hwangbo, Lee & Hutter 2018).
//!
//! Per contact `i`, with `g̃ = g_i + Σ_{j≠i} G_ij λ_j` the velocity the contact would have
//! without its own force and `λ_v0 = −G_ii⁻¹ g̃` the force that would stop it:
//! - take-off if `g̃_N > 0`: `λ* = 0`;
//! - stiction if `λ_v0 ∈ K_μ`: `λ* = λ_v0`;
//! - sliding otherwise: `λ*` solves problem (20), the minimum of `½ λᵀ G_ii λ + g̃ᵀ λ` on
//!   the ellipse `∂K_μ ∩ {G_ii,N λ + g̃_N = 0}` (Signorini enforced), found by bisection
//!   on the polar angle `θ` of `λ_T` (Fig. 7);
//!
//! then `λ_i ← (1 − α) λ_i + α λ*`, and after each sweep `α ← γ α + (1 − γ) α_min`.
//! Where the plane of zero normal velocity does not cut the cone in an ellipse around
//! the starting angle (strong normal-tangential coupling, `G_NN + μ G_NT·u ≤ 0`), the
//! sliding step falls back to the Euclidean projection of `λ_v0` on the cone.
//! The model keeps Signorini and Coulomb but not the MDP: at a sliding solution `c_T`
//! opposes `λ_T + μ² λ_N G_NT / G_NN` (eq. 21). Stops on RaiSim's own criteria
//! ([`crate::metrics::residuals::raisim_contact_residual`], each term divided by its scale
//! for the relative one).
//!
//! The corrected variant (`raisim-corrected`, ContactBench) minimizes instead
//! `½ λᵀ G_ii λ + (g̃ + Γ(c_i, μ))ᵀ λ` on the same ellipse, `c_i` the contact's current
//! velocity: its fixed points are NCP solutions, and it stops on the NCP's criteria.

use nalgebra::{Matrix3, Vector3};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::per_contact::{per_contact_solver, ContactRule};
use super::{parse_params, ContactSolver, SolverError, SolverSettings};
use crate::problem::{cones, ContactModel};

/// RaiSim's own parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RaisimParams {
    /// Initial relaxation `α` in `]0, 1]`. Default `1`.
    pub alpha: f64,
    /// Floor `α_min` in `]0, α]` the relaxation decays to. Default `0.1`.
    pub alpha_min: f64,
    /// Decay `γ` in `[0, 1]` of `α` per sweep. Default `0.99`.
    pub gamma: f64,
    /// Initial angular step of the bracketing search (rad). Default `0.01`.
    pub beta1: f64,
    /// Step shrink factor when a step leaves the ellipse, in `]0, 1[`. Default `0.5`.
    pub beta2: f64,
    /// Step growth factor while the slope keeps its sign, `> 1`. Default `1.3`.
    pub beta3: f64,
    /// Bisection stops when the bracket is narrower than this angle (rad). Default `1e-12`.
    pub bisection_tol: f64,
    /// Cap on the bracketing and on the bisection iterations, each. Default `200`.
    pub bisection_max_iter: usize,
}

impl Default for RaisimParams {
    fn default() -> Self {
        Self {
            alpha: 1.0,
            alpha_min: 0.1,
            gamma: 0.99,
            beta1: 1e-2,
            beta2: 0.5,
            beta3: 1.3,
            bisection_tol: 1e-12,
            bisection_max_iter: 200,
        }
    }
}

impl RaisimParams {
    fn validate(&self, solver: &str) -> Result<(), SolverError> {
        let bad = |message: &str| SolverError::InvalidParameter {
            solver: solver.to_string(),
            message: message.to_string(),
        };
        if !(self.alpha > 0.0 && self.alpha <= 1.0) {
            return Err(bad("alpha must lie in ]0, 1]"));
        }
        if !(self.alpha_min > 0.0 && self.alpha_min <= self.alpha) {
            return Err(bad("alpha_min must lie in ]0, alpha]"));
        }
        if !(0.0..=1.0).contains(&self.gamma) {
            return Err(bad("gamma must lie in [0, 1]"));
        }
        if !(self.beta1 > 0.0 && self.beta1.is_finite()) {
            return Err(bad("beta1 must be positive"));
        }
        if !(self.beta2 > 0.0 && self.beta2 < 1.0) {
            return Err(bad("beta2 must lie in ]0, 1["));
        }
        if !(self.beta3 > 1.0 && self.beta3.is_finite()) {
            return Err(bad("beta3 must be > 1"));
        }
        if !(self.bisection_tol > 0.0 && self.bisection_tol.is_finite()) {
            return Err(bad("bisection_tol must be positive"));
        }
        if self.bisection_max_iter == 0 {
            return Err(bad("bisection_max_iter must be at least 1"));
        }
        Ok(())
    }
}

/// Alg. 4's per-contact update, plain or de Saxcé-corrected.
struct RaisimRule {
    params: RaisimParams,
    corrected: bool,
    alpha: f64,
    inverse_blocks: Vec<Matrix3<f64>>,
}

impl ContactRule for RaisimRule {
    fn prepare(&mut self, _: &SolverSettings, blocks: &[Matrix3<f64>]) -> Result<(), String> {
        self.alpha = self.params.alpha;
        self.inverse_blocks.clear();
        for (i, block) in blocks.iter().enumerate() {
            let inverse = block
                .try_inverse()
                .filter(|m| m.iter().all(|x| x.is_finite()))
                .ok_or_else(|| format!("contact {i}: diagonal block of G + R is singular"))?;
            self.inverse_blocks.push(inverse);
        }
        Ok(())
    }

    fn update(
        &self,
        i: usize,
        mu: f64,
        block: &Matrix3<f64>,
        lambda: &Vector3<f64>,
        c: &Vector3<f64>,
    ) -> Vector3<f64> {
        // Alg. 4 lines 3-4.
        let free = c - block * lambda;
        let lambda_v0 = -(self.inverse_blocks[i] * free);
        let target = if free.z > 0.0 {
            Vector3::zeros() // take-off (line 5)
        } else if cones::distance_ice_cream(mu, &lambda_v0) == 0.0 {
            lambda_v0 // stiction (line 7)
        } else {
            // sliding (line 10)
            let linear = if self.corrected {
                free + cones::de_saxce_correction(mu, c)
            } else {
                free
            };
            let ellipse = Ellipse {
                block,
                free_normal: free.z,
                linear: &linear,
                mu,
            };
            ellipse
                .minimize(lambda_v0.y.atan2(lambda_v0.x), &self.params)
                .unwrap_or_else(|| cones::project_ice_cream(mu, &lambda_v0))
        };
        // Alg. 4 line 12.
        lambda * (1.0 - self.alpha) + target * self.alpha
    }

    fn end_sweep(&mut self) {
        // Alg. 4 line 13.
        self.alpha =
            self.params.gamma * self.alpha + (1.0 - self.params.gamma) * self.params.alpha_min;
    }
}

/// The sliding sub-problem (20): minimize `½ λᵀ G λ + bᵀ λ` over the curve
/// `λ(θ) = λ_N(θ) (μ cos θ, μ sin θ, 1)` where the cone's boundary meets the plane of zero
/// normal velocity `G_N λ + g̃_N = 0`, i.e. `λ_N(θ) = −g̃_N / (G_NN + μ (G_NT1 cos θ +
/// G_NT2 sin θ))`.
struct Ellipse<'a> {
    block: &'a Matrix3<f64>,
    free_normal: f64,
    linear: &'a Vector3<f64>,
    mu: f64,
}

impl Ellipse<'_> {
    /// The point at angle `θ`, `None` where the plane does not meet that generatrix of
    /// the cone at a non-negative `λ_N`.
    fn point(&self, theta: f64) -> Option<Vector3<f64>> {
        let (s, c) = theta.sin_cos();
        let b = self.block;
        let denominator = b[(2, 2)] + self.mu * (b[(2, 0)] * c + b[(2, 1)] * s);
        let lambda_n = -self.free_normal / denominator;
        (denominator > 0.0 && lambda_n.is_finite() && lambda_n >= 0.0)
            .then(|| Vector3::new(self.mu * lambda_n * c, self.mu * lambda_n * s, lambda_n))
    }

    /// `df/dθ = (G λ + b) · dλ/dθ` at `θ`, or `None` off the ellipse.
    fn slope(&self, theta: f64) -> Option<f64> {
        let lambda = self.point(theta)?;
        let (s, c) = theta.sin_cos();
        let b = self.block;
        let lambda_n = lambda.z;
        let denominator = b[(2, 2)] + self.mu * (b[(2, 0)] * c + b[(2, 1)] * s);
        let d_lambda_n = -lambda_n * self.mu * (-b[(2, 0)] * s + b[(2, 1)] * c) / denominator;
        let direction = Vector3::new(self.mu * c, self.mu * s, 1.0);
        let d_lambda = direction * d_lambda_n
            + Vector3::new(-self.mu * lambda_n * s, self.mu * lambda_n * c, 0.0);
        Some((b * lambda + self.linear).dot(&d_lambda))
    }

    /// Hwangbo et al.'s search from `θ0` (the angle of `λ_v0`): steps downhill, growing by
    /// `β3` while the slope keeps its sign and shrinking by `β2` off the ellipse, until the
    /// slope changes sign; then bisection on the bracket.
    fn minimize(&self, theta0: f64, params: &RaisimParams) -> Option<Vector3<f64>> {
        let d0 = self.slope(theta0)?;
        if d0 == 0.0 {
            return self.point(theta0);
        }
        let direction = -d0.signum();
        let mut step = params.beta1;
        let mut inner = theta0; // slope of d0's sign
        let mut outer = None; // slope of the opposite sign
        for _ in 0..params.bisection_max_iter {
            let trial = inner + direction * step;
            match self.slope(trial) {
                None => step *= params.beta2,
                Some(d) if d * d0 > 0.0 => {
                    inner = trial;
                    step *= params.beta3;
                }
                Some(_) => {
                    outer = Some(trial);
                    break;
                }
            }
        }
        let Some(mut outer) = outer else {
            return self.point(inner);
        };
        for _ in 0..params.bisection_max_iter {
            if (outer - inner).abs() <= params.bisection_tol {
                break;
            }
            let middle = 0.5 * (inner + outer);
            match self.slope(middle) {
                Some(d) if d * d0 > 0.0 => inner = middle,
                Some(_) => outer = middle,
                None => break,
            }
        }
        self.point(0.5 * (inner + outer))
    }
}

/// Builds RaiSim's solver, plain or corrected.
pub(crate) fn build_variant(
    name: &'static str,
    corrected: bool,
    settings: SolverSettings,
    params: &Map<String, Value>,
) -> Result<Box<dyn ContactSolver>, SolverError> {
    let params: RaisimParams = parse_params(name, params)?;
    params.validate(name)?;
    let model = if corrected {
        ContactModel::Ncp
    } else {
        ContactModel::Raisim
    };
    let rule = RaisimRule {
        alpha: params.alpha,
        params,
        corrected,
        inverse_blocks: Vec::new(),
    };
    per_contact_solver(name, model, settings, rule)
}

/// Builds the solver.
pub fn build(
    settings: SolverSettings,
    params: &Map<String, Value>,
) -> Result<Box<dyn ContactSolver>, SolverError> {
    build_variant("raisim", false, settings, params)
}
