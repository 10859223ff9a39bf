#!/usr/bin/env bash
# Instructions per steady simulation step, per stage, and the step's top functions,
# counted by callgrind: before/after figures of our own code that a busy machine does not
# move (wall-clock comparisons belong side by side in one run, see tools/mujoco_step.py).
#
#   tools/callgrind_step.sh BIN SCENARIO [bench-step options...]
#
# Runs `BIN bench-step SCENARIO --repeats 1 --settle S --steps N` twice under
# `valgrind --tool=callgrind`, with N = 1 and N = 1 + STEPS, collecting only inside the
# stepping function (FUNCTION, default `Simulator::step`; pass `--no-record` and
# FUNCTION='*Simulator::advance' for the step without record), and prints
# (I(1 + STEPS) − I(1)) / STEPS for the whole step and for every stage function found
# (their inclusive costs), then the top exclusive entries of the longer run.
# Environment: STEPS (default 1000), SETTLE (default 200), TOP (default 25), FUNCTION,
# STAGES (space-separated function names, default the simulator's stage functions).
# Needs valgrind (callgrind_annotate) and a binary with line tables
# (CARGO_PROFILE_RELEASE_DEBUG=line-tables-only cargo build --release).
set -euo pipefail
if [ $# -lt 2 ]; then
    sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
command -v valgrind >/dev/null || { echo "callgrind_step.sh: valgrind is not installed" >&2; exit 1; }
bin=$1
scenario=$2
shift 2
steps=${STEPS:-1000}
settle=${SETTLE:-200}
top=${TOP:-25}
function=${FUNCTION:-*Simulator::step}
stages=${STAGES:-"Simulator::dynamics_stage Simulator::collision_stage Simulator::assembly_stage Simulator::solve_stage Simulator::integration_stage Simulator::record step::contact_records"}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for n in 1 $((steps + 1)); do
    valgrind --tool=callgrind --callgrind-out-file="$out/run.$n" --toggle-collect="$function" \
        "$bin" bench-step "$scenario" --repeats 1 --settle "$settle" --steps "$n" "$@" \
        >"$out/stdout.$n" 2>"$out/stderr.$n" || { cat "$out/stderr.$n" >&2; exit 1; }
    callgrind_annotate --inclusive=yes "$out/run.$n" >"$out/inclusive.$n" 2>/dev/null
done
total() { grep -m1 'PROGRAM TOTALS' "$1" | awk '{gsub(",", "", $1); print $1}'; }
inclusive() {
    # The largest inclusive cost among the lines naming the function (its own entry).
    grep -E "[:]([a-z_:<>]*::)?$2 \[" "$1" | awk '{gsub(",", "", $1); print $1}' | sort -n | tail -1
}
long=$((steps + 1))
echo "$(basename "$bin") bench-step $scenario $*: instructions per step (settle $settle, $steps steps, collected in $function)"
printf '| %-40s | %12s |\n' "function" "Ir per step"
printf '|%s|%s|\n' "------------------------------------------" "--------------"
a=$(total "$out/inclusive.1")
b=$(total "$out/inclusive.$long")
printf '| %-40s | %12.0f |\n' "whole step" "$(echo "($b - $a) / $steps" | bc -l)"
for stage in $stages; do
    a=$(inclusive "$out/inclusive.1" "$stage" || true)
    b=$(inclusive "$out/inclusive.$long" "$stage" || true)
    [ -n "$b" ] || continue
    printf '| %-40s | %12.0f |\n' "$stage" "$(echo "(${b} - ${a:-0}) / $steps" | bc -l)"
done
echo
echo "top $top functions of the $long-step run, exclusive Ir per step (code inlined into a"
echo "function counted with it), and share of the collected total:"
callgrind_annotate "$out/run.$long" 2>/dev/null | awk -v steps="$long" -v top="$top" '
    /PROGRAM TOTALS/ { total = $1; gsub(",", "", total) }
    f && !NF { exit }
    f && NF {
        ir = $1; gsub(",", "", ir)
        line = $0; sub(/^ *[0-9,]+ \([ 0-9.]+%\) +/, "", line); sub(/ \[[^]]*\]$/, "", line)
        if (match(line, /\.(rs|c|S|h|cc|cpp):|\?\?\?:/)) line = substr(line, RSTART + RLENGTH)
        sum[line] += ir
    }
    /file:function$/ { getline; f = 1 }
    END {
        for (k in sum) printf "%12.0f %6.2f%%  %s\n", sum[k] / steps, 100 * sum[k] / total, k
    }' | sort -rn | head -n "$top" | cut -c1-170
