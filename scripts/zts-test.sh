#!/usr/bin/env bash
# The ZTS test command (a second command beside scripts/test.sh: building
# the ZTS PHP takes about 22 minutes on 2 busy cores, once):
#
# 1. a thread-safe PHP 8.2 from Debian's source package (scripts/zts-build.sh;
#    reused when built),
# 2. the extension built against it, in target/zts (the NTS build in
#    target/release is left alone),
# 3. every phpt test with that PHP (its CLI, and its FPM for php-tests/fpm),
#    and the phpize build (scripts/phpize-test.sh) with its phpize,
# 4. the threaded host (zts/host.c on the embed SAPI): several threads, each
#    running requests one after another, on one private redis-server
#    (zts/request.php says what each request checks, zts/final.php what is
#    checked at the end),
# 5. the host again under valgrind: helgrind and drd (races; Rust code,
#    whose futex-based locks they cannot see, is suppressed there:
#    zts/valgrind.supp) and memcheck (leaks, errors),
# 6. with ZTS_TSAN=1, the host with the extension built by nightly Rust with
#    ThreadSanitizer (-Zsanitizer=thread, std rebuilt: `rustup component add
#    rust-src --toolchain nightly`), and fails on any report.
#
# Ends with one "N passed, N failed" line (each phpt test, the phpize
# build, each host run);
# exits non-zero on any failure.
#
#   ZTS_THREADS=6 ZTS_REQUESTS=12 ZTS_ROUNDS=5   the host's plain run
#   ZTS_VALGRIND="helgrind drd memcheck"         valgrind tools ("" for none)
#   ZTS_TSAN=1                                   the ThreadSanitizer run too
#   scripts/zts-test.sh php-tests/api            only these phpt tests
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

prefix=$(scripts/zts-build.sh | tail -n1)
export PHP=$prefix/bin/php PHP_CONFIG=$prefix/bin/php-config
php_libs=$prefix/lib/php

echo "zts: building the extension against $("$PHP" -n -v | head -n1)"
CARGO_TARGET_DIR=$root/target/zts nice -n 10 cargo build --release --locked -p redislock -p redislock-fixture
# Copy then rename, as scripts/build.sh does.
cp target/zts/release/libredislock.so target/zts/release/redislock.so.tmp
mv -f target/zts/release/redislock.so.tmp target/zts/release/redislock.so
so=$root/target/zts/release/redislock.so

# The host: plain C on the embed SAPI. _GNU_SOURCE is in the source.
host_cflags=(-O1 -g -Wall -Wextra -Wno-unused-parameter $("$PHP_CONFIG" --includes))
host_libs=(-L"$php_libs" -lphp -Wl,-rpath,"$php_libs" -pthread)
cc "${host_cflags[@]}" -o target/zts/zts-host zts/host.c "${host_libs[@]}"

export REDIS_FIXTURE=$root/target/zts/release/redis-fixture REDISLOCK_FIXTURE=$root/target/zts/release/redis-fixture
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# 3. The phpt suite on the ZTS PHP.
set +e
REDISLOCK_PHP=$prefix/bin/php bash scripts/phpt.sh "$so" "$@" 2>&1 | tee "$log"
set -e
phpt_line=$(grep -E '^phpt: [0-9]+ passed' "$log" | tail -n1)
phpt_passed=$(echo "$phpt_line" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+' || echo 0)
phpt_failed=$(echo "$phpt_line" | grep -oE '[0-9]+ failed' | grep -oE '[0-9]+' || echo 1)
# Skips or leaks fail the suite (scripts/phpt.sh says so): count one.
grep -q '^phpt: FAILED' "$log" && [ "$phpt_failed" = 0 ] && phpt_failed=1

# The phpize build (what PIE runs) with the ZTS PHP's phpize and php-config.
set +e
PATH=$prefix/bin:$PATH CARGO_TARGET_DIR=$root/target/zts bash scripts/phpize-test.sh 2>&1 | tee "$log"
phpize_status=${PIPESTATUS[0]}
set -e
[ "$phpize_status" = 0 ] && phpize_passed=1 || phpize_passed=0

# 4-6. The threaded host, on a private redis-server (stopped by pid).
source scripts/redis.sh
trap 'redis_stop; rm -f "$log"' EXIT
redis_start
export REDISLOCK_TEST_URL="redis://127.0.0.1:$REDIS_PORT"
host_passed=0; host_failed=0
# run NAME TIMEOUT COMMAND...: one host run, passed when it exits 0.
run() {
  local name=$1 limit=$2 start status
  shift 2
  start=$(date +%s)
  set +e
  timeout "$limit" "$@" >"$log" 2>&1
  status=$?
  set -e
  if [ "$status" = 0 ]; then
    host_passed=$((host_passed + 1))
    echo "zts host ($name): ok in $(($(date +%s) - start)) s: $(grep '^zts-host:' "$log" | tail -n1)"
  else
    host_failed=$((host_failed + 1))
    echo "zts host ($name): FAILED (exit $status)"
    grep -vE '^==[0-9]+== *$' "$log" | tail -n 60
  fi
}

run plain 300 target/zts/zts-host "$so" "$root/zts" "${ZTS_THREADS:-6}" "${ZTS_REQUESTS:-12}" "${ZTS_ROUNDS:-5}"

# Valgrind: PHP's own allocator on (its per-request memory is not ours to
# check), modules kept loaded at shutdown (scripts/valgrind-env.sh says why).
small=(3 3 2)
for tool in ${ZTS_VALGRIND-helgrind drd memcheck}; do
  opts=(--tool="$tool" --vgdb=no --error-exitcode=99 --suppressions="$root/zts/valgrind.supp")
  [ "$tool" = memcheck ] && opts+=(--leak-check=full --show-leak-kinds=definite,possible
    --errors-for-leak-kinds=definite,possible)
  # drd loses track of a thread whose stack a PHP Fiber switches (its own
  # assertion fails): no Fibers there.
  fibers=1; [ "$tool" = drd ] && fibers=0
  run "valgrind $tool" 900 env ZEND_DONT_UNLOAD_MODULES=1 ZTS_FIBERS=$fibers nice -n 10 valgrind "${opts[@]}" \
    target/zts/zts-host "$so" "$root/zts" "${small[@]}"
done

if [ "${ZTS_TSAN:-0}" = 1 ]; then
  # The extension and Rust's std instrumented; the host linked with the
  # ThreadSanitizer runtime of the same nightly (exported, so the
  # extension finds it), and loading the extension itself (ZTS_HOST_LINK:
  # the runtime refuses PHP's RTLD_DEEPBIND).
  target=x86_64-unknown-linux-gnu
  CARGO_TARGET_DIR=$root/target/zts-tsan RUSTFLAGS="-Zsanitizer=thread" nice -n 10 \
    cargo +nightly build -Zbuild-std --target "$target" --release --locked -p redislock
  runtime=$(rustc +nightly --print sysroot)/lib/rustlib/$target/lib/librustc-nightly_rt.tsan.a
  cc "${host_cflags[@]}" -o target/zts/zts-host-tsan zts/host.c "${host_libs[@]}" -rdynamic \
    -Wl,--whole-archive "$runtime" -Wl,--no-whole-archive -ldl -lm -lrt -lstdc++
  # No Fibers: ThreadSanitizer cannot follow the stack switches of a PHP
  # that is not instrumented (its longjmp bookkeeping breaks).
  run "ThreadSanitizer" 600 env ZTS_HOST_LINK=1 ZTS_FIBERS=0 TSAN_OPTIONS="halt_on_error=1 exitcode=66" \
    target/zts/zts-host-tsan "$root/target/zts-tsan/$target/release/libredislock.so" "$root/zts" \
    "${ZTS_THREADS:-6}" "${ZTS_REQUESTS:-12}" "${ZTS_ROUNDS:-5}"
fi

echo "zts phpt: ${phpt_passed} passed, ${phpt_failed} failed"
echo "zts phpize install: ${phpize_passed} passed, $((1 - phpize_passed)) failed"
echo "zts host: ${host_passed} passed, ${host_failed} failed"
failed=$((phpt_failed + 1 - phpize_passed + host_failed))
echo "$((phpt_passed + phpize_passed + host_passed)) passed, ${failed} failed"
[ "$failed" = 0 ]
