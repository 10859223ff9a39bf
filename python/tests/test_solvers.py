"""Every solver by name with keyword settings; the same answer as the command line, bit
for bit; the comparison; a user's solver written in Python through the same path."""

from __future__ import annotations

import json

import numpy as np
import pytest

import contactbench as cb
from conftest import DATA, run_cli

SLIDING = DATA / "sliding_problem.json"


def unit_problem() -> cb.ContactProblem:
    """One contact, G = I, pushed into the ground at 1 m/s: λ* = (0, 0, 1)."""
    return cb.ContactProblem(np.eye(3), [0.0, 0.0, -1.0], [0.5])


@pytest.mark.parametrize("solver", cb.solver_ids())
def test_every_solver_solves_the_unit_problem(solver):
    r = cb.solve(unit_problem(), solver)
    assert r.status == "converged", r.status_text
    assert r.converged and r.criterion == "relative"
    assert r.residual <= 1e-6 and r.residual == r.relative_criterion
    assert r.solver == solver
    assert r.model in ("lcp", "ccp", "raisim", "ncp")
    assert r.lambda_.shape == (3,) and r.c.shape == (3,)
    # ccp-newton solves MuJoCo's soft problem, compliance α G_nn = 1e-3 added: its
    # λ_n is 1 / 1.001. Largest error measured: 6.2e-8 (ccp-admm, ncp-admm).
    expected = 1.0 / 1.001 if solver == "ccp-newton" else 1.0
    assert np.allclose(r.lambda_, [0.0, 0.0, expected], rtol=0.0, atol=5e-7), r.lambda_
    assert np.array_equal(r.c, unit_problem().velocity(r.lambda_))


def test_settings_as_keywords_and_as_text():
    p = cb.read_problem(SLIDING).problem
    loose = cb.solve(p, "ncp-admm", eps_rel=1e-4)
    tight = cb.solve(p, "ncp-admm", eps_rel=1e-10, max_iter=5000)
    text = cb.solve(p, "ncp-admm:eps_rel=1e-10,max_iter=5000")
    assert loose.residual <= 1e-4 and tight.residual <= 1e-10
    assert tight.iterations > loose.iterations
    assert np.array_equal(text.lambda_, tight.lambda_)
    absolute = cb.solve(p, "ncp-pgs", stop="absolute", eps_abs=1e-9)
    assert absolute.criterion == "absolute"
    assert absolute.residual == absolute.absolute_criterion <= 1e-9


def test_history_is_recorded_on_request():
    r = cb.solve(cb.read_problem(SLIDING).problem, "ccp-pgs", record_history=True)
    assert r.history is not None and len(r.history) == r.iterations
    assert r.history[-1] == r.residual
    assert cb.solve(unit_problem(), "ccp-pgs").history is None


def test_a_solver_that_stops_early_says_so():
    r = cb.solve(cb.read_problem(SLIDING).problem, "ncp-pgs", eps_rel=1e-12, max_iter=3)
    assert r.status == "max_iterations" and not r.converged
    assert r.iterations == 3 and r.residual > 1e-12


@pytest.mark.parametrize(
    "solver, settings, kind, field, pattern",
    [
        ("nope", {}, "unknown_solver", None, r"^unknown solver 'nope' \(known: lcp-pgs, "),
        ("ncp-admm", {"rhoo": 1.0}, "invalid_parameter", None, r"^solver ncp-admm: unknown field `rhoo`"),
        ("ncp-admm", {"eps_abs": 1e-8}, "invalid_setting", "eps_abs",
         r"^setting eps_abs = 1e-8: is the tolerance of stop: absolute"),
        ("ncp-admm", {"max_iter": 0}, "invalid_setting", "max_iter",
         r"^setting max_iter = 0: must be at least 1$"),
        ("ncp-admm:rho", {}, "invalid_spec", None, r"^solver specification 'ncp-admm:rho': 'rho' is not key=value$"),
    ],
)
def test_bad_solvers_and_settings_raise_solver_error(solver, settings, kind, field, pattern):
    with pytest.raises(cb.SolverError, match=pattern) as caught:
        cb.solve(unit_problem(), solver, **settings)
    assert (caught.value.kind, caught.value.field) == (kind, field)


def test_a_warm_start_of_the_wrong_size_is_refused():
    with pytest.raises(cb.ProblemError, match=r"^lambda: expected 3, got 6$"):
        cb.solve(unit_problem(), "ncp-admm", warm_start=np.zeros(6))


def test_a_converged_warm_start_is_returned_at_once():
    p = unit_problem()
    r = cb.solve(p, "ncp-admm", warm_start=[0.0, 0.0, 1.0])
    assert (r.status, r.iterations) == ("converged", 0)
    assert np.array_equal(r.lambda_, [0.0, 0.0, 1.0])


@pytest.mark.parametrize(
    "problem, spec",
    [
        (SLIDING, "ncp-admm:eps_rel=1e-10"),
        (SLIDING, "raisim"),
        (SLIDING, "ccp-ipm"),
        (DATA / "fclib" / "CubeH8.hdf5", "ncp-pgs:max_iter=200"),
        (DATA / "fclib" / "contactbench_style.npz", "lcp-pgs"),
    ],
)
def test_the_same_answer_as_the_command_line_bit_for_bit(cli, problem, spec):
    """`contactbench solve FILE --solver SPEC --json` and `solve(read_problem(FILE), SPEC)`:
    the same λ, c, status, iterations and criteria, to the last bit (JSON floats are
    printed in shortest round-trip form)."""
    done = run_cli(cli, "solve", str(problem), "--solver", spec, "--json", check=False)
    assert done.returncode in (0, 1), done.stderr
    out = json.loads(done.stdout)["solvers"][0]
    r = cb.solve(cb.read_problem(problem).problem, spec)
    assert r.lambda_.tolist() == out["lambda"]
    assert r.c.tolist() == out["c"]
    assert (r.status, r.iterations) == (out["status"], out["iterations"])
    assert r.residual == out["residual"]
    assert [r.relative_criterion, r.absolute_criterion] == [
        out["criteria"]["relative"], out["criteria"]["absolute"]]
    assert r.metrics["ncp_criterion"] == out["metrics"]["ncp_criterion"]


def test_compare_runs_every_builtin_and_keeps_going_after_errors():
    p = cb.read_problem(SLIDING).problem
    rows = cb.compare(p, eps_rel=1e-8)
    assert [r.solver for r in rows] == cb.solver_ids()
    assert all(r.error is None and r.report is not None for r in rows)
    table = cb.comparison_table(rows)
    assert all(s in table for s in cb.solver_ids())
    mixed = cb.compare(p, ["ncp-admm", "nope", "raisim:alpha=0.5"])
    assert mixed[0].report.converged
    assert mixed[1].report is None and mixed[1].error.startswith("unknown solver 'nope'")
    assert mixed[2].error is None


def test_compare_repeats_give_the_median_time_with_its_spread():
    p = cb.read_problem(SLIDING).problem
    once = cb.compare(p, ["ncp-admm"])[0].report
    assert once.solve_time_spread_s is None
    rows = cb.compare(p, ["ncp-admm", "nope", "lcp-pgs"], repeat=5)
    assert rows[1].error.startswith("unknown solver 'nope'")
    for row in (rows[0], rows[2]):
        spread = row.report.solve_time_spread_s
        assert spread["samples"] == 5
        assert spread["min"] <= spread["median"] <= spread["max"]
        assert row.report.solve_time_s == spread["median"]
    assert np.array_equal(rows[0].report.lambda_, once.lambda_)
    with pytest.raises(ValueError, match="repeat: 0, expected 1 to 10000"):
        cb.compare(p, ["ncp-admm"], repeat=0)


# A user's solver in Python: projected Jacobi on the NCP with the horizontal projection
# (Alg. 5's per-contact projection), damped.
def jacobi_ncp(problem: cb.ContactProblem, warm_start=None, damping=0.5, iterations=2000):
    G, mu = problem.G, problem.mu
    lam = np.zeros(problem.dim) if warm_start is None else warm_start.copy()
    for k in range(1, iterations + 1):
        c = problem.velocity(lam)
        new = lam.copy()
        for i in range(problem.num_contacts):
            s = slice(3 * i, 3 * i + 3)
            trial = lam[s] - damping * c[s] / G[s, s].diagonal().max()
            n = max(trial[2], 0.0)
            t = trial[:2]
            norm_t = np.linalg.norm(t)
            if norm_t > mu[i] * n:
                t = t * (mu[i] * n / norm_t)
            new[s] = [t[0], t[1], n]
        if np.abs(new - lam).max() <= 1e-14 * max(np.abs(new).max(), 1e-300):
            return new, k
        lam = new
    return lam, iterations


def test_a_python_solver_goes_through_the_same_comparison():
    p = cb.read_problem(SLIDING).problem
    user = cb.PythonSolver(jacobi_ncp, name="jacobi (python)")
    assert (user.name, user.model) == ("jacobi (python)", "ncp")
    rows = cb.compare(p, ["ncp-admm", user], eps_rel=1e-6)
    admm, mine = rows[0].report, rows[1].report
    assert rows[1].solver == "jacobi (python)" and rows[1].model == "ncp"
    assert mine.status == "converged" and mine.residual <= 1e-6
    assert 1 < mine.iterations < 2000
    # Judged by the same ruler: its metrics are metrics(problem, λ, model).
    same = cb.metrics(p, mine.lambda_, model="ncp")
    assert mine.metrics == same
    assert mine.relative_criterion == cb.relative_criterion(p, mine.lambda_)
    # Both within eps_rel = 1e-6 of the criterion; they differ by 1.1e-6 (measured).
    assert np.allclose(mine.lambda_, admm.lambda_, rtol=0.0, atol=1e-5)
    assert "jacobi (python)" in cb.comparison_table(rows)


def test_a_python_solver_is_judged_not_trusted():
    p = unit_problem()
    exact = cb.solve(p, cb.PythonSolver(lambda problem: np.array([0.0, 0.0, 1.0])))
    assert (exact.status, exact.iterations, exact.residual) == ("converged", 1, 0.0)
    lazy = cb.solve(p, cb.PythonSolver(lambda problem: (np.zeros(3), 7), name="lazy"))
    # λ = 0 scores 1 on the relative criterion (test_problem.py): not converged.
    assert (lazy.status, lazy.status_text, lazy.residual) == ("stalled", "stalled at iteration 7", 1.0)
    nan = cb.solve(p, cb.PythonSolver(lambda problem: np.full(3, np.nan)))
    assert nan.status == "numerical_error"
    huge = cb.solve(p, cb.PythonSolver(lambda problem: np.array([0.0, 0.0, 1e200])))
    assert huge.status == "diverged"
    absolute = cb.solve(p, cb.PythonSolver(lambda problem: np.zeros(3)), stop="absolute", eps_abs=2.0)
    assert (absolute.status, absolute.criterion, absolute.residual) == ("converged", "absolute", 1.0)


def test_a_python_solver_gets_the_warm_start_when_it_takes_one():
    seen = []

    def remember(problem, warm_start):
        seen.append(warm_start)
        return np.array([0.0, 0.0, 1.0]) if warm_start is None else warm_start

    r = cb.solve(unit_problem(), cb.PythonSolver(remember), warm_start=[0.0, 0.0, 1.0])
    assert r.converged and np.array_equal(seen[0], [0.0, 0.0, 1.0])
    assert cb.solve(unit_problem(), cb.PythonSolver(remember)).converged
    assert seen[1] is None


def test_a_python_solver_that_fails_raises_or_is_a_row_with_its_error():
    def boom(problem):
        raise ZeroDivisionError("no luck")

    with pytest.raises(ZeroDivisionError, match="no luck"):
        cb.solve(unit_problem(), cb.PythonSolver(boom))
    rows = cb.compare(unit_problem(), [cb.PythonSolver(boom), "ncp-admm"])
    assert rows[0].error == "solver boom: the Python function raised ZeroDivisionError: no luck"
    assert rows[0].model == "ncp" and rows[0].report is None
    assert rows[1].report.converged
    short = cb.PythonSolver(lambda problem: np.zeros(2), name="short")
    with pytest.raises(cb.SolverError, match=r"^lambda: expected 3, got 2$") as caught:
        cb.solve(unit_problem(), short)
    assert (caught.value.kind, caught.value.field) == ("problem", "lambda")
    with pytest.raises(cb.SolverError, match="unknown field `rho`"):
        cb.PythonSolver(boom, rho=1.0)
    with pytest.raises(TypeError, match="must be callable"):
        cb.PythonSolver(42)


def test_a_problem_made_from_numpy_gets_the_command_lines_answer_bit_for_bit(cli, tmp_path):
    """A problem built here from numpy arrays (not read from a file), solved here and by
    `contactbench solve` on the file `write_problem` made of it: the file holds the same
    bits, and both answers are the same to the last bit."""
    rng = np.random.default_rng(12)
    n = 4
    J = rng.standard_normal((3 * n, 7))
    G = J @ J.T + 1e-3 * np.eye(3 * n)
    G = 0.5 * (G + G.T)
    g = rng.standard_normal(3 * n)
    g[2::3] = -np.abs(g[2::3])
    mu = np.array([0.2, 0.5, 0.8, 1.0])
    p = cb.ContactProblem(G, g, mu)
    path = tmp_path / "from_numpy.json"
    cb.write_problem(path, p)
    back = cb.read_problem(path).problem
    assert np.array_equal(back.G, p.G) and np.array_equal(back.g, g)
    assert np.array_equal(back.mu, mu)
    for spec in ["ncp-admm:eps_rel=1e-9", "ncp-pgs:max_iter=300", "ccp-admm", "lcp-qp"]:
        done = run_cli(cli, "solve", str(path), "--solver", spec, "--json", check=False)
        assert done.returncode in (0, 1), done.stderr
        out = json.loads(done.stdout)["solvers"][0]
        r = cb.solve(p, spec)
        assert r.lambda_.tolist() == out["lambda"], spec
        assert r.c.tolist() == out["c"], spec
        assert (r.status, r.iterations) == (out["status"], out["iterations"]), spec
        assert [r.relative_criterion, r.absolute_criterion] == [
            out["criteria"]["relative"], out["criteria"]["absolute"]], spec


@pytest.mark.parametrize("spec", ["ncp-magic", "ncp-admm:rhoo=1", "ncp-admm:eps_abs=-1"])
def test_a_bad_solver_is_the_same_error_as_on_the_command_line(cli, spec):
    """An unknown solver, an unknown parameter, an invalid setting: the SolverError's text
    is what `contactbench solve` prints after `error:`, and both refuse it as an input
    error (exit code 2)."""
    with pytest.raises(cb.SolverError) as caught:
        cb.solve(cb.read_problem(SLIDING).problem, spec)
    done = run_cli(cli, "solve", str(SLIDING), "--solver", spec, check=False)
    assert done.returncode == 2, done.stderr + done.stdout
    said = [line.split(":", 1)[1].strip() for line in (done.stderr + done.stdout).splitlines()
            if line.startswith("error:")]
    assert said == [str(caught.value)]
