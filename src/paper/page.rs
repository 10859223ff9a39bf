//! An experiment's page (Markdown) and the summary page that links them all.

use std::collections::BTreeSet;

use super::claims::{num, Claim, Comparison, Verdict};
use super::Experiment;

/// One earlier claim whose verdict differs now, beside one claim that tests it now
/// (`now` empty: the claim is no longer made).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Change {
    /// The earlier claim.
    pub earlier: String,
    /// Its earlier verdict.
    pub earlier_verdict: String,
    /// Its earlier measured numbers.
    pub earlier_measured: String,
    /// The claim made now (its text), empty when none is.
    pub now: String,
    /// Its verdict now (`holds`, `does not hold`, `not measurable`, `not evaluated`).
    pub now_verdict: String,
    /// Why the verdict differs.
    pub why: String,
}

/// An experiment's verdicts beside an earlier run's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Changes {
    /// The earlier run's commit.
    pub commit: String,
    /// The earlier run had this experiment.
    pub found: bool,
    /// Claims of the earlier run.
    pub earlier: usize,
    /// Earlier claims whose every matching claim has the same verdict now.
    pub unchanged: usize,
    /// The verdicts that differ, and the earlier claims no longer made.
    pub changed: Vec<Change>,
    /// Claims made now that match no earlier claim (text, verdict).
    pub new: Vec<(String, String)>,
}

impl Changes {
    /// Earlier claims with at least one verdict that differs now.
    pub fn changed_claims(&self) -> usize {
        self.changed
            .iter()
            .map(|c| c.earlier.as_str())
            .collect::<BTreeSet<_>>()
            .len()
    }
}

/// What an experiment found, rendered as its page.
#[derive(Debug, Clone, Default)]
pub struct Page {
    /// Experiment id (`tab3`).
    pub id: String,
    /// Title.
    pub title: String,
    /// Where in the paper (`§IV-B, Tab. III`).
    pub paper_ref: String,
    /// How it was run: scenarios, grid, protocol, every choice the paper leaves open.
    pub setup: Vec<String>,
    /// Paper numbers beside ours.
    pub comparisons: Vec<Comparison>,
    /// The paper's claims, tested on our data.
    pub claims: Vec<Claim>,
    /// Result tables (title, Markdown).
    pub tables: Vec<(String, String)>,
    /// Figures (caption, file stem: `<stem>.png` and `<stem>.svg`).
    pub figures: Vec<(String, String)>,
    /// Data files written (names relative to the page).
    pub data: Vec<String>,
    /// Findings and explanations, each a paragraph.
    pub notes: Vec<String>,
    /// The protocol beside ContactBench's scripts, one line per aspect: what, its
    /// script's line (file and value), ours.
    pub protocol: Vec<ProtocolLine>,
    /// Its verdicts beside an earlier run's (`--earlier`).
    pub changes: Option<Changes>,
}

/// One aspect of an experiment's protocol: ContactBench's script beside ours.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProtocolLine {
    /// What (`time step`, `iteration cap`).
    pub aspect: String,
    /// ContactBench's script: the file and its line or value.
    pub contactbench: String,
    /// Ours.
    pub ours: String,
}

impl ProtocolLine {
    /// A line of the protocol table.
    pub fn new(
        aspect: impl Into<String>,
        contactbench: impl Into<String>,
        ours: impl Into<String>,
    ) -> Self {
        Self {
            aspect: aspect.into(),
            contactbench: contactbench.into(),
            ours: ours.into(),
        }
    }
}

/// How many claims of each verdict.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Hold.
    pub holds: usize,
    /// Do not hold.
    pub fails: usize,
    /// Not measurable here.
    pub unmeasurable: usize,
    /// Not evaluated (a number missing).
    pub unevaluated: usize,
}

impl Tally {
    /// Counts `claims`.
    pub fn of(claims: &[Claim]) -> Self {
        let mut t = Tally::default();
        for c in claims {
            match c.verdict {
                Verdict::Holds => t.holds += 1,
                Verdict::DoesNotHold => t.fails += 1,
                Verdict::NotMeasurable(_) => t.unmeasurable += 1,
                Verdict::NotEvaluated(_) => t.unevaluated += 1,
            }
        }
        t
    }

    /// Every claim counted.
    pub fn total(&self) -> usize {
        self.holds + self.fails + self.unmeasurable + self.unevaluated
    }

    fn add(&mut self, other: Tally) {
        self.holds += other.holds;
        self.fails += other.fails;
        self.unmeasurable += other.unmeasurable;
        self.unevaluated += other.unevaluated;
    }

    /// `3 hold, 1 does not, 2 not measurable`.
    pub fn text(&self) -> String {
        let mut parts = vec![
            format!("{} hold", self.holds),
            format!("{} do not hold", self.fails),
            format!("{} not measurable here", self.unmeasurable),
        ];
        if self.unevaluated > 0 {
            parts.push(format!("{} not evaluated", self.unevaluated));
        }
        parts.join(", ")
    }
}

/// `|` would break a table cell.
fn cell(text: &str) -> String {
    text.replace('|', "/").replace('\n', " ")
}

fn optional(x: Option<f64>) -> String {
    x.map_or_else(|| "–".to_string(), num)
}

fn verdict_cell(verdict: &Verdict) -> String {
    match verdict {
        Verdict::Holds => "**holds**".into(),
        Verdict::DoesNotHold => "**does not hold**".into(),
        Verdict::NotMeasurable(why) => format!("*not measurable here*: {why}"),
        Verdict::NotEvaluated(_) => verdict.text(),
    }
}

/// The claim's statement without its final parenthesis (its test's details).
pub(crate) fn statement(claim: &str) -> &str {
    if !claim.ends_with(')') {
        return claim;
    }
    let mut depth = 0;
    for (i, ch) in claim.char_indices().rev() {
        match ch {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    return claim[..i].trim_end();
                }
            }
            _ => {}
        }
    }
    claim
}

/// Why a claim does not hold, or that the experiment did not say.
fn why_text(c: &Claim) -> String {
    match &c.why {
        Some((why, evidence)) => format!("**{}**: {evidence}", why.text()),
        None => "**not explained** by the experiment".into(),
    }
}

impl Page {
    /// An empty page headed with `experiment`'s id, title and place in the paper.
    pub fn headed(experiment: &dyn Experiment) -> Self {
        Page {
            id: experiment.id().into(),
            title: experiment.title().into(),
            paper_ref: experiment.paper_ref().into(),
            ..Page::default()
        }
    }

    /// How many claims hold, do not hold, are not measurable.
    pub fn tally(&self) -> Tally {
        Tally::of(&self.claims)
    }

    /// The page in Markdown, stamped with the source's `commit`.
    pub fn to_markdown(&self, quick: bool, commit: &str) -> String {
        let mut out = format!("# {}: {}\n\n", self.paper_ref, self.title);
        out.push_str(&format!(
            "Written by `contactbench paper --only {}{} --out DIR` at commit `{commit}` (this page: `DIR/{}/README.md`).{}\n",
            self.id,
            if quick { " --quick" } else { "" },
            self.id,
            if quick {
                " Run with `--quick` (the CI size): smaller grids and shorter runs, see Setup."
            } else {
                ""
            }
        ));
        if !self.setup.is_empty() {
            out.push_str("\n## Setup\n\n");
            for line in &self.setup {
                out.push_str(&format!("- {line}\n"));
            }
        }
        if !self.comparisons.is_empty() {
            out.push_str("\n## Paper and ours\n\n| quantity | paper | ours | ours / paper |\n|---|---|---|---|\n");
            for c in &self.comparisons {
                let paper = match c.paper {
                    Some(p) => num(p),
                    None => cell(&c.paper_text),
                };
                out.push_str(&format!(
                    "| {} | {} | {} | {} |\n",
                    cell(&c.quantity),
                    paper,
                    optional(c.ours),
                    optional(c.ratio())
                ));
            }
        }
        if !self.protocol.is_empty() {
            out.push_str("\n## Protocol beside ContactBench's scripts\n\n| aspect | ContactBench (script: line) | ours |\n|---|---|---|\n");
            for line in &self.protocol {
                out.push_str(&format!(
                    "| {} | {} | {} |\n",
                    cell(&line.aspect),
                    cell(&line.contactbench),
                    cell(&line.ours)
                ));
            }
        }
        if !self.claims.is_empty() {
            out.push_str(&format!(
                "\n## Claims ({})\n\n| claim (paper) | computed test | threshold from | measured | margin | verdict |\n|---|---|---|---|---|---|\n",
                self.tally().text()
            ));
            for c in &self.claims {
                out.push_str(&format!(
                    "| {} | {} | {} | {} | {} | {} |\n",
                    cell(&c.claim),
                    cell(&c.test),
                    cell(if c.threshold.is_empty() {
                        "–"
                    } else {
                        &c.threshold
                    }),
                    cell(&c.measured),
                    cell(&c.margin_text()),
                    verdict_cell(&c.verdict)
                ));
            }
            let failing: Vec<&Claim> = self
                .claims
                .iter()
                .filter(|c| c.verdict == Verdict::DoesNotHold)
                .collect();
            if !failing.is_empty() {
                out.push_str("\nWhy the claims that do not hold do not:\n\n");
                for c in failing {
                    out.push_str(&format!("- {}: {}\n", c.claim, why_text(c)));
                }
            }
        }
        if let Some(changes) = &self.changes {
            out.push_str(&changes_markdown(changes));
        }
        for (title, table) in &self.tables {
            out.push_str(&format!("\n## {title}\n\n{table}"));
            if !table.ends_with('\n') {
                out.push('\n');
            }
        }
        for (caption, stem) in &self.figures {
            out.push_str(&format!(
                "\n### {caption}\n\n![{caption}]({stem}.png) ([SVG]({stem}.svg))\n"
            ));
        }
        if !self.notes.is_empty() {
            out.push_str("\n## Notes\n\n");
            for note in &self.notes {
                out.push_str(note);
                out.push_str("\n\n");
            }
        }
        if !self.data.is_empty() {
            out.push_str("\n## Data\n\n");
            for file in &self.data {
                out.push_str(&format!("- [`{file}`]({file})\n"));
            }
        }
        out
    }
}

/// The section of a page that puts its verdicts beside an earlier run's.
fn changes_markdown(changes: &Changes) -> String {
    let mut out = format!(
        "\n## Verdicts beside the earlier run (commit `{}`)\n\n",
        changes.commit
    );
    if !changes.found {
        out.push_str(&format!(
            "The earlier run ([`earlier.json`](../earlier.json)) did not have this experiment; its {} claims are new.\n",
            changes.new.len()
        ));
        return out;
    }
    out.push_str(&format!(
        "Of the earlier run's {} claims on this page ([`earlier.json`](../earlier.json)), {} have the same verdict now and {} a different one (below; an earlier claim now tested under several protocols has a row per protocol whose verdict differs); {} claims made now match no earlier one. Matched by text, else by the paper's statement and the most words shared by the test's details.\n",
        changes.earlier,
        changes.unchanged,
        changes.changed_claims(),
        changes.new.len()
    ));
    if !changes.changed.is_empty() {
        out.push_str("\n| earlier claim | earlier verdict (measured) | now | verdict now | why it differs |\n|---|---|---|---|---|\n");
        for c in &changes.changed {
            out.push_str(&format!(
                "| {} | {} ({}) | {} | {} | {} |\n",
                cell(&c.earlier),
                c.earlier_verdict,
                cell(&c.earlier_measured),
                if c.now.is_empty() {
                    "–".into()
                } else {
                    cell(&c.now)
                },
                if c.now_verdict.is_empty() {
                    "–"
                } else {
                    &c.now_verdict
                },
                cell(&c.why)
            ));
        }
    }
    if !changes.new.is_empty() {
        out.push_str("\nClaims made now that match no earlier claim:\n\n");
        for (claim, verdict) in &changes.new {
            out.push_str(&format!("- {claim}: {verdict}\n"));
        }
    }
    out
}

/// The summary's lines on the verdicts beside an earlier run, one per experiment.
fn earlier_summary(lines: &[SummaryLine]) -> String {
    let pages: Vec<(&SummaryLine, &Changes)> = lines
        .iter()
        .filter_map(|l| {
            let page = l.outcome.as_ref().ok()?;
            Some((l, page.changes.as_ref()?))
        })
        .collect();
    let Some((_, first)) = pages.first() else {
        return String::new();
    };
    let mut out = format!(
        "\n## Verdicts beside the earlier run (commit `{}`, [`earlier.json`](earlier.json))\n\n",
        first.commit
    );
    for (l, c) in pages {
        let text = if c.found {
            format!(
                "{} of its {} earlier claims have a different verdict now, {} the same; {} claims are new",
                c.changed_claims(),
                c.earlier,
                c.unchanged,
                c.new.len()
            )
        } else {
            format!("not in the earlier run; {} claims are new", c.new.len())
        };
        out.push_str(&format!(
            "- {} ([{}]({}/README.md)): {text}; the page lists each change and why.\n",
            l.paper_ref, l.id, l.id
        ));
    }
    out
}

/// One experiment's line on the summary page.
#[derive(Debug, Clone)]
pub struct SummaryLine {
    /// Experiment id.
    pub id: String,
    /// Where in the paper.
    pub paper_ref: String,
    /// Title.
    pub title: String,
    /// Its page, or why it could not run.
    pub outcome: Result<Page, String>,
    /// Wall time of the experiment (s).
    pub seconds: f64,
}

/// Where and at what size the summary was written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stamp {
    /// The commit of the source the binary was built from (`abc1234`).
    pub commit: String,
    /// The date (UTC, `YYYY-MM-DD`).
    pub date: String,
    /// The CI size (`--quick`).
    pub quick: bool,
    /// Wall time of the whole command (s).
    pub seconds: f64,
}

/// The summary page: the stamp, one line per experiment with its claims' tally and a link,
/// the claims that do not hold with why, those not measurable with why, those decided
/// within 20 % of their threshold, every claim in one line, then what is not reproduced.
pub fn summary_markdown(
    lines: &[SummaryLine],
    stamp: &Stamp,
    not_reproduced: &[(&str, &str)],
) -> String {
    let mut out =
        String::from("# Contact Models in Robotics (Le Lidec et al.), §IV reproduced\n\n");
    out.push_str(&format!(
        "Written by `contactbench paper{} --out DIR` at commit `{}` on {} ({} size, {:.0} s wall time). Each experiment's page puts the paper's numbers beside ours, its protocol beside ContactBench's scripts, and tests the paper's claims on our data: **holds**, **does not hold** (with why: a protocol difference, or a finding against the paper), or *not measurable here* (with the computed reason: run and reference identical, the iteration cap reached on the steps that decide it, a tolerance above the signal, values at round-off, a difference inside the timing noise), counted neither way.\n\n",
        if stamp.quick { " --quick" } else { "" },
        stamp.commit,
        stamp.date,
        if stamp.quick { "CI" } else { "full" },
        stamp.seconds,
    ));
    out.push_str("Regenerate: the full-size pages, as committed under `docs/paper/`, with `cargo run --release -- paper --out docs/paper --force --earlier docs/paper/paper.json` (each page then lists the verdicts that differ from the pages it replaces, and why; the SVG and CSV files are not committed); the CI-size verdicts CI compares with, with `cargo run --profile test -- paper --quick --out target/ci-paper --force` then `cp target/ci-paper/paper.json .ci/paper_verdicts_quick.json`.\n\n");
    out.push_str(
        "| experiment | paper | hold | do not hold | not measurable | page | wall time (s) |\n|---|---|---|---|---|---|---|\n",
    );
    let mut all = Tally::default();
    for line in lines {
        match &line.outcome {
            Ok(page) => {
                let t = page.tally();
                all.add(t);
                out.push_str(&format!(
                    "| {} | {} | {} | {} | {} | [{}]({}/README.md) | {:.1} |\n",
                    cell(&line.title),
                    line.paper_ref,
                    t.holds,
                    t.fails,
                    t.unmeasurable,
                    line.id,
                    line.id,
                    line.seconds
                ));
            }
            Err(e) => out.push_str(&format!(
                "| {} | {} | error: {} | | | – | {:.1} |\n",
                cell(&line.title),
                line.paper_ref,
                cell(e),
                line.seconds
            )),
        }
    }
    out.push_str(&format!(
        "| **all** | | **{}** | **{}** | **{}** | | |\n",
        all.holds, all.fails, all.unmeasurable
    ));
    if all.unevaluated > 0 {
        out.push_str(&format!(
            "\n{} claims could not be evaluated (a number missing): see their pages.\n",
            all.unevaluated
        ));
    }
    out.push_str(&earlier_summary(lines));
    let claims = || {
        lines
            .iter()
            .filter_map(|l| l.outcome.as_ref().ok().map(|p| (l, p)))
            .flat_map(|(l, p)| p.claims.iter().map(move |c| (l, c)))
    };
    let section = |out: &mut String,
                   title: &str,
                   keep: &dyn Fn(&Claim) -> bool,
                   tail: &dyn Fn(&Claim) -> String| {
        let chosen: Vec<_> = claims().filter(|(_, c)| keep(c)).collect();
        if chosen.is_empty() {
            return;
        }
        out.push_str(&format!("\n## {title}\n\n"));
        for (l, c) in chosen {
            out.push_str(&format!(
                "- {} ([{}]({}/README.md)): {} — {}\n",
                l.paper_ref,
                l.id,
                l.id,
                c.claim,
                tail(c)
            ));
        }
    };
    section(
        &mut out,
        "Claims that do not hold, and why",
        &|c| c.verdict == Verdict::DoesNotHold,
        &|c| format!("{} (measured: {})", why_text(c), c.measured),
    );
    section(
        &mut out,
        "Not measurable here, and why",
        &|c| matches!(c.verdict, Verdict::NotMeasurable(_)),
        &|c| match &c.verdict {
            Verdict::NotMeasurable(why) => why.clone(),
            _ => String::new(),
        },
    );
    section(
        &mut out,
        "Decided within 20 % of the threshold",
        &|c| c.is_close(),
        &|c| format!("{} ({}; {})", c.verdict.text(), c.measured, c.margin_text()),
    );
    out.push_str("\n## Claims, one line each\n\n");
    for (l, c) in claims() {
        out.push_str(&format!(
            "- {} ({}): {}; {} ({}).\n",
            l.paper_ref,
            l.id,
            c.claim,
            c.verdict.text(),
            c.measured
        ));
    }
    if !not_reproduced.is_empty() {
        out.push_str("\n## Not reproduced\n\n");
        for (what, why) in not_reproduced {
            out.push_str(&format!("- {what}: {why}\n"));
        }
    }
    out
}

/// The summary page of a paper other than the contact paper (`--paper NAME`): its `title`,
/// one row per experiment, every claim on a line, and what is `not_reproduced`.
pub fn short_summary_markdown(
    title: &str,
    name: &str,
    lines: &[SummaryLine],
    quick: bool,
    not_reproduced: &[(&str, &str)],
) -> String {
    let mut out = format!("# {title}, reproduced\n\n");
    out.push_str(&format!(
        "Written by `contactbench paper --paper {name}{} --out DIR`. Each page puts the \
         paper's numbers beside ours and tests the paper's claims on our measurements; a \
         claim that does not hold is a finding, reported with its numbers, and one the data \
         here cannot test says why (\"not measurable here\").\n\n",
        if quick { " --quick" } else { "" }
    ));
    out.push_str(
        "| experiment | paper | claims that hold | page | wall time (s) |\n|---|---|---|---|---|\n",
    );
    for line in lines {
        let (score, link) = match &line.outcome {
            Ok(page) => {
                let tally = page.tally();
                (
                    format!("{} / {}", tally.holds, tally.total()),
                    format!("[{}]({}/README.md)", line.id, line.id),
                )
            }
            Err(e) => (format!("error: {e}"), "–".to_string()),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {:.1} |\n",
            line.title, line.paper_ref, score, link, line.seconds
        ));
    }
    out.push_str("\n## Claims, one line each\n\n");
    for line in lines {
        if let Ok(page) = &line.outcome {
            for c in &page.claims {
                out.push_str(&format!(
                    "- {} ({}): {}; {} ({}).\n",
                    line.paper_ref,
                    line.id,
                    c.claim,
                    c.verdict.text(),
                    c.measured
                ));
            }
        }
    }
    out.push_str("\n## Not reproduced\n\n");
    for (what, why) in not_reproduced {
        out.push_str(&format!("- {what}: {why}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::statement;

    #[test]
    fn a_claims_short_form_drops_only_its_final_details() {
        assert_eq!(
            statement("\"almost no dissipation (ε = 1e-2)\" (fraction ≤ 0.2; ours)"),
            "\"almost no dissipation (ε = 1e-2)\""
        );
        assert_eq!(statement("no details"), "no details");
    }
}
