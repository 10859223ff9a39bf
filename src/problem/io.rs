//! Problem files in every format contactbench reads, recognized by content (then by
//! extension): our JSON ([`super::json`]), FCLIB HDF5 ([`super::fclib`], local and global
//! problems) and ContactBench's numpy `.npz` ([`super::npz`]). Every command that reads a
//! problem goes through [`read_problem`]; [`write_problem`] picks the format from the
//! extension (`.hdf5`/`.h5`: FCLIB, `.npz`: numpy, anything else: JSON).
//!
//! A force file (for a warm start) is either a bare JSON array of `3n` numbers, an object
//! with `lambda` (a problem file, `solve --json` output) or the output of
//! `solve --all --json` (its best converged answer, `lambda`).
//!
//! Every read is bounded before it allocates ([`super::file`]), and every size a file declares (an HDF5 dataset's
//! shape, an `.npy` header, a zip entry) is checked against the largest problem,
//! [`super::fclib::MAX_DENSE_DIM`] rows, and against the bytes the file actually holds. A
//! JSON file may start with a UTF-8 byte-order mark.

use std::fs;
use std::io::Read;
use std::path::Path;

use nalgebra::DVector;
use serde_json::{Map, Value};

use super::file::read_json_text;
pub use super::file::{
    write_atomically, write_new_atomically, ProblemFile, ProblemFileError, MAX_JSON_BYTES,
    MAX_LAMBDA_BYTES,
};
use super::{fclib, json, npz, ContactProblem};

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
/// into place (replacing an existing file). FCLIB has no compliance: `R` is added to the
/// diagonal of `W`.
pub fn write_problem(
    path: &Path,
    problem: &ContactProblem,
    lambda: Option<&DVector<f64>>,
    solver: Option<&Map<String, Value>>,
) -> Result<(), ProblemFileError> {
    let bytes = problem_bytes(path, problem, lambda, solver)?;
    write_atomically(path, &bytes)
}

/// As [`write_problem`], but an existing file (or link) at `path` is never replaced:
/// [`ProblemFileError::Exists`], even when it appears while the file is written.
pub fn create_problem(
    path: &Path,
    problem: &ContactProblem,
    lambda: Option<&DVector<f64>>,
    solver: Option<&Map<String, Value>>,
) -> Result<(), ProblemFileError> {
    refuse_existing(path)?;
    let bytes = problem_bytes(path, problem, lambda, solver)?;
    write_new_atomically(path, &bytes)
}

/// The bytes of a problem file in the format of the path's extension.
fn problem_bytes(
    path: &Path,
    problem: &ContactProblem,
    lambda: Option<&DVector<f64>>,
    solver: Option<&Map<String, Value>>,
) -> Result<Vec<u8>, ProblemFileError> {
    match ProblemFormat::from_extension(path) {
        ProblemFormat::Json => json::json_bytes(path, problem, lambda, solver),
        ProblemFormat::Fclib => {
            let title = path
                .file_stem()
                .map_or_else(|| "contactbench".into(), |s| s.to_string_lossy());
            fclib::fclib_bytes(path, problem, lambda, &title)
        }
        ProblemFormat::Npz => npz::npz_bytes(path, problem, lambda),
    }
}

fn refuse_existing(path: &Path) -> Result<(), ProblemFileError> {
    if fs::symlink_metadata(path).is_ok() {
        return Err(ProblemFileError::Exists {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

/// Reads a force vector (a warm start): a bare JSON array, or an object with a `lambda`
/// array (a problem file, `contactbench solve --json` output, with `--all` its best
/// converged answer).
pub fn read_lambda(path: &Path) -> Result<DVector<f64>, ProblemFileError> {
    let text = read_json_text(path, MAX_LAMBDA_BYTES)?;
    let value: Value = json::parse_json(path, &text)?;
    let field = |field: &str, message: String| ProblemFileError::JsonField {
        path: path.to_path_buf(),
        field: field.to_string(),
        message,
    };
    let (name, array) = match &value {
        Value::Array(values) => (String::new(), values),
        Value::Object(map) => match map.get("lambda") {
            Some(Value::Array(values)) => ("lambda".to_string(), values),
            Some(_) => return Err(field("lambda", "not an array of numbers".into())),
            None if map.contains_key("solvers") => {
                return Err(field(
                    "lambda",
                    "missing: no solver of this `solve --json` output converged".into(),
                ))
            }
            None => return Err(field("lambda", "missing".into())),
        },
        _ => {
            return Err(field(
                ".",
                "expected an array of numbers or an object with a `lambda` array".into(),
            ))
        }
    };
    let numbers = array
        .iter()
        .enumerate()
        .map(|(k, v)| {
            v.as_f64()
                .ok_or_else(|| field(&format!("{name}[{k}]"), format!("{v} is not a number")))
        })
        .collect::<Result<Vec<f64>, _>>()?;
    Ok(DVector::from_vec(numbers))
}
