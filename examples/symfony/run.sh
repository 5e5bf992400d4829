#!/usr/bin/env bash
# Three runs of the Symfony console command at once on a private Redis:
# without --wait, one generates the report and the others give up; with
# --wait, they run one after another, each woken by the previous release.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/setup.sh demo php-symfony-lock php-symfony-console
[ -f target/release/redislock.so ] || bash scripts/build.sh
source scripts/redis.sh
redis_start
trap redis_stop EXIT
export REDISLOCK_URL="redis://127.0.0.1:$REDIS_PORT"
run() { php -d extension="$PWD/target/release/redislock.so" examples/symfony/console.php app:report "$@"; }
# Waits for the given pids (a bare `wait` would wait for redis-server too).
wait_all() { local status=0; for p in "$@"; do wait "$p" || status=1; done; return $status; }
echo "-- three runs at once, no waiting (two give up)"
pids=(); for _ in 1 2 3; do run & pids+=($!); done; wait_all "${pids[@]}" || true
echo "-- three runs at once, --wait (one after another)"
pids=(); for _ in 1 2 3; do run --wait & pids+=($!); done; wait_all "${pids[@]}"
