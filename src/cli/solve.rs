//! `contactbench solve PROBLEM.json --solver SPEC [--stop relative|absolute] [--eps-rel X]
//! [--eps-abs X] [--eps-step X] [--max-iter N] [--max-time S] [--warm-start LAMBDA.json]
//! [--all] [--json] [--derivatives [--derivatives-delassus]]`: solve a problem file with
//! one solver (or every built-in one) and print the answer with every metric, and on
//! request the derivative of the answer (`∂λ/∂g`, and `∂λ/∂G`), docs/derivatives.md.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use super::common::{user_factory, user_solver_names, user_solvers, warn_if_debug_build};
use super::hints::hint;
use super::out::out;
use anyhow::{bail, Context};
use contactbench::derivatives::{differentiate, DerivativeError, DerivativeSettings};
use contactbench::problem::io::{read_lambda, read_problem};
use contactbench::problem::ContactProblem;
use contactbench::simulation::SolverFactory;
use contactbench::solvers::compare::{
    builtin_solvers, compare_repeated, comparison_table, format_duration, model_name, Candidate,
    RunOutcome, SolvedRun, SolverRun, TimeSpread,
};
use contactbench::solvers::{check_unused_tolerance, Criterion, SolverSettings, SolverSpec};
use serde_json::{json, Map, Value};

/// Arguments of `contactbench solve`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The problem file: our JSON (`G`, `g`, `mu`, optional `R`, `lambda`, `solver`), an
    /// FCLIB problem (HDF5, local or global) or a numpy `.npz` (`G`, `g`, `mus`).
    problem: PathBuf,
    /// Solver and settings, e.g. `ncp-pgs` or `raisim:alpha=0.5,eps_rel=1e-8`. Defaults
    /// to the file's `solver` entry.
    #[arg(long, conflicts_with = "all")]
    solver: Option<String>,
    /// The criterion that stops the solvers: `relative` (the default) or `absolute`
    /// (overrides the spec).
    #[arg(long)]
    stop: Option<String>,
    /// Tolerance of the relative criterion (dimensionless; overrides the spec).
    #[arg(long)]
    eps_rel: Option<f64>,
    /// Tolerance of the absolute criterion (needs `--stop absolute` unless the spec has
    /// it; overrides the spec).
    #[arg(long)]
    eps_abs: Option<f64>,
    /// Stall threshold on the relative step (overrides the spec).
    #[arg(long)]
    eps_step: Option<f64>,
    /// Iteration cap (overrides the spec).
    #[arg(long)]
    max_iter: Option<usize>,
    /// Wall-time cap per solve, in seconds (overrides the spec).
    #[arg(long)]
    max_time: Option<f64>,
    /// Initial forces: a JSON array of 3n numbers or an object with `lambda`.
    #[arg(long)]
    warm_start: Option<PathBuf>,
    /// Run every built-in solver (and the user's own, in a `contactbench` built with
    /// `cli::main_with`) and print a comparison table with its legend.
    #[arg(long)]
    all: bool,
    /// Solve N times, each with a fresh solver from the same start: the times printed are
    /// the median of the N, with their spread (min and max); the answer is the first.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    repeat: u32,
    /// Print the result (per solver: lambda, c, status, metrics) as JSON on stdout instead
    /// of text; it is a valid `--warm-start` file (with --all: the converged answer with
    /// the smallest relative criterion, when one converged).
    #[arg(long)]
    json: bool,
    /// Also differentiate the answer (implicit differentiation of its model's conditions,
    /// each contact's mode decided from the answer): `∂λ/∂g` (`3n × 3n`) with the modes,
    /// or the reason there is no derivative. One solver only.
    #[arg(long, conflicts_with = "all")]
    derivatives: bool,
    /// With --derivatives, also `∂λ/∂G` with respect to each entry of `G` (`3n × 9n²`,
    /// column `j + 3n k` for `G_jk`); at most 50 contacts.
    #[arg(long, requires = "derivatives")]
    derivatives_delassus: bool,
}

/// Most contacts of a `--derivatives-delassus` Jacobian (`3n × 9n²` entries).
const MAX_DELASSUS_JACOBIAN_CONTACTS: usize = 50;

/// The derivative of one answer as `solve` prints it.
#[derive(Debug, serde::Serialize)]
struct DerivativeOutput {
    /// Each contact's mode (`take_off`, `stick`, `slide`) and, on a mode boundary, the
    /// other mode (the derivative is then the one-sided derivative of `mode`).
    modes: Vec<contactbench::derivatives::ModeReport>,
    /// How the linearized conditions were solved.
    method: contactbench::derivatives::LinearMethod,
    /// Their `(rank, dimension)`.
    rank: (usize, usize),
    /// The relative tolerance of the mode decisions.
    mode_tolerance: f64,
    /// Wall time of the derivative and of `∂λ/∂g` (s).
    derivative_time_s: f64,
    /// `∂λ/∂g`, row-major (`3n` rows of `3n`).
    dlambda_dg: Vec<Vec<f64>>,
    /// `∂λ/∂G`, row-major (`3n` rows of `9n²`), when asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    dlambda_d_delassus: Option<Vec<Vec<f64>>>,
}

/// The derivative of the solve `run` of `problem` (none when the solver did not run).
fn derivative_of(
    problem: &ContactProblem,
    run: &SolverRun,
    delassus: bool,
) -> Option<Result<DerivativeOutput, DerivativeError>> {
    let (solved, model) = (run.solved()?, run.model?);
    Some((|| {
        if !solved.status.is_converged() {
            return Err(DerivativeError::NotConverged {
                status: solved.status.to_string(),
            });
        }
        let start = std::time::Instant::now();
        let lambda = nalgebra::DVector::from_column_slice(&solved.lambda);
        let derivative = differentiate(problem, model, &lambda, &DerivativeSettings::default())?;
        let dg = derivative.jacobian_free_velocity()?;
        let derivative_time_s = start.elapsed().as_secs_f64();
        let rows = |m: &nalgebra::DMatrix<f64>| {
            m.row_iter()
                .map(|r| r.iter().copied().collect())
                .collect::<Vec<Vec<f64>>>()
        };
        let dlambda_d_delassus = if delassus {
            Some(rows(&derivative.jacobian_delassus()?))
        } else {
            None
        };
        Ok(DerivativeOutput {
            modes: derivative.modes().to_vec(),
            method: derivative.method(),
            rank: derivative.rank(),
            mode_tolerance: derivative.tolerance(),
            derivative_time_s,
            dlambda_dg: rows(&dg),
            dlambda_d_delassus,
        })
    })())
}

/// Runs the command. Exit code 0 when every solver that was asked for converged (with
/// `--all`, when the problem could be solved at all); 1 when one ran and did not (a
/// result, like a failed run); 2 for bad input: a solver that could not be built or
/// refused the input, and every error of the error path (`common::exit_code`).
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let file = read_problem(&args.problem)?;
    for note in &file.notes {
        eprintln!("{}: {note}", args.problem.display());
    }
    // What validation changed or tolerated (a symmetrized G, a round-off eigenvalue).
    for note in file.problem.validation_notes() {
        eprintln!("{}: {note}", args.problem.display());
    }
    let problem = file.problem;
    let warm_start = match &args.warm_start {
        Some(path) => {
            let lambda = read_lambda(path)?;
            problem
                .check_lambda(&lambda)
                .with_context(|| format!("warm start {}", path.display()))?;
            Some(lambda)
        }
        None => None,
    };
    if args.derivatives_delassus && problem.num_contacts() > MAX_DELASSUS_JACOBIAN_CONTACTS {
        bail!(
            "--derivatives-delassus: {} contacts, at most {MAX_DELASSUS_JACOBIAN_CONTACTS} \
             (the Jacobian has 3n x 9n^2 entries); use the library's products instead",
            problem.num_contacts()
        );
    }
    warn_if_debug_build("solve");
    let problem_solver = file.solver.clone();
    let make_candidates =
        || -> anyhow::Result<Vec<Candidate>> { candidates(&args, problem_solver.clone()) };
    // The same arguments build the same solvers: the first round's errors are the user's,
    // and a later round cannot fail where the first succeeded.
    let first = make_candidates()?;
    let rounds = std::iter::once(first)
        .chain((1..args.repeat).map(|_| make_candidates().unwrap_or_default()));
    let runs = compare_repeated(rounds, &problem, warm_start.as_ref());
    let derivative = if args.derivatives {
        runs.first()
            .and_then(|run| derivative_of(&problem, run, args.derivatives_delassus))
    } else {
        None
    };
    let derivative_failed = matches!(derivative, Some(Err(_)));
    let text = if args.json {
        let mut value = json!({
            "problem": args.problem.display().to_string(),
            "contacts": problem.num_contacts(),
            "validation_notes": problem.validation_notes(),
            "solvers": runs,
        });
        // One answer also at the top level, as `lambda`: the file is then a valid
        // `--warm-start` for the next solve (an object with a `lambda` array). With
        // --all, the converged answer with the smallest relative criterion, named.
        if let ([run], false) = (runs.as_slice(), args.all) {
            if let Some(solved) = run.solved() {
                value["lambda"] = json!(solved.lambda);
            }
        } else if let Some((run, solved)) = best_converged(&runs) {
            value["lambda"] = json!(solved.lambda);
            value["lambda_solver"] = json!(run.solver);
        }
        if args.repeat > 1 {
            value["repeat"] = json!(args.repeat);
        }
        match &derivative {
            Some(Ok(d)) => value["derivatives"] = serde_json::to_value(d)?,
            Some(Err(e)) => value["derivatives"] = json!({ "error": e.to_string() }),
            None => {}
        }
        serde_json::to_string_pretty(&value)? + "\n"
    } else if args.all {
        format!(
            "{}: {} contacts\n\n{}",
            args.problem.display(),
            problem.num_contacts(),
            comparison_table(&runs)
        )
    } else {
        let mut text: String = runs
            .iter()
            .map(|run| describe(&args.problem, problem.num_contacts(), run))
            .collect();
        match &derivative {
            Some(Ok(d)) => text.push_str(&describe_derivative(d)),
            Some(Err(e)) => {
                let _ = writeln!(text, "\nderivatives: none: {e}");
            }
            None => {}
        }
        text
    };
    out!("{text}");
    if args.repeat > 1 && !args.json {
        out!("{}", spread_lines(&runs));
    }
    let all_converged = runs
        .iter()
        .all(|r| r.solved().is_some_and(|s| s.status.is_converged()));
    // A solver that could not be built or refused the input (an unknown parameter, an
    // invalid value) is an input error, as in every command.
    let refused = runs.iter().any(|r| r.solved().is_none());
    Ok(if derivative_failed && all_converged {
        ExitCode::FAILURE
    } else if args.all || all_converged {
        ExitCode::SUCCESS
    } else if refused {
        ExitCode::from(2)
    } else {
        ExitCode::FAILURE
    })
}

/// The solvers to run: every built-in one and the user's (`--all`), the `--solver` one,
/// or the problem file's, each with the setting flags applied.
fn candidates(
    args: &Args,
    file_solver: Option<Map<String, Value>>,
) -> anyhow::Result<Vec<Candidate>> {
    Ok(if args.all {
        let mut settings = SolverSettings::default();
        override_settings(&mut settings, args)?;
        settings.validate()?;
        let mut candidates = builtin_solvers(&settings);
        for user in user_solvers() {
            let mut own = user.settings().clone();
            override_settings(&mut own, args)?;
            candidates.push((user.name(), user.with_settings(own).build()));
        }
        candidates
    } else if let Some(user) = args.solver.as_deref().and_then(user_factory) {
        let user = user?;
        let mut settings = user.settings().clone();
        override_settings(&mut settings, args)?;
        vec![(user.name(), user.with_settings(settings).build())]
    } else {
        let mut spec = match (&args.solver, file_solver) {
            (Some(text), _) => text.parse::<SolverSpec>()?,
            (None, Some(map)) => SolverSpec::from_map(map)
                .with_context(|| format!("{}: solver", args.problem.display()))?,
            (None, None) => bail!(
                "no solver: give --solver SPEC or --all (or a `solver` entry in {})",
                args.problem.display()
            ),
        };
        override_settings(&mut spec.settings, args)?;
        vec![(spec.id.to_string(), spec.build())]
    })
}

/// Each solver's median time over the `--repeat` solves, with their extremes.
fn spread_lines(runs: &[SolverRun]) -> String {
    let spreads: Vec<(&str, TimeSpread)> = runs
        .iter()
        .filter_map(|run| Some((run.solver.as_str(), run.solved()?.solve_time_spread?)))
        .collect();
    let mut out = String::new();
    if let Some(n) = spreads.iter().map(|(_, s)| s.samples).max() {
        let _ = writeln!(
            out,
            "\ntime of {n} solves from the same start, median (min - max):"
        );
    }
    for (solver, s) in spreads {
        let _ = writeln!(
            out,
            "  {:<18} {} ({} - {})",
            solver,
            format_duration(s.median),
            format_duration(s.min),
            format_duration(s.max)
        );
    }
    out
}

/// The converged answer with the smallest relative criterion, if any solver converged.
fn best_converged(runs: &[SolverRun]) -> Option<(&SolverRun, &SolvedRun)> {
    runs.iter()
        .filter_map(|run| Some((run, run.solved()?)))
        .filter(|(_, solved)| solved.status.is_converged())
        .min_by(|a, b| a.1.criteria.relative.total_cmp(&b.1.criteria.relative))
}

/// Applies the setting flags; refuses a tolerance flag for the criterion not in use, and
/// a `--stop` that would leave the spec's own tolerance of the other criterion unused.
fn override_settings(settings: &mut SolverSettings, args: &Args) -> anyhow::Result<()> {
    let before = settings.clone();
    let mut given = Vec::new();
    if let Some(stop) = &args.stop {
        settings.stop = stop.parse::<Criterion>()?;
        given.push("stop");
    }
    let flags = [
        ("eps_rel", args.eps_rel, &mut settings.eps_rel),
        ("eps_abs", args.eps_abs, &mut settings.eps_abs),
        ("eps_step", args.eps_step, &mut settings.eps_step),
    ];
    for (field, flag, value) in flags {
        if let Some(v) = flag {
            *value = v;
            given.push(field);
        }
    }
    if let Some(max_iter) = args.max_iter {
        settings.max_iter = max_iter;
    }
    if let Some(max_time) = args.max_time {
        settings.max_time = Some(max_time);
    }
    check_unused_tolerance(settings, given.iter().copied())?;
    if settings.stop != before.stop {
        let default = SolverSettings::default();
        let left = match settings.stop {
            Criterion::Relative => (before.eps_abs != default.eps_abs).then_some("eps_abs"),
            Criterion::Absolute => (before.eps_rel != default.eps_rel).then_some("eps_rel"),
        };
        if let Some(field) = left.filter(|f| !given.contains(f)) {
            bail!(
                "--stop {} leaves the solver's own {field} unused: give --{} too",
                settings.stop,
                settings.stop.tolerance_field().replace('_', "-")
            );
        }
    }
    Ok(())
}

/// The human-readable derivative: modes, method, then `∂λ/∂g` (and `∂λ/∂G`'s size).
fn describe_derivative(d: &DerivativeOutput) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nderivatives: {:?} of rank {} of {}, mode tolerance {:.1e}, {}",
        d.method,
        d.rank.0,
        d.rank.1,
        d.mode_tolerance,
        format_duration(d.derivative_time_s)
    );
    for (i, m) in d.modes.iter().enumerate() {
        let boundary = m.boundary_with.map_or(String::new(), |o| {
            format!(" (on the boundary with {})", o.as_str())
        });
        let _ = writeln!(out, "  contact {i}: {}{boundary}", m.mode.as_str());
    }
    let _ = writeln!(out, "dlambda/dg (rows lambda, columns g):");
    for row in &d.dlambda_dg {
        let cells: Vec<String> = row.iter().map(|x| format!("{x:>11.4e}")).collect();
        let _ = writeln!(out, "  {}", cells.join(" "));
    }
    if let Some(g) = &d.dlambda_d_delassus {
        let columns = g.first().map_or(0, Vec::len);
        let _ = writeln!(
            out,
            "dlambda/dG: {} x {columns} (column j + 3n k for G_jk; in --json)",
            g.len()
        );
    }
    out
}

/// The human-readable report of one solver: result, then every metric.
fn describe(path: &std::path::Path, contacts: usize, run: &SolverRun) -> String {
    let mut out = String::new();
    let model = run.model.map_or("-".to_string(), model_name);
    let _ = writeln!(out, "problem: {} ({contacts} contacts)", path.display());
    let _ = writeln!(out, "solver:  {} (model {model})", run.solver);
    let r = match &run.outcome {
        RunOutcome::Solved(r) => r,
        RunOutcome::Error { error } => {
            let _ = writeln!(out, "error:   {error}");
            if let Some(hint) = hint(error, &user_solver_names()) {
                let _ = writeln!(out, "hint:    {hint}");
            }
            return out;
        }
    };
    let _ = writeln!(
        out,
        "status:  {} after {} iterations, {} ({} criterion of its model {:.3e}; \
         relative {:.3e}, absolute {:.3e})",
        r.status,
        r.iterations,
        format_duration(r.solve_time),
        r.criterion,
        r.residual,
        r.criteria.relative,
        r.criteria.absolute
    );
    let _ = writeln!(
        out,
        "\n{:>7} {:>12} {:>12} {:>12}   {:>12} {:>12} {:>12}",
        "contact", "lambda_t1", "lambda_t2", "lambda_n", "c_t1", "c_t2", "c_n"
    );
    for i in 0..contacts {
        let _ = writeln!(
            out,
            "{i:>7} {:>12.5e} {:>12.5e} {:>12.5e}   {:>12.5e} {:>12.5e} {:>12.5e}",
            unsigned_zero(r.lambda[3 * i]),
            unsigned_zero(r.lambda[3 * i + 1]),
            unsigned_zero(r.lambda[3 * i + 2]),
            unsigned_zero(r.c[3 * i]),
            unsigned_zero(r.c[3 * i + 1]),
            unsigned_zero(r.c[3 * i + 2])
        );
    }
    let m = &r.metrics;
    let _ = writeln!(out, "\nmetrics (worst contact):");
    let rows = [
        ("primal_feasibility (N s)", m.primal_feasibility),
        ("dual_feasibility (m/s)", m.dual_feasibility),
        ("complementarity (N s m/s)", m.complementarity),
        ("relative_criterion (NCP)", m.relative_criterion),
        ("ncp_criterion", m.ncp_criterion),
        ("ccp_residual", m.ccp_residual),
        ("lcp_residual", m.lcp_residual),
        ("raisim_residual", m.raisim_residual),
        (
            "signorini_violation |lambda_N c_N|",
            m.signorini_violation.complementarity,
        ),
        (
            "signorini_violation max(0, -c_N)",
            m.signorini_violation.penetration_velocity,
        ),
        ("mdp_violation", m.mdp_violation),
    ];
    for (name, value) in rows {
        let _ = writeln!(out, "  {name:<36} {:.3e}", unsigned_zero(value));
    }
    let _ = writeln!(out, "  {:<36} {}", "sliding contacts", m.sliding_contacts);
    let internal = match (
        m.internal_forces,
        m.internal_forces_required,
        m.internal_forces_spurious,
    ) {
        (None, _, _) => "- (no J in a problem file)".to_string(),
        (Some(total), Some(required), Some(spurious)) => {
            format!("{total:.3e} (required {required:.3e}, spurious {spurious:.3e})")
        }
        (Some(total), _, _) => format!("{total:.3e}"),
    };
    let _ = writeln!(out, "  {:<36} {internal}", "internal_forces (N s)");
    out
}

/// `x`, with a negative zero as `0` (printed `0.000e0`, not `-0.000e0`).
fn unsigned_zero(x: f64) -> f64 {
    if x == 0.0 {
        0.0
    } else {
        x
    }
}
