//! A diagonal trot for a quadruped (Solo-12): the same controller whatever the contact
//! model, reading only the joint and base states, at a control period of its own.
//!
//! - Gait: legs FL+HR and FR+HL alternate, each pair in stance for half the period `T`
//!   (swing time `T_sw = T/2`), after `stand` seconds on four feet; the target velocity
//!   ramps from 0 over one period.
//! - Footsteps (Raibert, with velocity feedback): `p_f = p_hip + v (T_sw (1 − s)) +
//!   v_ref T_st/2 + k (v − v_ref)` in the horizontal plane, at the foot's lift-off height.
//! - Swing: `p(s) = p₀ + (p_f − p₀)(3s² − 2s³) + h sin(πs) e_z`, tracked by joint PD
//!   towards `q + J_leg⁻¹ (p_des − p)`, `q̇_des = J_leg⁻¹ (ṗ_des − J_base v_base)`.
//! - Stance: one-step centroidal QP on the stance feet's forces
//!   `min ‖A f − w‖²_W + ε‖f‖²` with `A = [I …; [r_i]× …]`, `w = [m (a + g); I_w α]`
//!   (base PD on height, horizontal velocity and orientation), subject to the friction
//!   pyramid `|f_x|, |f_y| ≤ μ f_z` and `f_min ≤ f_z ≤ f_max` ([`force_qp`]), solved
//!   by a dual active-set method ([`active_set`]) or clarabel;
//!   `τ = −J_legᵀ f` on the stance legs.

use std::sync::Arc;
use std::time::Instant;

use nalgebra::{DVector, Matrix3, Matrix3xX, UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

use crate::collision::HeightField;
use crate::dynamics::{self, Data, DynamicsError};
use crate::model::{JointKind, Model};

pub mod active_set;
pub mod force_qp;

pub use force_qp::{ForceQp, ForceQpSolver, StanceProblem};

/// The trot's parameters (scenario `actuation.trot`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrotSpec {
    /// Target base velocity in the horizontal plane, world axes (m/s).
    pub velocity: [f64; 2],
    /// The four feet's frames, in the order FL, FR, HL, HR (diagonals FL+HR, FR+HL).
    pub feet: [String; 4],
    /// Gait period `T` (s). Default `0.32`.
    #[serde(default = "default_period")]
    pub period: f64,
    /// Swing apex over the lift-off height (m). Default `0.05`.
    #[serde(default = "default_step_height")]
    pub step_height: f64,
    /// Control period (s): torques are held in between. Default `0.002`.
    #[serde(default = "default_control_period")]
    pub control_period: f64,
    /// Time on four feet before trotting (s). Default `0.2`.
    #[serde(default = "default_stand")]
    pub stand: f64,
    /// Friction coefficient the controller assumes. Default `0.5`.
    #[serde(default = "default_controller_friction")]
    pub friction: f64,
    /// Normal force bounds per stance foot (N). Default `[1, 40]`.
    #[serde(default = "default_normal_bounds")]
    pub normal_force: [f64; 2],
    /// Raibert velocity feedback gain `k` (s). Default `0.1`.
    #[serde(default = "default_raibert")]
    pub raibert_gain: f64,
    /// Swing joint PD gains `[K_p (N·m/rad), K_d (N·m·s/rad)]`. Default `[6, 0.15]`.
    #[serde(default = "default_swing_gains")]
    pub swing_gains: [f64; 2],
    /// Base height PD `[K_p (1/s²), K_d (1/s)]`. Default `[150, 20]`.
    #[serde(default = "default_height_gains")]
    pub height_gains: [f64; 2],
    /// Horizontal velocity gain (1/s). Default `5`.
    #[serde(default = "default_velocity_gain")]
    pub velocity_gain: f64,
    /// Orientation PD `[K_p (1/s²), K_d (1/s)]`. Default `[150, 20]`.
    #[serde(default = "default_orientation_gains")]
    pub orientation_gains: [f64; 2],
    /// Falls: base height outside `initial ± fall_height` (m) or roll/pitch above
    /// `fall_tilt` (rad). Defaults `0.1`, `0.6`.
    #[serde(default = "default_fall_height")]
    pub fall_height: f64,
    /// See `fall_height`.
    #[serde(default = "default_fall_tilt")]
    pub fall_tilt: f64,
    /// The controller sees the terrain's height field, as a robot with a height map
    /// does: footholds at the surface, the swing apex over the highest ground along the
    /// step, each stance foot's friction pyramid on the surface normal under it.
    /// Default `false` (blind: the ground is felt through the footholds only).
    #[serde(default)]
    pub perception: bool,
    /// The stance QP's solver: `active-set` (default; clarabel when it does not finish)
    /// or `clarabel`.
    #[serde(default)]
    pub force_qp: ForceQpSolver,
}

fn default_period() -> f64 {
    0.32
}
fn default_step_height() -> f64 {
    0.05
}
fn default_control_period() -> f64 {
    0.002
}
fn default_stand() -> f64 {
    0.2
}
fn default_controller_friction() -> f64 {
    0.5
}
fn default_normal_bounds() -> [f64; 2] {
    [1.0, 40.0]
}
fn default_raibert() -> f64 {
    0.1
}
fn default_swing_gains() -> [f64; 2] {
    [6.0, 0.15]
}
fn default_height_gains() -> [f64; 2] {
    [150.0, 20.0]
}
fn default_velocity_gain() -> f64 {
    5.0
}
fn default_orientation_gains() -> [f64; 2] {
    [150.0, 20.0]
}
fn default_fall_height() -> f64 {
    0.1
}
fn default_fall_tilt() -> f64 {
    0.6
}

impl TrotSpec {
    /// Simulation steps of `dt` per control tick: the torques of a tick are held this
    /// long.
    pub fn steps_per_tick(&self, dt: f64) -> usize {
        (self.control_period / dt).round().max(1.0) as usize
    }

    /// The first parameter out of range: `(field, message)`.
    pub fn check(&self) -> Option<(&'static str, String)> {
        let positive = [
            ("period", self.period),
            ("control_period", self.control_period),
            ("fall_height", self.fall_height),
            ("fall_tilt", self.fall_tilt),
        ];
        for (field, value) in positive {
            if !(value.is_finite() && value > 0.0) {
                return Some((field, format!("{value}: must be finite and > 0")));
            }
        }
        let non_negative = [
            ("step_height", self.step_height),
            ("stand", self.stand),
            ("friction", self.friction),
            ("raibert_gain", self.raibert_gain),
            ("velocity_gain", self.velocity_gain),
            ("swing_gains", self.swing_gains[0].min(self.swing_gains[1])),
            (
                "height_gains",
                self.height_gains[0].min(self.height_gains[1]),
            ),
            (
                "orientation_gains",
                self.orientation_gains[0].min(self.orientation_gains[1]),
            ),
        ];
        for (field, value) in non_negative {
            if !(value.is_finite() && value >= 0.0) {
                return Some((field, format!("{value}: must be finite and >= 0")));
            }
        }
        if !self.velocity.iter().all(|v| v.is_finite()) {
            return Some(("velocity", "must be finite".into()));
        }
        let [lo, hi] = self.normal_force;
        if !(lo.is_finite() && hi.is_finite() && 0.0 <= lo && lo < hi) {
            return Some((
                "normal_force",
                format!("[{lo}, {hi}]: needs 0 <= min < max"),
            ));
        }
        None
    }
}

/// A leg: its foot frame, its joints' velocity indices (from the hip) and its hip joint.
#[derive(Debug, Clone)]
struct Leg {
    foot_joint: usize,
    foot_offset: Vector3<f64>,
    hip_joint: usize,
    velocity_indices: [usize; 3],
}

/// The trot controller of the module docs (fixed parts).
#[derive(Debug, Clone)]
pub struct TrotController {
    spec: TrotSpec,
    legs: [Leg; 4],
    mass: f64,
    /// Locked inertia about the base origin, base axes (at the initial configuration).
    inertia: Matrix3<f64>,
    yaw: f64,
    start: [f64; 2],
    /// The height map of a perceiving controller (`perception`).
    terrain: Option<Arc<HeightField>>,
}

/// What the controller did at its last tick (the task's record).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TrotRecord {
    /// Target horizontal velocity (m/s, world).
    pub target_velocity: [f64; 2],
    /// Base horizontal velocity (m/s, world).
    pub base_velocity: [f64; 2],
    /// Horizontal distance from the start (m).
    pub distance: f64,
    /// The base left the height or tilt band.
    pub fallen: bool,
    /// The force QP was solved (false: no solver solved it, the weight was shared
    /// evenly).
    pub qp_solved: bool,
    /// Wall time of the last QP (s).
    pub qp_time: f64,
}

/// The trot's mutable state, kept by the simulator.
#[derive(Debug, Clone)]
pub struct TrotState {
    next_tick: usize,
    torques: DVector<f64>,
    liftoff: [Vector3<f64>; 4],
    was_swinging: [bool; 4],
    /// Each foot's position at its last touchdown (the ground the robot has felt).
    footholds: [Vector3<f64>; 4],
    /// Base height over the footholds' plane at the first tick.
    clearance: Option<f64>,
    jacobian: Matrix3xX<f64>,
    qp: ForceQp,
    /// The last tick's stance QP.
    problem: Option<StanceProblem>,
    /// Height of the foot frames over the seen surface at the first tick (perception).
    sole: f64,
    /// The last tick's record.
    pub record: TrotRecord,
}

impl TrotState {
    /// The stance QP of the last tick (`None` before the first).
    pub fn last_problem(&self) -> Option<&StanceProblem> {
        self.problem.as_ref()
    }

    /// The stance QP's solvers (their count of fallbacks to clarabel).
    pub fn force_qp(&self) -> &ForceQp {
        &self.qp
    }
}

const GRAVITY: f64 = 9.81;

impl TrotController {
    /// The controller for `model` starting at `q0` (a free-flying base and four
    /// three-joint legs ending at the named feet).
    pub fn new(model: &Model, spec: TrotSpec, q0: &DVector<f64>) -> Result<Self, String> {
        if let Some((field, message)) = spec.check() {
            return Err(format!("{field}: {message}"));
        }
        let base = model
            .joints
            .iter()
            .position(|j| j.kind == JointKind::FreeFlyer)
            .ok_or("the trot needs a free-flying base")?;
        if model.joints[base].idx_q != 0 || model.joints[base].idx_v != 0 {
            return Err("the trot needs the free-flying base first in q and v".into());
        }
        let mut legs = Vec::new();
        for foot in &spec.feet {
            let id = model.frame_id(foot).map_err(|e| format!("feet: {e}"))?;
            let frame = &model.frames[id];
            let mut chain = Vec::new();
            let mut joint = frame.parent_joint;
            while joint != base && joint != 0 && chain.len() <= 3 {
                chain.push(joint);
                joint = model.joints[joint].parent;
            }
            let one_dof = chain.iter().all(|&j| model.joints[j].nv() == 1);
            if chain.len() != 3 || joint != base || !one_dof {
                return Err(format!(
                    "feet: {foot} is not at the end of a three-joint leg on the base"
                ));
            }
            legs.push(Leg {
                foot_joint: frame.parent_joint,
                foot_offset: frame.placement.translation.vector,
                hip_joint: chain[2],
                velocity_indices: [
                    model.joints[chain[2]].idx_v,
                    model.joints[chain[1]].idx_v,
                    model.joints[chain[0]].idx_v,
                ],
            });
        }
        let legs: [Leg; 4] = legs
            .try_into()
            .map_err(|_| "feet: four feet are needed".to_string())?;
        let mut data = Data::new(model);
        let m = dynamics::crba(model, &mut data, q0).map_err(|e| e.to_string())?;
        let inertia = m.fixed_view::<3, 3>(3, 3).into_owned();
        let mass = m[(0, 0)];
        let rotation = base_rotation(q0);
        Ok(Self {
            legs,
            mass,
            inertia,
            yaw: rotation.euler_angles().2,
            start: [q0[0], q0[1]],
            spec,
            terrain: None,
        })
    }

    /// The same controller seeing `terrain` when its spec asks for perception (module
    /// docs); a blind controller ignores it.
    pub fn with_terrain(mut self, terrain: Option<Arc<HeightField>>) -> Self {
        self.terrain = terrain.filter(|_| self.spec.perception);
        self
    }

    /// The seen surface's height under `p`, `None` for a blind controller or outside the
    /// map.
    fn seen_height(&self, p: &Vector3<f64>) -> Option<f64> {
        self.terrain.as_ref()?.height_at(p.x, p.y)
    }

    /// The seen surface's unit normal under `p` (central differences over one cell),
    /// `e_z` for a blind controller or outside the map.
    fn seen_normal(&self, p: &Vector3<f64>) -> Vector3<f64> {
        let Some(field) = &self.terrain else {
            return Vector3::z();
        };
        let h = field.spacing();
        let slope = |dx: f64, dy: f64| {
            let up = field.height_at(p.x + dx, p.y + dy)?;
            let down = field.height_at(p.x - dx, p.y - dy)?;
            Some((up - down) / (2.0 * h))
        };
        match (slope(h, 0.0), slope(0.0, h)) {
            (Some(gx), Some(gy)) => Vector3::new(-gx, -gy, 1.0).normalize(),
            _ => Vector3::z(),
        }
    }

    /// A fresh state for a run.
    pub fn state(&self, nv: usize) -> TrotState {
        TrotState {
            next_tick: 0,
            torques: DVector::zeros(nv),
            liftoff: [Vector3::zeros(); 4],
            was_swinging: [false; 4],
            footholds: [Vector3::zeros(); 4],
            clearance: None,
            jacobian: Matrix3xX::zeros(nv),
            qp: ForceQp::new(self.spec.force_qp),
            problem: None,
            sole: 0.0,
            record: TrotRecord::default(),
        }
    }

    /// The target horizontal velocity at time `t`: 0 while standing, then a ramp over one
    /// period.
    pub fn target_velocity(&self, t: f64) -> [f64; 2] {
        let ramp = ((t - self.spec.stand) / self.spec.period).clamp(0.0, 1.0);
        self.spec.velocity.map(|v| v * ramp)
    }

    /// Swing phase `s ∈ [0, 1)` of leg `k` at `t`, `None` in stance.
    fn swing_phase(&self, k: usize, t: f64) -> Option<f64> {
        let trot = t - self.spec.stand;
        if trot < 0.0 {
            return None;
        }
        let phase = (trot / self.spec.period).fract();
        let first_pair = k == 0 || k == 3;
        let s = if first_pair { phase } else { phase - 0.5 };
        (0.0..0.5).contains(&s).then_some(2.0 * s)
    }

    /// Joint torques at time `t` (s) of step `step` into `tau`, recomputed every control
    /// period and held in between; needs the joint placements of `data` at `q`.
    #[allow(clippy::too_many_arguments)]
    pub fn torques(
        &self,
        step: usize,
        dt: f64,
        q: &DVector<f64>,
        v: &DVector<f64>,
        model: &Model,
        data: &Data,
        state: &mut TrotState,
        tau: &mut DVector<f64>,
    ) -> Result<(), DynamicsError> {
        if step >= state.next_tick {
            state.next_tick = step + self.spec.steps_per_tick(dt);
            self.tick(step as f64 * dt, q, v, model, data, state)?;
        }
        tau.copy_from(&state.torques);
        Ok(())
    }

    fn tick(
        &self,
        t: f64,
        q: &DVector<f64>,
        v: &DVector<f64>,
        model: &Model,
        data: &Data,
        state: &mut TrotState,
    ) -> Result<(), DynamicsError> {
        let rotation = base_rotation(q);
        let base = Vector3::new(q[0], q[1], q[2]);
        let linear = rotation * Vector3::new(v[0], v[1], v[2]);
        let angular = rotation * Vector3::new(v[3], v[4], v[5]);
        let target = self.target_velocity(t);
        let target_v = Vector3::new(target[0], target[1], 0.0);
        let (roll, pitch, _) = rotation.euler_angles();
        let ground = self.felt_ground(t, data, state);
        let clearance = *state.clearance.get_or_insert(base.z - ground.height(&base));
        let height_target = ground.height(&base) + clearance;
        state.record.target_velocity = target;
        state.record.base_velocity = [linear.x, linear.y];
        state.record.distance = (q[0] - self.start[0]).hypot(q[1] - self.start[1]);
        state.record.fallen |= (q[2] - height_target).abs() > self.spec.fall_height
            || roll.abs() > self.spec.fall_tilt
            || pitch.abs() > self.spec.fall_tilt;
        state.torques.fill(0.0);
        let mut stance = Vec::new();
        for (k, leg) in self.legs.iter().enumerate() {
            let foot = data
                .joint_placement(leg.foot_joint)
                .act_point(&leg.foot_offset);
            dynamics::point_jacobian_world_into(
                model,
                data,
                leg.foot_joint,
                &foot,
                &mut state.jacobian,
            )?;
            let leg_jacobian =
                Matrix3::from_fn(|r, c| state.jacobian[(r, leg.velocity_indices[c])]);
            match self.swing_phase(k, t) {
                None => {
                    state.was_swinging[k] = false;
                    stance.push(StanceFoot {
                        leg: k,
                        normal: self.seen_normal(&foot),
                        foot,
                        jacobian: leg_jacobian,
                    });
                }
                Some(s) => {
                    if !state.was_swinging[k] {
                        state.liftoff[k] = foot;
                        state.was_swinging[k] = true;
                    }
                    let hip = data.joint_position(leg.hip_joint);
                    let swing_time = 0.5 * self.spec.period;
                    let landing = hip
                        + linear * (swing_time * (1.0 - s))
                        + target_v * (0.5 * swing_time)
                        + (linear - target_v) * self.spec.raibert_gain;
                    let p0 = state.liftoff[k];
                    let landing_height = self
                        .seen_height(&landing)
                        .map_or(ground.height(&landing), |z| z + state.sole);
                    let shift =
                        Vector3::new(landing.x - p0.x, landing.y - p0.y, landing_height - p0.z);
                    let blend = s * s * (3.0 - 2.0 * s);
                    let rate = 6.0 * s * (1.0 - s) / swing_time;
                    let pi = std::f64::consts::PI;
                    let lift = self.spec.step_height + self.obstacle(&p0, &shift, state.sole);
                    let desired = p0 + shift * blend + Vector3::z() * (lift * (pi * s).sin());
                    let desired_velocity =
                        shift * rate + Vector3::z() * (lift * pi * (pi * s).cos() / swing_time);
                    let base_part = base_foot_velocity(&state.jacobian, v);
                    let Some(inverse) = damped_inverse(&leg_jacobian) else {
                        continue;
                    };
                    let q_error = inverse * (desired - foot);
                    let qd_desired = inverse * (desired_velocity - base_part);
                    let [kp, kd] = self.spec.swing_gains;
                    for (c, &i) in leg.velocity_indices.iter().enumerate() {
                        state.torques[i] = kp * q_error[c] + kd * (qd_desired[c] - v[i]);
                    }
                }
            }
        }
        let wrench = self.desired_wrench(
            &rotation,
            &base,
            height_target,
            &linear,
            &angular,
            &target_v,
        );
        let problem = self.stance_problem(&stance, &base, wrench);
        let clock = Instant::now();
        let forces = state.qp.solve(&problem);
        state.record.qp_time = clock.elapsed().as_secs_f64();
        state.record.qp_solved = forces.is_some();
        state.problem = Some(problem);
        let forces = forces.unwrap_or_else(|| {
            let share = self.mass * GRAVITY / stance.len().max(1) as f64;
            vec![Vector3::new(0.0, 0.0, share); stance.len()]
        });
        for (foot, f) in stance.iter().zip(forces) {
            let torque = -(foot.jacobian.transpose() * f);
            for (c, &i) in self.legs[foot.leg].velocity_indices.iter().enumerate() {
                state.torques[i] = torque[c];
            }
        }
        Ok(())
    }

    /// The ground the feet have felt: every foot's position at its last touchdown (all
    /// four at the first tick), and the plane through them.
    fn felt_ground(&self, t: f64, data: &Data, state: &mut TrotState) -> GroundPlane {
        let first = state.clearance.is_none();
        for (k, leg) in self.legs.iter().enumerate() {
            let touchdown = state.was_swinging[k] && self.swing_phase(k, t).is_none();
            if first || touchdown {
                state.footholds[k] = data
                    .joint_placement(leg.foot_joint)
                    .act_point(&leg.foot_offset);
            }
        }
        if first {
            let seen: Vec<f64> = state
                .footholds
                .iter()
                .filter_map(|p| self.seen_height(p).map(|z| p.z - z))
                .collect();
            state.sole = seen.iter().sum::<f64>() / seen.len().max(1) as f64;
        }
        GroundPlane::fit(&state.footholds)
    }

    /// How far the seen ground rises above the straight path of a swing foot from `p0`
    /// by `shift` (sampled at tenths of the step; the foot frame `sole` above the
    /// surface), 0 when it does not or the controller is blind: added to the apex.
    fn obstacle(&self, p0: &Vector3<f64>, shift: &Vector3<f64>, sole: f64) -> f64 {
        (1..10)
            .filter_map(|i| {
                let s = f64::from(i) / 10.0;
                let blend = s * s * (3.0 - 2.0 * s);
                let point = p0 + shift * blend;
                self.seen_height(&point).map(|z| z + sole - point.z)
            })
            .fold(0.0, f64::max)
    }

    /// `w = [m (a + g e_z); I_w α]` from the base PD (module docs).
    fn desired_wrench(
        &self,
        rotation: &UnitQuaternion<f64>,
        base: &Vector3<f64>,
        height_target: f64,
        linear: &Vector3<f64>,
        angular: &Vector3<f64>,
        target: &Vector3<f64>,
    ) -> [f64; 6] {
        let [kz, dz] = self.spec.height_gains;
        let kv = self.spec.velocity_gain;
        let acceleration = Vector3::new(
            kv * (target.x - linear.x),
            kv * (target.y - linear.y),
            kz * (height_target - base.z) - dz * linear.z,
        );
        let force = self.mass * (acceleration + Vector3::z() * GRAVITY);
        let reference = UnitQuaternion::from_euler_angles(0.0, 0.0, self.yaw);
        let error = (reference * rotation.inverse()).scaled_axis();
        let [kr, dr] = self.spec.orientation_gains;
        let alpha = error * kr - angular * dr;
        let world_inertia = rotation.to_rotation_matrix().matrix()
            * self.inertia
            * rotation.to_rotation_matrix().matrix().transpose();
        let torque = world_inertia * alpha;
        [force.x, force.y, force.z, torque.x, torque.y, torque.z]
    }

    /// The stance QP of a tick (module docs) for the feet of `stance`.
    fn stance_problem(
        &self,
        stance: &[StanceFoot],
        base: &Vector3<f64>,
        wrench: [f64; 6],
    ) -> StanceProblem {
        StanceProblem {
            arms: stance.iter().map(|f| f.foot - base).collect(),
            normals: stance.iter().map(|f| f.normal).collect(),
            wrench,
            friction: self.spec.friction,
            normal_force: self.spec.normal_force,
        }
    }
}

/// A stance foot of a tick: its leg, position, the seen surface normal under it and its
/// leg Jacobian's 3 × 3 block.
struct StanceFoot {
    leg: usize,
    foot: Vector3<f64>,
    normal: Vector3<f64>,
    jacobian: Matrix3<f64>,
}

/// The plane `z = a + b x + c y` fitted to the footholds by least squares (their mean
/// height when they are aligned).
#[derive(Debug, Clone, Copy)]
struct GroundPlane {
    coefficients: Vector3<f64>,
}

impl GroundPlane {
    fn fit(points: &[Vector3<f64>; 4]) -> Self {
        let mut normal = Matrix3::zeros();
        let mut right = Vector3::zeros();
        for p in points {
            let row = Vector3::new(1.0, p.x, p.y);
            normal += row * row.transpose();
            right += row * p.z;
        }
        let mean = right.x / points.len() as f64;
        let coefficients = normal
            .try_inverse()
            .filter(|_| normal.determinant().abs() > 1e-9)
            .map_or(Vector3::new(mean, 0.0, 0.0), |inverse| inverse * right);
        Self { coefficients }
    }

    /// The plane's height under `p`.
    fn height(&self, p: &Vector3<f64>) -> f64 {
        self.coefficients.dot(&Vector3::new(1.0, p.x, p.y))
    }
}

/// The base orientation of a free-flyer configuration (quaternion `x, y, z, w` at 3..7).
fn base_rotation(q: &DVector<f64>) -> UnitQuaternion<f64> {
    UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(q[6], q[3], q[4], q[5]))
}

/// The foot velocity due to the base's motion: the base columns of its Jacobian times
/// the base velocity.
fn base_foot_velocity(jacobian: &Matrix3xX<f64>, v: &DVector<f64>) -> Vector3<f64> {
    jacobian.columns(0, 6) * v.rows(0, 6)
}

/// `(JᵀJ + εI)⁻¹Jᵀ`, a leg Jacobian's inverse damped near singularities.
fn damped_inverse(jacobian: &Matrix3<f64>) -> Option<Matrix3<f64>> {
    let normal = jacobian.transpose() * jacobian + Matrix3::identity() * 1e-6;
    normal.try_inverse().map(|m| m * jacobian.transpose())
}
