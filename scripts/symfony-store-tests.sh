#!/usr/bin/env bash
# Fetches Symfony's own semaphore store contract tests
# (Semaphore/Tests/Store/AbstractStoreTestCase.php) of Symfony 5.4 from
# Debian 12's source package (the same contract on every Symfony the
# bridge is tested with: Debian 13's 6.4 too, whose own source is not
# always on the mirror), so the bridge's store runs them unchanged.
# Debian's binary packages leave the tests out. The source
# comes through apt (a private sources list for deb-src, under
# target/symfony-src/apt; the machine's apt state is not touched), which
# checks the .dsc against the archive's signed index and the tarball against
# the .dsc. Prints the path of the extracted file; the file is cached, never
# committed (Symfony's license stays with Symfony's package).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$PWD/target/symfony-src
out=$work/5.4/AbstractStoreTestCase.php
if [ -f "$out" ]; then
  echo "$out"
  exit 0
fi
apt_dir=$work/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$work/5.4"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main" \
  > "$apt_dir/sources.list"
apt_opts=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o Dir::Etc::sourceparts=-
  -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o APT::Sandbox::User=root)
apt-get "${apt_opts[@]}" -qq update >&2
version=$(apt-cache "${apt_opts[@]}" showsrc symfony | awk '/^Version:/ {print $2; exit}')
upstream=${version%%+*}
upstream=${upstream%%-*}
echo "symfony-store-tests: fetching the symfony $version source package (Debian 12)" >&2
(cd "$work/5.4" && apt-get "${apt_opts[@]}" -qq source --download-only "symfony=$version" >&2)
tarball=$(ls "$work/5.4"/symfony_*.orig.tar.* | head -1)
member=symfony-$upstream/src/Symfony/Component/Semaphore/Tests/Store/AbstractStoreTestCase.php
tar -xf "$tarball" -C "$work/5.4" "$member"
mv "$work/5.4/$member" "$out"
rm -rf "$work/5.4/symfony-$upstream" "$work/5.4"/symfony_*
echo "$out"
