#!/usr/bin/env bash
# Installs what building and testing need on a fresh Debian 12 machine
# (only what is missing), then checks the Rust toolchain.
set -euo pipefail

packages=(php8.2-cli php8.2-dev clang libclang-dev redis-server redis-tools
          libssl-dev pkg-config openssl valgrind php8.2-fpm libfcgi-bin)
missing=()
for p in "${packages[@]}" "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi
# The Debian package starts a system Redis on 6379; the project never uses
# it (tests and the demo start their own servers on free ports).
command -v cargo >/dev/null || { echo "setup: cargo (Rust) is required: https://rustup.rs" >&2; exit 1; }
# The flake check runs the core suite under cargo-nextest.
if ! cargo nextest --version >/dev/null 2>&1; then
  echo "setup: installing cargo-nextest"
  cargo install --locked cargo-nextest
fi
