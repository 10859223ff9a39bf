//! Output fuzzing: random trees under and beside `--out` (user files, symbolic links to
//! files and folders outside, foreign and nested markers, lock-like and staging-like
//! names, empty folders, earlier outputs of ours changed by hand), then a command that
//! writes there, through its library entry point (and now and then the binary). Every
//! entry of the user (file content, link target, folder) must be as it was after the
//! command, whether it succeeded or was refused, and nothing of ours may be left behind.
//!
//! `cargo test --test cli output_fuzz::` runs `DEFAULT_CASES` cases (what CI runs);
//! `CONTACTBENCH_FUZZ_CASES=N` runs N, `CONTACTBENCH_FUZZ_SEED=S` another sequence. A
//! failing case prints its number and seed and keeps its folder.

use std::collections::{BTreeMap, BTreeSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::Command;

use contactbench::corpus::bench::{bench_problems, merge, BenchOptions, ShardChoice};
use contactbench::corpus::report::Judge;
use contactbench::corpus::runner::{Budget, TaskResult};
use contactbench::corpus::tasks::Shard;
use contactbench::output::{write_file, OutputMarker, Replace, SharedDir, Staging, MARKER};
use contactbench::report::make_report_with;
use contactbench::simulation::batch::{jobs_overriding, run_batch, Job, Runner};
use contactbench::simulation::runner::simulate_into;
use contactbench::simulation::Scenario;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Cases when `CONTACTBENCH_FUZZ_CASES` is not set.
const DEFAULT_CASES: usize = 300;

/// One case in `BINARY_EVERY` runs the binary instead of the library.
const BINARY_EVERY: usize = 50;

fn cases() -> usize {
    std::env::var("CONTACTBENCH_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_CASES)
}

fn seed() -> u64 {
    std::env::var("CONTACTBENCH_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(29)
}

/// What a path holds.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    File(Vec<u8>),
    Link(PathBuf),
    Dir,
}

/// Every entry under `root` (not following links), by path relative to it.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Entry> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            let rel = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let what = if meta.file_type().is_symlink() {
                Entry::Link(std::fs::read_link(&path).unwrap_or_default())
            } else if meta.is_dir() {
                stack.push(path);
                Entry::Dir
            } else {
                Entry::File(std::fs::read(&path).unwrap_or_default())
            };
            out.insert(rel, what);
        }
    }
    out
}

/// The command a case runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `run`/`batch`: `run_batch`.
    Run,
    /// `sweep --out`, `paper`: a staging directory published whole.
    Whole,
    /// `report`: `RESULTS/report/`, nested.
    Report,
    /// `bench-problems --shard 1/2`: the shared store, no report.
    BenchShard,
    /// `bench-problems`: store and report.
    BenchWhole,
    /// `merge`: a report into the first folder or another.
    Merge,
    /// `dump`, `--write-baseline`: one file.
    File,
    /// The binary's `run`.
    Binary,
}

const KINDS: [(Kind, u32); 7] = [
    (Kind::Run, 30),
    (Kind::Whole, 25),
    (Kind::Report, 3),
    (Kind::BenchShard, 20),
    (Kind::BenchWhole, 3),
    (Kind::Merge, 3),
    (Kind::File, 16),
];

/// What the fuzzer's fixtures need once.
struct Fixtures {
    jobs: Vec<Job>,
    problems: PathBuf,
}

fn fixtures(root: &Path) -> Fixtures {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/cube_slide.yaml");
    let scenario = Scenario::load(&path, &["simulation.duration=0.004".into()])
        .unwrap_or_else(|e| panic!("{e}"));
    let jobs = jobs_overriding(vec![scenario], &["ncp-admm".into(), "lcp-pgs".into()])
        .unwrap_or_else(|e| panic!("{e}"));
    let problems = root.join("problems");
    std::fs::create_dir_all(&problems).unwrap_or_else(|e| panic!("{e}"));
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sliding_problem.json"),
        problems.join("sliding.json"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    Fixtures { jobs, problems }
}

fn runner() -> &'static Runner {
    &|scenario, solver, recorder| {
        simulate_into(scenario, solver, recorder).map_err(|e| e.to_string())
    }
}

fn options(shard: ShardChoice) -> BenchOptions {
    BenchOptions {
        solvers: vec!["ncp-admm".into()],
        budget: Budget {
            max_iter: None,
            timeout: 10.0,
        },
        shard,
        threads: 1,
        judge: Judge::default(),
    }
}

fn quiet(_: &TaskResult) {}

/// Runs the command of `kind` into `out` (in `work`); errors are answers too.
fn command(kind: Kind, fx: &Fixtures, work: &Path, out: &Path, force: bool) -> bool {
    let replace = if force { Replace::Ours } else { Replace::Never };
    match kind {
        Kind::Run => run_batch(&fx.jobs, out, runner(), false, replace).is_ok(),
        Kind::Whole => Staging::create(out, replace)
            .and_then(|s| {
                std::fs::write(s.path().join("sweep.md"), "| a |\n").ok();
                std::fs::create_dir_all(s.path().join("fig12")).ok();
                std::fs::write(s.path().join("fig12/README.md"), "page").ok();
                s.publish()
            })
            .is_ok(),
        Kind::Report => make_report_with(out, replace).is_ok(),
        Kind::BenchShard => bench_problems(
            std::slice::from_ref(&fx.problems),
            out,
            &options(ShardChoice::Given(Shard { index: 1, count: 2 })),
            &quiet,
        )
        .is_ok(),
        Kind::BenchWhole => bench_problems(
            std::slice::from_ref(&fx.problems),
            out,
            &options(ShardChoice::All),
            &quiet,
        )
        .is_ok(),
        Kind::Merge => {
            let other = work.join("merged");
            let target = force.then_some(other.as_path());
            merge(&[out.to_path_buf()], target, &Judge::default(), true).is_ok()
        }
        Kind::File => write_file(out, b"{\"lambda\": [0, 0, 1]}\n", force).is_ok(),
        Kind::Binary => {
            let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/cube_slide.yaml");
            let mut args = vec![
                "run".to_string(),
                scenario.display().to_string(),
                "--set".into(),
                "simulation.duration=0.004".into(),
                "--solver".into(),
                "ncp-admm".into(),
                "--out".into(),
                out.display().to_string(),
            ];
            if force {
                args.push("--force".into());
            }
            Command::new(env!("CARGO_BIN_EXE_contactbench"))
                .args(&args)
                .current_dir(work)
                .output()
                .is_ok_and(|o| o.status.success())
        }
    }
}

/// Names a fuzzed tree draws from: our files' names, look-alikes of our work files, and
/// ordinary names.
const NAMES: [&str; 22] = [
    "report.md",
    "results.csv",
    "results.json",
    "profile.png",
    "profile.svg",
    "contactbench.json",
    "plan.json",
    "sweep.md",
    "README.md",
    "notes.txt",
    ".notes.lock",
    ".out.lock",
    ".contactbench-lock",
    ".contactbench-tmp-7",
    ".contactbench-staging",
    "cube_slide",
    "ncp-admm",
    "results",
    "report",
    "fig12",
    "thesis.tex",
    "steps.csv",
];

const DIR_NAMES: [&str; 7] = [
    ".data.staging-keep",
    ".out.staging-backup",
    ".contactbench-staging-old",
    "cube_slide",
    "results",
    "report",
    "mine",
];

fn pick<'a>(rng: &mut ChaCha8Rng, names: &[&'a str]) -> &'a str {
    names[rng.random_range(0..names.len())]
}

/// A marker that is not ours: garbage, the old format, one listing a file with a wrong
/// digest, one listing nothing, or one nested elsewhere.
fn foreign_marker(rng: &mut ChaCha8Rng) -> String {
    match rng.random_range(0..5) {
        0 => "{not json".into(),
        4 => r#"{"format": 2, "run_id": "empty", "created_by": "contactbench 0.1.0", "files": []}"#.into(),
        1 => r#"{"run_id": "x", "created_by": "contactbench 0.1.0", "files": ["notes.txt", "report.md"]}"#.into(),
        2 => format!(
            r#"{{"format": 2, "run_id": "forged", "created_by": "contactbench 0.1.0", "files": [{{"path": "{}", "bytes": 4, "sha256": "{}"}}]}}"#,
            pick(rng, &NAMES),
            "0".repeat(64)
        ),
        _ => format!(
            r#"{{"format": 2, "run_id": "r", "created_by": "x", "files": [], "nested_in": {{"run_id": "{}", "path": "{}"}}}}"#,
            rng.random_range(0..1000),
            pick(rng, &DIR_NAMES)
        ),
    }
}

/// Adds up to `n` random entries under `dir` (which exists): files, links to `outside`,
/// empty folders, folders with a foreign marker, look-alike names.
fn scatter(rng: &mut ChaCha8Rng, dir: &Path, outside: &Path, n: usize, depth: usize) {
    for _ in 0..n {
        let roll = rng.random_range(0..10);
        if roll < 4 {
            let path = dir.join(pick(rng, &NAMES));
            if std::fs::symlink_metadata(&path).is_err() {
                let text = format!("user {}", rng.random_range(0..1_000_000));
                std::fs::write(&path, text).ok();
            }
        } else if roll < 6 {
            let path = dir.join(pick(rng, &NAMES));
            let target = if rng.random_bool(0.7) {
                outside.join(format!("file{}", rng.random_range(0..3)))
            } else {
                outside.join("folder")
            };
            if std::fs::symlink_metadata(&path).is_err() {
                symlink(&target, &path);
            }
        } else if roll < 8 && depth < 3 {
            let sub = dir.join(pick(rng, &DIR_NAMES));
            if std::fs::create_dir(&sub).is_ok() && rng.random_bool(0.6) {
                {
                    let n = rng.random_range(0..3);
                    scatter(rng, &sub, outside, n, depth + 1)
                };
            }
        } else if roll < 9 {
            let path = dir.join(MARKER);
            if std::fs::symlink_metadata(&path).is_err() {
                std::fs::write(&path, foreign_marker(rng)).ok();
            }
        } else {
            let sub = dir.join(pick(rng, &DIR_NAMES));
            if std::fs::create_dir(&sub).is_ok() {
                std::fs::write(sub.join(MARKER), foreign_marker(rng)).ok();
                std::fs::write(sub.join("steps.csv"), "step\n0\n").ok();
            }
        }
    }
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) {
    std::os::unix::fs::symlink(target, link).ok();
}

#[cfg(not(unix))]
fn symlink(_target: &Path, _link: &Path) {}

/// Changes an output of ours by hand: a file edited, replaced by a link, or removed, an
/// output of ours moved inside, user files added.
fn tamper(rng: &mut ChaCha8Rng, out: &Path, outside: &Path, moved: Option<&Path>) {
    let files: Vec<PathBuf> = snapshot(out)
        .into_iter()
        .filter(|(_, e)| matches!(e, Entry::File(_)))
        .map(|(p, _)| out.join(p))
        .collect();
    for _ in 0..rng.random_range(0..3) {
        if files.is_empty() {
            break;
        }
        let file = &files[rng.random_range(0..files.len())];
        match rng.random_range(0..3) {
            0 => {
                std::fs::write(file, "edited by hand").ok();
            }
            1 => {
                if std::fs::remove_file(file).is_ok() {
                    symlink(&outside.join("file0"), file);
                }
            }
            _ => {
                std::fs::remove_file(file).ok();
            }
        }
    }
    if let Some(moved) = moved {
        let name = pick(rng, &DIR_NAMES);
        std::fs::rename(moved, out.join(name)).ok();
    }
    if rng.random_bool(0.5) {
        {
            let n = rng.random_range(1..4);
            scatter(rng, out, outside, n, 1)
        };
    }
}

/// Paths (relative to the case) that the case's tree holds and that are ours: the files of
/// an output of ours written by the setup, untouched since.
type Ours = BTreeSet<PathBuf>;

fn ours_of(case: &Path, out: &Path) -> Ours {
    snapshot(out)
        .into_keys()
        .map(|p| out.strip_prefix(case).unwrap_or(out).join(p))
        .collect()
}

/// One case; returns its command and whether it wrote.
fn run_case(k: usize, seed: u64, fx: &Fixtures, root: &Path) -> (Kind, bool) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let case = root.join(format!("case-{k}"));
    let _ = std::fs::remove_dir_all(&case);
    let work = case.join("work");
    let outside = case.join("outside");
    std::fs::create_dir_all(outside.join("folder")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(&work).unwrap_or_else(|e| panic!("{e}"));
    for i in 0..3 {
        std::fs::write(outside.join(format!("file{i}")), format!("outside {i}")).ok();
    }
    std::fs::write(outside.join("folder/inside"), "deep").ok();

    let kind = if k % BINARY_EVERY == BINARY_EVERY - 1 {
        Kind::Binary
    } else {
        let total: u32 = KINDS.iter().map(|(_, w)| w).sum();
        let mut roll = rng.random_range(0..total);
        KINDS
            .iter()
            .find(|(_, w)| {
                let hit = roll < *w;
                roll = roll.saturating_sub(*w);
                hit
            })
            .map_or(Kind::Run, |(kind, _)| *kind)
    };
    let force = rng.random_bool(0.6);
    // What writes the earlier output of ours, and where the command writes.
    let (setup, out): (Kind, PathBuf) = match kind {
        Kind::File => (Kind::File, work.join("problem.json")),
        Kind::Report => (Kind::Run, work.join("res")),
        Kind::Merge => (Kind::BenchShard, work.join("out")),
        Kind::Binary => (Kind::Run, work.join("out")),
        other => (other, work.join("out")),
    };
    // Beside the target: look-alikes of our names.
    if rng.random_bool(0.5) {
        {
            let n = rng.random_range(1..4);
            scatter(&mut rng, &work, &outside, n, 1)
        };
    }
    let mut ours = Ours::new();
    let mut setup_out = out.clone();
    match rng.random_range(0..8) {
        0 => {}
        1 => {
            std::fs::create_dir(&out).ok();
        }
        2 => {
            std::fs::create_dir(&out).ok();
            {
                let n = rng.random_range(1..6);
                scatter(&mut rng, &out, &outside, n, 1)
            };
        }
        3 => symlink(
            &if kind == Kind::File {
                outside.join("file1")
            } else {
                outside.join("folder")
            },
            &out,
        ),
        4 if kind != Kind::File => {
            std::fs::write(&out, "a file where a folder goes").ok();
        }
        _ => {
            // An earlier output of ours (the kind of the setup, or another one), perhaps
            // changed by hand, perhaps with another output of ours moved inside.
            let other = pick(&mut rng, &["Run", "Whole", "BenchShard"]);
            let setup = match (rng.random_bool(0.8), other) {
                (true, _) => setup,
                (false, "Run") => Kind::Run,
                (false, "Whole") => Kind::Whole,
                _ => Kind::BenchShard,
            };
            command(setup, fx, &work, &out, false);
            if kind == Kind::Report && rng.random_bool(0.5) {
                make_report_with(&out, Replace::Never).ok();
            }
            ours = ours_of(&case, &out);
            let moved = if rng.random_bool(0.3) && kind != Kind::File {
                let elsewhere = work.join("elsewhere");
                command(Kind::Run, fx, &work, &elsewhere, false);
                Some(elsewhere)
            } else {
                None
            };
            if rng.random_bool(0.6) {
                let before = snapshot(&case);
                tamper(&mut rng, &out, &outside, moved.as_deref());
                // What tampering changed is the user's now.
                let after = snapshot(&case);
                ours.retain(|p| before.get(p) == after.get(p));
            } else if let Some(moved) = moved {
                std::fs::remove_dir_all(moved).ok();
            }
            setup_out = out.clone();
        }
    }
    if kind == Kind::Report {
        // The report's own target inside the results may hold anything too.
        let report = setup_out.join("report");
        if setup_out.is_dir() && std::fs::symlink_metadata(&report).is_err() && rng.random_bool(0.3)
        {
            std::fs::create_dir(&report).ok();
            {
                let n = rng.random_range(0..3);
                scatter(&mut rng, &report, &outside, n, 2)
            };
        }
    }
    let before = snapshot(&case);
    let user: BTreeMap<PathBuf, Entry> = before
        .iter()
        .filter(|(p, _)| !ours.contains(*p))
        .map(|(p, e)| (p.clone(), e.clone()))
        .collect();
    let target_absent = std::fs::symlink_metadata(&out).is_err();

    let ok = catch_unwind(AssertUnwindSafe(|| command(kind, fx, &work, &out, force)))
        .unwrap_or_else(|_| panic!("case {k} (seed {seed}): {kind:?} panicked"));

    let after = snapshot(&case);
    for (path, entry) in &user {
        assert_eq!(
            after.get(path),
            Some(entry),
            "case {k} (seed {seed}): {kind:?} force={force} ok={ok}: the user's {} changed \
             (kept in {})",
            path.display(),
            case.display()
        );
    }
    let left: Vec<&PathBuf> = after
        .keys()
        .filter(|p| !user.contains_key(*p))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(".contactbench-") && n != MARKER)
        })
        .collect();
    assert!(
        left.is_empty(),
        "case {k} (seed {seed}): {kind:?} left {left:?} (kept in {})",
        case.display()
    );
    let written = match kind {
        Kind::File => ok,
        Kind::Report => ok && OutputMarker::read(&out.join("report")).is_ok(),
        Kind::Merge => ok,
        _ => ok && OutputMarker::read(&out).is_ok(),
    };
    assert_eq!(
        ok, written,
        "case {k} (seed {seed}): {kind:?} succeeded without a marker"
    );
    if !ok && target_absent && !matches!(kind, Kind::BenchShard | Kind::BenchWhole) {
        assert!(
            std::fs::symlink_metadata(&out).is_err(),
            "case {k} (seed {seed}): {kind:?} failed and left {}",
            out.display()
        );
    }
    let _ = std::fs::remove_dir_all(&case);
    (kind, ok)
}

#[test]
fn no_user_file_changes_under_random_trees() {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("contactbench-output-fuzz-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap_or_else(|e| panic!("{e}"));
    let fx = fixtures(&root);
    let (n, seed) = (cases(), seed());
    let started = std::time::Instant::now();
    let mut tally: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for k in 0..n {
        let (kind, ok) = run_case(k, seed, &fx, &root);
        let entry = tally.entry(format!("{kind:?}")).or_default();
        if ok {
            entry.0 += 1;
        } else {
            entry.1 += 1;
        }
    }
    let succeeded: usize = tally.values().map(|(w, _)| w).sum();
    println!(
        "output fuzzing: {n} cases (seed {seed}), {succeeded} written, {} refused, 0 user \
         entries changed, {:.1} s",
        n - succeeded,
        started.elapsed().as_secs_f64()
    );
    for (kind, (written, refused)) in &tally {
        println!("  {kind:<10} {written:>6} written {refused:>6} refused");
    }
    // Both answers are exercised: writing and refusing.
    assert!(
        succeeded > n / 10 && n - succeeded > n / 10,
        "{succeeded} of {n} written"
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_shared_store_refuses_what_is_not_a_store_of_ours() {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("contactbench-output-store-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("user")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(root.join("user/plan.json"), "mine").unwrap_or_else(|e| panic!("{e}"));
    assert!(SharedDir::open(&root.join("user"), &["results", "plan.json"]).is_err());
    assert_eq!(
        std::fs::read_to_string(root.join("user/plan.json")).unwrap_or_default(),
        "mine"
    );
    let store = SharedDir::open(&root.join("store"), &["results", "plan.json"])
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(store.write("results/a.json", b"1", false).is_ok_and(|w| w));
    assert!(store.write("results/a.json", b"2", false).is_ok_and(|w| !w));
    assert!(store.write("notes.txt", b"x", false).is_err());
    assert!(store.write("results/../notes.txt", b"x", false).is_err());
    drop(store);
    // Another kind of output is not a store: replacing it whole is refused too.
    assert!(SharedDir::open(&root.join("store"), &["shards.json"]).is_err());
    assert!(Staging::create(&root.join("store"), Replace::Ours).is_err());
    let _ = std::fs::remove_dir_all(&root);
}
