//! `ContactProblem` from numpy arrays (validated by the Rust constructors, same errors),
//! and the problem files the Rust crate reads and writes (our JSON, FCLIB HDF5, npz).

use std::path::PathBuf;

use contactbench::problem::io::{
    create_problem, read_lambda as rust_read_lambda, read_problem, write_problem,
};
use contactbench::problem::{ContactProblem, ProblemError};
use nalgebra::{DMatrix, DVector};
use numpy::{PyArray1, PyArray2};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{array1, array2, from_map, matrix, to_map, vector};
use crate::errors::py_err;

/// A validated contact problem `(G, g, μ, R)`: `c = (G + R) λ + g`, per contact `[t1, t2, n]`.
#[pyclass(name = "ContactProblem", module = "contactbench", frozen)]
#[derive(Clone)]
pub struct PyProblem {
    /// The Rust problem.
    pub inner: ContactProblem,
}

#[allow(non_snake_case)]
#[pymethods]
impl PyProblem {
    /// `ContactProblem::new`: checks sizes, finiteness, magnitudes, `μ ≥ 0`, `R ≥ 0`,
    /// symmetrizes a round-off-asymmetric `G`, tolerates round-off negative eigenvalues.
    /// `J` (`3n × nv`, optional) is the contact Jacobian, for the internal forces.
    #[new]
    #[pyo3(signature = (G, g, mu, R = None, J = None))]
    fn new(
        G: &Bound<'_, PyAny>,
        g: &Bound<'_, PyAny>,
        mu: &Bound<'_, PyAny>,
        R: Option<&Bound<'_, PyAny>>,
        J: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        through_door(ContactProblem::new, G, g, mu, R, J)
    }

    /// `ContactProblem::from_assembly`: the simulator's door (`G` symmetric PSD by
    /// construction): sizes, finiteness and signs only.
    #[staticmethod]
    #[pyo3(signature = (G, g, mu, R = None, J = None))]
    fn from_assembly(
        G: &Bound<'_, PyAny>,
        g: &Bound<'_, PyAny>,
        mu: &Bound<'_, PyAny>,
        R: Option<&Bound<'_, PyAny>>,
        J: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        through_door(ContactProblem::from_assembly, G, g, mu, R, J)
    }

    /// The Delassus matrix `G` (`3n × 3n`, a copy).
    #[getter]
    fn G<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        array2(py, self.inner.delassus())
    }

    /// The free velocity `g` (`3n`, m/s).
    #[getter]
    fn g<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        array1(py, self.inner.free_velocity())
    }

    /// The friction coefficients (`n`).
    #[getter]
    fn mu<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        array1(py, self.inner.mu())
    }

    /// The diagonal compliance `R` (`3n`), or None.
    #[getter]
    fn R<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
        self.inner.compliance().map(|r| array1(py, r))
    }

    /// The contact Jacobian `J` (`3n × nv`), or None.
    #[getter]
    fn J<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyArray2<f64>>>> {
        self.inner.jacobian().map(|j| array2(py, j)).transpose()
    }

    /// Number of contacts `n`.
    #[getter]
    fn num_contacts(&self) -> usize {
        self.inner.num_contacts()
    }

    /// Dimension `3n` of `λ` and `c`.
    #[getter]
    fn dim(&self) -> usize {
        self.inner.dim()
    }

    /// `v_s = ‖g‖∞` (m/s), the velocity scale of the relative criterion.
    #[getter]
    fn velocity_scale(&self) -> f64 {
        self.inner.velocity_scale()
    }

    /// What validation changed or tolerated (symmetrization, round-off eigenvalues).
    #[getter]
    fn notes(&self) -> Vec<String> {
        self.inner
            .validation_notes()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// The contact velocity `c = (G + R) λ + g` of forces `λ` (`3n`).
    fn velocity<'py>(
        &self,
        py: Python<'py>,
        lam: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let lambda = checked_lambda(&self.inner, lam)?;
        Ok(array1(py, &self.inner.velocity(&lambda)))
    }

    fn __repr__(&self) -> String {
        format!(
            "ContactProblem(num_contacts={}, compliance={})",
            self.inner.num_contacts(),
            self.inner.compliance().is_some()
        )
    }
}

/// The constructor function type of `ContactProblem::new` and `from_assembly`.
type Door = fn(
    DMatrix<f64>,
    DVector<f64>,
    DVector<f64>,
    Option<DVector<f64>>,
) -> Result<ContactProblem, ProblemError>;

/// The problem built by `door` from numpy arrays, with the Jacobian `J` attached when
/// given (checked: `3n` rows, finite).
#[allow(non_snake_case)]
fn through_door(
    door: Door,
    G: &Bound<'_, PyAny>,
    g: &Bound<'_, PyAny>,
    mu: &Bound<'_, PyAny>,
    R: Option<&Bound<'_, PyAny>>,
    J: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyProblem> {
    let compliance = R.map(|r| vector(r, "R")).transpose()?;
    let (delassus, free_velocity, mu) = (matrix(G, "G")?, vector(g, "g")?, vector(mu, "mu")?);
    let jacobian = J.map(|j| matrix(j, "J")).transpose()?;
    // The checks (an eigenvalue decomposition of G) run without the interpreter.
    let inner = G
        .py()
        .detach(|| {
            let problem = door(delassus, free_velocity, mu, compliance)?;
            match jacobian {
                Some(j) => problem.with_jacobian(j),
                None => Ok(problem),
            }
        })
        .map_err(py_err)?;
    Ok(PyProblem { inner })
}

/// A force vector given by the user, checked against the problem (size `3n`, finite,
/// magnitudes): the Rust `check_lambda`, raising `ProblemError` naming `lambda`.
pub fn checked_lambda(problem: &ContactProblem, lam: &Bound<'_, PyAny>) -> PyResult<DVector<f64>> {
    let lambda = vector(lam, "lambda")?;
    problem.check_lambda(&lambda).map_err(py_err)?;
    Ok(lambda)
}

/// A problem file's contents.
#[pyclass(name = "ProblemFile", module = "contactbench", frozen)]
pub struct PyProblemFile {
    problem: Py<PyProblem>,
    lambda: Option<Vec<f64>>,
    solver: Option<serde_json::Map<String, serde_json::Value>>,
    notes: Vec<String>,
}

#[pymethods]
impl PyProblemFile {
    /// The validated problem.
    #[getter]
    fn problem(&self, py: Python<'_>) -> Py<PyProblem> {
        self.problem.clone_ref(py)
    }

    /// The file's reference `λ` (`3n`), or None.
    #[getter]
    fn lambda_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
        self.lambda.as_deref().map(|l| PyArray1::from_slice(py, l))
    }

    /// The file's solver specification (a dict with a `solver` key), or None.
    #[getter]
    fn solver<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.solver.as_ref().map(|m| from_map(py, m)).transpose()
    }

    /// What the reader did to the stored data (a global problem reduced, a triangle
    /// mirrored).
    #[getter]
    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "ProblemFile(lambda={}, solver={}, notes={})",
            self.lambda.is_some(),
            self.solver.is_some(),
            self.notes.len()
        )
    }
}

/// Reads and validates a problem file of any format the Rust crate reads (JSON, FCLIB
/// HDF5 local or global, npz), recognized by content.
#[pyfunction(name = "read_problem")]
pub fn py_read_problem(py: Python<'_>, path: PathBuf) -> PyResult<PyProblemFile> {
    let file = py.detach(|| read_problem(&path)).map_err(py_err)?;
    Ok(PyProblemFile {
        problem: Py::new(
            py,
            PyProblem {
                inner: file.problem,
            },
        )?,
        lambda: file.lambda.map(|l| l.iter().copied().collect()),
        solver: file.solver,
        notes: file.notes,
    })
}

/// Writes a problem (and optionally a reference `λ` and, in JSON, a solver spec) in the
/// format of the extension (`.hdf5`/`.h5`: FCLIB, `.npz`: numpy, else JSON), atomically.
/// An existing file is replaced only with `overwrite=True` (else
/// `ProblemFileExistsError`, a `FileExistsError`).
#[pyfunction(name = "write_problem")]
#[pyo3(signature = (path, problem, lambda_ = None, solver = None, overwrite = false))]
pub fn py_write_problem(
    py: Python<'_>,
    path: PathBuf,
    problem: PyRef<'_, PyProblem>,
    lambda_: Option<&Bound<'_, PyAny>>,
    solver: Option<&Bound<'_, PyDict>>,
    overwrite: bool,
) -> PyResult<()> {
    let lambda = lambda_
        .map(|l| checked_lambda(&problem.inner, l))
        .transpose()?;
    let solver = solver.map(to_map).transpose()?;
    let inner = problem.inner.clone();
    let write = if overwrite {
        write_problem
    } else {
        create_problem
    };
    py.detach(|| write(&path, &inner, lambda.as_ref(), solver.as_ref()))
        .map_err(py_err)
}

/// Reads a force vector (a warm start): a JSON array, an object with `lambda`, or
/// `solve --all --json` output.
#[pyfunction(name = "read_lambda")]
pub fn py_read_lambda<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let lambda = py.detach(|| rust_read_lambda(&path)).map_err(py_err)?;
    Ok(array1(py, &lambda))
}
