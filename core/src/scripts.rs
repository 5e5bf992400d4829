//! The Lua scripts, kept as `.lua` files beside the crate and compiled in.
//! redis-rs sends them with EVALSHA and falls back to loading them on
//! NOSCRIPT, so a script costs one round trip once the server knows it.

use std::sync::LazyLock;

use redis::Script;

/// Compare-and-delete (release).
pub static RELEASE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../scripts/release.lua")));

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
