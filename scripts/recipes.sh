#!/usr/bin/env bash
# Races the lock recipes PHP teams copy from blogs against a private
# redis-server, next to redislock in the same scenarios: builds the extension
# if needed, starts the server, runs examples/recipes.php, stops the server.
# Exits non-zero unless every race was reproduced and redislock held.
#
#   bash scripts/recipes.sh [-v]     -v prints every Redis command of the recipes
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f target/release/redislock.so ] || bash scripts/build.sh
source scripts/redis.sh
redis_start
trap redis_stop EXIT
php -n -d extension="$PWD/target/release/redislock.so" examples/recipes.php "$@" "redis://127.0.0.1:$REDIS_PORT"
