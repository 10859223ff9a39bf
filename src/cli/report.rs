//! `contactbench report`: plots (PNG and SVG) and a Markdown summary from a results
//! directory written by `run` or `batch`. The results are checked as they are read (a
//! manifest path outside the results, a missing or non-numeric file, a NaN: an error
//! naming the file); an earlier report is replaced only with `--force`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use contactbench::report::make_report_with;
use contactbench::simulation::output::MANIFEST;

use super::common::{replace_policy, UsageError};
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
    check_results_dir(&args.results)?;
    let path = make_report_with(&args.results, replace_policy(args.force))
        .with_context(|| format!("report of {}", args.results.display()))?;
    outln!("{}", path.display());
    Ok(ExitCode::SUCCESS)
}

/// Refuses a folder without the results manifest, saying which folder to point `report`
/// at when it is inside a results directory (a scenario's or a run's folder).
fn check_results_dir(dir: &Path) -> anyhow::Result<()> {
    if dir.join(MANIFEST).is_file() || !dir.is_dir() {
        return Ok(());
    }
    let results = dir
        .ancestors()
        .skip(1)
        .take(3)
        .filter(|d| !d.as_os_str().is_empty())
        .find(|d| d.join(MANIFEST).is_file());
    Err(UsageError(match results {
        Some(root) => format!(
            "{}: a folder inside the results directory {}; point report at that directory: \
             contactbench report {}",
            dir.display(),
            root.display(),
            root.display()
        ),
        None => format!(
            "{}: no {MANIFEST}: not a results directory; give the --out of `run` or `batch`",
            dir.display()
        ),
    })
    .into())
}
