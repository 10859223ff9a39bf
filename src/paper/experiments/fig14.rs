//! Fig. 14: energy of the sliding cube for Δt = 1, 10, 100 ms (the runs of Tab. III),
//! drawn as the difference from the analytical energy, one panel per solver.

use super::sliding::{
    cube_protocol, energy_deviation, find, max_energy_deviation, paper_name, sweep, Knob, Proto,
    DURATION, SOLVERS,
};
use crate::paper::claims::{num, Claim, Comparison};
use crate::paper::page::Page;
use crate::paper::{Context, Experiment, PaperError};
use crate::report::chart::{Curve, Figure, LineChart, Panel};
use crate::report::style::{sequential, Dash, LineStyle, Marker};
use crate::solvers::SolverId;

/// Fig. 14.
pub struct Fig14;

const DTS: [f64; 3] = [1e-3, 1e-2, 1e-1];
/// Initial kinetic energy of the cube (J).
const E0: f64 = 0.5;

/// A curve per swept value, coloured along a sequential scale, dashed more as the value
/// grows, so that overlapping curves stay visible.
pub fn value_style(k: usize, n: usize) -> LineStyle {
    let dashes = [
        Dash::Solid,
        Dash::Dashed { on: 12, off: 5 },
        Dash::Dashed { on: 4, off: 4 },
        Dash::Dashed { on: 2, off: 6 },
    ];
    LineStyle {
        color: sequential(k, n),
        dash: dashes[k % dashes.len()],
        marker: [
            Marker::Circle,
            Marker::Triangle,
            Marker::Square,
            Marker::Cross,
        ][k % 4],
    }
}

/// An energy deviation below this (J), 2e-6 of the cube's initial 0.5 J, is below what
/// the figures resolve: the axis is at least twice as wide, so that such a deviation is
/// drawn flat rather than magnified into a trajectory.
const ENERGY_RESOLUTION: f64 = 1e-6;

/// One panel: the energy deviation of `id`'s runs, one curve per value; the title says
/// when every deviation is below [`ENERGY_RESOLUTION`].
pub fn deviation_panel(title: String, curves: Vec<(String, Vec<(f64, f64)>)>) -> Panel {
    let n = curves.len();
    let largest = curves
        .iter()
        .flat_map(|(_, points)| points.iter().map(|p| p.1.abs()))
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let title = if largest < ENERGY_RESOLUTION {
        format!("{title}: within {} J, drawn flat", num(largest))
    } else {
        title
    };
    Panel::Line(LineChart {
        title,
        min_span: (0.0, 2.0 * ENERGY_RESOLUTION),
        x_label: "time (s)".into(),
        y_label: "mechanical − analytical energy (J)".into(),
        curves: curves
            .into_iter()
            .enumerate()
            .map(|(k, (label, points))| Curve::styled(label, points, value_style(k, n)))
            .collect(),
        ..Default::default()
    })
}

impl Experiment for Fig14 {
    fn id(&self) -> &'static str {
        "fig14"
    }

    fn paper_ref(&self) -> &'static str {
        "§IV-B, Fig. 14"
    }

    fn title(&self) -> &'static str {
        "Energy of the sliding cube as Δt grows"
    }

    fn run(&self, ctx: &Context) -> Result<Page, PaperError> {
        let proto = Proto::ContactBench;
        let knobs: Vec<Knob> = DTS.iter().map(|d| Knob::Dt(*d)).collect();
        let runs = sweep(&SOLVERS, &[proto], &knobs, None, DURATION, ctx.quick)?;
        let deviation = |id: SolverId, dt: f64| {
            find(&runs, id, proto, Some(Knob::Dt(dt))).map_or(f64::NAN, max_energy_deviation)
        };
        let mut page = Page::headed(self);
        page.setup = vec![
            "The runs of Tab. III under ContactBench's protocol (`scenarios/paper/cube_slide.yaml`, tolerance 1e-9, cold starts), Δt ∈ {1, 10, 100} ms.".into(),
            "Plotted: `E(t) − E_analytical(t)` with `E_analytical = U(q0) + ½ m (v0 − μ g t)²` until the analytical stop at 0.255 s (the paper plots E itself; its 0.5 J drop hides differences of 1e-3 J).".into(),
            format!("D = max_t |E − E_analytical| (J), compared with the initial kinetic energy {E0} J."),
        ];
        page.protocol = cube_protocol(ctx.quick);
        let mut rows = Vec::new();
        let mut panels = Vec::new();
        for id in [SolverId::NcpPgs, SolverId::Raisim, SolverId::CcpPgs] {
            let mut curves = Vec::new();
            for &dt in &DTS {
                if let Some(record) = find(&runs, id, proto, Some(Knob::Dt(dt))) {
                    let points = energy_deviation(record);
                    for (t, d) in &points {
                        rows.push(vec![
                            id.to_string(),
                            format!("{dt:e}"),
                            format!("{t}"),
                            format!("{d:e}"),
                        ]);
                    }
                    curves.push((format!("Δt = {} ms", dt * 1e3), points));
                }
                page.comparisons.push(Comparison::qualitative(
                    format!("{}: D at Δt = {} ms (J)", paper_name(id), dt * 1e3),
                    "figure only",
                    Some(deviation(id, dt)),
                ));
            }
            panels.push(deviation_panel(
                format!("{} ({id})", paper_name(id)),
                curves,
            ));
        }
        page.data.push(ctx.csv(
            "fig14_energy.csv",
            &["solver", "dt_s", "time_s", "energy_minus_analytical_J"],
            &rows,
        )?);
        let worst = |id| {
            DTS.iter()
                .map(|dt| deviation(id, *dt))
                .fold(f64::NAN, f64::max)
        };
        for id in [SolverId::NcpPgs, SolverId::Raisim] {
            page.claims.push(Claim::at_most(
                &format!("\"The energy evolution of the system simulated via NCP and RaiSim models is only a little affected when increasing Δt\" ({}: largest deviation over the three Δt within 5 % of the initial 0.5 J)", paper_name(id)),
                &format!("max_Δt D({})", paper_name(id)),
                worst(id),
                0.05 * E0,
            ).threshold("\"only a little affected\" (no number): tested as within 5 % of the initial 0.5 J"));
        }
        page.claims.push(Claim::all(
            "\"The CCP ... results in the cube taking off and causing a nonphysical and inconsistent evolution of the mechanical energy\" (CCP/PGS deviates ≥ 10× more than NCP/PGS at every Δt)",
            DTS.iter()
                .map(|&dt| {
                    Claim::ratio_at_least(
                        "",
                        (&format!("D(CCP, {} ms)", dt * 1e3), deviation(SolverId::CcpPgs, dt)),
                        (&format!("D(NCP, {} ms)", dt * 1e3), deviation(SolverId::NcpPgs, dt)),
                        10.0,
                    )
                })
                .collect(),
        ).threshold("\"nonphysical and inconsistent\" (no number): tested as ≥ 10× NCP/PGS's deviation"));
        page.notes.push(format!(
            "Largest deviations (J): NCP/PGS {}, RaiSim {}, CCP/PGS {} (over Δt = 1, 10, 100 ms).",
            num(worst(SolverId::NcpPgs)),
            num(worst(SolverId::Raisim)),
            num(worst(SolverId::CcpPgs))
        ));
        page.figures.push((
            "Energy minus the analytical energy, one panel per solver, one curve per Δt".into(),
            ctx.figure(
                "fig14",
                &Figure::grid(
                    "Fig. 14: sliding cube, mechanical − analytical energy for Δt = 1, 10, 100 ms (ContactBench protocol)",
                    2,
                    panels,
                ),
            )?,
        ));
        Ok(page)
    }
}
