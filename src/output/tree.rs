//! What an output directory holds: our work entries, our files (listed in a marker and
//! unchanged), nested outputs of ours, and everything else (the user's).

use std::fs::FileType;
use std::path::{Path, PathBuf};

use super::lock::{is_lock_file, LOCK};
use super::marker::{digest, unchanged, FileDigest, OutputMarker, MARKER};
use super::signal::{register, Live};
use super::{io_error, refused, OutputError, MAX_WALK_DEPTH, MAX_WALK_ENTRIES, WORK_PREFIX};

/// Prefix of a staging directory inside an output directory.
pub(crate) const STAGING_PREFIX: &str = ".contactbench-staging-";

/// Name of the stamp file inside each staging directory.
pub(crate) const STAMP: &str = ".contactbench-staging";

/// Content of the stamp file.
const STAMP_TEXT: &[u8] = b"contactbench staging directory\n";

/// Prefix of the temporary files of an atomic write.
pub(crate) fn temp_prefix() -> String {
    format!("{WORK_PREFIX}tmp-")
}

/// What an output directory holds, once our work entries are set aside.
#[derive(Debug)]
pub(crate) enum Holds {
    /// Nothing.
    Nothing,
    /// Our marker (read, not yet checked against the files).
    Marked(OutputMarker),
}

/// Files of ours found under an output directory: what replacing it deletes.
#[derive(Debug, Default)]
pub(crate) struct Owned {
    /// Our files (absolute paths).
    pub files: Vec<PathBuf>,
    /// The markers of nested outputs of ours.
    pub markers: Vec<PathBuf>,
}

/// Creates `target` when absent (returns true) or checks it is a real directory (false);
/// refuses a symbolic link, a file, the current directory and its parents.
pub(crate) fn prepare_dir(target: &Path) -> Result<bool, OutputError> {
    let unwritable = |path: &Path, error| OutputError::Unwritable {
        path: path.display().to_string(),
        error,
    };
    for _ in 0..2 {
        match std::fs::symlink_metadata(target) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(refused(
                    target,
                    "is a symbolic link; contactbench never writes through one",
                ))
            }
            Ok(meta) if !meta.is_dir() => {
                return Err(refused(
                    target,
                    "exists and is not a directory; contactbench never replaces it",
                ))
            }
            Ok(_) => {
                refuse_current_dir(target)?;
                return Ok(false);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if let Some(parent) = target.parent().filter(|p| !p.as_os_str().is_empty()) {
                    std::fs::create_dir_all(parent).map_err(|e| unwritable(parent, e))?;
                }
                match std::fs::create_dir(target) {
                    Ok(()) => {
                        register(Live::Created(target.to_path_buf()));
                        return Ok(true);
                    }
                    // Created by someone else meanwhile: look at it again.
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(unwritable(target, e)),
                }
            }
            Err(e) => return Err(unwritable(target, e)),
        }
    }
    Err(refused(target, "appeared and changed while being checked"))
}

fn refuse_current_dir(target: &Path) -> Result<(), OutputError> {
    if let (Ok(cwd), Ok(canonical)) = (std::env::current_dir(), target.canonicalize()) {
        if cwd.starts_with(&canonical) {
            return Err(refused(
                target,
                "is the current directory or one of its parents; choose a new directory",
            ));
        }
    }
    Ok(())
}

/// Whether a top-level entry of an output directory is one of our work entries: the
/// lock file (with its signature), a staging directory (with its stamp) or a temporary
/// file of an atomic write.
pub(crate) fn is_work_entry(dir: &Path, name: &str, kind: FileType) -> bool {
    let path = dir.join(name);
    if name == LOCK {
        return kind.is_file() && is_lock_file(&path);
    }
    if name.starts_with(STAGING_PREFIX) {
        return kind.is_dir() && has_stamp(&path);
    }
    kind.is_file() && name.starts_with(&temp_prefix())
}

fn has_stamp(dir: &Path) -> bool {
    let stamp = dir.join(STAMP);
    std::fs::symlink_metadata(&stamp).is_ok_and(|m| m.is_file())
        && std::fs::read(&stamp).is_ok_and(|b| b == STAMP_TEXT)
}

/// Creates a staging directory with its stamp inside `target`.
pub(crate) fn create_staging(target: &Path, run_id: &str) -> Result<PathBuf, OutputError> {
    let temp = target.join(format!("{STAGING_PREFIX}{run_id}"));
    std::fs::create_dir(&temp).map_err(|e| OutputError::Unwritable {
        path: target.display().to_string(),
        error: e,
    })?;
    register(Live::Temp(temp.clone()));
    std::fs::write(temp.join(STAMP), STAMP_TEXT).map_err(|e| io_error(&temp, e))?;
    Ok(temp)
}

/// Removes the staging directories left in `target` by a killed process (only the holder
/// of the exclusive lock calls this: nobody else is writing).
pub(crate) fn remove_stale_staging(target: &Path) {
    let Ok(entries) = std::fs::read_dir(target) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if name.starts_with(STAGING_PREFIX) && kind.is_dir() && has_stamp(&entry.path()) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// What `target` holds besides our work entries.
pub(crate) fn inspect(target: &Path) -> Result<Holds, OutputError> {
    let entries = std::fs::read_dir(target).map_err(|e| io_error(target, e))?;
    let mut other = false;
    for entry in entries {
        let entry = entry.map_err(|e| io_error(target, e))?;
        let kind = entry.file_type().map_err(|e| io_error(&entry.path(), e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !is_work_entry(target, &name, kind) {
            other = true;
            break;
        }
    }
    if !other {
        return Ok(Holds::Nothing);
    }
    match OutputMarker::read(target) {
        Ok(marker) => Ok(Holds::Marked(marker)),
        Err(OutputError::Io { error, .. }) if error.kind() == std::io::ErrorKind::NotFound => {
            Err(refused(
                target,
                "exists and was not written by contactbench (no marker file); contactbench \
                 never writes into it: choose a new or empty directory",
            ))
        }
        Err(e) => Err(refused(
            target,
            format!(
                "holds a marker contactbench cannot use ({e}): an output of an older \
                 contactbench, or not contactbench's; contactbench never writes into it: \
                 delete it yourself or choose a new or empty directory"
            ),
        )),
    }
}

/// Every file under `dir` is ours: the marker, a file it lists (unchanged), a shared
/// path, a work entry, or a file of a nested output of ours (whose marker names this
/// output and its place in it). Returns our files; the first one that is not ours is a
/// refusal naming it.
pub(crate) fn verify_ours(dir: &Path, marker: &OutputMarker) -> Result<Owned, OutputError> {
    let mut owned = Owned::default();
    let mut seen = 0usize;
    verify_into(dir, marker, &mut owned, &mut seen)?;
    Ok(owned)
}

fn verify_into(
    root: &Path,
    marker: &OutputMarker,
    owned: &mut Owned,
    seen: &mut usize,
) -> Result<(), OutputError> {
    if marker.files.is_empty() {
        return Err(refused(
            root,
            "has a marker that lists no file: it proves nothing is contactbench's; \
             contactbench never replaces it",
        ));
    }
    let mut found = 0usize;
    let mut stack = vec![(root.to_path_buf(), String::new(), 0usize)];
    while let Some((dir, rel, depth)) = stack.pop() {
        if depth > MAX_WALK_DEPTH {
            return Err(refused(
                &dir,
                "is nested too deeply for an output directory",
            ));
        }
        let entries = std::fs::read_dir(&dir).map_err(|e| io_error(&dir, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| io_error(&dir, e))?;
            *seen += 1;
            if *seen > MAX_WALK_ENTRIES {
                return Err(refused(
                    root,
                    "holds too many files for an output directory",
                ));
            }
            let path = entry.path();
            let kind = entry.file_type().map_err(|e| io_error(&path, e))?;
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                return Err(not_ours(&path, root));
            };
            if rel.is_empty() && (name == MARKER || is_work_entry(&dir, &name, kind)) {
                continue;
            }
            let child = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            if marker.is_shared(&child) {
                continue;
            }
            if kind.is_dir() {
                if std::fs::symlink_metadata(path.join(MARKER)).is_ok() {
                    verify_nested(&path, &child, marker, owned, seen)?;
                } else {
                    stack.push((path, child, depth + 1));
                }
                continue;
            }
            match marker.find(&child) {
                Some(entry) if unchanged(&path, entry)? => {
                    found += 1;
                    owned.files.push(path);
                }
                Some(_) if !kind.is_file() => {
                    return Err(refused(
                        &path,
                        format!(
                            "is not the file contactbench wrote there (a symbolic link or \
                             another kind of file); move it out of {} before replacing it",
                            root.display()
                        ),
                    ))
                }
                Some(_) => {
                    return Err(refused(
                        &path,
                        format!(
                            "was changed after contactbench wrote it; move it out of {} \
                             before replacing it",
                            root.display()
                        ),
                    ))
                }
                None => return Err(not_ours(&path, root)),
            }
        }
    }
    if found < marker.files.len() {
        let missing = marker
            .files
            .iter()
            .find(|f| !owned.files.contains(&root.join(&f.path)))
            .map_or_else(String::new, |f| f.path.clone());
        return Err(refused(
            &root.join(missing),
            "is listed in contactbench's marker and missing: contactbench replaces only an \
             output it finds whole; delete it yourself or choose a new directory",
        ));
    }
    Ok(())
}

fn not_ours(path: &Path, root: &Path) -> OutputError {
    refused(
        path,
        format!(
            "was not written by contactbench; move it out of {} before replacing it",
            root.display()
        ),
    )
}

/// A directory with a marker inside an output: ours only when its marker says it was
/// written into this very output, at this very path.
fn verify_nested(
    dir: &Path,
    rel: &str,
    outer: &OutputMarker,
    owned: &mut Owned,
    seen: &mut usize,
) -> Result<(), OutputError> {
    let foreign = || {
        refused(
            dir,
            "holds an output contactbench did not write there (moved or copied in?); move it \
             out before replacing what encloses it",
        )
    };
    let nested = OutputMarker::read(dir).map_err(|_| foreign())?;
    let here = nested
        .nested_in
        .as_ref()
        .is_some_and(|p| p.run_id == outer.run_id && p.path == rel);
    if !here || !nested.shared.is_empty() {
        return Err(foreign());
    }
    verify_into(dir, &nested, owned, seen)?;
    owned.markers.push(dir.join(MARKER));
    Ok(())
}

/// The files of a staging directory (relative path, full path), sorted, without its
/// stamp; anything that is not a regular file or a directory is an error.
pub(crate) fn staged_files(temp: &Path) -> Result<Vec<(String, PathBuf)>, OutputError> {
    let mut out = Vec::new();
    let mut stack = vec![(temp.to_path_buf(), String::new(), 0usize)];
    while let Some((dir, rel, depth)) = stack.pop() {
        if depth > MAX_WALK_DEPTH {
            return Err(refused(
                &dir,
                "is nested too deeply for an output directory",
            ));
        }
        for entry in std::fs::read_dir(&dir).map_err(|e| io_error(&dir, e))? {
            let entry = entry.map_err(|e| io_error(&dir, e))?;
            let path = entry.path();
            let kind = entry.file_type().map_err(|e| io_error(&path, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if rel.is_empty() && (name == STAMP || name == MARKER) {
                continue;
            }
            let child = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            if kind.is_dir() {
                stack.push((path, child, depth + 1));
            } else if kind.is_file() {
                out.push((child, path));
            } else {
                return Err(refused(&path, "is not a regular file"));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The digests of staged files.
pub(crate) fn digests(staged: &[(String, PathBuf)]) -> Result<Vec<FileDigest>, OutputError> {
    staged.iter().map(|(rel, path)| digest(path, rel)).collect()
}

/// Checks, before anything changes, that every staged file can be moved into `target`:
/// every directory on its way is absent or a real directory, and the file's place is
/// free or holds a file that `replaced` says will be deleted first.
pub(crate) fn preflight(
    target: &Path,
    staged: &[(String, PathBuf)],
    replaced: &dyn Fn(&Path) -> bool,
) -> Result<(), OutputError> {
    for (rel, _) in staged {
        let mut place = target.to_path_buf();
        let parts: Vec<&str> = rel.split('/').collect();
        for (k, part) in parts.iter().enumerate() {
            place.push(part);
            let last = k + 1 == parts.len();
            match std::fs::symlink_metadata(&place) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                Err(e) => return Err(io_error(&place, e)),
                Ok(meta) if !last && meta.is_dir() => {}
                Ok(meta) if last && meta.is_file() && replaced(&place) => {}
                Ok(_) => {
                    return Err(refused(
                        &place,
                        format!(
                            "is where contactbench would write {rel}, and it was not written \
                             by contactbench; nothing was changed: move it away"
                        ),
                    ))
                }
            }
        }
    }
    Ok(())
}

/// Deletes our files (checked by [`verify_ours`] or listed and unchanged), then the
/// directories that deleting them left empty, up to (not including) `target`.
pub(crate) fn delete_ours(target: &Path, files: &[PathBuf]) -> Result<(), OutputError> {
    for file in files {
        match std::fs::remove_file(file) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_error(file, e)),
        }
    }
    let mut dirs: Vec<PathBuf> = files
        .iter()
        .flat_map(|f| {
            f.ancestors()
                .skip(1)
                .map(Path::to_path_buf)
                .collect::<Vec<_>>()
        })
        .filter(|d| d.starts_with(target) && d != target)
        .collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    dirs.dedup();
    for dir in dirs {
        // Fails, and is kept, when something else is still inside.
        let _ = std::fs::remove_dir(&dir);
    }
    Ok(())
}

/// Moves the staged files into `target`, creating their directories; a place that is
/// taken is never overwritten.
pub(crate) fn move_in(target: &Path, staged: &[(String, PathBuf)]) -> Result<(), OutputError> {
    for (rel, from) in staged {
        let mut place = target.to_path_buf();
        let parts: Vec<&str> = rel.split('/').collect();
        for part in &parts[..parts.len().saturating_sub(1)] {
            place.push(part);
            match std::fs::create_dir(&place) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let real_dir = std::fs::symlink_metadata(&place).is_ok_and(|m| m.is_dir());
                    if !real_dir {
                        return Err(refused(&place, "is not a directory; nothing was replaced"));
                    }
                }
                Err(e) => return Err(io_error(&place, e)),
            }
        }
        let to = target.join(rel);
        if std::fs::symlink_metadata(&to).is_ok() {
            return Err(refused(
                &to,
                "appeared while contactbench was publishing; kept",
            ));
        }
        std::fs::rename(from, &to).map_err(|e| io_error(&to, e))?;
    }
    Ok(())
}
