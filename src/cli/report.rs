//! `contactbench report`: plots (PNG and SVG) and a Markdown summary from a results
//! directory written by `run` or `batch`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

/// Arguments of `contactbench report`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A results directory (with `contactbench.json`), as written by `run` or `batch`.
    pub results: PathBuf,
}

/// Writes `RESULTS/report/` and prints the path of its `report.md`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let path = contactbench::report::make_report(&args.results)
        .with_context(|| format!("report of {}", args.results.display()))?;
    println!("{}", path.display());
    Ok(ExitCode::SUCCESS)
}
