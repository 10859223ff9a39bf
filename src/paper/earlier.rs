//! A run's verdicts beside an earlier run's (`contactbench paper --earlier FILE`, an
//! earlier `OUT/paper.json`): each earlier claim is matched with the claims made now,
//! and every verdict that differs is listed on the experiment's page with why, computed
//! from the two runs: the test that changed (its details beside each other), the reason
//! a claim is not measurable or does not hold now, the numbers that moved.
//!
//! Matching: the same text; else the claims made now on the same statement of the paper
//! (the text before its final parenthesis) whose details share the most words with the
//! earlier details — several when an earlier claim is now tested under several
//! protocols; else, for a reworded statement, the claims sharing the most words with the
//! earlier claim, at least half of its words.

use std::collections::BTreeSet;

use super::claims::{Claim, Verdict};
use super::page::{statement, Change, Changes};
use super::verdicts::{ClaimVerdict, Verdicts};

/// The details of a claim: what follows its statement (its final parenthesis).
fn details(claim: &str) -> &str {
    claim[statement(claim).len()..].trim()
}

/// The words of a claim's details.
fn words(text: &str) -> BTreeSet<&str> {
    text.split(|c: char| c.is_whitespace() || ",;:()".contains(c))
        .filter(|w| !w.is_empty())
        .collect()
}

/// The claims made now that test `earlier` (indices into `now`).
fn matches(earlier: &str, now: &[Claim]) -> Vec<usize> {
    if let Some(k) = now.iter().position(|c| c.claim == earlier) {
        return vec![k];
    }
    let earlier_words = words(details(earlier));
    let shared = |c: &Claim| {
        words(details(&c.claim))
            .intersection(&earlier_words)
            .count()
    };
    let same: Vec<(usize, usize)> = now
        .iter()
        .enumerate()
        .filter(|(_, c)| statement(&c.claim) == statement(earlier))
        .map(|(k, c)| (k, shared(c)))
        .collect();
    if !same.is_empty() {
        return best_scores(same);
    }
    // A statement reworded: the claims sharing the most words, at least half of its own.
    let all_words = words(earlier);
    let overlap: Vec<(usize, usize)> = now
        .iter()
        .enumerate()
        .map(|(k, c)| (k, words(&c.claim).intersection(&all_words).count()))
        .filter(|&(_, n)| 2 * n >= all_words.len())
        .collect();
    best_scores(overlap)
}

/// The indices with the highest score.
fn best_scores(scored: Vec<(usize, usize)>) -> Vec<usize> {
    let best = scored.iter().map(|&(_, n)| n).max();
    scored
        .into_iter()
        .filter(|&(_, n)| Some(n) == best)
        .map(|(k, _)| k)
        .collect()
}

/// Why `now`'s verdict differs from `earlier`'s.
fn why_changed(earlier: &ClaimVerdict, now: &Claim) -> String {
    let mut parts = Vec::new();
    if statement(&now.claim) != statement(&earlier.claim) {
        parts.push(format!(
            "the claim was reworded: earlier {}, now {}",
            earlier.claim, now.claim
        ));
    } else if now.claim != earlier.claim {
        parts.push(format!(
            "the test changed: earlier {}, now {}",
            details(&earlier.claim),
            details(&now.claim)
        ));
    } else {
        parts.push(format!(
            "the same test, the numbers moved: earlier {}, now {}",
            earlier.measured, now.measured
        ));
    }
    match &now.verdict {
        Verdict::NotMeasurable(why) => parts.push(format!("not measurable now: {why}")),
        Verdict::NotEvaluated(why) => parts.push(format!("not evaluated now: {why}")),
        Verdict::DoesNotHold => parts.push(match &now.why {
            Some((why, _)) => format!("does not hold now: {} (see the claims)", why.text()),
            None => "does not hold now".into(),
        }),
        Verdict::Holds => {}
    }
    parts.join("; ")
}

/// The claims made now (`now`, of experiment `id`) beside `earlier`'s.
pub fn compare(earlier: &Verdicts, id: &str, now: &[Claim]) -> Changes {
    let mut out = Changes {
        commit: earlier.commit.clone(),
        ..Changes::default()
    };
    let Some(before) = earlier.experiments.iter().find(|e| e.id == id) else {
        out.new = now
            .iter()
            .map(|c| (c.claim.clone(), c.verdict.kind().into()))
            .collect();
        return out;
    };
    out.found = true;
    out.earlier = before.claims.len();
    let mut matched = vec![false; now.len()];
    for e in &before.claims {
        let found = matches(&e.claim, now);
        for &k in &found {
            matched[k] = true;
        }
        let change = |now_claim: &Claim| Change {
            earlier: e.claim.clone(),
            earlier_verdict: e.verdict.clone(),
            earlier_measured: e.measured.clone(),
            now: now_claim.claim.clone(),
            now_verdict: now_claim.verdict.kind().into(),
            why: why_changed(e, now_claim),
        };
        let differing: Vec<Change> = found
            .iter()
            .map(|&k| &now[k])
            .filter(|c| c.verdict.kind() != e.verdict)
            .map(change)
            .collect();
        if found.is_empty() {
            out.changed.push(Change {
                earlier: e.claim.clone(),
                earlier_verdict: e.verdict.clone(),
                earlier_measured: e.measured.clone(),
                why: "no claim on this statement is made now".into(),
                ..Change::default()
            });
        } else if differing.is_empty() {
            out.unchanged += 1;
        } else {
            out.changed.extend(differing);
        }
    }
    out.new = now
        .iter()
        .zip(&matched)
        .filter(|(_, &m)| !m)
        .map(|(c, _)| (c.claim.clone(), c.verdict.kind().into()))
        .collect();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paper::verdicts::ExperimentVerdicts;

    fn earlier(claims: &[(&str, &str)]) -> Verdicts {
        Verdicts {
            commit: "abc1234".into(),
            quick: false,
            experiments: vec![ExperimentVerdicts {
                id: "fig16".into(),
                paper: "§IV-C, Fig. 16".into(),
                error: None,
                claims: claims
                    .iter()
                    .map(|(claim, verdict)| ClaimVerdict {
                        claim: (*claim).into(),
                        verdict: (*verdict).into(),
                        reason: None,
                        measured: "1 / 2 = 0.5".into(),
                        margin: None,
                        timing: false,
                    })
                    .collect(),
            }],
        }
    }

    #[test]
    fn an_earlier_claim_split_by_protocol_is_matched_with_each_of_its_parts() {
        let before = earlier(&[
            ("\"ADMM is slower cold\" (Solo-12)", "holds"),
            ("\"ADMM is slower cold\" (Talos)", "holds"),
        ]);
        let now = vec![
            Claim::at_least("\"ADMM is slower cold\" (Solo-12, scripts)", "r", 2.0, 1.0),
            Claim::at_least("\"ADMM is slower cold\" (Solo-12, text)", "r", 0.5, 1.0),
            Claim::at_least("\"ADMM is slower cold\" (Talos, scripts)", "r", 2.0, 1.0),
            Claim::at_least("\"ADMM is slower cold\" (Talos, text)", "r", 2.0, 1.0),
        ];
        let changes = compare(&before, "fig16", &now);
        assert!(changes.found);
        assert_eq!(changes.unchanged, 1, "{changes:?}");
        assert_eq!(changes.changed.len(), 1, "{changes:?}");
        let change = &changes.changed[0];
        assert_eq!(change.now, "\"ADMM is slower cold\" (Solo-12, text)");
        assert_eq!(change.now_verdict, "does not hold");
        assert!(change
            .why
            .starts_with("the test changed: earlier (Solo-12), now (Solo-12, text)"));
        assert!(changes.new.is_empty());
    }

    #[test]
    fn a_claim_no_longer_made_and_a_new_one_are_listed() {
        let before = earlier(&[("\"gone\" (x)", "does not hold")]);
        let now = vec![Claim::at_least("\"fresh\" (y)", "r", 2.0, 1.0)];
        let changes = compare(&before, "fig16", &now);
        assert_eq!(changes.changed.len(), 1);
        assert!(changes.changed[0].now.is_empty());
        assert_eq!(
            changes.new,
            vec![("\"fresh\" (y)".to_string(), "holds".to_string())]
        );
        let elsewhere = compare(&before, "fig09", &now);
        assert!(!elsewhere.found);
        assert_eq!(elsewhere.new.len(), 1);
    }

    #[test]
    fn a_reworded_claim_is_matched_by_the_words_it_shares() {
        let before = earlier(&[(
            "the error grows with Δt (e(100 ms) ÷ e(1 ms); ours)",
            "holds",
        )]);
        let now = vec![
            Claim::at_least(
                "the state error grows with Δt (e(100 ms) ÷ e(1 ms); ours)",
                "r",
                0.5,
                1.0,
            ),
            Claim::at_least("unrelated (x)", "r", 2.0, 1.0),
        ];
        let changes = compare(&before, "fig16", &now);
        assert_eq!(changes.changed.len(), 1, "{changes:?}");
        assert!(changes.changed[0].now.starts_with("the state error"));
        assert!(changes.changed[0].why.starts_with("the claim was reworded"));
        assert_eq!(changes.new.len(), 1);
    }

    #[test]
    fn the_same_test_with_a_new_verdict_shows_the_numbers_that_moved() {
        let before = earlier(&[("\"slower\" (Talos)", "holds")]);
        let now = vec![Claim::at_least("\"slower\" (Talos)", "r", 0.5, 1.0)];
        let changes = compare(&before, "fig16", &now);
        assert_eq!(changes.changed.len(), 1);
        assert!(
            changes.changed[0]
                .why
                .starts_with("the same test, the numbers moved: earlier 1 / 2 = 0.5, now"),
            "{:?}",
            changes.changed[0]
        );
    }
}
