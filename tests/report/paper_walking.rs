//! The walking pages (Fig. 17 on flat ground) at the CI size: they run, test their
//! claims, and give the same verdicts twice.

use std::path::PathBuf;

use contactbench::paper::{run_paper, Options};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "contactbench-paper-walking-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn the_flat_walking_page_gives_the_same_verdicts_twice() {
    let _environment = crate::environment_lock();
    let options = Options {
        only: vec!["fig17".into()],
        quick: true,
        force: false,
        earlier: None,
    };
    let first = temp_dir("first");
    let second = temp_dir("second");
    let a = run_paper(&first, &options).expect("runs");
    let b = run_paper(&second, &options).expect("runs");
    assert!(a.errors().is_empty(), "{:?}", a.errors());
    let claims = &a.verdicts.experiments[0].claims;
    assert_eq!(claims.len(), 2, "{claims:?}");
    assert!(
        a.verdicts.differences(&b.verdicts).is_empty(),
        "{:?}",
        a.verdicts.differences(&b.verdicts)
    );
    let csv = |dir: &PathBuf| std::fs::read_to_string(dir.join("fig17/fig17.csv")).expect("csv");
    let (table_a, table_b) = (csv(&first), csv(&second));
    // Identical trajectories: every column but the solve time is the same.
    let without_time = |t: &str| -> Vec<String> {
        t.lines()
            .map(|l| l.rsplit_once(',').map_or(l, |(head, _)| head).to_string())
            .collect()
    };
    assert_eq!(without_time(&table_a), without_time(&table_b));
    // Every model walks the whole run without falling on flat ground.
    for row in table_a.lines().skip(1) {
        assert!(row.contains(",completed,"), "{row}");
        assert!(row.contains(",–,"), "a model fell: {row}");
    }
    assert!(first.join("fig17/fig17.png").metadata().expect("png").len() > 1000);
    let _ = std::fs::remove_dir_all(&first);
    let _ = std::fs::remove_dir_all(&second);
}
