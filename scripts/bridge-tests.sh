#!/usr/bin/env bash
# The framework bridges' PHPUnit suites (bridge/phpunit.xml: Symfony Lock
# and Semaphore, Laravel), against the built extension and Debian's
# phpunit, php-symfony-lock, php-symfony-semaphore and
# php-laravel-framework. Each run starts its own redis-server (through
# target/release/redis-fixture). Needs target/release/redislock.so and the
# fixture (bash scripts/build.sh).
# Extra arguments go to phpunit (e.g. --testsuite symfony, --filter name).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh phpunit php-symfony-lock php-symfony-semaphore \
  php-symfony-service-contracts php-laravel-framework
so="$PWD/target/release/redislock.so"
[ -f "$so" ] || { echo "bridge-tests: $so is missing; run bash scripts/build.sh" >&2; exit 1; }
[ -x target/release/redis-fixture ] || cargo build --release --locked -p redislock-fixture
export REDISLOCK_SO="$so"
exec php -d extension="$so" /usr/bin/phpunit -c bridge/phpunit.xml "$@"
