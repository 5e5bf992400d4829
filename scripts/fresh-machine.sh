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
#   bash scripts/fresh-machine.sh --only demo|test
#
# Logs: ROOT/root/demo.log and ROOT/root/test.log (printed on failure).
# Processes left in the root are found by their /proc/PID/root and killed;
# nothing else is ever signalled.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

suite=bookworm
root=""
keep=0
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --suite) suite=$2; shift 2 ;;
    --root) root=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --only) only=$2; shift 2 ;;
    *) echo "fresh-machine: unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "fresh-machine: run as root (debootstrap, chroot, mount)" >&2; exit 2; }
if [ -z "$root" ]; then
  root=$(mktemp -d "/var/tmp/redislock-fresh-$suite.XXXXXX")
fi
root=$(realpath "$root")
[ "$root" != / ] || { echo "fresh-machine: refusing / as the root" >&2; exit 2; }

# The toolchain cargo runs here, mounted read-only: the fresh root gets
# Rust and nothing else from this machine.
toolchain=$(dirname "$(dirname "$(rustup which rustc 2>/dev/null || command -v rustc)")")
[ -x "$toolchain/bin/cargo" ] || { echo "fresh-machine: no Rust toolchain found (rustup which rustc)" >&2; exit 2; }

command -v debootstrap >/dev/null || {
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >/dev/null
}

mounts=()
# Kills what still runs inside the root (found by /proc/PID/root), then
# unmounts what this script mounted, newest first.
cleanup() {
  local pid link
  for _ in 1 2 3; do
    for link in /proc/[0-9]*/root; do
      pid=${link#/proc/}; pid=${pid%/root}
      [ "$pid" -gt 1 ] 2>/dev/null || continue
      [ "$(readlink "$link" 2>/dev/null)" = "$root" ] && kill -9 "$pid" 2>/dev/null || true
    done
    sleep 0.5
  done
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    umount -l "${mounts[$i]}" 2>/dev/null || true
  done
  if [ "$keep" = 0 ]; then
    rm -rf --one-file-system "$root"
  else
    echo "fresh-machine: root kept in $root"
  fi
}
trap cleanup EXIT

started=$(date +%s)
if [ ! -x "$root/bin/bash" ]; then
  # The same Debian mirror as this machine's apt.
  mirror=$(grep -hoE '^URIs: *[^ ]+' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1 | awk '{print $2}')
  [ -n "$mirror" ] || mirror=$(grep -hoE '^deb +[^ ]+' /etc/apt/sources.list 2>/dev/null | head -n1 | awk '{print $2}')
  echo "fresh-machine: debootstrap --variant=minbase $suite into $root"
  debootstrap --variant=minbase "$suite" "$root" "${mirror:-http://deb.debian.org/debian}" >"$root.debootstrap.log" 2>&1 \
    || { tail -n 20 "$root.debootstrap.log"; exit 1; }
  rm -f "$root.debootstrap.log"
fi
# What a machine on this network needs to reach the registries: names,
# certificates, apt's settings. Nothing that would install a tool.
cp /etc/resolv.conf /etc/hosts "$root/etc/" 2>/dev/null || true
mkdir -p "$root/etc/ssl/certs" "$root/usr/local/share/ca-certificates"
cp -rL /etc/ssl/certs/. "$root/etc/ssl/certs/"
# (update-ca-certificates rebuilds the bundle from here when a package
# brings ca-certificates)
cp -r /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/" 2>/dev/null || true
cp /etc/apt/apt.conf.d/* "$root/etc/apt/apt.conf.d/" 2>/dev/null || true
echo "fresh-machine: root ready in $(($(date +%s) - started)) s"

bind() { # bind SOURCE TARGET [ro]
  mkdir -p "$2"
  mount --bind "$1" "$2"
  mounts+=("$2")
  [ "${3:-}" != ro ] || mount -o remount,bind,ro "$2"
}
mount -t proc proc "$root/proc"; mounts+=("$root/proc")
bind /sys "$root/sys"
bind /dev "$root/dev"
bind /dev/pts "$root/dev/pts"
mkdir -p "$root/dev/shm"
bind "$toolchain" "$root/opt/rust" ro
# Port claims are shared with the test servers of this machine (a suite
# running here too must not start a server on a port the root's tests use).
mkdir -p /tmp/redislock-test-ports && chmod 1777 /tmp/redislock-test-ports
bind /tmp/redislock-test-ports "$root/tmp/redislock-test-ports"

# A clean clone of the current commit; /root is 700, as on a real machine.
chmod 700 "$root/root"
rm -rf "$root/root/redislock" "$root/root/.cargo"
git clone -q "$repo" "$root/root/redislock"
git -C "$root/root/redislock" checkout -q "$(git -C "$repo" rev-parse HEAD)"
commit=$(git -C "$repo" rev-parse --short HEAD)

# run NAME COMMAND: one README command in the root, as root, with an empty
# environment but for PATH (Rust first) and HOME.
status=0
run() {
  local name=$1 command=$2 t0 rc last
  t0=$(date +%s)
  set +e
  chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
    PATH=/opt/rust/bin:/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /bin/bash -c "cd /root/redislock && $command" </dev/null >"$root/root/$name.log" 2>&1
  rc=$?
  set -e
  last=$(grep -v '^[[:space:]]*$' "$root/root/$name.log" | tail -n1)
  local took=$(($(date +%s) - t0))
  echo "fresh-machine ($suite, $commit): $name: exit $rc in $((took / 60)) min $((took % 60)) s; last line: $last"
  if [ "$rc" != 0 ]; then
    status=1
    echo "---- last 40 lines of $name.log ----"
    tail -n 40 "$root/root/$name.log"
    echo "----"
  fi
}
[ "$only" = test ] || run demo "bash scripts/demo.sh"
[ "$only" = demo ] || run test "bash scripts/test.sh"
exit "$status"
