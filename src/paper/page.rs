//! An experiment's page (Markdown) and the summary page that links them all.

use super::claims::{num, Claim, Comparison, Verdict};

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
}

/// `|` would break a table cell.
fn cell(text: &str) -> String {
    text.replace('|', "/").replace('\n', " ")
}

fn optional(x: Option<f64>) -> String {
    x.map_or_else(|| "–".to_string(), num)
}

impl Page {
    /// Claims that hold, out of all.
    pub fn score(&self) -> (usize, usize) {
        (
            self.claims
                .iter()
                .filter(|c| c.verdict == Verdict::Holds)
                .count(),
            self.claims.len(),
        )
    }

    /// The page in Markdown.
    pub fn to_markdown(&self, quick: bool) -> String {
        let mut out = format!("# {}: {}\n\n", self.paper_ref, self.title);
        out.push_str(&format!(
            "Reproduce: `contactbench paper --only {}{} --out DIR` (this page: `DIR/{}/README.md`).{}\n",
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
        if !self.claims.is_empty() {
            let (held, total) = self.score();
            out.push_str(&format!(
                "\n## Claims ({held} of {total} hold on our data)\n\n| claim (paper) | computed test | measured | verdict |\n|---|---|---|---|\n"
            ));
            for c in &self.claims {
                let verdict = match c.verdict {
                    Verdict::Holds => "**holds**".to_string(),
                    Verdict::DoesNotHold => "**does not hold**".to_string(),
                    Verdict::NotEvaluated(_) => c.verdict.text(),
                };
                out.push_str(&format!(
                    "| {} | {} | {} | {} |\n",
                    cell(&c.claim),
                    cell(&c.test),
                    cell(&c.measured),
                    verdict
                ));
            }
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

/// The summary page: one line per experiment with its claims' score and a link, then
/// what is not reproduced and why.
pub fn summary_markdown(
    lines: &[SummaryLine],
    quick: bool,
    not_reproduced: &[(&str, &str)],
) -> String {
    let mut out =
        String::from("# Contact Models in Robotics (Le Lidec et al.), §IV reproduced\n\n");
    out.push_str(&format!(
        "Written by `contactbench paper{} --out DIR`. Each experiment's page puts the paper's numbers beside ours and tests the paper's claims on our data; a claim that does not hold is a finding, reported with its numbers.\n\n",
        if quick { " --quick" } else { "" }
    ));
    out.push_str(
        "| experiment | paper | claims that hold | page | wall time (s) |\n|---|---|---|---|---|\n",
    );
    for line in lines {
        let (score, link) = match &line.outcome {
            Ok(page) => {
                let (held, total) = page.score();
                (
                    format!("{held} / {total}"),
                    format!("[{}]({}/README.md)", line.id, line.id),
                )
            }
            Err(e) => (format!("error: {}", cell(e)), "–".into()),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {:.1} |\n",
            cell(&line.title),
            line.paper_ref,
            score,
            link,
            line.seconds
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
    if !not_reproduced.is_empty() {
        out.push_str("\n## Not reproduced\n\n");
        for (what, why) in not_reproduced {
            out.push_str(&format!("- {what}: {why}\n"));
        }
    }
    out
}
