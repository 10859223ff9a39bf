//! The report of a corpus run, from result files only: each answer judged by one criterion
//! and one tolerance, its distance to the best answer found for its problem, a table per
//! solver (problems solved, median time) and per problem, CSV and JSON of every result,
//! and the performance profile.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::profile::{performance_ratios, plot_profile, share_within};
use super::runner::TaskResult;
use super::CorpusError;

/// The criterion the report judges with, when the metrics have it: the relative
/// criterion of the ruler (dimensionless).
pub const DEFAULT_CRITERION: &str = "relative_criterion";
/// The criterion used when the metrics have no [`DEFAULT_CRITERION`]: the absolute NCP
/// criterion (design.md §5), in the problem's own units.
pub const FALLBACK_CRITERION: &str = "ncp_criterion";

/// How answers are judged.
#[derive(Debug, Clone, PartialEq)]
pub struct Judge {
    /// Name of the metric that decides (a field of the serialized metrics).
    pub criterion: String,
    /// A problem is solved when the criterion is at most this (and the solve took at most
    /// its time limit).
    pub tolerance: f64,
}

impl Default for Judge {
    fn default() -> Self {
        Self {
            criterion: DEFAULT_CRITERION.into(),
            tolerance: 1e-6,
        }
    }
}

/// One judged result.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The recorded result.
    #[serde(flatten)]
    pub result: TaskResult,
    /// The criterion's value (NaN when there is no answer or no such metric).
    pub criterion_value: f64,
    /// Criterion ≤ tolerance, finite, and solve time ≤ time limit.
    pub solved: bool,
    /// `‖λ − λ*‖∞ / max(‖λ*‖∞, ‖λ‖∞)` to the answer `λ*` with the smallest criterion on
    /// the same problem (0 when both are zero); `None` without an answer.
    pub distance_to_best: Option<f64>,
}

/// Per-solver figures.
#[derive(Debug, Clone, Serialize)]
pub struct SolverSummary {
    /// The solver specification.
    pub solver: String,
    /// Problems solved.
    pub solved: usize,
    /// Problems in the corpus.
    pub problems: usize,
    /// Median solve time over the solved problems (s).
    pub median_time_solved_s: Option<f64>,
    /// Median solve time over every run with an answer (s).
    pub median_time_all_s: Option<f64>,
    /// Runs where the solver said it converged.
    pub converged: usize,
    /// Runs with no answer (problem not loaded, solver refused, panicked).
    pub errors: usize,
    /// `ρ(1)`: share of problems where it was fastest among the solvers that solved it.
    pub fastest_share: f64,
}

/// A corpus report.
#[derive(Debug, Clone, Serialize)]
pub struct CorpusReport {
    /// The criterion that judged, and the tolerance.
    pub criterion: String,
    /// The tolerance.
    pub tolerance: f64,
    /// Why the criterion differs from the one asked for, if it does.
    pub note: Option<String>,
    /// Problems that loaded, sorted: the denominators of the summary and the profile.
    pub problems: Vec<String>,
    /// Files that did not load, with the error (kept in `rows`, out of the counts).
    pub unreadable: Vec<(String, String)>,
    /// Solvers, in the command's order.
    pub solvers: Vec<String>,
    /// Every result, judged, sorted by problem then solver.
    pub rows: Vec<Row>,
    /// Per solver.
    pub summary: Vec<SolverSummary>,
    /// Planned tasks without a result (`problem / solver (shard K/N)`): a partial merge.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
}

/// A metric of a result by name (a top-level field of the metrics object, or
/// `outer.inner`), as a number.
pub fn metric(result: &TaskResult, name: &str) -> Option<f64> {
    let metrics = result.metrics.as_ref()?;
    let value = match name.split_once('.') {
        Some((outer, inner)) => metrics.get(outer)?.get(inner)?,
        None => metrics.get(name)?,
    };
    value.as_f64()
}

/// Judges every result and summarizes. If no result has the asked criterion and it is the
/// default one, the fallback criterion judges and `note` says so.
pub fn build_report(results: Vec<TaskResult>, judge: &Judge) -> CorpusReport {
    let has = |name: &str| results.iter().any(|r| metric(r, name).is_some());
    let (criterion, note) = if has(&judge.criterion) || judge.criterion != DEFAULT_CRITERION {
        (judge.criterion.clone(), None)
    } else {
        (
            FALLBACK_CRITERION.to_string(),
            Some(format!(
                "the metrics of these results have no `{DEFAULT_CRITERION}`: judged by the \
                 absolute `{FALLBACK_CRITERION}` (problem units)"
            )),
        )
    };
    let mut solver_order: BTreeMap<usize, String> = BTreeMap::new();
    for r in &results {
        solver_order
            .entry(r.solver_rank)
            .or_insert_with(|| r.solver.clone());
    }
    let solvers: Vec<String> = solver_order.into_values().collect();
    let problems: Vec<String> = results
        .iter()
        .filter(|r| r.contacts.is_some())
        .map(|r| r.problem.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let unreadable: Vec<(String, String)> = results
        .iter()
        .filter(|r| !problems.contains(&r.problem))
        .map(|r| (r.problem.clone(), r.error.clone().unwrap_or_default()))
        .collect::<BTreeMap<_, _>>()
        .into_iter()
        .collect();

    let mut rows: Vec<Row> = results
        .into_iter()
        .map(|result| {
            let value = metric(&result, &criterion).unwrap_or(f64::NAN);
            let in_time = result.solve_time_s.is_some_and(|t| t <= result.timeout_s);
            Row {
                solved: value.is_finite() && value <= judge.tolerance && in_time,
                criterion_value: value,
                distance_to_best: None,
                result,
            }
        })
        .collect();
    set_distances(&mut rows);
    rows.sort_by(|a, b| {
        (&a.result.problem, a.result.solver_rank).cmp(&(&b.result.problem, b.result.solver_rank))
    });
    let summary = summarize(&rows, &problems, &solvers);
    CorpusReport {
        criterion,
        tolerance: judge.tolerance,
        note,
        problems,
        unreadable,
        solvers,
        rows,
        summary,
        missing: Vec::new(),
    }
}

/// `distance_to_best` of every row with an answer, per problem.
fn set_distances(rows: &mut [Row]) {
    let mut best: BTreeMap<String, (f64, Vec<f64>)> = BTreeMap::new();
    for row in rows.iter() {
        let (Some(lambda), true) = (&row.result.lambda, row.criterion_value.is_finite()) else {
            continue;
        };
        let entry = best.entry(row.result.problem.clone());
        let candidate = (row.criterion_value, lambda.clone());
        entry
            .and_modify(|b| {
                if candidate.0 < b.0 {
                    *b = candidate.clone();
                }
            })
            .or_insert(candidate);
    }
    for row in rows.iter_mut() {
        let (Some(lambda), Some((_, reference))) =
            (&row.result.lambda, best.get(&row.result.problem))
        else {
            continue;
        };
        if lambda.len() != reference.len() {
            continue;
        }
        let inf = |v: &[f64]| v.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
        let gap = lambda
            .iter()
            .zip(reference)
            .fold(0.0_f64, |m, (a, b)| m.max((a - b).abs()));
        let scale = inf(lambda).max(inf(reference));
        row.distance_to_best = Some(if scale > 0.0 { gap / scale } else { 0.0 });
    }
}

fn median(mut values: Vec<f64>) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    Some(if n % 2 == 1 {
        values[n / 2]
    } else {
        0.5 * (values[n / 2 - 1] + values[n / 2])
    })
}

/// Solve times per problem (rows) and solver (columns), `None` where not solved.
fn solved_times(rows: &[Row], problems: &[String], solvers: &[String]) -> Vec<Vec<Option<f64>>> {
    problems
        .iter()
        .map(|p| {
            solvers
                .iter()
                .map(|s| {
                    rows.iter()
                        .find(|r| &r.result.problem == p && &r.result.solver == s && r.solved)
                        .and_then(|r| r.result.solve_time_s)
                })
                .collect()
        })
        .collect()
}

fn summarize(rows: &[Row], problems: &[String], solvers: &[String]) -> Vec<SolverSummary> {
    let ratios = performance_ratios(&solved_times(rows, problems, solvers), solvers.len());
    solvers
        .iter()
        .zip(&ratios)
        .map(|(s, r)| {
            let mine: Vec<&Row> = rows
                .iter()
                .filter(|row| &row.result.solver == s && problems.contains(&row.result.problem))
                .collect();
            let times = |only_solved: bool| {
                mine.iter()
                    .filter(|row| row.solved || !only_solved)
                    .filter_map(|row| row.result.solve_time_s)
                    .collect::<Vec<_>>()
            };
            SolverSummary {
                solver: s.clone(),
                solved: mine.iter().filter(|row| row.solved).count(),
                problems: problems.len(),
                median_time_solved_s: median(times(true)),
                median_time_all_s: median(times(false)),
                converged: mine.iter().filter(|row| row.result.converged).count(),
                errors: mine.iter().filter(|row| row.result.error.is_some()).count(),
                fastest_share: share_within(r, 1.0),
            }
        })
        .collect()
}

/// Seconds as µs, ms or s for tables.
fn seconds(t: Option<f64>) -> String {
    match t {
        None => "-".into(),
        Some(t) if t < 1e-3 => format!("{:.1} µs", t * 1e6),
        Some(t) if t < 1.0 => format!("{:.2} ms", t * 1e3),
        Some(t) => format!("{t:.2} s"),
    }
}

fn short_name(problem: &str) -> String {
    Path::new(problem)
        .file_name()
        .map_or_else(|| problem.to_string(), |n| n.to_string_lossy().into_owned())
}

/// The Markdown report: settings, the per-solver table, the profile, a table per problem.
pub fn markdown(report: &CorpusReport, profile_png: Option<&str>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Problem corpus: {} problems × {} solvers\n",
        report.problems.len(),
        report.solvers.len()
    );
    let _ = writeln!(
        out,
        "Solved: `{}` ≤ {:e} and solve time within the time limit.",
        report.criterion, report.tolerance
    );
    if let Some(note) = &report.note {
        let _ = writeln!(out, "\nNote: {note}.");
    }
    if !report.missing.is_empty() {
        let _ = writeln!(
            out,
            "\n**Partial:** {} planned tasks have no result; they count as not solved:\n",
            report.missing.len()
        );
        for task in report.missing.iter().take(50) {
            let _ = writeln!(out, "- {task}");
        }
        if report.missing.len() > 50 {
            let _ = writeln!(out, "- … and {} more", report.missing.len() - 50);
        }
    }
    if !report.unreadable.is_empty() {
        let _ = writeln!(out, "\nFiles not loaded (left out of the counts):\n");
        for (file, error) in &report.unreadable {
            let _ = writeln!(out, "- `{}`: {error}", short_name(file));
        }
    }
    let _ = writeln!(out, "\n## Per solver\n");
    let _ = writeln!(
        out,
        "| solver | solved | median time (solved) | median time (all runs) | converged (own test) | errors | fastest |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|");
    for s in &report.summary {
        let _ = writeln!(
            out,
            "| {} | {}/{} | {} | {} | {} | {} | {:.0} % |",
            s.solver,
            s.solved,
            s.problems,
            seconds(s.median_time_solved_s),
            seconds(s.median_time_all_s),
            s.converged,
            s.errors,
            100.0 * s.fastest_share
        );
    }
    if let Some(png) = profile_png {
        let _ = writeln!(out, "\n![performance profile]({png})");
    }
    let _ = writeln!(out, "\n## Per problem\n");
    for problem in &report.problems {
        let rows: Vec<&Row> = report
            .rows
            .iter()
            .filter(|r| &r.result.problem == problem)
            .collect();
        let contacts = rows
            .iter()
            .find_map(|r| r.result.contacts)
            .map_or("?".to_string(), |c| c.to_string());
        let _ = writeln!(out, "### {} ({contacts} contacts)\n", short_name(problem));
        let absolute = if report.criterion == FALLBACK_CRITERION {
            String::new()
        } else {
            format!(" {FALLBACK_CRITERION} |")
        };
        let _ = writeln!(
            out,
            "| solver | status | iterations | time | {} |{absolute} distance to best | solved |",
            report.criterion
        );
        let _ = writeln!(
            out,
            "|---|---|---|---|---|{}---|---|",
            if absolute.is_empty() { "" } else { "---|" }
        );
        for r in rows {
            let status = match &r.result.error {
                Some(e) => format!("error: {}", e.replace('|', "/")),
                None => r.result.status.replace('|', "/"),
            };
            let absolute_value = if absolute.is_empty() {
                String::new()
            } else {
                format!(" {} |", number(metric(&r.result, FALLBACK_CRITERION)))
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |{absolute_value} {} | {} |",
                r.result.solver,
                status,
                r.result.iterations.map_or("-".into(), |i| i.to_string()),
                seconds(r.result.solve_time_s),
                number(Some(r.criterion_value)),
                number(r.distance_to_best),
                if r.solved { "yes" } else { "no" }
            );
        }
        let _ = writeln!(out);
    }
    out
}

fn number(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v:.2e}"),
        Some(v) => v.to_string(),
        None => "-".into(),
    }
}

/// Every scalar metric of a result, flattened (`signorini_violation.complementarity`),
/// without the per-contact list.
fn scalar_metrics(result: &TaskResult) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    if let Some(Value::Object(map)) = &result.metrics {
        for (key, value) in map {
            match value {
                Value::Object(inner) => {
                    for (k, v) in inner {
                        out.insert(format!("{key}.{k}"), v.clone());
                    }
                }
                Value::Array(_) => {}
                other => {
                    out.insert(key.clone(), other.clone());
                }
            }
        }
    }
    out
}

/// The CSV of every result: fixed columns, then every scalar metric (sorted names).
pub fn csv(report: &CorpusReport) -> Result<Vec<u8>, CorpusError> {
    let metric_names: BTreeSet<String> = report
        .rows
        .iter()
        .flat_map(|r| scalar_metrics(&r.result).into_keys())
        .collect();
    let mut writer = csv::Writer::from_writer(Vec::new());
    let fail = |e: csv::Error| CorpusError::Io {
        path: "results.csv".into(),
        message: e.to_string(),
    };
    let mut header: Vec<String> = [
        "problem",
        "contacts",
        "solver",
        "status",
        "converged",
        "iterations",
        "solve_time_s",
        "timeout_s",
        "own_residual",
        "criterion",
        "criterion_value",
        "solved",
        "distance_to_best",
        "error",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    header.extend(metric_names.iter().cloned());
    writer.write_record(&header).map_err(fail)?;
    let opt = |v: Option<String>| v.unwrap_or_default();
    for r in &report.rows {
        let t = &r.result;
        let metrics = scalar_metrics(t);
        let mut record = vec![
            t.problem.clone(),
            opt(t.contacts.map(|c| c.to_string())),
            t.solver.clone(),
            t.status.clone(),
            t.converged.to_string(),
            opt(t.iterations.map(|i| i.to_string())),
            opt(t.solve_time_s.map(|v| format!("{v:e}"))),
            format!("{:e}", t.timeout_s),
            opt(t.own_residual.map(|v| format!("{v:e}"))),
            report.criterion.clone(),
            format!("{:e}", r.criterion_value),
            r.solved.to_string(),
            opt(r.distance_to_best.map(|v| format!("{v:e}"))),
            opt(t.error.clone()),
        ];
        record.extend(metric_names.iter().map(|name| match metrics.get(name) {
            Some(Value::Number(n)) => n.as_f64().map_or(n.to_string(), |v| format!("{v:e}")),
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        }));
        writer.write_record(&record).map_err(fail)?;
    }
    writer.into_inner().map_err(|e| CorpusError::Io {
        path: "results.csv".into(),
        message: e.to_string(),
    })
}

/// Names of the files of a corpus report.
pub const REPORT_FILES: [&str; 6] = [
    "results.csv",
    "results.json",
    "report.md",
    "profile.png",
    "profile.svg",
    "profile.pdf",
];

/// Writes the report's files ([`REPORT_FILES`]) into `dir`, a new directory (a staging
/// directory: [`super::bench::publish_report`] puts them in place).
pub fn write_report(report: &CorpusReport, dir: &Path) -> Result<(), CorpusError> {
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).map_err(|e| CorpusError::io(&path, e))
    };
    write("results.csv", &csv(report)?)?;
    let json = serde_json::to_vec_pretty(report).map_err(|e| CorpusError::io(dir, e))?;
    write("results.json", &json)?;
    let times = solved_times(&report.rows, &report.problems, &report.solvers);
    let ratios = performance_ratios(&times, report.solvers.len());
    let title = format!(
        "Performance profile: {} problems, solved at {} ≤ {:e}",
        report.problems.len(),
        report.criterion.replace('_', " "),
        report.tolerance
    );
    plot_profile(&dir.join("profile"), &title, &report.solvers, &ratios)?;
    write(
        "report.md",
        markdown(report, Some("profile.png")).as_bytes(),
    )
}
