#!/usr/bin/env bash
# The benchmark: redislock against the PHP Redis locks people use.
# Builds nothing: it needs target/release/redislock.so and the test fixture
# target/release/redis-fixture, which starts every redis-server here
# (bash scripts/build.sh builds both).
# Installs the peers from Debian if missing, starts a private redis-server,
# runs bench/run.php (suites x repetitions), bench/topologies.php (the
# topology suite, with its own servers), bench/primitives.php (semaphore and
# read/write lock) and bench/report.php (tables, chart).
# Results: bench/results/latest.txt and bench/results/wait-times.svg (BENCH_REPORT
# names another report).
#
# Environment:
#   BENCH_REPEAT=5     repetitions of every measurement; the report shows medians
#   BENCH_QUICK=1      short run (1 repetition unless BENCH_REPEAT is set, fewer cycles)
#   BENCH_PROCS=8      processes in the contended suite
#   BENCH_SECTIONS=N   critical sections per process (default 200, quick 40)
#   BENCH_SECONDS=S    measured seconds per uncontended contender (default 1.5, quick 0.3)
#   BENCH_ONLY=a,b     only these contenders (names in bench/lib/contenders.php)
#   BENCH_STARVE_AFTER=S  option starve_after of contender redislock-barging (default 0.001)
#   BENCH_SO=path      the extension measured (default target/release/redislock.so): another
#                      build, to compare two versions in one layout
#   BENCH_REPORT=latest  name of the report: bench/results/<name>.txt, the chart
#                      <name>-wait-times.svg and raw results in raw-<name>/ (for
#                      "latest": latest.txt, wait-times.svg, raw/), so a partial run
#                      (e.g. BENCH_REPORT=frameworks) does not overwrite the full one
#   BENCH_SUITES=main,topology,primitives  which suites: main (check, uncontended,
#                      contended against the PHP peers), topology (bench/topologies.php:
#                      1 server vs Redlock-3/-5 vs a 3-master Cluster, and Symfony's
#                      CombinedStore over the same 5 masters; starts its own servers)
#                      and/or primitives (bench/primitives.php: a semaphore of 4 with
#                      16 processes and a read/write lock with 10 % writes, against
#                      Symfony's Semaphore and Lock and Laravel's funnel)
#   BENCH_PRIM_SECTIONS=N  sections per process in the primitives suite (default 60, quick 20)
#   BENCH_TOPO_PIN=split  CPU pinning of the topology suite (its 8 servers):
#     split  (default) every server on CPU 0, every PHP process on CPU 1
#     same   servers and PHP processes all on CPU 1
#     0      no pinning
#   BENCH_PIN=same     CPU pinning of the main suites (needs 2+ CPUs and taskset), one of:
#     same   (default) redis-server and its threads and every PHP process
#            (runner, measured processes, forked children) on CPU 1; CPU 0 is
#            left to the rest of the machine; no cross-CPU wake-ups
#     split  redis-server on CPU 0, every PHP process on CPU 1: Redis never
#            competes with PHP for a core, but on a VM every round trip pays
#            two cross-vCPU wake-ups (bench/README.md has the measurements)
#     0      no pinning
#     all    the main and primitives suites (not topology) once per layout
#            (same, split, 0), each with its own report <BENCH_REPORT>-<layout>
#            (default layouts-same, ...), then one table with a column per
#            layout: bench/results/<BENCH_REPORT>.txt (bench/report-layouts.php)
set -euo pipefail
cd "$(dirname "$0")/.."

so="${BENCH_SO:-$PWD/target/release/redislock.so}"
for _ in $(seq 1 20); do [ -f "$so" ] && break; sleep 0.5; done   # tolerate an atomic replace in progress
if [ ! -f "$so" ]; then
  echo "bench: $so is missing; build it first: bash scripts/build.sh" >&2
  exit 1
fi
[ -x target/release/redis-fixture ] || {
  echo "bench: target/release/redis-fixture is missing; build it first: bash scripts/build.sh" >&2
  exit 1
}

if [ "${BENCH_PIN:-same}" = all ]; then
  base=${BENCH_REPORT:-layouts}
  [[ "$base" =~ ^[A-Za-z0-9_-]+$ ]] || { echo "bench: BENCH_REPORT must be a name of letters, digits, - or _" >&2; exit 2; }
  specs=() rc=0
  for layout in same split 0; do
    BENCH_PIN=$layout BENCH_REPORT="$base-$layout" BENCH_SUITES=${BENCH_SUITES:-main,primitives} \
      bash "$0" || rc=$?
    specs+=("$layout:bench/results/raw-$base-$layout")
  done
  php bench/report-layouts.php --out=bench/results --name="$base" --layouts="$(IFS=,; echo "${specs[*]}")"
  exit "$rc"
fi

# The peers come from Debian (no Packagist here); setup.sh installs what is missing.
bash scripts/setup.sh php-redis php-predis php-symfony-lock php-symfony-semaphore php-laravel-framework util-linux

# Measure a copy, so a rebuild during the run cannot change the binary under test.
work=$(mktemp -d)
cp "$so" "$work/redislock.so"

source scripts/redis.sh
# The topology suite stops its servers itself (also on errors and signals);
# this kills, by pid, any it could not (the PHP process was killed).
topo_pids="$work/topology-servers.pids"
cleanup() {
  local pid
  if [ -s "$topo_pids" ]; then
    while read -r pid; do
      [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$(basename "${REDISLOCK_REDIS_SERVER:-redis-server}")" ] \
        && kill -9 "$pid" 2>/dev/null || true
    done <"$topo_pids"
  fi
  redis_stop; rm -rf "$work"
}
trap cleanup EXIT
redis_start

quick=${BENCH_QUICK:-0}
if [ "$quick" = 1 ]; then reps=${BENCH_REPEAT:-1}; else reps=${BENCH_REPEAT:-5}; fi

# The hand-over floor (bench/floor/token_pass.c), where a C compiler is.
floor=""
if command -v cc >/dev/null && cc -O2 -o "$work/token_pass" bench/floor/token_pass.c; then
  floor="$work/token_pass"
else
  echo "bench: no C compiler: the hand-over floor is not measured" >&2
fi

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
  *) echo "bench: BENCH_PIN must be split, same, 0 or all" >&2; exit 2 ;;
esac

report=${BENCH_REPORT:-latest}
[[ "$report" =~ ^[A-Za-z0-9_-]+$ ]] || { echo "bench: BENCH_REPORT must be a name of letters, digits, - or _" >&2; exit 2; }

suites=${BENCH_SUITES:-main,topology,primitives}
case ",$suites," in *,main,*|*,topology,*|*,primitives,*) ;; *) echo "bench: BENCH_SUITES must name main, topology and/or primitives" >&2; exit 2 ;; esac

echo "bench: redis-server on 127.0.0.1:$REDIS_PORT (pid $REDIS_PID); pinning: $pinning; repetitions: $reps; quick: $quick; suites: $suites" >&2
if [ "$report" = latest ]; then raw=bench/results/raw; else raw=bench/results/raw-$report; fi
# Without "main" in BENCH_SUITES, run.php only writes meta.json (versions, machine).
"${pin[@]}" php -d extension="$work/redislock.so" bench/run.php \
  --port="$REDIS_PORT" --so="$work/redislock.so" --raw="$raw" --reps="$reps" --quick="$quick" \
  --procs="${BENCH_PROCS:-8}" --sections="${BENCH_SECTIONS:-}" --seconds="${BENCH_SECONDS:-}" \
  --only="${BENCH_ONLY:-}" --pinning="$pinning" --suites="$suites" --floor="$floor"

topo_rc=0
case ",$suites," in *,topology,*)
  topo_pin=()
  server_cpu=""
  topo_mode=${BENCH_TOPO_PIN:-split}
  topo_pinning="none: servers and PHP processes float over all CPUs"
  if [ "$(nproc)" -lt 2 ] || ! command -v taskset >/dev/null; then
    topo_mode=none
  fi
  case "$topo_mode" in
    split) server_cpu=0; topo_pin=(taskset -c 1)
           topo_pinning="split: every redis-server on CPU 0, every PHP process on CPU 1" ;;
    same)  server_cpu=1; topo_pin=(taskset -c 1)
           topo_pinning="same: every redis-server and every PHP process on CPU 1" ;;
    0|none) ;;
    *) echo "bench: BENCH_TOPO_PIN must be split, same or 0" >&2; exit 2 ;;
  esac
  echo "bench: topology suite; pinning: $topo_pinning" >&2
  "${topo_pin[@]}" php -d extension="$work/redislock.so" bench/topologies.php \
    --so="$work/redislock.so" --raw="$raw" --reps="$reps" --quick="$quick" \
    --procs="${BENCH_PROCS:-8}" --sections="${BENCH_SECTIONS:-}" --seconds="${BENCH_SECONDS:-}" \
    --only="${BENCH_ONLY:-}" --server-cpu="$server_cpu" --pinning="$topo_pinning" \
    --pidfile="$topo_pids" || topo_rc=$?
  [ "$topo_rc" = 0 ] || echo "bench: the topology suite failed (exit $topo_rc)" >&2
  ;;
esac

prim_rc=0
case ",$suites," in *,primitives,*)
  # Same server and pinning as the main suites.
  echo "bench: primitives suite; pinning: $pinning" >&2
  "${pin[@]}" php -d extension="$work/redislock.so" bench/primitives.php \
    --port="$REDIS_PORT" --so="$work/redislock.so" --raw="$raw" --reps="$reps" --quick="$quick" \
    --sections="${BENCH_PRIM_SECTIONS:-}" --only="${BENCH_ONLY:-}" --pinning="$pinning" || prim_rc=$?
  [ "$prim_rc" = 0 ] || echo "bench: the primitives suite failed (exit $prim_rc)" >&2
  ;;
esac

report_rc=0
php bench/report.php --raw="$raw" --out=bench/results --name="$report" || report_rc=$?
[ "$topo_rc" = 0 ] && [ "$prim_rc" = 0 ] && [ "$report_rc" = 0 ]
