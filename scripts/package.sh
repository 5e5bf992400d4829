#!/usr/bin/env bash
# Builds the release binaries that PIE's pre-packaged-binary method
# downloads, one per cell, each inside a clean Debian root of that cell (so
# the library is built against that cell's PHP headers and links that
# cell's glibc and OpenSSL):
#
#   bookworm  Debian 12, PHP 8.2, NTS
#   trixie    Debian 13, PHP 8.4, NTS
#
# and writes, for each,
#
#   dist/php_redislock-TAG_phpX.Y-x86_64-linux-glibc.zip  (redislock.so only)
#   dist/php_redislock-TAG_phpX.Y-x86_64-linux-glibc.zip.sha256
#
# the name PIE looks for (php_{ext}-{tag}_php{X.Y}-{arch}-{os}-{libc}
# [-debug][-zts].zip; -zts would be added for a thread-safe PHP, -debug for
# a debug build). The checksum file is `sha256sum` output (`sha256sum -c`
# checks it). TAG must be the release's tag as PIE sees it; it defaults to
# the version in Cargo.toml.
#
#   bash scripts/package.sh                        # both cells
#   bash scripts/package.sh --suite trixie         # one (repeatable)
#   bash scripts/package.sh --tag 0.2.0
#   bash scripts/package.sh --root DIR --keep      # reuse / keep a build root
#                                                  # (one --suite only)
#
# Builds the committed HEAD (a clean clone of it), not uncommitted changes.
# The root gets debootstrap's minimal Debian, then only php-cli, php-dev,
# clang, libclang-dev, libssl-dev and pkg-config from the Debian registry,
# and this machine's Rust toolchain mounted read-only; cargo fetches the
# crates. The library is the same release build that phpize/make make,
# with the symbol table stripped (CARGO_PROFILE_RELEASE_STRIP=symbols).
# About 3-4.5 minutes a cell, 8 for both, on 2 shared cores. Needs root.
# scripts/package-test.sh loads the archives in clean roots without a
# compiler.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
ROOT_LOG=package
# shellcheck source=scripts/lib/root.sh
. scripts/lib/root.sh

suites=()
tag=""
root_arg=""
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --suite) suites+=("$2"); shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    --root) root_arg=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "package: unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
[ ${#suites[@]} -gt 0 ] || suites=(bookworm trixie)
[ -z "$root_arg" ] || [ ${#suites[@]} = 1 ] || { echo "package: --root needs exactly one --suite" >&2; exit 2; }
if [ -z "$tag" ]; then
  tag=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n1)
  [ -n "$tag" ] || tag=$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n1)
fi
[[ "$tag" =~ ^[A-Za-z0-9][A-Za-z0-9._+-]*$ ]] || { echo "package: bad tag '$tag'" >&2; exit 2; }
root_require
toolchain=$(root_toolchain)

# The cell of each suite: its PHP.
php_of() {
  case "$1" in
    bookworm) echo 8.2 ;;
    trixie) echo 8.4 ;;
    *) echo "package: unknown suite $1 (bookworm or trixie)" >&2; return 1 ;;
  esac
}
for s in "${suites[@]}"; do php_of "$s" >/dev/null; done

command -v zip >/dev/null || {
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends zip >/dev/null
}

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

# build_cell SUITE: one archive; the root is cleaned up by the caller.
build_cell() {
  local suite=$1 php t0 log rc php_full zts debug arch suffix name stage took
  php=$(php_of "$suite")
  t0=$(date +%s)
  if [ -n "$root_arg" ]; then
    root=$root_arg; mkdir -p "$root"
  else
    root=$(mktemp -d "/var/tmp/redislock-package-$suite.XXXXXX")
  fi
  root=$(realpath "$root")
  [ "$root" != / ] || { echo "package: refusing / as the root" >&2; exit 2; }
  roots=("$root")
  root_make "$root" "$suite"
  root_no_services "$root"
  root_mount "$root"
  root_bind "$toolchain" "$root/opt/rust" ro
  echo "package: $suite: installing php$php-cli php$php-dev clang libclang-dev libssl-dev pkg-config"
  root_apt "$root" "php$php-cli php$php-dev clang libclang-dev libssl-dev pkg-config"

  chmod 700 "$root/root"
  rm -rf "$root/root/redislock"
  git clone -q "$repo" "$root/root/redislock"
  git -C "$root/root/redislock" checkout -q "$commit"

  log="$root/root/package.log"
  echo "package: $suite: cargo build --release (PHP $php, commit ${commit:0:7})"
  # The PHP this root has, checked before and after the build.
  set +e
  root_run "$root" "set -e
    cd /root/redislock
    ver=\$(php -r 'echo PHP_MAJOR_VERSION, \".\", PHP_MINOR_VERSION;')
    [ \"\$ver\" = $php ] || { echo \"PHP \$ver here, not $php\"; exit 1; }
    PHP_CONFIG=\$(command -v php-config$php) PHP=\$(command -v php$php) \
      CARGO_PROFILE_RELEASE_STRIP=symbols cargo build --release --locked -p redislock
    cp target/release/libredislock.so /root/redislock.so
    php -n -d extension=/root/redislock.so --ri redislock | grep -q 'redislock support => enabled'
    php -r 'echo PHP_VERSION, \" zts=\", PHP_ZTS, \" debug=\", PHP_DEBUG, \" arch=\", php_uname(\"m\"), \"\\n\";' >/root/php.txt
  " </dev/null >"$log" 2>&1
  rc=$?
  set -e
  if [ "$rc" != 0 ]; then
    echo "package: $suite: FAILED (exit $rc); last 40 lines of the build:"
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
  echo "package: $suite: dist/$name ($(stat -c %s "dist/$name") bytes, PHP $php_full," \
    "sha256 $(cut -d' ' -f1 "dist/$name.sha256")) in $((took / 60)) min $((took % 60)) s"
}

status=0
for suite in "${suites[@]}"; do
  build_cell "$suite" || status=1
  cleanup
  roots=()
done
exit "$status"
