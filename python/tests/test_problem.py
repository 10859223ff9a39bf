"""ContactProblem from numpy: the Rust constructor's checks, its error classes and
messages (the same text as the command line's), the metrics of known answers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import contactbench as cb
from conftest import run_cli

G1 = np.eye(3)
G1_FREE = np.array([0.0, 0.0, -1.0])


def unit_problem() -> cb.ContactProblem:
    """One contact, G = I, pushed into the ground at 1 m/s: λ* = (0, 0, 1), c* = 0."""
    return cb.ContactProblem(G1, G1_FREE, [0.5])


def test_problem_from_numpy_keeps_its_data():
    G = np.array([[2.0, 0.1, 0.0], [0.1, 1.0, 0.2], [0.0, 0.2, 3.0]])
    p = cb.ContactProblem(G, [0.1, -0.2, -1.5], np.array([0.7]), R=[1e-3, 1e-3, 2e-3])
    assert p.num_contacts == 1 and p.dim == 3
    assert np.array_equal(p.G, G)
    assert np.array_equal(p.g, [0.1, -0.2, -1.5])
    assert np.array_equal(p.mu, [0.7])
    assert np.array_equal(p.R, [1e-3, 1e-3, 2e-3])
    assert p.J is None
    assert p.velocity_scale == 1.5
    assert p.notes == []
    lam = np.array([0.1, 0.0, 0.5])
    assert np.array_equal(p.velocity(lam), G @ lam + p.g + p.R * lam)


def test_round_off_asymmetry_is_symmetrized_and_noted():
    G = np.eye(3)
    G[0, 2] = 1e-7
    p = cb.ContactProblem(G, G1_FREE, [0.5])
    assert np.array_equal(p.G, p.G.T)
    assert p.G[0, 2] == 5e-8
    assert len(p.notes) == 1 and p.notes[0].startswith("G symmetrized as (G + G^T)/2")


@pytest.mark.parametrize(
    "args, kind, field, message",
    [
        (
            (np.eye(3), G1_FREE, [0.5, 0.5]),
            "size",
            "G",
            "G: expected 6x6 (3 x 2 contacts), got 3x3",
        ),
        ((np.eye(3), [0.0, 0.0], [0.5]), "size", "g", "g: expected 3, got 2"),
        ((np.eye(3), [0.0, np.nan, -1.0], [0.5]), "non_finite", "g", "g: non-finite value at 1"),
        ((np.eye(3), G1_FREE, [-0.5]), "negative", "mu", "mu[0] = -0.5 is negative"),
        (
            (np.eye(3), [0.0, 0.0, -1e200], [0.5]),
            "magnitude",
            "g",
            "g: |g[2]| = -1e200 exceeds 1e150 (products would overflow)",
        ),
        (
            ([[1.0, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], G1_FREE, [0.5]),
            "asymmetric",
            "G",
            "G is not symmetric: |G[0,1] - G[1,0]| = 5e-1, 5.00e-1 of max|G| "
            "(at most 1e-2 is taken as round-off and symmetrized)",
        ),
        (
            (np.diag([1.0, 1.0, -1.0]), G1_FREE, [0.5]),
            "indefinite",
            "G",
            "G is not positive semi-definite: smallest eigenvalue -1e0, -5.77e-1 of ‖G‖_F "
            "(down to -1e-6 is taken as round-off)",
        ),
    ],
)
def test_invalid_problems_raise_problem_error_naming_the_field(args, kind, field, message):
    with pytest.raises(cb.ProblemError) as caught:
        cb.ContactProblem(*args)
    e = caught.value
    assert str(e) == message
    assert (e.kind, e.field) == (kind, field)
    assert isinstance(e, cb.ContactbenchError) and isinstance(e, ValueError)


def test_negative_compliance_and_bad_jacobian_are_refused():
    with pytest.raises(cb.ProblemError, match=r"^R\[1\] = -1 is negative$"):
        cb.ContactProblem(G1, G1_FREE, [0.5], R=[0.0, -1.0, 0.0])
    with pytest.raises(cb.ProblemError, match=r"^J: expected 3 rows, got 2 rows$"):
        cb.ContactProblem(G1, G1_FREE, [0.5], J=np.ones((2, 4)))


def test_non_numeric_arrays_name_the_argument():
    with pytest.raises(TypeError, match="^G: expected an array of numbers"):
        cb.ContactProblem("abc", G1_FREE, [0.5])
    with pytest.raises(ValueError, match="^mu: expected a 1-D array"):
        cb.ContactProblem(G1, G1_FREE, [[0.5]])


def test_the_file_error_is_the_command_lines(cli, tmp_path: Path):
    """The same invalid data in a file: the Python exception's text is the CLI's error
    line, word for word, and names the file and the field."""
    path = tmp_path / "negative_mu.json"
    path.write_text(json.dumps({"G": G1.tolist(), "g": G1_FREE.tolist(), "mu": [-0.5]}))
    with pytest.raises(cb.ProblemFileError) as caught:
        cb.read_problem(path)
    e = caught.value
    assert str(e) == f"{path}: mu[0] = -0.5 is negative"
    assert (e.kind, e.path, e.field) == ("invalid", str(path), "mu")
    done = run_cli(cli, "solve", str(path), "--solver", "ncp-admm", check=False)
    assert done.returncode == 2
    assert done.stderr.strip() == f"error: {e}"


def test_metrics_of_known_answers():
    """λ = 0: ĉ = (0, 0, -1), ε_d = 1 (m/s), v_s = 1, λ_s = v_s / max G_kk = 1 ⇒ both NCP
    criteria are 1. λ = (0, 0, 2): c = (0, 0, 1), ε_c = 2, λ_s = 2 ⇒ absolute 2,
    relative 2 / (2 · 1) = 1. λ* = (0, 0, 1): every residual 0."""
    p = unit_problem()
    zero, double, exact = np.zeros(3), np.array([0.0, 0.0, 2.0]), np.array([0.0, 0.0, 1.0])
    assert cb.ncp_criterion(p, zero) == 1.0
    assert cb.relative_criterion(p, zero) == 1.0
    assert cb.ncp_criterion(p, double) == 2.0
    assert cb.relative_criterion(p, double) == 1.0
    assert cb.model_criteria(p, double, "ccp") == {"relative": 1.0, "absolute": 2.0}
    for f in (cb.ncp_criterion, cb.relative_criterion, cb.ccp_residual, cb.lcp_residual,
              cb.raisim_residual):
        assert f(p, exact) == 0.0
    m = cb.metrics(p, double)
    assert m["complementarity"] == 2.0
    assert m["dual_feasibility"] == 0.0
    assert m["signorini_violation"] == 2.0
    assert m["internal_forces"] is None  # no J
    assert len(m["contacts"]) == 1 and m["contacts"][0]["ncp_criterion"] == 2.0
    assert cb.internal_forces(p, exact) is None


def test_metrics_refuse_a_lambda_of_the_wrong_size():
    with pytest.raises(cb.ProblemError, match=r"^lambda: expected 3, got 2$") as caught:
        cb.metrics(unit_problem(), [0.0, 1.0])
    assert caught.value.field == "lambda"
    with pytest.raises(cb.SolverError, match="^setting model = soft: must be one of"):
        cb.metrics(unit_problem(), np.zeros(3), model="soft")
