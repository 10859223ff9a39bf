//! Reading a text input file (URDF, SRDF, scenario): bounded in size, UTF-8, and an error
//! that says where the first invalid byte is.

use std::io::Read;
use std::path::Path;

use thiserror::Error;

/// Why a text file could not be read.
#[derive(Debug, Error)]
pub enum TextError {
    /// The file could not be opened or read.
    #[error("cannot read: {0}")]
    Io(std::io::Error),
    /// The file is larger than the limit for its kind.
    #[error("larger than {limit} bytes")]
    TooLarge {
        /// The limit (bytes).
        limit: u64,
    },
    /// The file is not valid UTF-8.
    #[error("not valid UTF-8: invalid byte 0x{byte:02x} at byte {offset} (line {line}, column {column})")]
    Utf8 {
        /// Offset of the first invalid byte (0-based).
        offset: usize,
        /// The byte.
        byte: u8,
        /// Its line (1-based).
        line: usize,
        /// Its column (1-based, in bytes).
        column: usize,
    },
}

/// Reads `path` as UTF-8 text of at most `limit` bytes.
pub fn read_text(path: &Path, limit: u64) -> Result<String, TextError> {
    let file = std::fs::File::open(path).map_err(TextError::Io)?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(TextError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(TextError::TooLarge { limit });
    }
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let before = &bytes[..offset];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = offset
            - before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |k| k + 1)
            + 1;
        TextError::Utf8 {
            offset,
            byte: bytes.get(offset).copied().unwrap_or(0),
            line,
            column,
        }
    })
}

/// Where and why a YAML document could not be read: the parser's line, column, the field
/// path of the first error (`world.bodies[0].mass`; `.` for the document) and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlFailure {
    /// Line (1-based).
    pub line: usize,
    /// Column (1-based).
    pub column: usize,
    /// The field, as a path.
    pub field: String,
    /// The parser's message, without its own "at line" suffix.
    pub message: String,
}

impl YamlFailure {
    /// The failure of `error`, found at `field` when known.
    pub fn new(field: Option<String>, error: &serde_saphyr::Error) -> Self {
        let (line, column) = error
            .location()
            .map_or((1, 1), |l| (l.line() as usize, l.column() as usize));
        let text = error.to_string();
        let message = match text.rfind(" at line ") {
            Some(k) => text[..k].to_string(),
            None => text,
        };
        Self {
            line,
            column,
            field: field
                .filter(|f| !f.is_empty())
                .unwrap_or_else(|| ".".into()),
            message,
        }
    }
}

/// Deserializes YAML `text` straight into `T` (exact line and column), naming the field
/// path of the first error.
pub fn parse_yaml<T: serde::de::DeserializeOwned>(
    text: &str,
    options: serde_saphyr::Options,
) -> Result<T, YamlFailure> {
    let mut field = None;
    serde_saphyr::with_deserializer_from_str_with_options(text, options, |de| {
        serde_path_to_error::deserialize(de).map_err(|e| {
            field = Some(e.path().to_string());
            e.into_inner()
        })
    })
    .map_err(|e| YamlFailure::new(field, &e))
}
