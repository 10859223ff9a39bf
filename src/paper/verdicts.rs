//! The machine-readable verdicts of a run (`OUT/paper.json`), where the binary's source
//! stood when it ran (the commit), and the comparison of a run's verdicts with committed
//! ones (`contactbench paper --expect-verdicts FILE`, run by CI at the `--quick` size
//! against `.ci/paper_verdicts_quick.json`).

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::claims::Claim;
use super::page::SummaryLine;
use super::PaperError;

/// The verdicts of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdicts {
    /// The source's commit (`abc1234`, read from the checkout's `HEAD`).
    pub commit: String,
    /// The CI size.
    pub quick: bool,
    /// One entry per experiment run.
    pub experiments: Vec<ExperimentVerdicts>,
}

/// The verdicts of one experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentVerdicts {
    /// Its id (`tab4`).
    pub id: String,
    /// Where in the paper.
    pub paper: String,
    /// Why it could not run, if it could not.
    pub error: Option<String>,
    /// Its claims.
    pub claims: Vec<ClaimVerdict>,
}

/// One claim's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimVerdict {
    /// The paper's statement and the test's details.
    pub claim: String,
    /// `holds`, `does not hold`, `not measurable`, `not evaluated`.
    pub verdict: String,
    /// Why it is not measurable or not evaluated, or why it does not hold.
    pub reason: Option<String>,
    /// The measured numbers.
    pub measured: String,
    /// The factor by which the threshold is cleared (> 1) or missed (< 1).
    pub margin: Option<f64>,
    /// Decided on wall-clock timings.
    #[serde(default)]
    pub timing: bool,
}

impl ClaimVerdict {
    fn of(c: &Claim) -> Self {
        use super::claims::Verdict;
        let reason = match &c.verdict {
            Verdict::NotMeasurable(why) | Verdict::NotEvaluated(why) => Some(why.clone()),
            Verdict::DoesNotHold => c
                .why
                .as_ref()
                .map(|(why, evidence)| format!("{}: {evidence}", why.text())),
            Verdict::Holds => None,
        };
        Self {
            claim: c.claim.clone(),
            verdict: c.verdict.kind().into(),
            reason,
            measured: c.measured.clone(),
            margin: c.margin.filter(|m| m.is_finite()),
            timing: c.timing,
        }
    }
}

impl Verdicts {
    /// The verdicts of a run's summary lines.
    pub fn of(lines: &[SummaryLine], commit: &str, quick: bool) -> Self {
        Self {
            commit: commit.into(),
            quick,
            experiments: lines
                .iter()
                .map(|l| ExperimentVerdicts {
                    id: l.id.clone(),
                    paper: l.paper_ref.clone(),
                    error: l.outcome.as_ref().err().cloned(),
                    claims: l
                        .outcome
                        .as_ref()
                        .map(|p| p.claims.iter().map(ClaimVerdict::of).collect())
                        .unwrap_or_default(),
                })
                .collect(),
        }
    }

    /// Reads a verdict file.
    pub fn read(path: &Path) -> Result<Self, PaperError> {
        let text = std::fs::read_to_string(path).map_err(|error| PaperError::Io {
            path: path.display().to_string(),
            error,
        })?;
        serde_json::from_str(&text).map_err(|e| PaperError::VerdictFile {
            path: path.display().to_string(),
            message: e.to_string(),
        })
    }

    /// Where this run's verdicts differ from `expected`, one line each: a claim whose
    /// verdict changed, a claim or an experiment one side lacks, a size mismatch.
    /// Experiments of `expected` this run did not select are not compared. A timing claim
    /// that moves between a decided verdict and "not measurable" (its band of timing
    /// noise, which another run or machine may cross) is not a difference; one that
    /// moves between "holds" and "does not hold" is.
    pub fn differences(&self, expected: &Verdicts) -> Vec<String> {
        let mut out = Vec::new();
        if self.quick != expected.quick {
            out.push(format!(
                "size: this run is {}, the expected verdicts are {}",
                size(self.quick),
                size(expected.quick)
            ));
        }
        for run in &self.experiments {
            let Some(exp) = expected.experiments.iter().find(|e| e.id == run.id) else {
                out.push(format!("{}: not in the expected verdicts", run.id));
                continue;
            };
            if run.error.is_some() != exp.error.is_some() {
                out.push(format!(
                    "{}: error {:?}, expected {:?}",
                    run.id, run.error, exp.error
                ));
            }
            for c in &run.claims {
                match exp.claims.iter().find(|e| e.claim == c.claim) {
                    Some(e) if e.verdict != c.verdict && !noise_move(c, e) => out.push(format!(
                        "{}: \"{}\": {} ({}), expected {} ({})",
                        run.id, c.claim, c.verdict, c.measured, e.verdict, e.measured
                    )),
                    Some(_) => {}
                    None => out.push(format!(
                        "{}: \"{}\" ({}) is not in the expected verdicts",
                        run.id, c.claim, c.verdict
                    )),
                }
            }
            for e in &exp.claims {
                if !run.claims.iter().any(|c| c.claim == e.claim) {
                    out.push(format!(
                        "{}: \"{}\" ({}) expected but not made",
                        run.id, e.claim, e.verdict
                    ));
                }
            }
        }
        out
    }
}

/// A timing claim's move into or out of its noise band.
fn noise_move(run: &ClaimVerdict, expected: &ClaimVerdict) -> bool {
    let unmeasurable = "not measurable";
    (run.timing || expected.timing)
        && (run.verdict == unmeasurable || expected.verdict == unmeasurable)
}

fn size(quick: bool) -> &'static str {
    if quick {
        "--quick"
    } else {
        "full size"
    }
}

/// The commit of the checkout the binary was built from: its `HEAD` read from the
/// `.git` files of the source directory (a worktree's `gitdir`, loose and packed refs),
/// no program run; `unknown` outside a checkout. Local changes are not detected.
pub fn source_commit() -> String {
    head_commit(Path::new(env!("CARGO_MANIFEST_DIR")))
        .map(|c| c.chars().take(7).collect())
        .unwrap_or_else(|| "unknown".into())
}

/// The full commit `HEAD` names in the checkout at `dir`.
fn head_commit(dir: &Path) -> Option<String> {
    let dot_git = dir.join(".git");
    let git_dir = if dot_git.is_dir() {
        dot_git
    } else {
        let text = std::fs::read_to_string(&dot_git).ok()?;
        dir.join(text.strip_prefix("gitdir:")?.trim())
    };
    let common = match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(rel) => git_dir.join(rel.trim()),
        Err(_) => git_dir.clone(),
    };
    let head = std::fs::read_to_string(git_dir.join("HEAD")).ok()?;
    let Some(name) = head.trim().strip_prefix("ref:").map(str::trim) else {
        return is_commit(head.trim()).then(|| head.trim().to_string());
    };
    for base in [&git_dir, &common] {
        if let Ok(id) = std::fs::read_to_string(base.join(name)) {
            let id = id.trim();
            if is_commit(id) {
                return Some(id.to_string());
            }
        }
    }
    let packed = std::fs::read_to_string(common.join("packed-refs")).ok()?;
    packed.lines().find_map(|line| {
        let (id, reference) = line.split_once(' ')?;
        (reference.trim() == name && is_commit(id)).then(|| id.to_string())
    })
}

/// 40 hexadecimal digits.
fn is_commit(id: &str) -> bool {
    id.len() == 40 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Today's date (UTC), `YYYY-MM-DD`.
pub fn utc_date() -> String {
    let days = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (H. Hinnant's
/// `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "0123456789abcdef0123456789abcdef01234567";
    const B: &str = "89abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn the_head_commit_is_read_from_loose_packed_and_worktree_refs() {
        let dir = std::env::temp_dir().join(format!("cb-head-{}", std::process::id()));
        let git = dir.join("repo/.git");
        std::fs::create_dir_all(git.join("refs/heads")).unwrap();
        std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(
            git.join("packed-refs"),
            format!("# pack-refs\n{A} refs/heads/main\n"),
        )
        .unwrap();
        assert_eq!(head_commit(&dir.join("repo")).as_deref(), Some(A));
        std::fs::write(git.join("refs/heads/main"), format!("{B}\n")).unwrap();
        assert_eq!(head_commit(&dir.join("repo")).as_deref(), Some(B));
        let worktree_git = git.join("worktrees/wt");
        std::fs::create_dir_all(&worktree_git).unwrap();
        std::fs::write(worktree_git.join("HEAD"), format!("{A}\n")).unwrap();
        std::fs::write(worktree_git.join("commondir"), "../..\n").unwrap();
        std::fs::create_dir_all(dir.join("wt")).unwrap();
        std::fs::write(
            dir.join("wt/.git"),
            format!("gitdir: {}\n", worktree_git.display()),
        )
        .unwrap();
        assert_eq!(head_commit(&dir.join("wt")).as_deref(), Some(A));
        assert_eq!(head_commit(&dir.join("elsewhere")), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn verdicts(verdict: &str) -> Verdicts {
        Verdicts {
            commit: "abc1234".into(),
            quick: true,
            experiments: vec![ExperimentVerdicts {
                id: "tab4".into(),
                paper: "§IV-B, Tab. IV".into(),
                error: None,
                claims: vec![ClaimVerdict {
                    claim: "NCP/PGS is the most self-consistent".into(),
                    verdict: verdict.into(),
                    reason: None,
                    measured: "2 / 1 = 2".into(),
                    margin: Some(2.0),
                    timing: false,
                }],
            }],
        }
    }

    #[test]
    fn a_changed_verdict_is_a_difference_and_the_same_ones_are_none() {
        let holds = verdicts("holds");
        assert!(holds.differences(&holds).is_empty());
        let changed = holds.differences(&verdicts("not measurable"));
        assert_eq!(changed.len(), 1, "{changed:?}");
        assert!(changed[0].contains("holds (2 / 1 = 2), expected not measurable"));
        let mut full = verdicts("holds");
        full.quick = false;
        assert!(full.differences(&holds)[0].starts_with("size"));
    }

    #[test]
    fn a_timing_claim_may_enter_its_noise_band_but_not_flip() {
        let timed = |verdict: &str| {
            let mut v = verdicts(verdict);
            v.experiments[0].claims[0].timing = true;
            v
        };
        assert!(timed("not measurable")
            .differences(&timed("holds"))
            .is_empty());
        assert_eq!(timed("does not hold").differences(&timed("holds")).len(), 1);
        assert_eq!(
            verdicts("not measurable")
                .differences(&verdicts("holds"))
                .len(),
            1
        );
    }

    #[test]
    fn a_claim_made_or_missing_on_one_side_is_a_difference() {
        let mut more = verdicts("holds");
        more.experiments[0].claims.push(ClaimVerdict {
            claim: "another".into(),
            verdict: "holds".into(),
            reason: None,
            measured: String::new(),
            margin: None,
            timing: false,
        });
        assert_eq!(more.differences(&verdicts("holds")).len(), 1);
        assert_eq!(verdicts("holds").differences(&more).len(), 1);
    }

    #[test]
    fn dates_are_civil() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_454), (2026, 1, 1));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
    }
}
