"""Problem files: every format the Rust crate reads and writes, and its errors naming
the file, the line and the field."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import contactbench as cb
from conftest import DATA, run_cli


def random_problem(seed: int = 3, contacts: int = 2) -> cb.ContactProblem:
    rng = np.random.default_rng(seed)
    J = rng.standard_normal((3 * contacts, 12))
    return cb.ContactProblem(J @ J.T, rng.standard_normal(3 * contacts), [0.3, 0.8][:contacts])


@pytest.mark.parametrize("suffix", [".json", ".npz", ".hdf5"])
def test_write_then_read_gives_the_same_problem(tmp_path: Path, suffix: str):
    p = random_problem()
    lam = np.linspace(0.0, 1.0, p.dim)
    path = tmp_path / f"problem{suffix}"
    cb.write_problem(path, p, lam)
    back = cb.read_problem(path)
    assert np.array_equal(back.problem.G, p.G)
    assert np.array_equal(back.problem.g, p.g)
    assert np.array_equal(back.problem.mu, p.mu)
    assert np.array_equal(back.lambda_, lam)


def test_json_keeps_the_solver_spec(tmp_path: Path):
    path = tmp_path / "with_solver.json"
    cb.write_problem(path, random_problem(), solver={"solver": "raisim", "eps_rel": 1e-9})
    back = cb.read_problem(path)
    assert back.solver == {"solver": "raisim", "eps_rel": 1e-9}
    assert back.lambda_ is None
    assert json.loads(path.read_text())["solver"]["solver"] == "raisim"


def test_reference_files_of_every_format(cli):
    """The repository's FCLIB (local and global), npz and JSON files: the same problem
    size as the command line reads."""
    files = [
        DATA / "sliding_problem.json",
        DATA / "fclib" / "CubeH8.hdf5",
        DATA / "fclib" / "Box_Stacks-i0122-82-5.hdf5",
        DATA / "fclib" / "LMGC_GlobalFrictionContactProblem00046.hdf5",
        DATA / "fclib" / "contactbench_style.npz",
    ]
    for path in files:
        done = run_cli(cli, "solve", str(path), "--solver", "lcp-pgs:max_iter=1", "--json", check=False)
        assert done.returncode in (0, 1), done.stderr
        assert cb.read_problem(path).problem.num_contacts == json.loads(done.stdout)["contacts"]
    global_problem = cb.read_problem(DATA / "fclib" / "LMGC_GlobalFrictionContactProblem00046.hdf5")
    assert global_problem.notes, "a global FCLIB problem is reduced, and says so"
    sliding = cb.read_problem(DATA / "sliding_problem.json")
    assert np.array_equal(sliding.lambda_, [0.0, 0.5, 1.0])
    assert sliding.solver == {"solver": "raisim", "eps_rel": 1e-9}


def test_warm_start_files_read_as_the_command_line_does(tmp_path: Path):
    bare = tmp_path / "bare.json"
    bare.write_text("[0.0, 0.5, 1.0]")
    assert np.array_equal(cb.read_lambda(bare), [0.0, 0.5, 1.0])
    assert np.array_equal(cb.read_lambda(DATA / "sliding_problem.json"), [0.0, 0.5, 1.0])


@pytest.mark.parametrize(
    "name, kind, line, pattern",
    [
        ("missing_mu.json", "json", 4, r"line 4, column 1: missing field `mu`"),
        ("string_in_g.json", "json", 3, r"line 3, column \d+: g: invalid type: string \"fast\""),
        ("bad_syntax.json", "json", 4, r"line 4, column \d+: "),
    ],
)
def test_bad_files_name_the_file_line_and_field(cli, name, kind, line, pattern):
    path = DATA / name
    with pytest.raises(cb.ProblemFileError) as caught:
        cb.read_problem(path)
    e = caught.value
    assert str(e).startswith(f"{path}: ")
    assert e.path == str(path) and (e.kind, e.line) == (kind, line)
    assert __import__("re").search(pattern, str(e)), str(e)
    done = run_cli(cli, "solve", str(path), "--solver", "ncp-admm", check=False)
    assert done.returncode == 2 and done.stderr.strip() == f"error: {e}"


def test_missing_and_truncated_files(tmp_path: Path):
    with pytest.raises(cb.ProblemFileError) as caught:
        cb.read_problem(tmp_path / "absent.json")
    assert caught.value.kind == "io" and caught.value.path == str(tmp_path / "absent.json")
    truncated = tmp_path / "truncated.hdf5"
    truncated.write_bytes((DATA / "fclib" / "CubeH8.hdf5").read_bytes()[:2000])
    with pytest.raises(cb.ProblemFileError) as caught:
        cb.read_problem(truncated)
    assert caught.value.path == str(truncated)
    with pytest.raises(cb.ProblemFileError) as caught:
        cb.write_problem(tmp_path / "no" / "such" / "dir.json", random_problem())
    assert caught.value.kind == "io"
