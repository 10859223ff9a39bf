//! Reports from recorded runs: plots (PNG, SVG and PDF, with plotters and resvg) and a Markdown summary
//! that links them. A report reads a results directory only (its manifest and CSV
//! files), never re-runs anything.

pub mod axis;
pub mod chart;
pub mod plots;
pub mod snapshot;
pub mod stream;
pub mod style;
pub mod tables;

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::output::{Replace, Staging};
use crate::simulation::output::ResultsManifest;
use crate::simulation::recorder::RecordError;

/// Why a report could not be made.
#[derive(Debug, Error)]
pub enum ReportError {
    /// Reading the results or writing the report failed.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// Drawing failed.
    #[error("{path}: plot failed: {message}")]
    Plot {
        /// The file being drawn.
        path: String,
        /// plotters' message.
        message: String,
    },
    /// The results directory holds no run.
    #[error("{0}: no run in the manifest")]
    Empty(String),
}

/// Name of the report's directory inside the results directory.
pub const REPORT_DIR: &str = "report";

/// Makes `results/report/` (replacing an older one of ours): [`make_report_with`] with
/// [`Replace::Ours`].
pub fn make_report(results: &Path) -> Result<PathBuf, ReportError> {
    make_report_with(results, Replace::Ours)
}

/// Makes `results/report/`, an output nested in the results (which must carry
/// contactbench's marker: a report is never written into a folder contactbench did not
/// write): per scenario, the plots of [`plots::scenario_plots`] as PNG, SVG and PDF, and
/// `report.md` with a summary table per scenario and links to the plots. `replace` says
/// whether an earlier report of ours may be replaced. Returns the path of `report.md`.
pub fn make_report_with(results: &Path, replace: Replace) -> Result<PathBuf, ReportError> {
    let manifest = ResultsManifest::read(results)?;
    if manifest.runs.is_empty() {
        return Err(ReportError::Empty(results.display().to_string()));
    }
    let staging = Staging::nested(results, REPORT_DIR, replace).map_err(RecordError::from)?;
    let mut markdown = String::from("# contactbench report\n");
    for scenario in manifest.scenarios() {
        let runs: Vec<_> = manifest
            .runs
            .iter()
            .filter(|r| r.summary.scenario == scenario)
            .collect();
        let files = plots::scenario_plots(results, &scenario, &runs, staging.path())?;
        markdown.push_str(&format!("\n## {scenario}\n\n"));
        let summaries: Vec<_> = runs.iter().map(|r| r.summary.clone()).collect();
        markdown.push_str(&tables::summary_table(&summaries));
        for (title, stem) in files {
            markdown.push_str(&format!(
                "\n### {title}\n\n![{title}]({stem}.png) ([SVG]({stem}.svg), [PDF]({stem}.pdf))\n"
            ));
        }
    }
    let md_path = staging.path().join("report.md");
    std::fs::write(&md_path, markdown).map_err(|error| RecordError::Io {
        path: md_path.display().to_string(),
        error,
    })?;
    let dir = staging.publish().map_err(RecordError::from)?;
    Ok(dir.join("report.md"))
}
