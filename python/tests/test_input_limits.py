"""Untrusted input from Python: long checks run without the interpreter lock, complex
arrays are refused rather than truncated to their real part, problem files are not
replaced unless asked, and files are read through the crate's caps."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

import contactbench as cb
from conftest import DATA


def singular_problem(dim: int):
    """A PSD G of rank dim / 2 (seeded): the eigenvalue check has to work on it."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal((dim, dim // 2))
    g = np.zeros(dim)
    g[2::3] = -1.0
    return a @ a.T, g, np.full(dim // 3, 0.5)


def build_time(dim: int) -> float:
    G, g, mu = singular_problem(dim)
    start = time.perf_counter()
    cb.ContactProblem(G, g, mu)
    return time.perf_counter() - start


def test_building_a_contact_problem_releases_the_interpreter_during_its_checks():
    # A size whose checks take at least 0.3 s on this build (debug builds are slower).
    dim = 150
    while build_time(dim) < 0.3 and dim < 2400:
        dim *= 2
    G, g, mu = singular_problem(dim)
    took = {}

    def build():
        start = time.perf_counter()
        cb.ContactProblem(G, g, mu)
        took["s"] = time.perf_counter() - start

    worker = threading.Thread(target=build)
    gaps = []
    last = time.perf_counter()
    worker.start()
    while worker.is_alive():
        time.sleep(0.002)
        now = time.perf_counter()
        gaps.append(now - last)
        last = now
    worker.join()
    assert took["s"] > 0.2, (dim, took)
    # Holding the lock, the build would stop this loop for its whole duration.
    assert max(gaps) < took["s"] / 2, (dim, took["s"], max(gaps))


@pytest.mark.parametrize("name", ["G", "g", "mu", "R"])
def test_complex_arrays_are_refused_not_truncated(name):
    args = {
        "G": np.eye(3),
        "g": np.array([0.0, 0.0, -1.0]),
        "mu": np.array([0.5]),
        "R": np.zeros(3),
    }
    args[name] = args[name] + 1e-3j
    with pytest.raises(
        TypeError, match=f"{name}: expected real numbers, got a complex array"
    ):
        cb.ContactProblem(args["G"], args["g"], args["mu"], R=args["R"])
    p = cb.ContactProblem(np.eye(3), [0.0, 0.0, -1.0], [0.5])
    with pytest.raises(TypeError, match="lambda: expected real numbers"):
        p.velocity([0.0, 0.0, 1.0 + 2.0j])


@pytest.mark.parametrize("extension", ["json", "npz", "hdf5"])
def test_write_problem_refuses_an_existing_file_unless_overwrite(tmp_path, extension):
    p = cb.ContactProblem(np.eye(3), [0.0, 0.0, -1.0], [0.5])
    path = tmp_path / f"problem.{extension}"
    path.write_text("the user's")
    with pytest.raises(cb.ProblemFileExistsError) as refused:
        cb.write_problem(path, p)
    assert isinstance(refused.value, FileExistsError)
    assert isinstance(refused.value, cb.ProblemFileError)
    assert refused.value.path == str(path)
    assert path.read_text() == "the user's"
    cb.write_problem(path, p, overwrite=True)
    assert cb.read_problem(path).problem.num_contacts == 1
    assert sorted(f.name for f in tmp_path.iterdir()) == [path.name]


def test_a_warm_start_over_its_size_cap_is_refused_before_it_is_read(tmp_path):
    # A sparse file one byte over the 64 MiB cap: refused from its size, unread. (The
    # endless streams, /dev/zero, are tested in Rust, under an allocator that refuses
    # large blocks: here a reader without the cap would take the machine's memory.)
    path = tmp_path / "big.json"
    with open(path, "wb") as f:
        f.write(b"[")
        f.truncate((64 << 20) + 1)
    with pytest.raises(cb.ProblemFileError, match="over the limit of 67108864 bytes") as refused:
        cb.read_lambda(path)
    assert refused.value.kind == "too_large"
    assert refused.value.path == str(path)


def test_json_with_a_byte_order_mark_is_read(tmp_path):
    text = (DATA / "sliding_problem.json").read_text(encoding="utf-8")
    path = tmp_path / "bom.json"
    path.write_text("\ufeff" + text, encoding="utf-8")
    assert cb.read_problem(path).problem.num_contacts == 1
    warm = tmp_path / "warm.json"
    warm.write_text("\ufeff[0.0, 0.5, 1.0]", encoding="utf-8")
    assert np.array_equal(cb.read_lambda(warm), [0.0, 0.5, 1.0])


def test_a_warm_start_of_the_wrong_shape_names_its_field(tmp_path: Path):
    path = tmp_path / "warm.json"
    path.write_text('{"lambda": [0.0, "x", 1.0]}')
    with pytest.raises(cb.ProblemFileError) as refused:
        cb.read_lambda(path)
    assert refused.value.field == "lambda[1]"
    assert refused.value.line is None
