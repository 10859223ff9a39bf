//! `contactbench paper`: an experiment writes its page, figures and data; verdicts come
//! from the numbers; bad selections and foreign output directories are refused.

use std::path::PathBuf;

use contactbench::paper::claims::{Claim, Verdict};
use contactbench::paper::{experiments, run_paper, Options, PaperError};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("contactbench-paper-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn every_table_and_figure_of_section_iv_has_an_experiment() {
    let ids = experiments::ids();
    for id in [
        "tab3", "tab4", "fig09", "fig10", "fig11", "fig12", "fig13", "fig14", "fig15", "fig16",
    ] {
        assert!(ids.contains(&id), "{id} missing from {ids:?}");
    }
}

#[test]
fn fig12_writes_its_page_figures_and_data() {
    let out = temp_dir("fig12");
    let options = Options {
        only: vec!["fig12".into()],
        quick: true,
        force: false,
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
    assert!(page.contains("| claim (paper) | computed test | measured | verdict |"));
    assert!(page.contains("| quantity | paper | ours | ours / paper |"));
    let summary = std::fs::read_to_string(out.join("README.md")).expect("summary");
    assert!(summary.contains("[fig12](fig12/README.md)"));
    assert!(
        summary.contains("Fig. 17"),
        "the summary lists what is not reproduced"
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
    let out = temp_dir("refused");
    let bad = Options {
        only: vec!["fig99".into()],
        quick: true,
        force: true,
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
    let c = Claim::ratio_at_least("c", ("a", f64::NAN), ("b", 1.0), 10.0);
    assert!(matches!(c.verdict, Verdict::NotEvaluated(_)));
    let c = Claim::ratio_at_least("c", ("a", 5.0), ("b", 0.0), 10.0);
    assert!(matches!(c.verdict, Verdict::NotEvaluated(_)));
}
