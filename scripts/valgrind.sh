#!/usr/bin/env bash
# Memory check of the whole phpt suite (not part of scripts/test.sh, which
# runs a subset): every php-tests/*.phpt runs under valgrind's memcheck
# (run-tests.php -m, PCRE's JIT off: valgrind cannot follow JIT code;
# definite leaks reported), at
# the lowest CPU priority. A test that memcheck reports on is "leaked"; its
# report stays in php-tests/<name>.mem. Valgrind slows PHP 20-50x, so
# checks of waiting times can fail; those failures are listed but do not
# fail the command. Exits non-zero when memcheck reported anything.
#
#   bash scripts/valgrind.sh [phpt files...]    (about an hour on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
so=target/release/redislock.so
[ -f "$so" ] || bash scripts/build.sh
command -v valgrind >/dev/null || bash scripts/setup.sh

# A copy of the build, so that rebuilding during the run changes nothing.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$so" "$work/redislock.so"
so=$work/redislock.so
log=$work/log
started=$SECONDS
# shellcheck source=scripts/valgrind-env.sh
source scripts/valgrind-env.sh
set +e
PHPT_ARGS="-m -d pcre.jit=0" nice -n 19 bash scripts/phpt.sh "$so" "$@" 2>&1 | tee "$log"
set -e
section() { sed -n "/^$1 TEST SUMMARY/,/^=====/p" "$log" | grep -E '\[php-tests/' | grep -oE 'php-tests/[^]]+' || true; }
leaked=$(section LEAKED)
failed=$(section FAILED)
echo
echo "valgrind: whole run took $(((SECONDS - started) / 60)) min"
line=$(grep -E '^phpt: [0-9]+ passed' "$log" | tail -n1)
echo "valgrind: ${line#phpt: }"
if [ -n "$failed" ]; then
  echo "valgrind: failed under valgrind's slowdown (not memcheck reports):"
  echo "$failed" | sed 's/^/  /'
fi
if [ -n "$leaked" ]; then
  echo "valgrind: memcheck reported on:"
  for t in $leaked; do
    echo "  $t"
    sed -n '1,40p' "${t%.phpt}.mem" 2>/dev/null | sed 's/^/    /'
  done
  exit 1
fi
echo "valgrind: no memcheck report in any test"
