//! The gradient study's page: every solver on every task ([`super::tasks`]), our
//! derivative beside central differences of the same simulator, the spurious internal
//! force at the same states, and the claims of the contact models paper on derivatives
//! tested on them.

use rayon::prelude::*;

use super::tasks::{
    horizon, measure, scenario, start_state, Measured, Task, EPS_REL, MAX_ITER, RELATIVE_STEP,
    SOLO_FOOT, SOLO_JOINT, TORQUE_STEP,
};
use crate::paper::claims::{num, Claim, Why};
use crate::paper::page::Page;
use crate::paper::{Context, Experiment, PaperError};
use crate::problem::ContactModel;
use crate::report::axis::Scale;
use crate::report::chart::{Curve, Figure, LineChart, Panel};
use crate::report::tables::markdown_table;
use crate::solvers::SolverId;

/// The study.
pub struct Gradients;

const ID: &str = "gradients";
/// Values drawn at this floor on the log axes when they are 0.
const FLOOR: f64 = 1e-16;
/// A spurious internal force above this fraction of `‖λ‖∞` counts as present.
const SPURIOUS_PRESENT: f64 = 1e-6;
/// The rank correlation the spurious-force claim asks.
const CORRELATION: f64 = 0.5;
/// The relaxation's gradient differs from NCP's by at least this (relative) where it drifts.
const RELAXED_DIFFERS: f64 = 1e-2;
/// ... and by at most this where it does not.
const RELAXED_AGREES: f64 = 1e-3;
/// The derivative's largest error against the differences away from mode boundaries.
const AGREEMENT: f64 = 1e-3;

/// One solver on one task.
struct Row {
    task: Task,
    solver: SolverId,
    outcome: Result<Measured, String>,
}

impl Row {
    fn measured(&self) -> Option<&Measured> {
        self.outcome.as_ref().ok()
    }
}

fn failed(e: impl std::fmt::Display) -> PaperError {
    PaperError::RunFailed {
        run: ID.into(),
        reason: e.to_string(),
    }
}

fn rows(quick: bool) -> Result<Vec<Row>, PaperError> {
    let (steps, settle) = horizon(quick);
    let mut out = Vec::new();
    for task in Task::ALL {
        let scenario = scenario(task)?;
        let start = start_state(task, &scenario, settle).map_err(failed)?;
        let measured: Vec<Row> = SolverId::ALL
            .par_iter()
            .map(|&solver| Row {
                task,
                solver,
                outcome: measure(task, &scenario, solver, &start, steps),
            })
            .collect();
        out.extend(measured);
    }
    Ok(out)
}

fn vector(x: &[f64]) -> String {
    let parts: Vec<String> = x.iter().map(|v| num(*v)).collect();
    if parts.len() == 1 {
        parts[0].clone()
    } else {
        format!("[{}]", parts.join(", "))
    }
}

fn optional(x: Option<f64>) -> String {
    x.map_or_else(|| "–".into(), num)
}

fn table(task: Task, rows: &[Row]) -> (String, String) {
    let header = [
        "solver",
        "ours",
        "central FD (h)",
        "FD (10 h)",
        "relative error",
        "FD uncertainty",
        "spurious internal force (N·s)",
        "its fraction of ‖λ‖∞",
        "modes (last step)",
        "boundary flags",
        "rise (m)",
    ];
    let body: Vec<Vec<String>> = rows
        .iter()
        .filter(|r| r.task == task)
        .map(|r| match &r.outcome {
            Ok(m) => vec![
                r.solver.to_string(),
                vector(&m.ours),
                format!("{} (h = {})", vector(&m.fd), num(m.step)),
                vector(&m.fd_coarse),
                num(m.error),
                num(m.fd_uncertainty),
                if m.spurious_note.is_empty() {
                    optional(m.spurious)
                } else {
                    format!("invalid: {}", m.spurious_note)
                },
                optional(m.spurious_relative),
                m.modes.clone(),
                m.boundaries.to_string(),
                num(m.rise),
            ],
            Err(e) => {
                let mut row = vec![r.solver.to_string(), format!("error: {e}")];
                row.resize(header.len(), "–".into());
                row
            }
        })
        .collect();
    (
        format!("{}: {}", task.name(), task.quantity()),
        markdown_table(&header, &body),
    )
}

/// Ranks with ties averaged (1-based).
fn ranks(x: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..x.len()).collect();
    order.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
    let mut out = vec![0.0; x.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && x[order[j + 1]] == x[order[i]] {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            out[k] = rank;
        }
        i = j + 1;
    }
    out
}

/// Spearman's rank correlation of `x` and `y` (`None` when one of them is constant).
fn spearman(x: &[f64], y: &[f64]) -> Option<f64> {
    let (rx, ry) = (ranks(x), ranks(y));
    let n = rx.len() as f64;
    let mean = (n + 1.0) / 2.0;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in rx.iter().zip(&ry) {
        sxy += (a - mean) * (b - mean);
        sxx += (a - mean) * (a - mean);
        syy += (b - mean) * (b - mean);
    }
    (sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}

/// "Spurious contact forces may catastrophically impact the computation of derivatives",
/// on the derivatives of positions or of forces (`forces`): the rank correlation, over
/// every measured row of those tasks with a valid metric, of the spurious force (fraction
/// of `‖λ‖∞`) and the derivative's error against the differences.
fn spurious_claim(rows: &[Row], forces: bool) -> Claim {
    let pairs: Vec<(f64, f64)> = rows
        .iter()
        .filter(|r| r.task.is_force() == forces)
        .filter_map(|r| {
            let m = r.measured()?;
            Some((m.spurious_relative?, m.error))
        })
        .collect();
    let (s, e): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
    let present = s.iter().filter(|x| **x > SPURIOUS_PRESENT).count();
    let rho = spearman(&s, &e).unwrap_or(f64::NAN);
    let reason = if present < 2 {
        Some(format!(
            "{present} of {} answers carry a spurious internal force above {} of ‖λ‖∞: \
             nothing to correlate",
            s.len(),
            num(SPURIOUS_PRESENT)
        ))
    } else if !rho.is_finite() {
        Some("the errors or the forces are all equal".to_string())
    } else {
        None
    };
    let worst_with = pairs
        .iter()
        .filter(|(s, _)| *s > SPURIOUS_PRESENT)
        .map(|p| p.1)
        .fold(0.0, f64::max);
    let what = if forces {
        "contact forces (Solo-12's foot, the pushed cube's corner)"
    } else {
        "positions (the cubes)"
    };
    Claim::at_least(
        &format!(
            "spurious contact forces may catastrophically impact the computation of \
             derivatives (§IV-B, underdetermined problems): derivatives of {what}"
        ),
        &format!(
            "Spearman ρ(spurious force / ‖λ‖∞, derivative error) over {} solver-task pairs",
            s.len()
        ),
        rho,
        CORRELATION,
    )
    .threshold(format!(
        "ours: a clear rank correlation ({}); the paper gives no number",
        num(CORRELATION)
    ))
    .unless(reason)
    .why(
        Why::Finding,
        format!(
            "the error does not follow the spurious force: the largest error among the \
             {present} answers with one is {}; a spurious internal force changes no velocity, \
             so the derivative of a position is wrong only if it moves a contact's mode",
            num(worst_with)
        ),
    )
}

fn first(m: &Measured) -> f64 {
    m.ours.first().copied().unwrap_or(f64::NAN)
}

/// The CCP's gradient beside NCP's (ncp-admm's): relative distance of the vectors.
fn relaxed_distance(rows: &[Row], task: Task, solver: SolverId) -> Option<f64> {
    let of = |id: SolverId| {
        rows.iter()
            .find(|r| r.task == task && r.solver == id)
            .and_then(Row::measured)
    };
    let (ccp, ncp) = (of(solver)?, of(SolverId::NcpAdmm)?);
    let scale = ncp.ours.iter().map(|x| x.abs()).fold(0.0, f64::max);
    let diff = ccp
        .ours
        .iter()
        .zip(&ncp.ours)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    Some(diff / scale)
}

fn ccp_solvers() -> Vec<SolverId> {
    SolverId::ALL
        .into_iter()
        .filter(|s| s.model() == ContactModel::Ccp)
        .collect()
}

/// "The CCP relaxation induces unphysical forces leading to the vertical bouncing of the
/// cube" (Fig. 10): its gradients differ from NCP's where it drifts (the sliding cube) and
/// agree where it does not (Solo-12 sticking).
fn relaxation_claim(rows: &[Row]) -> Claim {
    let mut parts = Vec::new();
    let mut missing = Vec::new();
    for solver in ccp_solvers() {
        let measured = |task: Task| {
            rows.iter()
                .any(|r| r.task == task && r.solver == solver && r.measured().is_some())
        };
        if !measured(Task::Slide) || !measured(Task::Solo) {
            missing.push(solver.to_string());
            continue;
        }
        let rise = rows
            .iter()
            .find(|r| r.task == Task::Slide && r.solver == solver)
            .and_then(Row::measured)
            .map_or(f64::NAN, |m| m.rise);
        let slide = relaxed_distance(rows, Task::Slide, solver).unwrap_or(f64::NAN);
        parts.push(Claim::at_least(
            "",
            &format!(
                "sliding cube (rise {} m): |g({solver}) − g(ncp-admm)| / |g(ncp-admm)|",
                num(rise)
            ),
            slide,
            RELAXED_DIFFERS,
        ));
        let solo = relaxed_distance(rows, Task::Solo, solver).unwrap_or(f64::NAN);
        parts.push(Claim::at_most(
            "",
            &format!("Solo-12 sticking: ‖g({solver}) − g(ncp-admm)‖∞ / ‖g(ncp-admm)‖∞"),
            solo,
            RELAXED_AGREES,
        ));
    }
    let text = format!(
        "the CCP relaxation induces unphysical forces leading to the vertical bouncing of the \
         cube (Fig. 10): its gradients differ from NCP's where it drifts, not where it sticks{}",
        if missing.is_empty() {
            String::new()
        } else {
            format!(" (left out, no derivative: {})", missing.join(", "))
        }
    );
    Claim::all(&text, parts)
        .threshold(format!(
            "ours: differ by ≥ {} sliding, agree to ≤ {} sticking",
            num(RELAXED_DIFFERS),
            num(RELAXED_AGREES)
        ))
        .why(
            Why::Finding,
            "see the rows that miss: a CCP solver's gradient on the sliding cube is NCP's, or \
         differs while sticking",
        )
}

/// Our derivative is the simulator's gradient where the solve converged and no contact sat
/// on a mode boundary along the horizon.
fn agreement_claim(rows: &[Row]) -> Claim {
    let mut parts = Vec::new();
    let mut excluded = Vec::new();
    for r in rows.iter().filter(|r| r.task.is_determined()) {
        let Some(m) = r.measured() else { continue };
        if m.boundaries > 0 {
            excluded.push(format!("{} on the {}", r.solver, r.task.name()));
            continue;
        }
        parts.push(
            Claim::at_most(
                "",
                &format!("{} on the {}: error", r.solver, r.task.name()),
                m.error,
                AGREEMENT.max(10.0 * m.fd_uncertainty),
            )
            .unless((10.0 * m.fd_uncertainty > 1.0).then(|| {
                format!(
                    "{} on the {}: the differences at h and 10 h disagree by {}",
                    r.solver,
                    r.task.name(),
                    num(m.fd_uncertainty)
                )
            })),
        );
    }
    let text = format!(
        "the step derivatives chained over the horizon are the simulator's gradient where the \
         solve converged, the quantity is determined by the model (not a redundant contact's \
         own force) and no contact sits on a mode boundary (docs/derivatives.md){}",
        if excluded.is_empty() {
            String::new()
        } else {
            format!(" (left out, on a boundary: {})", excluded.join(", "))
        }
    );
    Claim::all(&text, parts)
        .threshold(format!(
            "ours: {} or ten times the differences' own uncertainty",
            num(AGREEMENT)
        ))
        .why(
            Why::Finding,
            "see the rows that miss: the derivative is not the gradient of that run",
        )
}

fn scatter_panel(rows: &[Row]) -> Panel {
    let floor = |x: f64| if x > FLOOR { x } else { FLOOR };
    let curves = SolverId::ALL
        .iter()
        .filter_map(|&solver| {
            let mut points = Vec::new();
            for r in rows.iter().filter(|r| r.solver == solver) {
                let Some(m) = r.measured() else { continue };
                let Some(s) = m.spurious_relative else {
                    continue;
                };
                points.push((floor(s), floor(m.error)));
                points.push((f64::NAN, f64::NAN));
            }
            (!points.is_empty()).then(|| Curve::new(solver.to_string(), points).marked())
        })
        .collect();
    Panel::Line(LineChart {
        title: format!(
            "(a) error against the differences vs spurious force (0 drawn at {})",
            num(FLOOR)
        ),
        x_label: "spurious internal force / max |λ|".into(),
        y_label: "relative error of the derivative".into(),
        x_scale: Scale::Log,
        y_scale: Scale::Log,
        curves,
        ..LineChart::default()
    })
}

fn relaxation_panel(rows: &[Row]) -> Panel {
    let curves = rows
        .iter()
        .filter(|r| r.task == Task::Slide)
        .filter_map(|r| {
            let m = r.measured()?;
            Some(Curve::new(r.solver.to_string(), vec![(m.rise * 1e3, first(m))]).marked())
        })
        .collect();
    Panel::Line(LineChart {
        title: "(b) sliding cube: ∂y(T)/∂v_y(0) vs the cube's rise".into(),
        x_label: "largest rise of the cube (mm)".into(),
        y_label: "∂y(T)/∂v_y(0) (s)".into(),
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        curves,
        ..LineChart::default()
    })
}

fn csv(ctx: &Context, rows: &[Row]) -> Result<String, PaperError> {
    let data: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut row = vec![r.task.name().to_string(), r.solver.to_string()];
            match &r.outcome {
                Ok(m) => {
                    let join = |x: &[f64]| {
                        x.iter()
                            .map(|v| format!("{v:.9e}"))
                            .collect::<Vec<_>>()
                            .join(" ")
                    };
                    row.extend([
                        join(&m.ours),
                        join(&m.fd),
                        join(&m.fd_coarse),
                        format!("{:e}", m.step),
                        format!("{:.6e}", m.error),
                        format!("{:.6e}", m.fd_uncertainty),
                        m.spurious.map_or_else(String::new, |s| format!("{s:.6e}")),
                        m.spurious_relative
                            .map_or_else(String::new, |s| format!("{s:.6e}")),
                        m.modes.clone(),
                        m.boundaries.to_string(),
                        format!("{:.6e}", m.rise),
                        String::new(),
                    ]);
                }
                Err(e) => {
                    row.resize(13, String::new());
                    row.push(e.clone());
                }
            }
            row
        })
        .collect();
    ctx.csv(
        &format!("{ID}.csv"),
        &[
            "task",
            "solver",
            "ours",
            "fd",
            "fd_10h",
            "h",
            "relative_error",
            "fd_uncertainty",
            "spurious",
            "spurious_fraction",
            "modes",
            "boundary_flags",
            "rise_m",
            "error",
        ],
        &data,
    )
}

impl Experiment for Gradients {
    fn id(&self) -> &'static str {
        ID
    }

    fn paper_ref(&self) -> &'static str {
        "§IV-B, §V (derivatives)"
    }

    fn title(&self) -> &'static str {
        "Gradients under every contact model and solver against finite differences"
    }

    fn run(&self, ctx: &Context) -> Result<Page, PaperError> {
        let rows = rows(ctx.quick)?;
        let (steps, settle) = horizon(ctx.quick);
        let stem = ctx.figure(
            ID,
            &Figure::grid(
                "Gradients of the simulator: error, spurious forces and relaxation",
                2,
                vec![scatter_panel(&rows), relaxation_panel(&rows)],
            ),
        )?;
        let mut page = Page::headed(self);
        page.setup = vec![
            format!(
                "Every built-in solver at a relative criterion {} (at most {} iterations, no \
                 stall stop); a solve that does not converge has no derivative (its row says \
                 why).",
                num(EPS_REL),
                MAX_ITER
            ),
            format!(
                "Sliding cube (scenarios/paper/cube_slide.yaml: 1 m/s along y, μ = 0.4, \
                 Δt = 1 ms): y after T = {steps} steps with respect to the initial v_y. \
                 Pushed cube: the same cube settled 50 steps by ncp-admm, then pushed along y \
                 by F = ½ μ m g = 1.96 N (a generalized force on its free flyer; it sticks): \
                 y(T) with respect to F."
            ),
            format!(
                "Solo-12 (scenarios/solo_standing.yaml, PD standing) settled {settle} steps by \
                 ncp-admm; every solver steps once from that state: the impulse of {SOLO_FOOT} \
                 ([t1, t2, n] in its contact frame) with respect to the torque of {SOLO_JOINT}. \
                 The pushed cube's first step: its first corner's impulse with respect to F, \
                 which the model does not determine (four corners, redundant)."
            ),
            format!(
                "Ours: the step derivatives A, B (docs/derivatives.md) chained along the \
                 horizon (δx⁺ = A δx + B δτ), the final δq read in the world; for Solo-12 the \
                 step's ∂λ/∂τ. Reference: central differences of whole runs of the same \
                 simulator (collision, solve and all), h = {} of the push's scale (1 m/s, \
                 F), and for Solo-12 of the same step with the knee's torque moved by \
                 ±h = {} N·m; again at 10 h: their disagreement is the \
                 reference's own uncertainty. Error: ‖ours − FD‖∞ / ‖FD‖∞ (for the pushed \
                 cube over the larger of |FD| and 1e-3 of the push-free gradient T²/2m).",
                num(RELATIVE_STEP),
                num(TORQUE_STEP)
            ),
            "Spurious internal force: src/paper/internal.rs at every step's answer (the \
             cube's four corners are redundant; Solo-12's four point feet are not), the largest \
             along the horizon."
                .into(),
        ];
        for task in Task::ALL {
            page.tables.push(table(task, &rows));
        }
        page.figures.push((
            "(a) each solver's derivative error on each task against its spurious internal \
             force (top right: the redundant corner's force under the solvers that leave a \
             spurious force; bottom: every position and determined force); (b) the sliding \
             cube's gradient against the cube's rise (the CCP solvers rise, the others slide)"
                .into(),
            stem,
        ));
        page.claims = vec![
            spurious_claim(&rows, false),
            spurious_claim(&rows, true),
            relaxation_claim(&rows),
            agreement_claim(&rows),
        ];
        page.notes.push(
            "A solver's row is the gradient of that solver's simulator: the differences re-run \
             the same solver, so they carry its stopping point and any mode it picks. The \
             derivative is that of the model's conditions at the answer (its modes decided \
             with docs/derivatives.md's tolerance), whichever solver found it."
                .into(),
        );
        page.data.push(csv(ctx, &rows)?);
        Ok(page)
    }
}
