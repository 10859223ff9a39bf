//! Every command that writes follows one discipline (`contactbench::output`): it writes
//! only into folders it created or marked, never through a symbolic link, never deletes
//! what it did not write, names its work files so that no user's file is taken for one,
//! writes an empty folder in place, merges only complete results unless asked, resumes by
//! content, and cleans up after a signal. Each test is a case that once lost or changed a
//! user's file, or reported wrong counts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_contactbench"));
    c.env(
        "CONTACTBENCH_CACHE",
        std::env::var_os("CONTACTBENCH_CACHE").unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("robots/cache")
                .into()
        }),
    );
    for var in [
        "SLURM_ARRAY_TASK_ID",
        "SLURM_ARRAY_TASK_COUNT",
        "SLURM_ARRAY_TASK_MIN",
        "SLURM_ARRAY_TASK_MAX",
        "SLURM_ARRAY_TASK_STEP",
    ] {
        c.env_remove(var);
    }
    c
}

fn run_in(dir: &Path, args: &[&str]) -> Output {
    bin()
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("the binary runs: {e}"))
}

fn temp(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("contactbench-out-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn write(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
    }
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

/// A 20-step cube slide in `dir`.
fn short_cube(dir: &Path) -> String {
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/cube_slide.yaml");
    let text = std::fs::read_to_string(shipped).unwrap_or_else(|e| panic!("{e}"));
    let path = dir.join("cube.yaml");
    write(&path, &text.replacen("duration: 0.5", "duration: 0.02", 1));
    path.display().to_string()
}

/// Two small problem files in `dir/problems`.
fn problems(dir: &Path) -> String {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let to = dir.join("problems");
    std::fs::create_dir_all(&to).unwrap_or_else(|e| panic!("{e}"));
    for (from, name) in [
        ("sliding_problem.json", "sliding.json"),
        ("fclib/CubeH8.hdf5", "cube_h8.hdf5"),
    ] {
        std::fs::copy(data.join(from), to.join(name)).unwrap_or_else(|e| panic!("{from}: {e}"));
    }
    "problems".into()
}

/// Every entry under `dir`: a file's content, a link's target, or "dir".
fn tree(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{e}")) {
            let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
            let rel = path
                .strip_prefix(dir)
                .unwrap_or(&path)
                .display()
                .to_string();
            let meta = std::fs::symlink_metadata(&path).unwrap_or_else(|e| panic!("{e}"));
            let what = if meta.file_type().is_symlink() {
                format!(
                    "link {}",
                    std::fs::read_link(&path).unwrap_or_default().display()
                )
            } else if meta.is_dir() {
                stack.push(path);
                "dir".into()
            } else {
                String::from_utf8_lossy(&std::fs::read(&path).unwrap_or_default()).into_owned()
            };
            out.insert(rel, what);
        }
    }
    out
}

/// Nothing named like a work entry of contactbench is left under `dir`.
fn no_work_files(dir: &Path) {
    let left: Vec<String> = tree(dir)
        .into_keys()
        .filter(|k| {
            let name = k.rsplit('/').next().unwrap_or(k);
            name.starts_with(".contactbench-") && name != ".contactbench-output.json"
        })
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn bench_problems_refuses_an_existing_user_folder() {
    let dir = temp("thesis");
    let problems = problems(&dir);
    for (file, text) in [
        ("report.md", "my report"),
        ("results.csv", "a,b\n1,2\n"),
        ("results.json", "{}"),
        ("profile.png", "my figure"),
    ] {
        write(&dir.join("thesis").join(file), text);
    }
    let before = tree(&dir.join("thesis"));
    let o = run_in(
        &dir,
        &[
            "bench-problems",
            &problems,
            "--solver",
            "ncp-admm",
            "--out",
            "thesis",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("not written by contactbench"),
        "{}",
        stderr(&o)
    );
    assert_eq!(tree(&dir.join("thesis")), before);
}

#[test]
fn merge_never_overwrites_user_files_in_its_output() {
    let dir = temp("merge-user");
    let problems = problems(&dir);
    for k in ["1/2", "2/2"] {
        let o = run_in(
            &dir,
            &[
                "bench-problems",
                &problems,
                "--solver",
                "ncp-admm",
                "--shard",
                k,
                "--out",
                "corpus",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    // Its default output, the first folder, holds a report.md of the user's.
    write(&dir.join("corpus/report.md"), "my notes");
    let o = run_in(&dir, &["merge", "corpus"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(dir.join("corpus/report.md")).unwrap_or_default(),
        "my notes"
    );
    // A folder of the user's given as --out.
    write(&dir.join("thesis/results.csv"), "mine");
    let o = run_in(&dir, &["merge", "corpus", "--out", "thesis"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(dir.join("thesis/results.csv")).unwrap_or_default(),
        "mine"
    );
    // Moved away, the merge writes its report.
    std::fs::remove_file(dir.join("corpus/report.md")).unwrap_or_else(|e| panic!("{e}"));
    let o = run_in(&dir, &["merge", "corpus"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.join("corpus/report.md").is_file());
    no_work_files(&dir);
}

#[cfg(unix)]
#[test]
fn a_symlinked_profile_png_is_not_followed() {
    let dir = temp("symlink");
    let problems = problems(&dir);
    let args = [
        "bench-problems",
        &problems,
        "--solver",
        "ncp-admm",
        "--out",
        "res",
    ];
    let o = run_in(&dir, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    write(&dir.join("mine.png"), "the user's figure");
    std::fs::remove_file(dir.join("res/profile.png")).unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink(dir.join("mine.png"), dir.join("res/profile.png"))
        .unwrap_or_else(|e| panic!("{e}"));
    let o = run_in(&dir, &args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("profile.png"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(dir.join("mine.png")).unwrap_or_default(),
        "the user's figure"
    );
    assert!(std::fs::symlink_metadata(dir.join("res/profile.png"))
        .is_ok_and(|m| m.file_type().is_symlink()));
    no_work_files(&dir);
}

#[test]
fn a_results_folder_moved_inside_survives_force() {
    let dir = temp("moved");
    let scenario = short_cube(&dir);
    for out in ["res", "other"] {
        let o = run_in(
            &dir,
            &["run", &scenario, "--solver", "ncp-admm", "--out", out],
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    std::fs::rename(dir.join("other"), dir.join("res/other")).unwrap_or_else(|e| panic!("{e}"));
    let moved = tree(&dir.join("res/other"));
    let o = run_in(
        &dir,
        &[
            "run", &scenario, "--solver", "ncp-admm", "--out", "res", "--force",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("res/other"), "{}", stderr(&o));
    assert_eq!(tree(&dir.join("res/other")), moved);
    no_work_files(&dir);
}

#[test]
fn force_keeps_the_users_lock_and_staging_lookalikes() {
    let dir = temp("lookalikes-inside");
    let scenario = short_cube(&dir);
    let run = |force: bool| {
        let mut args = vec!["run", &scenario, "--solver", "ncp-admm", "--out", "res"];
        if force {
            args.push("--force");
        }
        run_in(&dir, &args)
    };
    assert!(run(false).status.success());
    write(&dir.join("res/.notes.lock"), "notes");
    write(&dir.join("res/.data.staging-keep/data.csv"), "1,2,3");
    let o = run(true);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(dir.join("res/.notes.lock")).unwrap_or_default(),
        "notes"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("res/.data.staging-keep/data.csv")).unwrap_or_default(),
        "1,2,3"
    );
    no_work_files(&dir);
}

#[test]
fn lock_and_staging_lookalikes_beside_the_output_survive() {
    let dir = temp("lookalikes-beside");
    let scenario = short_cube(&dir);
    write(&dir.join(".mydata.lock"), "mine");
    write(&dir.join(".mydata.staging-backup/old.csv"), "backup");
    let before = tree(&dir);
    // Refused (a folder of the user's), then written (a new folder).
    write(&dir.join("mydata/thesis.tex"), "t");
    let o = run_in(
        &dir,
        &["run", &scenario, "--solver", "ncp-admm", "--out", "mydata"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    std::fs::remove_dir_all(dir.join("mydata")).unwrap_or_else(|e| panic!("{e}"));
    let o = run_in(
        &dir,
        &["run", &scenario, "--solver", "ncp-admm", "--out", "mydata"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let after: BTreeMap<String, String> = tree(&dir)
        .into_iter()
        .filter(|(k, _)| !k.starts_with("mydata"))
        .collect();
    assert_eq!(after, before);
    no_work_files(&dir);
}

#[cfg(unix)]
#[test]
fn an_empty_output_folder_is_written_in_place() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = temp("empty");
    let scenario = short_cube(&dir);
    let out = dir.join("out");
    std::fs::create_dir(&out).unwrap_or_else(|e| panic!("{e}"));
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o701))
        .unwrap_or_else(|e| panic!("{e}"));
    let before = std::fs::metadata(&out).unwrap_or_else(|e| panic!("{e}"));
    let o = run_in(
        &dir,
        &["run", &scenario, "--solver", "ncp-admm", "--out", "out"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let after = std::fs::metadata(&out).unwrap_or_else(|e| panic!("{e}"));
    // The same directory (a mount point cannot be renamed onto), mode and owner kept.
    assert_eq!((after.ino(), after.dev()), (before.ino(), before.dev()));
    assert_eq!(after.mode() & 0o7777, 0o701);
    assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
    assert!(out.join("contactbench.json").is_file());
    no_work_files(&dir);
}

#[test]
fn report_refuses_a_folder_contactbench_did_not_write() {
    let dir = temp("report-foreign");
    let scenario = short_cube(&dir);
    let o = run_in(
        &dir,
        &["run", &scenario, "--solver", "ncp-admm", "--out", "res"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // The same files, without contactbench's marker: the user's copy.
    let mine = dir.join("mine");
    for (rel, text) in tree(&dir.join("res")) {
        if text != "dir" && !rel.starts_with(".contactbench") {
            write(&mine.join(&rel), &text);
        }
    }
    let before = tree(&mine);
    let o = run_in(&dir, &["report", "mine"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(tree(&mine), before);
    assert!(!mine.join("report").exists());
}

#[test]
fn merge_of_two_of_three_shards_names_the_missing_tasks_and_fails() {
    let dir = temp("partial");
    let problems = problems(&dir);
    for k in ["1/3", "2/3"] {
        let o = run_in(
            &dir,
            &[
                "bench-problems",
                &problems,
                "--solver",
                "ncp-admm",
                "--solver",
                "ncp-pgs",
                "--solver",
                "lcp-pgs",
                "--shard",
                k,
                "--out",
                "corpus",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let o = run_in(&dir, &["merge", "corpus"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let said = stderr(&o);
    assert!(
        said.contains("2 of 6 planned tasks have no result"),
        "{said}"
    );
    assert!(
        said.contains("shard 3/3: 2") && said.contains("--partial"),
        "{said}"
    );
    assert!(!dir.join("corpus/report.md").exists());
    let o = run_in(&dir, &["merge", "corpus", "--partial"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report = std::fs::read_to_string(dir.join("corpus/report.md")).unwrap_or_default();
    assert!(
        report.contains("**Partial:** 2 planned tasks have no result"),
        "{report}"
    );
}

#[test]
fn resume_keys_follow_the_problem_content_not_the_path_spelling() {
    let dir = temp("resume");
    let problems = problems(&dir);
    let absolute = dir.join(&problems).display().to_string();
    let results = |d: &Path| std::fs::read_dir(d.join("c/results")).map_or(0, Iterator::count);
    let bench = |path: &str, extra: &[&str]| {
        let mut args = vec!["bench-problems", path, "--solver", "ncp-admm", "--out", "c"];
        args.extend_from_slice(extra);
        let o = run_in(&dir, &args);
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    bench(&problems, &[]);
    assert_eq!(results(&dir), 2);
    let said = bench(&absolute, &[]);
    assert!(said.contains("0 run, 2 already done"), "{said}");
    assert_eq!(results(&dir), 2);
    // A changed problem file is solved again; so is every problem under new settings.
    let sliding = dir.join("problems/sliding.json");
    let text = std::fs::read_to_string(&sliding).unwrap_or_default();
    write(&sliding, &format!("{text}\n"));
    let said = bench(&problems, &[]);
    assert!(said.contains("1 run, 1 already done"), "{said}");
    let said = bench(&problems, &["--max-iter", "77"]);
    assert!(said.contains("2 run, 0 already done"), "{said}");
    // The report counts the plan's tasks once each.
    let report = std::fs::read_to_string(dir.join("c/report.md")).unwrap_or_default();
    assert!(report.contains("| ncp-admm | 2/2 |"), "{report}");
}

#[test]
fn a_resubmitted_slurm_id_runs_its_shard_of_the_first_array() {
    let dir = temp("slurm");
    let problems = problems(&dir);
    let task = |id: &str, count: &str, min: &str, max: &str| {
        let o = bin()
            .args([
                "bench-problems",
                &problems,
                "--solver",
                "ncp-admm",
                "--solver",
                "ncp-pgs",
                "--out",
                "corpus",
            ])
            .env("SLURM_ARRAY_TASK_ID", id)
            .env("SLURM_ARRAY_TASK_COUNT", count)
            .env("SLURM_ARRAY_TASK_MIN", min)
            .env("SLURM_ARRAY_TASK_MAX", max)
            .current_dir(&dir)
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        (o.status.code(), stderr(&o))
    };
    // `--array=1-4`: ids 1 and 3 ran; 2 and 4 failed and are re-submitted with
    // `sbatch --array=2,4` (an array of 2 tasks with ids 2..=4).
    for id in ["1", "3"] {
        let (code, said) = task(id, "4", "1", "4");
        assert_eq!(code, Some(0), "{said}");
    }
    for id in ["2", "4"] {
        let (code, said) = task(id, "2", "2", "4");
        assert_eq!(code, Some(0), "{said}");
        assert!(said.contains(&format!("shard {id}/4")), "{said}");
    }
    let o = run_in(&dir, &["merge", "corpus"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("4 of 4 planned results"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn batch_shards_share_a_folder_resume_and_merge() {
    let dir = temp("batch-shards");
    let scenario = short_cube(&dir);
    let shard = |k: &str| {
        run_in(
            &dir,
            &[
                "batch", &scenario, "--solver", "ncp-admm", "--solver", "lcp-pgs", "--solver",
                "ncp-pgs", "--shard", k, "--out", "all",
            ],
        )
    };
    let o = shard("1/2");
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run_in(&dir, &["merge", "all", "--out", "merged"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("1 of 2 shards have no complete results: 2/2"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.join("merged").exists());
    let o = shard("2/2");
    assert!(o.status.success(), "{}", stderr(&o));
    // A shard run again (a re-submitted array) finds its results and runs nothing.
    let o = shard("2/2");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("nothing to run"), "{}", stderr(&o));
    let o = run_in(&dir, &["merge", "all", "--out", "merged"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let manifest =
        std::fs::read_to_string(dir.join("merged/contactbench.json")).unwrap_or_default();
    let order: Vec<usize> = ["\"ncp-admm\"", "\"lcp-pgs\"", "\"ncp-pgs\""]
        .iter()
        .map(|s| {
            manifest
                .find(&format!("\"path\": \"cube_slide/{}", &s[1..]))
                .unwrap_or(usize::MAX)
        })
        .collect();
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "runs in job order: {manifest}"
    );
    let o = run_in(&dir, &["report", "merged"]);
    assert!(o.status.success(), "{}", stderr(&o));
    no_work_files(&dir);
}

#[cfg(unix)]
#[test]
fn paper_stopped_by_sigterm_leaves_no_lock_nor_staging() {
    let dir = temp("paper-signal");
    let mut child = bin()
        .args(["paper", "--quick", "--only", "tab4", "--out", "p"])
        .current_dir(&dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let staging = |d: &Path| {
        std::fs::read_dir(d).is_ok_and(|entries| {
            entries
                .filter_map(Result::ok)
                .any(|e| e.file_name().to_string_lossy().contains("staging"))
        })
    };
    let started = (0..1200).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(25));
        staging(&dir) || staging(&dir.join("p"))
    });
    assert!(started, "no staging directory appeared");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(killed.success());
    let status = child.wait().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(status.code(), Some(130));
    assert!(!dir.join("p").exists());
    assert_eq!(tree(&dir), BTreeMap::new());
}

#[test]
fn an_unwritable_out_exits_with_2_in_every_command() {
    let dir = temp("unwritable");
    let scenario = short_cube(&dir);
    let problems = problems(&dir);
    // `file/out`: its parent is a file, so nothing can be created there.
    write(&dir.join("file"), "a file");
    let o = run_in(
        &dir,
        &["run", &scenario, "--solver", "ncp-admm", "--out", "res"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let cases: Vec<Vec<&str>> = vec![
        vec![
            "run", &scenario, "--solver", "ncp-admm", "--out", "file/out",
        ],
        vec![
            "batch", &scenario, "--solver", "ncp-admm", "--out", "file/out",
        ],
        vec![
            "sweep", &scenario, "--solver", "ncp-admm", "--dt", "1e-2", "--out", "file/out",
        ],
        vec!["paper", "--quick", "--only", "tab4", "--out", "file/out"],
        vec![
            "bench-problems",
            &problems,
            "--solver",
            "ncp-admm",
            "--out",
            "file/out",
        ],
        vec!["dump", &scenario, "--step", "5", "--out", "file/out.json"],
        vec![
            "batch",
            &scenario,
            "--solver",
            "ncp-admm",
            "--out",
            "b",
            "--write-baseline",
            "file/base.json",
        ],
    ];
    for args in &cases {
        let o = run_in(&dir, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    }
    let o = run_in(
        &dir,
        &[
            "bench-problems",
            &problems,
            "--solver",
            "ncp-admm",
            "--out",
            "c",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run_in(&dir, &["merge", "c", "--out", "file/out"]);
    assert_eq!(o.status.code(), Some(2), "merge: {}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(dir.join("file")).unwrap_or_default(),
        "a file"
    );
}
