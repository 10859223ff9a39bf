"""Shared fixtures: the repository's paths, the robots' cache, and the `contactbench`
binary of the same source (for the comparisons with the command line)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
SCENARIOS = REPO / "scenarios"

# The robots are fetched on first use into $CONTACTBENCH_CACHE (default: the crate's
# robots/cache), as for the Rust tests.
os.environ.setdefault("CONTACTBENCH_CACHE", str(REPO / "robots" / "cache"))


@pytest.fixture(scope="session")
def cli() -> Path:
    """The `contactbench` binary: $CONTACTBENCH_BIN, else the test-profile build of this
    repository (built here if out of date: the bit-for-bit tests need the same source)."""
    given = os.environ.get("CONTACTBENCH_BIN")
    if given:
        return Path(given)
    cargo = shutil.which("cargo")
    if cargo is None:
        pytest.fail("no `cargo` to build the contactbench binary; set CONTACTBENCH_BIN")
    subprocess.run(
        [cargo, "build", "--profile", "test", "--bin", "contactbench", "--quiet"],
        cwd=REPO,
        check=True,
    )
    return REPO / "target" / "debug" / "contactbench"


def run_cli(cli: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Runs the binary from the repository's root; its stdout and stderr as text."""
    done = subprocess.run(
        [str(cli), *args], cwd=REPO, capture_output=True, text=True, check=False
    )
    if check and done.returncode != 0:
        raise AssertionError(
            f"contactbench {' '.join(args)} exited {done.returncode}:\n{done.stderr}"
        )
    return done
