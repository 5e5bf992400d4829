#!/usr/bin/env bash
# Fetches Symfony's own semaphore store contract tests
# (Semaphore/Tests/Store/AbstractStoreTestCase.php) from the Debian source
# package of the installed php-symfony-semaphore, so the bridge's store runs
# them unchanged. Debian's binary package leaves the tests out. The source
# comes through apt (a private sources list for deb-src, under
# target/symfony-src/apt; the machine's apt state is not touched), which
# checks the .dsc against the archive's signed index and the tarball against
# the .dsc. Prints the path of the extracted file; the file is cached, never
# committed (Symfony's license stays with Symfony's package).
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(dpkg-query -W -f='${Version}' php-symfony-semaphore)
upstream=${version%%+*}
upstream=${upstream%%-*}
. /etc/os-release
work=$PWD/target/symfony-src
out=$work/$version/AbstractStoreTestCase.php
if [ -f "$out" ]; then
  echo "$out"
  exit 0
fi
apt_dir=$work/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$work/$version"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $VERSION_CODENAME main" \
  > "$apt_dir/sources.list"
apt_opts=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o Dir::Etc::sourceparts=-
  -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o APT::Sandbox::User=root)
echo "symfony-store-tests: fetching the symfony $version source package" >&2
apt-get "${apt_opts[@]}" -qq update >&2
(cd "$work/$version" && apt-get "${apt_opts[@]}" -qq source --download-only "symfony=$version" >&2)
tarball=$(ls "$work/$version"/symfony_*.orig.tar.* | head -1)
member=symfony-$upstream/src/Symfony/Component/Semaphore/Tests/Store/AbstractStoreTestCase.php
tar -xf "$tarball" -C "$work/$version" "$member"
mv "$work/$version/$member" "$out"
rm -rf "$work/$version/symfony-$upstream" "$work/$version"/symfony_*
echo "$out"
