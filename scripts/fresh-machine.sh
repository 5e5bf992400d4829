#!/usr/bin/env bash
# Tries the README's two commands as a new user would, on a fresh Debian:
# builds a minimal root with debootstrap (--variant=minbase: no bc, no
# sudo, no compiler), adds only Rust (this machine's toolchain, mounted
# read-only), clones the current commit into /root/redislock (mode 700, so
# php-fpm's workers cannot read the checkout), and runs, as root with an
# empty environment:
#
#   bash scripts/demo.sh
#   bash scripts/test.sh
#
# printing each one's exit status, time and last line. Not part of the
# test command (root, about 15 minutes, and it needs the Debian registry).
#
#   bash scripts/fresh-machine.sh                 # Debian 12, new root
#   bash scripts/fresh-machine.sh --suite trixie  # Debian 13
#   bash scripts/fresh-machine.sh --keep --root /var/tmp/fresh
#       keep the root afterwards / reuse one (its apt cache and packages
#       stay; the checkout and cargo's files are made anew)
#   bash scripts/fresh-machine.sh --only demo|test|valkey
#   bash scripts/fresh-machine.sh --suite trixie --valkey
#       then the test command once more against Valkey (Debian 13 has
#       valkey-server; the test servers are chosen by REDISLOCK_REDIS_SERVER
#       and REDISLOCK_REDIS_CLI)
#
# The second test cell of docs/install.md's tested versions (Debian 13: PHP 8.4, Symfony 6.4,
# Laravel 10, PHPUnit 11, Redis 8.0, then Valkey 8.1) is
#   bash scripts/fresh-machine.sh --suite trixie --valkey
#
# Logs: ROOT/root/demo.log, test.log, valkey.log (printed on failure).
# Processes left in the root are found by their /proc/PID/root and killed;
# nothing else is ever signalled.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
ROOT_LOG=fresh-machine
# The root itself (debootstrap, mounts, chroot, cleanup) is shared with
# scripts/package.sh and scripts/package-test.sh.
# shellcheck source=scripts/lib/root.sh
. scripts/lib/root.sh

suite=bookworm
root=""
keep=0
only=""
valkey=0
while [ $# -gt 0 ]; do
  case "$1" in
    --suite) suite=$2; shift 2 ;;
    --root) root=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --only) only=$2; shift 2 ;;
    --valkey) valkey=1; shift ;;
    *) echo "fresh-machine: unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
case "$only" in
  "" | demo | test) ;;
  valkey) valkey=1 ;;
  *) echo "fresh-machine: --only demo, test or valkey" >&2; exit 2 ;;
esac
root_require
if [ -z "$root" ]; then
  root=$(mktemp -d "/var/tmp/redislock-fresh-$suite.XXXXXX")
fi
root=$(realpath "$root")
[ "$root" != / ] || { echo "fresh-machine: refusing / as the root" >&2; exit 2; }

# The toolchain cargo runs here, mounted read-only: the fresh root gets
# Rust and nothing else from this machine.
toolchain=$(root_toolchain) || exit 2

# Kills what still runs inside the root, then unmounts what this script
# mounted, newest first, and removes the root unless --keep.
cleanup() { root_cleanup "$root" "$keep"; }
trap cleanup EXIT

started=$(date +%s)
root_make "$root" "$suite"
echo "fresh-machine: root ready in $(($(date +%s) - started)) s"

root_mount "$root"
root_bind "$toolchain" "$root/opt/rust" ro
root_port_claims "$root"

# A clean clone of the current commit, and no crates from an earlier run.
rm -rf "$root/root/.cargo"
root_checkout "$root" "$repo" "$(git -C "$repo" rev-parse HEAD)"
commit=$(git -C "$repo" rev-parse --short HEAD)

# run NAME COMMAND: one README command in the root, as root, with an empty
# environment but for PATH (Rust first) and HOME (root_step).
status=0
run() {
  root_step "fresh-machine ($suite, $commit)" "$root" "$1" "$2" || status=1
}
[ "$only" != "" ] && [ "$only" != demo ] || run demo "bash scripts/demo.sh"
[ "$only" != "" ] && [ "$only" != test ] || run test "bash scripts/test.sh"
# The same test command with every test server a valkey-server.
[ "$valkey" = 0 ] || run valkey "bash scripts/setup.sh test valkey-server valkey-tools &&
  valkey-server --version &&
  REDISLOCK_REDIS_SERVER=valkey-server REDISLOCK_REDIS_CLI=valkey-cli bash scripts/test.sh"
exit "$status"
