//! `contactbench merge DIR… [--out DIR]`: joins the result files of sharded
//! `bench-problems` runs into one report.

use std::path::PathBuf;
use std::process::ExitCode;

use super::out::outln;
use contactbench::corpus::report::{build_report, write_report, Judge, DEFAULT_CRITERION};
use contactbench::corpus::runner::load_results;

/// Arguments of `contactbench merge`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Output directories of the shards (each with a results/ folder); one shared
    /// directory when every shard wrote to the same --out.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Where to write the report. Default: the first directory.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// A problem is solved when the criterion is at most this.
    #[arg(long, default_value_t = 1e-6)]
    pub tolerance: f64,
    /// The metric that judges (a field of the metrics; `ncp_criterion` is absolute).
    #[arg(long, default_value = DEFAULT_CRITERION)]
    pub criterion: String,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let results = load_results(&args.dirs)?;
    let count = results.len();
    let judge = Judge {
        criterion: args.criterion,
        tolerance: args.tolerance,
    };
    let report = build_report(results, &judge);
    let out = args.out.unwrap_or_else(|| args.dirs[0].clone());
    write_report(&report, &out)?;
    eprintln!(
        "{count} results, {} problems × {} solvers",
        report.problems.len(),
        report.solvers.len()
    );
    outln!("{}", out.join("report.md").display());
    Ok(ExitCode::SUCCESS)
}
