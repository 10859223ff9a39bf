//! Markdown tables of run summaries. Written by hand: a Markdown table is a header, a rule
//! and rows joined by `|`, which a table crate (tabled, comfy-table) would do at the cost of
//! a dependency.

use crate::simulation::recorder::RunSummary;

/// One row per run: outcome, steps, final base position, energy change, worst NCP
/// criterion, unconverged steps, median iterations and solver time.
pub fn summary_table(runs: &[RunSummary]) -> String {
    let mut out = String::from(
        "| scenario | solver | outcome | steps | final base position (m) | ΔE (J) | max NCP criterion | unconverged steps | median iterations | median solve time (µs) |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in runs {
        let p = r.final_base_position;
        let outcome = match &r.failure {
            Some(reason) => format!("failed: {}", reason.replace('|', "/")),
            None => r.outcome.clone(),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | ({:.4}, {:.4}, {:.4}) | {:+.3e} | {} | {} | {:.0} | {:.1} |\n",
            r.scenario,
            r.solver,
            outcome,
            r.steps,
            p[0],
            p[1],
            p[2],
            r.final_energy - r.initial_energy,
            r.max_ncp_criterion
                .map_or_else(|| "—".to_string(), |v| format!("{v:.2e}")),
            r.unconverged_steps,
            r.iterations.median,
            r.solve_time.median * 1e6,
        ));
    }
    out
}

/// A Markdown table (`|` in cells replaced by `/`).
pub fn markdown_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let clean = |s: &str| s.replace('|', "/").replace('\n', " ");
    let mut out = format!(
        "| {} |\n|{}\n",
        header
            .iter()
            .map(|h| clean(h))
            .collect::<Vec<_>>()
            .join(" | "),
        "---|".repeat(header.len())
    );
    for row in rows {
        out.push_str(&format!(
            "| {} |\n",
            row.iter().map(|c| clean(c)).collect::<Vec<_>>().join(" | ")
        ));
    }
    out
}
