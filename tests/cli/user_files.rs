//! A user's files are never lost: `--out` refuses a folder it did not write, keeps the
//! user's files beside its own, replaces its own earlier results only with `--force`,
//! refuses a second writer and names that stay one path component, and leaves no staging
//! directory behind, even when killed or stopped by a signal.

use std::path::Path;
use std::process::Command;

use contactbench::simulation::output::{Replace, Staging, MARKER};

use crate::support::{bin, no_leftovers, run_in, short_cube, stderr, temp};

#[test]
fn a_directory_holding_report_md_survives() {
    let dir = temp("mydocs");
    let docs = dir.join("mydocs");
    std::fs::create_dir_all(docs.join("src")).expect("dirs");
    for (f, text) in [
        ("report.md", "r"),
        ("thesis.tex", "t"),
        ("src/main.rs", "m"),
        ("contactbench.json", "{}"),
    ] {
        std::fs::write(docs.join(f), text).expect("write");
    }
    let scenario = short_cube(&dir, "s.yaml", "name: cube_slide", "name: cube_slide");
    for force in [false, true] {
        let mut args = vec!["run", scenario.to_str().expect("utf8"), "--out", "mydocs"];
        if force {
            args.push("--force");
        }
        let out = run_in(&dir, &args);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("not written by contactbench"),
            "{}",
            stderr(&out)
        );
        for (f, text) in [
            ("report.md", "r"),
            ("thesis.tex", "t"),
            ("src/main.rs", "m"),
            ("contactbench.json", "{}"),
        ] {
            assert_eq!(std::fs::read_to_string(docs.join(f)).expect("kept"), text);
        }
    }
    no_leftovers(&dir);
}

#[test]
fn out_dot_keeps_the_users_file() {
    let dir = temp("dot");
    let scenario = short_cube(&dir, "s.yaml", "name: cube_slide", "name: cube_slide");
    std::fs::write(dir.join("notes.txt"), "mine").expect("write");
    // Earlier results of ours in the directory change nothing.
    let first = run_in(
        &dir,
        &["run", scenario.to_str().expect("utf8"), "--out", "earlier"],
    );
    assert!(first.status.success(), "{}", stderr(&first));
    for out in [".", "./", "..", "earlier/.."] {
        for force in [false, true] {
            let mut args = vec!["run", scenario.to_str().expect("utf8"), "--out", out];
            if force {
                args.push("--force");
            }
            let o = run_in(&dir, &args);
            assert_eq!(o.status.code(), Some(2), "--out {out}: {}", stderr(&o));
        }
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).expect("kept"),
        "mine"
    );
    assert!(dir.join("earlier").join(MARKER).is_file());
    no_leftovers(&dir);
}

#[test]
fn scenario_names_stay_one_safe_component() {
    let dir = temp("names");
    for name in ["..", ".", "/tmp/elsewhere", "a/b", ".hidden"] {
        let scenario = short_cube(
            &dir,
            "s.yaml",
            "name: cube_slide",
            &format!("name: '{name}'"),
        );
        let o = run_in(&dir, &["run", scenario.to_str().expect("utf8")]);
        assert_eq!(o.status.code(), Some(2), "name {name:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("s.yaml:6: name:"),
            "{name:?}: {}",
            stderr(&o)
        );
    }
    assert!(dir.join("s.yaml").is_file());
    assert!(!dir.join("results").exists());
    assert!(!Path::new("/tmp/elsewhere").exists());
}

#[test]
fn duplicate_scenario_names_in_a_batch_are_refused() {
    let dir = temp("dup");
    let a = short_cube(&dir, "a.yaml", "name: cube_slide", "name: same");
    let b = short_cube(&dir, "b.yaml", "name: cube_slide", "name: same");
    let o = run_in(
        &dir,
        &[
            "batch",
            a.to_str().expect("utf8"),
            b.to_str().expect("utf8"),
            "--out",
            "out",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("b.yaml:6: name:") && stderr(&o).contains("a.yaml"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.join("out").exists());
}

#[test]
fn a_second_writer_of_one_directory_is_refused() {
    let dir = temp("lock");
    let target = dir.join("out");
    let held = Staging::create(&target, Replace::Never).expect("first writer");
    let scenario = short_cube(&dir, "s.yaml", "name: cube_slide", "name: cube_slide");
    let o = run_in(
        &dir,
        &["run", scenario.to_str().expect("utf8"), "--out", "out"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("another contactbench process"),
        "{}",
        stderr(&o)
    );
    std::fs::write(held.path().join("mine.txt"), "first").expect("write");
    held.publish().expect("the first writer publishes");
    assert_eq!(
        std::fs::read_to_string(target.join("mine.txt")).expect("kept"),
        "first"
    );
    no_leftovers(&dir);
}

#[test]
fn earlier_results_are_replaced_only_with_force_and_only_if_ours() {
    let dir = temp("force");
    let scenario = short_cube(&dir, "s.yaml", "name: cube_slide", "name: cube_slide");
    let s = scenario.to_str().expect("utf8");
    assert!(run_in(&dir, &["run", s, "--out", "out"]).status.success());
    let again = run_in(&dir, &["run", s, "--out", "out"]);
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(stderr(&again).contains("--force"), "{}", stderr(&again));
    assert!(run_in(&dir, &["run", s, "--out", "out", "--force"])
        .status
        .success());
    // A report (an output of ours nested in the results, with its own marker) is
    // replaced only with --force, and does not block replacing the results.
    assert!(run_in(&dir, &["report", "out"]).status.success());
    assert_eq!(run_in(&dir, &["report", "out"]).status.code(), Some(2));
    assert!(run_in(&dir, &["report", "out", "--force"]).status.success());
    assert!(run_in(&dir, &["run", s, "--out", "out", "--force"])
        .status
        .success());
    assert!(!dir.join("out/report").exists());
    std::fs::write(dir.join("out/cube_slide/notes.txt"), "mine").expect("write");
    let o = run_in(&dir, &["run", s, "--out", "out", "--force"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("notes.txt"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(dir.join("out/cube_slide/notes.txt")).expect("kept"),
        "mine"
    );
    // Without --out, each run gets a new directory.
    for expected in ["results/cube_slide", "results/cube_slide-2"] {
        let o = run_in(&dir, &["run", s]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(String::from_utf8_lossy(&o.stdout).contains(&format!("results: {expected}")));
    }
    no_leftovers(&dir);
    no_leftovers(&dir.join("results"));
}

#[test]
fn staging_left_by_a_killed_process_is_removed_by_the_next_writer() {
    let dir = temp("stale");
    // What SIGKILL leaves: the target it created, holding a stamped staging directory
    // and a signed lock file nobody holds.
    let staging = dir.join("out/.contactbench-staging-dead");
    std::fs::create_dir_all(staging.join("cube_slide")).expect("dirs");
    std::fs::write(
        staging.join(".contactbench-staging"),
        "contactbench staging directory\n",
    )
    .expect("stamp");
    std::fs::write(
        dir.join("out/.contactbench-lock"),
        "contactbench output lock\n",
    )
    .expect("lock");
    let scenario = short_cube(&dir, "s.yaml", "name: cube_slide", "name: cube_slide");
    let o = run_in(
        &dir,
        &["run", scenario.to_str().expect("utf8"), "--out", "out"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.join("out").join(MARKER).is_file());
    no_leftovers(&dir);
}

#[cfg(unix)]
#[test]
fn sigterm_and_sigint_leave_no_staging_directory() {
    for signal in ["-TERM", "-INT"] {
        let dir = temp(&format!("signal{signal}"));
        let scenario = short_cube(&dir, "s.yaml", "duration: 0.5", "duration: 1000.0");
        let mut child = bin()
            .args([
                "run",
                scenario.to_str().expect("utf8"),
                "--out",
                "out",
                "--solver",
                "ncp-admm",
            ])
            .current_dir(&dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        let staged = (0..400).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(25));
            std::fs::read_dir(dir.join("out")).is_ok_and(|entries| {
                entries.filter_map(Result::ok).any(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .contains(".contactbench-staging-")
                })
            })
        });
        assert!(staged, "no staging directory appeared");
        let killed = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .expect("kill");
        assert!(killed.success());
        let status = child.wait().expect("wait");
        assert_eq!(status.code(), Some(130), "{signal}");
        assert!(!dir.join("out").exists());
        no_leftovers(&dir);
    }
}
