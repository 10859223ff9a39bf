//! Running a scenario file as `contactbench run` does (same loading, checks, solver
//! overrides and runner), each run's records kept as columns: the columns of the CLI's
//! `steps.csv` and `contacts.csv` under the same names, as numpy arrays, and the summary
//! of its `summary.json`.

use std::path::PathBuf;

use contactbench::simulation::batch::{self, Job};
use contactbench::simulation::recorder::{
    contact_cells, contact_column_names, step_cells, step_column_names, Cell, RecordError,
    Recorder, RunHeader, RunSummary, StepRecord, SummaryBuilder,
};
use contactbench::simulation::runner::{check, drive, simulate_into};
use contactbench::simulation::{Scenario, Simulator, World};
use contactbench::solvers::ContactSolver;
use numpy::{PyArray1, PyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::Map;

use crate::convert::from_value;
use crate::errors::{internal, py_err, simulation_err};
use crate::solvers::{CallableSolver, PyPythonSolver};

/// Steps between two checks for Ctrl-C (KeyboardInterrupt) during a run.
const SIGNAL_CHECK_STEPS: usize = 64;

/// One column of a record: numbers (an empty CSV cell is NaN), integers or text.
enum Column {
    Float(Vec<f64>),
    Int(Vec<i64>),
    Text(Vec<String>),
}

impl Column {
    fn of(cell: &Cell) -> Self {
        match cell {
            Cell::Float(_) | Cell::Absent => Column::Float(Vec::new()),
            Cell::Int(_) => Column::Int(Vec::new()),
            Cell::Text(_) => Column::Text(Vec::new()),
        }
    }

    fn push(&mut self, cell: Cell) {
        match (self, cell) {
            (Column::Float(v), Cell::Float(x)) => v.push(x),
            (Column::Int(v), Cell::Int(x)) => v.push(x),
            (Column::Text(v), Cell::Text(x)) => v.push(x),
            (Column::Float(v), Cell::Int(x)) => v.push(x as f64),
            (Column::Float(v), Cell::Text(_) | Cell::Absent) => v.push(f64::NAN),
            (Column::Int(_) | Column::Text(_), _) => {}
        }
    }

    fn to_py<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(match self {
            Column::Float(v) => PyArray1::from_slice(py, v).into_any(),
            Column::Int(v) => PyArray1::from_slice(py, v).into_any(),
            Column::Text(v) => PyList::new(py, v)?.into_any(),
        })
    }
}

/// Named columns filled row by row.
#[derive(Default)]
struct Table {
    names: Vec<String>,
    columns: Vec<Column>,
}

impl Table {
    fn new(names: Vec<String>) -> Self {
        Self {
            names,
            columns: Vec::new(),
        }
    }

    fn push(&mut self, row: Vec<Cell>) {
        if self.columns.is_empty() {
            self.columns = row.iter().map(Column::of).collect();
        }
        for (column, cell) in self.columns.iter_mut().zip(row) {
            column.push(cell);
        }
    }

    /// A dict of columns (empty arrays when there was no row).
    fn to_py<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (k, name) in self.names.iter().enumerate() {
            match self.columns.get(k) {
                Some(column) => dict.set_item(name, column.to_py(py)?)?,
                None => dict.set_item(name, PyArray1::<f64>::zeros(py, 0, false))?,
            }
        }
        Ok(dict)
    }
}

/// A recorder keeping a run as columns, with its running summary; it checks for Ctrl-C
/// every [`SIGNAL_CHECK_STEPS`] steps.
struct ColumnRecorder {
    header: RunHeader,
    steps: Table,
    contacts: Table,
    summary: SummaryBuilder,
    interrupted: Option<PyErr>,
}

impl ColumnRecorder {
    fn new() -> Self {
        Self {
            header: RunHeader::default(),
            steps: Table::default(),
            contacts: Table::new(contact_column_names()),
            summary: SummaryBuilder::new(RunHeader::default()),
            interrupted: None,
        }
    }
}

impl Recorder for ColumnRecorder {
    fn start(&mut self, header: RunHeader) -> Result<(), RecordError> {
        self.steps = Table::new(step_column_names(&header));
        self.summary.set_header(header.clone());
        self.header = header;
        Ok(())
    }

    fn record(&mut self, step: &StepRecord, analytical: Option<f64>) -> Result<(), RecordError> {
        if step.step.is_multiple_of(SIGNAL_CHECK_STEPS) {
            if let Err(e) = Python::attach(|py| py.check_signals()) {
                self.interrupted = Some(e);
                return Err(RecordError::Invalid {
                    path: self.header.scenario.clone(),
                    message: format!("interrupted at step {}", step.step),
                });
            }
        }
        self.summary.add(step);
        self.steps.push(step_cells(step, analytical));
        for row in contact_cells(step) {
            self.contacts.push(row);
        }
        Ok(())
    }
}

/// One run of a scenario with one solver.
#[pyclass(name = "Run", module = "contactbench", frozen)]
pub struct PyRun {
    header: RunHeader,
    failure: Option<String>,
    summary: RunSummary,
    steps: Py<PyDict>,
    contacts: Py<PyDict>,
}

#[pymethods]
impl PyRun {
    /// The scenario's name.
    #[getter]
    fn scenario(&self) -> String {
        self.header.scenario.clone()
    }

    /// The solver's text, as in the CLI's results (`ncp-admm:eps_rel=1e-8`).
    #[getter]
    fn solver(&self) -> String {
        self.header.solver.clone()
    }

    /// Time step (s).
    #[getter]
    fn dt(&self) -> f64 {
        self.header.dt
    }

    /// Names of the configuration coordinates (`nq`).
    #[getter]
    fn q_names(&self) -> Vec<String> {
        self.header.q_names.clone()
    }

    /// Names of the velocity coordinates (`nv`).
    #[getter]
    fn v_names(&self) -> Vec<String> {
        self.header.v_names.clone()
    }

    /// Why the run stopped early, or None.
    #[getter]
    fn failure(&self) -> Option<String> {
        self.failure.clone()
    }

    /// `completed`, `unconverged` (some steps' solver did not converge) or `failed`.
    #[getter]
    fn outcome(&self) -> String {
        self.summary.outcome.clone()
    }

    /// The summary (`summary.json` of the CLI: final state, energies, worst residuals,
    /// statuses, iteration and time statistics).
    #[getter]
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let value = serde_json::to_value(&self.summary).map_err(|e| internal(e.to_string()))?;
        from_value(py, &value)
    }

    /// One entry per column of `steps.csv` (same names, units in the names): numbers as
    /// float64 arrays (NaN where the CSV cell is empty), counts as int64 arrays, text
    /// columns (`solver_status`, `status`) as lists of str.
    #[getter]
    fn steps(&self, py: Python<'_>) -> Py<PyDict> {
        self.steps.clone_ref(py)
    }

    /// One entry per column of `contacts.csv` (one row per contact and step; `pair` as a
    /// list of str).
    #[getter]
    fn contacts(&self, py: Python<'_>) -> Py<PyDict> {
        self.contacts.clone_ref(py)
    }

    /// The configurations after each step, `(steps + 1) × nq` (row 0: initial state).
    #[getter]
    fn q<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        self.stack(py, "q_", &self.header.q_names)
    }

    /// The velocities after each step, `(steps + 1) × nv`.
    #[getter]
    fn v<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        self.stack(py, "v_", &self.header.v_names)
    }

    fn __repr__(&self) -> String {
        format!(
            "Run(scenario={:?}, solver={:?}, outcome={:?}, steps={})",
            self.header.scenario, self.header.solver, self.summary.outcome, self.summary.steps
        )
    }
}

impl PyRun {
    /// Columns `prefix + name` side by side.
    fn stack<'py>(
        &self,
        py: Python<'py>,
        prefix: &str,
        names: &[String],
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let steps = self.steps.bind(py);
        let mut columns = Vec::with_capacity(names.len());
        for name in names {
            let column = steps
                .get_item(format!("{prefix}{name}"))?
                .ok_or_else(|| internal(format!("column {prefix}{name} missing")))?;
            columns.push(column);
        }
        let rows = self.summary.steps + 1;
        let numpy = py.import("numpy")?;
        if columns.is_empty() {
            return Ok(PyArray2::zeros(py, [rows, 0], false));
        }
        let kwargs = PyDict::new(py);
        kwargs.set_item("axis", 1)?;
        Ok(numpy
            .call_method("stack", (columns,), Some(&kwargs))?
            .cast_into::<PyArray2<f64>>()?)
    }
}

/// What runs a job: a built-in solver through the CLI's runner, or a Python solver in a
/// simulator of the same scenario.
enum Plan {
    Builtin(Job),
    Python(CallableSolver),
}

/// Runs a scenario file as `contactbench run FILE [--solver S]... [--set path=value]...`:
/// the same loading and checks (errors before anything runs, naming file, line and field),
/// the scenario's solvers or `solvers` (texts keeping the scenario's settings unless they
/// override them, as `--solver`; `PythonSolver`s with their own settings), one run each,
/// in order. Each run's records come back as columns (see `Run`).
#[pyfunction]
#[pyo3(signature = (path, solvers = None, set = None))]
pub fn run_scenario(
    py: Python<'_>,
    path: PathBuf,
    solvers: Option<&Bound<'_, PyList>>,
    set: Option<Vec<String>>,
) -> PyResult<Vec<PyRun>> {
    let overrides = set.unwrap_or_default();
    let scenario = py.detach(|| {
        let scenario = Scenario::load(&path, &overrides).map_err(py_err)?;
        check(&scenario).map_err(simulation_err)?;
        Ok::<_, PyErr>(scenario)
    })?;
    let plans: Vec<Plan> = match solvers {
        None => batch::jobs(vec![scenario.clone()], None)
            .into_iter()
            .map(Plan::Builtin)
            .collect(),
        Some(list) => list
            .iter()
            .map(|item| plan(py, &scenario, &item))
            .collect::<PyResult<_>>()?,
    };
    plans
        .into_iter()
        .map(|p| run_plan(py, &scenario, p))
        .collect()
}

fn plan(py: Python<'_>, scenario: &Scenario, item: &Bound<'_, PyAny>) -> PyResult<Plan> {
    if let Ok(user) = item.cast::<PyPythonSolver>() {
        let solver = user.get().build(py, &Map::new()).map_err(py_err)?;
        return Ok(Plan::Python(solver));
    }
    let text: String = item.extract().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(
            "solvers: expected solver texts (str) or PythonSolver objects",
        )
    })?;
    let mut jobs = batch::jobs_overriding(vec![scenario.clone()], &[text]).map_err(py_err)?;
    jobs.pop()
        .map(Plan::Builtin)
        .ok_or_else(|| internal("no job for the solver"))
}

fn run_plan(py: Python<'_>, scenario: &Scenario, plan: Plan) -> PyResult<PyRun> {
    let mut recorder = ColumnRecorder::new();
    let result = py.detach(|| match plan {
        Plan::Builtin(job) => simulate_into(&job.scenario, job.factory.as_ref(), &mut recorder),
        Plan::Python(solver) => {
            let label = solver.name().to_string();
            World::build(scenario)
                .map_err(Into::into)
                .and_then(|world| {
                    let mut sim = Simulator::new(
                        world,
                        Box::new(solver),
                        scenario.step_parameters(),
                        scenario.external_forces.clone(),
                    );
                    sim.set_metrics(scenario.simulation.step_metrics);
                    drive(scenario, sim, &label, &mut recorder)
                })
        }
    });
    if let Some(interrupted) = recorder.interrupted.take() {
        return Err(interrupted);
    }
    let failure = result.map_err(simulation_err)?;
    let summary = recorder.summary.finish(failure.clone());
    Ok(PyRun {
        failure,
        summary,
        steps: recorder.steps.to_py(py)?.unbind(),
        contacts: recorder.contacts.to_py(py)?.unbind(),
        header: recorder.header,
    })
}
