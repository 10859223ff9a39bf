//! What the command-line tests share: the binary with the robot cache, a temporary
//! directory per test, a short cube slide, and the check that no work file is left behind.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use contactbench::simulation::output::MARKER;

pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_contactbench"));
    c.env(
        "CONTACTBENCH_CACHE",
        std::env::var_os("CONTACTBENCH_CACHE").unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("robots/cache")
                .into()
        }),
    );
    c
}

pub fn run_in(dir: &Path, args: &[&str]) -> Output {
    bin()
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the binary runs")
}

pub fn temp(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("contactbench-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

pub fn scenario_file(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(name)
        .display()
        .to_string()
}

/// A short cube slide as a scenario file in `dir`, with `from` replaced by `to`.
pub fn short_cube(dir: &Path, file: &str, from: &str, to: &str) -> PathBuf {
    let text = std::fs::read_to_string(scenario_file("cube_slide.yaml")).expect("shipped");
    assert!(text.contains(from), "{from}");
    let text = text
        .replacen(from, to, 1)
        .replacen("duration: 0.5", "duration: 0.02", 1);
    let path = dir.join(file);
    std::fs::write(&path, text).expect("write");
    path
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Nothing contactbench made is left in or under `dir` (staging directories, locks,
/// temporary files: every work entry is named `.contactbench-…`, the marker aside).
pub fn no_leftovers(dir: &Path) {
    let mut left = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("dir").filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with(".contactbench-") && name != MARKER {
                left.push(entry.path().display().to_string());
            } else if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(entry.path());
            }
        }
    }
    assert!(left.is_empty(), "left behind: {left:?}");
}
