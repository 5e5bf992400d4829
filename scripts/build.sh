#!/usr/bin/env bash
# Builds the extension in release mode: target/release/redislock.so, and
# the test fixture that starts private redis-servers for the phpt tests,
# the scripts and the benchmark: target/release/redis-fixture.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -p redislock -p redislock-fixture
# Copy then rename: a PHP process that has the old file mapped keeps it.
cp target/release/libredislock.so target/release/redislock.so.tmp
mv -f target/release/redislock.so.tmp target/release/redislock.so
echo "built $(pwd)/target/release/redislock.so"
