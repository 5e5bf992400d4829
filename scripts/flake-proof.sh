#!/usr/bin/env bash
# Flake proof of the core suite (scripts/test.sh runs a bounded one,
# FLAKE_RUNS=2; the full proof is 300 runs, about 2.5 h): builds the
# core's test binaries once, then runs the whole suite FLAKE_RUNS times in a
# row with cargo-nextest (every test at once, up to 6 at a time, settings in
# .config/nextest.toml) while a second copy of the same suite loops beside it
# from its own directory, as two checkouts on one busy machine would.
# Every run of either copy is logged with its time and, on failure, the
# failing tests. Ends with one line per copy and exits non-zero if any run of
# either copy failed.
#
#   bash scripts/flake-proof.sh                 # 300 runs beside a second copy
#   FLAKE_RUNS=20 FLAKE_BESIDE=0 bash scripts/flake-proof.sh
#   FLAKE_DIR=/tmp/proof (default: a new temp dir; logs are kept there,
#   the test binaries removed at the end)
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${FLAKE_RUNS:-300}
beside=${FLAKE_BESIDE:-1}
dir=${FLAKE_DIR:-$(mktemp -d /tmp/flake-proof.XXXXXX)}
mkdir -p "$dir"
root=$(pwd)

bash scripts/setup.sh >/dev/null
echo "flake proof: building the core's test binaries ($(git rev-parse --short HEAD))"
cargo nextest archive --locked -p redislock-core --archive-file "$dir/suite.tar.zst"

# One extracted copy of the binaries per loop, so neither shares files with
# the other or with later builds of this checkout.
extract() {
  rm -rf "$dir/$1"; mkdir -p "$dir/$1"
  cargo nextest list --archive-file "$dir/suite.tar.zst" --workspace-remap "$root" \
    --extract-to "$dir/$1" >/dev/null
}

# loop NAME COUNT: runs the suite COUNT times (0: until stopped), one log
# line per run in $dir/NAME.log.
loop() {
  local name=$1 count=$2 i=0 out started took failed
  local t="$dir/$name/target"
  while [ "$count" = 0 ] || [ "$i" -lt "$count" ]; do
    [ ! -e "$dir/stop" ] || break
    i=$((i + 1))
    started=$(date +%s.%N)
    if out=$(cargo nextest run --no-fail-fast --workspace-remap "$root" \
      --binaries-metadata "$t/nextest/binaries-metadata.json" \
      --cargo-metadata "$t/nextest/cargo-metadata.json" \
      --target-dir-remap "$t" 2>&1); then
      failed=""
    else
      failed=$(echo "$out" | grep -E '^ +(FAIL|TIMEOUT|SIGSEGV|ABORT) ' | sed -E 's/ +/ /g' | sort -u | tr '\n' ';')
      failed=${failed:-"$(echo "$out" | tail -n 3 | tr '\n' ' ')"}
      echo "$out" >"$dir/$name-run-$i.out"
    fi
    took=$(echo "$(date +%s.%N) - $started" | bc)
    if [ -z "$failed" ]; then
      echo "run $i ok ${took}s load $(cut -d' ' -f1 /proc/loadavg)" >>"$dir/$name.log"
    else
      echo "run $i FAIL ${took}s $failed" >>"$dir/$name.log"
    fi
  done
}

rm -f "$dir/stop"
extract proof
beside_pid=""
if [ "$beside" = 1 ]; then
  extract beside
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

rm -rf "$dir/proof" "$dir/beside" "$dir/suite.tar.zst"
status=0
for name in proof beside; do
  [ -f "$dir/$name.log" ] || continue
  ok=$(grep -c ' ok ' "$dir/$name.log" || true)
  bad=$(grep -c ' FAIL ' "$dir/$name.log" || true)
  echo "flake proof, $name copy: $ok runs passed, $bad failed"
  [ "$bad" = 0 ] || { status=1; grep ' FAIL ' "$dir/$name.log"; }
done
exit $status
