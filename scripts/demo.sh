#!/usr/bin/env bash
# The one demo command: installs what is missing, builds the extension,
# starts a private redis-server and runs examples/demo.php against it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh demo
bash scripts/build.sh
source scripts/redis.sh
redis_start
trap redis_stop EXIT
php -n -d extension="$PWD/target/release/redislock.so" examples/demo.php "redis://127.0.0.1:$REDIS_PORT"
