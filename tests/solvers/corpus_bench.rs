//! `bench-problems` as a library: a corpus of problem files × solvers, sharded or not, ends
//! in the same judged results; a bad file is a row of errors, not a stop.

use std::path::{Path, PathBuf};

use contactbench::corpus::bench::{bench_problems, merge, BenchOptions, ShardChoice};
use contactbench::corpus::plan::collect;
use contactbench::corpus::report::{build_report, Judge, Row};
use contactbench::corpus::runner::{Budget, TaskResult};
use contactbench::corpus::tasks::Shard;

fn temp_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("contactbench-corpus-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

/// A small corpus: two FCLIB problems (one global, one local), a JSON and an npz problem,
/// and a truncated HDF5 file.
fn corpus() -> PathBuf {
    let dir = temp_dir("inputs");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    for (from, to) in [
        ("fclib/CubeH8.hdf5", "cube_h8.hdf5"),
        ("fclib/local_lmgc46_csc.hdf5", "lmgc46.hdf5"),
        ("sliding_problem.json", "sliding.json"),
        ("fclib/contactbench_style.npz", "random.npz"),
    ] {
        std::fs::copy(data.join(from), dir.join(to)).unwrap_or_else(|e| panic!("{from}: {e}"));
    }
    let Ok(bytes) = std::fs::read(data.join("fclib/CubeH8.hdf5")) else {
        panic!("fixture")
    };
    std::fs::write(dir.join("broken.hdf5"), &bytes[..1000]).unwrap_or_else(|e| panic!("{e}"));
    dir
}

const SOLVERS: [&str; 3] = ["ncp-pgs", "ncp-admm", "ccp-pgs:max_iter=300"];

const BUDGET: Budget = Budget {
    max_iter: None,
    timeout: 60.0,
};

fn quiet(_: &TaskResult) {}

/// Everything of a judged row but its wall time.
fn timeless(row: &Row) -> String {
    let mut r = row.result.clone();
    r.solve_time_s = None;
    format!(
        "{r:?} {:e} {} {:?}",
        row.criterion_value, row.solved, row.distance_to_best
    )
}

fn options(shard: ShardChoice) -> BenchOptions {
    BenchOptions {
        solvers: SOLVERS.iter().map(|s| s.to_string()).collect(),
        budget: BUDGET,
        shard,
        threads: 2,
        judge: Judge::default(),
    }
}

#[test]
fn three_shards_and_a_merge_equal_one_run() {
    let inputs = vec![corpus()];
    let solvers: Vec<String> = SOLVERS.iter().map(|s| s.to_string()).collect();

    let whole = temp_dir("whole").join("out");
    let outcome = bench_problems(&inputs, &whole, &options(ShardChoice::All), &quiet)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((outcome.problems, outcome.summary.ran), (5, 15));
    assert_eq!(outcome.report, Some(whole.join("report.md")));
    let judge = Judge::default();
    let one = build_report(
        collect(std::slice::from_ref(&whole))
            .unwrap_or_else(|e| panic!("{e}"))
            .results,
        &judge,
    );
    for file in [
        "results.csv",
        "results.json",
        "report.md",
        "profile.png",
        "profile.svg",
        "plan.json",
    ] {
        assert!(whole.join(file).is_file(), "{file}");
    }

    // Three shards, each in its own directory, merged.
    let shard_dirs: Vec<PathBuf> = (1..=3)
        .map(|k| temp_dir(&format!("shard{k}")).join("out"))
        .collect();
    for (k, dir) in (1..=3).zip(&shard_dirs) {
        let shard = ShardChoice::Given(Shard { index: k, count: 3 });
        let outcome =
            bench_problems(&inputs, dir, &options(shard), &quiet).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((outcome.mine, outcome.report), (5, None));
    }
    let merged_dir = temp_dir("merged").join("out");
    let merged =
        merge(&shard_dirs, Some(&merged_dir), &judge, false).unwrap_or_else(|e| panic!("{e}"));
    assert!(merged.missing.is_empty());
    let Some((merged, _)) = merged.report else {
        panic!("no report")
    };
    assert_eq!(merged.problems, one.problems);
    assert_eq!(merged.solvers, solvers);
    let a: Vec<String> = one.rows.iter().map(timeless).collect();
    let b: Vec<String> = merged.rows.iter().map(timeless).collect();
    assert_eq!(a, b);
    for (x, y) in one.summary.iter().zip(&merged.summary) {
        assert_eq!(
            (&x.solver, x.solved, x.converged, x.errors),
            (&y.solver, y.solved, y.converged, y.errors)
        );
    }

    // Resume: a shard run again finds its results and solves nothing.
    let shard = ShardChoice::Given(Shard { index: 2, count: 3 });
    let again = bench_problems(&inputs, &shard_dirs[1], &options(shard), &quiet)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((again.summary.ran, again.summary.skipped), (0, 5));

    // The truncated file is three error rows, out of the counts; every other problem has
    // answers.
    assert_eq!(one.problems.len(), 4);
    assert_eq!(one.unreadable.len(), 1);
    assert!(one.summary.iter().all(|s| s.problems == 4 && s.errors == 0));
    for row in &one.rows {
        let broken = row.result.problem.ends_with("broken.hdf5");
        assert_eq!(row.result.error.is_some(), broken, "{:?}", row.result);
        if broken {
            assert!(!row.solved);
            let error = row.result.error.as_deref().unwrap_or_default();
            assert!(error.contains("broken.hdf5"), "{error}");
        } else {
            assert!(row.result.lambda.is_some());
            assert!(row.distance_to_best.is_some_and(|d| d.is_finite()));
        }
    }
    // The best answer of each problem is at distance 0 from itself.
    for problem in &one.problems {
        if problem.ends_with("broken.hdf5") {
            continue;
        }
        assert!(one
            .rows
            .iter()
            .any(|r| &r.result.problem == problem && r.distance_to_best == Some(0.0)));
    }
}
