# Sourced helper: a Debian root made by debootstrap, its mounts, commands
# run in it with chroot, and its cleanup. Used by scripts/fresh-machine.sh
# (a new user's machine), scripts/package.sh (the release binaries) and
# scripts/package-test.sh (the binaries loaded on a machine without a
# compiler). Needs root (debootstrap, chroot, mount).
#
#   ROOT_LOG=name                 prefix of the messages (default: root)
#   root_require                  exits 2 unless run as root
#   root_toolchain                prints the directory of this machine's Rust
#                                 toolchain (bin/cargo inside), or fails
#   root_make ROOT SUITE          debootstrap --variant=minbase SUITE into
#                                 ROOT unless ROOT/bin/bash exists, then
#                                 what a machine here needs to reach the
#                                 registries (names, certificates, apt's
#                                 settings)
#   root_mount ROOT               /proc, /sys, /dev, /dev/pts
#   root_bind SOURCE TARGET [ro]  a bind mount, undone by root_cleanup
#   root_run ROOT COMMAND         bash -c COMMAND in ROOT as root, with an
#                                 empty environment but PATH (/opt/rust/bin
#                                 first), HOME=/root, TERM, LANG
#   root_apt ROOT PACKAGE...      apt-get update and install (no
#                                 recommends) inside ROOT
#   root_no_services ROOT         packages installed in ROOT start no service
#   root_php85 ROOT PACKAGE...    Debian's experimental suite beside unstable
#                                 (a sid ROOT), php8.5-* pinned to it, then
#                                 PACKAGE... (PHP 8.5: php8.5-cli, ...)
#   root_cleanup ROOT KEEP        kills what still runs inside ROOT (found
#                                 by /proc/PID/root: nothing else is ever
#                                 signalled), unmounts what was mounted in
#                                 it, newest first, and removes ROOT unless
#                                 KEEP is 1
#
# A script calls root_cleanup from its EXIT trap for each root it made.

ROOT_LOG=${ROOT_LOG:-root}
ROOT_MOUNTS=()

root_require() {
  [ "$(id -u)" = 0 ] || { echo "$ROOT_LOG: run as root (debootstrap, chroot, mount)" >&2; exit 2; }
}

root_toolchain() {
  local toolchain
  toolchain=$(dirname "$(dirname "$(rustup which rustc 2>/dev/null || command -v rustc)")")
  [ -x "$toolchain/bin/cargo" ] || { echo "$ROOT_LOG: no Rust toolchain found (rustup which rustc)" >&2; return 1; }
  echo "$toolchain"
}

root_make() {
  local root=$1 suite=$2 mirror
  command -v debootstrap >/dev/null || {
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >/dev/null
  }
  if [ ! -x "$root/bin/bash" ]; then
    # The same Debian mirror as this machine's apt.
    # (Either file may be missing: a grep that finds nothing must not end
    # a caller under set -e and pipefail.)
    mirror=$(grep -hoE '^URIs: *[^ ]+' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1 | awk '{print $2}' || true)
    [ -n "$mirror" ] || mirror=$(grep -hoE '^deb +[^ ]+' /etc/apt/sources.list 2>/dev/null | head -n1 | awk '{print $2}' || true)
    echo "$ROOT_LOG: debootstrap --variant=minbase $suite into $root"
    debootstrap --variant=minbase "$suite" "$root" "${mirror:-http://deb.debian.org/debian}" >"$root.debootstrap.log" 2>&1 \
      || { tail -n 20 "$root.debootstrap.log"; return 1; }
    rm -f "$root.debootstrap.log"
  fi
  # A machine's / is 755: a root made in a `mktemp -d` directory (700)
  # would keep every other user (php-fpm's workers run as nobody) out of
  # the whole tree ("Primary script unknown").
  chmod 755 "$root"
  # What a machine on this network needs to reach the registries: names,
  # certificates, apt's settings. Nothing that would install a tool.
  cp /etc/resolv.conf /etc/hosts "$root/etc/" 2>/dev/null || true
  mkdir -p "$root/etc/ssl/certs" "$root/usr/local/share/ca-certificates"
  cp -rL /etc/ssl/certs/. "$root/etc/ssl/certs/"
  # (update-ca-certificates rebuilds the bundle from here when a package
  # brings ca-certificates)
  cp -r /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/" 2>/dev/null || true
  cp /etc/apt/apt.conf.d/* "$root/etc/apt/apt.conf.d/" 2>/dev/null || true
}

root_bind() { # root_bind SOURCE TARGET [ro]
  mkdir -p "$2"
  mount --bind "$1" "$2"
  ROOT_MOUNTS+=("$2")
  [ "${3:-}" != ro ] || mount -o remount,bind,ro "$2"
}

root_mount() {
  local root=$1
  mount -t proc proc "$root/proc"; ROOT_MOUNTS+=("$root/proc")
  root_bind /sys "$root/sys"
  root_bind /dev "$root/dev"
  root_bind /dev/pts "$root/dev/pts"
  mkdir -p "$root/dev/shm"
}

root_run() { # root_run ROOT COMMAND (stdin, stdout and stderr are the caller's)
  chroot "$1" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
    PATH=/opt/rust/bin:/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /bin/bash -c "$2"
}

root_port_claims() { # root_port_claims ROOT
  # The machine's port claims, shared with the root's test servers (a suite
  # running here too must not start a server on a port the root's tests use).
  mkdir -p /tmp/redislock-test-ports && chmod 1777 /tmp/redislock-test-ports
  root_bind /tmp/redislock-test-ports "$1/tmp/redislock-test-ports"
}

root_checkout() { # root_checkout ROOT REPO COMMIT
  # A clean clone of REPO at COMMIT in ROOT/root/redislock; /root is 700,
  # as on a real machine.
  chmod 700 "$1/root"
  rm -rf "$1/root/redislock"
  git clone -q "$2" "$1/root/redislock"
  git -C "$1/root/redislock" checkout -q "$3"
}

# root_step LABEL ROOT NAME COMMAND: one command of a cell, run in
# /root/redislock of ROOT (root_run's environment), its output in
# ROOT/root/NAME.log; prints one line (LABEL: NAME: exit, time, the log's
# last line) and, on failure, the log's end, the failures it names (tests,
# phpt files, PHPUnit's numbered failures) and the first phpt diffs.
# Returns the command's exit status.
root_step() {
  local label=$1 root=$2 name=$3 command=$4 t0 rc last took
  t0=$(date +%s)
  set +e
  root_run "$root" "cd /root/redislock && $command" </dev/null >"$root/root/$name.log" 2>&1
  rc=$?
  set -e
  last=$(grep -av '^[[:space:]]*$' "$root/root/$name.log" | tail -n1)
  took=$(($(date +%s) - t0))
  echo "$label: $name: exit $rc in $((took / 60)) min $((took % 60)) s; last line: $last"
  if [ "$rc" != 0 ]; then
    echo "---- last 60 lines of $name.log ----"
    tail -n 60 "$root/root/$name.log"
    # What failed, by name: the root and its logs go unless kept.
    echo "---- failures named in $name.log ----"
    # (run-tests.php draws its progress with carriage returns)
    local cr=$'\r'
    grep -aoE "(FAIL|LEAK|BORK|SKIP) [^$cr]*\.phpt\]|^test .* FAILED\$|panicked at.*|^[0-9]+\) .*" \
      "$root/root/$name.log" | head -n 60 || true
    # And how each failed phpt differed from what it expected.
    local diff
    for diff in $(find "$root/root/redislock/php-tests" -name '*.diff' 2>/dev/null | head -n 12); do
      echo "---- ${diff#"$root/root/redislock/"} ----"
      head -n 25 "$diff"
    done
    echo "----"
  fi
  return "$rc"
}

root_apt() { # root_apt ROOT PACKAGE...
  local root=$1; shift
  # Quiet but for a failure (then the end of apt's output). A mirror that
  # serves a snapshot has Release files past their Valid-Until date, which
  # apt refuses unless told (a root made for tests and packages takes
  # them: the files are still signed).
  root_run "$root" "{ apt-get -o Acquire::Check-Valid-Until=false update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $*; } >/var/log/root-apt.log 2>&1 || { tail -n 20 /var/log/root-apt.log; exit 1; }"
}

root_cleanup() { # root_cleanup ROOT KEEP
  local root=$1 keep=$2 pid link i kept=()
  [ -n "$root" ] && [ "$root" != / ] || return 0
  for _ in 1 2 3; do
    for link in /proc/[0-9]*/root; do
      pid=${link#/proc/}; pid=${pid%/root}
      [ "$pid" -gt 1 ] 2>/dev/null || continue
      [ "$(readlink "$link" 2>/dev/null)" = "$root" ] && kill -9 "$pid" 2>/dev/null || true
    done
    sleep 0.5
  done
  for ((i = ${#ROOT_MOUNTS[@]} - 1; i >= 0; i--)); do
    case "${ROOT_MOUNTS[$i]}" in
      "$root"/*) umount -l "${ROOT_MOUNTS[$i]}" 2>/dev/null || true ;;
      *) kept=("${ROOT_MOUNTS[$i]}" "${kept[@]+"${kept[@]}"}") ;;
    esac
  done
  ROOT_MOUNTS=("${kept[@]+"${kept[@]}"}")
  if [ "$keep" = 0 ]; then
    # Never through a mount that is still there (umount -l detaches at once).
    rm -rf --one-file-system "$root"
  else
    echo "$ROOT_LOG: root kept in $root"
  fi
}

# root_no_services ROOT: packages installed in ROOT start no service (a
# redis-server package would start a server on port 6379 of this machine).
root_no_services() {
  mkdir -p "$1/usr/sbin"
  printf '#!/bin/sh\nexit 101\n' >"$1/usr/sbin/policy-rc.d"
  chmod 755 "$1/usr/sbin/policy-rc.d"
}

# root_php85 ROOT PACKAGE...: PHP 8.5 is in Debian's experimental suite
# only. Adds experimental beside unstable (a sid ROOT, from the same
# mirror), pins PHP 8.5's packages (php8.5-*) to it and nothing else
# (experimental's other packages, such as its newer php-common or perl,
# stay out: apt gives experimental priority 1), then installs PACKAGE....
root_php85() {
  local root=$1; shift
  if ! grep -q experimental "$root/etc/apt/sources.list" 2>/dev/null; then
    sed -n 's/^deb \([^ ]*\) sid main.*/deb \1 experimental main/p' "$root/etc/apt/sources.list" \
      >>"$root/etc/apt/sources.list"
  fi
  mkdir -p "$root/etc/apt/preferences.d"
  printf 'Package: php8.5*\nPin: release a=experimental\nPin-Priority: 990\n' \
    >"$root/etc/apt/preferences.d/php85"
  root_apt "$root" "$@"
}
