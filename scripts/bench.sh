#!/usr/bin/env bash
# The benchmark: redislock against the PHP Redis locks people use.
# Builds nothing: it needs target/release/redislock.so (bash scripts/build.sh).
# Installs the peers from Debian if missing, starts a private redis-server,
# runs bench/run.php (suites x repetitions) and bench/report.php (tables,
# chart). Results: bench/results/latest.txt and bench/results/wait-times.svg.
#
# Environment:
#   BENCH_REPEAT=3     repetitions of every measurement; the report shows medians
#   BENCH_QUICK=1      short run (1 repetition unless BENCH_REPEAT is set, fewer cycles)
#   BENCH_PROCS=8      processes in the contended suite
#   BENCH_SECTIONS=N   critical sections per process (default 200, quick 40)
#   BENCH_SECONDS=S    measured seconds per uncontended contender (default 1.5, quick 0.3)
#   BENCH_ONLY=a,b     only these contenders (names in bench/lib/contenders.php)
#   BENCH_PIN=same     CPU pinning (needs 2+ CPUs and taskset), one of:
#     same   (default) redis-server and its threads and every PHP process
#            (runner, measured processes, forked children) on CPU 1; CPU 0 is
#            left to the rest of the machine; no cross-CPU wake-ups
#     split  redis-server on CPU 0, every PHP process on CPU 1: Redis never
#            competes with PHP for a core, but on a VM every round trip pays
#            two cross-vCPU wake-ups (bench/README.md has the measurements)
#     0      no pinning
set -euo pipefail
cd "$(dirname "$0")/.."

so="$PWD/target/release/redislock.so"
for _ in $(seq 1 20); do [ -f "$so" ] && break; sleep 0.5; done   # tolerate an atomic replace in progress
if [ ! -f "$so" ]; then
  echo "bench: $so is missing; build it first: bash scripts/build.sh" >&2
  exit 1
fi

# The peers come from Debian (no Packagist here); setup.sh installs what is missing.
bash scripts/setup.sh php-redis php-predis php-symfony-lock php-laravel-framework util-linux

# Measure a copy, so a rebuild during the run cannot change the binary under test.
work=$(mktemp -d)
cp "$so" "$work/redislock.so"

source scripts/redis.sh
cleanup() { redis_stop; rm -rf "$work"; }
trap cleanup EXIT
redis_start

quick=${BENCH_QUICK:-0}
if [ "$quick" = 1 ]; then reps=${BENCH_REPEAT:-1}; else reps=${BENCH_REPEAT:-3}; fi

pin=()
pinning="none"
mode=${BENCH_PIN:-same}
if [ "$(nproc)" -lt 2 ] || ! command -v taskset >/dev/null; then
  mode=none
fi
case "$mode" in
  split) taskset -apc 0 "$REDIS_PID" >/dev/null; pin=(taskset -c 1)
         pinning="split: redis-server on CPU 0, all PHP processes on CPU 1" ;;
  same)  taskset -apc 1 "$REDIS_PID" >/dev/null; pin=(taskset -c 1)
         pinning="same: redis-server and all PHP processes on CPU 1" ;;
  0|none) ;;
  *) echo "bench: BENCH_PIN must be split, same or 0" >&2; exit 2 ;;
esac

echo "bench: redis-server on 127.0.0.1:$REDIS_PORT (pid $REDIS_PID); pinning: $pinning; repetitions: $reps; quick: $quick" >&2
raw=bench/results/raw
"${pin[@]}" php -d extension="$work/redislock.so" bench/run.php \
  --port="$REDIS_PORT" --so="$work/redislock.so" --raw="$raw" --reps="$reps" --quick="$quick" \
  --procs="${BENCH_PROCS:-8}" --sections="${BENCH_SECTIONS:-}" --seconds="${BENCH_SECONDS:-}" \
  --only="${BENCH_ONLY:-}" --pinning="$pinning"
php bench/report.php --raw="$raw" --out=bench/results
