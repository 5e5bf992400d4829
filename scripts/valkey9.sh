#!/usr/bin/env bash
# Makes, once, a Debian unstable root holding Valkey 9 for the tests of the
# lock without scripts (crates/core/tests/scriptless.rs and
# php-tests/connections/164-restricted-scriptless-valkey.phpt), which need
# DELIFEQ and SET ... IFEQ (Valkey 9.0 or newer; Debian 12 has Redis 7.0
# and Debian 13 Valkey 8.1), and prints the REDISLOCK_TEST_SERVER value that
# runs its server:
#
#   export REDISLOCK_TEST_SERVER=$(bash scripts/valkey9.sh)
#
# Needs root (debootstrap, chroot, mount) and the Debian registry: about
# 30 s the first time (measured here), nothing after (the root,
# VALKEY9_ROOT, default /var/tmp/valkey-sid, is kept). The test command runs it when it
# runs as root and REDISLOCK_TEST_SERVER is unset.
set -euo pipefail
cd "$(dirname "$0")/.."

ROOT_LOG=valkey9
# shellcheck source=scripts/lib/root.sh
source scripts/lib/root.sh
root_require
root=${VALKEY9_ROOT:-/var/tmp/valkey-sid}

if [ ! -x "$root/usr/bin/valkey-server" ]; then
  # Messages go to stderr: stdout is the value to export.
  trap 'root_cleanup "$root" 1 >&2' EXIT
  root_make "$root" sid >&2
  root_no_services "$root"
  # valkey-server's post-install script needs /proc.
  root_mount "$root"
  root_apt "$root" valkey-server >&2
  root_cleanup "$root" 1 >&2
  trap - EXIT
fi
echo "$ROOT_LOG: $(chroot "$root" valkey-server --version)" >&2
echo "chroot $root valkey-server"
