#!/usr/bin/env bash
# The release procedure: from the committed HEAD, every archive PIE
# downloads, each loaded in a clean root without a compiler, then a table
# to paste into the release notes.
#
#   bash scripts/release.sh              # tag: the version in Cargo.toml
#   bash scripts/release.sh --tag 0.2.0  # must be that version (a leading
#                                        # v allowed)
#
# 1. Checks that the working tree is committed (package.sh builds HEAD)
#    and that the tag is the version everywhere a release names it:
#    Cargo.toml's workspace version, Cargo.lock's entries of our crates,
#    the stub's header, the version phpt test, docs/install.md's TAG=,
#    and a "## TAG" section in CHANGELOG.md.
# 2. bash scripts/package.sh --tag TAG: the archives of every cell
#    (bookworm, trixie, bookworm-zts, sid) and their .sha256 in dist/.
# 3. bash scripts/package-test.sh --tag TAG: each archive in a new clean
#    root of its cell (its checksum, contents, ldd, php --ri with the
#    version, one acquire and release).
# 4. Prints each archive's name, size and sha256, and the package test's
#    result; exits non-zero when a step failed.
#
# Then: tag the commit (git tag TAG) and upload the files of dist/ (the
# .zip files and their .sha256) to the release of that tag; PIE looks for
# exactly these names under it. About 20 minutes on 2 cores, plus 22 for
# the ZTS PHP (scripts/zts-build.sh) the first time. Needs root and the
# Debian registry.
set -euo pipefail
cd "$(dirname "$0")/.."

tag=""
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) tag=$2; shift 2 ;;
    *) echo "release: unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n1)
[ -n "$tag" ] || tag=$version
say() { echo "release: $*"; }

# 1. One version everywhere.
[ -z "$(git status --porcelain --untracked-files=no)" ] \
  || { say "commit first: package.sh builds HEAD, not the working tree"; exit 1; }
v=${tag#v}
bad=0
check() { # check WHAT COMMAND...: WHAT names the place
  local what=$1; shift
  if "$@" >/dev/null 2>&1; then say "version $v: $what"; else say "version $v: NOT in $what"; bad=1; fi
}
check "Cargo.toml" test "$version" = "$v"
for crate in redislock redislock-core redislock-fixture; do
  check "Cargo.lock ($crate)" awk -v c="name = \"$crate\"" -v w="version = \"$v\"" \
    '$0 == c { getline; ok = $0 == w } END { exit !ok }' Cargo.lock
done
check "stubs/redislock.stub.php" grep -qF "(version $v)" stubs/redislock.stub.php
check "php-tests/api/001-extension-loaded.phpt" grep -qF "=== '$v'" php-tests/api/001-extension-loaded.phpt
check "docs/install.md" grep -qF "TAG=$tag " docs/install.md
check "CHANGELOG.md" grep -qE "^## $v( |$)" CHANGELOG.md
[ "$bad" = 0 ] || { say "the tag $tag is not the version everywhere"; exit 1; }

# 2, 3. Build, then load each archive.
say "building $tag from HEAD $(git rev-parse --short HEAD)"
status=0
bash scripts/package.sh --tag "$tag" || status=1
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
bash scripts/package-test.sh --tag "$tag" 2>&1 | tee "$log"
[ "${PIPESTATUS[0]}" = 0 ] || status=1
set -e

# 4. The table.
echo
row() { printf '%-56s %9s %6s %8s  %-64s  %s\n' "$@"; }
mb() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1048576 }'; }
row archive bytes MB "unzipped" sha256 package-test
for cell in bookworm trixie bookworm-zts sid; do
  case "$cell" in
    bookworm) name="php_redislock-${tag}_php8.2-x86_64-linux-glibc.zip" ;;
    trixie) name="php_redislock-${tag}_php8.4-x86_64-linux-glibc.zip" ;;
    sid) name="php_redislock-${tag}_php8.5-x86_64-linux-glibc.zip" ;;
    bookworm-zts) name="php_redislock-${tag}_php8.2-x86_64-linux-glibc-zts.zip" ;;
  esac
  if [ -f "dist/$name" ] && (cd dist && sha256sum -c --status "$name.sha256"); then
    bytes=$(stat -c %s "dist/$name")
    so=$(unzip -l "dist/$name" | awk '$4 == "redislock.so" { print $1 }')
    result=FAILED
    grep -qF "package-test: $cell: $name: checksum ok" "$log" && result=passed
    row "$name" "$bytes" "$(mb "$bytes")" "$(mb "$so") MB" "$(cut -d' ' -f1 "dist/$name.sha256")" "$result"
  else
    row "$name" - - - - "missing or checksum mismatch"
    status=1
  fi
done
[ "$status" = 0 ] && say "$tag: every archive built and passed" || say "$tag: FAILED (see above)"
exit "$status"
