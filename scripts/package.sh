#!/usr/bin/env bash
# Builds the release binaries that PIE's pre-packaged-binary method
# downloads, one per cell, each inside a clean Debian root of that cell (so
# the library is built against that cell's PHP headers and links that
# cell's glibc and OpenSSL):
#
#   bookworm      Debian 12, PHP 8.2, NTS (Debian's php8.2)
#   trixie        Debian 13, PHP 8.4, NTS (Debian's php8.4)
#   bookworm-zts  Debian 12, PHP 8.2, ZTS (thread-safe; see below)
#   sid           Debian unstable, PHP 8.5, NTS (experimental's php8.5: the
#                 only Debian suite with PHP 8.5; it links unstable's glibc)
#
# and writes, for each,
#
#   dist/php_redislock-TAG_phpX.Y-x86_64-linux-glibc[-zts].zip  (redislock.so only)
#   dist/php_redislock-TAG_phpX.Y-x86_64-linux-glibc[-zts].zip.sha256
#
# the name PIE looks for (php_{ext}-{tag}_php{X.Y}-{arch}-{os}-{libc}
# [-debug][-zts].zip: -zts for a thread-safe PHP, -debug for a debug
# build, both read from the PHP the library was built against). The
# checksum file is `sha256sum` output (`sha256sum -c` checks it). TAG must
# be the release's tag as PIE sees it; it defaults to the version in
# Cargo.toml.
#
#   bash scripts/package.sh                        # every cell
#   bash scripts/package.sh --cell trixie          # one (repeatable;
#                                                  # --suite is the same)
#   bash scripts/package.sh --tag 0.2.0
#   bash scripts/package.sh --root DIR --keep      # reuse / keep a build root
#                                                  # (one --cell only)
#
# Builds the committed HEAD (a clean clone of it), not uncommitted changes.
# The root gets debootstrap's minimal Debian, then only php-cli, php-dev,
# clang, libclang-dev, libssl-dev and pkg-config from the Debian registry,
# and this machine's Rust toolchain mounted read-only; cargo fetches the
# crates. The library is the same release build that phpize/make make,
# with the symbol table stripped (CARGO_PROFILE_RELEASE_STRIP=symbols).
#
# The ZTS cell: Debian ships no thread-safe PHP, so its PHP is the one
# scripts/zts-build.sh builds from Debian 12's php8.2 source package
# (/opt/redislock-php-8.2.32-zts, the PHP scripts/zts-test.sh tests on).
# That PHP is built on this machine, not in the root: this machine is
# Debian 12, the cell's release, and the build takes about 22 minutes
# (once: a built prefix is reused), which a fresh root would pay on every
# run. The library itself is built in a clean bookworm root as for the
# other cells (clang, libclang-dev, libssl-dev and pkg-config; no Debian
# php), with that prefix mounted read-only at its own path and php and
# php-config taken from it.
#
# About 2.5-4.5 minutes a cell (sid: 2 min 27 s), 13-17 for all four
# (estimated from the cells' times; plus the ZTS PHP's
# build the first time), on 2 shared cores. Needs root.
# scripts/package-test.sh loads the archives in clean roots without a
# compiler; scripts/release.sh runs both for every cell.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
ROOT_LOG=package
# shellcheck source=scripts/lib/root.sh
. scripts/lib/root.sh

cells=()
tag=""
root_arg=""
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --cell | --suite) cells+=("$2"); shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    --root) root_arg=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "package: unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
[ ${#cells[@]} -gt 0 ] || cells=(bookworm trixie bookworm-zts sid)
[ -z "$root_arg" ] || [ ${#cells[@]} = 1 ] || { echo "package: --root needs exactly one --cell" >&2; exit 2; }
if [ -z "$tag" ]; then
  tag=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n1)
  [ -n "$tag" ] || tag=$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n1)
fi
[[ "$tag" =~ ^[A-Za-z0-9][A-Za-z0-9._+-]*$ ]] || { echo "package: bad tag '$tag'" >&2; exit 2; }
root_require
toolchain=$(root_toolchain)

# Each cell: its Debian suite and its PHP.
suite_of() {
  case "$1" in
    bookworm | bookworm-zts) echo bookworm ;;
    trixie) echo trixie ;;
    sid) echo sid ;;
    *) echo "package: unknown cell $1 (bookworm, trixie, bookworm-zts or sid)" >&2; return 1 ;;
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

command -v zip >/dev/null || {
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends zip >/dev/null
}

# The ZTS PHP, built (or found built) before any root is made.
zts_prefix=""
for c in "${cells[@]}"; do
  if [ "$c" = bookworm-zts ] && [ -z "$zts_prefix" ]; then
    echo "package: bookworm-zts: the ZTS PHP (scripts/zts-build.sh; about 22 minutes unless built)"
    zts_prefix=$(nice -n 10 bash scripts/zts-build.sh | tail -n1)
    [ -x "$zts_prefix/bin/php-config" ] || { echo "package: no ZTS PHP in '$zts_prefix'" >&2; exit 1; }
  fi
done

commit=$(git rev-parse HEAD)
[ -z "$(git status --porcelain --untracked-files=no)" ] \
  || echo "package: uncommitted changes are not built: building HEAD ${commit:0:7}"
# The library's time in the archive: the commit's, so a rebuild of the same
# commit gives the same archive when the build is reproducible.
stamp=$(git log -1 --format=%ct "$commit")
mkdir -p dist

roots=()
cleanup() {
  local r
  for r in "${roots[@]+"${roots[@]}"}"; do root_cleanup "$r" "$keep"; done
}
trap cleanup EXIT

# build_cell CELL: one archive; the root is cleaned up by the caller.
build_cell() {
  local cell=$1 suite php packages env t0 log rc php_full zts debug arch suffix name stage took
  suite=$(suite_of "$cell")
  php=$(php_of "$cell")
  t0=$(date +%s)
  if [ -n "$root_arg" ]; then
    root=$root_arg; mkdir -p "$root"
  else
    root=$(mktemp -d "/var/tmp/redislock-package-$cell.XXXXXX")
  fi
  root=$(realpath "$root")
  [ "$root" != / ] || { echo "package: refusing / as the root" >&2; exit 2; }
  roots=("$root")
  root_make "$root" "$suite"
  root_no_services "$root"
  root_mount "$root"
  root_bind "$toolchain" "$root/opt/rust" ro
  if [ "$cell" = bookworm-zts ]; then
    # At its own path: php-config names the prefix's include directory.
    root_bind "$zts_prefix" "$root$zts_prefix" ro
    packages="clang libclang-dev libssl-dev pkg-config"
    env="PATH=$zts_prefix/bin:\$PATH PHP_CONFIG=$zts_prefix/bin/php-config PHP=$zts_prefix/bin/php"
  else
    packages="php$php-cli php$php-dev clang libclang-dev libssl-dev pkg-config"
    env="PHP_CONFIG=\$(command -v php-config$php) PHP=\$(command -v php$php)"
  fi
  echo "package: $cell: installing $packages"
  if [ "$cell" = sid ]; then
    root_php85 "$root" "php$php-cli" "php$php-dev" clang libclang-dev libssl-dev pkg-config || return 1
  else
    root_apt "$root" "$packages" || return 1
  fi

  root_checkout "$root" "$repo" "$commit"

  log="$root/root/package.log"
  echo "package: $cell: cargo build --release (PHP $php, commit ${commit:0:7})"
  # The PHP this root has, checked before and after the build.
  set +e
  root_run "$root" "set -e
    export $env
    cd /root/redislock
    ver=\$(php -r 'echo PHP_MAJOR_VERSION, \".\", PHP_MINOR_VERSION;')
    [ \"\$ver\" = $php ] || { echo \"PHP \$ver here, not $php\"; exit 1; }
    CARGO_PROFILE_RELEASE_STRIP=symbols cargo build --release --locked -p redislock
    cp target/release/libredislock.so /root/redislock.so
    php -n -d extension=/root/redislock.so --ri redislock | grep -q 'redislock support => enabled'
    php -r 'echo PHP_VERSION, \" zts=\", (int) PHP_ZTS, \" debug=\", (int) PHP_DEBUG, \" arch=\", php_uname(\"m\"), \"\\n\";' >/root/php.txt
  " </dev/null >"$log" 2>&1
  rc=$?
  set -e
  if [ "$rc" != 0 ]; then
    echo "package: $cell: FAILED (exit $rc); last 40 lines of the build:"
    tail -n 40 "$log"
    return 1
  fi

  # The name PIE looks for.
  read -r php_full zts debug arch <"$root/root/php.txt"
  case "${arch#arch=}" in
    x86_64 | amd64) arch=x86_64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) arch=${arch#arch=} ;;
  esac
  suffix=""
  [ "$debug" = debug=1 ] && suffix+="-debug"
  [ "$zts" = zts=1 ] && suffix+="-zts"
  # The cell's name promises its thread safety.
  case "$cell:$zts" in
    *-zts:zts=1 | bookworm:zts=0 | trixie:zts=0 | sid:zts=0) ;;
    *) echo "package: $cell: built against a PHP with $zts"; return 1 ;;
  esac
  name="php_redislock-${tag}_php$php-$arch-linux-glibc$suffix.zip"

  stage=$(mktemp -d)
  cp "$root/root/redislock.so" "$stage/redislock.so"
  chmod 755 "$stage/redislock.so"
  touch -d "@$stamp" "$stage/redislock.so"
  rm -f "dist/$name" "dist/$name.sha256"
  (cd "$stage" && TZ=UTC zip -q -X -D "$repo/dist/$name" redislock.so)
  rm -rf "$stage"
  (cd dist && sha256sum "$name" >"$name.sha256")
  took=$(($(date +%s) - t0))
  echo "package: $cell: dist/$name ($(stat -c %s "dist/$name") bytes, PHP $php_full${suffix}," \
    "sha256 $(cut -d' ' -f1 "dist/$name.sha256")) in $((took / 60)) min $((took % 60)) s"
}

status=0
for cell in "${cells[@]}"; do
  build_cell "$cell" || status=1
  cleanup
  roots=()
done
exit "$status"
