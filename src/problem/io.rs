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
use std::path::Path;

use nalgebra::DVector;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::file::read_text;
pub use super::file::{write_atomically, ProblemFile, ProblemFileError};
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
