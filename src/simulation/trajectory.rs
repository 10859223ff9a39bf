//! A recorded run replayed for a viewer: the run folder's scenario (reloaded from the file
//! and overrides its summary records) gives the world; `steps.csv` gives the configuration
//! of every step, `contacts.csv` its contacts. Each frame holds the world pose of every
//! shown object (from forward kinematics of the recorded `q`) and each contact's point,
//! normal (the pair's contact recomputed at the configuration the step started from) and
//! force `f = R λ / dt` (world axes).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use nalgebra::{DVector, Isometry3, Vector3};
use thiserror::Error;

use super::output::MANIFEST;
use super::recorder::{columns, read_columns, read_json, ContactRecord, RecordError, RunSummary};
use super::view::{frame_contacts, shape_mesh, shown_objects, SceneContact, SceneRole};
use super::world::{Role, World};
use super::{Scenario, ScenarioError};
use crate::dynamics::{self, Data, DynamicsError};

/// Why a run could not be replayed.
#[derive(Debug, Error)]
pub enum TrajectoryError {
    /// The folder is not a run folder.
    #[error("{dir}: not a run folder: {why}")]
    NotARun {
        /// The folder.
        dir: PathBuf,
        /// What it lacks, and where runs are.
        why: String,
    },
    /// A file of the run could not be read.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// The recorded scenario no longer loads.
    #[error("the run's scenario: {0}")]
    Scenario(#[from] ScenarioError),
    /// A recorded configuration has no kinematics (wrong size, non-finite).
    #[error(transparent)]
    Dynamics(#[from] DynamicsError),
    /// `steps.csv` or `contacts.csv` does not match the run's world.
    #[error("{file}: {message}")]
    Columns {
        /// The file.
        file: PathBuf,
        /// What does not match.
        message: String,
    },
}

/// An object drawn by the viewer: its triangles in its own frame.
#[derive(Debug, Clone)]
pub struct TrajectoryObject {
    /// The object's name (`ground`, a link geometry, a body).
    pub name: String,
    /// What it is.
    pub role: SceneRole,
    /// Vertex positions (m, object frame).
    pub vertices: Vec<[f64; 3]>,
    /// Counter-clockwise triangles, indices into `vertices`.
    pub triangles: Vec<[u32; 3]>,
}

/// One recorded step.
#[derive(Debug, Clone)]
pub struct TrajectoryFrame {
    /// Step index (0: the initial state).
    pub step: usize,
    /// Simulated time (s).
    pub time: f64,
    /// World pose of each object of [`Trajectory::objects`], in order.
    pub poses: Vec<Isometry3<f64>>,
    /// The contacts the step solved.
    pub contacts: Vec<SceneContact>,
}

/// A run replayed (module docs).
#[derive(Debug, Clone)]
pub struct Trajectory {
    /// Scenario name.
    pub scenario: String,
    /// Solver label.
    pub solver: String,
    /// The objects drawn.
    pub objects: Vec<TrajectoryObject>,
    /// Every recorded step.
    pub frames: Vec<TrajectoryFrame>,
}

/// The summary of the run in `dir`, refusing a folder that is not a run (a results folder
/// gets the list of its runs).
pub fn read_run_summary(dir: &Path) -> Result<RunSummary, TrajectoryError> {
    let not_a_run = |why: String| TrajectoryError::NotARun {
        dir: dir.to_path_buf(),
        why,
    };
    if !dir.is_dir() {
        return Err(not_a_run("no such folder".into()));
    }
    let summary = dir.join("summary.json");
    if !summary.is_file() {
        let why = match super::output::ResultsManifest::read(dir) {
            Ok(manifest) => format!(
                "it holds the results of {} runs ({MANIFEST}); give one of them: {}",
                manifest.runs.len(),
                manifest
                    .runs
                    .iter()
                    .take(8)
                    .map(|r| dir.join(&r.path).display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Err(_) => "no summary.json (a run folder is OUT/<scenario>/<solver> of \
                       `contactbench run --out OUT`)"
                .into(),
        };
        return Err(not_a_run(why));
    }
    Ok(read_json(&summary)?)
}

/// The scenario a run was made from, reloaded with the overrides it recorded, then `more`.
pub fn run_scenario(
    dir: &Path,
    summary: &RunSummary,
    more: &[String],
) -> Result<Scenario, TrajectoryError> {
    let origin = summary
        .origin
        .as_ref()
        .ok_or_else(|| TrajectoryError::NotARun {
            dir: dir.to_path_buf(),
            why: "its summary.json does not record the scenario it was made from (a run \
              recorded by an older contactbench: run it again)"
                .into(),
        })?;
    let overrides: Vec<String> = origin.overrides.iter().chain(more).cloned().collect();
    Ok(Scenario::load(&origin.file, &overrides)?)
}

/// Replays the run in `dir` (module docs).
pub fn read_trajectory(dir: &Path) -> Result<Trajectory, TrajectoryError> {
    let summary = read_run_summary(dir)?;
    let scenario = run_scenario(dir, &summary, &[])?;
    let world = World::build(&scenario)?;
    let configurations = recorded_configurations(&dir.join("steps.csv"), &world)?;
    let mut contacts = recorded_contacts(&dir.join("contacts.csv"))?;
    let shown = shown_objects(&world);
    let objects = shown.iter().map(|&i| drawn(&world, i)).collect();
    let mut data = Data::new(&world.model);
    let mut frames = Vec::with_capacity(configurations.len());
    for (k, (step, time, q)) in configurations.iter().enumerate() {
        let solved = contacts.remove(step).unwrap_or_default();
        let found = match k {
            0 => Vec::new(),
            _ => frame_contacts(
                &world,
                &mut data,
                &configurations[k - 1].2,
                &solved,
                summary.dt,
            )?,
        };
        dynamics::forward_kinematics(&world.model, &mut data, q)?;
        frames.push(TrajectoryFrame {
            step: *step,
            time: *time,
            poses: shown
                .iter()
                .map(|&i| data.omi[world.objects[i].joint] * world.objects[i].placement)
                .collect(),
            contacts: found,
        });
    }
    Ok(Trajectory {
        scenario: summary.scenario,
        solver: summary.solver,
        objects,
        frames,
    })
}

/// The mesh of object `i` of the world.
fn drawn(world: &World, i: usize) -> TrajectoryObject {
    let object = &world.objects[i];
    let mesh = shape_mesh(&object.shape);
    TrajectoryObject {
        name: object.name.clone(),
        role: match object.role {
            Role::Ground => SceneRole::Ground,
            Role::Body(k) => SceneRole::Body(k),
            _ => SceneRole::Link,
        },
        vertices: mesh.positions.iter().map(|p| [p.x, p.y, p.z]).collect(),
        triangles: mesh.triangles,
    }
}

/// `(step, time, q)` of every row of `steps.csv`, `q` in the world's coordinate order.
fn recorded_configurations(
    file: &Path,
    world: &World,
) -> Result<Vec<(usize, f64, DVector<f64>)>, TrajectoryError> {
    let table = read_columns(file)?;
    let column = |name: &str| {
        table.get(name).ok_or_else(|| TrajectoryError::Columns {
            file: file.to_path_buf(),
            message: format!("no column '{name}' (the run's world has it)"),
        })
    };
    let steps = column(columns::STEP)?;
    let times = column(columns::TIME)?;
    let q_columns = world
        .q_names()
        .iter()
        .map(|n| column(&format!("q_{n}")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((0..steps.len())
        .map(|r| {
            let q = DVector::from_iterator(q_columns.len(), q_columns.iter().map(|c| c[r]));
            (steps[r] as usize, times[r], q)
        })
        .collect())
}

/// The contacts of `contacts.csv` per step (pair, point and impulse; the rest is not
/// needed to draw them).
fn recorded_contacts(file: &Path) -> Result<BTreeMap<usize, Vec<ContactRecord>>, TrajectoryError> {
    let csv_error = |e: csv::Error| TrajectoryError::Columns {
        file: file.to_path_buf(),
        message: e.to_string(),
    };
    let mut reader = csv::Reader::from_path(file).map_err(csv_error)?;
    let headers = reader.headers().map_err(csv_error)?.clone();
    let index = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| TrajectoryError::Columns {
                file: file.to_path_buf(),
                message: format!("no column '{name}'"),
            })
    };
    let step = index(columns::STEP)?;
    let pair = index(columns::PAIR)?;
    let point = columns::POINT.map(index);
    let lambda = columns::LAMBDA.map(index);
    let [p0, p1, p2] = point;
    let [l0, l1, l2] = lambda;
    let (point, lambda) = ([p0?, p1?, p2?], [l0?, l1?, l2?]);
    let mut out: BTreeMap<usize, Vec<ContactRecord>> = BTreeMap::new();
    for (row, record) in reader.records().enumerate() {
        let record = record.map_err(csv_error)?;
        let number = |k: usize| {
            record
                .get(k)
                .and_then(|cell| cell.parse::<f64>().ok())
                .ok_or_else(|| TrajectoryError::Columns {
                    file: file.to_path_buf(),
                    message: format!("row {}: column {} is not a number", row + 2, k + 1),
                })
        };
        let contact = ContactRecord {
            pair: record.get(pair).unwrap_or_default().to_string(),
            point: [number(point[0])?, number(point[1])?, number(point[2])?],
            signed_distance: 0.0,
            lambda: [number(lambda[0])?, number(lambda[1])?, number(lambda[2])?],
            velocity: [0.0; 3],
        };
        out.entry(number(step)? as usize).or_default().push(contact);
    }
    Ok(out)
}

/// The contacts' world vectors as rows, for a caller that draws them: points, unit
/// normals and forces (N).
pub fn contact_rows(contacts: &[SceneContact]) -> [Vec<[f64; 3]>; 3] {
    let row = |v: &Vector3<f64>| [v.x, v.y, v.z];
    [
        contacts.iter().map(|c| row(&c.point)).collect(),
        contacts.iter().map(|c| row(&c.normal)).collect(),
        contacts.iter().map(|c| row(&c.force)).collect(),
    ]
}
