//! The types of a scenario file, as serde reads them (`deny_unknown_fields`: a typo is an
//! error), with their units and defaults.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::problem::StepParameters;
use crate::solvers::SolverSpec;

/// A scenario: everything needed to run one experiment with several solvers.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Name of the scenario (default: the file's stem).
    #[serde(default)]
    pub name: String,
    /// What it shows (free text).
    #[serde(default)]
    pub description: String,
    /// The bodies, the ground and the contact properties.
    pub world: WorldSpec,
    /// Where the bodies start.
    #[serde(default)]
    pub initial_state: InitialState,
    /// Joint torques.
    #[serde(default)]
    pub actuation: Actuation,
    /// Forces applied to named bodies.
    #[serde(default)]
    pub external_forces: Vec<ExternalForce>,
    /// Time stepping.
    pub simulation: SimulationSpec,
    /// The solvers to compare: `ncp-admm`, `ncp-admm:eps_rel=1e-8` or
    /// `{solver: ncp-admm, eps_rel: 1e-8}`.
    pub solvers: Vec<SolverEntry>,
    /// An analytical solution to compare with, when there is one.
    #[serde(default)]
    pub analytical: Option<Analytical>,
    /// The file the scenario was read from (set by the loader).
    #[serde(skip)]
    pub source: PathBuf,
    /// The file's text, to locate fields in later messages.
    #[serde(skip)]
    pub text: String,
    /// The `path=value` overrides applied to the file's text (set by the loader).
    #[serde(skip)]
    pub overrides: Vec<String>,
}

/// The world: a robot from the manifest and/or built-in free-flying bodies.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorldSpec {
    /// A robot by name (`solo12`, `talos`, `allegro`, or one of the user's manifest named
    /// by `$CONTACTBENCH_ROBOTS`), or the path of a URDF file (any name ending in `.urdf`;
    /// relative to the scenario file's directory).
    #[serde(default)]
    pub robot: Option<String>,
    /// For a URDF `robot`: directories where `package://PKG/rest` mesh URIs are looked up
    /// as `DIR/PKG/rest` (relative to the scenario file's directory), before the URDF's
    /// own ancestor directories.
    #[serde(default)]
    pub robot_packages: Vec<PathBuf>,
    /// For a URDF `robot`: its root joint, `fixed` (default, as `contactbench model`) or
    /// `free_flyer`.
    #[serde(default)]
    pub robot_root: RobotRoot,
    /// For a URDF `robot`: an SRDF file with its reference configurations (relative to the
    /// scenario file's directory).
    #[serde(default)]
    pub robot_srdf: Option<PathBuf>,
    /// Built-in free-flying bodies.
    #[serde(default)]
    pub bodies: Vec<BodySpec>,
    /// Bodies generated from a few parameters (a grid of columns, a pyramid, spheres
    /// poured into a box, a cluttered table), appended to `bodies` (and their walls or
    /// table to `fixed`) when the scenario is read ([`super::generate`]).
    #[serde(default)]
    pub generate: Option<Generated>,
    /// Shapes fixed in the world (walls, a table top): the built-in bodies touch them as
    /// they touch the ground.
    #[serde(default)]
    pub fixed: Vec<FixedSpec>,
    /// Contact spheres attached to frames of the robot.
    #[serde(default)]
    pub contact_spheres: Vec<ContactSphere>,
    /// What of the robot touches the ground: its `contact_spheres`, the collision geometry
    /// of its links, or both. Default: the spheres when the scenario lists some, the
    /// geometry otherwise ([`WorldSpec::robot_collision_mode`]).
    #[serde(default)]
    pub robot_collision: Option<RobotCollision>,
    /// Collide the robot's links with each other: every pair of link geometries on
    /// distinct bodies that are not parent and child, less the pairs the SRDF's
    /// `<disable_collisions>` names. Default `false`: the pairs grow with the square of the
    /// links (Talos: hundreds of mesh pairs per step) and the paper's scenarios have none.
    #[serde(default)]
    pub self_collision: bool,
    /// Pose of a fixed-base robot's root in the world. Default identity.
    #[serde(default)]
    pub robot_pose: Option<Pose>,
    /// A ground plane `z = 0`. Default `true`.
    #[serde(default = "default_true")]
    pub ground: bool,
    /// A terrain replacing the ground plane (`ground` must then stay `true`). Default none.
    #[serde(default)]
    pub terrain: Option<Terrain>,
    /// Friction coefficient `μ` of every contact. Default `0.5`.
    #[serde(default = "default_friction")]
    pub friction: f64,
    /// Restitution coefficient `e ∈ [0, 1]`. Default `0`.
    #[serde(default)]
    pub restitution: f64,
    /// Compliance `r ≥ 0` (s/kg), `R = r I`. Default `0`.
    #[serde(default)]
    pub compliance: f64,
}

fn default_true() -> bool {
    true
}

fn default_friction() -> f64 {
    0.5
}

/// A terrain: for now a height field.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Terrain {
    /// A grid of heights (`collision::heightfield`).
    pub heightfield: HeightFieldSpec,
}

/// Where a height field's heights come from: exactly one of `file`, `formula`,
/// `roughness`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeightFieldSpec {
    /// Grid spacing (m). Default `0.02`.
    #[serde(default = "default_spacing")]
    pub spacing: f64,
    /// Extent along x and y of a formula or roughness grid, centred on the origin (m).
    /// Default `[10, 10]`.
    #[serde(default = "default_terrain_size")]
    pub size: [f64; 2],
    /// Position of a file's first sample (m). Default: the grid centred on the origin.
    #[serde(default)]
    pub origin: Option<[f64; 2]>,
    /// Heights from a CSV or `.npy` file (relative to the scenario file's directory).
    #[serde(default)]
    pub file: Option<PathBuf>,
    /// Heights from a named formula.
    #[serde(default)]
    pub formula: Option<TerrainFormula>,
    /// Heights from a seeded random roughness.
    #[serde(default)]
    pub roughness: Option<Roughness>,
}

/// A named terrain formula.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TerrainFormula {
    /// ContactBench's bumpy ground `z = sin(30x)/5 + cos(30y²)/20 + sin(50xy)/10`.
    Contactbench,
}

/// Seeded random roughness: `|z| ≤ amplitude`, bumps about `wavelength` wide.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Roughness {
    /// Largest height (m).
    pub amplitude: f64,
    /// Pitch of the random lattice (m).
    pub wavelength: f64,
    /// Random seed. Default `0`.
    #[serde(default)]
    pub seed: u64,
}

fn default_spacing() -> f64 {
    0.02
}

fn default_terrain_size() -> [f64; 2] {
    [10.0, 10.0]
}

/// A built-in free-flying body.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BodySpec {
    /// Its name (for initial states and external forces).
    pub name: String,
    /// Its shape.
    pub shape: ShapeSpec,
    /// Mass (kg), uniform density.
    pub mass: f64,
    /// For boxes: radius (m) of the 8 corner spheres that carry the contacts (their
    /// centres sit at the corners). Default `0` (corner points).
    #[serde(default)]
    pub corner_radius: f64,
}

/// A shape fixed in the world.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixedSpec {
    /// Its name.
    pub name: String,
    /// Its shape.
    pub shape: ShapeSpec,
    /// Position of its centre (m, world).
    pub position: [f64; 3],
    /// Orientation quaternion `[qx qy qz qw]`. Default identity.
    #[serde(default = "identity_quaternion")]
    pub orientation: [f64; 4],
}

/// Shape of a built-in body.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum ShapeSpec {
    /// A box of the given full size along x, y, z (m).
    Box([f64; 3]),
    /// A sphere of the given radius (m).
    Sphere(f64),
}

/// Bodies generated from a few parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Generated {
    /// A grid of `nx × ny` columns of `height` cubes each.
    Columns(Columns),
    /// A square pyramid of cubes: `base × base` on the ground, one fewer per side on each
    /// layer above, each cube centred over the gap between four below.
    Pyramid(Pyramid),
    /// `count` balls dropped from a seeded random lattice into an open box of four fixed
    /// walls on the ground.
    SpheresInBox(SpheresInBox),
    /// `count` boxes and balls of assorted sizes resting on a fixed table top, placed at
    /// seeded random positions without overlap.
    Clutter(Clutter),
}

/// A grid of columns of cubes (see [`Generated::Columns`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Columns {
    /// Columns along x.
    pub nx: usize,
    /// Columns along y.
    pub ny: usize,
    /// Cubes in each column.
    pub height: usize,
    /// Side of each cube (m). Default `0.1`.
    #[serde(default = "default_size")]
    pub size: f64,
    /// Horizontal gap between neighbouring columns (m). Default `0.02`.
    #[serde(default = "default_gap")]
    pub gap: f64,
    /// Mass of each cube (kg). Default `1`.
    #[serde(default = "default_mass")]
    pub mass: f64,
    /// Radius of each cube's corner spheres (m). Default `size / 20`.
    #[serde(default)]
    pub corner_radius: Option<f64>,
}

/// A pyramid of cubes (see [`Generated::Pyramid`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pyramid {
    /// Cubes along each side of the bottom layer (also the number of layers).
    pub base: usize,
    /// Side of each cube (m). Default `0.1`.
    #[serde(default = "default_size")]
    pub size: f64,
    /// Horizontal gap between neighbouring cubes of a layer (m). Default `0.02`; less
    /// than `size − 2 corner_radius`, so that every corner rests on a face below.
    #[serde(default = "default_gap")]
    pub gap: f64,
    /// Mass of each cube (kg). Default `1`.
    #[serde(default = "default_mass")]
    pub mass: f64,
    /// Radius of each cube's corner spheres (m). Default `size / 20`.
    #[serde(default)]
    pub corner_radius: Option<f64>,
}

/// Balls poured into a box (see [`Generated::SpheresInBox`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpheresInBox {
    /// Number of balls.
    pub count: usize,
    /// Radius of each ball (m). Default `0.05`.
    #[serde(default = "default_ball_radius")]
    pub radius: f64,
    /// Mass of each ball (kg). Default `1`.
    #[serde(default = "default_mass")]
    pub mass: f64,
    /// Inner side of the square box (m). Default `0.5`; at least `2.5 radius`, the
    /// lattice's pitch.
    #[serde(default = "default_box_width")]
    pub width: f64,
    /// Seed of the lattice's jitter. Default `0`.
    #[serde(default)]
    pub seed: u64,
}

/// A cluttered table (see [`Generated::Clutter`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Clutter {
    /// Number of objects.
    pub count: usize,
    /// Largest side of an object (m); each side is drawn in `[size/2, size]`, a ball's
    /// diameter too. Default `0.08`.
    #[serde(default = "default_clutter_size")]
    pub size: f64,
    /// Mass of each object (kg). Default `0.2`.
    #[serde(default = "default_clutter_mass")]
    pub mass: f64,
    /// Table top `[x, y]` (m). Default `[1.0, 0.6]`.
    #[serde(default = "default_table")]
    pub table: [f64; 2],
    /// Height of the table top's upper face (m). Default `0.4`.
    #[serde(default = "default_table_height")]
    pub table_height: f64,
    /// Seed of the objects' kinds, sizes and places. Default `0`.
    #[serde(default)]
    pub seed: u64,
}

fn default_ball_radius() -> f64 {
    0.05
}

fn default_box_width() -> f64 {
    0.5
}

fn default_clutter_size() -> f64 {
    0.08
}

fn default_clutter_mass() -> f64 {
    0.2
}

fn default_table() -> [f64; 2] {
    [1.0, 0.6]
}

fn default_table_height() -> f64 {
    0.4
}

fn default_size() -> f64 {
    0.1
}

fn default_gap() -> f64 {
    0.02
}

fn default_mass() -> f64 {
    1.0
}

/// A rigid placement.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pose {
    /// Position (m, world).
    pub position: [f64; 3],
    /// Orientation quaternion `[qx qy qz qw]`. Default identity.
    #[serde(default = "identity_quaternion")]
    pub orientation: [f64; 4],
}

/// What of a robot touches the ground (free bodies always touch its link geometry).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RobotCollision {
    /// The scenario's `contact_spheres` only (the paper's point contacts).
    Spheres,
    /// The collision geometry of the robot's links (URDF `<collision>`).
    Geometry,
    /// Both.
    Both,
}

impl RobotCollision {
    /// True when the contact spheres touch the ground.
    pub fn uses_spheres(self) -> bool {
        matches!(self, RobotCollision::Spheres | RobotCollision::Both)
    }

    /// True when the links' collision geometry touches the ground.
    pub fn uses_geometry(self) -> bool {
        matches!(self, RobotCollision::Geometry | RobotCollision::Both)
    }
}

impl WorldSpec {
    /// What of the robot touches the ground: the scenario's choice, or by default the
    /// contact spheres when it lists some (they are the model the scenario was written
    /// for, and the paper's) and the links' geometry when it lists none (a robot with
    /// neither would fall through the ground).
    pub fn robot_collision_mode(&self) -> RobotCollision {
        match self.robot_collision {
            Some(choice) => choice,
            None if self.contact_spheres.is_empty() => RobotCollision::Geometry,
            None => RobotCollision::Spheres,
        }
    }
}

/// The root joint of a robot given by its URDF file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RobotRoot {
    /// Fixed to the world (placed by `robot_pose`).
    #[default]
    Fixed,
    /// A free-flying base.
    FreeFlyer,
}

/// Where a scenario's robot comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum RobotSource {
    /// A robot of the manifest, by name.
    Manifest(String),
    /// A user's URDF file, paths resolved against the scenario file's directory.
    Urdf(UrdfRobot),
}

/// A user's robot: its URDF file, package directories, root joint and SRDF.
#[derive(Debug, Clone, PartialEq)]
pub struct UrdfRobot {
    /// The URDF file.
    pub urdf: PathBuf,
    /// Directories for `package://` URIs.
    pub package_dirs: Vec<PathBuf>,
    /// Fixed or free-flying root.
    pub root: RobotRoot,
    /// Reference configurations, if given.
    pub srdf: Option<PathBuf>,
}

/// A contact sphere on a robot frame.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContactSphere {
    /// The frame (link or SRDF/URDF frame name).
    pub frame: String,
    /// Radius (m).
    pub radius: f64,
    /// Centre in the frame (m). Default the frame's origin.
    #[serde(default)]
    pub offset: [f64; 3],
}

/// The initial state.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InitialState {
    /// A reference configuration of the robot (SRDF group state, `standing`). Default:
    /// the model's neutral configuration.
    #[serde(default)]
    pub reference: Option<String>,
    /// Offset (m, world) added to the robot's base position.
    #[serde(default)]
    pub base_offset: [f64; 3],
    /// Robot base velocity `[v ω]` (m/s, rad/s, base frame).
    #[serde(default)]
    pub base_velocity: [f64; 6],
    /// Offsets (rad or m) added to named joints.
    #[serde(default)]
    pub joint_offsets: BTreeMap<String, f64>,
    /// Built-in bodies' states, by name.
    #[serde(default)]
    pub bodies: BTreeMap<String, BodyState>,
    /// Lower (or raise) the robot's base so that its lowest contact sphere touches the
    /// ground. Default `false`.
    #[serde(default)]
    pub on_ground: bool,
}

/// Pose and velocity of a built-in body.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BodyState {
    /// Position of the centre (m, world).
    pub position: [f64; 3],
    /// Orientation quaternion `[qx qy qz qw]`. Default identity.
    #[serde(default = "identity_quaternion")]
    pub orientation: [f64; 4],
    /// Twist `[v ω]` (m/s, rad/s) in the body frame (Pinocchio's free-flyer convention).
    #[serde(default)]
    pub velocity: [f64; 6],
}

fn identity_quaternion() -> [f64; 4] {
    [0.0, 0.0, 0.0, 1.0]
}

/// Joint torques.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Actuation {
    /// No torque.
    #[default]
    None,
    /// PD on the actuated joints towards the reference configuration
    /// (`initial_state.reference`, or the neutral one; joint offsets are not part of it,
    /// `target_offsets` are, see [`super::controllers`]):
    /// `τ = K_p (q_ref ⊖ q) − K_d v`, or `τ_j = m_j (K_p (q_ref ⊖ q)_j − K_d v_j)` with
    /// `m_j = 1 / (M⁻¹)_jj` the joint's apparent inertia when `inertia_scaled`, so that one
    /// pair of gains (1/s², 1/s) suits joints of very different inertias (a humanoid's
    /// hips and grippers) at a given `Δt`.
    Pd {
        /// Proportional gain (N·m/rad, or 1/s² when inertia-scaled).
        kp: f64,
        /// Derivative gain (N·m·s/rad, or 1/s when inertia-scaled).
        kd: f64,
        /// Scale each joint's gains by its apparent inertia `1 / (M⁻¹)_jj`. Default `false`.
        #[serde(default)]
        inertia_scaled: bool,
        /// Offsets (rad or m) added to named joints of the target, so that the PD drives
        /// them away from where they start (a hand closing). Default none.
        #[serde(default)]
        target_offsets: BTreeMap<String, f64>,
        /// Torques added to the PD's so that the target holds still against gravity
        /// (see [`super::super::controllers::GravityFeedforward`]). Default `none`.
        #[serde(default)]
        gravity_compensation: GravityCompensation,
    },
    /// A diagonal trot with a target base velocity ([`crate::simulation::locomotion`]).
    Trot(Box<crate::simulation::locomotion::TrotSpec>),
}

/// The gravity feed-forward of a PD.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GravityCompensation {
    /// The PD alone.
    #[default]
    None,
    /// `τ += g(q)` on the actuated joints: each joint holds what hangs from it (exact for
    /// a fixed base).
    Joints,
    /// `τ += g(q) − J_cᵀ λ` with `λ` the least-norm forces at the robot's contact spheres
    /// that carry its weight (a free-flying robot standing on them).
    Contacts,
}

/// A force (N, world axes) applied at the origin of a named body's frame, active for
/// `from ≤ t < until`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExternalForce {
    /// A built-in body's name or a robot link (`base_link`).
    pub body: String,
    /// Start time (s). Default `0`.
    #[serde(default)]
    pub from: f64,
    /// End time (s). Default: never.
    #[serde(default)]
    pub until: Option<f64>,
    /// Its time profile.
    pub profile: ForceProfile,
}

/// Time profile of an external force; `t` counts from the force's `from`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum ForceProfile {
    /// `f(t) = force`.
    Constant {
        /// Force (N).
        force: [f64; 3],
    },
    /// `f(t) = initial + slope t`.
    Ramp {
        /// Force at `from` (N).
        #[serde(default)]
        initial: [f64; 3],
        /// Growth rate (N/s).
        slope: [f64; 3],
    },
    /// `f(t) = offset + amplitude sin(2π frequency t + phase)`.
    Sinusoid {
        /// Mean force (N).
        #[serde(default)]
        offset: [f64; 3],
        /// Amplitude (N).
        amplitude: [f64; 3],
        /// Frequency (Hz).
        frequency: f64,
        /// Phase (rad).
        #[serde(default)]
        phase: f64,
    },
}

impl ExternalForce {
    /// The force (N, world axes) at time `t` (s).
    pub fn at(&self, t: f64) -> [f64; 3] {
        let active = t >= self.from && self.until.is_none_or(|end| t < end);
        if !active {
            return [0.0; 3];
        }
        let s = t - self.from;
        let mut f = [0.0; 3];
        for (k, fk) in f.iter_mut().enumerate() {
            *fk = match &self.profile {
                ForceProfile::Constant { force } => force[k],
                ForceProfile::Ramp { initial, slope } => initial[k] + slope[k] * s,
                ForceProfile::Sinusoid {
                    offset,
                    amplitude,
                    frequency,
                    phase,
                } => {
                    offset[k]
                        + amplitude[k] * (2.0 * std::f64::consts::PI * frequency * s + phase).sin()
                }
            };
        }
        f
    }
}

/// Time stepping.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimulationSpec {
    /// Time step (s).
    pub dt: f64,
    /// Simulated time (s).
    pub duration: f64,
    /// Baumgarte gain `K_b ∈ [0, 1]`. Default `0`.
    #[serde(default)]
    pub baumgarte: f64,
    /// Security margin (m). Default `1e-3`.
    #[serde(default = "default_margin")]
    pub margin: f64,
    /// Smallest approach speed (m/s) that triggers restitution. Default `1e-2`.
    #[serde(default = "default_restitution_threshold")]
    pub restitution_threshold: f64,
    /// Warm-start each solve from the previous step's forces. Default `true`.
    #[serde(default = "default_true")]
    pub warm_start: bool,
    /// Contact metrics of each recorded step: `all` (default), `without_internal_forces`
    /// or `none`; a metric not computed is an empty cell, never 0.
    #[serde(default)]
    pub step_metrics: StepMetrics,
}

fn default_margin() -> f64 {
    StepParameters::default().margin
}

fn default_restitution_threshold() -> f64 {
    StepParameters::default().restitution_threshold
}

/// Which contact metrics a recorded step carries
/// ([`Simulator::step`](super::Simulator::step); steps taken with
/// [`Simulator::advance`](super::Simulator::advance) compute none). A metric not computed is absent from the record
/// (`None`, an empty CSV cell), never 0. Scenario files: `simulation.step_metrics`,
/// `all` (default), `without_internal_forces` or `none`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepMetrics {
    /// Every metric of design.md §5, internal forces and their split included (the
    /// problem carries `J`).
    #[default]
    All,
    /// Every metric but the internal forces (`internal_forces*` are `None`: no null space
    /// of `Jᵀ`, no SOCP).
    WithoutInternalForces,
    /// No contact metric: the record's `metrics` is `None`.
    None,
}

/// A solver of the scenario, as text or as a map.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SolverEntry {
    /// `ncp-admm` or `ncp-admm:eps_rel=1e-8,max_iter=200`.
    Text(String),
    /// `{solver: ncp-admm, eps_rel: 1e-8}`.
    Map(Map<String, Value>),
}

impl SolverEntry {
    /// The solver specification.
    pub fn spec(&self) -> Result<SolverSpec, crate::solvers::SolverError> {
        match self {
            SolverEntry::Text(text) => text.parse(),
            SolverEntry::Map(map) => SolverSpec::from_map(map.clone()),
        }
    }
}

/// An analytical solution the report draws beside the simulated curves.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Analytical {
    /// A body sliding on flat ground from speed `v0`: `E_k = ½ m (v0 − μ g t)²`.
    Sliding {
        /// Mass (kg).
        mass: f64,
        /// Initial speed (m/s).
        v0: f64,
        /// Friction coefficient.
        mu: f64,
    },
    /// A ball dropped from rest with restitution `e`: bounce heights `e^{2k} h0`.
    Drop {
        /// Initial height of the centre above its resting height (m).
        height: f64,
        /// Restitution coefficient.
        restitution: f64,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ramp_force_grows_linearly_after_start() {
        let f = ExternalForce {
            body: "cube".into(),
            from: 1.0,
            until: None,
            profile: ForceProfile::Ramp {
                initial: [0.0; 3],
                slope: [2.0, 0.0, 0.0],
            },
        };
        assert_eq!(f.at(0.5), [0.0; 3]);
        assert_eq!(f.at(2.0), [2.0, 0.0, 0.0]);
    }
}
