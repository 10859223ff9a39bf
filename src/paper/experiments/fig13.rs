//! Fig. 13: Solo-12 standing on four contact points per foot (an under-determined contact
//! problem) with a growing compliance `R = r I`: the feet sink and slip, the spurious
//! internal forces go, and the solvers' iterations change.

use nalgebra::Vector3;

use super::sliding::paper_name;
use crate::paper::claims::{num, Claim, Comparison, Why};
use crate::paper::internal::{self, simulate_with_spurious, window, Spurious};
use crate::paper::measurable;
use crate::paper::page::{Page, ProtocolLine};
use crate::paper::protocol::{self, Protocol};
use crate::paper::runs::{solved_steps, unconverged, Run, SOLO_FLAT_FEET};
use crate::paper::{Context, Experiment, PaperError};
use crate::report::axis::Scale;
use crate::report::chart::{Curve, Figure, LineChart, Panel};
use crate::report::style::Dash;
use crate::report::tables::markdown_table;
use crate::simulation::recorder::RunRecord;
use crate::simulation::{Simulator, World};
use crate::solvers::{SolverId, SolverSpec};

/// Fig. 13.
pub struct Fig13;

/// The solvers of the paper, each run at every compliance.
const SOLVERS: [SolverId; 5] = [
    SolverId::CcpPgs,
    SolverId::CcpAdmm,
    SolverId::NcpPgs,
    SolverId::NcpAdmm,
    SolverId::Raisim,
];
/// The solver the claims on the contact law read (the CCP is the model MuJoCo makes
/// compliant; its PGS is the paper's per-contact CCP solver).
const LAW: SolverId = SolverId::CcpPgs;
/// Solo-12's weight (N), the scale of a round-off internal force.
const WEIGHT: f64 = 2.5 * 9.81;

fn compliances(quick: bool) -> Vec<f64> {
    if quick {
        vec![0.0, 1e-2, 1e-1]
    } else {
        vec![0.0, 1e-3, 1e-2, 1e-1]
    }
}

/// Over the second half of the run, per active contact (λ_N > 0): mean penetration depth
/// (m), mean physical tangential speed `‖c_T − R λ_T‖` (m/s).
fn contact_means(record: &RunRecord, r: f64) -> (f64, f64) {
    let half = record.steps.last().map_or(0.0, |s| s.time) / 2.0;
    let (mut depth, mut speed, mut n) = (0.0, 0.0, 0usize);
    for s in record.steps.iter().filter(|s| s.time > half) {
        for c in s.contacts.iter().filter(|c| c.lambda[2] > 0.0) {
            let v = Vector3::from(c.velocity) - Vector3::from(c.lambda) * r;
            depth += (-c.signed_distance).max(0.0);
            speed += v.xy().norm();
            n += 1;
        }
    }
    let n = n.max(1) as f64;
    (depth / n, speed / n)
}

/// Mean iterations per step with contacts, and the share of those steps at the cap.
fn effort(record: &RunRecord) -> (f64, String) {
    let steps: Vec<f64> = solved_steps(record)
        .iter()
        .filter(|s| !s.contacts.is_empty())
        .map(|s| s.iterations as f64)
        .collect();
    let (capped, total) = measurable::capped_steps(record);
    (
        steps.iter().sum::<f64>() / steps.len().max(1) as f64,
        format!("{capped} / {total}"),
    )
}

/// Mean spurious internal force (N) over the second half, or why it is invalid.
fn mean_spurious(record: &RunRecord, series: &[(f64, Spurious)]) -> Result<f64, String> {
    let end = record.steps.last().map_or(0.0, |s| s.time);
    let (values, invalid) = window(series, (end / 2.0, end));
    if let Some(why) = invalid.first() {
        return Err(why.clone());
    }
    Ok(values.iter().sum::<f64>() / values.len().max(1) as f64 / record.dt)
}

/// Rank of the contact Jacobian after one step, its rows, and `nv`.
fn jacobian_rank() -> Result<(usize, usize, usize), PaperError> {
    let scenario = SOLO_FLAT_FEET.load(&[])?;
    let spec = scenario
        .solver_specs()
        .into_iter()
        .next()
        .ok_or_else(|| PaperError::RunFailed {
            run: SOLO_FLAT_FEET.file.into(),
            reason: "no solver".into(),
        })?;
    let world = World::build(&scenario)?;
    let nv = world.model.nv();
    let solver = protocol::build(&spec, &Protocol::Ours)?;
    let mut sim = Simulator::new(
        world,
        solver,
        scenario.step_parameters(),
        scenario.external_forces.clone(),
    );
    sim.step().map_err(|e| PaperError::RunFailed {
        run: SOLO_FLAT_FEET.file.into(),
        reason: e.to_string(),
    })?;
    let Some(jacobian) = sim
        .last_solution()
        .and_then(|(p, _, _)| p.jacobian().cloned())
    else {
        return Ok((0, 0, nv));
    };
    let rows = jacobian.nrows();
    let svd = jacobian.svd(false, false);
    let top = svd.singular_values.max();
    let rank = svd
        .singular_values
        .iter()
        .filter(|s| **s > 1e-10 * top)
        .count();
    Ok((rank, rows, nv))
}

impl Experiment for Fig13 {
    fn id(&self) -> &'static str {
        "fig13"
    }

    fn paper_ref(&self) -> &'static str {
        "§IV-A, Fig. 13"
    }

    fn title(&self) -> &'static str {
        "Compliance relaxes Signorini and Coulomb, and removes internal forces"
    }

    fn run(&self, ctx: &Context) -> Result<Page, PaperError> {
        let rs = compliances(ctx.quick);
        let duration = if ctx.quick { 0.4 } else { 1.0 };
        let mut runs = Vec::new();
        for &r in &rs {
            let scenario = SOLO_FLAT_FEET.load(&[
                format!("world.compliance={r:e}"),
                format!("simulation.duration={duration}"),
            ])?;
            let specs = scenario.solver_specs();
            let settings = specs
                .first()
                .map(|s| s.settings.clone())
                .unwrap_or_default();
            for id in SOLVERS {
                let spec = specs
                    .iter()
                    .find(|s| s.id == id)
                    .cloned()
                    .unwrap_or_else(|| SolverSpec {
                        settings: settings.clone(),
                        ..SolverSpec::new(id)
                    });
                runs.push(
                    Run::new(scenario.clone(), spec, Protocol::Ours)
                        .labelled(format!("{id}, R = {r:e}")),
                );
            }
        }
        let observed = simulate_with_spurious(&runs, None)
            .into_iter()
            .collect::<Result<Vec<_>, _>>()?;
        let of = |r: f64, id: SolverId| {
            let k = rs.iter().position(|x| *x == r)?;
            observed.get(k * SOLVERS.len() + SOLVERS.iter().position(|x| *x == id)?)
        };
        let depth = |r, id| of(r, id).map_or(f64::NAN, |(rec, _)| contact_means(rec, r).0);
        let slip = |r, id| of(r, id).map_or(f64::NAN, |(rec, _)| contact_means(rec, r).1);
        let spurious =
            |r, id| of(r, id).map_or(Err("no run".to_string()), |(rec, s)| mean_spurious(rec, s));
        let iterations = |r, id| of(r, id).map_or(f64::NAN, |(rec, _)| effort(rec).0);
        let capped = |r: f64, id: SolverId| {
            of(r, id).and_then(|(rec, _)| {
                measurable::capped(&format!("{} at r = {r:e}", paper_name(id)), rec)
            })
        };
        let (rank, rows, nv) = jacobian_rank()?;

        let mut page = Page::headed(self);
        page.setup = vec![
            "Scenario `scenarios/paper/solo_flat_feet.yaml`: Solo-12 in its `standing` pose under joint PD (20 N·m/rad, 0.5 N·m·s/rad), each foot carrying four 16 mm spheres whose centres form an 11 mm square, horizontal at the standing pose (a flat foot), μ = 0.9, K_b = 1e-4, Δt = 1 ms.".into(),
            format!("Under-determined: after one step the contact Jacobian has {rows} rows and rank {rank} (nv = {nv}), so λ has a {}-dimensional null space of Jᵀ in which internal forces live. With ContactBench's one sphere per foot (12 rows, rank 12) there is none.", rows.saturating_sub(rank)),
            format!("Compliance r ∈ {{{}}} s/kg, `R = r I` added to G on all three rows of every contact (ContactBench sets it on the normal row only; the paper discusses both). Solvers: the paper's five ({}), our protocol, eps_abs = 1e-9, ≤ 100 iterations, warm starts, {duration} s.", rs.iter().map(|r| format!("{r:e}")).collect::<Vec<_>>().join(", "), SOLVERS.iter().map(|s| paper_name(*s)).collect::<Vec<_>>().join(", ")),
            format!("Measured over the second half of each run, on the contacts that push (λ_N > 0): mean penetration depth (m); mean physical tangential speed ‖c_T − R λ_T‖ (m/s: the recorded c includes R λ). Internal forces: the mean {} divided by Δt (N); at r > 0 it is defined for the CCP only (its compliant answer is unique) and marked invalid for the others.", internal::NAME),
        ];
        page.protocol = vec![
            ProtocolLine::new("robot", "solo.py: create_solo(add_balls=True): one 19 mm sphere per foot (J of full row rank)", "four 16 mm spheres per foot (an under-determined problem, as the paper's claim needs)"),
            ProtocolLine::new("compliance", "comp = 0 in solo.py; its values and sweep: not found; R on the normal row only (geom_model.compliances)", "R = r I on every row, r ∈ {0, 1e-3, 1e-2, 1e-1} s/kg"),
            ProtocolLine::new("actuation", "τ = 0 (the robot folds)", "joint PD holding the standing pose"),
            ProtocolLine::new("solver call", "NCP/PGS, maxIter 100, th 1e-6 (forces), rel 1e-6", "five solvers, eps_abs 1e-9 on impulses (1e-6 on forces at 1 ms), ≤ 100 iterations, no step test"),
            ProtocolLine::new("internal forces", "solo.py --plot: the world-x component of each contact force", "the spurious internal force S (`src/paper/internal.rs`)"),
        ];

        let spurious_text = |r: f64, id: SolverId| match spurious(r, id) {
            Ok(v) => num(v),
            Err(why) => format!("invalid ({why})"),
        };
        let mut table = Vec::new();
        for &r in &rs {
            for id in SOLVERS {
                let (mean_it, at_cap) =
                    of(r, id).map_or((f64::NAN, "–".into()), |(rec, _)| effort(rec));
                table.push(vec![
                    format!("{r:e}"),
                    paper_name(id).into(),
                    num(depth(r, id)),
                    num(slip(r, id)),
                    spurious_text(r, id),
                    format!("{mean_it:.1}"),
                    at_cap,
                    of(r, id).map_or("–".into(), |(rec, _)| {
                        format!("{} / {}", unconverged(rec), rec.steps.len().max(1) - 1)
                    }),
                ]);
            }
        }
        let header = [
            "compliance r (s/kg)",
            "solver",
            "penetration depth (m)",
            "tangential speed (m/s)",
            "spurious internal force (N)",
            "mean iterations",
            "steps at the cap",
            "unconverged steps",
        ];
        page.data.push(ctx.csv("fig13.csv", &header, &table)?);
        page.tables
            .push(("Per compliance".into(), markdown_table(&header, &table)));

        let (r1, r2) = (1e-2, 1e-1);
        page.comparisons.push(Comparison::qualitative(
            format!(
                "{}: penetration depth at r = 0.1 ÷ at r = 0.01",
                paper_name(LAW)
            ),
            "figure only: linear in R",
            Some(depth(r2, LAW) / depth(r1, LAW)),
        ));
        page.claims.push(
            Claim::all(
                "\"Adding a compliance to the contact model relaxes the Signorini condition\" and \"the normal forces vary linearly with the compliance parameter R\" (CCP/PGS: the penetration depth grows with r; from r = 0.01 to 0.1 by a factor within 2× of 10)",
                vec![
                    Claim::increasing(
                        "",
                        &rs.iter().map(|r| (format!("depth({r:e})"), depth(*r, LAW))).collect::<Vec<_>>(),
                    ),
                    Claim::within_factor("", "depth(0.1) / depth(0.01)", depth(r2, LAW) / depth(r1, LAW), 10.0, 2.0),
                ],
            )
            .threshold("\"relaxes\" (no number): tested as a depth growing with r; \"linearly\": R × 10 gives depth × 10, tested within 2×")
            .why(Why::Finding, format!("the depth over a decade of r grows by {}, not 10 (over the second half of a {duration} s run)", num(depth(r2, LAW) / depth(r1, LAW)))),
        );
        page.claims.push(
            Claim::at_most(
                "\"Adding compliance to the tangential components induces the vanishing of dry frictions, resulting in tangential oscillations instead of a null velocity\" (CCP/PGS: mean tangential speed of pushing contacts at r = 0 at most 1/10 of that at r = 0.1)",
                "v_T(r = 0) (m/s)",
                slip(0.0, LAW),
                slip(r2, LAW) / 10.0,
            )
            .threshold("\"instead of a null velocity\" (no number): tested as a tenfold faster slip at r = 0.1"),
        );
        page.claims.push(
            Claim::all(
                "Compliance \"eases the numerics\" (each of the paper's solvers: mean iterations per step at r = 0.1 no more than at r = 0)",
                SOLVERS
                    .iter()
                    .map(|&id| {
                        Claim::ratio_at_most(
                            "",
                            (&format!("it({}, 0.1)", paper_name(id)), iterations(r2, id)),
                            (&format!("it({}, 0)", paper_name(id)), iterations(0.0, id)),
                            1.0,
                        )
                        .unless(capped(r2, id).and(capped(0.0, id)))
                    })
                    .collect(),
            )
            .threshold("\"eases the numerics\" (no number): tested as no more iterations per step (≤ 1×) for every solver")
            .why(Why::Finding, format!("per-contact sweeps need more iterations with compliance: mean iterations at r = 0 → 0.1: {}", SOLVERS.iter().map(|id| format!("{} {:.1} → {:.1}", paper_name(*id), iterations(0.0, *id), iterations(r2, *id))).collect::<Vec<_>>().join(", "))),
        );
        let (s0, s2) = (
            spurious(0.0, LAW).unwrap_or(f64::NAN),
            spurious(r2, LAW).unwrap_or(f64::NAN),
        );
        page.claims.push(
            Claim::ratio_at_most(
                "\"Compliance also regularizes the problem, removing the spurious internal forces in under-determined cases\" (CCP/PGS: mean spurious internal force at r = 0.1 ≤ 1/2 of that at r = 0)",
                ("S(CCP/PGS, r = 0.1)", s2),
                ("S(CCP/PGS, r = 0)", s0),
                0.5,
            )
            .metric(internal::NAME)
            .threshold("\"removing\" (no number): tested as halving")
            .unless(measurable::round_off("S(CCP/PGS, r = 0): no spurious internal force to remove", &[s0], WEIGHT)),
        );

        // r = 0 has no place on a log axis: its value is drawn as a dotted level.
        let positive: Vec<f64> = rs.iter().copied().filter(|r| *r > 0.0).collect();
        let span = (
            positive.first().copied().unwrap_or(1e-2),
            positive.last().copied().unwrap_or(1e-1),
        );
        let curves = |ids: &[SolverId], f: &dyn Fn(f64, SolverId) -> f64| {
            ids.iter()
                .flat_map(|id| {
                    let level = f(0.0, *id);
                    let mut zero = Curve::new(
                        format!("{id} at r = 0"),
                        vec![(span.0, level), (span.1, level)],
                    );
                    zero.style.dash = Dash::Dashed { on: 2, off: 5 };
                    [
                        Curve::new(
                            id.to_string(),
                            positive.iter().map(|r| (*r, f(*r, *id))).collect(),
                        )
                        .marked(),
                        zero,
                    ]
                })
                .collect::<Vec<_>>()
        };
        let panel = |title: &str, y: &str, ids: &[SolverId], f: &dyn Fn(f64, SolverId) -> f64| {
            Panel::Line(LineChart {
                title: title.into(),
                x_label: "compliance r (s/kg)".into(),
                y_label: y.into(),
                x_scale: Scale::Log,
                y_scale: Scale::Log,
                curves: curves(ids, f),
                ..Default::default()
            })
        };
        let ccp = [SolverId::CcpPgs, SolverId::CcpAdmm];
        let spurious_value = |r, id| spurious(r, id).unwrap_or(f64::NAN);
        page.notes.push(format!(
            "At r = 0 (the dotted levels on the log axes): penetration depth {} m (CCP/PGS), {} m (CCP/ADMM); tangential speed {} m/s, {} m/s; spurious internal force {} N, {} N.",
            num(depth(0.0, SolverId::CcpPgs)), num(depth(0.0, SolverId::CcpAdmm)),
            num(slip(0.0, SolverId::CcpPgs)), num(slip(0.0, SolverId::CcpAdmm)),
            spurious_text(0.0, SolverId::CcpPgs), spurious_text(0.0, SolverId::CcpAdmm),
        ));
        let mut figure = Figure::grid(
            "Fig. 13: Solo-12 on flat feet (4 points per foot), compliance R = r I",
            2,
            vec![
                panel("Signorini: penetration depth", "depth (m)", &ccp, &depth),
                panel(
                    "Coulomb: tangential speed at pushing contacts",
                    "speed (m/s)",
                    &ccp,
                    &slip,
                ),
                panel(
                    "spurious internal force (CCP: valid at every r)",
                    "mean S / Δt (N)",
                    &ccp,
                    &spurious_value,
                ),
                // Room above the cap of 100 for the legend.
                Panel::Line(LineChart {
                    title: "numerics: mean iterations per step (cap 100)".into(),
                    x_label: "compliance r (s/kg)".into(),
                    y_label: "iterations".into(),
                    x_scale: Scale::Log,
                    curves: curves(&SOLVERS, &iterations),
                    y_range: Some((0.0, 190.0)),
                    ..Default::default()
                }),
            ],
        );
        figure.panel_size = (640, 460);
        page.figures.push((
            "Penetration, tangential speed, spurious internal force and iterations against the compliance (dotted: r = 0)".into(),
            ctx.figure("fig13", &figure)?,
        ));
        Ok(page)
    }
}
