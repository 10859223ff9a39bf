//! The gradients the study compares: one task quantity per scenario, its derivative by the
//! simulator's step derivatives ([`crate::simulation::StepDerivatives`], chained over a
//! horizon) and by central differences of whole runs of the same simulator, and the
//! spurious internal force of the answers along the way ([`crate::paper::internal`]).

use nalgebra::{DVector, Quaternion, UnitQuaternion, Vector3};

use crate::derivatives::ContactMode;
use crate::paper::internal::{spurious_internal_force, Spurious};
use crate::paper::runs::{PaperScenario, CUBE_SLIDE};
use crate::paper::PaperError;
use crate::simulation::runner::simulator;
use crate::simulation::{Scenario, Simulator};
use crate::solvers::{Criterion, SolverId, SolverSettings, SolverSpec};

/// Solo-12 standing under its PD controller.
const SOLO_STANDING: PaperScenario = PaperScenario {
    file: "scenarios/solo_standing.yaml",
    text: include_str!("../../../scenarios/solo_standing.yaml"),
};

/// The solvers' relative criterion: tight, so that the differences measure the model's
/// gradient, not the solver's stopping point.
pub const EPS_REL: f64 = 1e-10;
/// Their iteration cap.
pub const MAX_ITER: usize = 20_000;
/// The differences' step, relative to the push's scale (`h`); the coarse reference uses
/// `10 h`, and their disagreement is the reference's own uncertainty.
pub const RELATIVE_STEP: f64 = 1e-5;
/// The differences' step of Solo-12's knee torque (N·m).
pub const TORQUE_STEP: f64 = 1e-4;
/// The cube's push along y, as a fraction of `μ m g` (it sticks).
const PUSH_FRACTION: f64 = 0.5;
/// The Solo-12 joint whose torque moves the feet's forces.
pub const SOLO_JOINT: &str = "FL_KFE";
/// The foot whose force is shown.
pub const SOLO_FOOT: &str = "FL_FOOT";

/// A task of the study.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    /// The cube sliding from 1 m/s along y: `y(T)` with respect to the initial `v_y`.
    Slide,
    /// The cube at rest pushed along y by `F = ½ μ m g`: `y(T)` with respect to `F`.
    Push,
    /// Solo-12 standing: the front-left foot's impulse `λ` with respect to the
    /// front-left knee's torque, one step.
    Solo,
    /// The pushed cube's first step: the impulse of its first corner with respect to `F`
    /// (not determined by the model: four corners, redundant).
    Corner,
}

impl Task {
    /// Every task, in the page's order.
    pub const ALL: [Task; 4] = [Task::Slide, Task::Push, Task::Solo, Task::Corner];

    /// The quantity is a force of the step (not a position).
    pub fn is_force(self) -> bool {
        matches!(self, Task::Solo | Task::Corner)
    }

    /// The quantity is determined by the model (not the part of redundant contacts'
    /// forces a solver chooses).
    pub fn is_determined(self) -> bool {
        self != Task::Corner
    }

    /// Short name (tables, data).
    pub fn name(self) -> &'static str {
        match self {
            Task::Slide => "sliding cube",
            Task::Push => "pushed cube",
            Task::Solo => "Solo-12 standing",
            Task::Corner => "pushed cube's corner",
        }
    }

    /// The derivative compared.
    pub fn quantity(self) -> &'static str {
        match self {
            Task::Slide => "∂y(T)/∂v_y(0) (s)",
            Task::Push => "∂y(T)/∂F_y (m/N)",
            Task::Solo => "∂λ_FL/∂τ_knee (N·s per N·m), [t1, t2, n]",
            Task::Corner => "∂λ_1/∂F_y of the first corner, first step (N·s per N), [t1, t2, n]",
        }
    }
}

/// The horizon (steps) of the cube tasks, and the steps Solo-12 settles before its step.
pub fn horizon(quick: bool) -> (usize, usize) {
    if quick {
        (20, 100)
    } else {
        (100, 200)
    }
}

/// What one solver gave on one task.
#[derive(Debug, Clone)]
pub struct Measured {
    /// Our derivative (a vector for Solo-12's foot: `[t1, t2, n]`).
    pub ours: Vec<f64>,
    /// Central differences at step `h`.
    pub fd: Vec<f64>,
    /// Central differences at `10 h`.
    pub fd_coarse: Vec<f64>,
    /// The step `h` (in the push's unit).
    pub step: f64,
    /// `‖ours − fd‖∞ / ‖fd‖∞` (over the push-free scale when `fd` vanishes).
    pub error: f64,
    /// `‖fd − fd_coarse‖∞` on the same scale: the reference's uncertainty.
    pub fd_uncertainty: f64,
    /// The largest spurious internal force along the horizon (N·s), `None` when the
    /// metric is invalid (its reason in `spurious_note`).
    pub spurious: Option<f64>,
    /// The same over the largest `‖λ‖∞` along the horizon.
    pub spurious_relative: Option<f64>,
    /// Why the metric is invalid, empty when valid.
    pub spurious_note: String,
    /// The cube's largest rise over its start (m): the normal drift of a relaxation.
    pub rise: f64,
    /// Contacts flagged on a mode boundary, summed over the horizon's steps.
    pub boundaries: usize,
    /// The modes at the last step (`4 slide`).
    pub modes: String,
}

/// One solver's settings in the study.
pub fn spec(id: SolverId) -> SolverSpec {
    let mut spec = SolverSpec::new(id);
    spec.settings = SolverSettings {
        stop: Criterion::Relative,
        eps_rel: EPS_REL,
        max_iter: MAX_ITER,
        eps_step: 0.0,
        ..SolverSettings::default()
    };
    spec
}

fn failed(run: &str, e: impl std::fmt::Display) -> String {
    format!("{run}: {e}")
}

fn cube_scenario(task: Task) -> Result<Scenario, PaperError> {
    let overrides: Vec<String> = match task {
        Task::Push | Task::Corner => {
            vec!["initial_state.bodies.cube.velocity=[0, 0, 0, 0, 0, 0]".into()]
        }
        _ => Vec::new(),
    };
    CUBE_SLIDE.load(&overrides)
}

/// The scenario of a task and where its state comes from.
pub fn scenario(task: Task) -> Result<Scenario, PaperError> {
    match task {
        Task::Slide | Task::Push | Task::Corner => cube_scenario(task),
        Task::Solo => SOLO_STANDING.load(&[]),
    }
}

/// The state every solver starts from: the scenario's initial state for the sliding cube;
/// the cube settled 50 steps, or Solo-12 settled `settle` steps, by ncp-admm.
pub fn start_state(
    task: Task,
    scenario: &Scenario,
    settle: usize,
) -> Result<(DVector<f64>, DVector<f64>), String> {
    let mut sim = simulator(scenario, &spec(SolverId::NcpAdmm)).map_err(|e| e.to_string())?;
    let steps = match task {
        Task::Slide => 0,
        Task::Push | Task::Corner => 50,
        _ => settle,
    };
    for _ in 0..steps {
        sim.advance().map_err(|e| failed("settling", e))?;
    }
    let (q, v) = sim.state();
    Ok((q.clone(), v.clone()))
}

/// The push of a cube task: `+ s` on the initial `v_y`, or `F + s` on the added force.
fn cube_at(
    scenario: &Scenario,
    id: SolverId,
    task: Task,
    start: &(DVector<f64>, DVector<f64>),
    s: f64,
) -> Result<Simulator, String> {
    let mut sim = simulator(scenario, &spec(id)).map_err(|e| e.to_string())?;
    let (q, mut v) = start.clone();
    let mut force = DVector::zeros(v.len());
    match task {
        Task::Slide => v[1] += s,
        _ => force[1] = push_force(scenario) + s,
    }
    sim.set_state(&q, &v).map_err(|e| e.to_string())?;
    if task == Task::Push {
        sim.set_added_torque(Some(force))
            .map_err(|e| e.to_string())?;
    }
    Ok(sim)
}

/// `½ μ m g` of the cube (N).
fn push_force(scenario: &Scenario) -> f64 {
    let mu = scenario.world.friction;
    let mass = scenario.world.bodies.first().map_or(1.0, |b| b.mass);
    PUSH_FRACTION * mu * mass * 9.81
}

/// The push's scale: `h` is [`RELATIVE_STEP`] of it.
fn push_scale(task: Task, scenario: &Scenario) -> f64 {
    match task {
        Task::Slide => 1.0,
        _ => push_force(scenario),
    }
}

/// World y of the cube after `steps` from the pushed state.
fn final_y(
    scenario: &Scenario,
    id: SolverId,
    task: Task,
    start: &(DVector<f64>, DVector<f64>),
    s: f64,
    steps: usize,
) -> Result<f64, String> {
    let mut sim = cube_at(scenario, id, task, start, s)?;
    for _ in 0..steps {
        sim.advance().map_err(|e| failed("differences", e))?;
    }
    Ok(sim.state().0[1])
}

/// The spurious internal force of the last step's answer.
fn spurious_now(sim: &Simulator, id: SolverId) -> Option<(Spurious, f64)> {
    let (problem, lambda, _) = sim.last_solution()?;
    Some((
        spurious_internal_force(problem, lambda, id.model()),
        lambda.amax(),
    ))
}

/// Collects the spurious forces of a horizon.
#[derive(Default)]
struct SpuriousTrack {
    largest: f64,
    largest_lambda: f64,
    invalid: Option<String>,
}

impl SpuriousTrack {
    fn add(&mut self, observed: Option<(Spurious, f64)>) {
        let Some((s, lambda)) = observed else {
            return;
        };
        self.largest_lambda = self.largest_lambda.max(lambda);
        match s {
            Spurious::Value(x) => self.largest = self.largest.max(x),
            Spurious::Invalid(why) => self.invalid = Some(why),
        }
    }
}

fn mode_text(modes: &[crate::derivatives::ModeReport]) -> String {
    let count = |m: ContactMode| modes.iter().filter(|r| r.mode == m).count();
    let mut parts = Vec::new();
    for (m, name) in [
        (ContactMode::Stick, "stick"),
        (ContactMode::Slide, "slide"),
        (ContactMode::TakeOff, "take-off"),
    ] {
        let n = count(m);
        if n > 0 {
            parts.push(format!("{n} {name}"));
        }
    }
    if parts.is_empty() {
        "no contact".into()
    } else {
        parts.join(", ")
    }
}

/// `‖a − b‖∞ / scale`.
fn distance(a: &[f64], b: &[f64], scale: f64) -> f64 {
    let d = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    if d == 0.0 {
        0.0
    } else {
        d / scale
    }
}

fn largest(a: &[f64]) -> f64 {
    a.iter().map(|x| x.abs()).fold(0.0, f64::max)
}

/// A cube task: the tangent `[δq, δv]` carried through the steps' `A` (and `B` for the
/// force), `δy(T)` read in the world through the final orientation.
fn cube_task(
    scenario: &Scenario,
    id: SolverId,
    task: Task,
    start: &(DVector<f64>, DVector<f64>),
    steps: usize,
) -> Result<Measured, String> {
    let mut sim = cube_at(scenario, id, task, start, 0.0)?;
    let nv = start.1.len();
    let mut tangent = DVector::zeros(2 * nv);
    if task == Task::Slide {
        tangent[nv + 1] = 1.0;
    }
    let (mut track, mut boundaries, mut modes, mut rise) =
        (SpuriousTrack::default(), 0, String::new(), 0.0_f64);
    for _ in 0..steps {
        let d = sim
            .step_derivatives()
            .map_err(|e| failed("derivatives", e))?;
        tangent = &d.a * &tangent;
        if task == Task::Push {
            tangent += d.b.column(1);
        }
        boundaries += d.modes.iter().filter(|m| m.at_boundary()).count();
        modes = mode_text(&d.modes);
        sim.step().map_err(|e| failed("step", e))?;
        track.add(spurious_now(&sim, id));
        rise = rise.max(sim.state().0[2] - start.0[2]);
    }
    let q = sim.state().0;
    let turn = UnitQuaternion::from_quaternion(Quaternion::new(q[6], q[3], q[4], q[5]));
    let ours = (turn * Vector3::new(tangent[0], tangent[1], tangent[2]))[1];
    let h = RELATIVE_STEP * push_scale(task, scenario);
    let central = |width: f64| -> Result<f64, String> {
        let plus = final_y(scenario, id, task, start, width, steps)?;
        let minus = final_y(scenario, id, task, start, -width, steps)?;
        Ok((plus - minus) / (2.0 * width))
    };
    let fd = central(h)?;
    let fd_coarse = central(10.0 * h)?;
    // The push-free gradient: T for the velocity, T²/(2m) for a force.
    let dt = scenario.simulation.dt;
    let t = steps as f64 * dt;
    let free = match task {
        Task::Slide => t,
        _ => t * t / 2.0,
    };
    let scale = fd.abs().max(free * 1e-3);
    Ok(measured(
        vec![ours],
        vec![fd],
        vec![fd_coarse],
        h,
        scale,
        track,
        rise,
        boundaries,
        modes,
    ))
}

#[allow(clippy::too_many_arguments)]
fn measured(
    ours: Vec<f64>,
    fd: Vec<f64>,
    fd_coarse: Vec<f64>,
    step: f64,
    scale: f64,
    track: SpuriousTrack,
    rise: f64,
    boundaries: usize,
    modes: String,
) -> Measured {
    let (spurious, spurious_relative, spurious_note) = match track.invalid {
        Some(why) => (None, None, why),
        None => (
            Some(track.largest),
            (track.largest_lambda > 0.0).then(|| track.largest / track.largest_lambda),
            String::new(),
        ),
    };
    Measured {
        error: distance(&ours, &fd, scale),
        fd_uncertainty: distance(&fd, &fd_coarse, scale),
        ours,
        fd,
        fd_coarse,
        step,
        spurious,
        spurious_relative,
        spurious_note,
        rise,
        boundaries,
        modes,
    }
}

/// Index of a named dof of the robot.
fn dof(sim: &Simulator, name: &str) -> Result<usize, String> {
    sim.world()
        .v_names()
        .iter()
        .position(|n| n == name)
        .ok_or_else(|| format!("no joint {name} in the model"))
}

/// The impulses of the step from the kept state with `s` N·m added on `dof`.
fn impulses_with(
    sim: &mut Simulator,
    base: &DVector<f64>,
    dof: usize,
    s: f64,
) -> Result<DVector<f64>, String> {
    let mut tau = base.clone();
    tau[dof] += s;
    sim.set_added_torque(Some(tau)).map_err(|e| e.to_string())?;
    sim.step_derivatives()
        .map_err(|e| failed("differences", e))?;
    let (_, lambda, _) = sim
        .last_solution()
        .ok_or_else(|| "differences: no contact".to_string())?;
    Ok(lambda.clone())
}

/// Central differences of the step's impulses along the knee's torque, width `h` N·m.
fn impulse_differences(
    sim: &mut Simulator,
    base: &DVector<f64>,
    dof: usize,
    h: f64,
    contacts: usize,
) -> Result<DVector<f64>, String> {
    let plus = impulses_with(sim, base, dof, h)?;
    let minus = impulses_with(sim, base, dof, -h)?;
    if plus.len() != 3 * contacts || minus.len() != 3 * contacts {
        return Err("differences: a perturbed step has other contacts".into());
    }
    Ok((plus - minus) / (2.0 * h))
}

/// One step's `∂λ/∂τ` along one dof from the step derivatives, and from central
/// differences of the same simulator's step (that dof's generalized force moved by ±h):
/// Solo-12's knee torque (h in N·m) and its front-left foot's contact, or the pushed
/// cube's force along y (h relative to `F`) and its first corner.
fn impulse_task(
    scenario: &Scenario,
    id: SolverId,
    task: Task,
    start: &(DVector<f64>, DVector<f64>),
) -> Result<Measured, String> {
    let mut sim = simulator(scenario, &spec(id)).map_err(|e| e.to_string())?;
    sim.set_state(&start.0, &start.1)
        .map_err(|e| e.to_string())?;
    let nv = start.1.len();
    let mut base = DVector::zeros(nv);
    let (joint, h) = if task == Task::Solo {
        (dof(&sim, SOLO_JOINT)?, TORQUE_STEP)
    } else {
        base[1] = push_force(scenario);
        (1, RELATIVE_STEP * push_force(scenario))
    };
    sim.set_added_torque(Some(base.clone()))
        .map_err(|e| e.to_string())?;
    let d = sim
        .step_derivatives()
        .map_err(|e| failed("derivatives", e))?;
    let contacts = d.modes.len();
    let fd = impulse_differences(&mut sim, &base, joint, h, contacts)?;
    let coarse = impulse_differences(&mut sim, &base, joint, 10.0 * h, contacts)?;
    sim.set_added_torque(Some(base))
        .map_err(|e| e.to_string())?;
    let record = sim.step().map_err(|e| failed("step", e))?;
    let mut foot: Vec<usize> = record
        .contacts
        .iter()
        .enumerate()
        .filter(|(_, c)| task != Task::Solo || c.pair.contains(SOLO_FOOT))
        .map(|(i, _)| i)
        .collect();
    if foot.is_empty() || record.contacts.len() != contacts {
        return Err("the contact shown is missing, or the step has other contacts".into());
    }
    foot.truncate(1);
    let mut track = SpuriousTrack::default();
    track.add(spurious_now(&sim, id));
    let sum = |value: &dyn Fn(usize) -> f64| -> Vec<f64> {
        (0..3)
            .map(|k| foot.iter().map(|i| value(3 * i + k)).sum())
            .collect()
    };
    let ours = sum(&|row| d.d_lambda[(row, 2 * nv + joint)]);
    let fd_foot = sum(&|row| fd[row]);
    let coarse_foot = sum(&|row| coarse[row]);
    let scale = largest(&fd_foot).max(largest(&ours));
    let boundaries = d.modes.iter().filter(|m| m.at_boundary()).count();
    Ok(measured(
        ours,
        fd_foot,
        coarse_foot,
        h,
        scale,
        track,
        0.0,
        boundaries,
        mode_text(&d.modes),
    ))
}

/// One solver on one task.
pub fn measure(
    task: Task,
    scenario: &Scenario,
    id: SolverId,
    start: &(DVector<f64>, DVector<f64>),
    steps: usize,
) -> Result<Measured, String> {
    match task {
        Task::Slide | Task::Push => cube_task(scenario, id, task, start, steps),
        Task::Solo | Task::Corner => impulse_task(scenario, id, task, start),
    }
}
