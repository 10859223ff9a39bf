//! Tab. IV: integral consistency error of the sliding cube against a tolerance-1e-9
//! reference, at tolerances 1e-6, 1e-4, 1e-2, for CCP/PGS, RaiSim and NCP/PGS, under
//! ContactBench's protocol (the paper's) and ours.

use super::sliding::{
    cell_markers, consistency, cube_protocol, find, max_iter, paper_name, paper_style, starred,
    state_consistency, sweep, tolerance_guard, Knob, Proto, DURATION, REFERENCE_TH, SOLVERS,
};
use crate::paper::claims::{num, Claim, Comparison, Why};
use crate::paper::measurable;
use crate::paper::page::{Page, ProtocolLine};
use crate::paper::runs::unconverged;
use crate::paper::{Context, Experiment, PaperError};
use crate::report::axis::Scale;
use crate::report::chart::{Curve, Figure, LineChart, Panel};
use crate::report::tables::markdown_table;
use crate::simulation::recorder::RunRecord;
use crate::solvers::SolverId;

/// Tab. IV.
pub struct Tab4;

/// The tolerances.
pub const EPS: [f64; 3] = [1e-6, 1e-4, 1e-2];

/// The paper's Tab. IV (m·s), `[solver][ε]`, rows as [`SOLVERS`].
const PAPER: [[f64; 3]; 3] = [
    [6.7e-7, 4.3e-5, 4.8e-2],
    [9.0e-8, 4.8e-5, 7.0e-4],
    [6.0e-10, 9.9e-8, 5.3e-6],
];

fn paper_value(id: SolverId, eps: f64) -> f64 {
    let row = SOLVERS.iter().position(|s| *s == id);
    let col = EPS.iter().position(|e| (e / eps - 1.0).abs() < 1e-9);
    match (row, col) {
        (Some(r), Some(c)) => PAPER[r][c],
        _ => f64::NAN,
    }
}

/// One cell of the table: a solver at a tolerance under a protocol, against its reference.
#[derive(Debug, Clone)]
struct Cell {
    /// State consistency error (the claims') and position error (m·s).
    state: Option<f64>,
    position: Option<f64>,
    /// Unconverged steps of the run and its reference.
    unconverged: usize,
    /// Mean iterations per step of the run.
    iterations: f64,
    /// Why the cell cannot decide a claim.
    degenerate: Option<String>,
}

fn mean_iterations(run: &RunRecord) -> f64 {
    run.steps
        .iter()
        .skip(1)
        .map(|s| s.iterations as f64)
        .sum::<f64>()
        / (run.steps.len().max(2) - 1) as f64
}

fn cell_of(
    runs: &[super::sliding::SweepRun],
    id: SolverId,
    proto: Proto,
    eps: f64,
) -> Option<Cell> {
    let run = find(runs, id, proto, Some(Knob::Eps(eps)))?;
    let reference = find(runs, id, proto, None)?;
    let label = format!("{} at ε = {eps:e}", paper_name(id));
    Some(Cell {
        state: state_consistency(run, reference),
        position: consistency(run, reference, f64::INFINITY),
        unconverged: unconverged(run) + unconverged(reference),
        iterations: mean_iterations(run),
        degenerate: measurable::any([
            measurable::identical(&label, run, reference),
            measurable::capped(&label, run),
            measurable::capped(&format!("{label}, its reference"), reference),
            tolerance_guard(&label, proto, eps, reference),
        ]),
    })
}

impl Experiment for Tab4 {
    fn id(&self) -> &'static str {
        "tab4"
    }

    fn paper_ref(&self) -> &'static str {
        "§IV-B, Tab. IV"
    }

    fn title(&self) -> &'static str {
        "Self-consistency with respect to the solver tolerance"
    }

    fn run(&self, ctx: &Context) -> Result<Page, PaperError> {
        let knobs: Vec<Knob> = EPS.iter().map(|e| Knob::Eps(*e)).collect();
        let runs = sweep(
            &SOLVERS,
            &Proto::ALL,
            &knobs,
            Some(Knob::Eps(REFERENCE_TH)),
            DURATION,
            ctx.quick,
        )?;
        let cell = |id: SolverId, proto: Proto, eps: f64| cell_of(&runs, id, proto, eps);
        let error = |id, proto, eps| {
            cell(id, proto, eps)
                .and_then(|c| c.state)
                .unwrap_or(f64::NAN)
        };
        let degenerate = |id, proto, eps| cell(id, proto, eps).and_then(|c| c.degenerate);

        let mut page = Page::headed(self);
        page.setup = vec![
            "Scenario `scenarios/paper/cube_slide.yaml` (ContactBench's `cube.py --slide`, as Tab. III), Δt = 1 ms, 1.098 s.".into(),
            format!("Tolerance ε ∈ {{1e-6, 1e-4, 1e-2}} against a reference at ε = {REFERENCE_TH:e} of the same solver and protocol; state consistency error `Σ‖x − x_ref‖Δt`, `x = (q, v)`, as Tab. III (the claims), and the position error of the cube's centre (m·s) beside it."),
            format!("**ContactBench protocol** (the paper's): the solver sees `(G, g/Δt)`, so ε bounds forces (N) and accelerations (m/s²): ε = 1e-2 is 1e-5 on our impulse and velocity feasibilities and 1e-8 on our complementarity. It stops when its residual (NCP for NCP/PGS and RaiSim, CCP for CCP/PGS) < ε or the relative step < 1e-12, at most {} sweeps, cold starts; RaiSim with α = 1 decaying by γ = 0.9 per sweep to α_min = 1e-4 (ContactBench's Python defaults).", max_iter(ctx.quick)),
            "**ContactBench test in impulse units**: the same test, cap, cold starts and RaiSim parameters, with ε applied to our impulses (N·s) and velocities (m/s), to separate the effect of units from the rest.".into(),
            format!("**Our protocol**: the solver's own residual (NCP criterion, CCP residual, RaiSim's own eq. 21 residual) in impulses and velocities ≤ ε, no step test, at most {} iterations, warm starts, RaiSim α decaying by 0.99 to 0.1.", max_iter(ctx.quick)),
            "`*`: some steps of the run or its reference did not meet the tolerance. A cell is *not measurable* when its run and reference are identical, when the run or the reference ended at the iteration cap on at least half of its steps, or when ε is at least the contact impulse it bounds (the reference's median largest impulse, 2.4e-3 N·s, i.e. 2.4 N as a force): such a cell decides no claim.".into(),
        ];
        page.protocol = cube_protocol(ctx.quick);
        page.protocol.push(ProtocolLine::new(
            "tolerances",
            "th edited by hand: 1e-6, 1e-4, 1e-2 against 1e-9 (the paper)",
            "the same values, under the three protocols of the Setup",
        ));

        let mut table = Vec::new();
        let mut rows = Vec::new();
        for id in SOLVERS {
            for eps in EPS {
                let paper = paper_value(id, eps);
                page.comparisons.push(Comparison::number(
                    format!(
                        "{} at ε = {eps:e}, ContactBench protocol, state error",
                        paper_name(id)
                    ),
                    paper,
                    cell(id, Proto::ContactBench, eps).and_then(|c| c.state),
                ));
                let mut row = vec![paper_name(id).into(), format!("{eps:e}"), num(paper)];
                for proto in Proto::ALL {
                    let c = cell(id, proto, eps);
                    let state = c.as_ref().and_then(|c| c.state);
                    let mark = if c.as_ref().is_some_and(|c| c.degenerate.is_some()) {
                        " (n.m.)"
                    } else {
                        ""
                    };
                    row.extend([
                        format!(
                            "{}{mark}",
                            starred(state, c.as_ref().map_or(0, |c| c.unconverged))
                        ),
                        state.map_or("–".into(), |e| num(e / paper)),
                        c.as_ref()
                            .map_or("–".into(), |c| format!("{:.1}", c.iterations)),
                    ]);
                    if let Some(c) = c {
                        rows.push(vec![
                            id.to_string(),
                            proto.tag().into(),
                            format!("{eps:e}"),
                            c.state.map_or("NaN".into(), |e| format!("{e:e}")),
                            c.position.map_or("NaN".into(), |e| format!("{e:e}")),
                            format!("{paper:e}"),
                            c.unconverged.to_string(),
                            format!("{}", c.iterations),
                            c.degenerate.unwrap_or_default(),
                        ]);
                    }
                }
                table.push(row);
            }
        }
        page.tables.push((
            "Tab. IV, paper and ours (state error; iterations: mean per step; n.m.: not measurable, see the Setup)".into(),
            markdown_table(
                &[
                    "solver",
                    "ε",
                    "paper",
                    "ContactBench protocol",
                    "÷ paper",
                    "iterations",
                    "ContactBench test, impulse units",
                    "÷ paper",
                    "iterations",
                    "our protocol",
                    "÷ paper",
                    "iterations",
                ],
                &table,
            ),
        ));
        page.data.push(ctx.csv(
            "tab4.csv",
            &[
                "solver",
                "protocol",
                "eps",
                "state_consistency_error",
                "position_consistency_error_m_s",
                "paper_m_s",
                "unconverged_steps",
                "mean_iterations",
                "not_measurable_because",
            ],
            &rows,
        )?);

        for proto in Proto::ALL {
            let ncp = |eps| error(SolverId::NcpPgs, proto, eps);
            let guard = |other: SolverId, eps: f64| {
                measurable::any([
                    degenerate(other, proto, eps),
                    degenerate(SolverId::NcpPgs, proto, eps),
                ])
            };
            let most = Claim::all(
                &format!(
                    "NCP/PGS is the most self-consistent model at every tolerance (Tab. IV; {})",
                    proto.name()
                ),
                EPS.iter()
                    .flat_map(|&eps| {
                        [SolverId::CcpPgs, SolverId::Raisim].map(|other| {
                            Claim::ratio_at_least(
                                "",
                                (
                                    &format!("e({}, {eps:e})", paper_name(other)),
                                    error(other, proto, eps),
                                ),
                                (&format!("e(NCP/PGS, {eps:e})"), ncp(eps)),
                                1.0,
                            )
                            .unless(guard(other, eps))
                        })
                    })
                    .collect(),
            )
            .threshold("the paper's ordering: NCP/PGS has the smallest error in every column of Tab. IV; tested ≥ 1");
            page.claims.push(explain_most(most, proto, &error));
            for (other, paper_ratio) in [(SolverId::CcpPgs, 9057.0), (SolverId::Raisim, 132.0)] {
                let claim = Claim::ratio_at_least(
                    &format!("\"Trajectories generated via the RaiSim and CCP contact models are significantly modified when ε_abs is increased\": {} at ε = 1e-2 departs ≥ 10× more than NCP/PGS ({})", paper_name(other), proto.name()),
                    (&format!("e({}, 1e-2)", paper_name(other)), error(other, proto, 1e-2)),
                    ("e(NCP/PGS, 1e-2)", ncp(1e-2)),
                    10.0,
                )
                .threshold(format!("the paper's {} ÷ {} = {}×; \"significantly\" tested as ≥ 10, {} of it", num(paper_value(other, 1e-2)), num(paper_value(SolverId::NcpPgs, 1e-2)), num(paper_ratio), num(10.0 / paper_ratio)))
                .unless(guard(other, 1e-2));
                page.claims.push(explain_departure(claim, proto, &error));
            }
            let ordering = Claim::ratio_at_least(
                &format!(
                    "Tab. IV: at ε = 1e-2 CCP/PGS departs more than RaiSim ({})",
                    proto.name()
                ),
                ("e(CCP/PGS, 1e-2)", error(SolverId::CcpPgs, proto, 1e-2)),
                ("e(RaiSim, 1e-2)", error(SolverId::Raisim, proto, 1e-2)),
                1.0,
            )
            .threshold("the paper's 4.8e-2 ÷ 7.0e-4 = 69×; tested as the ordering, ≥ 1")
            .unless(measurable::any([
                degenerate(SolverId::CcpPgs, proto, 1e-2),
                degenerate(SolverId::Raisim, proto, 1e-2),
            ]));
            page.claims.push(explain_departure(ordering, proto, &error));
        }

        // Which protocol reproduces each row best: smallest mean |log10(ours / paper)|.
        for id in SOLVERS {
            let distance = |proto: Proto| {
                let logs: Vec<f64> = EPS
                    .iter()
                    .map(|e| (error(id, proto, *e) / paper_value(id, *e)).log10().abs())
                    .collect();
                if logs.iter().all(|l| l.is_finite()) {
                    logs.iter().sum::<f64>() / logs.len() as f64
                } else {
                    f64::INFINITY
                }
            };
            let best = Proto::ALL
                .into_iter()
                .min_by(|a, b| distance(*a).total_cmp(&distance(*b)));
            if let Some(best) = best {
                page.notes.push(format!(
                    "{}: the protocol closest to the paper's row: **{}** (mean |log10(ours ÷ paper)| = {}; ContactBench protocol {}, impulse units {}, ours {}; ∞ when a cell is 0 or missing).",
                    paper_name(id),
                    best.name(),
                    num(distance(best)),
                    num(distance(Proto::ContactBench)),
                    num(distance(Proto::ContactBenchImpulses)),
                    num(distance(Proto::Ours)),
                ));
            }
        }
        let rise = |eps: f64| {
            find(&runs, SolverId::CcpPgs, Proto::Ours, Some(Knob::Eps(eps))).map_or(f64::NAN, |r| {
                r.steps
                    .iter()
                    .map(|s| s.base_position[2] - 0.1)
                    .fold(f64::NAN, f64::max)
            })
        };
        let mean_ratio = |id: SolverId, proto: Proto| {
            let logs: Vec<f64> = EPS
                .iter()
                .map(|e| (error(id, proto, *e) / paper_value(id, *e)).log10())
                .filter(|l| l.is_finite())
                .collect();
            10f64.powf(logs.iter().sum::<f64>() / logs.len().max(1) as f64)
        };
        page.notes.insert(
            0,
            format!(
                "Why ours differ. ContactBench hands its solvers `g/Δt`: its tolerance bounds forces and accelerations, i.e. {}× tighter on our feasibilities and {}× on our complementarity at Δt = 1 ms. Run that way (first column), NCP/PGS's state errors are {}× the paper's (geometric mean over ε). Under our protocol (the tolerance on impulses and velocities, warm starts) they are {}× the paper's; with the same units but ContactBench's cold starts and step test, {}×. CCP/PGS at ε = 1e-2 (paper 4.8e-2 m·s, a cube that flies off its path) is not reached under any protocol here (largest {}): our CCP/PGS cube rises by {} mm at ε = 1e-6 and {} mm at ε = 1e-2 (our protocol): its take-off (Fig. 10) hardly depends on ε. The paper's duration, error definition and the exact settings of its runs are not in ContactBench's repository (docs/paper-protocol.md).",
                num(1.0 / 1e-3),
                num(1.0 / 1e-6),
                num(mean_ratio(SolverId::NcpPgs, Proto::ContactBench)),
                num(mean_ratio(SolverId::NcpPgs, Proto::Ours)),
                num(mean_ratio(SolverId::NcpPgs, Proto::ContactBenchImpulses)),
                num(Proto::ALL
                    .iter()
                    .map(|p| error(SolverId::CcpPgs, *p, 1e-2))
                    .fold(f64::NAN, f64::max)),
                num(rise(1e-6) * 1e3),
                num(rise(1e-2) * 1e3),
            ),
        );

        let panels = Proto::ALL
            .iter()
            .map(|&proto| {
                let mut curves = Vec::new();
                for id in SOLVERS {
                    curves.push(
                        Curve::new(
                            format!("{id} ({})", proto.tag()),
                            EPS.iter().map(|e| (*e, error(id, proto, *e))).collect(),
                        )
                        .marked(),
                    );
                    curves.push(
                        Curve::styled(
                            format!("paper {}", paper_name(id)),
                            EPS.iter().map(|e| (*e, paper_value(id, *e))).collect(),
                            paper_style(id),
                        )
                        .marked(),
                    );
                }
                let cells: Vec<(f64, f64, bool)> = SOLVERS
                    .iter()
                    .flat_map(|&id| EPS.iter().map(move |&e| (id, e)))
                    .map(|(id, e)| (e, error(id, proto, e), degenerate(id, proto, e).is_some()))
                    .collect();
                curves.extend(cell_markers(&cells));
                Panel::Line(LineChart {
                    title: proto.name().to_string(),
                    x_label: "tolerance ε".into(),
                    y_label: super::sliding::STATE_ERROR_LABEL.into(),
                    x_scale: Scale::Log,
                    y_scale: Scale::Log,
                    curves,
                    ..Default::default()
                })
            })
            .collect();
        let mut figure = Figure::grid(
            "Tab. IV: integral state consistency error vs tolerance (sliding cube, reference ε = 1e-9)",
            2,
            panels,
        );
        figure.panel_size = (760, 520);
        page.figures.push((
            "State consistency error vs tolerance: ours (each solver's line, filled markers) and the paper's (dotted, squares); black crosses: cells not measurable (capped, or ε above the signal); grey triangles at the axis floor: errors exactly 0 (run identical to its reference), which a log axis cannot show".into(),
            ctx.figure("tab4", &figure)?,
        ));
        Ok(page)
    }
}

/// Ours ÷ the paper's over the row of `id` under `proto`: the smallest and the largest.
fn row_ratios(
    error: &dyn Fn(SolverId, Proto, f64) -> f64,
    id: SolverId,
    proto: Proto,
) -> (f64, f64) {
    let r: Vec<f64> = EPS
        .iter()
        .map(|e| error(id, proto, *e) / paper_value(id, *e))
        .collect();
    (
        r.iter().copied().fold(f64::NAN, f64::min),
        r.iter().copied().fold(f64::NAN, f64::max),
    )
}

/// What ContactBench's protocol gives against the paper's rows, as evidence.
fn rows_evidence(error: &dyn Fn(SolverId, Proto, f64) -> f64) -> String {
    let (n0, n1) = row_ratios(error, SolverId::NcpPgs, Proto::ContactBench);
    let (c0, c1) = row_ratios(error, SolverId::CcpPgs, Proto::ContactBench);
    format!(
        "run as cube.py runs (forces, rel 1e-12, cold), NCP/PGS's state errors are {}–{}× the paper's (its row is reproduced) while CCP/PGS's are {}–{}× the paper's: the same CCP/PGS sweep as ContactBench's (step 3/tr(G_ii)) is far more self-consistent here than in the paper's row, whose settings are not in the repository",
        num(n0), num(n1), num(c0), num(c1)
    )
}

/// Why "NCP/PGS is the most self-consistent" does not hold under `proto`.
fn explain_most(claim: Claim, proto: Proto, error: &dyn Fn(SolverId, Proto, f64) -> f64) -> Claim {
    match proto {
        Proto::ContactBench => claim.why(Why::Finding, rows_evidence(error)),
        Proto::ContactBenchImpulses => claim.why(Why::Protocol, "ContactBench's stopping test with ε on impulses is no protocol of the paper: it separates the effect of units"),
        Proto::Ours => claim.why(Why::Protocol, "our protocol (ε on impulses, warm starts) is not the paper's"),
    }
}

/// Why a departure claim does not hold under `proto`.
fn explain_departure(
    claim: Claim,
    proto: Proto,
    error: &dyn Fn(SolverId, Proto, f64) -> f64,
) -> Claim {
    match proto {
        Proto::ContactBench => claim.why(Why::Finding, rows_evidence(error)),
        Proto::ContactBenchImpulses => claim.why(Why::Protocol, "ContactBench's stopping test with ε on impulses is no protocol of the paper: it separates the effect of units"),
        Proto::Ours => claim.why(Why::Protocol, "our protocol (ε on impulses, warm starts) is not the paper's"),
    }
}
