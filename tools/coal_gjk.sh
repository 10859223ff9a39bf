#!/usr/bin/env bash
# coal 3's GJK, Polyak and Nesterov beside ours on identical problems, in one run: our
# timing page (gjk-tab1 or cda-tab1) is run, it writes its problems (meshes and poses),
# coal times the same problems right after, and the two are compared.
#
#   tools/coal_gjk.sh OUT_DIR [PAGE] [RUNS]      # PAGE: gjk-tab1 (default) or cda-tab1
#
# Ours: $CONTACTBENCH_BIN (default target/release/contactbench; build it with `cargo build
# --release`) with `paper --only PAGE --out OUT_DIR --force`, full size (the whole
# example-robot-data wheel, fetched on first use). Coal: a virtual environment under
# target/coal-venv gets the pin wheel (Pinocchio 4.1.0 with coal 3.0.3) and cmeel-eigen
# (Eigen's headers, which the wheel does not ship); tools/coal_gjk.cpp is compiled against
# the wheel's libcoal with g++ -O3 (Python cannot time a call that takes less than its own
# 2 µs of overhead) and run on the page's problems with RUNS timed calls each (default
# 100, as the page). Written: OUT_DIR/PAGE/coal.csv and OUT_DIR/PAGE/coal-comparison.md
# (machine, load, commands and tools/coal_compare.py's tables), which is also printed.
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: tools/coal_gjk.sh OUT_DIR [gjk-tab1|cda-tab1] [RUNS]"
out=${1:?$usage}
id=${2:-gjk-tab1}
runs=${3:-100}
case "$id" in gjk-tab1 | cda-tab1) ;; *) echo "$usage" >&2; exit 2 ;; esac
bin=${CONTACTBENCH_BIN:-target/release/contactbench}
[ -x "$bin" ] || { echo "$bin: not found (cargo build --release)" >&2; exit 2; }

venv=target/coal-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet pin==4.1.0 cmeel-eigen==3.4.1
prefix=$("$venv/bin/python" -c 'import cmeel; print(cmeel.__file__.rsplit("/cmeel/", 1)[0] + "/cmeel.prefix")')
g++ -O3 -DNDEBUG -std=c++17 tools/coal_gjk.cpp -o target/coal_gjk \
  -I"$prefix/include" -I"$prefix/include/eigen3" \
  -L"$prefix/lib" -lcoal -Wl,-rpath,"$prefix/lib"

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
start=$(date +%s)
"$bin" paper --only "$id" --out "$out" --force
page="$out/$id"
target/coal_gjk "$page/$id-problems.csv" "$runs" > "$page/coal.csv"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
{
  echo "# $id: coal 3.0.3 beside contactbench on the same problems"
  echo
  echo "- Run: \`tools/coal_gjk.sh $out $id $runs\` ($(date -u +%Y-%m-%d), contactbench" \
    "$(git rev-parse --short HEAD), $(( $(date +%s) - start )) s)."
  echo "- Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores;" \
    "load average (1, 5, 15 min) $load_before before, $load_after after."
  echo "- Ours: \`$bin paper --only $id --out $out --force\`; coal: tools/coal_gjk.cpp" \
    "(g++ -O3) on \`$page/$id-problems.csv\`, $runs timed calls per problem, mean of the fastest 90 %."
  echo
  python3 tools/coal_compare.py "$page/$id.csv" "$page/coal.csv"
} > "$page/coal-comparison.md"
cat "$page/coal-comparison.md"
