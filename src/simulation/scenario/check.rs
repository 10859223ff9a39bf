//! The checks a scenario passes after parsing, each error naming the field and the line
//! where it is written, and the limits they apply (also the runner's: a run stops as
//! diverged beyond [`DIVERGENCE_SPEED`] and [`DIVERGENCE_DISTANCE`]).

use std::path::Path;

use super::yaml::locate;
use super::{Actuation, RobotRoot, RobotSource, Scenario, ScenarioError, ShapeSpec};

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
/// Largest number of bodies a scenario may hold, generated or listed: above it
/// [`estimated_scene_bytes`] exceeds [`MAX_SCENE_BYTES`].
pub const MAX_BODIES: usize = 2985;

/// Memory budget (bytes) of a scene at its largest.
pub const MAX_SCENE_BYTES: f64 = 4.0 * GIB;

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// Peak memory of a run that does not grow with its bodies (program, tables), bytes.
const BASE_BYTES: f64 = 16.0e6;

/// Peak memory per squared body, bytes: what still grows with the square of the bodies
/// is the list of allowed pairs of collision objects (the world's pair set and the
/// detector's pair list and sweep index: a pile allows each corner against every box
/// below it, about `4 bodies²` pairs). The state kept between steps (warm starts, last
/// forces) and the contact problem grow with the contacts only, and no `nv × nv` mass
/// matrix is formed.
const BYTES_PER_SQUARED_BODY: f64 = 480.0;

/// The message of a scene with more than [`MAX_BODIES`] bodies.
pub fn too_many_bodies_message(count: usize) -> String {
    format!(
        "{count} bodies: at most {MAX_BODIES} (the list of the pairs of collision objects \
         allowed to touch grows with the square of the bodies, about {:.1} GiB here, above \
         the {:.0} GiB budget)",
        estimated_scene_bytes(count) / GIB,
        MAX_SCENE_BYTES / GIB
    )
}

/// Peak bytes of a run on `bodies` boxes, fitted to the peak resident memory of
/// `bench-step` on piles of 8 to 1000 cubes ([`BYTES_PER_SQUARED_BODY`]).
pub fn estimated_scene_bytes(bodies: usize) -> f64 {
    let b = bodies as f64;
    BASE_BYTES + BYTES_PER_SQUARED_BODY * b * b
}

impl Scenario {
    pub(super) fn validate(&self, text: &str, file: &Path) -> Result<(), ScenarioError> {
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
        if self.num_steps() == 0 {
            return Err(invalid(
                "simulation.dt".into(),
                format!(
                    "{:e} s is more than twice the duration {duration:e} s: the run would have 0 steps",
                    self.simulation.dt
                ),
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
        if let Some(choice) = self.world.robot_collision {
            if self.world.robot.is_none() {
                return Err(invalid(
                    "world.robot_collision".into(),
                    "applies to a robot; the scenario has none".into(),
                ));
            }
            if choice.uses_spheres() && self.world.contact_spheres.is_empty() {
                return Err(invalid(
                    "world.robot_collision".into(),
                    "the robot's contact spheres touch the ground, but world.contact_spheres \
                     lists none; use `geometry` or add spheres"
                        .into(),
                ));
            }
        }
        if self.world.self_collision && self.world.robot.is_none() {
            return Err(invalid(
                "world.self_collision".into(),
                "applies to a robot's links; the scenario has no robot".into(),
            ));
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
        for (i, force) in self.external_forces.iter().enumerate() {
            if let Some(until) = force.until.filter(|&until| until < force.from) {
                return Err(invalid(
                    format!("external_forces[{i}].until"),
                    format!("{until} s is before `from` = {} s", force.from),
                ));
            }
        }
        if let Actuation::Pd { kp, kd, .. } = self.actuation {
            if !(kp >= 0.0 && kd >= 0.0 && kp.is_finite() && kd.is_finite()) {
                return Err(invalid(
                    "actuation".into(),
                    "PD gains must be finite and >= 0".into(),
                ));
            }
        }
        if let Actuation::Trot(spec) = &self.actuation {
            if let Some((field, message)) = spec.check() {
                return Err(invalid(format!("actuation.trot.{field}"), message));
            }
        }
        Ok(())
    }

    fn validate_bodies(
        &self,
        invalid: &dyn Fn(String, String) -> ScenarioError,
    ) -> Result<(), ScenarioError> {
        let count = self.world.bodies.len();
        if count > MAX_BODIES {
            return Err(invalid(
                "world.bodies".into(),
                too_many_bodies_message(count),
            ));
        }
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
        self.validate_fixed(invalid)?;
        for (name, state) in &self.initial_state.bodies {
            let field = format!("initial_state.bodies.{name}");
            if !self.world.bodies.iter().any(|b| &b.name == name) {
                return Err(invalid(
                    field,
                    format!("no body named '{name}' in world.bodies"),
                ));
            }
            if let Some(why) = position_problem(&state.position) {
                return Err(invalid(format!("{field}.position"), why));
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
            if let Some(why) = orientation_problem(state.orientation) {
                return Err(invalid(format!("{field}.orientation"), why));
            }
        }
        Ok(())
    }
}

impl Scenario {
    fn validate_fixed(
        &self,
        invalid: &dyn Fn(String, String) -> ScenarioError,
    ) -> Result<(), ScenarioError> {
        for (i, fixed) in self.world.fixed.iter().enumerate() {
            let field = |name: &str| format!("world.fixed[{i}].{name}");
            let (l_lo, l_hi) = LENGTH_RANGE;
            let sizes: Vec<f64> = match fixed.shape {
                ShapeSpec::Box(size) => size.to_vec(),
                ShapeSpec::Sphere(radius) => vec![radius],
            };
            if let Some(bad) = sizes.iter().find(|s| !(**s >= l_lo && **s <= l_hi)) {
                return Err(invalid(
                    field("shape"),
                    format!("size {bad:e}: must lie in [{l_lo:e}, {l_hi:e}] m"),
                ));
            }
            if let Some(why) = position_problem(&fixed.position) {
                return Err(invalid(field("position"), why));
            }
            if let Some(why) = orientation_problem(fixed.orientation) {
                return Err(invalid(field("orientation"), why));
            }
            if self.world.fixed[..i].iter().any(|f| f.name == fixed.name) {
                return Err(invalid(
                    field("name"),
                    format!("'{}' is used twice", fixed.name),
                ));
            }
        }
        Ok(())
    }
}

/// Why a placed object's position is refused, if it is: not finite or beyond the distance
/// at which a run counts as diverged.
fn position_problem(position: &[f64; 3]) -> Option<String> {
    position
        .iter()
        .any(|x| !x.is_finite() || x.abs() > DIVERGENCE_DISTANCE)
        .then(|| format!("must be finite and within {DIVERGENCE_DISTANCE:e} m"))
}

/// Why an orientation quaternion is refused, if it is: zero or not a number.
fn orientation_problem(orientation: [f64; 4]) -> Option<String> {
    let norm = nalgebra::Vector4::from(orientation).norm();
    (norm.is_nan() || norm <= 1e-9).then(|| "quaternion must be non-zero".to_string())
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
