//! `contactbench merge DIR… [--out DIR] [--partial]`: joins the results of sharded runs
//! into one report: `bench-problems` outputs by their plan, `batch` shard outputs into
//! one results directory. Missing tasks or shards are listed and the command fails,
//! unless `--partial`.

use std::path::PathBuf;
use std::process::ExitCode;

use super::common::UsageError;
use super::out::outln;
use contactbench::corpus::bench::merge;
use contactbench::corpus::report::{Judge, DEFAULT_CRITERION};
use contactbench::corpus::CorpusError;

/// Arguments of `contactbench merge`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Output directories of the shards: of `bench-problems` (each with plan.json and
    /// results/; one shared directory when every shard wrote to the same --out), or of
    /// `batch --shard`.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Where to write the report: absent, empty or an output of contactbench (report
    /// files of the same names are replaced only when contactbench wrote them).
    /// Default for bench-problems outputs: the first directory. Required for batch shards
    /// (a new results directory).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write the report even when planned tasks or shards have no result (they count as
    /// not solved and the report lists them); without it, merge fails and writes nothing.
    #[arg(long)]
    pub partial: bool,
    /// A problem is solved when the criterion is at most this.
    #[arg(long, default_value_t = 1e-6)]
    pub tolerance: f64,
    /// The metric that judges (a field of the metrics; `ncp_criterion` is absolute).
    #[arg(long, default_value = DEFAULT_CRITERION)]
    pub criterion: String,
}

/// Runs the command: exit 1 when tasks or shards are missing (without `--partial`).
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if super::batch::is_shard_container(&args.dirs) {
        return super::batch::merge(&args.dirs, args.out.as_deref(), args.partial);
    }
    if args
        .dirs
        .iter()
        .any(|d| !d.join(contactbench::corpus::plan::PLAN).is_file())
    {
        return Err(UsageError(format!(
            "{}: not an output of bench-problems or batch --shard (no plan.json)",
            args.dirs
                .iter()
                .find(|d| !d.join(contactbench::corpus::plan::PLAN).is_file())
                .map_or_else(String::new, |d| d.display().to_string())
        ))
        .into());
    }
    let judge = Judge {
        criterion: args.criterion,
        tolerance: args.tolerance,
    };
    let outcome = merge(&args.dirs, args.out.as_deref(), &judge, args.partial)?;
    if !outcome.missing.is_empty() {
        eprintln!(
            "{} of {} planned tasks have no result ({}):",
            outcome.missing.len(),
            outcome.planned,
            outcome.missing_shards
        );
        for task in outcome.missing.iter().take(20) {
            eprintln!("  {task}");
        }
        if outcome.missing.len() > 20 {
            eprintln!("  … and {} more", outcome.missing.len() - 20);
        }
    }
    let Some((report, path)) = outcome.report else {
        return Err(CorpusError::Incomplete {
            missing: outcome.missing.len(),
            planned: outcome.planned,
            which: outcome.missing_shards,
        }
        .into());
    };
    eprintln!(
        "{} of {} planned results, {} problems × {} solvers{}",
        report.rows.len(),
        outcome.planned,
        report.problems.len(),
        report.solvers.len(),
        if report.missing.is_empty() {
            ""
        } else {
            " (partial)"
        }
    );
    outln!("{}", path.display());
    Ok(ExitCode::SUCCESS)
}
