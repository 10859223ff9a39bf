//! Fig. 16: solver timings along robot trajectories (Solo-12 and Talos pushed, a ball
//! dropped into the Allegro hand), cold and warm started.

use super::sliding::paper_name;
use crate::paper::claims::{num, Claim, Comparison};
use crate::paper::page::Page;
use crate::paper::protocol::Protocol;
use crate::paper::runs::{
    complete, extra_runs, simulate_all, solved_steps, unconverged, PaperScenario, Run,
    ALLEGRO_BALL, SOLO_PUSH, TALOS_PUSH,
};
use crate::paper::{Context, Experiment, PaperError};
use crate::report::axis::Scale;
use crate::report::chart::{BoxChart, BoxGroup, BoxSpec, Figure, Panel};
use crate::report::style::label_style;
use crate::report::tables::markdown_table;
use crate::simulation::recorder::RunRecord;
use crate::solvers::{Criterion, SolverId, SolverSettings, SolverSpec};
use plotters::style::RGBColor;

/// Fig. 16.
pub struct Fig16;

const SOLVERS: [SolverId; 6] = [
    SolverId::NcpPgs,
    SolverId::CcpPgs,
    SolverId::LcpPgs,
    SolverId::Raisim,
    SolverId::CcpAdmm,
    SolverId::NcpAdmm,
];
/// Tolerance (our units: ContactBench's 1e-6 on forces and accelerations at Δt = 1 ms is
/// 1e-9 on impulses and velocities) and iteration cap (ContactBench's default).
const EPS_ABS: f64 = 1e-9;
const MAX_ITER: usize = 100;

struct Robot {
    name: &'static str,
    scenario: PaperScenario,
    /// Full duration (s), and ContactBench's.
    duration: f64,
    contactbench: &'static str,
}

const ROBOTS: [Robot; 3] = [
    Robot {
        name: "Solo-12",
        scenario: SOLO_PUSH,
        duration: 1.0,
        contactbench: "solo.py --perturb: 100 steps, τ = 0 (the robot folds); here 1000 steps under PD so that the sinusoidal push (2.4 N at 0.1 s) grows to its 12 N amplitude",
    },
    Robot {
        name: "Talos",
        scenario: TALOS_PUSH,
        duration: 2.0,
        contactbench: "humanoid.py --perturb: 2000 steps, Talos as one rigid body, 75 N push; here the articulated robot under stiff joint PD (kp = 4e4/s², kd = 400/s, inertia-scaled), which stands through a 40 N push and falls at 50 N and above (measured)",
    },
    Robot {
        name: "Allegro",
        scenario: ALLEGRO_BALL,
        duration: 1.0,
        contactbench: "hand.py --ball: 1000 steps, hand locked, a 10 kg ball; here the fingers close under PD while a 0.1 kg, 4 cm ball drops on them from 7 cm, the hand palm up and tilted by 15° towards the fingers",
    },
];

/// Solve times (µs) of the steps with contacts.
fn times_us(record: &RunRecord) -> Vec<f64> {
    solved_steps(record)
        .iter()
        .filter(|s| !s.contacts.is_empty())
        .map(|s| s.timings.solve * 1e6)
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn mean_iterations(record: &RunRecord) -> f64 {
    let s: Vec<f64> = solved_steps(record)
        .iter()
        .filter(|s| !s.contacts.is_empty())
        .map(|s| s.iterations as f64)
        .collect();
    s.iter().sum::<f64>() / s.len().max(1) as f64
}

/// Base height change (m) and final pitch (degrees) of a free-flying robot.
fn posture(record: &RunRecord) -> (f64, f64) {
    let (Some(first), Some(last)) = (record.steps.first(), record.steps.last()) else {
        return (f64::NAN, f64::NAN);
    };
    let (x, y, z, w) = (last.q[3], last.q[4], last.q[5], last.q[6]);
    let pitch = (2.0 * (w * y - z * x)).clamp(-1.0, 1.0).asin().to_degrees();
    (last.base_position[2] - first.base_position[2], pitch)
}

/// Share of the ball's supporting normal force carried by finger links (not the palm),
/// over the second half of the run.
fn finger_share(record: &RunRecord) -> f64 {
    let half = record.steps.last().map_or(0.0, |s| s.time) / 2.0;
    let (mut fingers, mut total) = (0.0, 0.0);
    for s in record.steps.iter().filter(|s| s.time > half) {
        for c in &s.contacts {
            total += c.lambda[2];
            if c.pair.starts_with("link_") {
                fingers += c.lambda[2];
            }
        }
    }
    fingers / total
}

impl Experiment for Fig16 {
    fn id(&self) -> &'static str {
        "fig16"
    }

    fn paper_ref(&self) -> &'static str {
        "§IV-C, Fig. 16"
    }

    fn title(&self) -> &'static str {
        "Solver timings on robots, cold and warm started"
    }

    fn compares_extra_solvers(&self) -> bool {
        true
    }

    fn run(&self, ctx: &Context) -> Result<Page, PaperError> {
        // The compared set: the built-in solvers, then the user's extra ones.
        let names: Vec<String> = SOLVERS
            .iter()
            .map(|id| id.to_string())
            .chain(ctx.extra_solvers.iter().map(|f| f.name()))
            .collect();
        let settings = SolverSettings {
            stop: Criterion::Absolute,
            eps_abs: EPS_ABS,
            eps_step: 0.0,
            max_iter: MAX_ITER,
            ..SolverSettings::default()
        };
        let mut runs = Vec::new();
        for robot in &ROBOTS {
            let duration = if ctx.quick { 0.2 } else { robot.duration };
            for warm in [false, true] {
                let scenario = robot.scenario.load(&[
                    format!("simulation.duration={duration}"),
                    format!("simulation.warm_start={warm}"),
                ])?;
                let start = if warm { "warm" } else { "cold" };
                for id in SOLVERS {
                    let spec = SolverSpec {
                        settings: settings.clone(),
                        ..SolverSpec::new(id)
                    };
                    runs.push(
                        Run::new(scenario.clone(), spec, Protocol::Ours)
                            .labelled(format!("{id} {start}")),
                    );
                }
                for run in extra_runs(&scenario, &ctx.extra_solvers, &settings) {
                    let label = format!("{} {start}", run.label);
                    runs.push(run.labelled(label));
                }
            }
        }
        // One after the other: timings taken while other runs share the cores mean little.
        let records: Vec<RunRecord> = simulate_all(&runs, true)
            .into_iter()
            .map(|r| r.and_then(complete))
            .collect::<Result<_, _>>()?;
        let of = |robot: usize, warm: bool, name: &str| {
            let k = (robot * 2 + usize::from(warm)) * names.len()
                + names.iter().position(|x| x == name)?;
            records.get(k)
        };
        let med = |robot: usize, warm: bool, name: &str| {
            of(robot, warm, name).map_or(f64::NAN, |r| median(times_us(r)))
        };

        let mut page = Page {
            id: self.id().into(),
            title: self.title().into(),
            paper_ref: self.paper_ref().into(),
            ..Default::default()
        };
        page.setup = vec![
            format!("Solvers {} with eps_abs = {EPS_ABS:e} on their own residual (ContactBench's 1e-6 on forces and accelerations at Δt = 1 ms), no step test, at most {MAX_ITER} iterations (ContactBench's default), our units. The staggered projections (≈ 1-7 ms per solve here) are left out.", SOLVERS.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")),
            "Cold: every step from λ = 0, the solver's kept state (ρ, factorization) reset. Warm: the previous step's λ of each contact still present, and the solver's state kept. The same scenario is simulated once per mode, so the trajectories may differ slightly.".into(),
            "Time: wall time around one `solve` call per step with contacts (one measurement per step; ContactBench re-solves each problem 10 times and keeps the mean of the 8 fastest); runs one after the other on a machine shared with other jobs: compare ratios within a robot, not absolute values.".into(),
        ];
        if !ctx.extra_solvers.is_empty() {
            page.setup.push(format!(
                "Extra solvers (the user's): {}, at the same settings, cold and warm as the others.",
                names[SOLVERS.len()..].join(", ")
            ));
        }
        for robot in &ROBOTS {
            page.setup.push(format!(
                "{}: `{}`, {} s{}. ContactBench: {}.",
                robot.name,
                robot.scenario.file,
                if ctx.quick { 0.2 } else { robot.duration },
                if ctx.quick { " (CI size)" } else { "" },
                robot.contactbench
            ));
        }

        let mut table = Vec::new();
        for (k, robot) in ROBOTS.iter().enumerate() {
            for name in &names {
                let row = |warm| {
                    of(k, warm, name).map_or((f64::NAN, f64::NAN, 0), |r| {
                        (median(times_us(r)), mean_iterations(r), unconverged(r))
                    })
                };
                let (cold, warm) = (row(false), row(true));
                table.push(vec![
                    robot.name.into(),
                    name.clone(),
                    num(cold.0),
                    num(warm.0),
                    num(warm.0 / cold.0),
                    format!("{:.1}", cold.1),
                    format!("{:.1}", warm.1),
                    format!("{} / {}", cold.2, warm.2),
                ]);
            }
        }
        let header = [
            "robot",
            "solver",
            "median cold (µs)",
            "median warm (µs)",
            "warm / cold",
            "mean iterations cold",
            "mean iterations warm",
            "unconverged steps cold / warm",
        ];
        page.data.push(ctx.csv("fig16.csv", &header, &table)?);
        page.tables.push((
            "Medians per robot and solver".into(),
            markdown_table(&header, &table),
        ));
        let mut samples = Vec::new();
        for (k, robot) in ROBOTS.iter().enumerate() {
            for name in &names {
                for warm in [false, true] {
                    if let Some(r) = of(k, warm, name) {
                        for t in times_us(r) {
                            samples.push(vec![
                                robot.name.to_string(),
                                name.clone(),
                                if warm { "warm" } else { "cold" }.to_string(),
                                format!("{t}"),
                            ]);
                        }
                    }
                }
            }
        }
        page.data.push(ctx.csv(
            "fig16_samples.csv",
            &["robot", "solver", "start", "solve_time_us"],
            &samples,
        )?);

        for (k, robot) in ROBOTS.iter().enumerate() {
            let (admm, pgs) = (SolverId::NcpAdmm.as_str(), SolverId::NcpPgs.as_str());
            let cold_ratio = med(k, false, admm) / med(k, false, pgs);
            let warm_ratio = med(k, true, admm) / med(k, true, pgs);
            page.comparisons.push(Comparison::qualitative(
                format!("{}: NCP/ADMM ÷ NCP/PGS median time, cold", robot.name),
                "figure only: > 1",
                Some(cold_ratio),
            ));
            page.comparisons.push(Comparison::qualitative(
                format!("{}: NCP/ADMM ÷ NCP/PGS median time, warm", robot.name),
                "figure only: closer to 1",
                Some(warm_ratio),
            ));
            page.claims.push(Claim::ratio_at_least(
                &format!("\"When the contact solvers are cold started, ... ADMM [is] less efficient than the PGS solvers and their cheap per-contact iterations\" ({})", robot.name),
                ("median NCP/ADMM cold", med(k, false, admm)),
                ("median NCP/PGS cold", med(k, false, pgs)),
                1.0,
            ));
            page.claims.push(Claim::at_most(
                &format!("\"Leveraging the solution from the previous time step to warmstart the solvers ... allows for significantly reducing this gap\" ({}: ADMM ÷ PGS warm below cold)", robot.name),
                "ADMM / PGS warm",
                warm_ratio,
                cold_ratio,
            ));
            page.claims.push(Claim::all(
                &format!("\"This leads to significant improvements in the computational timings\" ({}: every solver's median warm time below its cold one)", robot.name),
                SOLVERS
                    .iter()
                    .map(|id| {
                        Claim::ratio_at_most(
                            "",
                            (&format!("warm({})", paper_name(*id)), med(k, true, id.as_str())),
                            (&format!("cold({})", paper_name(*id)), med(k, false, id.as_str())),
                            1.0,
                        )
                    })
                    .collect(),
            ));
        }

        // Are the trajectories what they should be? (not a claim of the paper)
        for (k, robot) in ROBOTS.iter().enumerate() {
            let Some(r) = of(k, true, SolverId::NcpAdmm.as_str()) else {
                continue;
            };
            match robot.name {
                "Allegro" => page.notes.push(format!(
                    "Allegro (NCP/ADMM, warm): the finger links carry {} of the ball's supporting normal force over the second half (the palm the rest); the ball ends at z = {} m (the palm at 0.5 m).",
                    num(finger_share(r)),
                    num(r.steps.last().map_or(f64::NAN, |s| s.base_position[2]))
                )),
                _ => {
                    let (dz, pitch) = posture(r);
                    let stands = dz.abs() < 0.02 && pitch.abs() < 10.0;
                    page.notes.push(format!(
                        "{} (NCP/ADMM, warm): the base height changes by {} m and the final pitch is {}°: {} (criterion: height within 2 cm, pitch within 10°).",
                        robot.name,
                        num(dz),
                        num(pitch),
                        if stands {
                            "the robot stands through the push"
                        } else {
                            "the robot sags or tilts under the push"
                        }
                    ));
                }
            }
        }

        let grey = RGBColor(90, 90, 90);
        let panels = ROBOTS
            .iter()
            .enumerate()
            .map(|(k, robot)| {
                Panel::Box(BoxChart {
                    title: robot.name.into(),
                    y_label: "solve time per step (µs)".into(),
                    y_scale: Scale::Log,
                    groups: names
                        .iter()
                        .map(|name| BoxGroup {
                            label: name.clone(),
                            boxes: [false, true]
                                .iter()
                                .map(|warm| BoxSpec {
                                    samples: of(k, *warm, name).map(times_us).unwrap_or_default(),
                                    color: label_style(name).color,
                                    filled: *warm,
                                })
                                .collect(),
                        })
                        .collect(),
                    legend: vec![
                        ("cold (hollow, left)".into(), grey, false),
                        ("warm (filled, right)".into(), grey, true),
                    ],
                })
            })
            .collect();
        let mut figure = Figure::grid(
            "Fig. 16: solve time per step along the trajectories, cold and warm started",
            1,
            panels,
        );
        figure.panel_size = (1000, 420);
        page.figures.push((
            "Solve times (log axis), cold and warm side by side for each solver".into(),
            ctx.figure("fig16", &figure)?,
        ));
        Ok(page)
    }
}
