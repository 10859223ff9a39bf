//! The solver trait, shared settings, reports, and the registry of the twelve solvers of
//! design.md §4 (one file each).
//!
//! A solver is configured by [`SolverSettings`] (shared) and its own parameters, solves a
//! [`ContactProblem`] from an optional warm start, and returns a [`SolveReport`]. A
//! solver keeps what it can reuse between calls (ρ, a factorization); [`ContactSolver::reset`]
//! forgets it. Settings change only through [`ContactSolver::set_settings`], which
//! validates them.
//!
//! Every solver is an [`Algorithm`] in the solver [`Shell`] ([`shell`]): the shell owns
//! the name, the model and the validated settings, checks the warm start, answers a
//! problem without contacts and implements [`ContactSolver`]; a solver file holds its
//! algorithm and its parameters. A user adds a solver the same way in their own crate
//! (the example on [`ContactSolver`]; `user-solver/` in the repository), with the loop
//! helpers of [`support`] (the model's criteria, the stopping test, warm-start acceptance,
//! the iterate test), so that it is judged like the built-in ones. Implementing
//! [`ContactSolver`] directly stays possible ([`solve_checked`] is the shell's frame).
//!
//! The built-in solvers are one table, [`registry::REGISTRY`] (id, model, constructor,
//! parameter defaults and docs): parsing, building, `contactbench solvers` and the
//! `--help` list read it.
//!
//! Solvers are named by text, with optional settings and parameters:
//! `ncp-admm`, `ncp-admm:eps_rel=1e-8,max_iter=500,rho=1e-3` (see [`SolverSpec`]).

pub mod admm;
pub mod anderson;
pub mod ccp_admm;
pub mod ccp_ipm;
pub mod ccp_newton;
pub mod ccp_pgs;
pub mod compare;
pub(crate) mod factor;
pub(crate) mod interior_point;
pub mod lcp_pgs;
pub mod lcp_qp;
pub mod lcp_stagproj;
pub mod ncp_admm;
pub mod ncp_pgs;
pub mod ncp_stagproj;
mod per_contact;
pub mod raisim;
pub mod raisim_corrected;
pub mod registry;
pub mod shell;
pub mod stagproj;
pub mod support;

pub use shell::{Algorithm, Shell, SolveCall};
pub use support::solve_checked;

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, Instant};

use nalgebra::DVector;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use thiserror::Error;

use crate::metrics::residuals::{model_criteria, Criteria};
use crate::problem::{ContactModel, ContactProblem, ProblemError};

/// Why a solver could not be built or run (a solver that runs but does not converge
/// reports it in [`SolveStatus`], not here).
#[derive(Debug, Error)]
pub enum SolverError {
    /// The solver name is not one of the registered ids.
    #[error("unknown solver '{0}' (known: {known})", known = SolverId::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", "))]
    UnknownSolver(String),
    /// A setting is out of range.
    #[error("setting {field} = {value}: {reason}")]
    InvalidSetting {
        /// The field.
        field: String,
        /// Its value, as text.
        value: String,
        /// What is wrong.
        reason: String,
    },
    /// A solver parameter could not be read.
    #[error("solver {solver}: {message}")]
    InvalidParameter {
        /// The solver id.
        solver: String,
        /// What is wrong.
        message: String,
    },
    /// The solver specification text is malformed.
    #[error("solver specification '{spec}': {message}")]
    InvalidSpec {
        /// The text.
        spec: String,
        /// What is wrong.
        message: String,
    },
    /// The warm start (or another input) does not fit the problem.
    #[error(transparent)]
    Problem(#[from] ProblemError),
}

/// Which criterion a solver stops on (docs/ruler.md).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Criterion {
    /// The dimensionless relative criterion `r` of the solver's model, tolerance `eps_rel`.
    #[default]
    Relative,
    /// The paper's absolute criterion of the solver's model, tolerance `eps_abs`.
    Absolute,
}

impl Criterion {
    /// The name used in files and on the command line.
    pub fn as_str(&self) -> &'static str {
        match self {
            Criterion::Relative => "relative",
            Criterion::Absolute => "absolute",
        }
    }

    /// The setting that holds this criterion's tolerance.
    pub fn tolerance_field(&self) -> &'static str {
        match self {
            Criterion::Relative => "eps_rel",
            Criterion::Absolute => "eps_abs",
        }
    }

    /// This criterion's value among both.
    pub fn pick(&self, criteria: &Criteria) -> f64 {
        match self {
            Criterion::Relative => criteria.relative,
            Criterion::Absolute => criteria.absolute,
        }
    }
}

impl FromStr for Criterion {
    type Err = SolverError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "relative" => Ok(Criterion::Relative),
            "absolute" => Ok(Criterion::Absolute),
            other => Err(SolverError::InvalidSetting {
                field: "stop".into(),
                value: other.into(),
                reason: "must be `relative` or `absolute`".into(),
            }),
        }
    }
}

impl fmt::Display for Criterion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Settings every solver shares (design.md §4, docs/ruler.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SolverSettings {
    /// The criterion that stops the solver and judges a warm start. Default `relative`.
    pub stop: Criterion,
    /// Tolerance of the relative criterion (dimensionless). Default `1e-6`.
    pub eps_rel: f64,
    /// Tolerance of the absolute criterion (mixed units, the paper's). Default `1e-6`.
    pub eps_abs: f64,
    /// Stall threshold on the relative step `‖λ_{k+1} − λ_k‖ / ‖λ_k‖` (of the solver's
    /// own iterate where that is not `λ`). Default `1e-10`.
    pub eps_step: f64,
    /// Iteration cap. Default `1000`.
    pub max_iter: usize,
    /// Wall-time cap (s); `None` for none. Default `None`.
    pub max_time: Option<f64>,
    /// Over-relaxation factor in `]0, 2[` (eq. 22), for the solvers that use it. Default `1`.
    pub over_relaxation: f64,
    /// Record the tested criterion at every iteration. Default `false`.
    pub record_history: bool,
}

impl Default for SolverSettings {
    fn default() -> Self {
        Self {
            stop: Criterion::Relative,
            eps_rel: 1e-6,
            eps_abs: 1e-6,
            eps_step: 1e-10,
            max_iter: 1000,
            max_time: None,
            over_relaxation: 1.0,
            record_history: false,
        }
    }
}

impl SolverSettings {
    /// Names of the shared settings, as in files and on the command line.
    pub const FIELDS: [&'static str; 8] = [
        "stop",
        "eps_rel",
        "eps_abs",
        "eps_step",
        "max_iter",
        "max_time",
        "over_relaxation",
        "record_history",
    ];

    /// The tolerance of the criterion in use (`eps_rel` or `eps_abs`).
    pub fn tolerance(&self) -> f64 {
        match self.stop {
            Criterion::Relative => self.eps_rel,
            Criterion::Absolute => self.eps_abs,
        }
    }

    /// Checks every field's range.
    pub fn validate(&self) -> Result<(), SolverError> {
        let invalid = |field: &str, value: String, reason: &str| SolverError::InvalidSetting {
            field: field.to_string(),
            value,
            reason: reason.to_string(),
        };
        for (field, value) in [
            ("eps_rel", self.eps_rel),
            ("eps_abs", self.eps_abs),
            ("eps_step", self.eps_step),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(invalid(field, value.to_string(), "must be finite and >= 0"));
            }
        }
        if self.max_iter == 0 {
            return Err(invalid("max_iter", "0".into(), "must be at least 1"));
        }
        if let Some(t) = self.max_time {
            if !(t.is_finite() && t > 0.0) {
                return Err(invalid("max_time", t.to_string(), "must be finite and > 0"));
            }
        }
        if !(self.over_relaxation > 0.0 && self.over_relaxation < 2.0) {
            return Err(invalid(
                "over_relaxation",
                self.over_relaxation.to_string(),
                "must lie in ]0, 2[",
            ));
        }
        Ok(())
    }
}

/// How a solve ended. Only `Converged` means the tolerance was reached; the others say
/// why not, with the iteration where the solver could tell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum SolveStatus {
    /// The tested criterion went below its tolerance.
    Converged,
    /// `max_iter` was reached first.
    MaxIterations,
    /// `max_time` was reached first.
    MaxTime,
    /// The solver stopped making progress (relative step below `eps_step`, no descent)
    /// with the criterion still above its tolerance.
    Stalled {
        /// The iteration where it stopped.
        iteration: usize,
    },
    /// The iterate grew beyond [`crate::problem::MAGNITUDE_LIMIT`].
    Diverged {
        /// The iteration where it did.
        iteration: usize,
    },
    /// A non-finite value or a failed factorization.
    NumericalError {
        /// The iteration where it happened (0: before the first).
        iteration: usize,
        /// What failed.
        what: String,
    },
    /// The solver proved that the problem has no solution.
    Infeasible,
    /// The solver's own stopping test passed, but the ruler refutes its answer: the
    /// criterion named by `stop` of the solver's model, computed by the solver shell on
    /// the returned `λ` ([`support::judged_by_ruler`]), is above its tolerance. Not
    /// converged; the report's `residual` is the ruler's value.
    RefutedByRuler,
}

impl SolveStatus {
    /// True only for [`SolveStatus::Converged`].
    pub fn is_converged(&self) -> bool {
        matches!(self, SolveStatus::Converged)
    }

    /// The status's name as in files (`converged`, `max_iterations`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            SolveStatus::Converged => "converged",
            SolveStatus::MaxIterations => "max_iterations",
            SolveStatus::MaxTime => "max_time",
            SolveStatus::Stalled { .. } => "stalled",
            SolveStatus::Diverged { .. } => "diverged",
            SolveStatus::NumericalError { .. } => "numerical_error",
            SolveStatus::Infeasible => "infeasible",
            SolveStatus::RefutedByRuler => "refuted_by_ruler",
        }
    }
}

impl fmt::Display for SolveStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SolveStatus::Converged => write!(f, "converged"),
            SolveStatus::MaxIterations => write!(f, "max iterations reached"),
            SolveStatus::MaxTime => write!(f, "max time reached"),
            SolveStatus::Stalled { iteration } => write!(f, "stalled at iteration {iteration}"),
            SolveStatus::Diverged { iteration } => write!(f, "diverged at iteration {iteration}"),
            SolveStatus::NumericalError { iteration, what } => {
                write!(f, "numerical error at iteration {iteration}: {what}")
            }
            SolveStatus::Infeasible => write!(f, "infeasible"),
            SolveStatus::RefutedByRuler => {
                write!(
                    f,
                    "not converged: its own test passed, the ruler refutes it"
                )
            }
        }
    }
}

/// What a solve returns.
#[derive(Debug, Clone)]
pub struct SolveReport {
    /// Contact forces (impulses) `λ`, `3n`, ordered `[t1, t2, n]` per contact.
    pub lambda: DVector<f64>,
    /// Contact velocity `c = (G + R) λ + g`.
    pub velocity: DVector<f64>,
    /// How the solve ended.
    pub status: SolveStatus,
    /// Iterations performed.
    pub iterations: usize,
    /// The criterion that was tested (the settings' `stop`).
    pub criterion: Criterion,
    /// Its value at the returned `λ`.
    pub residual: f64,
    /// Both criteria of the solver's model at the returned `λ`.
    pub criteria: Criteria,
    /// Wall time of the solve.
    pub solve_time: Duration,
    /// The tested criterion at every iteration, when `record_history` is set.
    pub history: Option<Vec<f64>>,
}

impl SolveReport {
    /// Assembles a report: computes `c` from `λ`, both criteria of `model` at `λ` (on
    /// `problem`), and the wall time since `start`.
    #[allow(clippy::too_many_arguments)]
    pub fn finish(
        problem: &ContactProblem,
        model: ContactModel,
        settings: &SolverSettings,
        lambda: DVector<f64>,
        status: SolveStatus,
        iterations: usize,
        start: Instant,
        history: Option<Vec<f64>>,
    ) -> Self {
        let velocity = problem.velocity(&lambda);
        let criteria = model_criteria(model, problem, &lambda, &velocity);
        Self::finish_at_velocity(
            settings, lambda, velocity, criteria, status, iterations, start, history,
        )
    }

    /// [`SolveReport::finish`] when the solver's last stopping test already computed
    /// `velocity = problem.velocity(&lambda)` (the same arithmetic:
    /// [`ContactProblem::velocity_into`]) and `criteria`, the model's criteria at them:
    /// the report is the same, without computing either again.
    #[allow(clippy::too_many_arguments)]
    pub fn finish_at_velocity(
        settings: &SolverSettings,
        lambda: DVector<f64>,
        velocity: DVector<f64>,
        criteria: Criteria,
        status: SolveStatus,
        iterations: usize,
        start: Instant,
        history: Option<Vec<f64>>,
    ) -> Self {
        Self {
            lambda,
            velocity,
            status,
            iterations,
            criterion: settings.stop,
            residual: settings.stop.pick(&criteria),
            criteria,
            solve_time: start.elapsed(),
            history,
        }
    }
}

/// A contact solver: what every runner solves with (`compare`, [`crate::simulation::simulate`],
/// sweeps, batches, the paper's runs, each through a [`crate::simulation::SolverFactory`]).
///
/// Every built-in solver is an [`Algorithm`] in the solver [`Shell`], which implements
/// this trait (name, model, validated settings, warm-start check, empty problems). A
/// user's solver is written the same way, in any crate: its iteration, with the loop
/// helpers of [`support`], and the shell around it. Here a projected gradient on the CCP,
/// `λ ← proj_K(λ − t ((G + R) λ + g))`, solved and judged by the metrics:
///
/// ```
/// use contactbench::metrics::model_criteria;
/// use contactbench::problem::{
///     cones, contact_vector, set_contact_vector, ContactModel, ContactProblem,
/// };
/// use contactbench::solvers::support::{iterate_status, relative_step, stopping_status};
/// use contactbench::solvers::{
///     Algorithm, ContactSolver, Shell, SolveCall, SolveReport, SolveStatus, SolverError,
///     SolverSettings,
/// };
/// use nalgebra::{DMatrix, DVector};
///
/// /// Projected gradient with a fixed step `t`.
/// struct ProjectedGradient {
///     step: f64,
/// }
///
/// impl Algorithm for ProjectedGradient {
///     fn solve(&mut self, call: SolveCall<'_>) -> Result<SolveReport, SolverError> {
///         let (p, settings) = (call.problem, call.settings);
///         let mut lambda = call.initial_forces();
///         for k in 1..=settings.max_iter {
///             let previous = lambda.clone();
///             let c = p.velocity(&lambda);
///             for i in 0..p.num_contacts() {
///                 let trial = contact_vector(&lambda, i) - contact_vector(&c, i) * self.step;
///                 let projected = cones::project_ice_cream(p.mu_of(i), &trial);
///                 set_contact_vector(&mut lambda, i, &projected);
///             }
///             // NaN → NumericalError, a runaway iterate → Diverged.
///             if let Some(status) = iterate_status(&lambda, k, "forces") {
///                 return Ok(call.finish(previous, status, k, None));
///             }
///             // The built-in solvers' stopping test on the model's criteria.
///             let criteria =
///                 model_criteria(call.model, p, &lambda, &p.velocity(&lambda));
///             let moved = relative_step(&lambda, &previous);
///             if let Some(status) = stopping_status(&criteria, moved, settings, k, call.start) {
///                 return Ok(call.finish(lambda, status, k, None));
///             }
///         }
///         Ok(call.finish(lambda, SolveStatus::MaxIterations, settings.max_iter, None))
///     }
/// }
///
/// let mut solver = Shell::wrap(
///     "projected-gradient",
///     ContactModel::Ccp,
///     SolverSettings::default(),
///     ProjectedGradient { step: 0.5 },
/// )?;
/// // One contact pressed into the ground and sliding (G = I, μ = 0.3).
/// let problem = ContactProblem::new(
///     DMatrix::identity(3, 3),
///     DVector::from_vec(vec![0.5, 0.0, -1.0]),
///     DVector::from_vec(vec![0.3]),
///     None,
/// )?;
/// let report = solver.solve(&problem, None)?;
/// assert!(report.status.is_converged(), "{}", report.status);
/// // Judged by the metrics module, as every solver is.
/// let judged = model_criteria(ContactModel::Ccp, &problem, &report.lambda, &report.velocity);
/// assert!(judged.relative <= 1e-6);
/// // Sliding: the force is on the cone's boundary, |λ_T| = μ λ_N.
/// let (lt, ln) = (report.lambda[0].hypot(report.lambda[1]), report.lambda[2]);
/// assert!((lt - 0.3 * ln).abs() <= 1e-5 * ln);
/// // The shell validates settings: an invalid change is refused and the old ones kept.
/// let bad = SolverSettings { max_iter: 0, ..SolverSettings::default() };
/// assert!(solver.set_settings(bad).is_err());
/// assert_eq!(solver.settings().max_iter, 1000);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// To run such a solver in scenarios, sweeps, batches and the paper's experiments, give
/// the runners a [`crate::simulation::UserSolver`] that builds it. A type may also
/// implement this trait directly (wrappers do); [`solve_checked`] and
/// [`support::replace_settings`] are then the shell's frame and settings check.
pub trait ContactSolver: Send {
    /// The solver's name (`ncp-admm`, or a user's own).
    fn name(&self) -> &str;
    /// The contact model it solves.
    fn model(&self) -> ContactModel;
    /// Its shared settings.
    fn settings(&self) -> &SolverSettings;
    /// Replaces its shared settings between solves. They are validated first
    /// ([`SolverSettings::validate`]); an invalid value is refused and the solver keeps
    /// its settings. [`support::replace_settings`] does exactly this.
    fn set_settings(&mut self, settings: SolverSettings) -> Result<(), SolverError>;
    /// Solves `problem`, starting from `warm_start` when given (a `3n` vector of forces).
    /// Errors only on input that does not fit the problem; non-convergence is a status.
    fn solve(
        &mut self,
        problem: &ContactProblem,
        warm_start: Option<&DVector<f64>>,
    ) -> Result<SolveReport, SolverError>;
    /// Forgets what was kept from previous solves (ρ, factorizations).
    fn reset(&mut self) {}
}

/// The built-in solvers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SolverId {
    /// LCP, projected Gauss-Seidel (Alg. 1).
    LcpPgs,
    /// LCP, exact QP on the pyramid (interior point).
    LcpQp,
    /// LCP, staggered projections.
    LcpStagproj,
    /// CCP, per-contact PGS (Alg. 2).
    CcpPgs,
    /// CCP, ADMM with adaptive ρ (Alg. 3).
    CcpAdmm,
    /// Soft CCP, MuJoCo's primal Newton.
    CcpNewton,
    /// CCP, interior point on the SOCP (Clarabel).
    CcpIpm,
    /// RaiSim's per-contact bisection (Alg. 4).
    Raisim,
    /// RaiSim with the de Saxcé correction.
    RaisimCorrected,
    /// NCP, PGS with horizontal projection (Alg. 5).
    NcpPgs,
    /// NCP, staggered projections (Alg. 6).
    NcpStagproj,
    /// NCP, ADMM with de Saxcé correction and adaptive ρ.
    NcpAdmm,
}

impl SolverId {
    /// Every built-in solver, in the order of design.md §4.
    pub const ALL: [SolverId; 12] = [
        SolverId::LcpPgs,
        SolverId::LcpQp,
        SolverId::LcpStagproj,
        SolverId::CcpPgs,
        SolverId::CcpAdmm,
        SolverId::CcpNewton,
        SolverId::CcpIpm,
        SolverId::Raisim,
        SolverId::RaisimCorrected,
        SolverId::NcpPgs,
        SolverId::NcpStagproj,
        SolverId::NcpAdmm,
    ];

    /// The id as written in files and on the command line (from [`registry::REGISTRY`]).
    pub fn as_str(&self) -> &'static str {
        registry::entry(*self).name
    }

    /// The contact model it solves (from [`registry::REGISTRY`]).
    pub fn model(&self) -> ContactModel {
        registry::entry(*self).model
    }

    /// Builds the solver with the given settings and parameters (checked), with the
    /// constructor of its [`registry::REGISTRY`] row.
    pub fn build(
        &self,
        settings: SolverSettings,
        params: &Map<String, Value>,
    ) -> Result<Box<dyn ContactSolver>, SolverError> {
        settings.validate()?;
        (registry::entry(*self).build)(settings, params)
    }
}

impl fmt::Display for SolverId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SolverId {
    type Err = SolverError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SolverId::ALL
            .iter()
            .copied()
            .find(|id| id.as_str() == s.trim())
            .ok_or_else(|| SolverError::UnknownSolver(s.trim().to_string()))
    }
}

/// A solver named with its settings and parameters, as given on the command line
/// (`ncp-admm:eps_rel=1e-8,rho=1e-3`) or in a YAML/JSON map
/// (`{solver: ncp-admm, stop: absolute, eps_abs: 1e-8, rho: 1e-3}`).
#[derive(Debug, Clone, PartialEq)]
pub struct SolverSpec {
    /// Which solver.
    pub id: SolverId,
    /// Shared settings (defaults where not given).
    pub settings: SolverSettings,
    /// The solver's own parameters, checked by the solver when built.
    pub params: Map<String, Value>,
}

impl SolverSpec {
    /// Default settings and parameters for `id`.
    pub fn new(id: SolverId) -> Self {
        Self {
            id,
            settings: SolverSettings::default(),
            params: Map::new(),
        }
    }

    /// Reads a spec from a map with a `solver` key; shared settings are split from the
    /// solver's own parameters.
    pub fn from_map(mut map: Map<String, Value>) -> Result<Self, SolverError> {
        let id = match map.remove("solver") {
            Some(Value::String(s)) => s.parse::<SolverId>()?,
            Some(other) => {
                return Err(SolverError::InvalidSpec {
                    spec: other.to_string(),
                    message: "`solver` must be a solver name".into(),
                })
            }
            None => {
                return Err(SolverError::InvalidSpec {
                    spec: Value::Object(map).to_string(),
                    message: "missing `solver`".into(),
                })
            }
        };
        let mut shared = Map::new();
        for field in SolverSettings::FIELDS {
            if let Some(v) = map.remove(field) {
                shared.insert(field.to_string(), v);
            }
        }
        let given: Vec<String> = shared.keys().cloned().collect();
        let settings: SolverSettings =
            serde_json::from_value(Value::Object(shared)).map_err(|e| {
                SolverError::InvalidParameter {
                    solver: id.as_str().to_string(),
                    message: e.to_string(),
                }
            })?;
        settings.validate()?;
        check_unused_tolerance(&settings, given.iter().map(String::as_str))?;
        Ok(Self {
            id,
            settings,
            params: map,
        })
    }

    /// Builds the solver.
    pub fn build(&self) -> Result<Box<dyn ContactSolver>, SolverError> {
        self.id.build(self.settings.clone(), &self.params)
    }
}

impl SolverSpec {
    /// The map of a solver text, `id` or `id:key=value,key=value` (`solver` holds the id;
    /// values are read as JSON, numbers and booleans, and otherwise kept as strings), for
    /// [`SolverSpec::from_map`] as is or with more settings on top.
    pub fn text_map(s: &str) -> Result<Map<String, Value>, SolverError> {
        let (id, rest) = s.split_once(':').unwrap_or((s, ""));
        let mut map = Map::new();
        map.insert("solver".into(), Value::String(id.trim().to_string()));
        for item in rest.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| SolverError::InvalidSpec {
                    spec: s.to_string(),
                    message: format!("'{item}' is not key=value"),
                })?;
            let value = serde_json::from_str::<Value>(value.trim())
                .unwrap_or_else(|_| Value::String(value.trim().to_string()));
            map.insert(key.trim().to_string(), value);
        }
        Ok(map)
    }
}

impl FromStr for SolverSpec {
    type Err = SolverError;
    /// `id` or `id:key=value,key=value` ([`SolverSpec::text_map`]).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SolverSpec::from_map(SolverSpec::text_map(s)?)
    }
}

/// Refuses a tolerance given for the criterion that is not in use (`eps_abs` with
/// `stop: relative`, `eps_rel` with `stop: absolute`): it would be silently ignored.
/// `given` names the settings that were written (in a file, a spec or a flag).
pub fn check_unused_tolerance<'a>(
    settings: &SolverSettings,
    given: impl IntoIterator<Item = &'a str>,
) -> Result<(), SolverError> {
    let unused = match settings.stop {
        Criterion::Relative => Criterion::Absolute,
        Criterion::Absolute => Criterion::Relative,
    };
    let field = unused.tolerance_field();
    if given.into_iter().any(|g| g == field) {
        return Err(SolverError::InvalidSetting {
            field: field.to_string(),
            value: format!(
                "{:e}",
                match unused {
                    Criterion::Relative => settings.eps_rel,
                    Criterion::Absolute => settings.eps_abs,
                }
            ),
            reason: format!(
                "is the tolerance of stop: {unused}, but this solver stops on the {} \
                 criterion (stop: {}{}): set {} instead, or stop: {unused}",
                settings.stop,
                settings.stop,
                if settings.stop == Criterion::default() {
                    ", the default"
                } else {
                    ""
                },
                settings.stop.tolerance_field()
            ),
        });
    }
    Ok(())
}

/// Reads a solver's own parameters from a map, refusing unknown keys.
pub fn parse_params<P: DeserializeOwned>(
    solver: &str,
    params: &Map<String, Value>,
) -> Result<P, SolverError> {
    serde_json::from_value(Value::Object(params.clone())).map_err(|e| {
        SolverError::InvalidParameter {
            solver: solver.to_string(),
            message: e.to_string(),
        }
    })
}
