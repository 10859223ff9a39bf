//! `contactbench paper`: an experiment writes its page, figures and data; verdicts come
//! from the numbers; bad selections and foreign output directories are refused.

use std::path::PathBuf;

use contactbench::dynamics::{crba, Data};
use contactbench::paper::claims::{Claim, Verdict};
use contactbench::paper::locked::lock_joints;
use contactbench::paper::verdicts::Verdicts;
use contactbench::paper::{experiments, run_paper, Options, PaperError};
use contactbench::simulation::{Scenario, World};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("contactbench-paper-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn every_table_and_figure_of_section_iv_has_an_experiment() {
    let _environment = crate::environment_lock();
    let ids = experiments::ids();
    for id in [
        "tab3", "tab4", "fig09", "fig10", "fig11", "fig12", "fig13", "fig14", "fig15", "fig16",
        "fig17", "fig18",
    ] {
        assert!(ids.contains(&id), "{id} missing from {ids:?}");
    }
}

#[test]
fn fig12_writes_its_page_figures_and_data() {
    let _environment = crate::environment_lock();
    let out = temp_dir("fig12");
    let options = Options {
        only: vec!["fig12".into()],
        quick: true,
        force: false,
        earlier: None,
    };
    let outcome = run_paper(&out, &options).expect("runs");
    assert!(outcome.errors().is_empty(), "{:?}", outcome.errors());
    for file in [
        "README.md",
        "paper.json",
        "fig12/README.md",
        "fig12/fig12.png",
        "fig12/fig12.svg",
        "fig12/fig12.csv",
    ] {
        let meta = out
            .join(file)
            .metadata()
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(meta.len() > 100, "{file} is nearly empty");
    }
    let page = std::fs::read_to_string(out.join("fig12/README.md")).expect("page");
    assert!(page.contains(
        "| claim (paper) | computed test | threshold from | measured | margin | verdict |"
    ));
    assert!(page.contains("## Protocol beside ContactBench's scripts"));
    assert!(page.contains("| quantity | paper | ours | ours / paper |"));
    let summary = std::fs::read_to_string(out.join("README.md")).expect("summary");
    assert!(summary.contains("[fig12](fig12/README.md)"));
    assert!(
        !summary.contains("## Not reproduced"),
        "every table and figure of the paper has an experiment"
    );
    // The per-contact solvers fail on the 1e6 stack where the ADMM does not: the page's
    // first claim is computed from those runs.
    let line = &outcome.lines[0];
    let claims = &line.outcome.as_ref().expect("page").claims;
    assert_eq!(claims[0].verdict, Verdict::Holds, "{:?}", claims[0]);

    // Running again is refused without `force`, and replaces its own output with it.
    assert!(matches!(
        run_paper(&out, &options),
        Err(PaperError::Record(_))
    ));
    let again = Options {
        force: true,
        ..options
    };
    run_paper(&out, &again).expect("replaces its own output");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn unknown_experiment_and_foreign_directory_are_refused() {
    let _environment = crate::environment_lock();
    let out = temp_dir("refused");
    let bad = Options {
        only: vec!["fig99".into()],
        quick: true,
        force: true,
        earlier: None,
    };
    assert!(matches!(
        run_paper(&out, &bad),
        Err(PaperError::UnknownExperiment(_))
    ));
    std::fs::create_dir_all(&out).expect("dir");
    std::fs::write(out.join("notes.txt"), "mine").expect("file");
    let fig = Options {
        only: vec!["fig09".into()],
        quick: true,
        force: true,
        earlier: None,
    };
    let refused = run_paper(&out, &fig);
    assert!(
        matches!(&refused, Err(PaperError::Record(_)))
            && refused
                .as_ref()
                .is_err_and(|e| e.to_string().contains("not written by contactbench")),
        "{refused:?}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).expect("kept"),
        "mine"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_claim_cannot_hold_without_its_numbers() {
    let _environment = crate::environment_lock();
    let c = Claim::ratio_at_least("c", ("a", f64::NAN), ("b", 1.0), 10.0);
    assert!(matches!(c.verdict, Verdict::NotEvaluated(_)));
    let c = Claim::ratio_at_least("c", ("a", 5.0), ("b", 0.0), 10.0);
    assert!(matches!(c.verdict, Verdict::NotEvaluated(_)));
}

#[test]
fn the_summary_counts_every_verdict_and_says_why_a_claim_does_not_hold() {
    let _environment = crate::environment_lock();
    let out = temp_dir("fig09");
    let options = Options {
        only: vec!["fig09".into()],
        quick: true,
        force: false,
        earlier: None,
    };
    let outcome = run_paper(&out, &options).expect("runs");
    let summary = std::fs::read_to_string(out.join("README.md")).expect("summary");
    assert!(summary.contains("| experiment | paper | hold | do not hold | not measurable |"));
    assert!(summary.contains("at commit `"), "the summary is stamped");
    assert!(summary.contains("--expect-verdicts") || summary.contains("paper_verdicts_quick"));
    // Launched along y, the LCP's pyramid has a facet along the motion: no deviation,
    // a finding with its evidence; its NCP control compares two round-off values.
    let page = &outcome.lines[0].outcome.as_ref().expect("page");
    let along_y = &page.claims[0];
    assert_eq!(along_y.verdict, Verdict::DoesNotHold, "{along_y:?}");
    assert!(along_y.why.is_some());
    assert!(summary.contains("## Claims that do not hold, and why"));
    assert!(!summary.contains("not explained"), "{summary}");

    // The verdict file reads back and matches its own run; a changed verdict is reported.
    let written = Verdicts::read(&out.join("paper.json")).expect("verdicts");
    assert!(outcome.verdicts.differences(&written).is_empty());
    let mut changed = written.clone();
    changed.experiments[0].claims[0].verdict = "holds".into();
    assert_eq!(outcome.verdicts.differences(&changed).len(), 1);

    // Beside an earlier run, the page lists the verdict that differs and why, and the
    // output keeps the earlier verdicts it was compared with.
    let beside = temp_dir("fig09-earlier");
    let compared = Options {
        earlier: Some(changed.clone()),
        ..options
    };
    run_paper(&beside, &compared).expect("runs");
    let page = std::fs::read_to_string(beside.join("fig09/README.md")).expect("page");
    assert!(
        page.contains("## Verdicts beside the earlier run (commit `"),
        "{page}"
    );
    assert!(
        page.contains("1 have the same verdict now and 1 a different one"),
        "{page}"
    );
    assert!(page.contains("| holds ("), "{page}");
    assert!(page.contains("the same test, the numbers moved"), "{page}");
    let summary = std::fs::read_to_string(beside.join("README.md")).expect("summary");
    assert!(
        summary.contains("1 of its 2 earlier claims have a different verdict now"),
        "{summary}"
    );
    assert_eq!(
        Verdicts::read(&beside.join("earlier.json")).expect("copy"),
        changed
    );
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&beside);
}

#[test]
fn a_locked_talos_is_one_rigid_body_with_its_composite_inertia() {
    let _environment = crate::environment_lock();
    let text = include_str!("../../scenarios/paper/talos_push.yaml");
    let scenario =
        Scenario::from_yaml(text, std::path::Path::new("talos_push.yaml"), &[]).expect("scenario");
    let world = World::build(&scenario).expect("world");
    let locked = lock_joints(&world).expect("locks");
    assert_eq!(locked.model.nv(), 6);
    assert!((locked.model.total_mass() - world.model.total_mass()).abs() < 1e-9);
    assert_eq!(locked.objects.len(), world.objects.len());
    // The locked body's mass matrix is the articulated robot's composite inertia at q0:
    // the base block of its joint-space mass matrix.
    let mut full = Data::new(&world.model);
    let m_full = crba(&world.model, &mut full, &world.q0)
        .expect("crba")
        .clone();
    let mut rigid = Data::new(&locked.model);
    let m_rigid = crba(&locked.model, &mut rigid, &locked.q0).expect("crba");
    let base = m_full.view((0, 0), (6, 6));
    let error = (m_rigid - base).abs().max();
    assert!(error < 1e-9 * base.abs().max(), "{error}");
}

#[test]
fn the_paper_command_fails_when_a_verdict_differs_from_the_expected_file() {
    let _environment = crate::environment_lock();
    let out = temp_dir("expect");
    let run = |dir: &str, expect: Option<&std::path::Path>| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_contactbench"));
        command.args(["paper", "--only", "fig09", "--quick", "--out"]);
        command.arg(out.join(dir));
        if let Some(file) = expect {
            command.arg("--expect-verdicts").arg(file);
        }
        command.output().expect("the binary runs")
    };
    let first = run("first", None);
    assert!(first.status.success(), "{first:?}");
    let written = out.join("first/paper.json");
    let same = run("same", Some(&written));
    assert!(same.status.success(), "{same:?}");

    let mut changed = Verdicts::read(&written).expect("verdicts");
    changed.experiments[0].claims[0].verdict = "holds".into();
    let file = out.join("changed.json");
    std::fs::write(&file, serde_json::to_string(&changed).expect("json")).expect("file");
    let differs = run("differs", Some(&file));
    assert_eq!(differs.status.code(), Some(1), "{differs:?}");
    let stderr = String::from_utf8_lossy(&differs.stderr);
    assert!(stderr.contains("verdict changed: fig09"), "{stderr}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn the_committed_ci_verdicts_are_a_quick_run_of_every_experiment() {
    let _environment = crate::environment_lock();
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/paper_verdicts_quick.json");
    let committed = Verdicts::read(&path).expect("the CI verdict file reads");
    assert!(committed.quick);
    let ids: Vec<&str> = committed
        .experiments
        .iter()
        .map(|e| e.id.as_str())
        .collect();
    assert_eq!(ids, experiments::ids());
    for e in &committed.experiments {
        assert!(e.error.is_none(), "{}: {:?}", e.id, e.error);
        assert!(!e.claims.is_empty(), "{}", e.id);
    }
}
