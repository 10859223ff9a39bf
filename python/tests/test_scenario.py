"""Scenario runs from Python: the same records as `contactbench run` on the same file,
bit for bit; the physics of the sliding cube; errors naming file, line and field; a
user's Python solver driving the simulation."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

import contactbench as cb
from conftest import SCENARIOS, run_cli

CUBE_SLIDE = SCENARIOS / "cube_slide.yaml"
# Wall times differ from run to run; everything else is computed, and must not.
TIMING_COLUMNS = {
    "dynamics_time_s",
    "collision_time_s",
    "assembly_time_s",
    "solve_time_s",
    "integration_time_s",
    "step_time_s",
}
TIMING_SUMMARY = {"solve_time", "step_time"}


def read_csv_columns(path: Path) -> dict:
    """A CSV of the CLI as columns: numbers parsed (an empty cell is NaN), text kept."""
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    columns = {}
    for k, name in enumerate(header):
        cells = [row[k] for row in body]
        try:
            columns[name] = np.array([float(c) if c != "" else np.nan for c in cells])
        except ValueError:
            columns[name] = cells
    return columns


def assert_same_columns(ours: dict, theirs: dict, skip: set) -> None:
    assert list(ours) == list(theirs), "the same columns, in the same order"
    for name in ours:
        if name in skip:
            continue
        a, b = ours[name], theirs[name]
        if isinstance(b, list):
            assert list(a) == b, name
        else:
            a = np.asarray(a, dtype=np.float64)
            # Bit for bit: equal values, NaN (empty cell) at the same places.
            assert a.shape == b.shape, name
            assert np.array_equal(a, b, equal_nan=True), name


@pytest.fixture(scope="module")
def ncp_admm_run() -> cb.Run:
    (run,) = cb.run_scenario(CUBE_SLIDE, solvers=["ncp-admm"])
    return run


@pytest.mark.parametrize("solver", ["ncp-admm", "ccp-pgs:eps_rel=1e-8"])
def test_the_same_records_as_the_command_line(cli, tmp_path: Path, solver: str, ncp_admm_run):
    out = tmp_path / "results"
    done = run_cli(cli, "run", str(CUBE_SLIDE), "--solver", solver, "--out", str(out), "--json")
    manifest = json.loads(done.stdout)
    (entry,) = manifest["runs"]
    cli_dir = out / entry["path"]
    if solver == "ncp-admm":
        run = ncp_admm_run
    else:
        (run,) = cb.run_scenario(CUBE_SLIDE, solvers=[solver])
    assert run.solver == entry["summary"]["solver"]
    assert_same_columns(run.steps, read_csv_columns(cli_dir / "steps.csv"), TIMING_COLUMNS)
    assert_same_columns(run.contacts, read_csv_columns(cli_dir / "contacts.csv"), set())
    ours = {k: v for k, v in run.summary.items() if k not in TIMING_SUMMARY}
    theirs = json.loads((cli_dir / "summary.json").read_text())
    assert ours == {k: v for k, v in theirs.items() if k not in TIMING_SUMMARY}


def test_the_cube_slides_and_stops_where_coulomb_says(ncp_admm_run):
    """v0 = 1 m/s, μ = 0.4: the cube stops after v0² / (2 μ g) = 0.12742 m, at
    t = v0 / (μ g) = 0.255 s; NCP follows the analytical energy. Measured: stopped
    5.0e-4 m short (time discretization, dt = 1 ms), |y| 5.4e-15 m (round-off: the
    blocked ADMM kernels sum in another order than the x-z symmetry needs; 1.1e-16
    before them), largest energy gap 2.1e-7 J."""
    run = ncp_admm_run
    assert run.outcome == "completed" and run.failure is None
    steps = run.steps
    assert len(steps["step"]) == 501 and steps["step"][-1] == 500
    assert run.q.shape == (501, 7) and run.v.shape == (501, 6)
    assert np.array_equal(run.q[:, 0], steps["base_x_m"])
    stop = 1.0 / (2 * 0.4 * 9.81)
    assert abs(steps["base_x_m"][-1] - stop) <= 1e-3, steps["base_x_m"][-1]
    assert abs(steps["base_y_m"][-1]) <= 5e-14
    gap = np.nanmax(np.abs(steps["mechanical_energy_J"] - steps["analytical_energy_J"]))
    assert gap <= 1e-6, gap
    assert np.all(steps["converged"] == 1)
    assert set(steps["solver_status"][1:]) == {"converged"}


def test_overrides_and_the_scenarios_own_solvers():
    runs = cb.run_scenario(CUBE_SLIDE, set=["simulation.duration=0.01"])
    assert [r.solver.split(":")[0] for r in runs] == [
        "ncp-admm", "ncp-pgs", "ccp-admm", "ccp-pgs", "lcp-pgs", "raisim"]
    assert all(len(r.steps["step"]) == 11 for r in runs)
    assert runs[0].summary["steps"] == 10


def test_pandas_frames_or_a_clear_error_without_pandas():
    (run,) = cb.run_scenario(CUBE_SLIDE, solvers=["ncp-admm"], set=["simulation.duration=0.01"])
    try:
        import pandas
    except ImportError:
        with pytest.raises(ImportError, match="needs pandas"):
            cb.to_dataframes(run)
        return
    steps, contacts = cb.to_dataframes(run)
    assert isinstance(steps, pandas.DataFrame) and list(steps.columns) == list(run.steps)
    assert len(contacts) == len(run.contacts["step"])


@pytest.mark.parametrize(
    "kwargs, kind, field, pattern",
    [
        ({"set": ["simulation.dt=-1"]}, "invalid", "simulation.dt", r"cube_slide\.yaml:\d+: simulation\.dt: "),
        ({"solvers": ["nope"]}, "override", "--solver nope", r"^--solver nope: cube_slide: unknown solver 'nope'"),
        ({"set": ["simulation.dtt=1"]}, None, None, r"simulation\.dtt"),
    ],
)
def test_scenario_errors_name_the_file_line_and_field(cli, kwargs, kind, field, pattern):
    with pytest.raises(cb.ScenarioError, match=pattern) as caught:
        cb.run_scenario(CUBE_SLIDE, **kwargs)
    e = caught.value
    if kind is not None:
        assert (e.kind, e.field) == (kind, field)
    args = [f"--set={s}" for s in kwargs.get("set", [])] + [f"--solver={s}" for s in kwargs.get("solvers", [])]
    done = run_cli(cli, "run", str(CUBE_SLIDE), "--out", "/nonexistent/never-written", *args, check=False)
    # The command line adds "hint:" lines (did you mean) below the error it shares with Python.
    error_lines = [line for line in done.stderr.strip().splitlines() if not line.startswith("hint: ")]
    assert done.returncode == 2 and "\n".join(error_lines) == f"error: {e}"


def test_a_missing_scenario_file():
    with pytest.raises(cb.ScenarioError) as caught:
        cb.run_scenario(SCENARIOS / "absent.yaml")
    assert caught.value.kind == "io" and caught.value.path.endswith("absent.yaml")


def test_a_python_solver_drives_the_simulation():
    """The cube slide with a user's NCP solver in Python (projected Jacobi, as in
    test_solvers.py): the trajectory of ncp-admm's (largest gap measured 2.0e-8)."""
    from test_solvers import jacobi_ncp

    user = cb.PythonSolver(jacobi_ncp, name="jacobi (python)", eps_rel=1e-6)
    (mine,) = cb.run_scenario(CUBE_SLIDE, solvers=[user], set=["simulation.duration=0.3"])
    (admm,) = cb.run_scenario(CUBE_SLIDE, solvers=["ncp-admm"], set=["simulation.duration=0.3"])
    assert mine.solver == "jacobi (python)" and mine.failure is None
    assert mine.outcome == "completed", mine.summary["solver_statuses"]
    gap = np.abs(mine.q - admm.q).max()
    assert gap <= 1e-7, gap


def test_a_failing_python_solver_fails_its_run_with_the_reason():
    def boom(problem):
        raise RuntimeError("diverged on purpose")

    (run,) = cb.run_scenario(CUBE_SLIDE, solvers=[cb.PythonSolver(boom)], set=["simulation.duration=0.01"])
    assert run.outcome == "failed"
    assert "the Python function raised RuntimeError: diverged on purpose" in run.failure
