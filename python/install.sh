#!/usr/bin/env bash
# Builds the Python package `contactbench` (PyO3 + maturin) into a virtual environment
# and, with --test, runs its pytest suite; each step says what it does, and the build
# shows cargo's progress (a first release build takes minutes).
#
#   python/install.sh                 # venv python/.venv, release build, installed
#   python/install.sh --test          # the same, then pytest
#   VENV=/path/venv python/install.sh # another venv (created if missing)
#
# Environment: PYTHON (interpreter for the venv, default python3), VENV, PROFILE
# (cargo profile, default release; .ci/run uses `dev`, unoptimized, to build sooner),
# CARGO_TARGET_DIR (default: python/target),
# JOBS (cargo -j, default 1: the machines this runs on are shared).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${VENV:-$here/.venv}"
python="${PYTHON:-python3}"
profile="${PROFILE:-release}"
jobs="${JOBS:-1}"
run_tests=0
for arg in "$@"; do
  case "$arg" in
    --test) run_tests=1 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
  esac
done

command -v cargo >/dev/null || { echo "install.sh: cargo not found: install Rust (https://rustup.rs)" >&2; exit 2; }
command -v "$python" >/dev/null || { echo "install.sh: $python not found: set PYTHON to a Python >= 3.9" >&2; exit 2; }

step() { echo "install.sh: [$1/$total] $2" >&2; }
total=3
if [ "$run_tests" = 1 ]; then total=4; fi

if [ ! -x "$venv/bin/python" ]; then
  step 1 "creating the venv $venv"
  "$python" -m venv "$venv" || {
    echo "install.sh: could not create the venv $venv ($python -m venv; on Debian: apt install python3-venv)" >&2
    exit 2
  }
else
  step 1 "using the venv $venv"
fi
# maturin builds, numpy is the package's one dependency, pytest runs the tests.
if ! "$venv/bin/python" -c "import maturin, numpy, pytest" 2>/dev/null; then
  step 2 "installing maturin, numpy and pytest from PyPI into the venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "maturin>=1.5,<2" numpy pytest || {
    echo "install.sh: pip could not install maturin, numpy and pytest into $venv:" >&2
    echo "  no network access to PyPI? Install them by hand (or point VENV to an env that has them)." >&2
    exit 2
  }
else
  step 2 "maturin, numpy and pytest are in the venv"
fi
# The viewer's tests read recordings with the Rerun SDK (a 170 MB wheel): --test only.
if [ "$run_tests" = 1 ] && ! "$venv/bin/python" -c "import rerun" 2>/dev/null; then
  echo "install.sh: installing rerun-sdk from PyPI into the venv (the viewer's tests need it)" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "rerun-sdk>=0.41,<0.42" || {
    echo "install.sh: pip could not install rerun-sdk into $venv (the viewer's tests read .rrd files with it):" >&2
    echo "  no network access to PyPI, or no wheel for this platform? Install it by hand (pip install rerun-sdk)." >&2
    exit 2
  }
fi

cd "$here"
step 3 "building the Rust extension (cargo profile $profile, -j $jobs; minutes the first time, \
seconds after) and installing it into the venv"
start=$(date +%s)
VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" \
  "$venv/bin/maturin" develop --profile "$profile" --jobs "$jobs" \
  ${CARGO_TARGET_DIR:+--target-dir "$CARGO_TARGET_DIR"}
echo "install.sh: contactbench installed in $venv (profile $profile, $(( $(date +%s) - start )) s)" >&2

if [ "$run_tests" = 1 ]; then
  step 4 "running the package's tests (pytest)"
  (cd "$here" && "$venv/bin/python" -m pytest -q)
fi
