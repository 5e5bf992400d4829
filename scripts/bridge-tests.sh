#!/usr/bin/env bash
# The framework bridges' PHPUnit suites (bridge/phpunit.xml: Symfony Lock
# and Semaphore, Laravel), against the built extension and Debian's
# phpunit, php-symfony-lock, php-symfony-semaphore and
# php-laravel-framework. Each run starts its own redis-server (through
# target/release/redis-fixture). Needs target/release/redislock.so and the
# fixture (bash scripts/build.sh). Symfony's own semaphore store tests come
# from Debian's source package (scripts/symfony-store-tests.sh).
# Extra arguments go to phpunit (e.g. --testsuite symfony, --filter name).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh phpunit php-symfony-lock php-symfony-semaphore \
  php-symfony-service-contracts php-laravel-framework \
  php-symfony-framework-bundle php-symfony-var-dumper php-redis composer xz-utils
# The package as composer sees it (offline: validate reads the file only).
COMPOSER_ALLOW_SUPERUSER=1 composer validate --strict --no-interaction bridge/composer.json
so="$PWD/target/release/redislock.so"
[ -f "$so" ] || { echo "bridge-tests: $so is missing; run bash scripts/build.sh" >&2; exit 1; }
[ -x target/release/redis-fixture ] || cargo build --release --locked -p redislock-fixture
export REDISLOCK_SO="$so"
REDISLOCK_SYMFONY_STORE_TESTS=$(bash scripts/symfony-store-tests.sh)
export REDISLOCK_SYMFONY_STORE_TESTS
# Every deprecation counts (Debian's php.ini leaves E_DEPRECATED out).
# PHPUnit 10+ (Debian 13: 11) lists deprecations and notices but passes:
# make them fail, PHPUnit's own deprecations (PHPUnit 12's removals) too.
# PHPUnit 9 (Debian 12) has no such options.
strict=()
major=$(php /usr/bin/phpunit --version | grep -oE 'PHPUnit [0-9]+' | grep -oE '[0-9]+' || echo 0)
if [ "$major" -ge 10 ]; then
  strict=(--display-deprecations --fail-on-deprecation --display-notices --fail-on-notice)
  [ "$major" -lt 11 ] || strict+=(--display-phpunit-deprecations --fail-on-phpunit-deprecation)
fi
exec php -d error_reporting=-1 -d extension="$so" /usr/bin/phpunit -c bridge/phpunit.xml "${strict[@]}" "$@"
