#!/usr/bin/env bash
# Runs the phpt tests in php-tests/ against a built extension, on a private
# redis-server, and fails when any test failed, leaked or was skipped (a
# skipped test usually means the extension did not load).
#
#   scripts/phpt.sh path/to/redislock.so [phpt files or dirs...]
#   PHPT_ARGS=-m scripts/phpt.sh ...   runs every test under valgrind
#   PHPT_JOBS=3 scripts/phpt.sh ...     tests run at once (default 2)
#   PHPT_TOPOLOGY=redlock|sentinel|cluster scripts/phpt.sh SO php-tests/api
#       runs the tests on that topology (`redis-fixture topology NAME`,
#       started once; config.inc's redislock_test_lock(), _servers(),
#       _options() and redis_cmd() use it). Tests that need one plain
#       server skip there, so skips do not fail such a run.
#   REDISLOCK_PHP=/path/to/php scripts/phpt.sh ...   another PHP binary
#       (default: php on PATH); its own run-tests.php is used, and child
#       processes of the tests run it too (PHP_BINARY). scripts/zts-test.sh
#       runs the suite this way on a ZTS PHP.
set -euo pipefail
cd "$(dirname "$0")/.."
so=$(realpath "$1"); shift
source scripts/redis.sh
targets=("$@"); [ ${#targets[@]} -gt 0 ] || targets=(php-tests)
php=$(command -v "${REDISLOCK_PHP:-php}")
# Debian's layout (/usr/lib/php/API/build), or the run-tests.php installed
# beside that PHP (PREFIX/lib/php/API/build).
runner=/usr/lib/php/$("$php" -n -r 'echo PHP_EXTENSION_DIR;' | xargs basename)/build/run-tests.php
[ -f "$runner" ] || runner=$(find "$(dirname "$(dirname "$php")")/lib/php" /usr/lib/php \
  -name run-tests.php 2>/dev/null | head -n1)

# Every test has a number of its own (the file name's first part).
dupes=$(ls php-tests/*/*.phpt | sed -E 's|.*/([0-9]+)-[^/]*$|\1|' | sort | uniq -d | tr '\n' ' ')
if [ -n "$dupes" ]; then
  echo "phpt: test numbers used twice: $dupes(give each test a number of its own)" >&2
  exit 1
fi

topology=${PHPT_TOPOLOGY:-single}
trap redis_stop EXIT
if [ "$topology" = single ]; then
  redis_start
  export REDISLOCK_TEST_URL="redis://127.0.0.1:$REDIS_PORT"
else
  redis_topology "$topology"
  export REDISLOCK_TEST_TOPOLOGY=$topology REDISLOCK_TEST_SERVERS=$REDIS_SERVERS \
    REDISLOCK_TEST_OPTIONS=$REDIS_OPTIONS REDISLOCK_TEST_NODES=$REDIS_NODES
fi
export REDISLOCK_SO="$so"
log=$(mktemp)
set +e
NO_INTERACTION=1 TEST_PHP_EXECUTABLE=$php "$php" "$runner" -q --no-color \
  -n -d "extension=$so" ${PHPT_ARGS:-} "-j${PHPT_JOBS:-2}" "${targets[@]}" 2>&1 | tee "$log"
set -e
# A failed test's diff (its first 40 lines) is printed here, so that a
# run whose files are gone (CI) still says what went wrong.
for t in $(sed -nE 's/^FAIL .*\[([^][]+\.phpt)\] *$/\1/p' "$log"); do
  d=${t%.phpt}.diff
  [ -f "$d" ] || continue
  echo "--- $d (first 40 lines)"
  head -n 40 "$d"
done
count() { grep -E "^Tests $1" "$log" | grep -oE '[0-9]+' | head -n1 || true; }
passed=$(count passed); failed=$(count failed); skipped=$(count skipped); leaked=$(count leaked)
passed=${passed:-0}; failed=${failed:-0}; skipped=${skipped:-0}; leaked=${leaked:-0}
# On another topology only skips of tests that need one plain server are
# expected (their reason starts "on TOPOLOGY:"); any other skip (e.g. the
# extension did not load) still fails the run.
foreign_skips=$( (grep -oE 'SKIP .*' "$log" || true) | (grep -v "reason: needs REDISLOCK_TEST_SERVER" || true) \
  | (grep -vc "reason: on $topology: " || true))
# Tests of another server program (Valkey 9: REDISLOCK_TEST_SERVER) skip
# where none is named, with that reason: expected, not counted as skips.
no_server=$( (grep -oE 'SKIP .*' "$log" || true) | (grep -c "reason: needs REDISLOCK_TEST_SERVER" || true))
# Tests of a kind of server that the one under test is not (reason "not
# for this server: ...", e.g. a server without compare-and-delete when it
# has DELIFEQ): expected too, and named.
other_kind=$( (grep -oE 'SKIP .*' "$log" || true) | (grep "reason: not for this server: " || true))
other_kinds=$(grep -c . <<<"$other_kind" || true)
skipped=$((skipped - ${no_server:-0} - ${other_kinds:-0}))
foreign_skips=$((${foreign_skips:-0} - ${other_kinds:-0}))
rm -f "$log"
[ "${no_server:-0}" = 0 ] || echo "phpt: ${no_server} test(s) need REDISLOCK_TEST_SERVER (not set)"
[ "${other_kinds:-0}" = 0 ] || echo "phpt: ${other_kinds} test(s) not for this server:" \
  "$(sed -nE 's/.*\[([^]]+\.phpt)\].*/\1/p' <<<"$other_kind" | tr '\n' ' ')"
if [ "$topology" = single ]; then
  echo "phpt: ${passed} passed, ${failed} failed, ${skipped} skipped, ${leaked} leaked"
else
  echo "phpt ($topology): ${passed} passed, ${failed} failed, ${skipped} skipped, ${leaked} leaked"
  skipped=${foreign_skips:-0}
fi
if [ "$failed" != 0 ] || [ "$skipped" != 0 ] || [ "$leaked" != 0 ] || [ "$passed" = 0 ]; then
  echo "phpt: FAILED (failures, skips or nothing run)" >&2
  exit 1
fi
