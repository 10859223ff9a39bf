//! Fig. 13: Solo-12 standing on four contact points per foot (an under-determined contact
//! problem) with a growing compliance `R = r I`: the feet sink and slip, internal forces
//! fade.

use nalgebra::Vector3;

use super::sliding::paper_name;
use crate::paper::claims::{num, Claim, Comparison};
use crate::paper::names::INTERNAL_FORCES;
use crate::paper::page::Page;
use crate::paper::protocol::{self, Protocol};
use crate::paper::runs::{complete, metric_series, simulate_all, unconverged, Run, SOLO_FLAT_FEET};
use crate::paper::{Context, Experiment, PaperError};
use crate::report::axis::Scale;
use crate::report::chart::{Curve, Figure, LineChart, Panel};
use crate::report::style::Dash;
use crate::report::tables::markdown_table;
use crate::simulation::recorder::RunRecord;
use crate::simulation::{Simulator, World};
use crate::solvers::SolverId;

/// Fig. 13.
pub struct Fig13;

const SOLVERS: [SolverId; 2] = [SolverId::CcpAdmm, SolverId::CcpPgs];

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

fn mean_internal(record: &RunRecord) -> f64 {
    let half = record.steps.last().map_or(0.0, |s| s.time) / 2.0;
    let v: Vec<f64> = metric_series(record, INTERNAL_FORCES)
        .into_iter()
        .filter(|(t, v)| *t > half && v.is_finite())
        .map(|(_, v)| v / record.dt)
        .collect();
    v.iter().sum::<f64>() / v.len().max(1) as f64
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
            for id in SOLVERS {
                if let Some(spec) = specs.iter().find(|s| s.id == id).cloned() {
                    runs.push(
                        Run::new(scenario.clone(), spec, Protocol::Ours)
                            .labelled(format!("{id}, R = {r:e}")),
                    );
                }
            }
        }
        let records: Vec<RunRecord> = simulate_all(&runs, false)
            .into_iter()
            .map(|r| r.and_then(complete))
            .collect::<Result<_, _>>()?;
        let of = |r: f64, id: SolverId| {
            let k = rs.iter().position(|x| *x == r)?;
            records.get(k * SOLVERS.len() + SOLVERS.iter().position(|x| *x == id)?)
        };
        let depth = |r, id| of(r, id).map_or(f64::NAN, |rec| contact_means(rec, r).0);
        let slip = |r, id| of(r, id).map_or(f64::NAN, |rec| contact_means(rec, r).1);
        let internal = |r, id| of(r, id).map_or(f64::NAN, mean_internal);
        let (rank, rows, nv) = jacobian_rank()?;

        let mut page = Page {
            id: self.id().into(),
            title: self.title().into(),
            paper_ref: self.paper_ref().into(),
            ..Default::default()
        };
        page.setup = vec![
            "Scenario `scenarios/paper/solo_flat_feet.yaml`: Solo-12 in its `standing` pose under joint PD (20 N·m/rad, 0.5 N·m·s/rad), each foot carrying four 16 mm spheres whose centres form an 11 mm square, horizontal at the standing pose (a flat foot), μ = 0.9, K_b = 1e-4, Δt = 1 ms.".into(),
            format!("Under-determined: after one step the contact Jacobian has {rows} rows and rank {rank} (nv = {nv}), so λ has a {}-dimensional null space of Jᵀ in which internal forces live. With ContactBench's one sphere per foot (12 rows, rank 12) there is none.", rows.saturating_sub(rank)),
            format!("Compliance r ∈ {{{}}} s/kg, `R = r I` added to G on all three rows of every contact (ContactBench sets it on the normal row only; the paper discusses both). Solvers: CCP/ADMM and CCP/PGS (the CCP is the model MuJoCo makes compliant), our protocol, eps_abs = 1e-9, ≤ 100 iterations, {duration} s.", rs.iter().map(|r| format!("{r:e}")).collect::<Vec<_>>().join(", ")),
            format!("Measured over the second half of each run, on the contacts that push (λ_N > 0): mean penetration depth (m); mean physical tangential speed ‖c_T − R λ_T‖ (m/s: the recorded c includes R λ); mean `{INTERNAL_FORCES}` / Δt (N)."),
        ];
        let mut table = Vec::new();
        for &r in &rs {
            for id in SOLVERS {
                table.push(vec![
                    format!("{r:e}"),
                    id.to_string(),
                    num(depth(r, id)),
                    num(slip(r, id)),
                    num(internal(r, id)),
                    of(r, id).map_or("–".into(), |rec| {
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
            "internal forces (N)",
            "unconverged steps",
        ];
        page.data.push(ctx.csv("fig13.csv", &header, &table)?);
        page.tables
            .push(("Per compliance".into(), markdown_table(&header, &table)));

        let (r1, r2) = (1e-2, 1e-1);
        for id in SOLVERS {
            page.comparisons.push(Comparison::qualitative(
                format!(
                    "{}: penetration depth at r = 0.1 ÷ at r = 0.01",
                    paper_name(id)
                ),
                "figure only: linear in R",
                Some(depth(r2, id) / depth(r1, id)),
            ));
        }
        let admm = SolverId::CcpAdmm;
        let pgs = SolverId::CcpPgs;
        let missed = |r, id| of(r, id).map_or(f64::NAN, |rec| unconverged(rec) as f64);
        page.claims.push(Claim::all(
            "\"Adding a compliance to the contact model relaxes the Signorini condition\" and \"the normal forces vary linearly with the compliance parameter R\" (CCP/PGS: no penetration beyond 1 µm at r = 0; from r = 0.01 to 0.1, the depth grows by a factor within 2× of 10)",
            vec![
                Claim::at_most("", "depth(r = 0) (m)", depth(0.0, pgs), 1e-6),
                Claim::within_factor("", "depth(0.1) / depth(0.01)", depth(r2, pgs) / depth(r1, pgs), 10.0, 2.0),
            ],
        ));
        page.claims.push(Claim::at_most(
            "\"Adding compliance to the tangential components induces the vanishing of dry frictions, resulting in tangential oscillations instead of a null velocity\" (CCP/PGS: mean tangential speed of pushing contacts at r = 0 at most 1/10 of that at r = 0.1)",
            "v_T(r = 0) (m/s)",
            slip(0.0, pgs),
            slip(r2, pgs) / 10.0,
        ));
        page.claims.push(Claim::at_most(
            "Compliance \"eases the numerics\" (CCP/ADMM: steps that miss the tolerance within 100 iterations at r = 0.1 no more than at r = 0)",
            "unconverged(r = 0.1)",
            missed(r2, admm),
            missed(0.0, admm),
        ));
        page.claims.push(Claim::ratio_at_most(
            "\"Compliance also regularizes the problem, removing the spurious internal forces in under-determined cases\" (CCP/PGS: mean internal forces at r = 0.1 ≤ 1/2 of those at r = 0)",
            ("IF(CCP/PGS, r = 0.1)", internal(r2, SolverId::CcpPgs)),
            ("IF(CCP/PGS, r = 0)", internal(0.0, SolverId::CcpPgs)),
            0.5,
        ));
        // r = 0 has no place on a log axis: its value is drawn as a dotted level.
        let positive: Vec<f64> = rs.iter().copied().filter(|r| *r > 0.0).collect();
        let span = (
            positive.first().copied().unwrap_or(1e-2),
            positive.last().copied().unwrap_or(1e-1),
        );
        let curves = |f: &dyn Fn(f64, SolverId) -> f64| {
            SOLVERS
                .iter()
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
        let panel = |title: &str, y: &str, f: &dyn Fn(f64, SolverId) -> f64| {
            Panel::Line(LineChart {
                title: title.into(),
                x_label: "compliance r (s/kg)".into(),
                y_label: y.into(),
                x_scale: Scale::Log,
                y_scale: Scale::Log,
                curves: curves(f),
                ..Default::default()
            })
        };
        page.notes.push(format!(
            "At r = 0 (the dotted levels on the log axes): penetration depth {} m (CCP/ADMM), {} m (CCP/PGS); tangential speed {} m/s, {} m/s; internal forces {} N, {} N.",
            num(depth(0.0, admm)), num(depth(0.0, SolverId::CcpPgs)),
            num(slip(0.0, admm)), num(slip(0.0, SolverId::CcpPgs)),
            num(internal(0.0, admm)), num(internal(0.0, SolverId::CcpPgs)),
        ));
        let mut figure = Figure::grid(
            "Fig. 13: Solo-12 on flat feet (4 points per foot), compliance R = r I",
            3,
            vec![
                panel("Signorini: penetration depth", "depth (m)", &depth),
                panel(
                    "Coulomb: tangential speed at pushing contacts",
                    "speed (m/s)",
                    &slip,
                ),
                panel("internal forces", "mean internal forces (N)", &internal),
            ],
        );
        figure.panel_size = (640, 460);
        page.figures.push((
            "Penetration, tangential speed and internal forces against the compliance (dotted: r = 0)".into(),
            ctx.figure("fig13", &figure)?,
        ));
        Ok(page)
    }
}
