//! What every problem file format shares: the error of a read or a write, the problem
//! read with its reference answer, and the whole-file read and atomic write. The formats
//! ([`super::json`], [`super::fclib`], [`super::npz`]) build on these, and [`super::io`]
//! picks a format for a path.

use std::fs;
use std::path::{Path, PathBuf};

use nalgebra::DVector;
use serde_json::{Map, Value};
use thiserror::Error;

use super::{ContactProblem, ProblemError};

/// Why a problem file could not be read or written.
#[derive(Debug, Error)]
pub enum ProblemFileError {
    /// The file could not be opened, read or written.
    #[error("{path}: {error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        error: std::io::Error,
    },
    /// The file is not valid JSON, or a field has the wrong type or is missing.
    #[error("{path}: line {line}, column {column}: {message}")]
    Json {
        /// The file.
        path: PathBuf,
        /// Line of the error (1-based).
        line: usize,
        /// Column of the error (1-based).
        column: usize,
        /// What serde_json says (it names the field).
        message: String,
    },
    /// `G` is not a rectangular array of rows.
    #[error("{path}: G: row {row} has {got} entries, expected {expected}")]
    RaggedRows {
        /// The file.
        path: PathBuf,
        /// The first row of a different length.
        row: usize,
        /// Its length.
        got: usize,
        /// The length of row 0.
        expected: usize,
    },
    /// The HDF5 file (or one of its datasets) could not be decoded: corrupted, truncated,
    /// or a dataset is missing.
    #[error("{path}: {dataset}: {message}")]
    Hdf5 {
        /// The file.
        path: PathBuf,
        /// The dataset or group (`/` for the file itself).
        dataset: String,
        /// What the HDF5 reader says.
        message: String,
    },
    /// A dataset (FCLIB) or array (npz) was read but has the wrong shape or content.
    #[error("{path}: {dataset}: {message}")]
    Dataset {
        /// The file.
        path: PathBuf,
        /// The dataset, group or array.
        dataset: String,
        /// What is wrong.
        message: String,
    },
    /// A valid file of a kind of problem contactbench does not solve (2D, rolling
    /// friction, equality constraints).
    #[error("{path}: {dataset}: unsupported: {what}")]
    Unsupported {
        /// The file.
        path: PathBuf,
        /// The dataset or group that shows it.
        dataset: String,
        /// What kind of problem it is.
        what: String,
    },
    /// The data do not make a valid contact problem (sizes, symmetry, signs...).
    #[error("{path}: {error}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The validation error, naming the field.
        error: ProblemError,
    },
    /// The problem could not be serialized.
    #[error("{path}: cannot serialize: {message}")]
    Serialize {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

/// A problem read from a file, with the file's optional reference answer and solver.
#[derive(Debug, Clone)]
pub struct ProblemFile {
    /// The validated problem.
    pub problem: ContactProblem,
    /// A reference `λ` (`3n`), if the file has one.
    pub lambda: Option<DVector<f64>>,
    /// A solver specification map (with a `solver` key), if the file has one.
    pub solver: Option<Map<String, Value>>,
    /// What the reader did to the stored data (a global problem reduced, a triangle
    /// mirrored).
    pub notes: Vec<String>,
}

/// Writes `bytes` to `path` whole, replacing a regular file but never writing through a
/// symbolic link ([`crate::output::write_file`]): a reader never sees a half-written file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), ProblemFileError> {
    crate::output::write_file(path, bytes, true).map_err(|e| ProblemFileError::Io {
        path: path.to_path_buf(),
        error: match e {
            crate::output::OutputError::Io { error, .. }
            | crate::output::OutputError::Unwritable { error, .. } => error,
            crate::output::OutputError::Refused { message, .. } => std::io::Error::other(message),
            other => std::io::Error::other(other.to_string()),
        },
    })
}

pub(crate) fn read_text(path: &Path) -> Result<String, ProblemFileError> {
    fs::read_to_string(path).map_err(|error| ProblemFileError::Io {
        path: path.to_path_buf(),
        error,
    })
}
