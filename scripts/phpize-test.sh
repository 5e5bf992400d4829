#!/usr/bin/env bash
# Builds and installs the extension the way PIE does on Linux, in a copy of
# the repository: phpize, ./configure, make, make install (into a staging
# root, so the system is not modified). Then loads the installed
# redislock.so, checks redislock.ini against the registered settings, and
# checks that the build left only git-ignored files in the tree.
#
# Ends with one line, "phpize-test: passed ..." or "phpize-test: FAILED ...",
# and exits non-zero on failure.
#
# Cargo's build directory: by default the repository's own (target/, or
# $CARGO_TARGET_DIR), so a tree that scripts/build.sh has built is reused and
# the test takes seconds; cargo still decides what to rebuild (the copy keeps
# the files' modification times). PHPIZE_TEST_FRESH=1 builds from scratch in
# the copy, as PIE does (a few minutes on 2 cores). PHPIZE_TEST_KEEP=1 keeps
# the temporary directory.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
started=$(date +%s)

for tool in phpize php-config php make cargo tar; do
  command -v "$tool" >/dev/null || {
    echo "phpize-test: FAILED: $tool not found (phpize and php-config: apt-get install php-dev)"
    exit 1
  }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/redislock-phpize.XXXXXX")
cleanup() {
  if [ "${PHPIZE_TEST_KEEP:-0}" = 1 ]; then echo "phpize-test: kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
src="$tmp/src"
root="$tmp/root"
log="$tmp/log"
mkdir -p "$src" "$root"

step=""
fail() {
  echo "phpize-test: FAILED at $step: $* ($(($(date +%s) - started)) s)"
  exit 1
}
# Runs one build step with its output in the log; on failure shows the end.
run() {
  step=$1; shift
  local t0=$(date +%s)
  if ! (cd "$src" && "$@") >"$log" 2>&1; then
    tail -n 40 "$log" | sed 's/^/    /'
    fail "'$*' exited non-zero"
  fi
  echo "phpize-test: $step ok ($(($(date +%s) - t0)) s)"
}

# A clean tree: the files git tracks or would track (ignored files, such as
# target/ and earlier phpize output, stay out), with their modification times.
step="copy"
if git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  in_git=1
  git -C "$repo" ls-files -z --cached --others --exclude-standard \
    | while IFS= read -r -d '' f; do
        # Files deleted in the working tree are still in the index.
        if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi
      done \
    | tar --null -cf - -T - | tar -xf - -C "$src"
else
  in_git=0
  tar --exclude=./target -cf - . | tar -xf - -C "$src"
fi
[ -f "$src/config.m4" ] || fail "no config.m4 in the copied tree"
(cd "$src" && find . -path ./target -prune -o -print | LC_ALL=C sort) >"$tmp/before"

if [ "${PHPIZE_TEST_FRESH:-0}" = 1 ]; then
  unset CARGO_TARGET_DIR
  echo "phpize-test: from scratch, cargo target dir $src/target"
else
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
  echo "phpize-test: cargo target dir $CARGO_TARGET_DIR (PHPIZE_TEST_FRESH=1: from scratch)"
fi

run phpize phpize
run configure ./configure
# autoconf's clean-up runs `rm -f core ...` in the build root: a directory
# named core there made configure print "cannot remove 'core'".
! grep -q "cannot remove" "$log" || fail "configure printed: $(grep "cannot remove" "$log" | head -n1)"
run make make -j"$(nproc 2>/dev/null || echo 2)"
run "make install" make install INSTALL_ROOT="$root"

# `make test` runs the phpt suite against modules/redislock.so (two tests
# here; the test command runs all of them with scripts/phpt.sh).
step="make test"
make_tests="php-tests/api/010-acquire-release.phpt php-tests/api/021-reentrancy.phpt"
(cd "$src" && make test TESTS="$make_tests") >"$log" 2>&1 || {
  tail -n 30 "$log" | sed 's/^/    /'; fail "make test exited non-zero"; }
grep -qE '^Tests passed +: +2 ' "$log" || { tail -n 30 "$log" | sed 's/^/    /'; fail "make test did not pass both tests"; }
echo "phpize-test: make test ok (2 phpt tests passed)"

step="load"
ext_dir=$(php-config --extension-dir)
so="$root$ext_dir/redislock.so"
[ -f "$so" ] || fail "make install did not install $so"
loaded=$(php -n -d extension="$so" -r 'echo extension_loaded("redislock") ? "ok" : "missing";' 2>&1) || true
[ "$loaded" = ok ] || fail "php -n -d extension=$so printed: $loaded"
info=$(php -n -d extension="$so" --ri redislock 2>&1) || fail "php --ri redislock failed: $info"
grep -q 'redislock support => enabled' <<<"$info" || fail "php --ri redislock printed: $info"
echo "phpize-test: load ok ($so)"

# redislock.ini as phpenmod would use it: `extension=redislock` found in the
# extension directory, and every commented setting equal to its default.
step="redislock.ini"
mkdir -p "$tmp/conf.d"
: >"$tmp/php.ini"
sed -e 's/^;\(redislock\.[a-z_]* *=\)/\1/' "$src/redislock.ini" >"$tmp/conf.d/80-redislock.ini"
ini_php='$ini = ini_get_all("redislock", false);
  $file = parse_ini_file($argv[1], false, INI_SCANNER_RAW);
  $want = [];
  foreach ($file as $k => $v) if (str_starts_with($k, "redislock.")) $want[$k] = trim($v, "\"");
  ksort($ini); ksort($want);
  if (!extension_loaded("redislock")) { echo "extension=redislock did not load the extension"; exit(1); }
  if ($ini !== $want) { echo "settings ", json_encode($want), " != registered ", json_encode($ini); exit(1); }
  echo "ok";'
ini_out=$(PHP_INI_SCAN_DIR="$tmp/conf.d" php -c "$tmp/php.ini" -d extension_dir="$root$ext_dir" \
  -r "$ini_php" "$tmp/conf.d/80-redislock.ini" 2>&1) || fail "$ini_out"
[ "$ini_out" = ok ] || fail "$ini_out"
echo "phpize-test: redislock.ini ok"

# Everything phpize, configure and make wrote must be ignored by git, so a
# build in a checkout leaves `git status` clean.
if [ "$in_git" = 1 ]; then
  step=".gitignore"
  (cd "$src" && find . -path ./target -prune -o -print | LC_ALL=C sort) >"$tmp/after"
  unignored=()
  while IFS= read -r p; do
    p=${p#./}
    [ -d "$src/$p" ] && p="$p/"
    git -C "$repo" check-ignore -q --no-index -- "$p" || unignored+=("$p")
  done < <(LC_ALL=C comm -13 "$tmp/before" "$tmp/after")
  # A file inside an ignored directory is ignored with it.
  left=()
  for p in "${unignored[@]+"${unignored[@]}"}"; do
    d=$(dirname "$p"); covered=0
    while [ "$d" != . ]; do
      git -C "$repo" check-ignore -q --no-index -- "$d/" && { covered=1; break; }
      d=$(dirname "$d")
    done
    [ "$covered" = 1 ] || left+=("$p")
  done
  [ ${#left[@]} = 0 ] || fail "not in .gitignore: ${left[*]}"
  echo "phpize-test: .gitignore ok"
fi

echo "phpize-test: passed (phpize, configure, make, make test, make install, load, redislock.ini) in $(($(date +%s) - started)) s"
