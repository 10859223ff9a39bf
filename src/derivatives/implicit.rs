//! Implicit differentiation of the model's conditions at an answer (module docs of
//! [`crate::derivatives`]): the linearization of each contact, the square system of the
//! active contacts, and every product and Jacobian as solves with its one factor.

use nalgebra::{DMatrix, DVector, Matrix2, Matrix3, Vector2, Vector3};

use super::linear::{LinearMethod, LinearSystem};
use super::modes::{decide, ContactMode, Decision, ModeReport, Scales};
use super::{check_finite, model_name, DerivativeError, DerivativeSettings};
use crate::metrics::residuals::model_criteria;
use crate::metrics::residuals::Scales as RulerScales;
use crate::problem::ContactModel;
use crate::problem::{contact_vector, ContactProblem};
use crate::solvers::SolveReport;

/// A direction in the problem's data `(dG, dg, dμ, dR)`; an absent field does not move.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProblemDirection {
    /// `dG` (`3n × 3n`; its entries are independent, a symmetric change sets both).
    pub delassus: Option<DMatrix<f64>>,
    /// `dg` (`3n`).
    pub free_velocity: Option<DVector<f64>>,
    /// `dμ` (`n`).
    pub mu: Option<DVector<f64>>,
    /// `dR` (`3n`, the diagonal).
    pub compliance: Option<DVector<f64>>,
}

impl ProblemDirection {
    /// Checks sizes (`n` contacts) and finiteness.
    pub fn check(&self, n: usize) -> Result<(), DerivativeError> {
        let dim = 3 * n;
        if let Some(dg) = &self.delassus {
            if dg.shape() != (dim, dim) {
                return Err(size("dG", format!("{dim}x{dim}"), dg.shape()));
            }
            check_finite("dG", dg.as_slice())?;
        }
        for (field, x, len) in [
            ("dg", &self.free_velocity, dim),
            ("dmu", &self.mu, n),
            ("dR", &self.compliance, dim),
        ] {
            if let Some(x) = x {
                if x.len() != len {
                    return Err(size(field, len.to_string(), (x.len(), 1)));
                }
                check_finite(field, x.as_slice())?;
            }
        }
        Ok(())
    }
}

/// The gradient of `wᵀ λ` with respect to the problem's data (a vector-Jacobian product).
#[derive(Debug, Clone, PartialEq)]
pub struct ProblemCotangent {
    /// With respect to `G`'s entries (`3n × 3n`).
    pub delassus: DMatrix<f64>,
    /// With respect to `g` (`3n`).
    pub free_velocity: DVector<f64>,
    /// With respect to `μ` (`n`).
    pub mu: DVector<f64>,
    /// With respect to `R`'s diagonal (`3n`).
    pub compliance: DVector<f64>,
}

fn size(field: &'static str, expected: String, got: (usize, usize)) -> DerivativeError {
    DerivativeError::Size {
        field,
        expected,
        got: if got.1 == 1 {
            got.0.to_string()
        } else {
            format!("{}x{}", got.0, got.1)
        },
    }
}

/// One contact's linearized conditions `P dλ_i + Q dc_i + r dμ_i + B dA_i = 0`, `dA_i`
/// the changes of the diagonal block's entries `(N, t1), (N, t2), (N, N)` of `G + R`
/// (RaiSim's sliding law reads them).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Linearization {
    p: Matrix3<f64>,
    q: Matrix3<f64>,
    r: Vector3<f64>,
    block: Matrix3<f64>,
}

impl Linearization {
    fn zero() -> Self {
        Self {
            p: Matrix3::zeros(),
            q: Matrix3::zeros(),
            r: Vector3::zeros(),
            block: Matrix3::zeros(),
        }
    }
}

/// The derivative of one answer: its modes, its linearized conditions and their factor.
pub struct SolutionDerivative {
    model: ContactModel,
    n: usize,
    lambda: DVector<f64>,
    modes: Vec<ModeReport>,
    /// The contacts that push (stick or slide), in order.
    active: Vec<usize>,
    linearizations: Vec<Linearization>,
    system: LinearSystem,
    tolerance: f64,
    residual: f64,
}

impl std::fmt::Debug for SolutionDerivative {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SolutionDerivative")
            .field("model", &self.model)
            .field("modes", &self.modes)
            .field("method", &self.system.method())
            .field("rank", &self.system.rank())
            .finish()
    }
}

/// The derivative of a solver's report: refused when the solve did not converge.
pub fn differentiate_report(
    problem: &ContactProblem,
    model: ContactModel,
    report: &SolveReport,
    settings: &DerivativeSettings,
) -> Result<SolutionDerivative, DerivativeError> {
    if !report.status.is_converged() {
        return Err(DerivativeError::NotConverged {
            status: report.status.to_string(),
        });
    }
    differentiate(problem, model, &report.lambda, settings)
}

/// The derivative of the answer `lambda` of `problem` under `model` (module docs):
/// checks that `lambda` is a solution (the ruler's relative criterion at most
/// `settings.max_residual`), decides each contact's mode, linearizes and factors.
pub fn differentiate(
    problem: &ContactProblem,
    model: ContactModel,
    lambda: &DVector<f64>,
    settings: &DerivativeSettings,
) -> Result<SolutionDerivative, DerivativeError> {
    settings.validate()?;
    let n = problem.num_contacts();
    if lambda.len() != 3 * n {
        return Err(size("lambda", (3 * n).to_string(), (lambda.len(), 1)));
    }
    check_finite("lambda", lambda.as_slice())?;
    let c = problem.velocity(lambda);
    let residual = if n == 0 {
        0.0
    } else {
        model_criteria(model, problem, lambda, &c).relative
    };
    if residual.is_nan() || residual > settings.max_residual {
        return Err(DerivativeError::NotASolution {
            model: model_name(model),
            residual,
            limit: settings.max_residual,
        });
    }
    let tolerance = settings.mode_tolerance.max(residual);
    let mut modes = Vec::with_capacity(n);
    let mut decisions = Vec::with_capacity(n);
    for i in 0..n {
        let (li, ci) = (contact_vector(lambda, i), contact_vector(&c, i));
        let mu = problem.mu_of(i);
        let ruler = RulerScales::of_contact(problem, i, &li);
        let scales = Scales {
            impulse: ruler.impulse,
            velocity: ruler.velocity,
            tolerance,
        };
        let decision = decide(model, mu, &li, &ci, &scales);
        modes.push(decision.report);
        decisions.push(decision);
    }
    let active: Vec<usize> = (0..n)
        .filter(|&i| modes[i].mode != ContactMode::TakeOff)
        .collect();
    let symmetric = active.iter().all(|&i| modes[i].mode == ContactMode::Stick);
    let linearized = |lambda: &DVector<f64>, c: &DVector<f64>| {
        let linearizations = linearize_all(model, problem, lambda, c, &decisions)?;
        let k = system_matrix(problem, &active, &linearizations);
        Ok::<_, DerivativeError>((
            linearizations,
            LinearSystem::new(k, symmetric, settings.rank_tolerance),
        ))
    };
    let (mut lambda, mut c, mut residual) = (lambda.clone(), c, residual);
    let (mut linearizations, mut system) = linearized(&lambda, &c)?;
    for _ in 0..settings.polish_steps {
        let candidate = newton_step(model, problem, &lambda, &c, &decisions, &active, &system);
        let candidate_c = problem.velocity(&candidate);
        let candidate_residual = model_criteria(model, problem, &candidate, &candidate_c).relative;
        if !(candidate.iter().all(|x| x.is_finite()) && candidate_residual < residual) {
            break;
        }
        (lambda, c, residual) = (candidate, candidate_c, candidate_residual);
        (linearizations, system) = linearized(&lambda, &c)?;
    }
    Ok(SolutionDerivative {
        model,
        n,
        lambda,
        modes,
        active,
        linearizations,
        system,
        tolerance,
        residual,
    })
}

/// Every contact's linearized conditions at `(λ, c)` in its decided mode.
fn linearize_all(
    model: ContactModel,
    problem: &ContactProblem,
    lambda: &DVector<f64>,
    c: &DVector<f64>,
    decisions: &[Decision],
) -> Result<Vec<Linearization>, DerivativeError> {
    decisions
        .iter()
        .enumerate()
        .map(|(i, decision)| {
            let (li, ci) = (contact_vector(lambda, i), contact_vector(c, i));
            let block = problem.diagonal_block(i);
            linearize(model, problem.mu_of(i), &li, &ci, &block, decision)
                .map_err(|reason| DerivativeError::NotDifferentiable { contact: i, reason })
        })
        .collect()
}

/// One Newton step on the conditions of the decided modes, `F(λ) = 0`
/// ([`mode_condition`]), whose Jacobian with respect to the active contacts' `λ` is `K`
/// (`dc = (G + R) dλ`): `λ_S ← λ_S − K⁻¹ F_S(λ)`, the take-off contacts' `λ_i ← 0`.
fn newton_step(
    model: ContactModel,
    problem: &ContactProblem,
    lambda: &DVector<f64>,
    c: &DVector<f64>,
    decisions: &[Decision],
    active: &[usize],
    system: &LinearSystem,
) -> DVector<f64> {
    let mut step = DMatrix::zeros(3 * active.len(), 1);
    for (a, &i) in active.iter().enumerate() {
        let (li, ci) = (contact_vector(lambda, i), contact_vector(c, i));
        let block = problem.diagonal_block(i);
        let f = mode_condition(model, problem.mu_of(i), &li, &ci, &block, &decisions[i]);
        step.fixed_view_mut::<3, 1>(3 * a, 0).copy_from(&(-f));
    }
    system.solve_in_place(&mut step);
    let mut out = DVector::zeros(lambda.len());
    for (a, &i) in active.iter().enumerate() {
        let x = contact_vector(lambda, i) + step.fixed_view::<3, 1>(3 * a, 0);
        out.fixed_rows_mut::<3>(3 * i).copy_from(&x);
    }
    out
}

/// `F_i(λ)`, the conditions [`linearize`] differentiates, zero at an exact answer in the
/// decided mode: stick `c_i`; slide on the ice-cream cone `(λ_T + μ λ_N u, c_N)` (NCP) or
/// `(…, c_N − μ ‖c_T‖)` (CCP); on the pyramid `λ_k + μ σ_k λ_N` on a sliding axis, `c_k`
/// on a sticking one, and `c_N`; RaiSim's `(‖λ_T‖ − μ λ_N, (c_T × d) / (‖c_T‖ ‖d‖), c_N)`.
fn mode_condition(
    model: ContactModel,
    mu: f64,
    lambda: &Vector3<f64>,
    c: &Vector3<f64>,
    block: &Matrix3<f64>,
    decision: &Decision,
) -> Vector3<f64> {
    if decision.report.mode != ContactMode::Slide {
        return *c;
    }
    let slip = c.xy().norm();
    let u = if decision.no_direction || slip == 0.0 {
        Vector2::zeros()
    } else {
        c.xy() / slip
    };
    match model {
        ContactModel::Lcp => {
            let mut f = *c;
            for k in 0..2 {
                if decision.sliding_axes[k] {
                    let sigma = if c[k] >= 0.0 { 1.0 } else { -1.0 };
                    f[k] = lambda[k] + mu * sigma * lambda.z;
                }
            }
            f
        }
        ContactModel::Raisim if mu > 0.0 => {
            let g_nn = block[(2, 2)];
            let g_nt = Vector2::new(block[(2, 0)], block[(2, 1)]);
            let beta = if g_nn > 0.0 {
                mu * mu * lambda.z / g_nn
            } else {
                0.0
            };
            let d = lambda.xy() + g_nt * beta;
            let cross = (c.x * d.y - c.y * d.x) / (slip * d.norm());
            Vector3::new(lambda.xy().norm() - mu * lambda.z, cross, c.z)
        }
        ContactModel::Ccp => {
            let t = lambda.xy() + u * (mu * lambda.z);
            Vector3::new(t.x, t.y, c.z - mu * slip)
        }
        _ => {
            let t = lambda.xy() + u * (mu * lambda.z);
            Vector3::new(t.x, t.y, c.z)
        }
    }
}

/// `K`: block `(a, b)` is `Q_i (G + R)_ij + δ_ab P_i` over the active contacts.
fn system_matrix(
    problem: &ContactProblem,
    active: &[usize],
    linearizations: &[Linearization],
) -> DMatrix<f64> {
    let m = 3 * active.len();
    let g = problem.delassus();
    let mut k = DMatrix::zeros(m, m);
    for (a, &i) in active.iter().enumerate() {
        let lin = &linearizations[i];
        for (b, &j) in active.iter().enumerate() {
            let mut block: Matrix3<f64> = g.fixed_view::<3, 3>(3 * i, 3 * j).into_owned();
            if i == j {
                if let Some(r) = problem.compliance() {
                    for d in 0..3 {
                        block[(d, d)] += r[3 * i + d];
                    }
                }
            }
            let mut kb = lin.q * block;
            if a == b {
                kb += lin.p;
            }
            k.fixed_view_mut::<3, 3>(3 * a, 3 * b).copy_from(&kb);
        }
    }
    k
}

/// The linearized conditions of one contact in its mode (module docs of
/// [`crate::derivatives`]); `block` is the diagonal block of `G + R`.
fn linearize(
    model: ContactModel,
    mu: f64,
    lambda: &Vector3<f64>,
    c: &Vector3<f64>,
    block: &Matrix3<f64>,
    decision: &Decision,
) -> Result<Linearization, String> {
    let mut lin = Linearization::zero();
    match decision.report.mode {
        ContactMode::TakeOff => lin.p = Matrix3::identity(),
        ContactMode::Stick => lin.q = Matrix3::identity(),
        ContactMode::Slide => match model {
            ContactModel::Ncp => ice_cream_slide(&mut lin, false, mu, lambda, c, decision),
            ContactModel::Ccp => ice_cream_slide(&mut lin, true, mu, lambda, c, decision),
            ContactModel::Lcp => pyramid_slide(&mut lin, mu, lambda, c, decision),
            ContactModel::Raisim if mu == 0.0 => {
                ice_cream_slide(&mut lin, false, mu, lambda, c, decision)
            }
            ContactModel::Raisim => raisim_slide(&mut lin, mu, lambda, c, block)?,
        },
    }
    Ok(lin)
}

/// Sliding on the ice-cream cone: `λ_T = −μ λ_N u`, `u = c_T / ‖c_T‖`, differentiated,
/// `dλ_T + μ u dλ_N + (μ λ_N / ‖c_T‖)(I − u uᵀ) dc_T + λ_N u dμ = 0`; normal row
/// `dc_N = 0` (NCP) or `dc_N − μ uᵀ dc_T − ‖c_T‖ dμ = 0` (CCP, `c_N = μ ‖c_T‖`).
fn ice_cream_slide(
    lin: &mut Linearization,
    cone_program: bool,
    mu: f64,
    lambda: &Vector3<f64>,
    c: &Vector3<f64>,
    decision: &Decision,
) {
    let c_t = c.xy();
    let slip = c_t.norm();
    let u = if decision.no_direction || slip == 0.0 {
        Vector2::zeros()
    } else {
        c_t / slip
    };
    let tangent = if decision.no_direction || slip == 0.0 {
        Matrix2::zeros()
    } else {
        (Matrix2::identity() - u * u.transpose()) * (mu * lambda.z / slip)
    };
    for a in 0..2 {
        lin.p[(a, a)] = 1.0;
        lin.p[(a, 2)] = mu * u[a];
        lin.q[(a, 0)] = tangent[(a, 0)];
        lin.q[(a, 1)] = tangent[(a, 1)];
        lin.r[a] = lambda.z * u[a];
    }
    lin.q[(2, 2)] = 1.0;
    if cone_program {
        lin.q[(2, 0)] = -mu * u.x;
        lin.q[(2, 1)] = -mu * u.y;
        lin.r[2] = -slip;
    }
}

/// The LCP's pyramid: `dc_N = 0`; on a sliding axis `λ_k = −μ λ_N sign(c_k)`
/// differentiated, `dλ_k + μ σ_k dλ_N + σ_k λ_N dμ = 0`; `dc_k = 0` on a sticking one.
fn pyramid_slide(
    lin: &mut Linearization,
    mu: f64,
    lambda: &Vector3<f64>,
    c: &Vector3<f64>,
    decision: &Decision,
) {
    for k in 0..2 {
        if decision.sliding_axes[k] {
            let sigma = if c[k] >= 0.0 { 1.0 } else { -1.0 };
            lin.p[(k, k)] = 1.0;
            lin.p[(k, 2)] = mu * sigma;
            lin.r[k] = sigma * lambda.z;
        } else {
            lin.q[(k, k)] = 1.0;
        }
    }
    lin.q[(2, 2)] = 1.0;
}

/// RaiSim's sliding branch (eq. 20-21): `‖λ_T‖ = μ λ_N`, `c_T × d = 0` with
/// `d = λ_T + β G_NT`, `β = μ² λ_N / G_NN` (divided by `‖c_T‖ ‖d‖`), `dc_N = 0`.
fn raisim_slide(
    lin: &mut Linearization,
    mu: f64,
    lambda: &Vector3<f64>,
    c: &Vector3<f64>,
    block: &Matrix3<f64>,
) -> Result<(), String> {
    let lambda_t = lambda.xy();
    let force = lambda_t.norm();
    let slip = c.xy().norm();
    if force == 0.0 || slip == 0.0 {
        return Err("RaiSim's sliding contact has no tangential force or no slip".into());
    }
    let v = lambda_t / force;
    lin.p[(0, 0)] = v.x;
    lin.p[(0, 1)] = v.y;
    lin.p[(0, 2)] = -mu;
    lin.r[0] = -lambda.z;
    let g_nn = block[(2, 2)];
    let g_nt = Vector2::new(block[(2, 0)], block[(2, 1)]);
    let beta = if g_nn > 0.0 {
        mu * mu * lambda.z / g_nn
    } else {
        0.0
    };
    let d = lambda_t + g_nt * beta;
    if d.norm() <= 1e-12 * force {
        return Err(
            "the direction d = λ_T + μ² λ_N G_NT / G_NN of RaiSim's eq. (21) vanishes".into(),
        );
    }
    let scale = 1.0 / (slip * d.norm());
    let cross = c.x * g_nt.y - c.y * g_nt.x;
    lin.q[(1, 0)] = d.y * scale;
    lin.q[(1, 1)] = -d.x * scale;
    lin.p[(1, 0)] = -c.y * scale;
    lin.p[(1, 1)] = c.x * scale;
    if g_nn > 0.0 {
        lin.p[(1, 2)] = mu * mu / g_nn * cross * scale;
        lin.r[1] = 2.0 * mu * lambda.z / g_nn * cross * scale;
        lin.block[(1, 0)] = -c.y * beta * scale;
        lin.block[(1, 1)] = c.x * beta * scale;
        lin.block[(1, 2)] = -beta * cross / g_nn * scale;
    }
    lin.q[(2, 2)] = 1.0;
    Ok(())
}

impl SolutionDerivative {
    /// The model whose conditions were differentiated.
    pub fn model(&self) -> ContactModel {
        self.model
    }

    /// Each contact's mode.
    pub fn modes(&self) -> &[ModeReport] {
        &self.modes
    }

    /// The answer differentiated.
    pub fn lambda(&self) -> &DVector<f64> {
        &self.lambda
    }

    /// The tolerance `τ` of the mode decisions.
    pub fn tolerance(&self) -> f64 {
        self.tolerance
    }

    /// The answer's relative criterion.
    pub fn residual(&self) -> f64 {
        self.residual
    }

    /// How the system was solved.
    pub fn method(&self) -> LinearMethod {
        self.system.method()
    }

    /// `(rank, dimension)` of the system: rank-deficient when redundant contacts push.
    pub fn rank(&self) -> (usize, usize) {
        self.system.rank()
    }

    /// Number of contacts.
    pub fn num_contacts(&self) -> usize {
        self.n
    }

    /// `dλ` along `direction` (a Jacobian-vector product).
    pub fn jvp(&self, direction: &ProblemDirection) -> Result<DVector<f64>, DerivativeError> {
        direction.check(self.n)?;
        let dim = 3 * self.n;
        let mut dc = direction
            .free_velocity
            .clone()
            .unwrap_or_else(|| DVector::zeros(dim));
        if let Some(dg) = &direction.delassus {
            dc.gemv(1.0, dg, &self.lambda, 1.0);
        }
        if let Some(dr) = &direction.compliance {
            dc += dr.component_mul(&self.lambda);
        }
        let mut rhs = DMatrix::zeros(3 * self.active.len(), 1);
        for (a, &i) in self.active.iter().enumerate() {
            let lin = &self.linearizations[i];
            let mut row = lin.q * contact_vector(&dc, i);
            if let Some(dmu) = &direction.mu {
                row += lin.r * dmu[i];
            }
            if lin.block != Matrix3::zeros() {
                row += lin.block * block_change(direction, i);
            }
            rhs.fixed_view_mut::<3, 1>(3 * a, 0).copy_from(&(-row));
        }
        self.system.solve_in_place(&mut rhs);
        let out = self.scatter(&rhs);
        check_finite("dlambda", out.as_slice())?;
        Ok(out.column(0).into_owned())
    }

    /// `dλ` for several `dg` at once (the columns of `dg`, `3n` rows), with `G`, `μ` and
    /// `R` fixed: the product the step derivatives are made of. With more columns than `3n` the Jacobian `∂λ/∂g` is formed first (`3n` solves) and
    /// multiplied.
    pub fn jvp_free_velocity(&self, dg: &DMatrix<f64>) -> Result<DMatrix<f64>, DerivativeError> {
        let dim = 3 * self.n;
        if dg.nrows() != dim {
            return Err(size("dg", format!("{dim} rows"), dg.shape()));
        }
        check_finite("dg", dg.as_slice())?;
        if dg.ncols() > dim {
            let out = self.free_velocity_jacobian() * dg;
            check_finite("dlambda", out.as_slice())?;
            return Ok(out);
        }
        let out = self.solve_free_velocity(dg);
        check_finite("dlambda", out.as_slice())?;
        Ok(out)
    }

    /// `∂λ/∂g` (`3n × 3n`) from `K⁻¹` itself: its columns of contact `i` are
    /// `K⁻¹[:, i's rows] (−Q_i)`, zero for a contact that does not push.
    fn free_velocity_jacobian(&self) -> DMatrix<f64> {
        let inverse = self.system.inverse();
        let mut out = DMatrix::zeros(3 * self.n, 3 * self.n);
        for (b, &j) in self.active.iter().enumerate() {
            let minus_q = -self.linearizations[j].q;
            let columns = inverse.columns(3 * b, 3) * minus_q;
            for (a, &i) in self.active.iter().enumerate() {
                out.fixed_view_mut::<3, 3>(3 * i, 3 * j)
                    .copy_from(&columns.fixed_rows::<3>(3 * a));
            }
        }
        out
    }

    /// `dλ` of the columns of `dg` (checked), through the factor.
    fn solve_free_velocity(&self, dg: &DMatrix<f64>) -> DMatrix<f64> {
        let mut rhs = DMatrix::zeros(3 * self.active.len(), dg.ncols());
        for (a, &i) in self.active.iter().enumerate() {
            let minus_q = -self.linearizations[i].q;
            let rows = minus_q * dg.rows(3 * i, 3);
            rhs.rows_mut(3 * a, 3).copy_from(&rows);
        }
        self.system.solve_in_place(&mut rhs);
        self.scatter(&rhs)
    }

    /// The gradient of `wᵀ λ` with respect to `(G, g, μ, R)` (a vector-Jacobian product):
    /// `w̄ = K⁻ᵀ w`, then each field's transposed coefficient.
    pub fn vjp(&self, w: &DVector<f64>) -> Result<ProblemCotangent, DerivativeError> {
        let dim = 3 * self.n;
        if w.len() != dim {
            return Err(size("w", dim.to_string(), (w.len(), 1)));
        }
        check_finite("w", w.as_slice())?;
        let mut bar = DMatrix::zeros(3 * self.active.len(), 1);
        for (a, &i) in self.active.iter().enumerate() {
            bar.fixed_view_mut::<3, 1>(3 * a, 0)
                .copy_from(&w.fixed_rows::<3>(3 * i));
        }
        self.system.solve_transpose_in_place(&mut bar);
        let mut out = ProblemCotangent {
            delassus: DMatrix::zeros(dim, dim),
            free_velocity: DVector::zeros(dim),
            mu: DVector::zeros(self.n),
            compliance: DVector::zeros(dim),
        };
        for (a, &i) in self.active.iter().enumerate() {
            let lin = &self.linearizations[i];
            let wi: Vector3<f64> = bar.fixed_view::<3, 1>(3 * a, 0).into_owned();
            out.free_velocity
                .fixed_rows_mut::<3>(3 * i)
                .copy_from(&(-(lin.q.transpose() * wi)));
            out.mu[i] = -lin.r.dot(&wi);
            let b = -(lin.block.transpose() * wi);
            for m in 0..3 {
                out.delassus[(3 * i + 2, 3 * i + m)] += b[m];
            }
            out.compliance[3 * i + 2] += b[2];
        }
        out.delassus += &out.free_velocity * self.lambda.transpose();
        out.compliance += out.free_velocity.component_mul(&self.lambda);
        for (field, x) in [
            ("dG", out.delassus.as_slice()),
            ("dg", out.free_velocity.as_slice()),
            ("dmu", out.mu.as_slice()),
            ("dR", out.compliance.as_slice()),
        ] {
            check_finite(field, x)?;
        }
        Ok(out)
    }

    /// `∂λ/∂g` (`3n × 3n`).
    pub fn jacobian_free_velocity(&self) -> Result<DMatrix<f64>, DerivativeError> {
        let out = self.free_velocity_jacobian();
        check_finite("dlambda/dg", out.as_slice())?;
        Ok(out)
    }

    /// `∂λ/∂μ` (`3n × n`).
    pub fn jacobian_mu(&self) -> Result<DMatrix<f64>, DerivativeError> {
        let mut rhs = DMatrix::zeros(3 * self.active.len(), self.n);
        for (a, &i) in self.active.iter().enumerate() {
            let r = -self.linearizations[i].r;
            rhs.fixed_view_mut::<3, 1>(3 * a, i).copy_from(&r);
        }
        self.system.solve_in_place(&mut rhs);
        let out = self.scatter(&rhs);
        check_finite("dlambda/dmu", out.as_slice())?;
        Ok(out)
    }

    /// `∂λ/∂R` (`3n × 3n`, with respect to the diagonal's entries).
    pub fn jacobian_compliance(&self) -> Result<DMatrix<f64>, DerivativeError> {
        let mut out = self.jacobian_free_velocity()?;
        for (j, lambda_j) in self.lambda.iter().enumerate() {
            out.column_mut(j).scale_mut(*lambda_j);
        }
        let extra = self.block_columns()?;
        for (i, columns) in extra {
            out.column_mut(3 * i + 2).axpy(1.0, &columns.column(2), 1.0);
        }
        Ok(out)
    }

    /// `∂λ/∂G` with respect to each entry independently (`3n × 9n²`): the column of
    /// `G_jk` is `j + 3n k` (column-major), `∂λ/∂G_jk = (∂λ/∂g)_j λ_k` plus RaiSim's
    /// diagonal-block terms.
    pub fn jacobian_delassus(&self) -> Result<DMatrix<f64>, DerivativeError> {
        let dim = 3 * self.n;
        let dg = self.jacobian_free_velocity()?;
        let mut out = DMatrix::zeros(dim, dim * dim);
        for k in 0..dim {
            for j in 0..dim {
                out.column_mut(j + dim * k)
                    .axpy(self.lambda[k], &dg.column(j), 0.0);
            }
        }
        for (i, columns) in self.block_columns()? {
            for m in 0..3 {
                let column = (3 * i + 2) + dim * (3 * i + m);
                out.column_mut(column).axpy(1.0, &columns.column(m), 1.0);
            }
        }
        Ok(out)
    }

    /// `∂λ/∂G` for symmetric changes (`3n × 3n(3n + 1)/2`): one column per entry of the
    /// upper triangle, `(j, k)` with `j ≤ k` in column-major order, the sum of the
    /// columns of `G_jk` and `G_kj` of [`SolutionDerivative::jacobian_delassus`].
    pub fn jacobian_delassus_symmetric(&self) -> Result<DMatrix<f64>, DerivativeError> {
        let dim = 3 * self.n;
        let full = self.jacobian_delassus()?;
        let mut out = DMatrix::zeros(dim, dim * (dim + 1) / 2);
        let mut column = 0;
        for k in 0..dim {
            for j in 0..=k {
                let mut x = full.column(j + dim * k).into_owned();
                if j != k {
                    x += full.column(k + dim * j);
                }
                out.set_column(column, &x);
                column += 1;
            }
        }
        Ok(out)
    }

    /// RaiSim's diagonal-block terms: per contact with a nonzero `B_i`, `−K⁻¹ B_i`
    /// scattered (`3n × 3`, columns `(N, t1), (N, t2), (N, N)`).
    fn block_columns(&self) -> Result<Vec<(usize, DMatrix<f64>)>, DerivativeError> {
        let mut out = Vec::new();
        for (a, &i) in self.active.iter().enumerate() {
            let block = self.linearizations[i].block;
            if block == Matrix3::zeros() {
                continue;
            }
            let mut rhs = DMatrix::zeros(3 * self.active.len(), 3);
            rhs.fixed_view_mut::<3, 3>(3 * a, 0).copy_from(&(-block));
            self.system.solve_in_place(&mut rhs);
            let x = self.scatter(&rhs);
            check_finite("dlambda/dG", x.as_slice())?;
            out.push((i, x));
        }
        Ok(out)
    }

    /// The active contacts' rows of `x` into a `3n`-row matrix (take-off rows zero).
    fn scatter(&self, x: &DMatrix<f64>) -> DMatrix<f64> {
        let mut out = DMatrix::zeros(3 * self.n, x.ncols());
        for (a, &i) in self.active.iter().enumerate() {
            out.rows_mut(3 * i, 3).copy_from(&x.rows(3 * a, 3));
        }
        out
    }
}

/// `(dA_{N t1}, dA_{N t2}, dA_{NN})` of contact `i`'s diagonal block.
fn block_change(direction: &ProblemDirection, i: usize) -> Vector3<f64> {
    let mut out = Vector3::zeros();
    if let Some(dg) = &direction.delassus {
        for m in 0..3 {
            out[m] = dg[(3 * i + 2, 3 * i + m)];
        }
    }
    if let Some(dr) = &direction.compliance {
        out[2] += dr[3 * i + 2];
    }
    out
}
