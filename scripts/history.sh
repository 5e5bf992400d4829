#!/usr/bin/env bash
# The long run of the history checker (crates/core/tests/history/): worker
# processes take one lock, two locks with a 3 s lease (well above a
# hand-over mark's life), one semaphore, and one lock's read and write holds
# (four scenarios side by side) under random pauses (SIGSTOP/SIGCONT),
# SIGKILLs, replies cut or held back by a fault proxy, requests held up in
# flight or refused, connections dropped in first waits, departed waiters
# at the head of the queues, lease expiries and forks, and every belief
# they were given is checked: no two holders of the lock, never more
# holders than permits, no writer beside anyone, fencing tokens in grant
# order; every hold kept for its ttl (the pause tolerance), renewals that
# keep a hold while they can reach Redis, unanswered releases finished,
# first waits that survive a dropped connection (docs/testing.md). The
# test command runs it for 20 s; this runs it for $1 seconds (default
# 600); HISTORY_SCENARIOS=long,rw picks scenarios. Ends with one line of
# counts per scenario; exits non-zero on any violation.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
HISTORY_SECONDS=${1:-600} cargo test --locked -p redislock-core --test history -- 2>&1 | grep -v '^ *Running\|^ *Finished\|^ *Compiling'
