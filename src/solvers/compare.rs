//! Runs a list of solvers on one problem and measures every answer with the same metrics
//! (design.md §5). Used by `contactbench solve`, the examples and the simulation; a
//! user's own [`ContactSolver`] goes through the same path as the built-in ones.

use std::fmt::Write as _;

use nalgebra::DVector;
use serde::Serialize;
use serde_json::Map;

use super::{
    ContactSolver, Criterion, SolveReport, SolveStatus, SolverError, SolverId, SolverSettings,
};
use crate::metrics::{compute_model_metrics, Criteria, ProblemMetrics};
use crate::problem::{ContactModel, ContactProblem};

/// One solver's answer and its metrics.
#[derive(Debug, Clone, Serialize)]
pub struct SolvedRun {
    /// How the solve ended (`status`, and `iteration` / `what` when the status has them).
    #[serde(flatten)]
    pub status: SolveStatus,
    /// Iterations performed.
    pub iterations: usize,
    /// Wall time of the solve (s).
    #[serde(rename = "solve_time_s")]
    pub solve_time: f64,
    /// The criterion the solver tested (`relative` or `absolute`).
    pub criterion: Criterion,
    /// Its value at the answer, for the solver's own model.
    pub residual: f64,
    /// Both criteria of the solver's own model at the answer.
    pub criteria: Criteria,
    /// Forces `λ` (`3n`, `[t1, t2, n]` per contact).
    pub lambda: Vec<f64>,
    /// Contact velocity `c = (G + R) λ + g` (`3n`).
    pub c: Vec<f64>,
    /// Every metric of the answer, under the names of design.md §5.
    pub metrics: ProblemMetrics,
    /// The tested criterion per iteration, when recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<Vec<f64>>,
    /// The times of repeated solves from the same start (s), when the solve was repeated
    /// ([`compare_repeated`]); `solve_time` is then their median.
    #[serde(
        rename = "solve_time_spread_s",
        skip_serializing_if = "Option::is_none"
    )]
    pub solve_time_spread: Option<TimeSpread>,
}

impl SolvedRun {
    /// The report of a solve of `problem` by a solver of `model`, with every metric of its
    /// answer.
    pub fn from_report(problem: &ContactProblem, model: ContactModel, report: SolveReport) -> Self {
        let metrics = compute_model_metrics(problem, &report.lambda, model);
        SolvedRun {
            status: report.status,
            iterations: report.iterations,
            solve_time: report.solve_time.as_secs_f64(),
            criterion: report.criterion,
            residual: report.residual,
            criteria: report.criteria,
            lambda: report.lambda.iter().copied().collect(),
            c: report.velocity.iter().copied().collect(),
            metrics,
            history: report.history,
            solve_time_spread: None,
        }
    }
}

/// What happened to one solver.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum RunOutcome {
    /// It ran (converged or not: see the status).
    Solved(Box<SolvedRun>),
    /// It could not be built or refused the input.
    Error {
        /// Why.
        error: String,
    },
}

/// One row of a comparison.
#[derive(Debug, Clone, Serialize)]
pub struct SolverRun {
    /// The solver's name.
    pub solver: String,
    /// The model it solves, when it could be built.
    pub model: Option<ContactModel>,
    /// Its answer or its error.
    #[serde(flatten)]
    pub outcome: RunOutcome,
}

impl SolverRun {
    /// The answer, if the solver ran.
    pub fn solved(&self) -> Option<&SolvedRun> {
        match &self.outcome {
            RunOutcome::Solved(run) => Some(run),
            RunOutcome::Error { .. } => None,
        }
    }
}

/// A solver to compare, or the error that prevented building it.
pub type Candidate = (String, Result<Box<dyn ContactSolver>, SolverError>);

/// Every built-in solver of [`SolverId::ALL`] with the given settings and default
/// parameters.
pub fn builtin_solvers(settings: &SolverSettings) -> Vec<Candidate> {
    SolverId::ALL
        .iter()
        .map(|id| (id.to_string(), id.build(settings.clone(), &Map::new())))
        .collect()
}

/// Solves `problem` with `solver` from `warm_start` and measures the answer (every metric,
/// with the internal forces split for the solver's model).
pub fn run_solver(
    solver: &mut dyn ContactSolver,
    problem: &ContactProblem,
    warm_start: Option<&DVector<f64>>,
) -> SolverRun {
    let outcome = match solver.solve(problem, warm_start) {
        Ok(report) => RunOutcome::Solved(Box::new(SolvedRun::from_report(
            problem,
            solver.model(),
            report,
        ))),
        Err(err) => RunOutcome::Error {
            error: err.to_string(),
        },
    };
    SolverRun {
        solver: solver.name().to_string(),
        model: Some(solver.model()),
        outcome,
    }
}

/// Runs every candidate on `problem`; a candidate that failed to build or run is a row
/// with its error, and the others go on.
pub fn compare(
    candidates: Vec<Candidate>,
    problem: &ContactProblem,
    warm_start: Option<&DVector<f64>>,
) -> Vec<SolverRun> {
    candidates
        .into_iter()
        .map(|(name, built)| match built {
            Ok(mut solver) => run_solver(solver.as_mut(), problem, warm_start),
            Err(err) => SolverRun {
                solver: name,
                model: None,
                outcome: RunOutcome::Error {
                    error: err.to_string(),
                },
            },
        })
        .collect()
}

/// [`compare`] repeated: the first round's candidates give the answers, and every round's
/// times (each round a fresh set of the same solvers, from the same start) give each
/// solver's [`TimeSpread`], whose median becomes its `solve_time`. A solver that ran in
/// no round keeps its error.
pub fn compare_repeated(
    mut rounds: impl Iterator<Item = Vec<Candidate>>,
    problem: &ContactProblem,
    warm_start: Option<&DVector<f64>>,
) -> Vec<SolverRun> {
    let Some(first) = rounds.next() else {
        return Vec::new();
    };
    let mut runs = compare(first, problem, warm_start);
    let mut times: Vec<Vec<f64>> = runs.iter().map(|r| solve_times(r).collect()).collect();
    for round in rounds {
        for (k, again) in compare(round, problem, warm_start).iter().enumerate() {
            if let Some(t) = times.get_mut(k) {
                t.extend(solve_times(again));
            }
        }
    }
    for (run, t) in runs.iter_mut().zip(&times) {
        // One solve has no spread: the field stays empty, as for `compare`.
        let spread = TimeSpread::of(t).filter(|s| s.samples > 1);
        if let (RunOutcome::Solved(solved), Some(spread)) = (&mut run.outcome, spread) {
            solved.solve_time = spread.median;
            solved.solve_time_spread = Some(spread);
        }
    }
    runs
}

/// The wall time of a solve, when the solver ran.
fn solve_times(run: &SolverRun) -> impl Iterator<Item = f64> + '_ {
    run.solved().map(|s| s.solve_time).into_iter()
}

/// The median and the extremes of a solver's times over repeated solves (s).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TimeSpread {
    /// The median time.
    pub median: f64,
    /// The fastest.
    pub min: f64,
    /// The slowest.
    pub max: f64,
    /// How many solves.
    pub samples: usize,
}

impl TimeSpread {
    /// The spread of `times`; `None` for no times.
    pub fn of(times: &[f64]) -> Option<Self> {
        let mut sorted = times.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = match n {
            0 => return None,
            _ if n % 2 == 1 => sorted[n / 2],
            _ => 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]),
        };
        Some(Self {
            median,
            min: sorted[0],
            max: sorted[n - 1],
            samples: n,
        })
    }
}

/// A plain-text table of a comparison: status, iterations, time, the solver's own
/// criteria (relative, absolute) and the common metrics per solver.
pub fn comparison_table(runs: &[SolverRun]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<18} {:<7} {:<24} {:>6} {:>11} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "solver",
        "model",
        "status",
        "iters",
        "time",
        "own_rel",
        "own_abs",
        "ncp_rel",
        "ncp",
        "ccp",
        "lcp",
        "signorini",
        "mdp",
        "spurious"
    );
    for run in runs {
        let model = run.model.map_or("-".to_string(), model_name);
        match &run.outcome {
            RunOutcome::Solved(r) => {
                let m = &r.metrics;
                let status = r.status.to_string();
                let _ = writeln!(
                    out,
                    "{:<18} {:<7} {:<24} {:>6} {:>11} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
                    run.solver,
                    model,
                    truncate(&status, 24),
                    r.iterations,
                    format_duration(r.solve_time),
                    sci(r.criteria.relative),
                    sci(r.criteria.absolute),
                    sci(m.relative_criterion),
                    sci(m.ncp_criterion),
                    sci(m.ccp_residual),
                    sci(m.lcp_residual),
                    sci(m.signorini_violation
                        .complementarity
                        .max(m.signorini_violation.penetration_velocity)),
                    sci(m.mdp_violation),
                    m.internal_forces_spurious.map_or("-".to_string(), sci),
                );
            }
            RunOutcome::Error { error } => {
                let _ = writeln!(out, "{:<18} {:<7} error: {error}", run.solver, model);
            }
        }
    }
    out.push_str(COMPARISON_LEGEND);
    out
}

/// What the columns of [`comparison_table`] hold, with their units (docs/ruler.md).
pub const COMPARISON_LEGEND: &str = "
iters: iterations; time: wall time of the solve. Criteria at the answer, worst contact:
  own_rel, own_abs  the solver's own model's relative (dimensionless) and absolute criteria
  ncp_rel           the relative NCP criterion r, the ruler (dimensionless)
  ncp, ccp, lcp     each model's absolute criterion, max(eps_p N s, eps_d m/s, eps_c N s m/s)
  signorini         max(max(0, -c_N) m/s, |lambda_N c_N| N s m/s)
  mdp               maximum-dissipation violation of a sliding contact (N s; 0: none slides)
  spurious          internal force the solver injected (N s; -: no J or no split)
";

/// A number in the table: three significant digits, an exact zero as `0` (never
/// `-0.00e0`).
fn sci(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else {
        format!("{x:.2e}")
    }
}

/// The model's name as in files (`lcp`, `ccp`, `raisim`, `ncp`).
pub fn model_name(model: ContactModel) -> String {
    match model {
        ContactModel::Lcp => "lcp",
        ContactModel::Ccp => "ccp",
        ContactModel::Raisim => "raisim",
        ContactModel::Ncp => "ncp",
    }
    .to_string()
}

/// A duration in seconds as µs, ms or s.
pub fn format_duration(seconds: f64) -> String {
    if seconds < 1e-3 {
        format!("{:.1} µs", seconds * 1e6)
    } else if seconds < 1.0 {
        format!("{:.2} ms", seconds * 1e3)
    } else {
        format!("{seconds:.2} s")
    }
}

fn truncate(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_string()
    } else {
        let mut t: String = text.chars().take(width.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}
