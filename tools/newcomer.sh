#!/usr/bin/env bash
# A newcomer's afternoon: every shell command of the README's code blocks, as written, on a
# fresh clone of this repository's HEAD in a temporary folder. Each command must exit 0,
# and afterwards the clone must hold nothing but what the commands were told to write:
# `git status` clean, and the only ignored entry `results/` (no talos.json, warm.json,
# bench-problems/, target/ or paper/ in the checkout).
#
#   tools/newcomer.sh                      # every command (a release build, cargo test, the paper: hours on 2 cores)
#   NEWCOMER_SKIP='^cargo test|paper' tools/newcomer.sh   # leave out commands matching a regex
#
# Environment: NEWCOMER_SKIP (an extended regex; matching commands are listed as skipped),
# CONTACTBENCH_CACHE (the robots, as for every command), CARGO_TARGET_DIR (cargo's build
# folder, outside the clone; default: a folder beside the clone), KEEP=1 keeps the clone.
# `~` of the commands is a fresh home folder inside the temporary folder; the `contactbench`
# of the commands is the one `cargo install --path .` put there.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/newcomer.XXXXXX")"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
clone="$work/contactbench"
# cargo and rustup keep finding the toolchain of the real home.
export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
export HOME="$work/home"
mkdir -p "$HOME"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$work/target}"
export CARGO_INSTALL_ROOT="$work/cargo-root"
export PATH="$CARGO_INSTALL_ROOT/bin:$PATH"

git clone --quiet "$repo" "$clone"
cd "$clone"

# The README's ```sh blocks, one command per line (a trailing backslash joins lines), the
# comments after `#` dropped.
commands="$(awk '
  /^```sh/ { inside = 1; next }
  /^```/   { inside = 0; next }
  inside {
    line = $0
    sub(/[ \t]+#.*$/, "", line)
    if (line ~ /\\$/) { sub(/\\$/, "", line); pending = pending line; next }
    line = pending line; pending = ""
    if (line ~ /[^ \t]/) print line
  }' README.md)"

ran=0 skipped=0 failed=0
while IFS= read -r command; do
  if [ -n "${NEWCOMER_SKIP:-}" ] && grep -Eq -- "$NEWCOMER_SKIP" <<<"$command"; then
    echo "skipped: $command"
    skipped=$((skipped + 1))
    continue
  fi
  echo "==> $command"
  start=$(date +%s)
  if bash -c "$command" </dev/null >"$work/last.out" 2>"$work/last.err"; then
    echo "    ok ($(( $(date +%s) - start )) s)"
    ran=$((ran + 1))
  else
    code=$?
    echo "    FAILED (exit $code); the end of its stderr:"
    tail -n 15 "$work/last.err" | sed 's/^/    | /'
    failed=$((failed + 1))
  fi
done <<<"$commands"

# What the commands left in the clone: nothing tracked changed, nothing untracked, and
# only results/ among the ignored entries.
left="$(git status --porcelain --ignored | grep -v '^!! results/$' || true)"
if [ -n "$left" ]; then
  echo "left in the checkout outside results/:"
  sed 's/^/    /' <<<"$left"
  failed=$((failed + 1))
fi
echo "$ran commands ran, $skipped skipped, $failed failures"
[ "$failed" = 0 ]
