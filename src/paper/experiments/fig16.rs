//! Fig. 16: solver timings along robot trajectories, cold and warm started, measured as
//! ContactBench measures them (`src/paper/timing.rs`): ContactBench's three set-ups
//! (`solo.py --perturb`, `humanoid.py --perturb`, `hand.py --ball`), the problems of one
//! trajectory recorded and replayed by every solver cold and warm, each solve the mean
//! of the 8 fastest of 10, cold and warm compared step by step. Two stopping protocols:
//! ContactBench's scripts' (their tolerance, step test and cap) and the paper's text's
//! ("the time taken to reach a fixed accuracy": one accuracy for every solver, no step
//! test).

use std::sync::Arc;

use super::sliding::paper_name;
use crate::paper::claims::{num, Claim, Comparison, Why};
use crate::paper::locked::lock_joints;
use crate::paper::page::{Page, ProtocolLine};
use crate::paper::protocol::ResetEachSolve;
use crate::paper::runs::{PaperScenario, ALLEGRO_BALL, SOLO_PUSH, TALOS_PUSH};
use crate::paper::timing::{
    ratios, replay_all, timed_every, within_noise, NoisyRatio, PairedRatio, RecordedStep, Replay,
    Take, CONTACTBENCH_REPETITIONS, NOISE_FLOOR, NOISE_MARGIN,
};
use crate::paper::{measurable, Context, Experiment, PaperError};
use crate::report::axis::Scale;
use crate::report::chart::{BoxChart, BoxGroup, BoxSpec, Figure, Panel};
use crate::report::style::label_style;
use crate::report::tables::markdown_table;
use crate::simulation::recorder::{RunRecord, StepRecord};
use crate::simulation::{Simulator, SolverFactory, StepMetrics, World};
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
/// The pairs the cold-start claim compares: each ADMM against the PGS of its model.
const PAIRS: [(SolverId, SolverId); 2] = [
    (SolverId::NcpAdmm, SolverId::NcpPgs),
    (SolverId::CcpAdmm, SolverId::CcpPgs),
];
/// ContactBench's `th = 1e-6` on forces and accelerations at Δt = 1 ms: 1e-9 on our
/// impulses and velocity feasibilities (1e-3 looser on complementarity, which
/// ContactBench's force units scale by Δt²).
const EPS_ABS: f64 = 1e-9;
/// The paper's text: "a fixed accuracy", one for every solver and robot: our relative
/// criterion (docs/ruler.md).
const EPS_REL: f64 = 1e-6;
/// The cap under the paper's text: the largest of ContactBench's scripts.
const PAPER_CAP: usize = 10_000;
/// A solver that ends at its cap on this share of the steps measures the cap.
const CAPPED: f64 = measurable::CAPPED_SHARE;

/// One of ContactBench's set-ups.
struct Robot {
    name: &'static str,
    scenario: PaperScenario,
    /// Joints locked at the initial configuration (ContactBench's reduced models).
    locked: bool,
    /// Duration at the CI size (s).
    quick_duration: f64,
    /// The script's step test (`rel_th_stop`) and cap (`maxIter`).
    eps_step: f64,
    max_iter: usize,
    /// The script and its set-up, line by line: (aspect, script, ours).
    protocol: &'static [(&'static str, &'static str, &'static str)],
}

const ROBOTS: [Robot; 3] = [
    Robot {
        name: "Solo-12",
        scenario: SOLO_PUSH,
        locked: false,
        quick_duration: 0.1,
        eps_step: 1e-6,
        max_iter: 100,
        protocol: &[
            ("Solo-12: model", "solo.py: create_solo(mu, 0., 0., False, True): 18 DoF, 4 foot spheres Sphere(0.01910275) on the foot frames, standing pose", "`scenarios/paper/solo_push.yaml`: the same"),
            ("Solo-12: torques, push", "tau = zeros; 12·(sin 2t, sin(2t+1), sin(2t+2)) N on joint 1 (pin.Force in the base frame)", "no actuation; the same push on base_link, world axes"),
            ("Solo-12: steps, solver call", "T = 100; NCPPGSSimulator, step(..., 100, 1e-6, rel_th_stop = 1e-6)", "100 steps; recorded with ncp-pgs, eps_abs 1e-9, eps_step 1e-6, ≤ 100 iterations"),
        ],
    },
    Robot {
        name: "Talos",
        scenario: TALOS_PUSH,
        locked: true,
        quick_duration: 0.1,
        eps_step: 1e-12,
        max_iter: 10_000,
        protocol: &[
            ("Talos: model", "humanoid.py: create_humanoid(mu, 0., 0., True, True): joints locked at half_sitting (a rigid free-flying body), foot spheres 8 × Sphere(0.01) at (0.09|−0.1, ±0.06, −0.1) of the ankle, hand spheres 2 × Sphere(0.09)", "`scenarios/paper/talos_push.yaml` with its joints locked at half_sitting (`src/paper/locked.rs`), the same spheres (hands on the gripper base frame)"),
            ("Talos: push", "75·(sin 2t, sin(2t+1), sin(2t+2)) N on joint 1", "the same on base_link, world axes"),
            ("Talos: steps, solver call", "T = 2000; PinNCPADMMSimulator, step(..., 10000, 1e-6, rel_th_stop = 1e-12)", "2000 steps; recorded with ncp-admm, eps_abs 1e-9, eps_step 1e-12, ≤ 10000 iterations"),
        ],
    },
    Robot {
        name: "Allegro",
        scenario: ALLEGRO_BALL,
        locked: true,
        quick_duration: 0.1,
        eps_step: 1e-6,
        max_iter: 10_000,
        protocol: &[
            ("Allegro: model", "hand.py: create_hand(mu, 0., 0., True, True): every joint locked at 'grasp' (the free-flyer base at z = 0.2 with its quaternion), no ground", "`scenarios/paper/allegro_ball.yaml`: the hand at the same pose, its joints locked at the same angles (Pinocchio's joint order), no ground"),
            ("Allegro: ball", "addBall(a = 0.1, m = 10): Sphere(a/2) = 5 cm radius, 10 kg, at (−0.05, −0.04, 0.27)", "the same"),
            ("Allegro: steps, solver call", "T = 1000; CCPADMMSimulator, step(..., 10000, 1e-6) (rel_th_stop default 1e-6)", "1000 steps; recorded with ccp-admm, eps_abs 1e-9, eps_step 1e-6, ≤ 10000 iterations"),
        ],
    },
];

/// The two stopping protocols of the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// ContactBench's scripts: `th`, `rel_th_stop` and `maxIter` of the robot's script.
    Scripts,
    /// The paper's text: one accuracy for every solver, no step test.
    PaperText,
}

impl Stop {
    const BOTH: [Stop; 2] = [Stop::Scripts, Stop::PaperText];

    fn name(self) -> &'static str {
        match self {
            Stop::Scripts => "ContactBench's scripts",
            Stop::PaperText => "the paper's text",
        }
    }

    fn settings(self, robot: &Robot) -> SolverSettings {
        match self {
            Stop::Scripts => SolverSettings {
                stop: Criterion::Absolute,
                eps_abs: EPS_ABS,
                eps_step: robot.eps_step,
                max_iter: robot.max_iter,
                ..SolverSettings::default()
            },
            Stop::PaperText => SolverSettings {
                stop: Criterion::Relative,
                eps_rel: EPS_REL,
                eps_step: 0.0,
                max_iter: PAPER_CAP,
                ..SolverSettings::default()
            },
        }
    }
}

/// The recorded problems of a robot's trajectory, and the trajectory.
fn record(robot: &Robot, quick: bool) -> Result<(Vec<RecordedStep>, RunRecord), PaperError> {
    let mut overrides = Vec::new();
    if quick {
        overrides.push(format!("simulation.duration={}", robot.quick_duration));
    }
    let scenario = robot.scenario.load(&overrides)?;
    let mut world = World::build(&scenario)?;
    if robot.locked {
        world = lock_joints(&world)?;
    }
    let spec = scenario
        .solver_specs()
        .into_iter()
        .next()
        .ok_or_else(|| PaperError::RunFailed {
            run: robot.scenario.file.into(),
            reason: "no solver".into(),
        })?;
    // The script's solver, warm-started from λ with its state reset (ContactBench's).
    let solver = Box::new(ResetEachSolve(spec.build()?));
    let mut sim = Simulator::new(
        world,
        solver,
        scenario.step_parameters(),
        scenario.external_forces.clone(),
    );
    sim.set_metrics(StepMetrics::None);
    let failed = |e: &dyn std::fmt::Display| PaperError::RunFailed {
        run: robot.scenario.file.into(),
        reason: e.to_string(),
    };
    let mut trajectory = RunRecord::default();
    trajectory
        .steps
        .push(sim.initial_record().map_err(|e| failed(&e))?);
    let mut steps = Vec::new();
    for _ in 0..scenario.num_steps() {
        let step: StepRecord = sim.step().map_err(|e| failed(&e))?;
        if let Some((problem, _, _)) = sim.last_solution() {
            steps.push(RecordedStep::new(&step, problem));
        }
        trajectory.steps.push(step);
    }
    Ok((steps, trajectory))
}

/// How the recording solver (the script's, with its cap) fared on the recorded problems.
/// A problem it did not solve is replayed as recorded; where such problems have no unique
/// answer at the 1e-9 stop (a contact set jammed so that its forces can grow inside the
/// cones), the replays' cap counts on them move with round-off in the contacts.
fn recording_outcome(trajectory: &RunRecord) -> String {
    let unsolved: Vec<usize> = trajectory
        .steps
        .iter()
        .filter(|s| !s.contacts.is_empty() && !s.converged)
        .map(|s| s.step)
        .collect();
    match unsolved.first() {
        None => "every one solved by the recording solver".into(),
        Some(first) => format!(
            "the recording solver not converged on {} of them, the first at step {first} \
             (replayed as recorded)",
            unsolved.len()
        ),
    }
}

/// Base height change (m) and final tilt (degrees) of a free-flying base.
fn posture(record: &RunRecord) -> (f64, f64) {
    let (Some(first), Some(last)) = (record.steps.first(), record.steps.last()) else {
        return (f64::NAN, f64::NAN);
    };
    let (x, y) = (last.q[3], last.q[4]);
    let tilt = (1.0 - 2.0 * (x * x + y * y))
        .clamp(-1.0, 1.0)
        .acos()
        .to_degrees();
    (last.base_position[2] - first.base_position[2], tilt)
}

/// The replays of one robot under one protocol: per solver (built-in, then extra), cold
/// and warm.
struct Replays {
    names: Vec<String>,
    cold: Vec<Replay>,
    warm: Vec<Replay>,
}

impl Replays {
    fn of(&self, name: &str) -> Option<(&Replay, &Replay)> {
        let k = self.names.iter().position(|n| n == name)?;
        Some((&self.cold[k], &self.warm[k]))
    }

    /// Why `name`'s timings measure its cap (cold or warm), if they do.
    fn capped(&self, name: &str) -> Option<String> {
        let (cold, warm) = self.of(name)?;
        [(cold, "cold"), (warm, "warm")]
            .iter()
            .find(|(r, _)| r.capped as f64 >= CAPPED * r.iterations.len().max(1) as f64)
            .map(|(r, mode)| {
                format!(
                    "{name} {mode}: iteration cap reached on {} of {} steps",
                    r.capped,
                    r.iterations.len()
                )
            })
    }
}

fn seed(robot: usize, stop: Stop, claim: usize) -> u64 {
    (robot * 100 + usize::from(stop == Stop::PaperText) * 10 + claim) as u64
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
        let names: Vec<String> = SOLVERS
            .iter()
            .map(|id| id.to_string())
            .chain(ctx.extra_solvers.iter().map(|f| f.name()))
            .collect();
        let factories = |settings: &SolverSettings| -> Vec<Arc<dyn SolverFactory>> {
            SOLVERS
                .iter()
                .map(|id| {
                    Arc::new(SolverSpec {
                        settings: settings.clone(),
                        ..SolverSpec::new(*id)
                    }) as Arc<dyn SolverFactory>
                })
                .chain(
                    ctx.extra_solvers
                        .iter()
                        .map(|f| f.with_settings(settings.clone())),
                )
                .collect()
        };
        let mut trajectories = Vec::new();
        // replays[robot][stop]
        let mut replays: Vec<Vec<Replays>> = Vec::new();
        for robot in &ROBOTS {
            let (steps, trajectory) = record(robot, ctx.quick)?;
            let every = timed_every(steps.len());
            let mut per_stop = Vec::new();
            for stop in Stop::BOTH {
                let mut r = Replays {
                    names: names.clone(),
                    cold: Vec::new(),
                    warm: Vec::new(),
                };
                let built = factories(&stop.settings(robot));
                let solvers: Vec<&dyn SolverFactory> = built.iter().map(|f| f.as_ref()).collect();
                for (cold, warm) in replay_all(&steps, &solvers, CONTACTBENCH_REPETITIONS, every)? {
                    r.cold.push(cold);
                    r.warm.push(warm);
                }
                per_stop.push(r);
            }
            replays.push(per_stop);
            trajectories.push((steps.len(), every, trajectory));
        }

        let mut page = Page::headed(self);
        page.setup = vec![
            format!("Solvers {}. The staggered projections (≈ 1-7 ms per solve) are left out.", SOLVERS.iter().map(|s| paper_name(*s)).collect::<Vec<_>>().join(", ")),
            "Each robot's trajectory is simulated once with its script's solver and settings (warm λ, state reset), and its contact problems recorded. Every solver then solves every recorded problem **cold** (λ0 = 0) and **warm** (λ0 = its own answer at the previous recorded step, contact by contact), its kept state (ρ, factorizations) reset before each solve, as ContactBench's bindings do.".into(),
            format!("Time: each solve repeated {} times from the same guess, the mean of the {} fastest kept (ContactBench's `solveContactProblem`); a solve that ends at its iteration cap is timed once (it measures the cap). The repetitions are taken in {} re-timings of the trajectory, {} per solve in each (a re-timing's time is the fastest of its own), and within a re-timing every solver is timed cold then warm at one step before the next step: a change of the machine's load falls on every solver alike. The solve call alone is timed: G is given (ContactBench's PGS and RaiSim timings include building G and its Cholesky, its ADMMs exclude the power iteration). Runs on a 2-core machine shared with other jobs.", CONTACTBENCH_REPETITIONS.repetitions(), CONTACTBENCH_REPETITIONS.fastest, CONTACTBENCH_REPETITIONS.rounds, CONTACTBENCH_REPETITIONS.per_round),
            format!("**ContactBench's scripts**: each solver with the script's call: eps_abs = {EPS_ABS:e} on impulses (th = 1e-6 on forces at Δt = 1 ms), the script's step test as eps_step (a stall counts as an exit, as ContactBench's `rel < rel_th`), the script's cap. **The paper's text** (\"the time taken to reach a fixed accuracy\"): every solver to the relative criterion r ≤ {EPS_REL:e} (docs/ruler.md), no step test, at most {PAPER_CAP} iterations."),
            format!("Claims compare solvers step by step: the geometric mean over the steps of the paired per-step ratios, with its 95 % bootstrap interval (1000 resamples, seeded). Each ratio has its own noise band: the same ratio computed on each re-timing alone, the band the largest factor between one of them and their geometric mean (at least {} %). A ratio is decided only when it lies beyond {} times its band from the threshold and its interval does not contain the threshold; otherwise it is not measurable, its band and re-timings named. A solver at its cap on at least half the steps (cold or warm) makes its comparisons not measurable.", NOISE_FLOOR * 100.0, NOISE_MARGIN),
        ];
        if !ctx.extra_solvers.is_empty() {
            page.setup.push(format!(
                "Extra solvers (the user's): {}, at the same settings, cold and warm as the others.",
                names[SOLVERS.len()..].join(", ")
            ));
        }
        page.protocol = vec![
            ProtocolLine::new("all robots", "μ = 0.9, dt = 1e-3, Kb = 1e-4, e = 0, security_margin 1e-3; warm_start = True in every script (cold runs need an edit)", "the same; cold and warm replays of the same recorded problems"),
            ProtocolLine::new("timing", "simulators.py: after each solve, 10 re-solves from the same guess, getCPUTimes().user sorted, mean of the int(0.8·10) = 8 fastest", "the same count (wall clock), taken in re-timings interleaved between solvers; a capped solve timed once"),
            ProtocolLine::new("aggregation over the trajectory", "not found", "paired per-step ratios, geometric mean with a bootstrap interval and a noise band from the re-timings; medians and box plots per solver"),
        ];
        for robot in &ROBOTS {
            for (aspect, script, ours) in robot.protocol {
                page.protocol
                    .push(ProtocolLine::new(*aspect, *script, *ours));
            }
        }
        for (robot, (steps, every, trajectory)) in ROBOTS.iter().zip(&trajectories) {
            page.setup.push(format!(
                "{}: `{}`, {} recorded problems{}, {}, {} timed (one in {every}).",
                robot.name,
                robot.scenario.file,
                steps,
                if ctx.quick { " (CI size)" } else { "" },
                recording_outcome(trajectory),
                steps.div_ceil(*every),
            ));
        }

        // Tables.
        let mut table = Vec::new();
        let mut samples = Vec::new();
        for (k, robot) in ROBOTS.iter().enumerate() {
            for (s, stop) in Stop::BOTH.iter().enumerate() {
                let r = &replays[k][s];
                for (name, (cold, warm)) in names.iter().zip(r.cold.iter().zip(&r.warm)) {
                    let paired = NoisyRatio::of(
                        CONTACTBENCH_REPETITIONS.rounds,
                        seed(k, *stop, 9),
                        |take| ratios(warm.times_of(take), cold.times_of(take)),
                    );
                    table.push(vec![
                        robot.name.into(),
                        stop.name().into(),
                        name.clone(),
                        num(cold.median_time()),
                        num(warm.median_time()),
                        format!(
                            "{}, noise ±{} %",
                            paired.ratio.text(),
                            num(paired.noise().exp_m1() * 100.0)
                        ),
                        format!(
                            "{:.1} / {:.1}",
                            cold.mean_iterations(),
                            warm.mean_iterations()
                        ),
                        format!(
                            "{} of {} / {} of {}",
                            cold.capped,
                            cold.iterations.len(),
                            warm.capped,
                            warm.iterations.len()
                        ),
                        format!("{} / {}", cold.unconverged, warm.unconverged),
                    ]);
                    for (mode, replay) in [("cold", cold), ("warm", warm)] {
                        for (step, t) in replay
                            .times
                            .iter()
                            .enumerate()
                            .filter(|(_, t)| t.is_finite())
                        {
                            samples.push(vec![
                                robot.name.to_string(),
                                stop.name().to_string(),
                                name.clone(),
                                mode.to_string(),
                                step.to_string(),
                                format!("{t}"),
                            ]);
                        }
                    }
                }
            }
        }
        let header = [
            "robot",
            "protocol",
            "solver",
            "median cold (µs)",
            "median warm (µs)",
            "warm / cold, paired (geometric mean [95 %], noise band)",
            "mean iterations cold / warm",
            "solved steps at the cap cold / warm",
            "unconverged cold / warm",
        ];
        page.data.push(ctx.csv("fig16.csv", &header, &table)?);
        page.tables.push((
            "Per robot, protocol and solver".into(),
            markdown_table(&header, &table),
        ));
        page.data.push(ctx.csv(
            "fig16_samples.csv",
            &[
                "robot",
                "protocol",
                "solver",
                "start",
                "step",
                "solve_time_us",
            ],
            &samples,
        )?);

        // Claims.
        for (k, robot) in ROBOTS.iter().enumerate() {
            for (s, stop) in Stop::BOTH.iter().enumerate() {
                let r = &replays[k][s];
                let times = |id: SolverId, warm: bool, take: Take| {
                    r.of(id.as_str()).map_or_else(Vec::new, |(c, w)| {
                        if warm { w } else { c }.times_of(take).to_vec()
                    })
                };
                let noisy = |claim: usize, per_step: &dyn Fn(Take) -> Vec<f64>| {
                    NoisyRatio::of(
                        CONTACTBENCH_REPETITIONS.rounds,
                        seed(k, *stop, claim),
                        per_step,
                    )
                };
                let caps = |a: SolverId, b: SolverId| {
                    measurable::any([r.capped(a.as_str()), r.capped(b.as_str())])
                };
                let label = format!("{}, {}", robot.name, stop.name());
                // 1. Cold: each ADMM slower than the PGS of its model.
                let cold_parts = PAIRS
                    .iter()
                    .map(|&(admm, pgs)| {
                        let ratio = noisy(1, &|take| {
                            ratios(&times(admm, false, take), &times(pgs, false, take))
                        });
                        let name = format!("t({}) / t({}) cold", paper_name(admm), paper_name(pgs));
                        Claim::at_least("", &name, ratio.ratio.value, 1.0).unless(measurable::any(
                            [caps(admm, pgs), within_noise(&name, &ratio, 1.0)],
                        ))
                    })
                    .collect();
                let iterations = PAIRS
                    .iter()
                    .map(|&(admm, pgs)| {
                        let it = |id: SolverId| {
                            r.of(id.as_str())
                                .map_or(f64::NAN, |(c, _)| c.mean_iterations())
                        };
                        format!(
                            "{} {:.0} and {} {:.0} iterations per cold solve",
                            paper_name(admm),
                            it(admm),
                            paper_name(pgs),
                            it(pgs)
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("; ");
                let explain = |claim: Claim| explain(claim, *stop, &iterations);
                page.claims.push(explain(
                    Claim::all(
                        &format!("\"When the contact solvers are cold started, ... ADMM [is] less efficient than the PGS solvers and their cheap per-contact iterations\" ({label})"),
                        cold_parts,
                    )
                    .threshold("the paper's figure (no number): tested as a paired ratio ≥ 1")
                    .timing(),
                ));
                // 2. Warm starts reduce the gap.
                let gap_parts = PAIRS
                    .iter()
                    .map(|&(admm, pgs)| {
                        let cold =
                            |take| ratios(&times(admm, false, take), &times(pgs, false, take));
                        let ratio = noisy(2, &|take| {
                            ratios(
                                &ratios(&times(admm, true, take), &times(pgs, true, take)),
                                &cold(take),
                            )
                        });
                        let gap = PairedRatio::of(&cold(Take::Pooled), seed(k, *stop, 1));
                        let name = format!(
                            "({0} / {1} warm) / ({0} / {1} cold)",
                            paper_name(admm),
                            paper_name(pgs)
                        );
                        let no_gap = (gap.high < 1.0).then(|| {
                            format!(
                                "{} is faster than {} cold ({}): no gap to reduce",
                                paper_name(admm),
                                paper_name(pgs),
                                gap.text()
                            )
                        });
                        Claim::at_most("", &name, ratio.ratio.value, 1.0).unless(measurable::any([
                            caps(admm, pgs),
                            no_gap,
                            within_noise(&name, &ratio, 1.0),
                        ]))
                    })
                    .collect();
                page.claims.push(explain(
                    Claim::all(
                        &format!("\"Leveraging the solution from the previous time step to warmstart the solvers ... allows for significantly reducing this gap\" ({label}: the ADMM ÷ PGS ratio smaller warm than cold)"),
                        gap_parts,
                    )
                    .threshold("the paper's figure (no number): tested as a paired ratio of ratios ≤ 1")
                    .timing(),
                ));
                // 3. Warm starts make every solver faster.
                let warm_parts = SOLVERS
                    .iter()
                    .map(|&id| {
                        let ratio = noisy(3, &|take| {
                            ratios(&times(id, true, take), &times(id, false, take))
                        });
                        let name = format!("t({}) warm / cold", paper_name(id));
                        Claim::at_most("", &name, ratio.ratio.value, 1.0).unless(measurable::any([
                            r.capped(id.as_str()),
                            within_noise(&name, &ratio, 1.0),
                        ]))
                    })
                    .collect();
                page.claims.push(explain(
                    Claim::all(
                        &format!("\"This leads to significant improvements in the computational timings\" ({label}: every solver faster warm than cold)"),
                        warm_parts,
                    )
                    .threshold("the paper's figure (no number): tested as a paired ratio ≤ 1 per solver")
                    .timing(),
                ));
            }
        }

        // Comparisons: the ratios the claims read, ContactBench's scripts.
        for (k, robot) in ROBOTS.iter().enumerate() {
            let r = &replays[k][0];
            if let (Some((ac, _)), Some((pc, _))) = (
                r.of(SolverId::NcpAdmm.as_str()),
                r.of(SolverId::NcpPgs.as_str()),
            ) {
                page.comparisons.push(Comparison::qualitative(
                    format!(
                        "{}: NCP/ADMM ÷ NCP/PGS, cold, paired (ContactBench's scripts)",
                        robot.name
                    ),
                    "figure only: > 1",
                    Some(
                        PairedRatio::of(&ratios(&ac.times, &pc.times), seed(k, Stop::Scripts, 1))
                            .value,
                    ),
                ));
            }
        }

        // Are the trajectories ContactBench's? (not a claim of the paper)
        for (robot, (_, _, trajectory)) in ROBOTS.iter().zip(&trajectories) {
            let (dz, tilt) = posture(trajectory);
            page.notes.push(match robot.name {
                "Solo-12" => format!("Solo-12 (zero torques, as solo.py): its base drops by {} m in {} s (the legs fold).", num(-dz), num(trajectory.steps.last().map_or(f64::NAN, |s| s.time))),
                "Talos" => format!("Talos (rigid, 75 N push): its base height changes by {} m and it tilts by {}° over the run.", num(dz), num(tilt)),
                _ => format!("Allegro (locked hand): the ball's centre moves by {} m vertically and ends at z = {} m (the hand's base at 0.2 m).", num(dz), num(trajectory.steps.last().map_or(f64::NAN, |s| s.base_position[2]))),
            });
        }

        // Figure: a grid, robots down, protocols across.
        let grey = RGBColor(90, 90, 90);
        let mut panels = Vec::new();
        for (k, robot) in ROBOTS.iter().enumerate() {
            for (s, stop) in Stop::BOTH.iter().enumerate() {
                let r = &replays[k][s];
                panels.push(Panel::Box(BoxChart {
                    title: format!("{}: {}", robot.name, stop.name()),
                    y_label: "solve time (µs)".into(),
                    y_scale: Scale::Log,
                    groups: names
                        .iter()
                        .map(|name| {
                            let capped = r.capped(name).is_some();
                            BoxGroup {
                                label: if capped {
                                    format!("{name}*")
                                } else {
                                    name.clone()
                                },
                                boxes: r
                                    .of(name)
                                    .map(|(c, w)| {
                                        [(c, false), (w, true)]
                                            .into_iter()
                                            .map(|(replay, filled)| BoxSpec {
                                                samples: replay
                                                    .times
                                                    .iter()
                                                    .copied()
                                                    .filter(|t| t.is_finite())
                                                    .collect(),
                                                color: label_style(name).color,
                                                filled,
                                            })
                                            .collect()
                                    })
                                    .unwrap_or_default(),
                            }
                        })
                        .collect(),
                    legend: vec![
                        ("cold (hollow, left)".into(), grey, false),
                        ("warm (filled, right)".into(), grey, true),
                    ],
                }));
            }
        }
        let mut figure = Figure::grid(
            "Fig. 16: solve time per recorded problem, cold and warm (mean of the 8 fastest of 10)",
            2,
            panels,
        );
        figure.panel_size = (820, 420);
        page.figures.push((
            "Solve times (log axis) per robot (rows) and protocol (columns), cold and warm side by side; \"*\": at its iteration cap on at least half the steps".into(),
            ctx.figure("fig16", &figure)?,
        ));
        Ok(page)
    }
}

/// Why a timing claim does not hold under `stop`, with the iterations behind the times.
fn explain(claim: Claim, stop: Stop, iterations: &str) -> Claim {
    let how = match stop {
        Stop::Scripts => {
            "measured as ContactBench measures (its scripts' set-ups, settings and timing)"
        }
        Stop::PaperText => "measured as the paper's text describes (one accuracy for every solver)",
    };
    claim.why(
        Why::Finding,
        format!("{how}, the failing parts' paired ratios are in the measured column; {iterations}"),
    )
}
