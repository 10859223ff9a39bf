//! Problem corpora: every problem file × solver, one ruler, performance profiles, sharded
//! runs (`contactbench bench-problems`, `contactbench merge`).
//!
//! The pipeline of a corpus run:
//!
//! ```text
//! problem files (JSON, FCLIB, npz) ─► tasks (problem × solver, sorted, keyed by content
//!   and full settings) ─► plan.json ─► shard K/N ─► solve (capped in iterations and time)
//!   ─► metrics::compute_metrics ─► one result file per task (results/<key>.json)
//!   ─► merge the plan's results (missing ones reported) ─► judge (one criterion, one
//!   tolerance) ─► distances to the best answer ─► CSV / JSON / Markdown tables,
//!   Dolan-Moré performance profile (PNG, SVG)
//! ```
//!
//! It sits beside [`crate::simulation`]: both drive the solvers and measure their answers
//! with [`crate::metrics`]; the simulation over time steps of a scenario, the corpus over
//! problem files. Its report (tables and the profile plot) reads only result files, so a
//! sharded run and an unsharded one end in the same report.

pub mod bench;
pub mod plan;
pub mod profile;
pub mod report;
pub mod runner;
pub mod tasks;

use std::path::PathBuf;

use thiserror::Error;

/// Why a corpus run or merge could not go on (a problem or solver that fails is a result,
/// not an error).
#[derive(Debug, Error)]
pub enum CorpusError {
    /// A file or directory could not be read or written.
    #[error("{path}: {message}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A `--shard` value or Slurm variable is malformed.
    #[error("shard {text}: {message}")]
    Shard {
        /// The text given.
        text: String,
        /// What is wrong.
        message: String,
    },
    /// A result file could not be parsed.
    #[error("{path}: {message}")]
    Result {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// No problem file, no solver or no result was found.
    #[error("{0}")]
    Empty(String),
    /// The output was refused, is locked, cannot be written, or the run was interrupted.
    #[error(transparent)]
    Output(#[from] crate::output::OutputError),
    /// Results are missing from a merge (and a partial report was not asked for).
    #[error("{missing} of {planned} planned tasks have no result ({which}); run the missing shards, or pass --partial for a report of what is there")]
    Incomplete {
        /// Tasks without a result.
        missing: usize,
        /// Tasks in the plan.
        planned: usize,
        /// Which shards they belong to.
        which: String,
    },
    /// A plot could not be drawn.
    #[error("{path}: {message}")]
    Plot {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

impl CorpusError {
    pub(crate) fn io(path: &std::path::Path, error: impl std::fmt::Display) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            message: error.to_string(),
        }
    }
}
