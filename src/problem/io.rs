//! Problem files (design.md §3): one JSON object that numpy, Pinocchio's Python bindings or
//! any other tool can read and write.
//!
//! ```json
//! {
//!   "G": [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
//!   "g": [0.0, 0.0, -1.0],
//!   "mu": [0.5],
//!   "R": [0.0, 0.0, 0.0],
//!   "lambda": [0.0, 0.0, 1.0],
//!   "solver": {"solver": "ncp-admm", "eps_abs": 1e-8, "rho": 1e-3}
//! }
//! ```
//!
//! `G` is an array of `3n` rows of `3n` numbers, `g` has `3n` entries, `mu` `n`; `R`
//! (diagonal compliance, `3n`), `lambda` (a reference answer, `3n`) and `solver` (a
//! solver specification, as in [`crate::solvers::SolverSpec::from_map`], so that a case
//! can be replayed) are optional. Per-contact order is `[t1, t2, n]`. A force file (for
//! a warm start) is either a bare array of `3n` numbers or an object with `lambda`.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};
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

/// A problem file's contents.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProblemFileData {
    #[serde(rename = "G")]
    delassus: Vec<Vec<f64>>,
    g: Vec<f64>,
    mu: Vec<f64>,
    #[serde(rename = "R", default, skip_serializing_if = "Option::is_none")]
    compliance: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lambda: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    solver: Option<Map<String, Value>>,
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
}

/// Reads and validates a problem file.
pub fn read_problem(path: &Path) -> Result<ProblemFile, ProblemFileError> {
    let text = read_text(path)?;
    let data: ProblemFileData = parse_json(path, &text).map_err(|e| name_bad_field(e, &text))?;
    let invalid = |error| ProblemFileError::Invalid {
        path: path.to_path_buf(),
        error,
    };
    let delassus = rows_to_matrix(path, &data.delassus)?;
    let problem = ContactProblem::new(
        delassus,
        DVector::from_vec(data.g),
        DVector::from_vec(data.mu),
        data.compliance.map(DVector::from_vec),
    )
    .map_err(invalid)?;
    let lambda = data.lambda.map(DVector::from_vec);
    if let Some(l) = &lambda {
        problem.check_lambda(l).map_err(invalid)?;
    }
    Ok(ProblemFile {
        problem,
        lambda,
        solver: data.solver,
    })
}

/// Writes a problem (and optionally a reference `λ` and a solver specification) as JSON,
/// through a temporary file renamed into place.
pub fn write_problem(
    path: &Path,
    problem: &ContactProblem,
    lambda: Option<&DVector<f64>>,
    solver: Option<&Map<String, Value>>,
) -> Result<(), ProblemFileError> {
    let g = problem.delassus();
    let data = ProblemFileData {
        delassus: (0..g.nrows())
            .map(|i| g.row(i).iter().copied().collect())
            .collect(),
        g: problem.free_velocity().iter().copied().collect(),
        mu: problem.mu().iter().copied().collect(),
        compliance: problem.compliance().map(|r| r.iter().copied().collect()),
        lambda: lambda.map(|l| l.iter().copied().collect()),
        solver: solver.cloned(),
    };
    let text = serde_json::to_string_pretty(&data).map_err(|e| ProblemFileError::Serialize {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    write_atomically(path, text.as_bytes())
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
    let parsed: LambdaFile = parse_json(path, &text).map_err(|e| match e {
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

/// Writes `bytes` to `path` via a temporary file in the same directory and a rename, so a
/// reader never sees a half-written file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), ProblemFileError> {
    let io = |error| ProblemFileError::Io {
        path: path.to_path_buf(),
        error,
    };
    let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let tmp = path.with_file_name(format!(
        ".{}.tmp-{}",
        file_name.unwrap_or_else(|| "problem".into()),
        std::process::id()
    ));
    let mut file = fs::File::create(&tmp).map_err(io)?;
    file.write_all(bytes).map_err(io)?;
    file.sync_all().map_err(io)?;
    drop(file);
    fs::rename(&tmp, path).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        io(e)
    })
}

fn read_text(path: &Path) -> Result<String, ProblemFileError> {
    fs::read_to_string(path).map_err(|error| ProblemFileError::Io {
        path: path.to_path_buf(),
        error,
    })
}

fn parse_json<T: for<'de> Deserialize<'de>>(
    path: &Path,
    text: &str,
) -> Result<T, ProblemFileError> {
    serde_json::from_str(text).map_err(|e| {
        // serde_json appends " at line L column C"; the position has its own fields.
        let mut message = e.to_string();
        if let Some(at) = message.rfind(" at line ") {
            message.truncate(at);
        }
        ProblemFileError::Json {
            path: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            message,
        }
    })
}

/// serde_json names a missing or unknown field but not the field holding a value of the
/// wrong type: find it by reading each known field on its own, and prefix it.
fn name_bad_field(error: ProblemFileError, text: &str) -> ProblemFileError {
    let ProblemFileError::Json {
        path,
        line,
        column,
        message,
    } = error
    else {
        return error;
    };
    let fields = serde_json::from_str::<Map<String, Value>>(text).ok();
    let bad = fields.as_ref().and_then(|map| {
        map.iter().find_map(|(key, value)| {
            let ok = match key.as_str() {
                "G" => Vec::<Vec<f64>>::deserialize(value).is_ok(),
                "g" | "mu" | "R" | "lambda" => Vec::<f64>::deserialize(value).is_ok(),
                "solver" => value.is_object(),
                _ => true,
            };
            (!ok).then(|| key.clone())
        })
    });
    let message = match bad {
        Some(field) => format!("{field}: {message}"),
        None => message,
    };
    ProblemFileError::Json {
        path,
        line,
        column,
        message,
    }
}

fn rows_to_matrix(path: &Path, rows: &[Vec<f64>]) -> Result<DMatrix<f64>, ProblemFileError> {
    let ncols = rows.first().map_or(0, Vec::len);
    if let Some((row, r)) = rows.iter().enumerate().find(|(_, r)| r.len() != ncols) {
        return Err(ProblemFileError::RaggedRows {
            path: path.to_path_buf(),
            row,
            got: r.len(),
            expected: ncols,
        });
    }
    Ok(DMatrix::from_fn(rows.len(), ncols, |i, j| rows[i][j]))
}
