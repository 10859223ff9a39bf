//! Why a run's files could not be written or read.

use thiserror::Error;

use crate::output::OutputError;

/// Why a record could not be written or read.
#[derive(Debug, Error)]
pub enum RecordError {
    /// File system error.
    #[error("{path}: {error}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        error: std::io::Error,
    },
    /// CSV error.
    #[error("{path}: {error}")]
    Csv {
        /// The file.
        path: String,
        /// The error.
        error: csv::Error,
    },
    /// JSON error.
    #[error("{path}: {error}")]
    Json {
        /// The file.
        path: String,
        /// The error.
        error: serde_json::Error,
    },
    /// A value in a CSV file is not a number.
    #[error("{path}: row {row}, column {column}: '{value}' is not a number")]
    NotANumber {
        /// The file.
        path: String,
        /// Row (1-based, header excluded).
        row: usize,
        /// Column name.
        column: String,
        /// The text.
        value: String,
    },
    /// A value in a CSV file is NaN or infinite (contactbench writes an empty cell for
    /// "no value", never NaN).
    #[error("{path}: row {row}, column {column}: '{value}' is not a finite number")]
    NotFinite {
        /// The file.
        path: String,
        /// Row (1-based, header excluded).
        row: usize,
        /// Column name.
        column: String,
        /// The text.
        value: String,
    },
    /// A results file is inconsistent (a manifest path outside the results, a run
    /// directory without its files).
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The output directory was refused, is locked, or the command was interrupted.
    #[error(transparent)]
    Output(#[from] OutputError),
}
