#!/usr/bin/env python3
"""Transcribes the explicit contact problems of ContactBench's own tests into contactbench
problem files (JSON: G, g, mu, optional lambda), for tests/solvers/contactbench_problems.rs.

Source: Simple-Robotics/ContactBench, commit 76fd04b (BSD-2-Clause), files
tests/solvers.cpp, tests/python/test_solvers.py and tests/python/data/{sliding_cube,
2cubes_t0}.npz. Only numbers are taken (matrices G / A, vectors g / b, friction
coefficients, and the reference solutions `sol` / `lam0` the tests give); no code.
A problem that several tests share is written once; README.md in the output directory
lists, per file, the tests it comes from. `lambda` is the test's reference solution
`sol` when it compares with one, else its explicit starting point `x0` (raisim's tests),
else the recorded `lam0` (sliding_cube.npz).

Usage (numpy only; the repository mirror is a bare git directory):

    python3 tools/transcribe_contactbench.py /path/to/ContactBench.git tests/data/contactbench
"""

import ast
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

COMMIT = "76fd04b"


def show(repo, path, binary=False):
    out = subprocess.run(
        ["git", "-C", repo, "show", f"{COMMIT}:{path}"], check=True, capture_output=True
    ).stdout
    return out if binary else out.decode()


def numbers(text):
    return [float(x) for x in re.findall(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?", text)]


def cpp_cases(source):
    """(test name, problem) for every BOOST test whose G, g and mu are explicit."""
    cases = []
    for m in re.finditer(r"BOOST_AUTO_TEST_CASE\((\w+)\)\s*\{(.*?)\n\}", source, re.S):
        name, body = m.group(1), m.group(2)
        body = re.sub(r"//[^\n]*", "", body)
        if "Random" in body:
            continue
        # The first problem of a test is set up before its first ContactProblem; a test
        # may change g afterwards for a second one (not transcribed).
        setup = body.split("cb::ContactProblem", 1)[0]
        nc = re.search(r"int nc = (\d+);", body)
        nv = re.search(r"int nv = (\d+);", body)
        env = {"nc": int(nc.group(1)) if nc else 0, "nv": int(nv.group(1)) if nv else 0}
        values = {}
        for v, dims in re.findall(r"(?:MatrixXs|VectorXs) (\w+) = \w+::Zero\(([^;]*)\);", body):
            if v in values:
                continue
            # The reference solution is complete where a test first compares with it; the
            # starting point x0 where the test first solves from it.
            if v == "sol":
                text = body.split(f"isApprox({v}", 1)[0]
            elif v == "x0":
                text = body.split("solver.solve(", 1)[0]
            else:
                text = setup
            shape = tuple(eval(d, {}, env) for d in dims.split(","))  # noqa: S307 (sizes)
            arr = np.zeros(shape if len(shape) == 2 else shape[0])
            first = re.search(rf"\n\s*{v} << ([^;]*);", text)
            if first:
                arr = np.array(numbers(first.group(1))).reshape(arr.shape)
            for idx, val in re.findall(rf"\n\s*{v}\(([\d, ]+)\) = ([-+\d.e]+);", text):
                index = tuple(int(i) for i in idx.split(","))
                arr[index if len(index) > 1 else index[0]] = float(val)
            values[v] = arr
        mus = re.search(r"std::vector<T> mus = \{([^}]*)\};", setup)
        G = values.get("A", values.get("G"))
        g = values.get("b", values.get("g"))
        if G is None or g is None or mus is None:
            continue
        case = {"G": G, "g": g.ravel(), "mu": numbers(mus.group(1))}
        if "sol" in values and np.any(values["sol"]) and "isApprox(sol" in body:
            case["lambda"] = values["sol"].ravel()
        elif "x0" in values and np.any(values["x0"]):
            # The test's explicit starting point (a warm start).
            case["lambda"] = values["x0"].ravel()
        cases.append((name, case))
    return cases


def literal_array(node):
    """The literal argument of np.array(...), or None."""
    if (
        isinstance(node, ast.Call)
        and getattr(node.func, "attr", None) == "array"
        and node.args
    ):
        try:
            return np.array(ast.literal_eval(node.args[0]), dtype=float)
        except ValueError:
            return None
    return None


def python_cases(source):
    cases = []
    for fn in ast.parse(source).body:
        if not isinstance(fn, ast.FunctionDef):
            continue
        arrays, mus = {}, None
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name):
                    arr = literal_array(node.value)
                    if arr is not None:
                        arrays.setdefault(target.id, arr)
                    elif target.id == "mus":
                        try:
                            mus = [float(x) for x in ast.literal_eval(node.value)]
                        except ValueError:
                            pass
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", None) == "ContactProblem"
                and len(node.args) == 3
                and isinstance(node.args[2], ast.List)
                and mus is None
            ):
                mus = [float(x) for x in ast.literal_eval(node.args[2])]
        G = arrays.get("G", arrays.get("A"))
        g = arrays.get("g", arrays.get("b"))
        if G is None or g is None or mus is None or G.shape[0] != 3 * len(mus):
            continue
        cases.append((fn.name, {"G": G, "g": g.ravel(), "mu": mus}))
    return cases


def main():
    repo, out = sys.argv[1], Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    found = [("tests/solvers.cpp", n, c) for n, c in cpp_cases(show(repo, "tests/solvers.cpp"))]
    found += [
        ("tests/python/test_solvers.py", n, c)
        for n, c in python_cases(show(repo, "tests/python/test_solvers.py"))
    ]
    for stem in ["sliding_cube", "2cubes_t0"]:
        data = np.load(io.BytesIO(show(repo, f"tests/python/data/{stem}.npz", binary=True)))
        case = {"G": data["G"], "g": data["g"].ravel(), "mu": data["mus"].tolist()}
        if "lam0" in data.files:
            case["lambda"] = data["lam0"].ravel()
        found.append((f"tests/python/data/{stem}.npz", stem, case))
    files = {}
    for path, name, case in found:
        key = json.dumps(
            [np.asarray(case["G"]).tolist(), case["g"].tolist(), case["mu"]], sort_keys=True
        )
        if key not in files:
            files[key] = {"case": case, "sources": []}
        files[key]["sources"].append(f"{path}: {name}")
        if "lambda" in case:
            files[key]["case"]["lambda"] = case["lambda"]
    lines = []
    for entry in files.values():
        case, first = entry["case"], entry["sources"][0]
        n = len(case["mu"])
        stem = re.sub(r"\W+", "_", first.split(": ")[1]).strip("_").lower()
        stem = f"{stem}_{n}c"
        doc = {"G": np.asarray(case["G"]).tolist(), "g": case["g"].tolist(), "mu": case["mu"]}
        if "lambda" in case:
            doc["lambda"] = np.asarray(case["lambda"]).ravel().tolist()
        (out / f"{stem}.json").write_text(json.dumps(doc) + "\n")
        lines.append(f"| `{stem}.json` | {n} | {'; '.join(entry['sources'])} |")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
