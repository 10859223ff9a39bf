//! Problem files in every format contactbench reads, recognized by content (then by
//! extension): our JSON ([`super::json`]), FCLIB HDF5 ([`super::fclib`], local and global
//! problems) and ContactBench's numpy `.npz` ([`super::npz`]). Every command that reads a
//! problem goes through [`read_problem`]; [`write_problem`] picks the format from the
//! extension (`.hdf5`/`.h5`: FCLIB, `.npz`: numpy, anything else: JSON).
//!
//! A force file (for a warm start) is either a bare JSON array of `3n` numbers or an
//! object with `lambda`.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use nalgebra::DVector;
use serde::Deserialize;
use serde_json::{Map, Value};
use thiserror::Error;

use super::{fclib, json, npz, ContactProblem, ProblemError};

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

/// The file formats of problems.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProblemFormat {
    /// Our JSON object.
    Json,
    /// FCLIB (HDF5), local or global.
    Fclib,
    /// numpy `.npz` with ContactBench's arrays `G`, `g`, `mus`.
    Npz,
}

/// HDF5's format signature (at offset 0 when the file has no user block).
const HDF5_SIGNATURE: &[u8] = b"\x89HDF\r\n\x1a\n";
/// A zip archive's first local header (an `.npz`).
const ZIP_SIGNATURE: &[u8] = b"PK\x03\x04";

impl ProblemFormat {
    /// The format of an existing file: its first bytes (HDF5 or zip signature), else its
    /// extension, else JSON.
    pub fn detect(path: &Path) -> Result<Self, ProblemFileError> {
        let mut head = Vec::with_capacity(8);
        fs::File::open(path)
            .and_then(|f| f.take(8).read_to_end(&mut head))
            .map_err(|error| ProblemFileError::Io {
                path: path.to_path_buf(),
                error,
            })?;
        Ok(if head.starts_with(HDF5_SIGNATURE) {
            Self::Fclib
        } else if head.starts_with(ZIP_SIGNATURE) {
            Self::Npz
        } else {
            Self::from_extension(path)
        })
    }

    /// The format named by a file's extension (`.hdf5`, `.h5`, `.npz`; JSON otherwise).
    pub fn from_extension(path: &Path) -> Self {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        match ext.as_deref() {
            Some("hdf5" | "h5") => Self::Fclib,
            Some("npz") => Self::Npz,
            _ => Self::Json,
        }
    }
}

/// Reads and validates a problem file of any format ([`ProblemFormat::detect`]).
pub fn read_problem(path: &Path) -> Result<ProblemFile, ProblemFileError> {
    match ProblemFormat::detect(path)? {
        ProblemFormat::Json => json::read_json(path),
        ProblemFormat::Fclib => {
            let raw = fclib::read_fclib(path)?;
            let problem = raw.to_problem(path)?;
            Ok(ProblemFile {
                problem,
                lambda: raw.reference,
                solver: None,
                notes: raw.notes,
            })
        }
        ProblemFormat::Npz => npz::read_npz(path),
    }
}

/// Writes a problem (and optionally a reference `λ` and, in JSON, a solver
/// specification) in the format of the path's extension, through a temporary file renamed
/// into place. FCLIB has no compliance: `R` is added to the diagonal of `W`.
pub fn write_problem(
    path: &Path,
    problem: &ContactProblem,
    lambda: Option<&DVector<f64>>,
    solver: Option<&Map<String, Value>>,
) -> Result<(), ProblemFileError> {
    match ProblemFormat::from_extension(path) {
        ProblemFormat::Json => json::write_json(path, problem, lambda, solver),
        ProblemFormat::Fclib => {
            let title = path
                .file_stem()
                .map_or_else(|| "contactbench".into(), |s| s.to_string_lossy());
            fclib::write_fclib(path, problem, lambda, &title)
        }
        ProblemFormat::Npz => npz::write_npz(path, problem, lambda),
    }
}

/// Reads a force vector (a warm start): a bare JSON array, or an object with a `lambda`
/// array (a problem file or `contactbench solve --json` output for one solver).
pub fn read_lambda(path: &Path) -> Result<DVector<f64>, ProblemFileError> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum LambdaFile {
        Bare(Vec<f64>),
        Object { lambda: Vec<f64> },
    }
    let text = read_text(path)?;
    let parsed: LambdaFile = json::parse_json(path, &text).map_err(|e| match e {
        ProblemFileError::Json {
            path, line, column, ..
        } => ProblemFileError::Json {
            path,
            line,
            column,
            message: "expected an array of numbers or an object with a `lambda` array".into(),
        },
        other => other,
    })?;
    Ok(match parsed {
        LambdaFile::Bare(v) | LambdaFile::Object { lambda: v } => DVector::from_vec(v),
    })
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
