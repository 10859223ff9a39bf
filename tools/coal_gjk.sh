#!/usr/bin/env bash
# coal 3's GJK, Polyak and Nesterov on the problems of the gjk-tab1 page, beside ours.
#
#   contactbench paper --paper collision --only gjk-tab1 --out DIR    # our times + problems
#   tools/coal_gjk.sh DIR/gjk-tab1 MESH_ROOT [RUNS]                  # coal's, and the table
#
# MESH_ROOT is the directory the page's mesh names are relative to (the "Meshes:" line of
# its Setup: <cache>/example-robot-data-all-6.0.0/share/example-robot-data-all/robots for a
# full run). A virtual environment under target/coal-venv gets the pin wheel (Pinocchio
# 4.1.0 with coal 3.0.3) and cmeel-eigen (Eigen's headers, which the wheel does not ship);
# tools/coal_gjk.cpp is compiled against the wheel's libcoal with g++ -O3 (Python cannot
# time a call that takes less than its own 2 µs of overhead), run on the page's problems,
# and tools/coal_compare.py prints the side-by-side table.
set -euo pipefail
cd "$(dirname "$0")/.."
page=${1:?usage: tools/coal_gjk.sh PAGE_DIR MESH_ROOT [RUNS]}
root=${2:?usage: tools/coal_gjk.sh PAGE_DIR MESH_ROOT [RUNS]}
runs=${3:-100}
venv=target/coal-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet pin==4.1.0 cmeel-eigen==3.4.1
prefix=$("$venv/bin/python" -c 'import cmeel, sys; print(cmeel.__file__.rsplit("/cmeel/", 1)[0] + "/cmeel.prefix")')
g++ -O3 -DNDEBUG -std=c++17 tools/coal_gjk.cpp -o target/coal_gjk \
  -I"$prefix/include" -I"$prefix/include/eigen3" \
  -L"$prefix/lib" -lcoal -Wl,-rpath,"$prefix/lib"
target/coal_gjk "$page/gjk-tab1-problems.csv" "$root" "$runs" > "$page/coal.csv"
python3 tools/coal_compare.py "$page/gjk-tab1.csv" "$page/coal.csv"
