#!/usr/bin/env bash
# Loads the archives of scripts/package.sh as a user of each cell would:
# for each cell, a NEW clean Debian root (debootstrap's minimal Debian plus
# only php-cli, redis-server and unzip: no compiler, no Rust, no php-dev),
# where it
#
#   checks the archive against its .sha256 (sha256sum -c),
#   checks that the archive holds redislock.so and nothing else,
#   checks that the PHP there is thread-safe exactly when the archive's
#   name ends in -zts,
#   unzips it into PHP's extension directory,
#   checks that every library the .so (and PHP) needs is there (ldd),
#   runs php -d extension=redislock --ri redislock, and checks that the
#   Version it shows is TAG (without a leading v),
#   starts a redis-server inside the root (a free loopback port, claimed as
#   the test suites claim theirs) and acquires and releases one lock, then
#   stops that server by its pid.
#
# The bookworm-zts cell: Debian has no ZTS PHP to install, so the root gets
# the ZTS PHP that scripts/zts-build.sh built on this machine (the one the
# archive was built against) copied to its own path, as the user's PHP,
# without its development files (bin/phpize, bin/php-config, include/,
# lib/php/build/), so the root has no php-dev there either; no Debian php.
#
#   bash scripts/package-test.sh                  # every cell
#   bash scripts/package-test.sh --cell trixie    # one (repeatable;
#                                                 # --suite is the same)
#   bash scripts/package-test.sh --tag 0.2.0      # default: Cargo.toml's
#   bash scripts/package-test.sh --dist DIR       # default: dist/
#   bash scripts/package-test.sh --keep           # keep the roots
#
# One line per cell, then "package-test: N passed, N failed"; exits non-zero
# when a cell failed. About 1.5 minutes a cell (mostly debootstrap and apt).
# Needs root and the Debian registry; not part of scripts/test.sh (which
# does not build the archives).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
ROOT_LOG=package-test
# shellcheck source=scripts/lib/root.sh
. scripts/lib/root.sh

cells=()
tag=""
dist=dist
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --cell | --suite) cells+=("$2"); shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    --dist) dist=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "package-test: unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
[ ${#cells[@]} -gt 0 ] || cells=(bookworm trixie bookworm-zts sid)
if [ -z "$tag" ]; then
  tag=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n1)
  [ -n "$tag" ] || tag=$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n1)
fi
dist=$(realpath "$dist")
root_require
# The roots have no Rust: the test's redis-server comes from this machine's
# fixture binary (scripts/redis.sh runs target/release/redis-fixture),
# built here when missing. It is a test tool, not part of the archive.
[ -x target/release/redis-fixture ] || cargo build --release --locked -p redislock-fixture

suite_of() {
  case "$1" in
    bookworm | bookworm-zts) echo bookworm ;;
    trixie) echo trixie ;;
    sid) echo sid ;;
    *) echo "package-test: unknown cell $1 (bookworm, trixie, bookworm-zts or sid)" >&2; return 1 ;;
  esac
}
php_of() {
  case "$1" in
    bookworm | bookworm-zts) echo 8.2 ;;
    trixie) echo 8.4 ;;
    sid) echo 8.5 ;;
  esac
}
for c in "${cells[@]}"; do suite_of "$c" >/dev/null; done
# The user's PHP of the ZTS cell: the prefix scripts/zts-build.sh made
# (found, never built here: the archive was built against it).
zts_prefix=${PHP_ZTS_PREFIX:-/opt/redislock-php-8.2.32-zts}
for c in "${cells[@]}"; do
  [ "$c" != bookworm-zts ] || [ -x "$zts_prefix/bin/php" ] \
    || { echo "package-test: no ZTS PHP in $zts_prefix (bash scripts/zts-build.sh)" >&2; exit 2; }
done

roots=()
cleanup() {
  local r
  for r in "${roots[@]+"${roots[@]}"}"; do root_cleanup "$r" "$keep"; done
}
trap cleanup EXIT

# What runs inside the root, as root, in /root/dl (the archive, its
# checksum, scripts/redis.sh and the fixture binary for the server), with
# arguments: the archive's name, the version it must hold, and a
# directory to put first on the PATH (the ZTS PHP's bin/, or "").
# Prints "ok: DETAILS" last.
inner='set -euo pipefail
cd /root/dl
name=$1 want=$2
[ -z "$3" ] || export PATH="$3:$PATH"
for tool in cc gcc clang cargo rustc php-config phpize; do
  ! command -v "$tool" >/dev/null || { echo "not a clean root: $tool is installed"; exit 1; }
done
sha256sum -c "$name.sha256"
entries=$(unzip -Z1 "$name")
[ "$entries" = redislock.so ] || { echo "the archive holds: $entries (want redislock.so only)"; exit 1; }
zts=0
case "$name" in *-zts.zip) zts=1 ;; esac
[ "$(php -r "echo (int) PHP_ZTS;")" = "$zts" ] || { echo "PHP_ZTS is not $zts for $name"; exit 1; }
ext_dir=$(php -r "echo PHP_EXTENSION_DIR;")
mkdir -p "$ext_dir"
unzip -o -q "$name" redislock.so -d "$ext_dir"
if ldd "$(command -v php)" "$ext_dir/redislock.so" | grep "not found"; then echo "missing libraries"; exit 1; fi
info=$(php -d extension=redislock --ri redislock)
grep -E "^(redislock support|Version) =>" <<<"$info" || true
grep -q "redislock support => enabled" <<<"$info" || { echo "php --ri redislock printed: $info"; exit 1; }
version=$(sed -n "s/^Version => //p" <<<"$info")
[ "$version" = "$want" ] || { echo "the library says version $version, the archive $want"; exit 1; }
REDIS_FIXTURE=/root/dl/redis-fixture
. /root/dl/redis.sh
redis_start
trap redis_stop EXIT
redis_version=$(redis-server --version | sed -n "s/.*v=\([^ ]*\).*/\1/p")
echo "redis-server $redis_version pid $REDIS_PID on port $REDIS_PORT"
php -d extension=redislock -r '\''
  $l = new RedisLock("package-test", ttl: 5.0, servers: "redis://127.0.0.1:" . $argv[1]);
  $got = $l->acquire();
  $held = $l->isAcquired() && $l->isLocked();
  $freed = $l->release();
  $after = $l->isLocked();
  if (!$got || !$held || !$freed || $after) {
    echo "acquire ", var_export($got, true), ", held ", var_export($held, true),
      ", release ", var_export($freed, true), ", locked after ", var_export($after, true), "\n";
    exit(1);
  }
  echo "acquire/release ok\n";
'\'' "$REDIS_PORT"
pid=$REDIS_PID
redis_stop
trap - EXIT
! kill -0 "$pid" 2>/dev/null || { echo "redis-server $pid still runs"; exit 1; }
echo "ok: checksum ok, only redislock.so, loaded by PHP $(php -r "echo PHP_VERSION, PHP_ZTS ? \" ZTS\" : \" NTS\";") (redislock $version)," \
  "acquire/release ok on redis-server $redis_version (pid $pid, stopped)"'

# test_cell CELL: prints the cell's line; fails when the cell failed.
test_cell() {
  local cell=$1 suite php suffix="" name root t0 log rc took path=""
  suite=$(suite_of "$cell")
  php=$(php_of "$cell")
  [ "$cell" != bookworm-zts ] || suffix=-zts
  name="php_redislock-${tag}_php$php-x86_64-linux-glibc$suffix.zip"
  t0=$(date +%s)
  if [ ! -f "$dist/$name" ] || [ ! -f "$dist/$name.sha256" ]; then
    echo "package-test: $cell: FAILED: no $dist/$name (and .sha256): run bash scripts/package.sh --cell $cell"
    return 1
  fi
  root=$(mktemp -d "/var/tmp/redislock-package-test-$cell.XXXXXX")
  roots=("$root")
  root_make "$root" "$suite"
  root_no_services "$root"
  root_mount "$root"
  root_port_claims "$root"
  if [ "$cell" = bookworm-zts ]; then
    root_apt "$root" "redis-server unzip"
    # The user's PHP: the ZTS prefix without its development files.
    mkdir -p "$root$(dirname "$zts_prefix")"
    cp -a "$zts_prefix" "$root$zts_prefix"
    rm -rf "$root$zts_prefix/bin/phpize" "$root$zts_prefix/bin/php-config" \
      "$root$zts_prefix/include" "$root$zts_prefix/lib/php/build" "$root$zts_prefix/share/aclocal"
    path=$zts_prefix/bin
  elif [ "$cell" = sid ]; then
    root_php85 "$root" "php$php-cli" redis-server unzip || return 1
  else
    root_apt "$root" "php$php-cli redis-server unzip" || return 1
  fi
  mkdir -p "$root/root/dl"
  cp "$dist/$name" "$dist/$name.sha256" "$repo/scripts/redis.sh" \
    "$repo/target/release/redis-fixture" "$root/root/dl/"
  printf '%s\n' "$inner" >"$root/root/dl/test.sh"
  log="$root/root/package-test.log"
  set +e
  root_run "$root" "bash /root/dl/test.sh '$name' '${tag#v}' '$path'" </dev/null >"$log" 2>&1
  rc=$?
  set -e
  took=$(($(date +%s) - t0))
  grep -v '^ok: ' "$log" | sed 's/^/    /'
  if [ "$rc" = 0 ] && grep -q '^ok: ' "$log"; then
    echo "package-test: $cell: $name: $(grep '^ok: ' "$log" | tail -n1 | cut -c5-), in $((took / 60)) min $((took % 60)) s"
    return 0
  fi
  echo "package-test: $cell: $name: FAILED (exit $rc) in $((took / 60)) min $((took % 60)) s"
  return 1
}

passed=0
failed=0
for cell in "${cells[@]}"; do
  if test_cell "$cell"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
  cleanup
  roots=()
done
echo "package-test: $passed passed, $failed failed"
[ "$failed" = 0 ]
