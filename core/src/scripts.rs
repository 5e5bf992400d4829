//! The Lua scripts, kept as `.lua` files beside the crate and compiled in.
//! redis-rs sends them with EVALSHA and falls back to loading them on
//! NOSCRIPT, so a script costs one round trip once the server knows it.

use std::sync::LazyLock;

use redis::Script;

/// Builds a script that may hand a free lock to a waiter: the shared
/// helpers (`lib/handoff.lua`) replace the script's `-- @handoff` line, so a
/// script can take its fast path before any helper closure is created
/// (creating them costs Redis a few microseconds per call).
fn with_handoff(script: &str) -> Script {
    let lib = include_str!("../scripts/lib/handoff.lua");
    assert!(
        script.contains("-- @handoff\n"),
        "script lacks its -- @handoff line"
    );
    Script::new(&script.replacen("-- @handoff\n", lib, 1))
}

/// Compare-and-delete, or hand over to the next waiter (release).
pub static RELEASE: LazyLock<Script> =
    LazyLock::new(|| with_handoff(include_str!("../scripts/release.lua")));

/// Take the lock if free, else join the queue (blocking acquire).
pub static ENQUEUE: LazyLock<Script> =
    LazyLock::new(|| with_handoff(include_str!("../scripts/enqueue.lua")));

/// A queued waiter's check after a wake-up timeout, or its give-up.
pub static CHECK: LazyLock<Script> =
    LazyLock::new(|| with_handoff(include_str!("../scripts/check.lua")));

/// Compare-and-pexpire (refresh).
pub static REFRESH: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../scripts/refresh.lua")));

/// Acquire that is safe to replay after a dropped connection.
pub static ACQUIRE_REPLAY: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../scripts/acquire_replay.lua")));

/// Remaining lease if still ours.
pub static OWNED_PTTL: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../scripts/owned_pttl.lua")));

/// Reentrant acquire: confirm ownership, never shorten the lease.
pub static REENTER: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../scripts/reenter.lua")));

/// SET NX PX plus INCR of the fence counter (acquire with fencing).
pub static ACQUIRE_FENCED: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../scripts/acquire_fenced.lua")));

/// Cleanup of a token whose acquire timed out: leave the queue, release.
pub static ABANDON: LazyLock<Script> =
    LazyLock::new(|| with_handoff(include_str!("../scripts/abandon.lua")));
