#!/usr/bin/env bash
# The long run of the history checker (crates/core/tests/history.rs): worker
# processes take one lock, one semaphore, and one lock's read and write
# holds (three scenarios side by side) under random pauses (SIGSTOP/SIGCONT),
# SIGKILLs, replies cut by a fault proxy, requests held up in flight, lease
# expiries and forks, and every belief they were given is checked: no two
# holders of the lock, never more holders than permits, no writer beside
# anyone, fencing tokens in grant order. The test command runs it for 20 s;
# this runs it for $1 seconds (default 600); HISTORY_SCENARIOS=semaphore,rw
# picks scenarios. Ends with one line of counts per scenario; exits
# non-zero on any violation.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
HISTORY_SECONDS=${1:-600} cargo test --locked -p redislock-core --test history -- 2>&1 | grep -v '^ *Running\|^ *Finished\|^ *Compiling'
