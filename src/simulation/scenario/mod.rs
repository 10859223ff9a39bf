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
//!
//! The module's files: `schema.rs`, the file's types (serde); `generate.rs`, the bodies of
//! generated worlds (`world.generate`); `check.rs`, the checks that run after parsing and
//! the limits they apply; `yaml.rs`, parsing, `--set` overrides and
//! the locator that finds the line where a field is written.

mod check;
mod generate;
mod schema;
mod yaml;

pub use check::{
    DIVERGENCE_DISTANCE, DIVERGENCE_SPEED, LENGTH_RANGE, MASS_RANGE, MAX_BODIES, MAX_SCENE_BYTES,
    MAX_STEPS,
};
pub use schema::{
    Actuation, Analytical, BodySpec, BodyState, Clutter, Columns, ContactSphere, ExternalForce,
    FixedSpec, ForceProfile, Generated, GravityCompensation, HeightFieldSpec, InitialState, Pose,
    Pyramid, RobotCollision, RobotRoot, RobotSource, Roughness, Scenario, ShapeSpec,
    SimulationSpec, SolverEntry, SpheresInBox, StepMetrics, Terrain, TerrainFormula, UrdfRobot,
    WorldSpec,
};
pub use yaml::locate;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use thiserror::Error;

use super::recorder::ScenarioOrigin;
use crate::problem::StepParameters;
use crate::solvers::SolverSpec;
use yaml::{apply_override, from_tree, parse_tree, parse_typed};

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
            let scenario = parse_typed(text, file)?;
            // The tree refuses the non-finite numbers the types accept.
            parse_tree(text, file)?;
            scenario
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
        scenario.overrides = overrides.to_vec();
        scenario.expand_generated()?;
        scenario.validate(text, file)?;
        Ok(scenario)
    }

    /// The file (made absolute against the working directory) and overrides this scenario
    /// was loaded from.
    pub fn origin(&self) -> ScenarioOrigin {
        ScenarioOrigin {
            file: std::path::absolute(&self.source).unwrap_or_else(|_| self.source.clone()),
            overrides: self.overrides.clone(),
        }
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
