"""contactbench from Python: the contact problem ``(G, g, mu, R)`` from numpy arrays,
every solver of the Rust crate by name, the same metrics, problem files (JSON, FCLIB
HDF5, npz), robots, and scenario runs as columns of numbers.

A thin layer over the Rust crate (the extension module ``contactbench._native``): the
computations, checks and error messages are the crate's.

>>> import numpy as np, contactbench as cb
>>> p = cb.ContactProblem(np.eye(3), [0.0, 0.0, -1.0], [0.5])
>>> r = cb.solve(p, "ncp-admm", eps_rel=1e-10)
>>> r.status, bool(abs(r.lambda_[2] - 1.0) < 1e-9)
('converged', True)
"""

from __future__ import annotations

from typing import Any, Tuple

from . import errors
from ._native import (
    ContactProblem,
    ProblemFile,
    PythonSolver,
    Robot,
    Run,
    SolveReport,
    Simulator,
    SolverRun,
    ccp_residual,
    compare,
    comparison_table,
    internal_forces,
    lcp_residual,
    load_robot,
    metrics,
    model_criteria,
    ncp_criterion,
    raisim_residual,
    read_lambda,
    read_problem,
    relative_criterion,
    run_scenario,
    run_trajectory,
    solve,
    solver_ids,
    write_problem,
    write_run,
)
from .viewer import export_rerun
from .errors import (
    ContactbenchError,
    DerivativeError,
    DynamicsError,
    ModelError,
    ProblemError,
    ProblemFileError,
    ProblemFileExistsError,
    RecordError,
    ScenarioError,
    SolverError,
    StepError,
)


def to_dataframes(run: Run) -> Tuple[Any, Any]:
    """A run's records as two pandas DataFrames, ``(steps, contacts)``, with the
    columns of the CLI's ``steps.csv`` and ``contacts.csv``. Needs pandas."""
    try:
        import pandas
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "contactbench.to_dataframes needs pandas (pip install pandas); "
            "run.steps and run.contacts are the same columns as numpy arrays"
        ) from e
    return pandas.DataFrame(run.steps), pandas.DataFrame(run.contacts)


__all__ = [
    "ContactProblem",
    "ProblemFile",
    "PythonSolver",
    "Robot",
    "Run",
    "Simulator",
    "SolveReport",
    "SolverRun",
    "ccp_residual",
    "compare",
    "comparison_table",
    "internal_forces",
    "lcp_residual",
    "load_robot",
    "metrics",
    "model_criteria",
    "ncp_criterion",
    "raisim_residual",
    "read_lambda",
    "read_problem",
    "relative_criterion",
    "run_scenario",
    "run_trajectory",
    "solve",
    "solver_ids",
    "to_dataframes",
    "export_rerun",
    "write_problem",
    "write_run",
    "errors",
    "ContactbenchError",
    "DynamicsError",
    "ModelError",
    "ProblemError",
    "ProblemFileError",
    "ProblemFileExistsError",
    "RecordError",
    "ScenarioError",
    "SolverError",
    "StepError",
    "DerivativeError",
]
