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
//! Every read is bounded before it allocates: a file is read through `take(limit)` after
//! its size was checked ([`MAX_JSON_BYTES`], [`MAX_LAMBDA_BYTES`],
//! [`super::fclib::MAX_FCLIB_BYTES`]), and every size a file declares (an HDF5 dataset's
//! shape, an `.npy` header, a zip entry) is checked against the largest problem,
//! [`super::fclib::MAX_DENSE_DIM`] rows, and against the bytes the file actually holds. A
//! JSON file may start with a UTF-8 byte-order mark.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use nalgebra::DVector;
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
    /// A JSON value of the wrong shape where the parser has no position to give, named by
    /// its place in the document (`lambda[3]`, `.` for the whole document).
    #[error("{path}: {field}: {message}")]
    JsonField {
        /// The file.
        path: PathBuf,
        /// The value's place in the document.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// The file, or a size it declares, is beyond a limit: refused before it is read
    /// whole or allocated.
    #[error("{path}: {what}: over the limit of {limit} {unit}")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// What is too large, with its size when known (`the file (312 MB)`,
        /// `fclib_local/W/m = 2147483647 rows`).
        what: String,
        /// The limit.
        limit: u64,
        /// Its unit (`bytes`, `rows`, `values`).
        unit: &'static str,
    },
    /// A file is already at the path and the write was asked not to replace it.
    #[error("{path}: exists (not replaced)")]
    Exists {
        /// The file.
        path: PathBuf,
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

/// Largest JSON problem file read (bytes). Our writer spends about 25 bytes per entry of
/// `G`, so this holds a problem of about 3,200 rows; larger problems are for FCLIB or npz.
pub const MAX_JSON_BYTES: u64 = 256 << 20;

/// Largest force file (a warm start) read (bytes): the `solve --all --json` output of the
/// largest problem, 15,000 values for each of 12 solvers, is under 20 MB.
pub const MAX_LAMBDA_BYTES: u64 = 64 << 20;

/// The UTF-8 byte-order mark some editors write at the start of a text file.
const BYTE_ORDER_MARK: &str = "\u{feff}";

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

/// Writes `bytes` to `path` via a temporary file in the same directory and a rename, so a
/// reader never sees a half-written file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), ProblemFileError> {
    let io = |error| ProblemFileError::Io {
        path: path.to_path_buf(),
        error,
    };
    let tmp = temporary_path(path);
    let mut file = fs::File::create(&tmp).map_err(io)?;
    file.write_all(bytes).map_err(io)?;
    file.sync_all().map_err(io)?;
    drop(file);
    fs::rename(&tmp, path).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        io(e)
    })
}

/// Writes `bytes` to a new file `path` via a temporary file hard-linked into place, so a
/// reader never sees a half-written file and an existing file is never replaced (a file
/// system without hard links gets the file created exclusively and written in place).
pub fn write_new_atomically(path: &Path, bytes: &[u8]) -> Result<(), ProblemFileError> {
    let io = |error| ProblemFileError::Io {
        path: path.to_path_buf(),
        error,
    };
    let tmp = temporary_path(path);
    let mut file = fs::File::create_new(&tmp).map_err(io)?;
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    drop(file);
    let linked = written.and_then(|()| fs::hard_link(&tmp, path));
    let _ = fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(ProblemFileError::Exists {
            path: path.to_path_buf(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::Unsupported => {
            let mut file = fs::File::create_new(path).map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => ProblemFileError::Exists {
                    path: path.to_path_buf(),
                },
                _ => io(e),
            })?;
            file.write_all(bytes)
                .and_then(|()| file.sync_all())
                .map_err(io)
        }
        Err(e) => Err(io(e)),
    }
}

/// A temporary name beside `path` that a user's file cannot have by accident.
fn temporary_path(path: &Path) -> PathBuf {
    let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(
        ".{}.tmp-{}",
        file_name.unwrap_or_else(|| "problem".into()),
        std::process::id()
    ))
}

/// Reads at most `limit` bytes of `path`: a regular file larger than that is refused
/// before it is read, and any other file (a pipe, a device) as soon as it passes it.
pub(crate) fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, ProblemFileError> {
    read_bounded_checked(path, limit, |_| Ok(()))
}

/// As [`read_bounded`], with `check` run on the first block (up to 4 KiB) before the rest
/// is read, through the same open file (a pipe is read once).
fn read_bounded_checked(
    path: &Path,
    limit: u64,
    check: impl Fn(&[u8]) -> Result<(), ProblemFileError>,
) -> Result<Vec<u8>, ProblemFileError> {
    let io = |error| ProblemFileError::Io {
        path: path.to_path_buf(),
        error,
    };
    let mut file = fs::File::open(path).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    let too_large = |what: String| ProblemFileError::TooLarge {
        path: path.to_path_buf(),
        what,
        limit,
        unit: "bytes",
    };
    if size > limit {
        return Err(too_large(format!("the file ({size} bytes)")));
    }
    let mut bytes = Vec::new();
    (&mut file)
        .take(4096.min(limit + 1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    check(&bytes)?;
    let rest = (limit + 1).saturating_sub(bytes.len() as u64);
    file.take(rest).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(format!("the file (more than {limit} bytes)")));
    }
    Ok(bytes)
}

/// Reads a JSON text of at most `limit` bytes, without its byte-order mark. A stream
/// whose first character cannot start a JSON object or array (`/dev/zero`) is refused
/// after its first block, not read to the limit.
pub(crate) fn read_json_text(path: &Path, limit: u64) -> Result<String, ProblemFileError> {
    let bytes = read_bounded_checked(path, limit, |head| check_json_start(path, head))?;
    let mut text = String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let (line, column) = position(&e.as_bytes()[..offset]);
        ProblemFileError::Json {
            path: path.to_path_buf(),
            line,
            column,
            message: format!("not valid UTF-8 (byte {offset})"),
        }
    })?;
    if text.starts_with(BYTE_ORDER_MARK) {
        text.drain(..BYTE_ORDER_MARK.len());
    }
    Ok(text)
}

/// Refuses a text whose first significant byte (after a byte-order mark and white space)
/// cannot start a JSON object or array, at its line and column.
fn check_json_start(path: &Path, head: &[u8]) -> Result<(), ProblemFileError> {
    let bom = BYTE_ORDER_MARK.as_bytes();
    let body = head.strip_prefix(bom).unwrap_or(head);
    let Some(at) = body.iter().position(|b| !b.is_ascii_whitespace()) else {
        return Ok(());
    };
    if matches!(body[at], b'{' | b'[') {
        return Ok(());
    }
    let (line, column) = position(&body[..at]);
    Err(ProblemFileError::Json {
        path: path.to_path_buf(),
        line,
        column,
        message: format!(
            "expected a JSON object or array, found byte 0x{:02x}",
            body[at]
        ),
    })
}

/// Line and column (1-based, in bytes) just after `before`.
fn position(before: &[u8]) -> (usize, usize) {
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = before.len()
        - before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |k| k + 1)
        + 1;
    (line, column)
}
