//! ncp-pgs: projected Gauss-Seidel on the NCP (Alg. 5), with a choice of per-contact
//! solve (`block`).
//!
//! - `block = diagonal` (default, the paper's Alg. 5): the LCP's update (Alg. 1) with the
//!   box clamp replaced by the horizontal projection on the cone: a normal step by
//!   `1/G_NN`, a tangential step by `1/min(G_T1, G_T2)`, `λ_T` projected onto the disk of
//!   radius `μ λ_N`. It uses only the diagonal of each 3×3 block `G_ii`: on problems whose
//!   blocks couple normal and tangential directions (FCLIB's Box_Stacks, the robots'
//!   coupled soles) its fixed point is reached slowly or not at all (docs/problems.md,
//!   "Method fixes").
//! - `block = exact`: the non-smooth Gauss-Seidel of Jourdan, Alart and Jean (1998, "A
//!   Gauss-Seidel like algorithm to solve frictional contact problems", CMAME 155) as
//!   benchmarked by Acary, Brémond and Huber (2018, "On solving contact problems with
//!   Coulomb friction: formulations and numerical comparisons", NSGS with a local solver):
//!   each contact's 3-dimensional NCP with the **full** block,
//!   `K_μ ∋ λ_i ⊥ ĉ_i ∈ K*_μ`, `c_i = G_ii λ_i + b_i`, `ĉ_i = c_i + Γ(c_i, μ)` (eq. 13-14),
//!   `b_i` the velocity of the other contacts' current forces, is solved to a tight inner
//!   tolerance before moving to the next contact. Decision (local solver): the two closed
//!   cases first, exactly — take-off `λ_i = 0` when `b_N ≥ 0` (then `ĉ_i = b_i + Γ ∈ K*`),
//!   stick `λ_i = −G_ii⁻¹ b_i` when it lies in `K_μ` (then `c_i = 0`) — and otherwise the
//!   projected fixed point of the de Saxcé natural map,
//!   `λ ← P_K(λ − ρ ĉ(λ))`, `ρ = 1/λ_max(G_ii)` (Siconos's `FP-DS` local solver, De Saxcé
//!   and Feng's bipotential fixed point), warm-started at the current `λ_i`, until the
//!   relative step is at most `inner_tol` or `inner_max_iter` iterations. A Newton
//!   (Alart-Curnier) local solver would converge faster in the slip case but needs a
//!   semismooth Jacobian and a line search; the fixed point is a few lines of the cones
//!   we already have and its cap bounds the cost. A fixed point of the map is an exact
//!   NCP answer of the contact (Moreau's decomposition), so a fixed point of the sweeps
//!   is one of the whole problem. The over-relaxation `ω` moves from `λ_i` towards the
//!   block answer and projects back onto `K_μ`.
//!
//! Both stop on the NCP's criteria.

use nalgebra::{Matrix3, Vector3};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::per_contact::{
    inverse_step, normal_then_tangential_step, per_contact_solver, pgs_solver, ContactRule,
};
use super::{parse_params, ContactSolver, SolverError, SolverId, SolverSettings};
use crate::problem::{cones, ContactModel};

/// How each contact's 3×3 problem is solved within a sweep.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockSolve {
    /// Alg. 5: one step on the block's diagonal and a horizontal projection.
    #[default]
    Diagonal,
    /// The per-contact NCP solved with the full block (module doc).
    Exact,
}

/// ncp-pgs's own parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NcpPgsParams {
    /// The per-contact solve. Default `diagonal` (the paper's Alg. 5).
    pub block: BlockSolve,
    /// `block = exact`: cap on the inner fixed-point iterations per contact visit.
    /// Default `100`.
    pub inner_max_iter: usize,
    /// `block = exact`: the inner loop stops when `‖Δλ_i‖ ≤ inner_tol ‖λ_i‖`.
    /// Default `1e-12`.
    pub inner_tol: f64,
}

impl Default for NcpPgsParams {
    fn default() -> Self {
        Self {
            block: BlockSolve::Diagonal,
            inner_max_iter: 100,
            inner_tol: 1e-12,
        }
    }
}

impl NcpPgsParams {
    fn validate(&self) -> Result<(), SolverError> {
        let bad = |message: &str| SolverError::InvalidParameter {
            solver: SolverId::NcpPgs.as_str().to_string(),
            message: message.to_string(),
        };
        if self.inner_max_iter == 0 {
            return Err(bad("inner_max_iter must be at least 1"));
        }
        if !(self.inner_tol > 0.0 && self.inner_tol.is_finite()) {
            return Err(bad("inner_tol must be positive and finite"));
        }
        Ok(())
    }
}

/// Alg. 5's per-contact update, over-relaxed by `ω`.
fn ncp_step(
    mu: f64,
    block: &Matrix3<f64>,
    lambda: &Vector3<f64>,
    c: &Vector3<f64>,
    omega: f64,
) -> Vector3<f64> {
    // Alg. 5 line 6: horizontal projection, λ_T onto the disk of radius μ λ_N.
    normal_then_tangential_step(block, lambda, c, mu, omega, |t, radius| {
        cones::project_disk(radius, t)
    })
}

/// The exact per-contact solve of the module doc.
struct ExactBlockRule {
    omega: f64,
    inner_max_iter: usize,
    inner_tol: f64,
    /// Per contact: `ρ_i = 1/λ_max(G_ii)` and `G_ii⁻¹` (`None` when singular).
    steps: Vec<f64>,
    inverses: Vec<Option<Matrix3<f64>>>,
}

impl ExactBlockRule {
    /// The contact's NCP answer for `c = G λ + b`, warm-started at `start`.
    fn block_answer(
        &self,
        i: usize,
        mu: f64,
        block: &Matrix3<f64>,
        b: &Vector3<f64>,
        start: &Vector3<f64>,
    ) -> Vector3<f64> {
        // Take-off: λ = 0 gives ĉ = b + Γ(b, μ), in K*_μ iff b_N ≥ 0.
        if b.z >= 0.0 {
            return Vector3::zeros();
        }
        // Stick: c = 0 at λ = −G⁻¹ b, an answer when it lies in K_μ.
        if let Some(inverse) = &self.inverses[i] {
            let stick = -(inverse * b);
            if stick.z >= 0.0 && stick.xy().norm() <= mu * stick.z {
                return stick;
            }
        }
        // Slip: the projected fixed point λ ← P_K(λ − ρ ĉ(λ)).
        let rho = self.steps[i];
        let mut lambda = *start;
        for _ in 0..self.inner_max_iter {
            let c = block * lambda + b;
            let c_hat = c + cones::de_saxce_correction(mu, &c);
            let next = cones::project_ice_cream(mu, &(lambda - c_hat * rho));
            let step = (next - lambda).norm();
            lambda = next;
            if step <= self.inner_tol * lambda.norm() {
                break;
            }
        }
        lambda
    }
}

impl ContactRule for ExactBlockRule {
    fn prepare(
        &mut self,
        settings: &SolverSettings,
        blocks: &[Matrix3<f64>],
    ) -> Result<(), String> {
        self.omega = settings.over_relaxation;
        self.steps = blocks
            .iter()
            .map(|b| inverse_step(b.symmetric_eigenvalues().max()))
            .collect();
        self.inverses = blocks.iter().map(|b| b.try_inverse()).collect();
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
        // b_i: the velocity of every other contact's force (and g_i).
        let b = c - block * lambda;
        let answer = self.block_answer(i, mu, block, &b, lambda);
        if self.omega == 1.0 {
            answer
        } else {
            cones::project_ice_cream(mu, &(lambda + (answer - lambda) * self.omega))
        }
    }
}

/// Builds the solver (parameters: [`NcpPgsParams`]).
pub fn build(
    settings: SolverSettings,
    params: &Map<String, Value>,
) -> Result<Box<dyn ContactSolver>, SolverError> {
    let id = SolverId::NcpPgs;
    let params: NcpPgsParams = parse_params(id.as_str(), params)?;
    params.validate()?;
    match params.block {
        BlockSolve::Diagonal => pgs_solver(id, ContactModel::Ncp, ncp_step, settings),
        BlockSolve::Exact => {
            let rule = ExactBlockRule {
                omega: settings.over_relaxation,
                inner_max_iter: params.inner_max_iter,
                inner_tol: params.inner_tol,
                steps: Vec::new(),
                inverses: Vec::new(),
            };
            per_contact_solver(id.as_str(), ContactModel::Ncp, settings, rule)
        }
    }
}
