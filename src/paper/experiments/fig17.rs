//! Fig. 17: Solo-12 trotting on flat ground (μ = 0.9) under the same controller
//! (`simulation::locomotion`) with every contact model; only the simulator changes.
//! The walking runs, their measures and their panels are shared with Fig. 18.

use super::sliding::paper_name;
use crate::collision::heightfield::HeightField;
use crate::paper::claims::{num, Claim, Comparison};
use crate::paper::names::CRITERION;
use crate::paper::page::{Page, ProtocolLine};
use crate::paper::protocol::Protocol;
use crate::paper::runs::{
    max_metric, metric_series, simulate_all, solved_steps, PaperScenario, Run,
};
use crate::paper::timing::median;
use crate::paper::{Context, Experiment, PaperError};
use crate::report::axis::Scale;
use crate::report::chart::{Curve, Figure, LineChart, Panel};
use crate::report::style::{Dash, LineStyle, Marker, ANALYTICAL};
use crate::report::tables::markdown_table;
use crate::simulation::recorder::RunRecord;
use crate::simulation::Scenario;
use crate::solvers::{SolverId, SolverSpec};
use plotters::style::RGBColor;

/// Fig. 17.
pub struct Fig17;

/// Solo-12 trotting on flat ground.
pub const TROT_FLAT: PaperScenario = PaperScenario {
    file: "scenarios/solo_trot_flat.yaml",
    text: include_str!("../../../scenarios/solo_trot_flat.yaml"),
};
/// Solo-12 trotting on a seeded random roughness.
pub const TROT_BUMPY: PaperScenario = PaperScenario {
    file: "scenarios/solo_trot_bumpy.yaml",
    text: include_str!("../../../scenarios/solo_trot_bumpy.yaml"),
};

/// The contact models of the paper's figures, each with its per-contact solver and, for
/// NCP and CCP, its ADMM (the figures compare per-contact and ADMM solvers).
pub const SOLVERS: [SolverId; 6] = [
    SolverId::NcpPgs,
    SolverId::NcpAdmm,
    SolverId::CcpPgs,
    SolverId::CcpAdmm,
    SolverId::Raisim,
    SolverId::LcpPgs,
];
/// The reference the other models are compared with.
pub const REFERENCE: SolverId = SolverId::NcpPgs;

/// Walking duration (s): CI size, full size.
pub fn duration(quick: bool) -> f64 {
    if quick {
        1.5
    } else {
        4.0
    }
}

/// A curve's label: the solver id (its fixed style) and the paper's name.
pub fn label(id: SolverId) -> String {
    format!("{id} ({})", paper_name(id))
}

/// One walk per solver of [`SOLVERS`] on `scenario` (the scenario's settings, our
/// protocol: warm starts), simulated in parallel; a run that fails keeps its steps.
pub fn walk(scenario: &Scenario) -> Result<Vec<(SolverId, RunRecord)>, PaperError> {
    let settings = scenario
        .solver_specs()
        .first()
        .map(|s| s.settings.clone())
        .unwrap_or_default();
    let runs: Vec<Run> = SOLVERS
        .iter()
        .map(|&id| {
            let spec = SolverSpec {
                settings: settings.clone(),
                ..SolverSpec::new(id)
            };
            Run::new(scenario.clone(), spec, Protocol::Ours).labelled(label(id))
        })
        .collect();
    SOLVERS
        .iter()
        .zip(simulate_all(&runs, false))
        .map(|(&id, record)| record.map(|r| (id, r)))
        .collect()
}

/// The record of `id` among `walks`.
pub fn of(walks: &[(SolverId, RunRecord)], id: SolverId) -> Option<&RunRecord> {
    walks.iter().find(|(i, _)| *i == id).map(|(_, r)| r)
}

/// Time of the first step whose controller found the base fallen (NaN: never).
pub fn fall_time(record: &RunRecord) -> f64 {
    solved_steps(record)
        .iter()
        .find(|s| s.task.is_some_and(|t| t.fallen))
        .map_or(f64::NAN, |s| s.time)
}

/// Mean forward velocity (m/s) over the second half of the run: the base's displacement
/// along x divided by the time (NaN when the run fell or stopped before the end).
pub fn mean_velocity(record: &RunRecord, duration: f64) -> f64 {
    let steps = &record.steps;
    let Some(last) = steps.last() else {
        return f64::NAN;
    };
    if record.failure.is_some() || !fall_time(record).is_nan() || last.time < duration - 1e-9 {
        return f64::NAN;
    }
    let Some(mid) = steps.iter().find(|s| s.time >= 0.5 * duration) else {
        return f64::NAN;
    };
    (last.base_position[0] - mid.base_position[0]) / (last.time - mid.time)
}

/// Largest horizontal distance (m) between two base paths at the same steps (over the
/// steps both have).
pub fn path_gap(a: &RunRecord, b: &RunRecord) -> f64 {
    a.steps
        .iter()
        .zip(&b.steps)
        .map(|(s, t)| {
            (s.base_position[0] - t.base_position[0]).hypot(s.base_position[1] - t.base_position[1])
        })
        .fold(0.0, f64::max)
}

/// Largest NCP criterion over the steps with contacts (a slipping contact shows as a
/// spike: the median is a sticking step's).
pub fn peak_criterion(record: &RunRecord) -> f64 {
    max_metric(record, CRITERION)
}

/// Mean solver iterations over the steps with contacts.
pub fn mean_iterations(record: &RunRecord) -> f64 {
    let steps: Vec<f64> = solved_steps(record)
        .iter()
        .filter(|s| !s.contacts.is_empty())
        .map(|s| s.iterations as f64)
        .collect();
    steps.iter().sum::<f64>() / steps.len().max(1) as f64
}

/// Median solver time per step with contacts (s).
pub fn median_solve_time(record: &RunRecord) -> f64 {
    let times: Vec<f64> = solved_steps(record)
        .iter()
        .filter(|s| !s.contacts.is_empty())
        .map(|s| s.timings.solve)
        .collect();
    median(&times)
}

/// The four panels of a walking figure: base velocity against the target, NCP criterion
/// per step, solver time per step, base paths from above (with `terrain`'s height along
/// the reference path when there is one, in a fifth panel).
pub fn panels(walks: &[(SolverId, RunRecord)], terrain: Option<&HeightField>) -> Vec<Panel> {
    let series = |f: &dyn Fn(&RunRecord) -> Vec<(f64, f64)>| -> Vec<Curve> {
        walks
            .iter()
            .map(|(id, r)| Curve::new(id.to_string(), f(r)))
            .collect()
    };
    let mut velocity = series(&|r| {
        solved_steps(r)
            .iter()
            .filter_map(|s| s.task.map(|t| (s.time, t.base_velocity[0])))
            .collect()
    });
    if let Some(reference) = of(walks, REFERENCE) {
        let target = solved_steps(reference)
            .iter()
            .filter_map(|s| s.task.map(|t| (s.time, t.target_velocity[0])))
            .collect();
        velocity.push(Curve::styled("target", target, ANALYTICAL));
    }
    let line = |title: &str, x: &str, y: &str, scale: Scale, curves: Vec<Curve>| {
        Panel::Line(LineChart {
            title: title.into(),
            x_label: x.into(),
            y_label: y.into(),
            y_scale: scale,
            curves,
            ..Default::default()
        })
    };
    let mut panels = vec![
        line(
            "Base horizontal velocity (x) against the target",
            "time (s)",
            "v_x (m/s)",
            Scale::Linear,
            velocity,
        ),
        line(
            "NCP criterion per step (largest of each 10 ms)",
            "time (s)",
            "NCP criterion",
            Scale::Log,
            series(&|r| windowed(&metric_series(r, CRITERION), f64::max)),
        ),
        line(
            "Solver time per step (mean of each 10 ms)",
            "time (s)",
            "solve time (s)",
            Scale::Log,
            series(&|r| {
                let times: Vec<(f64, f64)> = solved_steps(r)
                    .iter()
                    .map(|s| {
                        let t = if s.contacts.is_empty() {
                            f64::NAN
                        } else {
                            s.timings.solve
                        };
                        (s.time, t)
                    })
                    .collect();
                let sums = windowed(&times, |a, b| a + b);
                let counts = windowed(
                    &times
                        .iter()
                        .map(|(t, v)| (*t, v.signum().abs()))
                        .collect::<Vec<_>>(),
                    |a, b| a + b,
                );
                sums.iter()
                    .zip(counts)
                    .map(|((t, s), (_, n))| (*t, s / n))
                    .collect()
            }),
        ),
    ];
    panels.push(Panel::Line(LineChart {
        title: "Base paths seen from above".into(),
        x_label: "x (m)".into(),
        y_label: "y (m)".into(),
        curves: series(&|r| {
            r.steps
                .iter()
                .map(|s| (s.base_position[0], s.base_position[1]))
                .collect()
        }),
        equal_aspect: true,
        min_span: (0.0, 0.05),
        ..Default::default()
    }));
    if let (Some(field), Some(reference)) = (terrain, of(walks, REFERENCE)) {
        let mut curves = series(&|r| {
            r.steps
                .iter()
                .map(|s| (s.base_position[0], s.base_position[2]))
                .collect()
        });
        let ground = reference
            .steps
            .iter()
            .map(|s| {
                let [x, y, _] = s.base_position;
                (x, field.height_at(x, y).unwrap_or(f64::NAN))
            })
            .collect();
        curves.push(Curve::styled(
            format!("terrain under the {} path", paper_name(REFERENCE)),
            ground,
            TERRAIN,
        ));
        panels.push(line(
            "Base height and the terrain under the base (side view)",
            "x (m)",
            "z (m)",
            Scale::Linear,
            curves,
        ));
    }
    panels
}

/// Steps per window of the per-step panels (10 ms at Δt = 1 ms).
const WINDOW: usize = 10;

/// `points` folded by `combine` over windows of [`WINDOW`] steps, each at its last time;
/// NaN values are left out, a window of NaN only is NaN (a gap).
fn windowed(points: &[(f64, f64)], combine: fn(f64, f64) -> f64) -> Vec<(f64, f64)> {
    points
        .chunks(WINDOW)
        .filter_map(|chunk| {
            let t = chunk.last()?.0;
            let value = chunk
                .iter()
                .map(|(_, v)| *v)
                .filter(|v| !v.is_nan())
                .reduce(combine)
                .unwrap_or(f64::NAN);
            Some((t, value))
        })
        .collect()
}

/// The table of a walking run per model: distance, mean velocity, fall, path gap to the
/// reference, median NCP criterion, mean iterations, median solve time.
pub fn model_table(
    walks: &[(SolverId, RunRecord)],
    duration: f64,
) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let header = vec![
        "model (solver)",
        "outcome",
        "distance (m)",
        "mean v_x, second half (m/s)",
        "fell at (s)",
        "path gap to NCP/PGS (m)",
        "largest NCP criterion",
        "mean iterations",
        "median solve time (µs)",
    ];
    let reference = of(walks, REFERENCE);
    let rows = walks
        .iter()
        .map(|(id, r)| {
            let distance = solved_steps(r)
                .last()
                .and_then(|s| s.task)
                .map_or(f64::NAN, |t| t.distance);
            let fell = fall_time(r);
            vec![
                label(*id),
                r.failure.clone().unwrap_or_else(|| "completed".into()),
                num(distance),
                num(mean_velocity(r, duration)),
                if fell.is_nan() {
                    "–".into()
                } else {
                    num(fell)
                },
                reference.map_or("–".into(), |reference| num(path_gap(r, reference))),
                num(peak_criterion(r)),
                format!("{:.2}", mean_iterations(r)),
                num(1e6 * median_solve_time(r)),
            ]
        })
        .collect();
    (header, rows)
}

/// The protocol lines every walking page shares.
pub fn walking_protocol() -> Vec<ProtocolLine> {
    vec![
        ProtocolLine::new("controller", "the MPC of the paper's reference [69] (Léziart et al., ICRA 2021); ContactBench's repository has no locomotion script", "the diagonal trot of `src/simulation/locomotion.rs` (Raibert footsteps, swing PD, one-step centroidal force QP), identical for every model, reading only the joint and base states"),
        ProtocolLine::new("solver call", "not found", "the scenario's settings for every solver: eps_rel = 1e-6, ≤ 500 iterations, warm starts, Δt = 1 ms, K_b = 0.1"),
    ]
}

impl Experiment for Fig17 {
    fn id(&self) -> &'static str {
        "fig17"
    }

    fn paper_ref(&self) -> &'static str {
        "§IV-D, Fig. 17"
    }

    fn title(&self) -> &'static str {
        "Solo-12 trotting on flat ground: the contact models agree"
    }

    fn run(&self, ctx: &Context) -> Result<Page, PaperError> {
        let duration = duration(ctx.quick);
        let scenario = TROT_FLAT.load(&[format!("simulation.duration={duration}")])?;
        let target = scenario_target(&scenario);
        let walks = walk(&scenario)?;
        let mut page = Page::headed(self);
        page.setup = vec![
            format!("Scenario `{}`: Solo-12 (four 16 mm foot spheres) on flat ground, μ = 0.9, trotting towards a target of {} m/s along x (gait period 0.32 s, after 0.2 s on four feet and a ramp over one period), {duration} s at Δt = 1 ms.", TROT_FLAT.file, num(target)),
            format!("Models: {} (our protocol, warm starts). Compared with {}: the mean forward velocity over the second half (displacement ÷ time), the largest horizontal distance between base paths at the same step, the NCP criterion per step (its largest value over the run), the iterations and the solver time per step.", SOLVERS.iter().map(|id| paper_name(*id)).collect::<Vec<_>>().join(", "), paper_name(REFERENCE)),
        ];
        page.protocol = walking_protocol();
        let (header, rows) = model_table(&walks, duration);
        page.data.push(ctx.csv("fig17.csv", &header, &rows)?);
        page.tables
            .push(("Per contact model".into(), markdown_table(&header, &rows)));
        let reference = of(&walks, REFERENCE).ok_or_else(|| PaperError::RunFailed {
            run: label(REFERENCE),
            reason: "no run".into(),
        })?;
        let v_ref = mean_velocity(reference, duration);
        page.claims.push(
            Claim::all(
                &format!("\"The target horizontal translation velocity of the base is similarly reached by the controller with the different simulators\" (each model's mean velocity within {} m/s of the target {} m/s, and within {} m/s of NCP/PGS's)", num(TRACKING_BAND), num(target), num(AGREEMENT_BAND)),
                walks
                    .iter()
                    .flat_map(|(id, r)| {
                        let v = mean_velocity(r, duration);
                        let what = format!("v({})", paper_name(*id));
                        [
                            Claim::near("", &what, v, target, TRACKING_BAND),
                            Claim::near("", &what, v, v_ref, AGREEMENT_BAND),
                        ]
                    })
                    .collect(),
            )
            .threshold(format!("\"similarly reached\" (no number): tested as within {} m/s of the target (the controller's own lag decides the first band) and within {} m/s of NCP/PGS's velocity", num(TRACKING_BAND), num(AGREEMENT_BAND))),
        );
        let crit_ref = peak_criterion(reference);
        page.claims.push(
            Claim::all(
                "\"they do not equally respect the contact complementarity criterion\" (the largest NCP criterion of CCP, RaiSim and LCP ≥ 10× NCP/PGS's)",
                [SolverId::CcpPgs, SolverId::CcpAdmm, SolverId::Raisim, SolverId::LcpPgs]
                    .into_iter()
                    .filter_map(|id| of(&walks, id).map(|r| (id, r)))
                    .map(|(id, r)| {
                        Claim::ratio_at_least(
                            "",
                            (&format!("largest criterion({})", paper_name(id)), peak_criterion(r)),
                            ("largest criterion(NCP/PGS)", crit_ref),
                            10.0,
                        )
                    })
                    .collect(),
            )
            .threshold("\"do not equally respect\" (no number): tested as ≥ 10× the NCP solver's largest criterion"),
        );
        page.comparisons.push(Comparison::qualitative(
            "median solve time per step, NCP/ADMM ÷ NCP/PGS (one machine, one run; not a timing claim)",
            "\"Per-contact approaches ... are more efficient\"",
            of(&walks, SolverId::NcpAdmm)
                .map(|r| median_solve_time(r) / median_solve_time(reference)),
        ));
        let figure = walking_figure(
            &format!(
                "Fig. 17: Solo-12 trotting on flat ground, μ = 0.9, target {} m/s",
                num(target)
            ),
            panels(&walks, None),
        );
        page.figures.push((
            "Base velocity against the target, NCP criterion and solver time per step, base paths from above".into(),
            ctx.figure("fig17", &figure)?,
        ));
        page.notes.push("The solver times are wall times of single solves along the run (no repetition, no noise estimate): they illustrate the panel and are not tested; `src/paper/timing.rs` is how the timing claims of Fig. 16 are measured.".into());
        Ok(page)
    }
}

/// How far from the target a model's mean velocity may be (m/s).
const TRACKING_BAND: f64 = 0.1;
/// How far from NCP/PGS's a model's mean velocity may be (m/s).
const AGREEMENT_BAND: f64 = 0.01;

/// The scenario's target forward velocity (m/s; 0 without a trot).
pub fn scenario_target(scenario: &Scenario) -> f64 {
    match &scenario.actuation {
        crate::simulation::scenario::Actuation::Trot(spec) => spec.velocity[0],
        _ => 0.0,
    }
}

/// A grid of walking panels, two a row.
pub fn walking_figure(title: &str, panels: Vec<Panel>) -> Figure {
    let mut figure = Figure::grid(title, 2, panels);
    figure.panel_size = (760, 440);
    figure
}

/// The terrain's line: black, solid.
const TERRAIN: LineStyle = LineStyle {
    color: RGBColor(0, 0, 0),
    dash: Dash::Solid,
    marker: Marker::Square,
};
