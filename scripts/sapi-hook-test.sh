#!/usr/bin/env bash
# The per-request SAPI hook (src/sapi_hook.rs) in a real engine: builds
# sapi-host (scripts/sapi-host/host.c, on PHP's embed SAPI, package
# libphp<version>-embed), which drives PHP the way FrankenPHP does, and
# runs, on a private redis-server:
#
#   worker   SAPI "frankenphp", worker mode: every request end releases
#            what the request forgot (auto_release on), keeps the rest
#   control  SAPI "embed", worker mode: no hook, nothing released before
#            the worker's own end (the behaviour of every other SAPI)
#   classic  SAPI "frankenphp", a full PHP request per run: RSHUTDOWN and
#            the hook both run, the holds are released once
#
# Each part checks the host's exit status, its "ok - ..." lines (a fixed
# number per part, none "not ok") and, with redis-cli after the host has
# exited, what is left in Redis.
#
#   scripts/sapi-hook-test.sh [path/to/redislock.so]
#   SAPI_HOOK_VALGRIND=1 scripts/sapi-hook-test.sh   each host under memcheck
#       (USE_ZEND_ALLOC=0, definite leaks are errors; about 20 s)
#
# Ends with "sapi-hook: N passed, N failed" (one per part) and exits
# non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
so=${1:-target/release/redislock.so}
[ -f "$so" ] || bash scripts/build.sh
so=$(realpath "$so")
cli=${REDISLOCK_REDIS_CLI:-redis-cli}

# A setup failure counts as one failed part.
broken() {
  echo "sapi-hook: FAILED: $1"
  echo "sapi-hook: 0 passed, 1 failed"
  exit 1
}
version=$(php -r 'echo PHP_MAJOR_VERSION, ".", PHP_MINOR_VERSION;')
include=$(php-config --include-dir)
libphp=$(php-config --prefix)/lib/libphp$version.so
for need in "$libphp" "$include/sapi/embed/php_embed.h"; do
  [ -f "$need" ] || broken "$need is missing (apt-get install libphp$version-embed php$version-dev)"
done
compiler=$(command -v clang || command -v cc) || broken "no C compiler (apt-get install clang)"
host=target/sapi-host/sapi-host
mkdir -p "$(dirname "$host")"
"$compiler" -std=gnu11 -O1 -gdwarf-4 -Wall -Wextra -Werror -Wno-unused-parameter \
  -I"$include" -I"$include/main" -I"$include/Zend" -I"$include/TSRM" \
  -o "$host" scripts/sapi-host/host.c "$libphp" || broken "sapi-host did not build"

source scripts/redis.sh
work=$(mktemp -d)
trap 'redis_stop; rm -rf "$work"' EXIT
redis_start
export REDISLOCK_TEST_URL="redis://127.0.0.1:$REDIS_PORT"
redis() { "$cli" -p "$REDIS_PORT" "$@"; }
printf 'extension=%s\nredislock.servers=%s\n' "$so" "$REDISLOCK_TEST_URL" >"$work/php.ini"

run=(timeout 120)
if [ "${SAPI_HOOK_VALGRIND:-0}" = 1 ]; then
  source scripts/valgrind-env.sh
  export USE_ZEND_ALLOC=0
  run=(timeout 600 valgrind -q --error-exitcode=9 --suppressions=scripts/sapi-host/valgrind.supp)
fi

passed=0; failed=0
# part NAME CHECKS EXPECTED-REDIS HOST-ARGS...: runs the host, then
# compares "KEY=EXISTS" pairs (after the host exited; for a semaphore's
# KEY~~s its live permits) with EXPECTED-REDIS.
part() {
  local name=$1 checks=$2 expected=$3 status=0 ok bad found=() pair
  shift 3
  export SAPI_HOOK_PREFIX="sapi-hook-$name-"
  "${run[@]}" "$host" --ini-file "$work/php.ini" "$@" >"$work/$name.out" 2>&1 || status=$?
  ok=$(grep -c '^ok - ' "$work/$name.out" || true)
  bad=$(grep -c '^not ok - ' "$work/$name.out" || true)
  for pair in $expected; do
    case "${pair%%=*}" in
      # A semaphore's holders: its live permits (the member ~~n, scored
      # -N, keeps its number of permits until the key expires).
      *~~s) found+=("${pair%%=*}=$(redis ZCOUNT "$SAPI_HOOK_PREFIX${pair%%=*}" '(0' +inf)") ;;
      *) found+=("${pair%%=*}=$(redis EXISTS "$SAPI_HOOK_PREFIX${pair%%=*}")") ;;
    esac
  done
  if [ "$status" = 0 ] && [ "$ok" = "$checks" ] && [ "$bad" = 0 ] && [ "${found[*]}" = "$expected" ]; then
    passed=$((passed + 1))
    echo "sapi-hook $name: passed ($ok checks; left in Redis: ${found[*]})"
  else
    failed=$((failed + 1))
    echo "sapi-hook $name: FAILED (exit $status, $ok of $checks checks ok, $bad not ok;" \
      "left in Redis: ${found[*]}, expected: $expected)"
    sed 's/^/  | /' "$work/$name.out"
  fi
}

SAPI_HOOK_EXPECT=hook part worker 28 "boot=0 a=0 s~~s=0 r=0 r~~r=0 last=0 k=0 k2=1" \
  --name frankenphp --requests 3 scripts/sapi-host/worker.php
SAPI_HOOK_EXPECT=none part control 28 "boot=0 a=0 s~~s=0 r=0 r~~r=0 last=0 k=0 k2=1" \
  --name embed --requests 3 scripts/sapi-host/worker.php
part classic 15 "c=0 cs~~s=0 ck=1" --name frankenphp --classic 3 scripts/sapi-host/classic.php

echo "sapi-hook: $passed passed, $failed failed"
[ "$failed" = 0 ]
