#!/usr/bin/env bash
# Installs what is missing on a Debian machine (root, or a user with
# sudo), then checks that every tool the next step runs is there, naming the
# package that brings a missing one. PHP is Debian's own (php-cli, php-dev,
# php-fpm): 8.2 on Debian 12, 8.4 on Debian 13.
#
#   bash scripts/setup.sh demo        what building and the demo need
#   bash scripts/setup.sh demo PKG..  that, plus these Debian packages
#                                     (what the examples' run.sh use)
#   bash scripts/setup.sh [test]      everything the test command runs
#   bash scripts/setup.sh test PKG..  plus these Debian packages
#   bash scripts/setup.sh PKG..       the same as test PKG..
set -euo pipefail

what=${1:-test}
case "$what" in
  demo | test) [ $# -gt 0 ] && shift ;;
  *) what=test ;;
esac

# Building the extension (ext-php-rs needs PHP's headers and libclang; the
# redis crate's TLS needs OpenSSL) and one redis-server for the demo.
packages=(php-cli php-dev clang libclang-dev libssl-dev pkg-config redis-server)
# Command -> package, checked after the install.
tools=(php:php-cli phpize:php-dev php-config:php-dev redis-server:redis-server
       awk:mawk mktemp:coreutils)
if [ "$what" = test ]; then
  # libphp-embed: PHP's embed SAPI (libphp8.2-embed on Debian 12,
  # libphp8.4-embed on 13), for the SAPI hook's test host.
  # prometheus: its promtool checks RedisLock::metrics() (php-tests/api/221).
  packages+=(redis-tools openssl valgrind php-fpm libfcgi-bin libphp-embed make git util-linux procps
             prometheus)
  tools+=(redis-cli:redis-tools openssl:openssl valgrind:valgrind clang:clang
          cgi-fcgi:libfcgi-bin make:make git:git flock:util-linux taskset:util-linux
          timeout:coreutils nproc:coreutils realpath:coreutils ps:procps
          promtool:prometheus)
fi

missing=()
for p in "${packages[@]}" "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  as_root=()
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || {
      echo "setup: not root and no sudo: install as root: apt-get install ${missing[*]}" >&2
      exit 1
    }
    as_root=(sudo)
  fi
  "${as_root[@]}" apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -q --no-install-recommends \
    "${missing[@]}" >/dev/null
fi
# The Debian package starts a system Redis on 6379; the project never uses
# it (tests and the demo start their own servers on free ports).

if [ "$what" = test ] && command -v php >/dev/null; then
  # php-fpm is named after the PHP version (php-fpm8.2, php-fpm8.4).
  php_version=$(php -r 'echo PHP_MAJOR_VERSION, ".", PHP_MINOR_VERSION;')
  tools+=("php-fpm$php_version:php-fpm")
fi
absent=()
for pair in "${tools[@]}"; do
  command -v "${pair%%:*}" >/dev/null || absent+=("${pair%%:*} (package ${pair#*:})")
done
command -v cargo >/dev/null || absent+=("cargo (Rust 1.88 or newer: https://rustup.rs)")
# The embed SAPI of the PHP that php runs (libphp-embed follows Debian's
# default PHP, as php-cli does).
if [ -n "${php_version:-}" ] && command -v php-config >/dev/null \
  && [ ! -f "$(php-config --prefix)/lib/libphp$php_version.so" ]; then
  absent+=("libphp$php_version.so (package libphp$php_version-embed)")
fi
if [ ${#absent[@]} -gt 0 ]; then
  printf 'setup: missing: %s\n' "${absent[@]}" >&2
  exit 1
fi
