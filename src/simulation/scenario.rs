//! Scenario files (YAML): the world, the initial state, actuation, external forces, the
//! time stepping and the solvers to compare (one run per solver).
//!
//! Parsing uses serde-saphyr (a YAML parser that does not recurse without bound: nesting
//! deeper than its budget is an error, not a stack overflow) with `deny_unknown_fields`,
//! so a typo is an error, and serde_path_to_error for the field: every error names the
//! file, the line (and the column for syntax and type errors) and the field:
//! `scenarios/cube_slide.yaml:12:5: world.bodies[0].mas: unknown field `mas``. With
//! `--set` overrides the document is read as a tree, changed, then deserialized, and an
//! error names the field and the line where it is written. Semantic checks (negative
//! `dt`, unknown solver, absurd sizes, ...) run after parsing and locate the field in the
//! text.
//!
//! ```yaml
//! name: cube_slide
//! world:
//!   bodies:
//!     - {name: cube, shape: {box: [0.2, 0.2, 0.2]}, mass: 1.0, corner_radius: 0.0}
//!   friction: 0.4
//! initial_state:
//!   bodies:
//!     cube: {position: [0, 0, 0.1], velocity: [1, 0, 0, 0, 0, 0]}
//! simulation: {dt: 1e-3, duration: 0.5}
//! solvers:
//!   - {solver: ncp-admm, eps_rel: 1e-8}
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use thiserror::Error;

use crate::model::text::{parse_yaml, YamlFailure};
use crate::problem::StepParameters;
use crate::solvers::SolverSpec;

/// Largest number of steps a scenario may ask for (`duration / dt`), the loop's cap.
pub const MAX_STEPS: f64 = 1e7;

/// Largest speed (m/s or rad/s, any coordinate of `v`) a simulation may reach before it is
/// called diverged: 10 km/s is far beyond any robot or object of the benchmark.
pub const DIVERGENCE_SPEED: f64 = 1e4;
/// Largest coordinate of `q` (m) before a simulation is called diverged (1000 km).
pub const DIVERGENCE_DISTANCE: f64 = 1e6;

/// Range of a built-in body's mass (kg): outside it the dynamics is meaningless in f64.
pub const MASS_RANGE: (f64, f64) = (1e-6, 1e9);
/// Range of a length (box size, sphere or corner radius, m).
pub const LENGTH_RANGE: (f64, f64) = (1e-6, 1e3);
/// Largest scenario file read (bytes).
pub const MAX_FILE_BYTES: u64 = 1 << 22;

/// Why a scenario was refused. Every variant names the file and the location.
#[derive(Debug, Error)]
pub enum ScenarioError {
    /// The file could not be read (or is not UTF-8 text, with the byte position).
    #[error("{file}: {error}")]
    Io {
        /// The file.
        file: PathBuf,
        /// The error.
        error: crate::model::TextError,
    },
    /// YAML syntax error, unknown or missing field, wrong type.
    #[error("{file}:{line}:{column}: {field}: {message}")]
    Parse {
        /// The file.
        file: PathBuf,
        /// Line (1-based).
        line: usize,
        /// Column (1-based).
        column: usize,
        /// The field, as a path (`world.bodies[0].mass`; `.` for the document).
        field: String,
        /// The parser's message.
        message: String,
    },
    /// A value that parses but makes no sense (negative `dt`, unknown solver or robot...).
    #[error("{file}:{line}: {field}: {message}")]
    Invalid {
        /// The file.
        file: PathBuf,
        /// Line (1-based) where the field is written (the closest enclosing one found).
        line: usize,
        /// The field, as a path (`simulation.dt`, `solvers[1]`).
        field: String,
        /// What is wrong.
        message: String,
    },
    /// The scenario's robot could not be loaded (unknown name, unreadable or invalid URDF,
    /// SRDF or mesh); the model's error is the source.
    #[error(transparent)]
    Robot(Box<RobotError>),
    /// A `--set path=value` override or a `--solver` text does not apply.
    #[error("{assignment}: {message}")]
    Override {
        /// The assignment as given.
        assignment: String,
        /// What is wrong.
        message: String,
    },
}

/// A scenario's robot that could not be loaded: where the scenario names it, and the
/// model's error as the source (`{:#}` prints both).
#[derive(Debug, Error)]
#[error("{file}:{line}: {field}: cannot load the robot '{robot}'")]
pub struct RobotError {
    /// The scenario file.
    pub file: PathBuf,
    /// Line (1-based) where the field is written.
    pub line: usize,
    /// The field (`world.robot`, or `world.robot_srdf` for an SRDF error).
    pub field: String,
    /// The robot as the scenario names it (a name or a URDF path).
    pub robot: String,
    /// Why it could not be loaded.
    #[source]
    pub source: crate::model::ModelError,
}

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
    /// Contact spheres attached to frames of the robot.
    #[serde(default)]
    pub contact_spheres: Vec<ContactSphere>,
    /// Pose of a fixed-base robot's root in the world. Default identity.
    #[serde(default)]
    pub robot_pose: Option<Pose>,
    /// A ground plane `z = 0`. Default `true`.
    #[serde(default = "default_true")]
    pub ground: bool,
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

/// Shape of a built-in body.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum ShapeSpec {
    /// A box of the given full size along x, y, z (m).
    Box([f64; 3]),
    /// A sphere of the given radius (m).
    Sphere(f64),
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
    },
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

/// The map form of a solver text `id:key=value,…` (values read as JSON, else strings),
/// as [`SolverSpec`]'s text form.
fn spec_map(text: &str) -> Result<Map<String, Value>, crate::solvers::SolverError> {
    let (id, rest) = text.split_once(':').unwrap_or((text, ""));
    let mut map = Map::new();
    map.insert("solver".into(), Value::String(id.trim().to_string()));
    for item in rest.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let (key, value) =
            item.split_once('=')
                .ok_or_else(|| crate::solvers::SolverError::InvalidSpec {
                    spec: text.to_string(),
                    message: format!("'{item}' is not key=value"),
                })?;
        let value = serde_json::from_str::<Value>(value.trim())
            .unwrap_or_else(|_| Value::String(value.trim().to_string()));
        map.insert(key.trim().to_string(), value);
    }
    Ok(map)
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

impl Scenario {
    /// Reads and validates a scenario file; `overrides` are `path=value` assignments
    /// (`world.bodies.1.mass=1000`, `simulation.dt=1e-2`) applied before validation.
    pub fn load(path: &Path, overrides: &[String]) -> Result<Self, ScenarioError> {
        let text =
            crate::model::read_text(path, MAX_FILE_BYTES).map_err(|error| ScenarioError::Io {
                file: path.to_path_buf(),
                error,
            })?;
        Self::from_yaml(&text, path, overrides)
    }

    /// Parses and validates a scenario from text; `file` is used in messages and for the
    /// default name.
    pub fn from_yaml(text: &str, file: &Path, overrides: &[String]) -> Result<Self, ScenarioError> {
        let mut scenario: Scenario = if overrides.is_empty() {
            parse_typed(text, file)?
        } else {
            let mut value = parse_tree(text, file)?;
            for assignment in overrides {
                apply_override(&mut value, assignment)?;
            }
            from_tree(value, text, file, overrides)?
        };
        if scenario.name.is_empty() {
            scenario.name = super::output::sanitize(
                &file
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "scenario".into()),
            );
        }
        scenario.source = file.to_path_buf();
        scenario.text = text.to_string();
        scenario.validate(text, file)?;
        Ok(scenario)
    }

    /// The step parameters of this scenario.
    pub fn step_parameters(&self) -> StepParameters {
        StepParameters {
            dt: self.simulation.dt,
            baumgarte: self.simulation.baumgarte,
            restitution: self.world.restitution,
            compliance: self.world.compliance,
            margin: self.simulation.margin,
            restitution_threshold: self.simulation.restitution_threshold,
            warm_start: self.simulation.warm_start,
        }
    }

    /// Number of steps, `round(duration / dt)`.
    pub fn num_steps(&self) -> usize {
        (self.simulation.duration / self.simulation.dt).round() as usize
    }

    /// The solver of a `--solver` text (`ncp-pgs`, `ncp-pgs:eps_rel=1e-6`), keeping this
    /// scenario's settings unless the text overrides them: the settings of the scenario's
    /// entry for the same solver id, else the settings shared by all its entries
    /// (`eps_rel`, `max_iter`, … when every entry has the same value); then the text's
    /// own `key=value` pairs. A text that sets `stop` drops the inherited tolerance of the
    /// other criterion (it would be refused as unused).
    pub fn solver_override(&self, text: &str) -> Result<SolverSpec, crate::solvers::SolverError> {
        let explicit = spec_map(text)?;
        let id = explicit.get("solver").cloned().unwrap_or(Value::Null);
        let entries: Vec<Map<String, Value>> = self
            .solvers
            .iter()
            .filter_map(|e| match e {
                SolverEntry::Text(t) => spec_map(t).ok(),
                SolverEntry::Map(m) => Some(m.clone()),
            })
            .collect();
        let mut map = match entries.iter().find(|m| m.get("solver") == Some(&id)) {
            Some(entry) => entry.clone(),
            None => {
                let mut shared = Map::new();
                for field in crate::solvers::SolverSettings::FIELDS {
                    let values: Vec<Option<&Value>> =
                        entries.iter().map(|m| m.get(field)).collect();
                    if let Some(Some(first)) = values.first() {
                        if values.iter().all(|v| *v == Some(*first)) {
                            shared.insert(field.to_string(), (*first).clone());
                        }
                    }
                }
                shared
            }
        };
        if let Some(stop) = explicit.get("stop").and_then(Value::as_str) {
            if let Ok(stop) = stop.parse::<crate::solvers::Criterion>() {
                let other = match stop {
                    crate::solvers::Criterion::Relative => "eps_abs",
                    crate::solvers::Criterion::Absolute => "eps_rel",
                };
                map.remove(other);
            }
        }
        map.extend(explicit);
        SolverSpec::from_map(map)
    }

    /// Where the robot comes from: a manifest name, or a URDF path (a name ending in
    /// `.urdf`) with its package directories and SRDF, resolved against the scenario
    /// file's directory. `None` without a robot.
    pub fn robot_source(&self) -> Option<RobotSource> {
        let name = self.world.robot.as_ref()?;
        let is_urdf = Path::new(name)
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("urdf"));
        if !is_urdf {
            return Some(RobotSource::Manifest(name.clone()));
        }
        let base = self.source.parent().unwrap_or(Path::new(""));
        Some(RobotSource::Urdf(UrdfRobot {
            urdf: base.join(name),
            package_dirs: self
                .world
                .robot_packages
                .iter()
                .map(|d| base.join(d))
                .collect(),
            root: self.world.robot_root,
            srdf: self.world.robot_srdf.as_ref().map(|f| base.join(f)),
        }))
    }

    /// The solver specifications, in file order.
    pub fn solver_specs(&self) -> Vec<SolverSpec> {
        self.solvers.iter().filter_map(|s| s.spec().ok()).collect()
    }

    /// The error of a robot that could not be loaded, keeping the model's error as its
    /// source and naming the field at fault (`world.robot_srdf` for an SRDF error).
    pub fn robot_error(&self, error: crate::model::ModelError) -> ScenarioError {
        let field = match error {
            crate::model::ModelError::Srdf { .. } if self.world.robot_srdf.is_some() => {
                "world.robot_srdf"
            }
            _ => "world.robot",
        };
        ScenarioError::Robot(Box::new(RobotError {
            file: self.source.clone(),
            line: locate(&self.text, field),
            field: field.to_string(),
            robot: self.world.robot.clone().unwrap_or_default(),
            source: error,
        }))
    }

    /// An error about `field` (a path such as `world.bodies[0].mass`), located in the
    /// scenario's text.
    pub fn invalid(&self, field: &str, message: impl Into<String>) -> ScenarioError {
        ScenarioError::Invalid {
            file: self.source.clone(),
            line: locate(&self.text, field),
            field: field.to_string(),
            message: message.into(),
        }
    }

    fn validate(&self, text: &str, file: &Path) -> Result<(), ScenarioError> {
        let invalid = |field: String, message: String| ScenarioError::Invalid {
            file: file.to_path_buf(),
            line: locate(text, &field),
            field,
            message,
        };
        validate_name(&self.name).map_err(|m| invalid("name".into(), m))?;
        let params = self.step_parameters();
        if let Err(e) = params.validate() {
            let section = match e.field {
                "restitution" | "compliance" => "world",
                _ => "simulation",
            };
            return Err(invalid(format!("{section}.{}", e.field), e.to_string()));
        }
        let duration = self.simulation.duration;
        if !(duration.is_finite() && duration > 0.0) {
            return Err(invalid(
                "simulation.duration".into(),
                format!("{duration}: must be a positive time (s)"),
            ));
        }
        if duration / self.simulation.dt > MAX_STEPS {
            return Err(invalid(
                "simulation.duration".into(),
                format!("duration / dt exceeds {MAX_STEPS:e} steps"),
            ));
        }
        if !(self.world.friction.is_finite() && self.world.friction >= 0.0) {
            return Err(invalid(
                "world.friction".into(),
                format!("{}: must be finite and >= 0", self.world.friction),
            ));
        }
        if let Some(RobotSource::Manifest(name)) = self.robot_source() {
            let urdf_only = [
                (
                    "world.robot_packages",
                    !self.world.robot_packages.is_empty(),
                ),
                ("world.robot_srdf", self.world.robot_srdf.is_some()),
                (
                    "world.robot_root",
                    self.world.robot_root != RobotRoot::Fixed,
                ),
            ];
            if let Some((field, _)) = urdf_only.iter().find(|(_, given)| *given) {
                return Err(invalid(
                    (*field).into(),
                    format!(
                        "applies to a URDF path only; the robot '{name}' has its packages, \
                         SRDF and root in its manifest"
                    ),
                ));
            }
        }
        if self.world.robot.is_none() && self.world.bodies.is_empty() {
            return Err(invalid(
                "world".into(),
                "needs a robot or at least one body".into(),
            ));
        }
        self.validate_bodies(&invalid)?;
        if self.solvers.is_empty() {
            return Err(invalid(
                "solvers".into(),
                "at least one solver is needed".into(),
            ));
        }
        for (i, entry) in self.solvers.iter().enumerate() {
            entry
                .spec()
                .and_then(|spec| spec.build().map(|_| ()))
                .map_err(|e| invalid(format!("solvers[{i}]"), e.to_string()))?;
        }
        if let Actuation::Pd { kp, kd, .. } = self.actuation {
            if !(kp >= 0.0 && kd >= 0.0 && kp.is_finite() && kd.is_finite()) {
                return Err(invalid(
                    "actuation".into(),
                    "PD gains must be finite and >= 0".into(),
                ));
            }
        }
        Ok(())
    }

    fn validate_bodies(
        &self,
        invalid: &dyn Fn(String, String) -> ScenarioError,
    ) -> Result<(), ScenarioError> {
        for (i, body) in self.world.bodies.iter().enumerate() {
            let field = |name: &str| format!("world.bodies[{i}].{name}");
            let (m_lo, m_hi) = MASS_RANGE;
            if !(body.mass >= m_lo && body.mass <= m_hi) {
                return Err(invalid(
                    field("mass"),
                    format!("{:e}: must lie in [{m_lo:e}, {m_hi:e}] kg", body.mass),
                ));
            }
            let sizes: Vec<f64> = match body.shape {
                ShapeSpec::Box(size) => size.to_vec(),
                ShapeSpec::Sphere(radius) => vec![radius],
            };
            let (l_lo, l_hi) = LENGTH_RANGE;
            if let Some(bad) = sizes.iter().find(|s| !(**s >= l_lo && **s <= l_hi)) {
                return Err(invalid(
                    field("shape"),
                    format!("size {bad:e}: must lie in [{l_lo:e}, {l_hi:e}] m"),
                ));
            }
            if !(body.corner_radius >= 0.0 && body.corner_radius <= l_hi) {
                return Err(invalid(
                    field("corner_radius"),
                    format!("{:e}: must lie in [0, {l_hi:e}] m", body.corner_radius),
                ));
            }
            if self.world.bodies[..i].iter().any(|b| b.name == body.name) {
                return Err(invalid(
                    field("name"),
                    format!("'{}' is used twice", body.name),
                ));
            }
        }
        for (name, state) in &self.initial_state.bodies {
            let field = format!("initial_state.bodies.{name}");
            if !self.world.bodies.iter().any(|b| &b.name == name) {
                return Err(invalid(
                    field,
                    format!("no body named '{name}' in world.bodies"),
                ));
            }
            if state
                .position
                .iter()
                .any(|x| !x.is_finite() || x.abs() > DIVERGENCE_DISTANCE)
            {
                return Err(invalid(
                    format!("{field}.position"),
                    format!("must be finite and within {DIVERGENCE_DISTANCE:e} m"),
                ));
            }
            if state
                .velocity
                .iter()
                .any(|x| !x.is_finite() || x.abs() > DIVERGENCE_SPEED)
            {
                return Err(invalid(
                    format!("{field}.velocity"),
                    format!("must be finite and below {DIVERGENCE_SPEED:e} m/s (rad/s)"),
                ));
            }
            let q = nalgebra::Vector4::from(state.orientation);
            if q.norm().is_nan() || q.norm() <= 1e-9 {
                return Err(invalid(
                    format!("{field}.orientation"),
                    "quaternion must be non-zero".into(),
                ));
            }
        }
        Ok(())
    }
}

/// Budget of the YAML parser: nesting depth and size of a scenario (a scenario nests
/// about 5 levels and has a few hundred nodes).
fn yaml_options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        with_snippet: false,
        budget: serde_saphyr::budget! {
            max_depth: 32,
            max_nodes: 1_000_000,
        },
    }
}

/// `file:line:column: field: message` of a parser failure.
fn parse_error(file: &Path, failure: YamlFailure) -> ScenarioError {
    ScenarioError::Parse {
        file: file.to_path_buf(),
        line: failure.line,
        column: failure.column,
        field: failure.field,
        message: failure.message,
    }
}

/// Deserializes the scenario straight from the text (exact line and column).
fn parse_typed(text: &str, file: &Path) -> Result<Scenario, ScenarioError> {
    parse_yaml(text, yaml_options()).map_err(|f| parse_error(file, f))
}

/// The document as a tree, for `--set` overrides.
fn parse_tree(text: &str, file: &Path) -> Result<Value, ScenarioError> {
    serde_saphyr::from_str_with_options(text, yaml_options())
        .map_err(|e| parse_error(file, YamlFailure::new(None, &e)))
}

/// Deserializes the overridden tree; an error names the field and the line where it is
/// written in the file (or says that it came from an override).
fn from_tree(
    value: Value,
    text: &str,
    file: &Path,
    overrides: &[String],
) -> Result<Scenario, ScenarioError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let field = e.path().to_string();
        let set = overrides.iter().find(|a| {
            a.split_once('=')
                .is_some_and(|(p, _)| same_field(p, &field))
        });
        let message = match set {
            Some(a) => format!("{} (from --set {a})", e.inner()),
            None => e.inner().to_string(),
        };
        ScenarioError::Invalid {
            file: file.to_path_buf(),
            line: locate(text, &field),
            field,
            message,
        }
    })
}

/// Whether an override path (`world.bodies.0.mass`) names `field` (`world.bodies[0].mass`).
fn same_field(path: &str, field: &str) -> bool {
    path_steps(path.trim()) == path_steps(field)
}

/// A scenario name: one path component of safe characters, so that results land in
/// `results/<name>` and nowhere else.
fn validate_name(name: &str) -> Result<(), String> {
    let safe = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if name.is_empty() || name.len() > 100 || name.starts_with('.') || !name.chars().all(safe) {
        return Err(format!(
            "'{name}': a scenario name must be 1 to 100 characters among A-Z a-z 0-9 . _ - \
             and not start with '.' (it names the results directory)"
        ));
    }
    Ok(())
}

/// One step of a field path: a key or a list index.
#[derive(Debug, PartialEq)]
enum PathStep<'a> {
    Key(&'a str),
    Index(usize),
}

/// Splits `world.bodies[0].mass` (or `world.bodies.0.mass`) into steps.
fn path_steps(path: &str) -> Vec<PathStep<'_>> {
    let mut steps = Vec::new();
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (key, mut rest) = match part.find('[') {
            Some(k) => (&part[..k], &part[k..]),
            None => (part, ""),
        };
        if !key.is_empty() {
            match key.parse::<usize>() {
                Ok(i) => steps.push(PathStep::Index(i)),
                Err(_) => steps.push(PathStep::Key(key)),
            }
        }
        while let Some(open) = rest.find('[') {
            let after = &rest[open + 1..];
            let Some(close) = after.find(']') else {
                break;
            };
            if let Ok(i) = after[..close].parse() {
                steps.push(PathStep::Index(i));
            }
            rest = &after[close + 1..];
        }
    }
    steps
}

/// The 1-based line of `field` in a block-style YAML text: each key is searched below the
/// previous one, inside its block; a list index counts the `-` items of the block. Falls
/// back to the closest enclosing field found (line 1 if none).
pub fn locate(text: &str, field: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut found = 0usize;
    let mut block_indent: Option<usize> = None;
    for step in path_steps(field) {
        let start = if block_indent.is_some() { found + 1 } else { 0 };
        let in_block = |l: &str| match block_indent {
            Some(b) => l.trim().is_empty() || l.trim_start().starts_with('#') || indent(l) > b,
            None => true,
        };
        let hit = match step {
            PathStep::Key(key) => (start..lines.len())
                .take_while(|&k| in_block(lines[k]))
                .find(|&k| has_key(lines[k], key))
                .map(|k| (k, key_indent(lines[k], key))),
            PathStep::Index(i) => (start..lines.len())
                .take_while(|&k| in_block(lines[k]))
                .filter(|&k| lines[k].trim_start().starts_with("- "))
                .nth(i)
                .map(|k| (k, indent(lines[k]))),
        };
        match hit {
            Some((k, col)) => {
                found = k;
                block_indent = Some(col);
            }
            None => break,
        }
    }
    found + 1
}

/// True if `line` holds `key:` as a mapping key (block or flow style).
fn has_key(line: &str, key: &str) -> bool {
    let pattern = format!("{key}:");
    line.match_indices(&pattern).any(|(k, _)| {
        line[..k]
            .chars()
            .last()
            .is_none_or(|c| c == ' ' || c == '{' || c == ',' || c == '-')
    })
}

/// Column of `key:` in `line` (its indentation as a block key).
fn key_indent(line: &str, key: &str) -> usize {
    line.find(&format!("{key}:")).unwrap_or(0)
}

/// Applies `path=value` to the document tree; the value is read as YAML (`1e-3`,
/// `[1, 0, 0]`). Missing keys along the path are created
/// (`initial_state.joint_offsets.FL_KFE=0.2`).
fn apply_override(root: &mut Value, assignment: &str) -> Result<(), ScenarioError> {
    let fail = |message: String| ScenarioError::Override {
        assignment: format!("--set {assignment}"),
        message,
    };
    let (path, value) = assignment
        .split_once('=')
        .ok_or_else(|| fail("expected path=value".into()))?;
    let new_value: Value = serde_saphyr::from_str_with_options(value, yaml_options())
        .map_err(|e| fail(format!("value: {e}")))?;
    let mut node = root;
    for step in path_steps(path.trim()) {
        if node.is_null() && matches!(step, PathStep::Key(_)) {
            *node = Value::Object(Map::new());
        }
        node = match step {
            PathStep::Key(key) => match node {
                Value::Object(map) => map.entry(key.to_string()).or_insert(Value::Null),
                _ => return Err(fail(format!("'{key}' is not inside a mapping"))),
            },
            PathStep::Index(i) => match node {
                Value::Array(seq) => seq
                    .get_mut(i)
                    .ok_or_else(|| fail(format!("index {i} is out of range")))?,
                _ => return Err(fail(format!("[{i}] is not inside a list"))),
            },
        };
    }
    *node = new_value;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "name: t\nworld:\n  bodies:\n    - name: a\n      mass: 1\n    - name: b\n      mass: 2\nsimulation:\n  dt: 1e-3\n";

    #[test]
    fn locate_follows_blocks_and_list_items() {
        assert_eq!(locate(TEXT, "simulation.dt"), 9);
        assert_eq!(locate(TEXT, "world.bodies[1].mass"), 7);
        assert_eq!(locate(TEXT, "world.bodies[0].mass"), 5);
        assert_eq!(locate(TEXT, "world.nothing"), 2);
    }

    #[test]
    fn path_steps_accept_both_index_styles() {
        assert_eq!(
            path_steps("a.b[2].c"),
            vec![
                PathStep::Key("a"),
                PathStep::Key("b"),
                PathStep::Index(2),
                PathStep::Key("c")
            ]
        );
        assert_eq!(
            path_steps("a.2"),
            vec![PathStep::Key("a"), PathStep::Index(2)]
        );
        // Found by tests/fuzz_inputs.rs: a key made of brackets (`]]]`, `a[`, `[]`).
        for odd in ["]]]", "a[", "[]", "a[1", "]a[2]", "[[[0]"] {
            let _ = path_steps(odd);
        }
        assert_eq!(
            path_steps("]a[2]"),
            vec![PathStep::Key("]a"), PathStep::Index(2)]
        );
    }

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
