//! The marker of an output directory: who wrote it, every file written with its size and
//! SHA-256, the output it was written into (a nested output) and the paths several
//! writers add to (a shared store).

use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{io_error, refused, OutputError};

/// Name of the marker file that identifies a directory contactbench wrote.
pub const MARKER: &str = ".contactbench-output.json";

/// Version of the marker's format; a marker of another version is not read as ours.
const FORMAT: u32 = 2;

/// Largest marker read (a marker lists every file of its output).
const MAX_MARKER_BYTES: u64 = 256 << 20;

/// The marker written in every output directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputMarker {
    /// Format version (2: files with digests).
    pub format: u32,
    /// Unique id of the output.
    pub run_id: String,
    /// `contactbench <version>`.
    pub created_by: String,
    /// Every file written, sorted by path.
    pub files: Vec<FileDigest>,
    /// The output this one was written into, when it is nested (a report in results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nested_in: Option<Parent>,
    /// Paths (relative, `/`-separated) that several writers add to in turn: not
    /// listed, never deleted, and never replaced whole; a file there is written whole and
    /// replaced only when its writer recognizes it as its own (a plan, a result).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shared: Vec<String>,
}

/// A file written, as the marker lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileDigest {
    /// Path relative to the output directory, `/`-separated.
    pub path: String,
    /// Size in bytes.
    pub bytes: u64,
    /// SHA-256 of the content, lowercase hex.
    pub sha256: String,
}

/// Where a nested output was written: the output it is inside and its path there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Parent {
    /// The enclosing output's run id.
    pub run_id: String,
    /// This output's path inside it, `/`-separated.
    pub path: String,
}

impl OutputMarker {
    /// A marker for a new output.
    pub(crate) fn new(
        run_id: String,
        files: Vec<FileDigest>,
        nested_in: Option<Parent>,
        shared: Vec<String>,
    ) -> Self {
        Self {
            format: FORMAT,
            run_id,
            created_by: format!("contactbench {}", env!("CARGO_PKG_VERSION")),
            files,
            nested_in,
            shared,
        }
    }

    /// Reads `dir`'s marker; an error says why it is not a marker of ours (absent, a
    /// symbolic link, unreadable, another format).
    pub fn read(dir: &Path) -> Result<Self, OutputError> {
        let path = dir.join(MARKER);
        let meta = std::fs::symlink_metadata(&path).map_err(|e| io_error(&path, e))?;
        if !meta.is_file() {
            return Err(refused(&path, "is not a regular file"));
        }
        let mut text = String::new();
        File::open(&path)
            .and_then(|f| f.take(MAX_MARKER_BYTES).read_to_string(&mut text))
            .map_err(|e| io_error(&path, e))?;
        let marker: Self = serde_json::from_str(&text).map_err(|e| {
            refused(
                &path,
                format!("is not a marker this contactbench can read ({e})"),
            )
        })?;
        if marker.format != FORMAT {
            return Err(refused(
                &path,
                format!(
                    "marker format {} (this contactbench reads {FORMAT})",
                    marker.format
                ),
            ));
        }
        Ok(marker)
    }

    /// Writes the marker to `path` (a new file).
    pub(crate) fn write_new(&self, path: &Path) -> Result<(), OutputError> {
        let text = serde_json::to_string_pretty(self).map_err(|e| {
            io_error(
                path,
                std::io::Error::new(std::io::ErrorKind::InvalidData, e),
            )
        })?;
        let mut file = File::options()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| io_error(path, e))?;
        file.write_all(text.as_bytes())
            .and_then(|()| file.write_all(b"\n"))
            .and_then(|()| file.sync_all())
            .map_err(|e| io_error(path, e))
    }

    /// The entry of a file, by relative path.
    pub fn find(&self, rel: &str) -> Option<&FileDigest> {
        self.files
            .binary_search_by(|f| f.path.as_str().cmp(rel))
            .ok()
            .map(|k| &self.files[k])
    }

    /// Whether `rel` is a shared path or inside one.
    pub fn is_shared(&self, rel: &str) -> bool {
        self.shared.iter().any(|s| {
            rel == s
                || rel
                    .strip_prefix(s.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
        })
    }
}

/// Size and SHA-256 of a regular file (never through a symbolic link: the caller checked).
pub(crate) fn digest(path: &Path, rel: &str) -> Result<FileDigest, OutputError> {
    let mut file = File::open(path).map_err(|e| io_error(path, e))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 16];
    let mut bytes = 0u64;
    loop {
        let n = file.read(&mut buffer).map_err(|e| io_error(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        bytes += n as u64;
    }
    Ok(FileDigest {
        path: rel.to_string(),
        bytes,
        sha256: hex(&hasher.finalize()),
    })
}

/// Lowercase hex of bytes.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether the regular file at `path` is the file `entry` describes (size, then digest).
pub(crate) fn unchanged(path: &Path, entry: &FileDigest) -> Result<bool, OutputError> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| io_error(path, e))?;
    if !meta.is_file() || meta.len() != entry.bytes {
        return Ok(false);
    }
    Ok(digest(path, &entry.path)?.sha256 == entry.sha256)
}
