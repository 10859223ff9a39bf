//! `contactbench bench-problems DIR_OR_FILES… [--solver SPEC]… [--timeout S] [--max-iter N]
//! [--shard K/N] [--jobs N] [--out DIR]`: every problem file × solver, judged by one
//! ruler, with a performance profile (library: `contactbench::corpus`).

use std::path::PathBuf;
use std::process::ExitCode;

use super::out::outln;
use anyhow::Context;
use contactbench::corpus::report::{build_report, write_report, Judge, DEFAULT_CRITERION};
use contactbench::corpus::runner::{load_results, run_tasks, Budget};
use contactbench::corpus::tasks::{problem_files, tasks, Shard};
use contactbench::solvers::{SolverId, SolverSpec};

/// Arguments of `contactbench bench-problems`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Problem files (JSON, FCLIB .hdf5/.h5, numpy .npz) or directories of them.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Solver and settings (repeatable), e.g. `ncp-admm` or `raisim:alpha=0.5`. Default:
    /// every built-in solver.
    #[arg(long = "solver")]
    pub solvers: Vec<String>,
    /// Time limit of one solve (s): a longer solve counts as not solved.
    #[arg(long, default_value_t = 60.0)]
    pub timeout: f64,
    /// Iteration cap of every solve (replaces each specification's max_iter).
    #[arg(long)]
    pub max_iter: Option<usize>,
    /// A problem is solved when the criterion is at most this.
    #[arg(long, default_value_t = 1e-6)]
    pub tolerance: f64,
    /// The metric that judges (a field of the metrics; `ncp_criterion` is absolute).
    #[arg(long, default_value = DEFAULT_CRITERION)]
    pub criterion: String,
    /// Run only shard K of N (1 <= K <= N). Default: from SLURM_ARRAY_TASK_ID and
    /// SLURM_ARRAY_TASK_COUNT in a Slurm job array, else the whole list.
    #[arg(long)]
    pub shard: Option<String>,
    /// Worker threads (0: one per core). Use 1 for timings free of each other's load.
    #[arg(long, default_value_t = 0)]
    pub jobs: usize,
    /// Output directory: results/ (one file per task), and without sharding the report.
    #[arg(long, default_value = "bench-problems")]
    pub out: PathBuf,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        args.timeout.is_finite() && args.timeout > 0.0,
        "--timeout must be a positive number of seconds"
    );
    let solvers = if args.solvers.is_empty() {
        SolverId::ALL.iter().map(|id| id.to_string()).collect()
    } else {
        args.solvers.clone()
    };
    for text in &solvers {
        text.parse::<SolverSpec>()
            .and_then(|spec| spec.build().map(|_| ()))
            .with_context(|| format!("--solver {text}"))?;
    }
    let shard = match &args.shard {
        Some(text) => Shard::parse(text)?,
        None => Shard::from_slurm(|name| std::env::var(name).ok())?.unwrap_or(Shard::ALL),
    };
    let problems = problem_files(&args.inputs)?;
    let all = tasks(&problems, &solvers);
    let total = all.len();
    let mine = shard.select(all);
    eprintln!(
        "{} problems × {} solvers = {total} tasks; shard {}/{}: {} tasks",
        problems.len(),
        solvers.len(),
        shard.index,
        shard.count,
        mine.len()
    );
    let budget = Budget {
        max_iter: args.max_iter,
        timeout: args.timeout,
    };
    let progress = |r: &contactbench::corpus::runner::TaskResult| {
        eprintln!(
            "  {} / {}: {}",
            r.problem,
            r.solver,
            r.error.as_deref().unwrap_or(&r.status)
        );
    };
    let summary = run_tasks(&mine, budget, &args.out, args.jobs, &progress)?;
    eprintln!(
        "ran {} tasks, {} already done; results in {}",
        summary.ran,
        summary.skipped,
        args.out.join("results").display()
    );
    if shard.count > 1 {
        eprintln!(
            "sharded run: `contactbench merge {}` writes the report",
            args.out.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let judge = Judge {
        criterion: args.criterion,
        tolerance: args.tolerance,
    };
    let report = build_report(load_results(std::slice::from_ref(&args.out))?, &judge);
    write_report(&report, &args.out)?;
    outln!("{}", args.out.join("report.md").display());
    Ok(ExitCode::SUCCESS)
}
