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
            "| {} | {} | {} | {} | ({}, {}, {}) | {} | {} | {} | {} | {} |\n",
            r.scenario,
            r.solver,
            outcome,
            r.steps,
            fixed(p[0], 4),
            fixed(p[1], 4),
            fixed(p[2], 4),
            signed_scientific(r.final_energy - r.initial_energy, 3),
            r.max_ncp_criterion
                .map_or_else(|| "—".to_string(), |v| scientific(v, 2)),
            r.unconverged_steps,
            fixed(r.iterations.median, 0),
            fixed(r.solve_time.median * 1e6, 1),
        ));
    }
    out
}

/// `x` with `decimals` decimals; a value that rounds to zero is `0`, never `-0.0000`.
pub fn fixed(x: f64, decimals: usize) -> String {
    let text = format!("{x:.decimals$}");
    if text.trim_start_matches('-').parse::<f64>() == Ok(0.0) {
        "0".to_string()
    } else {
        text
    }
}

/// `x` in scientific notation with `digits` decimals (`1.25e-3`); zero is `0`, never
/// `0.00e0` or `-0.00e0`.
pub fn scientific(x: f64, digits: usize) -> String {
    if x == 0.0 {
        "0".to_string()
    } else {
        format!("{x:.digits$e}")
    }
}

/// [`scientific`] with the sign always written (`+1.250e-3`, `-2.000e1`), a change; zero
/// is `0`.
pub fn signed_scientific(x: f64, digits: usize) -> String {
    if x == 0.0 {
        "0".to_string()
    } else {
        format!("{x:+.digits$e}")
    }
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
