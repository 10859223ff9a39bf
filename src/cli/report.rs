//! `contactbench report`: plots (PNG and SVG) and a Markdown summary from a results
//! directory written by `run` or `batch`. The results are checked as they are read (a
//! manifest path outside the results, a missing or non-numeric file, a NaN: an error
//! naming the file); an earlier report is replaced only with `--force`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use contactbench::report::make_report_with;

use super::common::replace_policy;
use super::out::outln;

/// Arguments of `contactbench report`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A results directory (with `contactbench.json`), as written by `run` or `batch`.
    pub results: PathBuf,
    /// Replace an earlier `RESULTS/report/` written by contactbench.
    #[arg(long)]
    pub force: bool,
}

/// Writes `RESULTS/report/` and prints the path of its `report.md`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let path = make_report_with(&args.results, replace_policy(args.force))
        .with_context(|| format!("report of {}", args.results.display()))?;
    outln!("{}", path.display());
    Ok(ExitCode::SUCCESS)
}
