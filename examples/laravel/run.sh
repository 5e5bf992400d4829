#!/usr/bin/env bash
# Three queue workers pick up the same day's GenerateReport job at once on a
# private Redis: Cache::lock(...)->block() makes them run one after another,
# each woken by the previous one's release (a few ms from "done, releasing"
# to the next "got the lock", where Laravel's own Redis lock polls every 250 ms).
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/setup.sh demo php-laravel-framework
[ -f target/release/redislock.so ] || bash scripts/build.sh
source scripts/redis.sh
redis_start
trap redis_stop EXIT
export REDISLOCK_URL="redis://127.0.0.1:$REDIS_PORT"
worker() { php -d extension="$PWD/target/release/redislock.so" examples/laravel/worker.php "$@"; }
# Waits for the given pids (a bare `wait` would wait for redis-server too).
wait_all() { local status=0; for p in "$@"; do wait "$p" || status=1; done; return $status; }
day=$(date +%F)
echo "-- three workers at once, each running GenerateReport($day)"
pids=(); for _ in 1 2 3; do worker "$day" & pids+=($!); done; wait_all "${pids[@]}"
