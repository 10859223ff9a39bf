//! `load_robot`: a robot of the manifest (fetched on first use into
//! `$CONTACTBENCH_CACHE`) or a URDF file, with its frames, joints, reference
//! configurations and the kinematic and dynamic basics at a configuration.

use std::path::{Path, PathBuf};

use contactbench::dynamics::{self, Data};
use contactbench::model::robots::load_robot as rust_load_robot;
use contactbench::model::{Model, RootJoint};
use nalgebra::{DMatrix, DVector};
use numpy::{PyArray1, PyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::convert::{array1, array2, vector};
use crate::errors::py_err;

/// A robot model (kinematic tree, inertias, frames, collision geometry).
#[pyclass(name = "Robot", module = "contactbench", frozen)]
pub struct PyRobot {
    model: Model,
}

impl PyRobot {
    /// A configuration `q` from the user, forward kinematics computed.
    fn kinematics(&self, q: &Bound<'_, PyAny>) -> PyResult<(DVector<f64>, Data)> {
        let q = vector(q, "q")?;
        let mut data = Data::new(&self.model);
        dynamics::forward_kinematics(&self.model, &mut data, &q).map_err(py_err)?;
        Ok((q, data))
    }
}

#[pymethods]
impl PyRobot {
    /// The model's name.
    #[getter]
    fn name(&self) -> String {
        self.model.name.clone()
    }

    /// Dimension of the configuration `q`.
    #[getter]
    fn nq(&self) -> usize {
        self.model.nq()
    }

    /// Dimension of the velocity `v`.
    #[getter]
    fn nv(&self) -> usize {
        self.model.nv()
    }

    /// Total mass (kg).
    #[getter]
    fn total_mass(&self) -> f64 {
        self.model.total_mass()
    }

    /// Whether the root is a free flyer (`q = [x y z qx qy qz qw, ...]`).
    #[getter]
    fn free_flyer(&self) -> bool {
        self.model.has_free_flyer()
    }

    /// Joint names, the world excluded, in Pinocchio's order.
    #[getter]
    fn joint_names(&self) -> Vec<String> {
        self.model
            .joints
            .iter()
            .skip(1)
            .map(|j| j.name.clone())
            .collect()
    }

    /// Frame names (links, joints, operational frames), `universe` first.
    #[getter]
    fn frame_names(&self) -> Vec<String> {
        self.model.frames.iter().map(|f| f.name.clone()).collect()
    }

    /// Number of collision geometries.
    #[getter]
    fn num_geometries(&self) -> usize {
        self.model.geometries.len()
    }

    /// The SRDF's named configurations (`standing`, ...), each of size `nq`.
    #[getter]
    fn reference_configurations<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (name, q) in &self.model.reference_configurations {
            dict.set_item(name, array1(py, q))?;
        }
        Ok(dict)
    }

    /// What loading noticed without refusing (e.g. an inertia violating the triangle
    /// inequality).
    #[getter]
    fn notes(&self) -> Vec<String> {
        self.model.notes.clone()
    }

    /// The neutral configuration (zero joints, identity orientation).
    fn neutral_configuration<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        array1(py, &self.model.neutral_configuration())
    }

    /// A named reference configuration (`ModelError` naming the known ones otherwise).
    fn reference_configuration<'py>(
        &self,
        py: Python<'py>,
        name: &str,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let q = self.model.reference_configuration(name).map_err(py_err)?;
        Ok(array1(py, &q))
    }

    /// World placement of a frame at `q`: `(position (3,), rotation (3, 3))`.
    fn frame_placement<'py>(
        &self,
        py: Python<'py>,
        frame: &str,
        q: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let id = self.model.frame_id(frame).map_err(py_err)?;
        let (_, data) = self.kinematics(q)?;
        let placement = data.omf[id];
        let rotation = placement.rotation.to_rotation_matrix().into_inner();
        let position = DVector::from_column_slice(placement.translation.vector.as_slice());
        let rotation = DMatrix::from_column_slice(3, 3, rotation.as_slice());
        PyTuple::new(
            py,
            [
                array1(py, &position).into_any(),
                array2(py, &rotation)?.into_any(),
            ],
        )
    }

    /// The world-aligned linear Jacobian of a frame's origin at `q` (`3 × nv`).
    fn frame_jacobian<'py>(
        &self,
        py: Python<'py>,
        frame: &str,
        q: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let id = self.model.frame_id(frame).map_err(py_err)?;
        let (_, data) = self.kinematics(q)?;
        let jacobian = dynamics::frame_jacobian(&self.model, &data, id).map_err(py_err)?;
        let jacobian = DMatrix::from_column_slice(3, self.model.nv(), jacobian.as_slice());
        array2(py, &jacobian)
    }

    /// The joint-space mass matrix `M(q)` (CRBA, `nv × nv`, computed without the
    /// interpreter).
    fn mass_matrix<'py>(
        &self,
        py: Python<'py>,
        q: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let q = vector(q, "q")?;
        let model = &self.model;
        let m = py
            .detach(|| {
                let mut data = Data::new(model);
                dynamics::crba(model, &mut data, &q).cloned()
            })
            .map_err(py_err)?;
        array2(py, &m)
    }

    /// Kinetic energy `½ vᵀ M(q) v` (J).
    fn kinetic_energy(&self, q: &Bound<'_, PyAny>, v: &Bound<'_, PyAny>) -> PyResult<f64> {
        let (q, v) = (vector(q, "q")?, vector(v, "v")?);
        let mut data = Data::new(&self.model);
        dynamics::kinetic_energy(&self.model, &mut data, &q, &v).map_err(py_err)
    }

    /// Potential energy in gravity (J).
    fn potential_energy(&self, q: &Bound<'_, PyAny>) -> PyResult<f64> {
        let q = vector(q, "q")?;
        let mut data = Data::new(&self.model);
        dynamics::potential_energy(&self.model, &mut data, &q).map_err(py_err)
    }

    fn __repr__(&self) -> String {
        format!(
            "Robot(name={:?}, nq={}, nv={}, free_flyer={})",
            self.model.name,
            self.model.nq(),
            self.model.nv(),
            self.model.has_free_flyer()
        )
    }
}

/// A robot of the manifest by name (`solo12`, `talos`, `allegro`; fetched on first use
/// into `$CONTACTBENCH_CACHE`) or of the user's manifest named by `$CONTACTBENCH_ROBOTS`,
/// or a URDF file (`free_flyer` root, optional `srdf`), as `contactbench model`.
#[pyfunction]
#[pyo3(signature = (name, free_flyer = false, srdf = None))]
pub fn load_robot(
    py: Python<'_>,
    name: PathBuf,
    free_flyer: bool,
    srdf: Option<PathBuf>,
) -> PyResult<PyRobot> {
    let model = py
        .detach(|| load(&name, free_flyer, srdf.as_deref()))
        .map_err(py_err)?;
    Ok(PyRobot { model })
}

fn load(
    name: &Path,
    free_flyer: bool,
    srdf: Option<&Path>,
) -> Result<Model, contactbench::model::ModelError> {
    if name.extension().is_some_and(|e| e == "urdf") {
        let root = if free_flyer {
            RootJoint::FreeFlyer
        } else {
            RootJoint::Fixed
        };
        let mut model = Model::from_urdf(name, root)?;
        if let Some(srdf) = srdf {
            model.load_srdf(srdf)?;
        }
        Ok(model)
    } else {
        rust_load_robot(&name.to_string_lossy())
    }
}
