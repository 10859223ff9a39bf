//! A scenario's simulator stepped from Python: its state, one step at a time (with an
//! added generalized force), and the step's derivatives `A = ∂(q⁺, v⁺)/∂(q, v)` and
//! `B = ∂(q⁺, v⁺)/∂τ` as numpy arrays (docs/derivatives.md).

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, TryLockError};

use contactbench::simulation::runner::{check, simulator};
use contactbench::simulation::{Scenario, Simulator};
use numpy::{PyArray1, PyArray2};
use pyo3::prelude::*;

use crate::convert::{array1, array2, vector};
use crate::errors::{internal, py_err, simulation_err};

/// A scenario's simulator (`contactbench.Simulator(scenario, solver=None, set=None)`):
/// the world, controller and external forces of the scenario file, one solver (a text as
/// `contactbench run --solver` takes it, keeping the scenario's settings unless it sets
/// them; by default the scenario's first solver), at the initial state. The simulator
/// sits behind a lock, as Python may share the object between threads: a call while
/// another thread's step runs raises instead of waiting (it would wait holding the
/// interpreter lock that the step needs to return).
#[pyclass(name = "Simulator", module = "contactbench", frozen)]
pub struct PySimulator {
    sim: Mutex<Simulator>,
}

impl PySimulator {
    fn sim(&self) -> PyResult<MutexGuard<'_, Simulator>> {
        self.sim.try_lock().map_err(|e| match e {
            TryLockError::WouldBlock => pyo3::exceptions::PyRuntimeError::new_err(
                "the simulator is busy with a call from another thread",
            ),
            TryLockError::Poisoned(_) => internal("the simulator's lock is poisoned"),
        })
    }
}

/// Sets the added generalized force of the next step (`None`: none).
fn set_torque(sim: &mut Simulator, tau: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    let tau = tau.map(|t| vector(t, "tau")).transpose()?;
    sim.set_added_torque(tau).map_err(py_err)
}

#[pymethods]
impl PySimulator {
    #[new]
    #[pyo3(signature = (scenario, solver = None, set = None))]
    fn new(
        py: Python<'_>,
        scenario: PathBuf,
        solver: Option<String>,
        set: Option<Vec<String>>,
    ) -> PyResult<Self> {
        let overrides = set.unwrap_or_default();
        let scenario = py.detach(|| {
            let scenario = Scenario::load(&scenario, &overrides).map_err(py_err)?;
            check(&scenario).map_err(simulation_err)?;
            Ok::<_, PyErr>(scenario)
        })?;
        let spec = match solver {
            Some(text) => scenario.solver_override(&text).map_err(py_err)?,
            None => scenario.solver_specs().into_iter().next().ok_or_else(|| {
                pyo3::exceptions::PyValueError::new_err("the scenario names no solver")
            })?,
        };
        let sim = py
            .detach(|| simulator(&scenario, &spec))
            .map_err(simulation_err)?;
        Ok(Self {
            sim: Mutex::new(sim),
        })
    }

    /// The number of velocity dofs `nv` (the size of `v`, of `tau` and of `A`'s blocks).
    #[getter]
    fn nv(&self) -> PyResult<usize> {
        Ok(self.sim()?.world().model.nv())
    }

    /// The simulated time (s).
    #[getter]
    fn time(&self) -> PyResult<f64> {
        Ok(self.sim()?.time())
    }

    /// `(q, v)`: configuration (`nq`, free flyers as position and quaternion x, y, z, w)
    /// and velocity (`nv`, free flyers' twists in their body frame).
    fn state<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>)> {
        let sim = self.sim()?;
        let (q, v) = sim.state();
        Ok((array1(py, q), array1(py, v)))
    }

    /// Sets the state the next step starts from (checked: sizes, finite, unit quaternions).
    fn set_state(&self, q: &Bound<'_, PyAny>, v: &Bound<'_, PyAny>) -> PyResult<()> {
        let (q, v) = (vector(q, "q")?, vector(v, "v")?);
        self.sim()?.set_state(&q, &v).map_err(py_err)
    }

    /// Takes one step, with `tau` (`nv`) added to the generalized forces when given.
    #[pyo3(signature = (tau = None))]
    fn step(&self, py: Python<'_>, tau: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let mut guard = self.sim()?;
        set_torque(&mut guard, tau)?;
        let sim = &mut *guard;
        let result = py.detach(|| sim.advance().map(|_| ()));
        guard.set_added_torque(None).map_err(py_err)?;
        result.map_err(py_err)
    }

    /// `(A, B)` of the step from the current state with `tau` added, which is not taken:
    /// `A = ∂(q⁺, v⁺)/∂(q, v)` (`2nv × 2nv`, `[δq, δv]`) and `B = ∂(q⁺, v⁺)/∂τ`
    /// (`2nv × nv`). Raises `DerivativeError` where there is none (an unconverged
    /// solve, ...).
    #[pyo3(signature = (tau = None))]
    #[allow(clippy::type_complexity)]
    fn step_derivatives<'py>(
        &self,
        py: Python<'py>,
        tau: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyArray2<f64>>, Bound<'py, PyArray2<f64>>)> {
        let mut guard = self.sim()?;
        set_torque(&mut guard, tau)?;
        let sim = &mut *guard;
        let result = py.detach(|| sim.step_derivatives());
        guard.set_added_torque(None).map_err(py_err)?;
        let d = result.map_err(py_err)?;
        Ok((array2(py, &d.a)?, array2(py, &d.b)?))
    }
}
