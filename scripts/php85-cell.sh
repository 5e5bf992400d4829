#!/usr/bin/env bash
# The PHP 8.5 cell: PHP 8.5 is the current PHP, and Debian has it only in
# its experimental suite. Builds a Debian unstable root (debootstrap
# --variant=minbase) with experimental's php8.5-cli, -dev and -fpm beside
# unstable's Redis and Valkey, adds only Rust (this machine's toolchain,
# mounted read-only), clones the current commit into /root/redislock, and
# runs, as root with an empty environment:
#
#   PHP=$(command -v php8.5) PHP_CONFIG=$(command -v php-config8.5) bash scripts/build.sh
#   REDISLOCK_PHP=php8.5 bash scripts/phpt.sh target/release/redislock.so
#   the same phpt suite against Valkey (REDISLOCK_REDIS_SERVER=valkey-server)
#   bash scripts/sapi-hook-test.sh (PHP 8.5's embed SAPI, as FrankenPHP)
#
# (Valkey 9 is also the server of the tests of the lock without scripts:
# REDISLOCK_TEST_SERVER=valkey-server in both runs.)
#
# printing each one's exit status, time and last line. What it does not
# run, and why: scripts/README.md ("The PHP 8.5 cell"). Not part of the
# test command (root, the Debian registry, about 15 minutes).
#
#   bash scripts/php85-cell.sh                       # new root, removed after
#   bash scripts/php85-cell.sh --keep --root /var/tmp/php85-sid
#       keep the root afterwards / reuse one (its packages stay; the
#       checkout and cargo's files are made anew)
#
# Logs: ROOT/root/build.log, phpt-redis.log, phpt-valkey.log,
# sapi-hook.log (printed on failure). Processes left in the root are found by their /proc/PID/root
# and killed; nothing else is ever signalled.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
ROOT_LOG=php85-cell
# shellcheck source=scripts/lib/root.sh
. scripts/lib/root.sh

root=""
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --root) root=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "php85-cell: unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
root_require
[ -n "$root" ] || root=$(mktemp -d /var/tmp/redislock-php85.XXXXXX)
root=$(realpath "$root")
[ "$root" != / ] || { echo "php85-cell: refusing / as the root" >&2; exit 2; }
toolchain=$(root_toolchain) || exit 2
cleanup() { root_cleanup "$root" "$keep"; }
trap cleanup EXIT

started=$(date +%s)
root_make "$root" sid
root_no_services "$root"
root_mount "$root"
# PHP 8.5 from experimental (pinned), the rest from unstable: the build
# (clang for ext-php-rs's bindings, OpenSSL for TLS), Redis and Valkey,
# php-fpm and cgi-fcgi for the FPM tests, promtool for the metrics tests,
# openssl for the TLS test's certificates, PHP's embed SAPI for the SAPI
# hook's host.
root_php85 "$root" php8.5-cli php8.5-dev php8.5-fpm libphp8.5-embed clang libclang-dev libssl-dev pkg-config \
  make git procps openssl redis-server redis-tools valkey-server valkey-tools libfcgi-bin prometheus
echo "php85-cell: root ready in $(($(date +%s) - started)) s:" \
  "$(root_run "$root" 'php8.5 -n -r "echo PHP_VERSION;"'), $(root_run "$root" 'redis-server --version | cut -d" " -f3'), $(root_run "$root" 'valkey-server --version | cut -d" " -f3')"

root_bind "$toolchain" "$root/opt/rust" ro
root_port_claims "$root"
# No crates from an earlier run: cargo fetches them, as on a new machine.
rm -rf "$root/root/.cargo"
root_checkout "$root" "$repo" "$(git -C "$repo" rev-parse HEAD)"
commit=$(git -C "$repo" rev-parse --short HEAD)

status=0
run() { # run NAME COMMAND (root_step)
  root_step "php85-cell ($commit)" "$root" "$1" "$2" || { status=1; return 1; }
}
if run build "PHP=\$(command -v php8.5) PHP_CONFIG=\$(command -v php-config8.5) bash scripts/build.sh"; then
  # Valkey 9 is also the server of the tests of the lock without scripts.
  run phpt-redis "REDISLOCK_PHP=php8.5 REDISLOCK_TEST_SERVER=valkey-server bash scripts/phpt.sh target/release/redislock.so" || true
  run phpt-valkey "REDISLOCK_PHP=php8.5 REDISLOCK_TEST_SERVER=valkey-server REDISLOCK_REDIS_SERVER=valkey-server REDISLOCK_REDIS_CLI=valkey-cli bash scripts/phpt.sh target/release/redislock.so" || true
  # (php and php-config are PHP 8.5's: the root has no other PHP.)
  run sapi-hook "bash scripts/sapi-hook-test.sh target/release/redislock.so" || true
fi
echo "php85-cell: done in $(($(date +%s) - started)) s"
exit "$status"
