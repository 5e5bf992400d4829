#!/usr/bin/env bash
# Builds a minimal thread-safe (ZTS) PHP 8.2 from Debian's php8.2 source
# package: the CLI, the embed SAPI (libphp.so, for the threaded test host)
# and PHP-FPM (for the FPM phpt tests), with pcntl and posix. Debian 12
# ships only NTS PHP; this is the ZTS PHP the extension is tested on
# (scripts/zts-test.sh).
#
#   scripts/zts-build.sh          prints the prefix on its last line
#
# The source comes through apt's own verification: a private apt state
# (sources list, lists and cache under target/php-zts/apt; the machine's
# /etc/apt is not touched) reads the signed Sources index of Debian 12, whose
# hash of the .dsc apt checks, and apt-get source checks the tarballs
# against the .dsc; the script checks the SHA-256 sums of the .dsc once more
# before dpkg-source unpacks it and applies Debian's patches. Then, as
# debian/rules does, buildconf, and configure with --disable-all plus what
# the tests need.
#
# A prefix that already holds this build is reused. Settings:
#   PHP_ZTS_VERSION   Debian version of php8.2 (default 8.2.32-1~deb12u1,
#                     the one in bookworm main: the security archive's
#                     source files cannot be fetched here)
#   PHP_ZTS_PREFIX    install prefix (default /opt/redislock-php-VERSION-zts)
#   PHP_ZTS_JOBS      make -j (default: number of cores)
# Takes 22 minutes on 2 shared, busy cores (7 CPU minutes; nice -n 10), once.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${PHP_ZTS_VERSION:-8.2.32-1~deb12u1}
upstream=${version%%-*}
prefix=${PHP_ZTS_PREFIX:-/opt/redislock-php-$upstream-zts}
work=$PWD/target/php-zts
jobs=${PHP_ZTS_JOBS:-$(nproc)}
say() { echo "zts-build: $*" >&2; }

built() {
  [ -x "$prefix/bin/php" ] && [ -f "$prefix/lib/php/libphp.so" ] && [ -x "$prefix/sbin/php-fpm" ] \
    && [ "$("$prefix/bin/php" -n -r 'echo PHP_ZTS, " ", PHP_VERSION;' 2>/dev/null)" = "1 $upstream" ]
}
# Debian's phpize (patched) takes libtool's and pkg-config's m4 files from
# PREFIX/share/aclocal, which is /usr/share/aclocal for Debian's own PHP.
aclocal_link() {
  [ -e "$prefix/share/aclocal" ] || { mkdir -p "$prefix/share" && ln -s /usr/share/aclocal "$prefix/share/aclocal"; }
}
if built; then
  aclocal_link
  say "reusing $prefix"
  echo "$prefix"
  exit 0
fi
start=$(date +%s)

# Build dependencies: a C toolchain and autoconf for buildconf (Debian's
# patches change configure.ac). Nothing else: --disable-all needs no
# library headers, and PCRE is PHP's bundled one.
need=()
for p in build-essential autoconf libtool pkg-config dpkg-dev; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  say "installing ${need[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}" >&2
fi

# The source package, verified by apt from the archive's signed index.
apt_dir=$work/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$work/src"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main" \
  > "$apt_dir/sources.list"
apt_opts=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o Dir::Etc::sourceparts=-
  -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o APT::Sandbox::User=root)
dsc=$work/src/php8.2_${version}.dsc
if [ ! -f "$dsc" ]; then
  say "fetching php8.2 $version source"
  apt-get "${apt_opts[@]}" update >&2
  (cd "$work/src" && apt-get "${apt_opts[@]}" source --download-only "php8.2=$version" >&2)
fi
say "checking SHA-256 sums from $(basename "$dsc")"
sed -n '/^Checksums-Sha256:/,/^[A-Z]/p' "$dsc" | awk 'NF == 3 { print $1 "  " $3 }' \
  | (cd "$work/src" && sha256sum -c --strict -) >&2

src=$work/src/php-$upstream
if [ ! -f "$src/prepared-stamp" ]; then
  rm -rf "$src"
  say "unpacking and applying Debian's patches"
  dpkg-source --no-check -x "$dsc" "$src" >/dev/null
  # As debian/rules "prepared": buildconf (the patches change configure.ac).
  (cd "$src" && ./buildconf --force >&2 && touch prepared-stamp)
fi

say "configure (ZTS, cli + embed + fpm, pcntl, posix)"
cd "$src"
# -g: symbols for valgrind's helgrind/drd and gdb.
nice -n 10 ./configure --prefix="$prefix" \
  --enable-zts --disable-all --disable-debug --with-pic --without-pear \
  --enable-cli --enable-embed=shared --enable-fpm --disable-cgi --disable-phpdbg \
  --enable-pcntl --enable-posix --with-system-tzdata \
  --with-config-file-path="$prefix/etc" --with-config-file-scan-dir="$prefix/etc/conf.d" \
  CFLAGS="-O2 -g" >"$work/configure.log" 2>&1 || { tail -n 30 "$work/configure.log" >&2; exit 1; }
say "make -j$jobs (log: $work/make.log)"
nice -n 10 make -j"$jobs" >"$work/make.log" 2>&1 || { tail -n 30 "$work/make.log" >&2; exit 1; }
# Installs the phpt runner of this PHP too: lib/php/20220829/build/.
make install >"$work/install.log" 2>&1 || { tail -n 30 "$work/install.log" >&2; exit 1; }
built || { say "the build in $prefix is not a ZTS PHP $upstream"; exit 1; }
aclocal_link
say "built $("$prefix/bin/php" -n -v | head -n1) in $(( $(date +%s) - start )) s"
echo "$prefix"
