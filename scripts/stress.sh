#!/usr/bin/env bash
# Stress checker of mutual exclusion (not part of scripts/test.sh, which runs
# the bounded php-tests/end-to-end/175-stress-bounded.phpt): STRESS_PROCS PHP processes
# x STRESS_SECTIONS critical sections on one key, on a private redis-server,
# with auto_renew on and a short ttl, some sections sleeping 0-5 ms. Every
# process logs its sections (pid, hrtime start/end); scripts/stress-check.php
# sorts them all and reports overlaps and a shared non-atomic counter's
# expected vs actual value. Exits non-zero on any violation.
#
#   bash scripts/stress.sh                      # 16 x 500
#   STRESS_PROCS=32 STRESS_SECTIONS=2000 bash scripts/stress.sh
#   STRESS_TTL=2 STRESS_MAX_SLEEP_MS=5 STRESS_SLEEP_PERCENT=50 (defaults)
#   STRESS_SO=path/to/redislock.so              (default target/release/redislock.so)
set -euo pipefail
cd "$(dirname "$0")/.."

procs=${STRESS_PROCS:-16}
sections=${STRESS_SECTIONS:-500}
ttl=${STRESS_TTL:-2}
max_sleep_ms=${STRESS_MAX_SLEEP_MS:-5}
sleep_percent=${STRESS_SLEEP_PERCENT:-50}
source scripts/redis.sh
redis_session "${STRESS_SO:-target/release/redislock.so}"

url="redis://127.0.0.1:$REDIS_PORT"
key="stress:$$:$RANDOM"
echo 0 >"$WORK/counter"
echo "stress: $procs processes x $sections critical sections on one key ($url), ttl ${ttl} s," \
  "auto_renew, ${sleep_percent}% of sections sleep 0-${max_sleep_ms} ms"

start=$(date +%s.%N)
pids=()
for i in $(seq 1 "$procs"); do
  php -n -d "extension=$SO" -d display_errors=stderr scripts/stress-worker.php \
    "$url" "$key" "$sections" "$WORK/log.$i" "$WORK/counter" "$ttl" "$max_sleep_ms" "$sleep_percent" &
  pids+=($!)
done
worker_failures=0
for pid in "${pids[@]}"; do
  wait "$pid" || worker_failures=$((worker_failures + 1))
done
end=$(date +%s.%N)

logs=()
for i in $(seq 1 "$procs"); do logs+=("$WORK/log.$i"); done
set +e
php -n scripts/stress-check.php "$WORK/counter" $((procs * sections)) "${logs[@]}"
status=$?
set -e
printf 'stress: %.1f s wall, %d worker processes failed\n' "$(awk "BEGIN {print $end - $start}")" "$worker_failures"
[ "$worker_failures" = 0 ] || status=1
exit "$status"
