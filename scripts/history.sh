#!/usr/bin/env bash
# The long run of the history checker (crates/core/tests/history.rs): worker
# processes take one lock under random pauses (SIGSTOP/SIGCONT), SIGKILLs,
# replies cut by a fault proxy, lease expiries and forks, and every belief
# they were given is checked against every other and against the fencing
# tokens. The test command runs it for 20 s; this runs it for $1 seconds
# (default 600). Ends with the checker's counts; exits non-zero on any
# violation.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
HISTORY_SECONDS=${1:-600} cargo test --locked -p redislock-core --test history -- 2>&1 | grep -v '^ *Running\|^ *Finished\|^ *Compiling'
