//! Files written whole: through a temporary file of our own name in the same directory,
//! then linked (never replacing) or renamed (replacing a regular file, never a symbolic
//! link or a directory) into place.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::signal::{register, unregister, Live};
use super::tree::temp_prefix;
use super::{io_error, new_run_id, refused, OutputError};

/// Writes `bytes` to `path` whole. Without `replace`, an existing `path` is refused
/// (`--force` replaces it); a symbolic link or a directory there is always refused, and
/// the parent directory is created when absent. A reader never sees a half-written file.
pub fn write_file(path: &Path, bytes: &[u8], replace: bool) -> Result<(), OutputError> {
    if path.file_name().is_none() {
        return Err(refused(path, "is not a file name"));
    }
    let parent = parent_of(path);
    std::fs::create_dir_all(&parent).map_err(|e| OutputError::Unwritable {
        path: parent.display().to_string(),
        error: e,
    })?;
    check_place(path)?;
    if std::fs::symlink_metadata(path).is_ok() && !replace {
        return Err(refused(path, "exists; pass --force to replace it"));
    }
    if !place_file(path, bytes, replace)? {
        return Err(refused(path, "exists; pass --force to replace it"));
    }
    Ok(())
}

fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Refuses a place that holds a symbolic link, a directory or anything but a regular file.
fn check_place(path: &Path) -> Result<(), OutputError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(refused(
            path,
            "is a symbolic link; contactbench never writes through one",
        )),
        Ok(meta) if !meta.is_file() => Err(refused(
            path,
            "is not a regular file; contactbench never replaces it",
        )),
        _ => Ok(()),
    }
}

/// Writes `bytes` whole at `path` (whose directory exists): `Ok(false)` when `path` exists
/// and `replace` is false (nothing written).
pub(crate) fn place_file(path: &Path, bytes: &[u8], replace: bool) -> Result<bool, OutputError> {
    let temp = parent_of(path).join(format!("{}{}", temp_prefix(), new_run_id()));
    let mut file = File::options()
        .write(true)
        .create_new(true)
        .open(&temp)
        .map_err(|e| OutputError::Unwritable {
            path: temp.display().to_string(),
            error: e,
        })?;
    register(Live::Temp(temp.clone()));
    let outcome = write_and_place(&mut file, &temp, path, bytes, replace);
    drop(file);
    let _ = std::fs::remove_file(&temp);
    unregister(&temp);
    outcome
}

fn write_and_place(
    file: &mut File,
    temp: &Path,
    path: &Path,
    bytes: &[u8],
    replace: bool,
) -> Result<bool, OutputError> {
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| io_error(temp, e))?;
    if replace {
        check_place(path)?;
        std::fs::rename(temp, path).map_err(|e| io_error(path, e))?;
        return Ok(true);
    }
    match std::fs::hard_link(temp, path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        // A file system without hard links: check, then rename.
        Err(_) => {
            if std::fs::symlink_metadata(path).is_ok() {
                return Ok(false);
            }
            std::fs::rename(temp, path).map_err(|e| io_error(path, e))?;
            Ok(true)
        }
    }
}
