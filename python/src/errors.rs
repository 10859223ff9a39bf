//! contactbench's error enums as Python exceptions: one class per Rust enum (defined in
//! `contactbench/errors.py`, all under `ContactbenchError`), the message the Rust error's
//! text followed by its sources (as the command line prints it), and attributes `kind` (the variant, snake_case), `path`, `line` and
//! `field` where the variant names them (else `None`).

use contactbench::derivatives::DerivativeError;
use contactbench::dynamics::DynamicsError;
use contactbench::model::ModelError;
use contactbench::problem::io::ProblemFileError;
use contactbench::problem::ProblemError;
use contactbench::simulation::recorder::RecordError;
use contactbench::simulation::trajectory::TrajectoryError;
use contactbench::simulation::{ScenarioError, SimulationError, StepDerivativeError, StepError};
use contactbench::solvers::SolverError;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Where an error points, as far as its variant says.
#[derive(Debug, Default)]
pub struct Location {
    /// The file.
    pub path: Option<String>,
    /// The line (1-based).
    pub line: Option<usize>,
    /// The field, dataset or element.
    pub field: Option<String>,
}

/// A Rust error that becomes a Python exception of class `class()`.
pub trait PythonError: std::error::Error {
    /// The exception class, in `contactbench.errors`.
    fn class(&self) -> &'static str;
    /// What the variant names.
    fn location(&self) -> Location {
        Location::default()
    }
}

/// The exception for `error`: its class, its message (the Rust text) and its attributes.
pub fn to_py_err<E: PythonError + ?Sized>(error: &E) -> PyErr {
    Python::attach(|py| build(py, error).unwrap_or_else(|e| e))
}

/// `map_err` helper.
pub fn py_err<E: PythonError>(error: E) -> PyErr {
    to_py_err(&error)
}

fn build<E: PythonError + ?Sized>(py: Python<'_>, error: &E) -> PyResult<PyErr> {
    let class = py.import("contactbench.errors")?.getattr(error.class())?;
    let location = error.location();
    let kwargs = PyDict::new(py);
    kwargs.set_item("kind", variant_name(error))?;
    kwargs.set_item("path", location.path)?;
    kwargs.set_item("line", location.line)?;
    kwargs.set_item("field", location.field)?;
    let exception = class.call((message(error),), Some(&kwargs))?;
    Ok(PyErr::from_value(exception))
}

/// The error's text followed by its sources, as the command line prints it (anyhow's
/// `{:#}`): `scenario.yaml:3: world.robot: cannot load the robot 'x.urdf': x.urdf: ...`;
/// a source whose text already ends the message (`step 3: collision: {source}`) is not
/// repeated.
fn message<E: std::error::Error + ?Sized>(error: &E) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.ends_with(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// The variant's name in snake_case, read from its `Debug` form (`NonFinite { .. }` →
/// `non_finite`), so that a variant added to a Rust enum needs no change here.
fn variant_name<E: std::fmt::Debug + ?Sized>(error: &E) -> String {
    let debug = format!("{error:?}");
    let name: String = debug
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A message for what is not one of contactbench's errors (a failure of the binding).
pub fn internal(message: impl Into<String>) -> PyErr {
    PyRuntimeError::new_err(message.into())
}

fn problem_field(error: &ProblemError) -> String {
    match error {
        ProblemError::Size { field, .. }
        | ProblemError::NonFinite { field, .. }
        | ProblemError::Magnitude { field, .. }
        | ProblemError::Negative { field, .. } => (*field).to_string(),
        _ => "G".to_string(),
    }
}

impl PythonError for ProblemError {
    fn class(&self) -> &'static str {
        "ProblemError"
    }
    fn location(&self) -> Location {
        Location {
            field: Some(problem_field(self)),
            ..Location::default()
        }
    }
}

impl PythonError for ProblemFileError {
    fn class(&self) -> &'static str {
        match self {
            ProblemFileError::Exists { .. } => "ProblemFileExistsError",
            _ => "ProblemFileError",
        }
    }
    fn location(&self) -> Location {
        let (path, line, field) = match self {
            ProblemFileError::Io { path, .. }
            | ProblemFileError::Serialize { path, .. }
            | ProblemFileError::TooLarge { path, .. }
            | ProblemFileError::Exists { path } => (path, None, None),
            ProblemFileError::Json { path, line, .. } => (path, Some(*line), None),
            ProblemFileError::JsonField { path, field, .. } => (path, None, Some(field.clone())),
            ProblemFileError::RaggedRows { path, .. } => (path, None, Some("G".to_string())),
            ProblemFileError::Hdf5 { path, dataset, .. }
            | ProblemFileError::Dataset { path, dataset, .. }
            | ProblemFileError::Unsupported { path, dataset, .. } => {
                (path, None, Some(dataset.clone()))
            }
            ProblemFileError::Invalid { path, error } => (path, None, Some(problem_field(error))),
        };
        Location {
            path: Some(path.display().to_string()),
            line,
            field,
        }
    }
}

impl PythonError for SolverError {
    fn class(&self) -> &'static str {
        "SolverError"
    }
    fn location(&self) -> Location {
        let field = match self {
            SolverError::InvalidSetting { field, .. } => Some(field.clone()),
            SolverError::Problem(e) => Some(problem_field(e)),
            _ => None,
        };
        Location {
            field,
            ..Location::default()
        }
    }
}

impl PythonError for ModelError {
    fn class(&self) -> &'static str {
        "ModelError"
    }
    fn location(&self) -> Location {
        let (path, field) = match self {
            ModelError::Io { file, .. }
            | ModelError::MalformedUrdf { file, .. }
            | ModelError::NotATree { file, .. }
            | ModelError::Srdf { file, .. } => (Some(file), None),
            ModelError::UnsupportedJointType { file, joint, .. }
            | ModelError::UnknownLink { file, joint, .. } => (Some(file), Some(joint.clone())),
            ModelError::InvalidInertia { file, link, .. }
            | ModelError::MissingMesh { file, link, .. } => (Some(file), Some(link.clone())),
            ModelError::InvalidElement { file, element, .. } => (Some(file), Some(element.clone())),
            ModelError::RobotManifest {
                file, line, field, ..
            } => {
                return Location {
                    path: Some(file.display().to_string()),
                    line: Some(*line),
                    field: Some(field.clone()),
                }
            }
            ModelError::UserRobot(e) => {
                return Location {
                    path: Some(e.file.display().to_string()),
                    line: Some(e.line),
                    field: Some(e.name.clone()),
                }
            }
            ModelError::UnknownFrame { name, .. }
            | ModelError::UnknownJoint { name, .. }
            | ModelError::UnknownConfiguration { name, .. }
            | ModelError::UnknownRobot { name, .. } => (None, Some(name.clone())),
            _ => (None, None),
        };
        Location {
            path: path.map(|p| p.display().to_string()),
            line: None,
            field,
        }
    }
}

impl PythonError for DynamicsError {
    fn class(&self) -> &'static str {
        "DynamicsError"
    }
}

impl PythonError for ScenarioError {
    fn class(&self) -> &'static str {
        "ScenarioError"
    }
    fn location(&self) -> Location {
        match self {
            ScenarioError::Io { file, .. } => Location {
                path: Some(file.display().to_string()),
                ..Location::default()
            },
            ScenarioError::Parse {
                file, line, field, ..
            }
            | ScenarioError::Invalid {
                file, line, field, ..
            } => Location {
                path: Some(file.display().to_string()),
                line: Some(*line),
                field: Some(field.clone()),
            },
            ScenarioError::Robot(e) => Location {
                path: Some(e.file.display().to_string()),
                line: Some(e.line),
                field: Some(e.field.clone()),
            },
            ScenarioError::Override { assignment, .. } => Location {
                field: Some(assignment.clone()),
                ..Location::default()
            },
        }
    }
}

impl PythonError for RecordError {
    fn class(&self) -> &'static str {
        "RecordError"
    }
    fn location(&self) -> Location {
        let path = match self {
            RecordError::Io { path, .. }
            | RecordError::Csv { path, .. }
            | RecordError::Json { path, .. }
            | RecordError::NotANumber { path, .. }
            | RecordError::NotFinite { path, .. }
            | RecordError::Invalid { path, .. } => Some(path.clone()),
            RecordError::Output(_) => None,
        };
        Location {
            path,
            ..Location::default()
        }
    }
}

/// A state or torque refused (`Dynamics`) is a `DynamicsError`, as elsewhere.
impl PythonError for StepError {
    fn class(&self) -> &'static str {
        match self {
            StepError::Dynamics { .. } => "DynamicsError",
            _ => "StepError",
        }
    }
}

impl PythonError for DerivativeError {
    fn class(&self) -> &'static str {
        "DerivativeError"
    }
}

/// A step that failed is a `StepError`; a step without a derivative a `DerivativeError`.
impl PythonError for StepDerivativeError {
    fn class(&self) -> &'static str {
        match self {
            StepDerivativeError::Step(e) => e.class(),
            _ => "DerivativeError",
        }
    }
}

/// A simulation error is raised as the error it wraps (`ScenarioError`, `SolverError`,
/// `RecordError`), with the Rust text of the wrapper.
pub fn simulation_err(error: SimulationError) -> PyErr {
    match &error {
        SimulationError::Scenario(e) => to_py_err(e),
        SimulationError::Record(e) => to_py_err(e),
        SimulationError::Solver(_) => to_py_err(&Wrapped {
            class: "SolverError",
            error: &error,
        }),
    }
}

/// An error raised under another class than its own, with its own text.
struct Wrapped<'a> {
    class: &'static str,
    error: &'a SimulationError,
}

impl std::fmt::Debug for Wrapped<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.error {
            SimulationError::Solver(e) => std::fmt::Debug::fmt(e, f),
            other => std::fmt::Debug::fmt(other, f),
        }
    }
}

impl std::fmt::Display for Wrapped<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self.error, f)
    }
}

impl std::error::Error for Wrapped<'_> {}

impl PythonError for Wrapped<'_> {
    fn class(&self) -> &'static str {
        self.class
    }
    fn location(&self) -> Location {
        match self.error {
            SimulationError::Solver(e) => e.location(),
            _ => Location::default(),
        }
    }
}

impl PythonError for TrajectoryError {
    fn class(&self) -> &'static str {
        match self {
            TrajectoryError::Scenario(e) => e.class(),
            TrajectoryError::Dynamics(e) => e.class(),
            TrajectoryError::Record(_)
            | TrajectoryError::NotARun { .. }
            | TrajectoryError::Columns { .. } => "RecordError",
        }
    }
    fn location(&self) -> Location {
        match self {
            TrajectoryError::Scenario(e) => e.location(),
            TrajectoryError::Record(e) => e.location(),
            TrajectoryError::Dynamics(_) => Location::default(),
            TrajectoryError::NotARun { dir: path, .. }
            | TrajectoryError::Columns { file: path, .. } => Location {
                path: Some(path.display().to_string()),
                ..Location::default()
            },
        }
    }
}
