//! Run folders from Python: one scenario run with one solver written as `contactbench run`
//! writes it, and a recorded run replayed for a viewer
//! (`contactbench::simulation::trajectory`): the meshes of the objects drawn, and per step
//! their world poses and the contacts, as numpy arrays for `contactbench.viewer` to log.

use std::path::PathBuf;

use contactbench::simulation::batch;
use contactbench::simulation::recorder::{RunHeader, RunWriter};
use contactbench::simulation::runner::{check, simulate_into};
use contactbench::simulation::trajectory::{contact_rows, read_trajectory, Trajectory};
use contactbench::simulation::view::SceneRole;
use contactbench::simulation::Scenario;
use numpy::{PyArray1, PyArray2, PyArray3, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::{internal, py_err, simulation_err, to_py_err};

/// An `n × 3` array of rows.
fn rows<'py, T: numpy::Element + Copy>(
    py: Python<'py>,
    rows: &[[T; 3]],
) -> PyResult<Bound<'py, PyArray2<T>>> {
    let flat: Vec<T> = rows.iter().flatten().copied().collect();
    Ok(PyArray1::from_vec(py, flat).reshape([rows.len(), 3])?)
}

fn role_name(role: SceneRole) -> &'static str {
    match role {
        SceneRole::Ground => "ground",
        SceneRole::Link => "link",
        SceneRole::Body(_) => "body",
    }
}

/// `frames × objects × 7` poses: translation (m) then quaternion `x, y, z, w`.
fn poses<'py>(py: Python<'py>, trajectory: &Trajectory) -> PyResult<Bound<'py, PyArray3<f64>>> {
    let objects = trajectory.objects.len();
    let flat: Vec<f64> = trajectory
        .frames
        .iter()
        .flat_map(|f| f.poses.iter())
        .flat_map(|p| {
            let t = p.translation.vector;
            let q = p.rotation.coords;
            [t.x, t.y, t.z, q.x, q.y, q.z, q.w]
        })
        .collect();
    Ok(PyArray1::from_vec(py, flat).reshape([trajectory.frames.len(), objects, 7])?)
}

/// The run in `run_dir` replayed: a dict with `scenario`, `solver`, `objects` (each a dict
/// of `name`, `role` — `ground`, `link` or `body` —, `vertices` (n × 3, m, object frame)
/// and `triangles` (m × 3)), `step` and `time` (one per recorded step), `poses` (steps ×
/// objects × 7: translation, quaternion x y z w, world) and `contacts` (one dict per step
/// of `points`, unit `normals` and `forces` (N), each k × 3, world axes).
#[pyfunction]
pub fn run_trajectory<'py>(py: Python<'py>, run_dir: PathBuf) -> PyResult<Bound<'py, PyDict>> {
    let trajectory = py
        .detach(|| read_trajectory(&run_dir))
        .map_err(|e| to_py_err(&e))?;
    let out = PyDict::new(py);
    out.set_item("scenario", &trajectory.scenario)?;
    out.set_item("solver", &trajectory.solver)?;
    let objects = PyList::empty(py);
    for object in &trajectory.objects {
        let item = PyDict::new(py);
        item.set_item("name", &object.name)?;
        item.set_item("role", role_name(object.role))?;
        item.set_item("vertices", rows(py, &object.vertices)?)?;
        item.set_item("triangles", rows(py, &object.triangles)?)?;
        objects.append(item)?;
    }
    out.set_item("objects", objects)?;
    let steps: Vec<i64> = trajectory.frames.iter().map(|f| f.step as i64).collect();
    let times: Vec<f64> = trajectory.frames.iter().map(|f| f.time).collect();
    out.set_item("step", PyArray1::from_vec(py, steps))?;
    out.set_item("time", PyArray1::from_vec(py, times))?;
    out.set_item("poses", poses(py, &trajectory)?)?;
    let contacts = PyList::empty(py);
    for frame in &trajectory.frames {
        let [points, normals, forces] = contact_rows(&frame.contacts);
        let item = PyDict::new(py);
        item.set_item("points", rows(py, &points)?)?;
        item.set_item("normals", rows(py, &normals)?)?;
        item.set_item("forces", rows(py, &forces)?)?;
        contacts.append(item)?;
    }
    out.set_item("contacts", contacts)?;
    Ok(out)
}

/// Runs the scenario file `path` (with the `set` overrides) with `solver` (default: the
/// scenario's first) and writes the run folder `out` (`steps.csv`, `contacts.csv`,
/// `summary.json`, as `contactbench run` writes under `OUT/<scenario>/<solver>`); `out`
/// must not exist. Returns the run's outcome (`completed`, `unconverged` or `failed`).
#[pyfunction]
#[pyo3(signature = (path, out, solver = None, set = None))]
pub fn write_run(
    py: Python<'_>,
    path: PathBuf,
    out: PathBuf,
    solver: Option<String>,
    set: Option<Vec<String>>,
) -> PyResult<String> {
    if std::fs::symlink_metadata(&out).is_ok() {
        return Err(pyo3::exceptions::PyFileExistsError::new_err(format!(
            "{}: exists; give a new folder",
            out.display()
        )));
    }
    let overrides = set.unwrap_or_default();
    py.detach(|| {
        let scenario = Scenario::load(&path, &overrides).map_err(py_err)?;
        check(&scenario).map_err(simulation_err)?;
        let texts: Vec<String> = solver.into_iter().collect();
        let mut jobs = match texts.is_empty() {
            true => batch::jobs(vec![scenario], None),
            false => batch::jobs_overriding(vec![scenario], &texts).map_err(py_err)?,
        };
        let job = match jobs.is_empty() {
            true => return Err(internal("no job for the scenario")),
            false => jobs.remove(0),
        };
        let mut writer = RunWriter::create(&out).map_err(py_err)?;
        let failure = simulate_into(&job.scenario, job.factory.as_ref(), &mut writer)
            .map_err(simulation_err)?;
        let header = RunHeader {
            scenario: job.scenario.name.clone(),
            solver: job.solver.clone(),
            dt: job.scenario.simulation.dt,
            ..RunHeader::default()
        };
        let summary = writer.finish(&header, failure).map_err(py_err)?;
        Ok(summary.outcome)
    })
}
