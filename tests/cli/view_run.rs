//! `contactbench view RUN`: a run folder records the scenario file and overrides it was
//! made from, so that `view` replays the same world with the same solver; a folder that is
//! not a run is refused saying where the runs are.

use contactbench::simulation::recorder::{read_json, RunSummary};

use crate::support::{run_in, scenario_file, stderr, temp};

#[test]
fn a_run_folder_records_its_scenario_and_view_exports_it() {
    let dir = temp("view-run");
    let scenario = scenario_file("cube_slide.yaml");
    let run = run_in(
        &dir,
        &[
            "run",
            &scenario,
            "--solver",
            "ncp-admm",
            "--set",
            "simulation.duration=0.02",
            "--out",
            "results",
        ],
    );
    assert!(run.status.success(), "{}", stderr(&run));
    let run_dir = dir.join("results/cube_slide/ncp-admm");
    let summary: RunSummary = read_json(&run_dir.join("summary.json")).expect("summary");
    let origin = summary.origin.expect("the run records its scenario");
    assert_eq!(origin.file, std::path::PathBuf::from(&scenario));
    assert_eq!(
        origin.overrides,
        vec!["simulation.duration=0.02".to_string()]
    );
    let view = run_in(
        &dir,
        &["view", "results/cube_slide/ncp-admm", "--out", "cube.glb"],
    );
    assert!(view.status.success(), "{}", stderr(&view));
    let text = String::from_utf8_lossy(&view.stdout);
    assert!(text.contains("cube.glb: 21 frames"), "{text}");
    let root = run_in(&dir, &["view", "results", "--out", "root.glb"]);
    assert!(!root.status.success());
    let text = stderr(&root);
    assert!(text.contains("holds the results of 1 runs"), "{text}");
    assert!(text.contains("cube_slide/ncp-admm"), "{text}");
}

#[test]
fn view_of_a_folder_that_is_not_a_run_says_where_the_runs_are() {
    let dir = temp("view-not-a-run");
    std::fs::create_dir_all(dir.join("empty")).expect("dir");
    let out = run_in(&dir, &["view", "empty", "--out", "x.glb"]);
    assert!(!out.status.success());
    let text = stderr(&out);
    assert!(text.contains("empty: not a run folder"), "{text}");
    assert!(text.contains("OUT/<scenario>/<solver>"), "{text}");
    assert!(!dir.join("x.glb").exists());
}
