//! What every problem file format shares: the error of a read or a write, the problem
//! read with its reference answer, the bounded reads and the atomic writes. The formats
//! ([`super::json`], [`super::fclib`], [`super::npz`]) build on these, and [`super::io`]
//! picks a format for a path.
//!
//! Every read is bounded before it allocates: a file is read through `take(limit)` after
//! its size was checked ([`MAX_JSON_BYTES`], [`MAX_LAMBDA_BYTES`],
//! [`super::fclib::MAX_FCLIB_BYTES`]).

use std::fs;
use std::io::{Read, Write};
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

/// Largest JSON problem file read (bytes). Our writer spends about 25 bytes per entry of
/// `G`, so this holds a problem of about 3,200 rows; larger problems are for FCLIB or npz.
pub const MAX_JSON_BYTES: u64 = 256 << 20;

/// Largest force file (a warm start) read (bytes): the `solve --all --json` output of the
/// largest problem, 15,000 values for each of 12 solvers, is under 20 MB.
pub const MAX_LAMBDA_BYTES: u64 = 64 << 20;

/// The UTF-8 byte-order mark some editors write at the start of a text file.
const BYTE_ORDER_MARK: &str = "\u{feff}";

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
