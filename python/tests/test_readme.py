"""The README's Python example (the block under "From Python" in the repository's
README.md) runs as written, from the repository's root, and prints what it promises:
a converged solve, the user's solver in the comparison, the scenario's last position."""

from __future__ import annotations

import contextlib
import io
import os
import re

from conftest import REPO


def readme_python_blocks() -> list:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_the_readme_example_runs_as_written():
    blocks = readme_python_blocks()
    assert len(blocks) == 1, "one Python example in the README"
    code = blocks[0]
    assert len(code.strip().splitlines()) <= 12, "a short example"
    out = io.StringIO()
    here = os.getcwd()
    os.chdir(REPO)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    finally:
        os.chdir(here)
    printed = out.getvalue().splitlines()
    assert printed[0].startswith("converged "), printed
    rows = [line.split()[0] for line in printed[1:-1]]
    assert rows == ["ncp-admm", "raisim", "mine"], printed
    outcome, x = printed[-1].split()
    assert outcome == "completed" and 0.12 < float(x) < 0.13, printed
