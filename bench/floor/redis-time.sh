#!/usr/bin/env bash
# Where a hand-over's time goes inside Redis: two PHP processes take one
# lock back to back (acquire(10), usleep(200), release, N sections each),
# pinned to one CPU with their own redis-server, and the server's
# `INFO commandstats` from a reset says how long each command took on
# average (an EVALSHA's time includes the commands its script runs).
# Compare with the floor (token_pass.c: one LPUSH and one BLPOP per pass).
#
#   bash bench/floor/redis-time.sh [SO] [N]
#
# SO: the extension (default target/release/redislock.so), N: sections per
# process (default 1000). Needs redis-server, redis-cli, php and taskset.
set -euo pipefail
cd "$(dirname "$0")/../.."
so=$(realpath "${1:-target/release/redislock.so}")
n=${2:-1000}
dir=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
redis-server --port "$port" --save '' --appendonly no --daemonize yes \
  --pidfile "$dir/redis.pid" --dir "$dir" >/dev/null
trap 'redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
cat >"$dir/worker.php" <<'PHP'
<?php
[$_, $url, $key, $n] = $argv;
$lock = new RedisLock($key, 10, $url, ['reentrant' => false]);
for ($i = 0; $i < (int) $n; $i++) {
    if (!$lock->acquire(10.0)) {
        fwrite(STDERR, "a wait ran out\n");
        exit(1);
    }
    usleep(200);
    $lock->release();
}
PHP
url="redis://127.0.0.1:$port"
key="redis-time:$$"
run() { taskset -c "${BENCH_CPU:-1}" php -n -d "extension=$so" "$dir/worker.php" "$url" "$key" "$1"; }
run 20 # warm up: scripts loaded
redis-cli -p "$port" config resetstat >/dev/null
run "$n" & run "$n" & wait
echo "redis-time: 2 processes x $n sections back to back on CPU ${BENCH_CPU:-1}, per command in Redis:"
redis-cli -p "$port" info commandstats | tr -d '\r' \
  | sed -nE 's/^cmdstat_([a-z|]+):calls=([0-9]+),usec=[0-9]+,usec_per_call=([0-9.]+).*/\1 \2 \3/p' \
  | grep -vE '^(info|config\|resetstat|client\|id) ' \
  | awk -v n="$((2 * n))" '
      { printf "  %-10s %5.2f per section  %6.2f us each\n", $1, $2 / n, $3 }
      $1 == "evalsha" { scripts = $2 * $3 / n; next }
      $1 != "blpop" { inside += $2 * $3 / n }
      END { printf "  scripts: %.1f us per section, of which their commands %.1f us and Lua itself %.1f us\n", scripts, inside, scripts - inside }'
