//! The ADMM iteration shared by ccp-admm (Alg. 3) and ncp-admm (Pinocchio 3+'s ADMM
//! contact solver, with the de Saxcé correction).
//!
//! Splitting `λ = x` (free) and `y ∈ K_μ`, with the dual variable `z` (a contact velocity,
//! `z ∈ K*_μ` at convergence) and penalty `ρ̄ = τρ`, one iteration reads (Alg. 3 with
//! `γ = −z`, plus Pinocchio's proximal term `μ_prox` and the de Saxcé shift `s`):
//!
//! ```text
//! s ← Γ(z, μ)                     (NCP only; 0 for the CCP)
//! x ← −(G + R + (μ_prox + ρ̄) I)⁻¹ (g + s − ρ̄ y − μ_prox x − z)
//! x̂ ← α x + (1 − α) y             (over-relaxation, α = settings.over_relaxation)
//! y ← proj_K(x̂ − z / ρ̄)
//! z ← z − ρ̄ (x̂ − y)
//! ```
//!
//! ρ starts from the spectral rule `ρ = √(L m) (L/m)^p` (`L` the largest eigenvalue of
//! `G + R` by power iteration, `m = μ_prox + min R`, `p = rho_power`) and is multiplied or
//! divided by `(L/m)^{rho_power_factor}` when the ADMM primal residual `‖x − y‖∞ / λ_s`
//! exceeds `ratio_primal_dual` times the dual residual
//! `‖ρ̄ (y − y⁻) + μ_prox (x − x⁻)‖∞ / v_s`, or conversely (the `spectral` rule; the
//! `linear` rule multiplies or divides by `linear_factor`, the `osqp` rule multiplies by
//! `√(primal / dual)`). With `anderson_memory > 0` the point `[x; y; z/ρ̄]` an iteration
//! starts from is the safeguarded Anderson extrapolation of [`super::anderson`]. Both are divided by the scales
//! of the relative criterion (`λ_s = ‖y‖∞`, `v_s = ‖g‖∞`; Pinocchio compares the raw
//! impulse and velocity, which makes the iteration depend on the units), and the proximal
//! weight is `μ_prox = mu_prox · L` (Pinocchio's is absolute): the iterates are then
//! invariant to the units of impulse and velocity (docs/ruler.md). The Cholesky factor of
//! `G + R + (μ_prox + ρ̄) I` is recomputed only when ρ changes.
//! The iteration stops on the model's criterion named by `stop` (NCP or CCP) at `y`,
//! checked every iteration once it is within `10×` the tolerance and every
//! `CHECK_EVERY_FAR` (4) iterations before (always at the last allowed iteration, and every
//! iteration when the history is recorded): the criterion costs a product `G y`, as much as
//! the two triangular solves of the iteration, and far from the tolerance it cannot stop
//! the solve. A converged answer has passed the test, as before; it may come up to
//! `CHECK_EVERY_FAR − 1` iterations later than with a test every iteration. `L` is kept
//! with the factor and recomputed only when `G + R` changes, by a power iteration that
//! stops once two estimates agree to 1e-8 and, in a warm-started solve, starts from the
//! last eigenvector (a simulation's next `G` is close to its last: a few products instead
//! of 20; a cold solve starts from the all-ones vector, whatever the solver saw before). The
//! products, the factorization and the triangular solves are the blocked kernels of
//! `solvers::factor`; the updates of `y` and `z` and both ADMM residuals are one pass over
//! the contacts. The solve allocates only its answer and report once its workspace has the
//! problem's size. A warm start is returned at once only if it passes the same test,
//! checked before any eigenvalue estimate or factorization. The relative step is not a
//! stopping test here: a large ρ makes the steps tiny far from the solution (we measured
//! false stops at residuals 100× above the tolerance on random problems), and Pinocchio
//! makes the same choice.

use std::time::Instant;

use nalgebra::{DMatrix, DVector, Vector3};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::anderson::{Anderson, AndersonStep, MAX_MEMORY};
use super::factor::{affine_product, product, FactorError, RegularizedCholesky};
use super::shell::{Algorithm, Shell, SolveCall};
use super::support::{
    all_finite, deadline, iterate_status, model_criteria, out_of_time, passes, stopping_status,
    Criteria,
};
use super::{
    parse_params, ContactSolver, SolveReport, SolveStatus, SolverError, SolverId, SolverSettings,
};
use crate::problem::cones::{de_saxce_correction, project_dual_ice_cream, project_ice_cream};
use crate::problem::{
    contact_vector, set_contact_vector, ContactModel, ContactProblem, Delassus, ShiftedDelassus,
    MAGNITUDE_LIMIT,
};

/// How far ρ may move from the largest eigenvalue of `G + R`, either way.
const RHO_RANGE: f64 = 1e12;

/// Relative agreement of two successive power-iteration estimates that ends the power
/// iteration (Pinocchio's `PowerIterationAlgo` default).
const POWER_TOLERANCE: f64 = 1e-8;

/// Iterations between two evaluations of the stopping criterion while it is above
/// [`FAR_FROM_TOLERANCE`] times the tolerance (module doc).
const CHECK_EVERY_FAR: usize = 4;

/// A criterion above this multiple of the tolerance is "far": checked every
/// [`CHECK_EVERY_FAR`] iterations.
const FAR_FROM_TOLERANCE: f64 = 10.0;

/// Parameters of the ADMM solvers (names as in Pinocchio's `ADMMContactSolver`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AdmmParams {
    /// Initial ρ (in the units of `G`); when absent, the spectral rule
    /// `√(L m) (L/m)^rho_power`. Default: absent.
    pub rho: Option<f64>,
    /// Exponent `p` of the spectral rule. Default `0.2`.
    pub rho_power: f64,
    /// ρ is scaled by `(L/m)^rho_power_factor` at each update. Default `0.05`.
    pub rho_power_factor: f64,
    /// Imbalance between primal and dual ADMM residuals that triggers a ρ update.
    /// Default `10`.
    pub ratio_primal_dual: f64,
    /// Proximal regularization relative to the largest eigenvalue `L` of `G + R`: the
    /// iteration uses `μ_prox = mu_prox · L` (keeps `G + μ_prox I` definite). Default `1e-6`.
    pub mu_prox: f64,
    /// Scaling `τ ∈ ]0, 1]` of the penalty, `ρ̄ = τ ρ`. Default `0.5`.
    pub tau: f64,
    /// Most power iterations for the largest eigenvalue `L` of `G + R` (from the previous
    /// solve's eigenvector when warm; they stop early once two estimates agree to 1e-8).
    /// Default `20`.
    pub power_iterations: usize,
    /// How ρ follows the residuals (module doc). Default `spectral`.
    pub rho_update: RhoUpdate,
    /// The factor of the `linear` rule (> 1). Default `2` (Pinocchio's).
    pub linear_factor: f64,
    /// Memory `m` of the Anderson acceleration of the ADMM's fixed-point map, 0 for none
    /// (at most [`MAX_MEMORY`]). Default `0` (docs/solvers.md: measured on piles, robots
    /// and ContactBench's problems).
    pub anderson_memory: usize,
}

/// The rule that moves ρ when the scaled primal residual `r_p` and dual residual `r_d`
/// differ by more than `ratio_primal_dual` either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", try_from = "String")]
pub enum RhoUpdate {
    /// Multiply or divide by `(L/m)^rho_power_factor` (Pinocchio's spectral rule).
    Spectral,
    /// Multiply or divide by `linear_factor` (Pinocchio's linear rule).
    Linear,
    /// Multiply by `√(r_p / r_d)` (OSQP's rule, Stellato et al. 2020 §5.2).
    Osqp,
}

impl TryFrom<String> for RhoUpdate {
    type Error = String;

    fn try_from(name: String) -> Result<Self, Self::Error> {
        match name.as_str() {
            "spectral" => Ok(Self::Spectral),
            "linear" => Ok(Self::Linear),
            "osqp" => Ok(Self::Osqp),
            _ => Err(format!(
                "rho_update = {name}: must be spectral, linear or osqp"
            )),
        }
    }
}

impl Default for AdmmParams {
    fn default() -> Self {
        Self {
            rho: None,
            rho_power: 0.2,
            rho_power_factor: 0.05,
            ratio_primal_dual: 10.0,
            mu_prox: 1e-6,
            tau: 0.5,
            power_iterations: 20,
            rho_update: RhoUpdate::Spectral,
            linear_factor: 2.0,
            anderson_memory: 0,
        }
    }
}

impl AdmmParams {
    /// Checks the ranges; `solver` names the solver in the error.
    fn validate(&self, solver: &str) -> Result<(), SolverError> {
        let bad = |message: String| SolverError::InvalidParameter {
            solver: solver.to_string(),
            message,
        };
        if let Some(rho) = self.rho {
            if !(rho.is_finite() && rho > 0.0) {
                return Err(bad(format!("rho = {rho}: must be finite and > 0")));
            }
        }
        if !(self.tau > 0.0 && self.tau <= 1.0) {
            return Err(bad(format!("tau = {}: must lie in ]0, 1]", self.tau)));
        }
        if !(self.mu_prox.is_finite() && self.mu_prox > 0.0) {
            return Err(bad(format!(
                "mu_prox = {}: must be finite and > 0",
                self.mu_prox
            )));
        }
        if !(self.ratio_primal_dual.is_finite() && self.ratio_primal_dual > 1.0) {
            return Err(bad(format!(
                "ratio_primal_dual = {}: must be finite and > 1",
                self.ratio_primal_dual
            )));
        }
        for (name, value) in [
            ("rho_power", self.rho_power),
            ("rho_power_factor", self.rho_power_factor),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(bad(format!("{name} = {value}: must be finite and >= 0")));
            }
        }
        if self.power_iterations == 0 {
            return Err(bad("power_iterations = 0: must be at least 1".into()));
        }
        if !(self.linear_factor.is_finite() && self.linear_factor > 1.0) {
            return Err(bad(format!(
                "linear_factor = {}: must be finite and > 1",
                self.linear_factor
            )));
        }
        if self.anderson_memory > MAX_MEMORY {
            return Err(bad(format!(
                "anderson_memory = {}: must be at most {MAX_MEMORY}",
                self.anderson_memory
            )));
        }
        Ok(())
    }
}

/// What an ADMM solver keeps between solves: the factor of `G + R + σ I` with the
/// largest eigenvalue of `G + R` (and the power iterations it took) and its eigenvector
/// (the next power iteration's start), the last ρ and the
/// last dual variable `z` (with the problem size they belong to), and the workspace.
#[derive(Debug, Clone, Default)]
struct AdmmState {
    factor: RegularizedCholesky,
    /// On a factorized operator: the factor of `G + R + σ I` for the shift `σ` of this
    /// solve, and the factorizations computed.
    shifted: Option<(f64, ShiftedDelassus)>,
    operator_factorizations: usize,
    largest: Option<(usize, f64)>,
    eigenvector: DVector<f64>,
    last_rho: Option<(usize, f64)>,
    last_dual: Option<DVector<f64>>,
    anderson: Anderson,
    work: Workspace,
}

/// The vectors of one solve, kept between solves so that a solve does not allocate them.
/// `x`/`x_next` and `y_prev`/the iterate `y` are swapped rather than copied each iteration.
#[derive(Debug, Clone, Default)]
struct Workspace {
    z: DVector<f64>,
    c: DVector<f64>,
    x: DVector<f64>,
    x_next: DVector<f64>,
    y_prev: DVector<f64>,
    /// With Anderson acceleration: the point `[x; y; z / ρ̄]` an iteration starts from,
    /// its image and the next point (module doc of [`super::anderson`]).
    point: DVector<f64>,
    image: DVector<f64>,
    next: DVector<f64>,
}

impl Workspace {
    /// Gives every vector the size `dim`, and the three of Anderson's points `3 dim` when
    /// `accelerated` (allocating only when a size changes).
    fn resize(&mut self, dim: usize, accelerated: bool) {
        for v in [
            &mut self.z,
            &mut self.c,
            &mut self.x,
            &mut self.x_next,
            &mut self.y_prev,
        ] {
            if v.len() != dim {
                *v = DVector::zeros(dim);
            }
        }
        if accelerated {
            for v in [&mut self.point, &mut self.image, &mut self.next] {
                if v.len() != 3 * dim {
                    *v = DVector::zeros(3 * dim);
                }
            }
        }
    }
}

impl AdmmState {
    /// Forgets ρ and the factor.
    fn reset(&mut self) {
        *self = Self::default();
    }

    /// Factorizations computed since creation (or the last reset).
    fn factorizations(&self) -> usize {
        self.factor.factorizations() + self.operator_factorizations
    }

    /// The ρ of the last solve, if any.
    fn last_rho(&self) -> Option<f64> {
        self.last_rho.map(|(_, rho)| rho)
    }
}

/// The ADMM iteration of the module doc with its parameters and kept state: ncp-admm's
/// when `DE_SAXCE` (the de Saxcé shift is applied and it stops on the NCP criterion),
/// ccp-admm's otherwise (no shift, CCP residual).
#[derive(Debug, Clone)]
pub struct Admm<const DE_SAXCE: bool> {
    params: AdmmParams,
    state: AdmmState,
}

/// The ADMM solver: [`Admm`] in the solver shell. Use the names
/// [`super::ccp_admm::CcpAdmmSolver`] and [`super::ncp_admm::NcpAdmmSolver`].
pub type AdmmSolver<const DE_SAXCE: bool> = Shell<Admm<DE_SAXCE>>;

impl<const DE_SAXCE: bool> Admm<DE_SAXCE> {
    /// The registry id: ncp-admm or ccp-admm.
    const ID: SolverId = if DE_SAXCE {
        SolverId::NcpAdmm
    } else {
        SolverId::CcpAdmm
    };

    /// The model it solves and stops on: NCP or CCP.
    const MODEL: ContactModel = if DE_SAXCE {
        ContactModel::Ncp
    } else {
        ContactModel::Ccp
    };
}

impl<const DE_SAXCE: bool> AdmmSolver<DE_SAXCE> {
    /// A solver with the given settings and parameters (checked).
    pub fn new(settings: SolverSettings, params: AdmmParams) -> Result<Self, SolverError> {
        let id = Admm::<DE_SAXCE>::ID;
        params.validate(id.as_str())?;
        let admm = Admm {
            params,
            state: AdmmState::default(),
        };
        Shell::wrap(id.as_str(), Admm::<DE_SAXCE>::MODEL, settings, admm)
    }

    /// Its parameters.
    pub fn params(&self) -> &AdmmParams {
        &self.algorithm().params
    }

    /// The ρ the last solve ended with (reused by the next warm-started solve).
    pub fn last_rho(&self) -> Option<f64> {
        self.algorithm().state.last_rho()
    }

    /// Anderson extrapolations rejected by the safeguard so far.
    pub fn anderson_rejections(&self) -> usize {
        self.algorithm().state.anderson.rejections()
    }

    /// Cholesky factorizations of `G + R + ρ̄ I` computed so far (one per ρ change or
    /// new `G`).
    pub fn factorizations(&self) -> usize {
        self.algorithm().state.factorizations()
    }
}

impl<const DE_SAXCE: bool> Algorithm for Admm<DE_SAXCE> {
    fn solve(&mut self, call: SolveCall<'_>) -> Result<SolveReport, SolverError> {
        Ok(solve_admm(
            call.problem,
            call.warm_start,
            call.settings,
            &self.params,
            &mut self.state,
            call.model,
            call.start,
        ))
    }

    fn reset(&mut self) {
        self.state.reset();
    }
}

/// Builds ccp-admm or ncp-admm; parameters are those of [`AdmmParams`].
pub(crate) fn build<const DE_SAXCE: bool>(
    settings: SolverSettings,
    params: &Map<String, Value>,
) -> Result<Box<dyn ContactSolver>, SolverError> {
    let id = Admm::<DE_SAXCE>::ID;
    let params: AdmmParams = parse_params(id.as_str(), params)?;
    Ok(Box::new(AdmmSolver::<DE_SAXCE>::new(settings, params)?))
}

/// Largest eigenvalue of the symmetric PSD `a` (`n × n`, given by its product `apply`) by
/// at most `iterations` steps of power
/// iteration from `v`, the previous solve's eigenvector when it has the size of `a` and
/// the solve is warm-started (a simulation's next `G` is close to the last one), else the
/// all-ones vector
/// (deterministic); stops once two successive estimates agree to [`POWER_TOLERANCE`]
/// (relative), as Pinocchio's `PowerIterationAlgo` does. `v` is left as the estimate's
/// eigenvector; `w` is a buffer of the size of `a`.
#[inline(never)]
fn largest_eigenvalue(
    mut apply: impl FnMut(&[f64], &mut [f64]),
    n: usize,
    iterations: usize,
    v: &mut DVector<f64>,
    w: &mut DVector<f64>,
) -> f64 {
    let start_norm = v.norm();
    if v.len() == n && start_norm > 0.0 && start_norm.is_finite() {
        v.unscale_mut(start_norm);
    } else {
        *v = DVector::from_element(n, 1.0 / (n as f64).sqrt());
    }
    let mut estimate = 0.0_f64;
    for _ in 0..iterations {
        apply(v.as_slice(), w.as_mut_slice());
        let norm = w.norm();
        if !(norm > 0.0 && norm.is_finite()) {
            return estimate;
        }
        let next = v.dot(w);
        v.copy_from(w);
        v.unscale_mut(norm);
        let settled = (next - estimate).abs() <= POWER_TOLERANCE * next.abs().max(estimate.abs());
        estimate = next;
        if settled {
            break;
        }
    }
    estimate.max(0.0)
}

/// Makes `shifted` the factor of `G + R + σ I` of `problem`'s factorized operator (kept
/// while `σ` stays the same within a solve), counting the factorizations.
fn set_operator_shift(
    shifted: &mut Option<(f64, ShiftedDelassus)>,
    factorizations: &mut usize,
    problem: &ContactProblem,
    shift: f64,
) -> Result<(), FactorError> {
    if matches!(shifted, Some((s, _)) if *s == shift) {
        return Ok(());
    }
    let mut diagonal = DVector::from_element(problem.dim(), shift);
    if let Some(r) = problem.compliance() {
        diagonal += r;
    }
    let factor = problem
        .operator()
        .shifted(&diagonal)
        .map_err(|e| FactorError::NotPositiveDefinite(format!("G + R + {shift:e} I: {e}")))?;
    *factorizations += 1;
    *shifted = Some((shift, factor));
    Ok(())
}

/// Spectral rule `ρ = √(L m) (L/m)^p` (Pinocchio's `computeRho`).
fn spectral_rho(largest: f64, smallest: f64, power: f64) -> f64 {
    let cond = largest / smallest;
    (largest * smallest).sqrt() * cond.powf(power)
}

/// `proj_K` applied contact by contact.
fn project_primal(problem: &ContactProblem, x: &DVector<f64>, out: &mut DVector<f64>) {
    for i in 0..problem.num_contacts() {
        let p = project_ice_cream(problem.mu_of(i), &contact_vector(x, i));
        set_contact_vector(out, i, &p);
    }
}

/// Initial dual variable from `y` and its velocity `c = (G + R) y + g`:
/// `z = proj_{K*}(c + s(c))`, into `z`.
fn initial_dual(problem: &ContactProblem, c: &DVector<f64>, de_saxce: bool, z: &mut DVector<f64>) {
    for i in 0..problem.num_contacts() {
        let mu = problem.mu_of(i);
        let ci = contact_vector(c, i);
        let shifted = if de_saxce {
            ci + de_saxce_correction(mu, &ci)
        } else {
            ci
        };
        set_contact_vector(z, i, &project_dual_ice_cream(mu, &shifted));
    }
}

/// `numerator / scale`, 0 when the numerator is 0.
fn scaled(numerator: f64, scale: f64) -> f64 {
    if numerator == 0.0 {
        0.0
    } else {
        numerator / scale
    }
}

/// `rhs = −(g + s − ρ̄ y − μ_prox x − z)` contact by contact, with the de Saxcé shift
/// `s = Γ(z, μ)` of eq. 13 (zero for the CCP): the right-hand side of the x-update.
#[inline(never)]
fn x_update_rhs(
    problem: &ContactProblem,
    (g, z): (&DVector<f64>, &DVector<f64>),
    (y, x): (&DVector<f64>, &DVector<f64>),
    (penalty, mu_prox): (f64, f64),
    de_saxce: bool,
    rhs: &mut DVector<f64>,
) {
    let contacts = rhs
        .as_mut_slice()
        .chunks_exact_mut(3)
        .zip(g.as_slice().chunks_exact(3))
        .zip(z.as_slice().chunks_exact(3))
        .zip(
            y.as_slice()
                .chunks_exact(3)
                .zip(x.as_slice().chunks_exact(3)),
        );
    for (i, (((r, g), z), (y, x))) in contacts.enumerate() {
        let zi = Vector3::new(z[0], z[1], z[2]);
        let shift = if de_saxce {
            de_saxce_correction(problem.mu_of(i), &zi)
        } else {
            Vector3::zeros()
        };
        for k in 0..3 {
            r[k] = -((((g[k] + shift[k]) + -penalty * y[k]) + -mu_prox * x[k]) - z[k]);
        }
    }
}

/// What one sweep of the y- and z-updates measured: the ADMM primal residual
/// `‖x − y‖∞`, the dual residual `‖ρ̄ (y − y⁻) + μ_prox (x − x⁻)‖∞` (Pinocchio's
/// `dual_feasibility`), `‖y‖∞`, and whether `y`, `z` are finite and within
/// [`MAGNITUDE_LIMIT`].
struct Sweep {
    primal: f64,
    dual: f64,
    impulse_scale: f64,
    usable: bool,
}

impl Sweep {
    /// The status of a sweep whose iterates are not usable (the checks of
    /// [`iterate_status`], forces first), `None` otherwise.
    fn failure(&self, y: &DVector<f64>, z: &DVector<f64>, k: usize) -> Option<SolveStatus> {
        if self.usable {
            return None;
        }
        iterate_status(y, k, "forces").or_else(|| {
            iterate_status(z, k, "dual variable").map(|status| match status {
                SolveStatus::Diverged { .. } => SolveStatus::Diverged { iteration: k },
                other => other,
            })
        })
    }
}

/// `max(a, b)` for a running maximum `a` that is never NaN: one comparison (`f64::max`
/// handles NaN in either argument, several instructions per call); a NaN `b` leaves `a`,
/// as `f64::max` does, and the sweep's finiteness test catches it.
#[inline(always)]
fn larger(a: f64, b: f64) -> f64 {
    if b > a {
        b
    } else {
        a
    }
}

/// The y- and z-updates of the module doc in one pass over the contacts, from the
/// previous and new `x` and the previous `y`:
/// `x̂ = α x⁺ + (1 − α) y⁻` (over-relaxation, eq. 22 applied to the splitting),
/// `y = proj_K(x̂ − z / ρ̄)`, `z ← z − ρ̄ (x̂ − y)`, with the residuals of [`Sweep`].
#[inline(never)]
fn relaxed_projection_sweep(
    problem: &ContactProblem,
    (x_prev, x): (&DVector<f64>, &DVector<f64>),
    (y_prev, y): (&DVector<f64>, &mut DVector<f64>),
    z: &mut DVector<f64>,
    (alpha, penalty, mu_prox): (f64, f64, f64),
) -> Sweep {
    let mut sweep = Sweep {
        primal: 0.0,
        dual: 0.0,
        impulse_scale: 0.0,
        usable: true,
    };
    let mut largest_dual = 0.0_f64;
    let inverse_penalty = -1.0 / penalty;
    let contacts = y
        .as_mut_slice()
        .chunks_exact_mut(3)
        .zip(z.as_mut_slice().chunks_exact_mut(3))
        .zip(
            x.as_slice()
                .chunks_exact(3)
                .zip(x_prev.as_slice().chunks_exact(3)),
        )
        .zip(y_prev.as_slice().chunks_exact(3));
    for (i, (((y, z), (x, x_prev)), y_prev)) in contacts.enumerate() {
        let relaxed: [f64; 3] = std::array::from_fn(|k| (1.0 - alpha) * y_prev[k] + alpha * x[k]);
        let shifted = Vector3::from_fn(|k, _| inverse_penalty * z[k] + relaxed[k]);
        let projected = project_ice_cream(problem.mu_of(i), &shifted);
        for k in 0..3 {
            let yk = projected[k];
            y[k] = yk;
            z[k] += -penalty * (relaxed[k] - yk);
            let step = penalty * (yk - y_prev[k]) + mu_prox * (x[k] - x_prev[k]);
            sweep.primal = larger(sweep.primal, (x[k] - yk).abs());
            sweep.dual = larger(sweep.dual, step.abs());
            sweep.impulse_scale = larger(sweep.impulse_scale, yk.abs());
            largest_dual = larger(largest_dual, z[k].abs());
            sweep.usable &= yk.is_finite() & z[k].is_finite();
        }
    }
    sweep.usable &= sweep.impulse_scale <= MAGNITUDE_LIMIT && largest_dual <= MAGNITUDE_LIMIT;
    sweep
}

/// The model's criteria at `y`, with `c = A y + g` (`A = G + R`, the factor's matrix) by
/// the blocked product; a `y` that passes is tested again with
/// [`ContactProblem::velocity_into`], the arithmetic of the solve's report, so that a
/// converged report's residual is the one that passed. The flag tells that `c` is then
/// the report's velocity (and the criteria its criteria).
#[inline(never)]
fn criteria_at(
    problem: &ContactProblem,
    model: ContactModel,
    settings: &SolverSettings,
    a: &DMatrix<f64>,
    y: &DVector<f64>,
    c: &mut DVector<f64>,
) -> (Criteria, bool) {
    if let Delassus::Factorized(_) = problem.operator() {
        problem.velocity_into(y, c);
        return (model_criteria(model, problem, y, c), true);
    }
    affine_product(
        a,
        y.as_slice(),
        problem.free_velocity().as_slice(),
        c.as_mut_slice(),
    );
    let criteria = model_criteria(model, problem, y, c);
    if !passes(&criteria, settings) {
        return (criteria, false);
    }
    problem.velocity_into(y, c);
    (model_criteria(model, problem, y, c), true)
}

/// The largest eigenvalue `L` of `G + R`, kept while `G + R` and `power_iterations` stay
/// the same (module doc); the power iteration starts from the last eigenvector only when
/// the solve is warm-started.
fn largest_of(
    problem: &ContactProblem,
    warm: bool,
    params: &AdmmParams,
    state: &mut AdmmState,
) -> f64 {
    let factorized = matches!(problem.operator(), Delassus::Factorized(_));
    let changed = factorized
        || state
            .factor
            .set_matrix(problem.delassus(), problem.compliance());
    if let Some((steps, largest)) = state.largest {
        if !changed && steps == params.power_iterations {
            return largest;
        }
    }
    // Only a warm-started solve (the next step of a simulation) starts from the last
    // eigenvector, as only it reuses ρ and z: a cold solve's answer must not depend on
    // which problems the solver saw before (corpus runs, thread counts).
    if !warm {
        state.eigenvector = DVector::zeros(0);
    }
    let matrix = state.factor.matrix();
    let apply = |v: &[f64], w: &mut [f64]| match problem.operator() {
        Delassus::Factorized(f) => {
            f.apply_into(v, w);
            if let Some(r) = problem.compliance() {
                for ((wk, vk), rk) in w.iter_mut().zip(v).zip(r.iter()) {
                    *wk += rk * vk;
                }
            }
        }
        Delassus::Dense(_) => product(matrix, v, w),
    };
    let largest = largest_eigenvalue(
        apply,
        problem.dim(),
        params.power_iterations,
        &mut state.eigenvector,
        &mut state.work.y_prev,
    );
    state.largest = Some((params.power_iterations, largest));
    largest
}

/// What the penalty needs from `L`: the proximal weight `μ_prox = mu_prox · max(L, min R)`,
/// the smallest eigenvalue bound `m = μ_prox + min R` and the conditioning `max(L/m, 1)`.
struct Spectrum {
    largest: f64,
    mu_prox: f64,
    smallest: f64,
    cond: f64,
}

impl Spectrum {
    fn new(problem: &ContactProblem, params: &AdmmParams, largest: f64) -> Self {
        let min_compliance = problem.compliance().map_or(0.0, |r| r.min());
        let mu_prox = params.mu_prox * largest.max(min_compliance);
        let smallest = mu_prox + min_compliance;
        let cond = if smallest > 0.0 {
            (largest / smallest).max(1.0)
        } else {
            1.0
        };
        Self {
            largest,
            mu_prox,
            smallest,
            cond,
        }
    }

    /// The initial ρ: the given one, else the spectral rule.
    fn initial_rho(&self, params: &AdmmParams) -> f64 {
        params.rho.unwrap_or_else(|| {
            spectral_rho(
                self.largest.max(self.smallest),
                self.smallest,
                params.rho_power,
            )
        })
    }
}

/// ρ after one iteration whose scaled ADMM residuals are `primal` and `dual`, by
/// `params.rho_update` (the rules of [`RhoUpdate`]), kept within [`RHO_RANGE`] of `L`.
fn updated_rho(params: &AdmmParams, spectrum: &Spectrum, rho: f64, primal: f64, dual: f64) -> f64 {
    let ratio = params.ratio_primal_dual;
    let (raise, lower) = (primal > ratio * dual, dual > ratio * primal);
    let next = match params.rho_update {
        RhoUpdate::Spectral => {
            let increment = spectrum.cond.powf(params.rho_power_factor);
            step_rho(rho, increment, raise, lower)
        }
        RhoUpdate::Linear => step_rho(rho, params.linear_factor, raise, lower),
        RhoUpdate::Osqp if (raise || lower) && primal > 0.0 && dual > 0.0 => {
            rho * (primal / dual).sqrt()
        }
        RhoUpdate::Osqp => rho,
    };
    // ρ stays within 1e±12 of the largest eigenvalue (it overflowed to inf on an
    // ill-conditioned ContactBench problem, and the iterate became NaN).
    if spectrum.largest > 0.0 {
        next.clamp(
            RHO_RANGE.recip() * spectrum.largest,
            RHO_RANGE * spectrum.largest,
        )
    } else {
        next
    }
}

/// `ρ · factor` when raised, `ρ / factor` when lowered, else `ρ`.
fn step_rho(rho: f64, factor: f64, raise: bool, lower: bool) -> f64 {
    if raise {
        rho * factor
    } else if lower {
        rho / factor
    } else {
        rho
    }
}

/// The ADMM's state as one point of its fixed-point map, `[x; y; z / ρ̄]` (all in impulse
/// units), into `out` (of size `3 dim`).
fn pack_state(
    x: &DVector<f64>,
    y: &DVector<f64>,
    z: &DVector<f64>,
    penalty: f64,
    out: &mut DVector<f64>,
) {
    let dim = x.len();
    out.rows_mut(0, dim).copy_from(x);
    out.rows_mut(dim, dim).copy_from(y);
    out.rows_mut(2 * dim, dim).copy_from(z);
    out.rows_mut(2 * dim, dim).unscale_mut(penalty);
}

/// The inverse of [`pack_state`].
fn unpack_state(
    point: &DVector<f64>,
    penalty: f64,
    (x, y, z): (&mut DVector<f64>, &mut DVector<f64>, &mut DVector<f64>),
) {
    let dim = x.len();
    x.copy_from(&point.rows(0, dim));
    y.copy_from(&point.rows(dim, dim));
    z.copy_from(&point.rows(2 * dim, dim));
    z.scale_mut(penalty);
}

/// Runs the ADMM iteration of the module doc on `problem` (with contacts, warm start
/// checked), stopping on `model`'s criterion; `start` is when the solve began.
fn solve_admm(
    problem: &ContactProblem,
    warm_start: Option<&DVector<f64>>,
    settings: &SolverSettings,
    params: &AdmmParams,
    state: &mut AdmmState,
    model: ContactModel,
    start: Instant,
) -> SolveReport {
    let finish = |lambda, status, iterations, history| {
        SolveReport::finish(
            problem, model, settings, lambda, status, iterations, start, history,
        )
    };
    // The report of a `y` whose `c` and criteria the stopping test computed with the
    // report's arithmetic.
    let finish_at = |lambda, c: &DVector<f64>, criteria, status, iterations, history| {
        SolveReport::finish_at_velocity(
            settings,
            lambda,
            c.clone(),
            criteria,
            status,
            iterations,
            start,
            history,
        )
    };
    let dim = problem.dim();
    let de_saxce = model == ContactModel::Ncp;
    state.work.resize(dim, params.anderson_memory > 0);
    let factorized = matches!(problem.operator(), Delassus::Factorized(_));
    state.shifted = None;
    match warm_start {
        Some(x0) => state.work.x.copy_from(x0),
        None => state.work.x.fill(0.0),
    }
    let mut y = DVector::zeros(dim);
    project_primal(problem, &state.work.x, &mut y);
    problem.velocity_into(&y, &mut state.work.c);
    let mut history = settings.record_history.then(Vec::new);
    let reused_rho = match (warm_start, state.last_rho) {
        (Some(_), Some((d, rho))) if d == dim => Some(rho),
        _ => None,
    };
    if warm_start.is_some() {
        // A warm start is returned as it is only if it passes the stopping test, before
        // any eigenvalue estimate or factorization.
        let criteria = model_criteria(model, problem, &y, &state.work.c);
        if passes(&criteria, settings) {
            if reused_rho.is_none() {
                let rho = match params.rho {
                    Some(rho) => rho,
                    None => {
                        let largest = largest_of(problem, true, params, state);
                        Spectrum::new(problem, params, largest).initial_rho(params)
                    }
                };
                state.last_rho = Some((dim, rho));
            }
            return finish_at(
                y,
                &state.work.c,
                criteria,
                SolveStatus::Converged,
                0,
                history,
            );
        }
    }
    let spectrum = Spectrum::new(
        problem,
        params,
        largest_of(problem, warm_start.is_some(), params, state),
    );
    let (largest, mu_prox) = (spectrum.largest, spectrum.mu_prox);
    let mut rho = reused_rho.unwrap_or_else(|| spectrum.initial_rho(params));
    if !(rho.is_finite() && rho > 0.0) {
        let what = format!("penalty rho = {rho:e} (largest eigenvalue of G + R {largest:e})");
        return finish(
            y,
            SolveStatus::NumericalError { iteration: 0, what },
            0,
            history,
        );
    }

    let g = problem.free_velocity();
    let velocity_scale = problem.velocity_scale();
    let alpha = settings.over_relaxation;
    let mut anderson = (params.anderson_memory > 0).then_some(&mut state.anderson);
    if let Some(acc) = anderson.as_mut() {
        acc.restart(params.anderson_memory);
    }
    let Workspace {
        z,
        c,
        x,
        x_next,
        y_prev,
        point,
        image,
        next,
    } = &mut state.work;
    // A warm start keeps the previous dual variable, as Pinocchio does.
    match (warm_start, state.last_dual.take()) {
        (Some(_), Some(last)) if last.len() == dim => z.copy_from(&last),
        _ => initial_dual(problem, c, de_saxce, z),
    }
    let mut status = SolveStatus::MaxIterations;
    let mut iterations = 0;
    let mut next_check = 1;
    // The criteria of the last test when its `c` is the report's velocity at `y`.
    let mut reported = None;

    for k in 1..=settings.max_iter {
        iterations = k;
        let penalty = params.tau * rho;
        let prox = mu_prox + penalty;
        if out_of_time(settings, start) {
            status = SolveStatus::MaxTime;
            break;
        }
        let factored = if factorized {
            set_operator_shift(
                &mut state.shifted,
                &mut state.operator_factorizations,
                problem,
                prox,
            )
        } else {
            state.factor.set_shift(prox, deadline(settings, start))
        };
        match factored {
            Ok(()) => {}
            Err(FactorError::OutOfTime) => {
                status = SolveStatus::MaxTime;
                break;
            }
            Err(FactorError::NotPositiveDefinite(what)) => {
                status = SolveStatus::NumericalError { iteration: k, what };
                break;
            }
        }
        if anderson.is_some() {
            pack_state(x, &y, z, penalty, point);
        }
        // x-update: (G + R + prox I) x⁺ = −(g + s − ρ̄ y − μ_prox x − z).
        x_update_rhs(
            problem,
            (g, &*z),
            (&y, &*x),
            (penalty, mu_prox),
            de_saxce,
            x_next,
        );
        match &state.shifted {
            Some((_, shifted)) if factorized => {
                let rhs = x_next.clone();
                shifted.solve_into(rhs.as_slice(), x_next.as_mut_slice());
            }
            _ => state.factor.solve_mut(x_next),
        }
        // y- and z-updates with the residuals, into y (the old y moves to y_prev).
        std::mem::swap(&mut y, y_prev);
        let sweep = relaxed_projection_sweep(
            problem,
            (&*x, &*x_next),
            (&*y_prev, &mut y),
            z,
            (alpha, penalty, mu_prox),
        );
        std::mem::swap(x, x_next);
        if let Some(failed) = sweep.failure(&y, z, k) {
            status = failed;
            y.copy_from(y_prev);
            break;
        }
        if history.is_some() || k >= next_check || k == settings.max_iter {
            let (criteria, exact) =
                criteria_at(problem, model, settings, state.factor.matrix(), &y, c);
            if let Some(h) = history.as_mut() {
                h.push(settings.stop.pick(&criteria));
            }
            // The relative step is not a stopping test here (module doc): an infinite step.
            if let Some(stop) = stopping_status(&criteria, f64::INFINITY, settings, k, start) {
                status = stop;
                reported = exact.then_some(criteria);
                break;
            }
            let far = settings.stop.pick(&criteria) > FAR_FROM_TOLERANCE * settings.tolerance();
            next_check = k + if far { CHECK_EVERY_FAR } else { 1 };
        }
        let primal = scaled(sweep.primal, sweep.impulse_scale);
        let dual = scaled(sweep.dual, velocity_scale);
        let next_rho = updated_rho(params, &spectrum, rho, primal, dual);
        if let Some(acc) = anderson.as_mut() {
            pack_state(x, &y, z, penalty, image);
            match acc.step(point, image, next) {
                // The residuals were those of the rejected point: ρ stays.
                AndersonStep::Rejected => {
                    unpack_state(next, penalty, (x, &mut y, z));
                    continue;
                }
                AndersonStep::Extrapolated if next_rho == rho => {
                    unpack_state(next, penalty, (x, &mut y, z));
                }
                // A new ρ is a new fixed-point map: the memory starts again.
                _ if next_rho != rho => acc.reset(),
                _ => {}
            }
        }
        rho = next_rho;
    }
    state.last_rho = Some((dim, rho));
    if all_finite(z) {
        state.last_dual = Some(z.clone());
    }
    match reported {
        Some(criteria) => finish_at(y, c, criteria, status, iterations, history),
        None => finish(y, status, iterations, history),
    }
}
