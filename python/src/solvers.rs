//! Solvers by name with settings from keyword arguments, a solve report with numpy
//! arrays, the comparison of the Rust crate (`solvers::compare`), and a user's solver
//! written in Python (`PythonSolver`) that goes through the same comparison path.

use contactbench::derivatives::{
    differentiate_report, DerivativeError, DerivativeSettings, ModeReport,
};
use contactbench::metrics::ProblemMetrics;
use contactbench::problem::{ContactModel, ContactProblem, ProblemError};
use contactbench::simulation::recorder::status_tag;
use contactbench::solvers::compare::{
    compare_repeated, comparison_table, Candidate, SolvedRun, SolverRun,
};
use contactbench::solvers::support::{iterate_status, model_criteria, passes};
use contactbench::solvers::{
    check_unused_tolerance, Algorithm, ContactSolver, Shell, SolveCall, SolveReport, SolveStatus,
    SolverError, SolverId, SolverSettings, SolverSpec,
};
use nalgebra::DVector;
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use serde_json::{Map, Value};

use crate::convert::{array1_slice, array2, from_value, to_map, vector};
use crate::errors::{internal, py_err};
use crate::problem::{checked_lambda, PyProblem};

/// The ids of the built-in solvers, in the order of design.md §4.
#[pyfunction]
pub fn solver_ids() -> Vec<&'static str> {
    SolverId::ALL.iter().map(SolverId::as_str).collect()
}

/// The map of a solver text (`SolverSpec::text_map`), then `settings` on top.
fn spec_map(text: &str, settings: &Map<String, Value>) -> Result<Map<String, Value>, SolverError> {
    let mut map = SolverSpec::text_map(text)?;
    map.extend(settings.clone());
    Ok(map)
}

/// A built-in solver's spec from its text and keyword settings: the text alone goes
/// through `SolverSpec::from_str` (as on the command line), with settings through
/// `SolverSpec::from_map` (as in a scenario file); the errors are the Rust ones.
fn spec_of(text: &str, settings: &Map<String, Value>) -> Result<SolverSpec, SolverError> {
    if settings.is_empty() {
        text.parse()
    } else {
        SolverSpec::from_map(spec_map(text, settings)?)
    }
}

/// The keyword arguments of a call, as a JSON map.
fn settings_of(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Map<String, Value>> {
    kwargs
        .map(to_map)
        .transpose()
        .map(Option::unwrap_or_default)
}

/// A contact model by name (`lcp`, `ccp`, `raisim`, `ncp`).
pub fn parse_model(name: &str) -> Result<ContactModel, SolverError> {
    serde_json::from_value(Value::String(name.to_string())).map_err(|_| {
        SolverError::InvalidSetting {
            field: "model".into(),
            value: name.to_string(),
            reason: "must be one of lcp, ccp, raisim, ncp".into(),
        }
    })
}

/// A model's name as in files.
pub fn model_name(model: ContactModel) -> String {
    match serde_json::to_value(model) {
        Ok(Value::String(s)) => s,
        _ => format!("{model:?}").to_lowercase(),
    }
}

/// A contact solver written in Python: `function(problem)` or, when the function takes
/// a second positional argument, `function(problem, warm_start)` (`warm_start` a `3n`
/// array or None), returns `λ` (`3n`) or `(λ, iterations)`. Its answer is judged like a built-in solver's: the criteria of its
/// `model`, the same metrics, status `converged` only when the tested criterion (`stop`,
/// `eps_rel`/`eps_abs`) passes its tolerance, else `stalled` at its iteration count; a
/// non-finite `λ` is a `numerical_error`, one beyond 1e150 `diverged`.
#[pyclass(name = "PythonSolver", module = "contactbench", frozen)]
pub struct PyPythonSolver {
    function: Py<PyAny>,
    takes_warm_start: bool,
    name: String,
    model: ContactModel,
    settings: Map<String, Value>,
}

#[pymethods]
impl PyPythonSolver {
    /// `function`, a name (default: the function's `__name__`), the model whose criteria
    /// judge it (`ncp` by default) and shared settings (`stop`, `eps_rel`, `eps_abs`, ...).
    #[new]
    #[pyo3(signature = (function, name = None, model = "ncp", **settings))]
    fn new(
        function: &Bound<'_, PyAny>,
        name: Option<String>,
        model: &str,
        settings: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        if !function.is_callable() {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "PythonSolver: function must be callable",
            ));
        }
        let name = match name {
            Some(n) => n,
            None => function
                .getattr("__name__")
                .and_then(|n| n.extract::<String>())
                .unwrap_or_else(|_| "python".to_string()),
        };
        let solver = Self {
            function: function.clone().unbind(),
            takes_warm_start: takes_two_arguments(function)?,
            name,
            model: parse_model(model).map_err(py_err)?,
            settings: settings_of(settings)?,
        };
        solver.build(function.py(), &Map::new()).map_err(py_err)?;
        Ok(solver)
    }

    /// The solver's name.
    #[getter]
    fn name(&self) -> String {
        self.name.clone()
    }

    /// The contact model that judges it.
    #[getter]
    fn model(&self) -> String {
        model_name(self.model)
    }

    fn __repr__(&self) -> String {
        format!(
            "PythonSolver(name={:?}, model={:?})",
            self.name,
            self.model()
        )
    }
}

impl PyPythonSolver {
    /// The Rust solver, with `extra` settings over the solver's own (checked as the
    /// built-in solvers' settings: unknown names, ranges, an unused tolerance).
    pub(crate) fn build(
        &self,
        py: Python<'_>,
        extra: &Map<String, Value>,
    ) -> Result<CallableSolver, SolverError> {
        let mut map = self.settings.clone();
        map.extend(extra.clone());
        let given: Vec<String> = map.keys().cloned().collect();
        let settings: SolverSettings = serde_json::from_value(Value::Object(map)).map_err(|e| {
            SolverError::InvalidParameter {
                solver: self.name.clone(),
                message: e.to_string(),
            }
        })?;
        settings.validate()?;
        check_unused_tolerance(&settings, given.iter().map(String::as_str))?;
        Shell::wrap(
            self.name.clone(),
            self.model,
            settings,
            PythonAlgorithm {
                function: self.function.clone_ref(py),
                takes_warm_start: self.takes_warm_start,
                name: self.name.clone(),
                raised: None,
            },
        )
    }
}

/// Whether `function` can be called with two positional arguments (`inspect.signature`;
/// a callable without a signature is called with one).
fn takes_two_arguments(function: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = function.py();
    let inspect = py.import("inspect")?;
    let Ok(signature) = inspect.call_method1("signature", (function,)) else {
        return Ok(false);
    };
    let parameter = inspect.getattr("Parameter")?;
    let positional = [
        parameter.getattr("POSITIONAL_ONLY")?,
        parameter.getattr("POSITIONAL_OR_KEYWORD")?,
    ];
    let variadic = parameter.getattr("VAR_POSITIONAL")?;
    let mut count = 0;
    for p in signature
        .getattr("parameters")?
        .call_method0("values")?
        .try_iter()?
    {
        let kind = p?.getattr("kind")?;
        if kind.eq(&variadic)? {
            return Ok(true);
        }
        if positional.iter().any(|k| kind.eq(k).unwrap_or(false)) {
            count += 1;
        }
    }
    Ok(count >= 2)
}

/// The Rust side of a [`PyPythonSolver`]: the solver shell around a function called with
/// the interpreter attached (solves run detached, so built-in solvers run without it).
pub type CallableSolver = Shell<PythonAlgorithm>;

/// A Python function as a solver's algorithm: its answer is judged by the shared tests.
pub struct PythonAlgorithm {
    function: Py<PyAny>,
    takes_warm_start: bool,
    name: String,
    /// The exception the function raised at the last solve, re-raised by `solve`.
    pub(crate) raised: Option<PyErr>,
}

impl PythonAlgorithm {
    /// Calls the function: `λ` and its iteration count (1 when it gives none).
    fn call(
        &self,
        problem: &ContactProblem,
        warm_start: Option<&DVector<f64>>,
    ) -> PyResult<(DVector<f64>, usize)> {
        Python::attach(|py| {
            let p = Py::new(
                py,
                PyProblem {
                    inner: problem.clone(),
                },
            )?;
            let out = if self.takes_warm_start {
                let warm = warm_start.map(|w| PyArray1::from_slice(py, w.as_slice()));
                self.function.call1(py, (p, warm))
            } else {
                self.function.call1(py, (p,))
            }?;
            let out = out.bind(py);
            match out.cast::<PyTuple>() {
                Ok(pair) if pair.len() == 2 => Ok((
                    vector(&pair.get_item(0)?, "lambda")?,
                    pair.get_item(1)?.extract()?,
                )),
                _ => Ok((vector(out, "lambda")?, 1)),
            }
        })
    }

    /// The report of the function's answer, judged by the shared tests.
    fn judge(
        call: &SolveCall<'_>,
        lambda: DVector<f64>,
        iterations: usize,
    ) -> Result<SolveReport, SolverError> {
        let problem = call.problem;
        if lambda.len() != problem.dim() {
            return Err(SolverError::Problem(ProblemError::Size {
                field: "lambda",
                expected: problem.dim().to_string(),
                got: lambda.len().to_string(),
            }));
        }
        let status = iterate_status(&lambda, iterations, "forces").unwrap_or_else(|| {
            let criteria = model_criteria(call.model, problem, &lambda, &problem.velocity(&lambda));
            if passes(&criteria, call.settings) {
                SolveStatus::Converged
            } else {
                SolveStatus::Stalled {
                    iteration: iterations,
                }
            }
        });
        Ok(call.finish(lambda, status, iterations, None))
    }
}

impl Algorithm for PythonAlgorithm {
    fn solve(&mut self, call: SolveCall<'_>) -> Result<SolveReport, SolverError> {
        self.raised = None;
        match self.call(call.problem, call.warm_start) {
            Ok((lambda, iterations)) => Self::judge(&call, lambda, iterations),
            Err(e) => {
                // A PyErr's text is `TypeName: message`.
                let message = format!("the Python function raised {e}");
                self.raised = Some(e);
                Err(SolverError::InvalidParameter {
                    solver: self.name.clone(),
                    message,
                })
            }
        }
    }
}

/// A solve's answer and every metric of it (the Rust `SolvedRun`).
#[pyclass(name = "SolveReport", module = "contactbench", frozen)]
pub struct PySolveReport {
    solver: String,
    model: String,
    run: SolvedRun,
    derivative: Option<SolveDerivative>,
}

/// The derivative of a solve's answer (`solve(..., derivatives=True)`).
struct SolveDerivative {
    dlambda_dg: nalgebra::DMatrix<f64>,
    modes: Vec<ModeReport>,
    method: String,
    rank: (usize, usize),
}

impl SolveDerivative {
    /// The derivative of `report`'s answer, or why there is none.
    fn of(
        problem: &ContactProblem,
        model: ContactModel,
        report: &SolveReport,
    ) -> Result<Self, DerivativeError> {
        let d = differentiate_report(problem, model, report, &DerivativeSettings::default())?;
        let method = serde_json::to_value(d.method())
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        Ok(Self {
            dlambda_dg: d.jacobian_free_velocity()?,
            modes: d.modes().to_vec(),
            method,
            rank: d.rank(),
        })
    }
}

#[pymethods]
impl PySolveReport {
    /// The solver's name.
    #[getter]
    fn solver(&self) -> String {
        self.solver.clone()
    }

    /// The contact model it solves (`lcp`, `ccp`, `raisim`, `ncp`).
    #[getter]
    fn model(&self) -> String {
        self.model.clone()
    }

    /// With `solve(..., derivatives=True)`: `dlambda_dg` (`∂λ/∂g`, `3n × 3n`), `modes`
    /// (per contact `mode`: `take_off`, `stick` or `slide`, and `boundary_with`, the
    /// other mode on a mode boundary, else None), `method` and `rank`; else None.
    #[getter]
    fn derivatives<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(d) = &self.derivative else {
            return Ok(None);
        };
        let dict = PyDict::new(py);
        dict.set_item("dlambda_dg", array2(py, &d.dlambda_dg)?)?;
        let modes = PyList::empty(py);
        for m in &d.modes {
            let entry = PyDict::new(py);
            entry.set_item("mode", m.mode.as_str())?;
            entry.set_item("boundary_with", m.boundary_with.map(|o| o.as_str()))?;
            modes.append(entry)?;
        }
        dict.set_item("modes", modes)?;
        dict.set_item("method", &d.method)?;
        dict.set_item("rank", d.rank)?;
        Ok(Some(dict))
    }

    /// Forces `λ` (`3n`, N·s, `[t1, t2, n]` per contact).
    #[getter]
    fn lambda_<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        array1_slice(py, &self.run.lambda)
    }

    /// Contact velocity `c = (G + R) λ + g` (`3n`, m/s).
    #[getter]
    fn c<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        array1_slice(py, &self.run.c)
    }

    /// The status's name as in files: `converged`, `max_iterations`, `max_time`,
    /// `stalled`, `diverged`, `numerical_error`, `infeasible`, `refuted_by_ruler`.
    #[getter]
    fn status(&self) -> String {
        status_tag(&self.run.status)
    }

    /// The status in words (`stalled at iteration 12`).
    #[getter]
    fn status_text(&self) -> String {
        self.run.status.to_string()
    }

    /// True only for `converged`.
    #[getter]
    fn converged(&self) -> bool {
        self.run.status.is_converged()
    }

    /// Iterations performed.
    #[getter]
    fn iterations(&self) -> usize {
        self.run.iterations
    }

    /// The criterion tested (`relative` or `absolute`).
    #[getter]
    fn criterion(&self) -> String {
        self.run.criterion.to_string()
    }

    /// The tested criterion's value at `λ`.
    #[getter]
    fn residual(&self) -> f64 {
        self.run.residual
    }

    /// The relative criterion of the solver's model at `λ` (dimensionless).
    #[getter]
    fn relative_criterion(&self) -> f64 {
        self.run.criteria.relative
    }

    /// The absolute criterion of the solver's model at `λ` (the paper's, mixed units).
    #[getter]
    fn absolute_criterion(&self) -> f64 {
        self.run.criteria.absolute
    }

    /// Wall time of the solve (s); with `compare(..., repeat=N)`, the median of the N.
    #[getter]
    fn solve_time_s(&self) -> f64 {
        self.run.solve_time
    }

    /// With `compare(..., repeat=N)`: the times of the N solves as a dict with `median`,
    /// `min`, `max` (s) and `samples`; else None.
    #[getter]
    fn solve_time_spread_s<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(spread) = self.run.solve_time_spread else {
            return Ok(None);
        };
        let dict = PyDict::new(py);
        dict.set_item("median", spread.median)?;
        dict.set_item("min", spread.min)?;
        dict.set_item("max", spread.max)?;
        dict.set_item("samples", spread.samples)?;
        Ok(Some(dict))
    }

    /// The tested criterion per iteration, when `record_history=True`.
    #[getter]
    fn history<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
        self.run.history.as_deref().map(|h| array1_slice(py, h))
    }

    /// Every metric of the answer (`metrics(problem, λ, model)`).
    #[getter]
    fn metrics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        metrics_dict(py, &self.run.metrics)
    }

    /// Everything as a dict (`lambda`, `c`, `status`, ...), as `contactbench solve --json`.
    fn as_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let value = serde_json::to_value(&self.run).map_err(|e| internal(e.to_string()))?;
        let dict = from_value(py, &value)?.cast_into::<PyDict>()?;
        dict.set_item("solver", &self.solver)?;
        dict.set_item("model", &self.model)?;
        dict.set_item("lambda", self.lambda_(py))?;
        dict.set_item("c", self.c(py))?;
        dict.set_item("metrics", self.metrics(py)?)?;
        Ok(dict)
    }

    fn __repr__(&self) -> String {
        format!(
            "SolveReport(solver={:?}, status={:?}, iterations={}, {}={:.3e})",
            self.solver,
            self.status(),
            self.run.iterations,
            self.run.criterion,
            self.run.residual
        )
    }
}

/// Every metric as a dict: the one-number metrics under their file names (those not
/// computed, such as the internal forces without `J`, are None), `sliding_contacts`, and
/// `contacts`, one dict per contact.
pub fn metrics_dict<'py>(py: Python<'py>, m: &ProblemMetrics) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (name, value) in ProblemMetrics::COLUMNS.iter().zip(m.column_options()) {
        dict.set_item(*name, value)?;
    }
    dict.set_item("sliding_contacts", m.sliding_contacts)?;
    let contacts = serde_json::to_value(&m.contacts).map_err(|e| internal(e.to_string()))?;
    dict.set_item("contacts", from_value(py, &contacts)?)?;
    Ok(dict)
}

/// Solves `problem` with a built-in solver by name (`"ncp-admm"`, or the text form
/// `"ncp-admm:rho=1e-3"`) or a `PythonSolver`, settings and parameters as keyword
/// arguments (`eps_rel=1e-8`, `rho=1e-3`); the answer and every metric of it. With
/// `derivatives=True`, also the derivative of the answer (`SolveReport.derivatives`), or
/// `DerivativeError` when it has none (a solve that did not converge, ...).
#[pyfunction]
#[pyo3(signature = (problem, solver, warm_start = None, derivatives = false, **settings))]
pub fn solve(
    py: Python<'_>,
    problem: PyRef<'_, PyProblem>,
    solver: &Bound<'_, PyAny>,
    warm_start: Option<&Bound<'_, PyAny>>,
    derivatives: bool,
    settings: Option<&Bound<'_, PyDict>>,
) -> PyResult<PySolveReport> {
    let settings = settings_of(settings)?;
    let warm = warm_start
        .map(|w| checked_lambda(&problem.inner, w))
        .transpose()?;
    let inner = &problem.inner;
    if let Ok(user) = solver.cast::<PyPythonSolver>() {
        let mut callable = user.get().build(py, &settings).map_err(py_err)?;
        let result = py.detach(|| callable.solve(inner, warm.as_ref()));
        if let Some(raised) = callable.algorithm_mut().raised.take() {
            return Err(raised);
        }
        let report = result.map_err(py_err)?;
        let derivative = derivatives
            .then(|| SolveDerivative::of(inner, callable.model(), &report))
            .transpose()
            .map_err(py_err)?;
        return Ok(PySolveReport {
            solver: callable.name().to_string(),
            model: model_name(callable.model()),
            run: SolvedRun::from_report(inner, callable.model(), report),
            derivative,
        });
    }
    let text: String = solver.extract().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(
            "solver: expected a solver name (str) or a PythonSolver",
        )
    })?;
    let mut built = spec_of(&text, &settings)
        .and_then(|spec| spec.build())
        .map_err(py_err)?;
    let report = py
        .detach(|| built.solve(inner, warm.as_ref()))
        .map_err(py_err)?;
    let derivative = derivatives
        .then(|| SolveDerivative::of(inner, built.model(), &report))
        .transpose()
        .map_err(py_err)?;
    Ok(PySolveReport {
        solver: built.name().to_string(),
        model: model_name(built.model()),
        run: SolvedRun::from_report(inner, built.model(), report),
        derivative,
    })
}

/// One row of a comparison: the solver's name, model, and its report or its error.
#[pyclass(name = "SolverRun", module = "contactbench", frozen)]
pub struct PySolverRun {
    run: SolverRun,
}

#[pymethods]
impl PySolverRun {
    /// The solver's name.
    #[getter]
    fn solver(&self) -> String {
        self.run.solver.clone()
    }

    /// Its model, when it could be built.
    #[getter]
    fn model(&self) -> Option<String> {
        self.run.model.map(model_name)
    }

    /// Why it has no answer (could not be built, refused the input, raised), else None.
    #[getter]
    fn error(&self) -> Option<String> {
        match &self.run.outcome {
            contactbench::solvers::compare::RunOutcome::Error { error } => Some(error.clone()),
            _ => None,
        }
    }

    /// Its answer and metrics, when it ran (converged or not: see its status).
    #[getter]
    fn report(&self) -> Option<PySolveReport> {
        self.run.solved().map(|run| PySolveReport {
            solver: self.run.solver.clone(),
            model: self.run.model.map(model_name).unwrap_or_default(),
            run: run.clone(),
            derivative: None,
        })
    }

    fn __repr__(&self) -> String {
        match (self.run.solved(), self.error()) {
            (Some(run), _) => format!(
                "SolverRun(solver={:?}, status={:?}, iterations={})",
                self.run.solver,
                status_tag(&run.status),
                run.iterations
            ),
            (None, error) => format!(
                "SolverRun(solver={:?}, error={:?})",
                self.run.solver,
                error.unwrap_or_default()
            ),
        }
    }
}

/// Runs every solver on `problem` through the Rust comparison (`solvers::compare`):
/// `solvers` are names, texts (`"raisim:alpha=0.5"`) or `PythonSolver`s (default: every
/// built-in solver); `settings` apply to every one of them. A solver that cannot be
/// built or raises is a row with its error, and the others go on. `repeat` solves each
/// solver that many times from the same start, each time freshly built: the answer is the
/// first, the time the median, with the spread in `report.solve_time_spread_s`.
#[pyfunction(name = "compare")]
#[pyo3(signature = (problem, solvers = None, warm_start = None, repeat = 1, **settings))]
pub fn py_compare(
    py: Python<'_>,
    problem: PyRef<'_, PyProblem>,
    solvers: Option<&Bound<'_, PyList>>,
    warm_start: Option<&Bound<'_, PyAny>>,
    repeat: usize,
    settings: Option<&Bound<'_, PyDict>>,
) -> PyResult<Vec<PySolverRun>> {
    if !(1..=MAX_REPEAT).contains(&repeat) {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "repeat: {repeat}, expected 1 to {MAX_REPEAT}"
        )));
    }
    let settings = settings_of(settings)?;
    let warm = warm_start
        .map(|w| checked_lambda(&problem.inner, w))
        .transpose()?;
    let rounds = (0..repeat)
        .map(|_| candidates_of(py, solvers, &settings))
        .collect::<PyResult<Vec<_>>>()?;
    let inner = &problem.inner;
    let runs = py.detach(|| compare_repeated(rounds.into_iter(), inner, warm.as_ref()));
    Ok(runs.into_iter().map(|run| PySolverRun { run }).collect())
}

/// The most solves `compare(..., repeat=N)` takes per solver (as `solve --repeat`).
const MAX_REPEAT: usize = 10_000;

/// One fresh set of the solvers to compare.
fn candidates_of(
    py: Python<'_>,
    solvers: Option<&Bound<'_, PyList>>,
    settings: &Map<String, Value>,
) -> PyResult<Vec<Candidate>> {
    Ok(match solvers {
        None => SolverId::ALL
            .iter()
            .map(|id| candidate(id.as_str(), &settings))
            .collect(),
        Some(list) => list
            .iter()
            .map(|item| {
                if let Ok(user) = item.cast::<PyPythonSolver>() {
                    let user = user.get();
                    let built = user
                        .build(py, &settings)
                        .map(|s| Box::new(s) as Box<dyn ContactSolver>);
                    Ok((user.name.clone(), built))
                } else {
                    let text: String = item.extract().map_err(|_| {
                        pyo3::exceptions::PyTypeError::new_err(
                            "solvers: expected solver names (str) or PythonSolver objects",
                        )
                    })?;
                    Ok(candidate(&text, &settings))
                }
            })
            .collect::<PyResult<_>>()?,
    })
}

fn candidate(text: &str, settings: &Map<String, Value>) -> Candidate {
    let built = spec_of(text, settings).and_then(|spec| spec.build());
    (text.to_string(), built)
}

/// The comparison as the plain-text table of `contactbench solve --all`.
#[pyfunction(name = "comparison_table")]
pub fn py_comparison_table(runs: Vec<PyRef<'_, PySolverRun>>) -> String {
    let runs: Vec<SolverRun> = runs.iter().map(|r| r.run.clone()).collect();
    comparison_table(&runs)
}
