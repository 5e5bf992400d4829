#!/usr/bin/env bash
# Flake proof of the core suite (scripts/test.sh runs a bounded one,
# FLAKE_RUNS=2; the full proof is 300 runs, about 2.5 h): builds the
# core's test binaries once, then runs the whole suite FLAKE_RUNS times in a
# row (three test binaries at a time, two tests at a time in each: about six
# tests at once, the longest binary first) while a second copy of the same
# binaries loops beside it from its own directory, as two checkouts on one
# busy machine would. Every run of either copy is logged with its time and,
# on failure, the failing tests. Ends with one line per copy and exits
# non-zero if any run of either copy failed.
#
# Needs only cargo and coreutils: no cargo-nextest, no calculator tool.
#
#   bash scripts/flake-proof.sh                 # 300 runs beside a second copy
#   FLAKE_RUNS=20 FLAKE_BESIDE=0 bash scripts/flake-proof.sh
#   FLAKE_DIR=/tmp/proof (default: a new temp dir; logs are kept there,
#   the test binaries removed at the end)
#   FLAKE_TIMEOUT=300 (seconds one test binary may take before it counts as
#   hung and is killed)
#   FLAKE_SKIP=history (test binaries left out, a regex of their names;
#   default: none)
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${FLAKE_RUNS:-300}
beside=${FLAKE_BESIDE:-1}
limit=${FLAKE_TIMEOUT:-300}
dir=${FLAKE_DIR:-$(mktemp -d /tmp/flake-proof.XXXXXX)}
mkdir -p "$dir"

bash scripts/setup.sh >/dev/null
echo "flake proof: building the core's test binaries ($(git rev-parse --short HEAD 2>/dev/null || echo '?'))"
# The executables of the core's integration tests, as cargo reports them.
binaries=$(cargo test --locked -p redislock-core --tests --no-run --message-format=json 2>/dev/null \
  | grep -o '"executable":"[^"]*"' | cut -d'"' -f4)
[ -n "$binaries" ] || { echo "flake proof: cargo built no test binary" >&2; exit 1; }

# One copy of the binaries per loop, so neither shares files with the other
# or with later builds of this checkout. The longest binary goes first.
copy() {
  rm -rf "${dir:?}/$1"; mkdir -p "$dir/$1"
  for b in $binaries; do cp "$b" "$dir/$1/"; done
  { ls "$dir/$1"/* | grep -E '/(faults|cluster|sentinel)-' || true
    ls "$dir/$1"/* | grep -vE '/(faults|cluster|sentinel)-' || true; } \
    | { if [ -n "${FLAKE_SKIP:-}" ]; then grep -vE "/(${FLAKE_SKIP})-" || true; else cat; fi; } >"$dir/$1.order"
}

# run_binary FILE OUT: one test binary, bounded, its output in OUT.
run_binary() {
  timeout --kill-after=10 "$limit" "$1" --test-threads=2 >"$2" 2>&1
}
export -f run_binary
export limit

# loop NAME COUNT: runs the suite COUNT times (0: until stopped), one log
# line per run in $dir/NAME.log.
loop() {
  local name=$1 count=$2 i=0 started took failed out
  while [ "$count" = 0 ] || [ "$i" -lt "$count" ]; do
    [ ! -e "$dir/stop" ] || break
    i=$((i + 1))
    out="$dir/$name-run-$i"
    mkdir -p "$out"
    started=$(date +%s%N)
    # One output file per binary; a failing binary leaves a .failed mark.
    xargs -P 3 -I{} bash -c 'b={}; o='"$out"'/$(basename "$b"); run_binary "$b" "$o.out" || touch "$o.failed"' \
      <"$dir/$name.order"
    took=$(( ($(date +%s%N) - started) / 1000000 ))
    failed=""
    for mark in "$out"/*.failed; do
      [ -e "$mark" ] || continue
      local log=${mark%.failed}.out
      local tests
      tests=$(grep -E '^test .* \.\.\. FAILED$' "$log" | awk '{print $2}' | tr '\n' ' ' || true)
      # The first panic's place and message, so a summary line says why.
      local why
      why=$(grep -A1 -m1 'panicked at' "$log" | tr '\n' ' ' | cut -c1-400 || true)
      failed="$failed$(basename "${mark%.failed}"): ${tests:-$(tail -n 2 "$log" | tr '\n' ' ')} ${why};"
    done
    if [ -z "$failed" ]; then
      echo "run $i ok $((took / 1000)).$(printf '%03d' $((took % 1000)))s load $(cut -d' ' -f1 /proc/loadavg)" >>"$dir/$name.log"
      rm -rf "$out"
    else
      echo "run $i FAIL $((took / 1000)).$(printf '%03d' $((took % 1000)))s $failed" >>"$dir/$name.log"
    fi
  done
}

rm -f "$dir/stop"
copy proof
beside_pid=""
if [ "$beside" = 1 ]; then
  copy beside
  loop beside 0 &
  beside_pid=$!
fi
trap '[ -n "$beside_pid" ] && kill "$beside_pid" 2>/dev/null; true' EXIT
echo "flake proof: $runs runs, logs in $dir/proof.log$([ "$beside" = 1 ] && echo " and $dir/beside.log")"
loop proof "$runs"
if [ -n "$beside_pid" ]; then
  # The second copy finishes the run it is in (killing it would orphan its
  # test processes' servers).
  touch "$dir/stop"
  wait "$beside_pid" 2>/dev/null || true
  beside_pid=""
fi

rm -rf "${dir:?}/proof" "${dir:?}/beside"
status=0
for name in proof beside; do
  [ -f "$dir/$name.log" ] || continue
  ok=$(grep -c ' ok ' "$dir/$name.log" || true)
  bad=$(grep -c ' FAIL ' "$dir/$name.log" || true)
  echo "flake proof, $name copy: $ok runs passed, $bad failed"
  [ "$bad" = 0 ] || { status=1; grep ' FAIL ' "$dir/$name.log"; }
done
exit $status
