//! `contactbench bench-problems DIR_OR_FILES… [--solver SPEC]… [--timeout S] [--max-iter N]
//! [--shard K/N] [--jobs N] [--out DIR]`: every problem file × solver, judged by one
//! ruler, with a performance profile (library: `contactbench::corpus`).

use std::path::PathBuf;
use std::process::ExitCode;

use super::common::{warn_if_debug_build, RepeatedErrors, UsageError};
use super::out::outln;
use anyhow::Context;
use contactbench::corpus::bench::{bench_problems, BenchOptions, ShardChoice};
use contactbench::corpus::report::{Judge, DEFAULT_CRITERION};
use contactbench::corpus::runner::{Budget, TaskResult};
use contactbench::corpus::tasks::{Shard, SlurmTask};
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
    /// Run only shard K of N (1 <= K <= N). Default: in a Slurm job array, the task's
    /// shard of the array that first wrote `--out` (recorded in its plan.json, so that
    /// re-submitting some ids runs their shards), else of this array; otherwise the
    /// whole list.
    #[arg(long)]
    pub shard: Option<String>,
    /// Worker threads (0: one per core). Use 1 for timings free of each other's load.
    #[arg(long, default_value_t = 0)]
    pub jobs: usize,
    /// Output directory (absent, empty, or an earlier bench-problems output, which is
    /// resumed): plan.json, results/ (one file per task) and, without sharding, the
    /// report; shards of one run may share it.
    #[arg(long, default_value = "results/bench-problems")]
    pub out: PathBuf,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        return Err(UsageError("--timeout must be a positive number of seconds".into()).into());
    }
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
        Some(text) => ShardChoice::Given(Shard::parse(text)?),
        None => match SlurmTask::from_env(|name| std::env::var(name).ok())? {
            Some(task) => ShardChoice::Slurm(task),
            None => ShardChoice::All,
        },
    };
    let options = BenchOptions {
        solvers,
        budget: Budget {
            max_iter: args.max_iter,
            timeout: args.timeout,
        },
        shard,
        threads: args.jobs,
        judge: Judge {
            criterion: args.criterion,
            tolerance: args.tolerance,
        },
    };
    warn_if_debug_build("bench-problems");
    let errors = RepeatedErrors::default();
    let progress = |r: &TaskResult| match &r.error {
        Some(error) if !errors.first_time(error) => {}
        Some(error) => eprintln!("  {} / {}: {error}", r.problem, r.solver),
        None => eprintln!("  {} / {}: {}", r.problem, r.solver, r.status),
    };
    let outcome = bench_problems(&args.inputs, &args.out, &options, &progress)?;
    errors.print_counts();
    eprintln!(
        "{} problems × {} solvers = {} tasks; shard {}/{}: {} tasks, {} run, {} already done; \
         results in {}",
        outcome.problems,
        options.solvers.len(),
        outcome.total,
        outcome.shard.index,
        outcome.shard.count,
        outcome.mine,
        outcome.summary.ran,
        outcome.summary.skipped,
        args.out.join("results").display()
    );
    match outcome.report {
        Some(report) => outln!("{}", report.display()),
        None => eprintln!(
            "sharded run: once every shard is done, `contactbench merge {}` writes the report",
            args.out.display()
        ),
    }
    Ok(ExitCode::SUCCESS)
}
