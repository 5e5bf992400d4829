//! The Lua scripts, kept as `.lua` files beside the crate and compiled in.
//! They are sent with EVALSHA; a server that answers NOSCRIPT gets all of
//! them loaded at once ([`load_all`]) and the command again, so a script
//! costs one round trip once the server knows it.

use std::sync::LazyLock;

use redis::{ConnectionLike, RedisResult, Script};

/// One of our scripts: its source and SHA1.
pub struct Lua {
    code: String,
    script: Script,
}

impl Lua {
    fn new(code: String) -> Self {
        Self {
            script: Script::new(&code),
            code,
        }
    }

    /// The SHA1 that EVALSHA names the script by.
    pub fn hash(&self) -> &str {
        self.script.get_hash()
    }

    /// The EVALSHA of this script on `keys` with `args`.
    pub fn evalsha(&self, keys: &[&[u8]], args: &[&[u8]]) -> redis::Cmd {
        let mut cmd = redis::cmd("EVALSHA");
        cmd.arg(self.hash()).arg(keys.len());
        for key in keys {
            cmd.arg(*key);
        }
        for arg in args {
            cmd.arg(*arg);
        }
        cmd
    }
}

fn plain(code: &str) -> Lua {
    Lua::new(code.to_owned())
}

/// Builds a script that may hand a free lock to a waiter: the shared
/// helpers (`lib/handoff.lua`) replace the script's `-- @handoff` line, so a
/// script can take its fast path before any helper closure is created
/// (creating them costs Redis a few microseconds per call).
fn with_handoff(script: &str) -> Lua {
    let lib = include_str!("../scripts/lib/handoff.lua");
    assert!(
        script.contains("-- @handoff\n"),
        "script lacks its -- @handoff line"
    );
    Lua::new(script.replacen("-- @handoff\n", lib, 1))
}

/// Compare-and-delete, or hand over to the next waiter (release). With its
/// notify flag, the next waiter is only woken (Redlock).
pub static RELEASE: LazyLock<Lua> =
    LazyLock::new(|| with_handoff(include_str!("../scripts/release.lua")));

/// Take the lock if free, else join the queue (blocking acquire).
pub static ENQUEUE: LazyLock<Lua> =
    LazyLock::new(|| with_handoff(include_str!("../scripts/enqueue.lua")));

/// A queued waiter's check after a wake-up timeout, or its give-up.
pub static CHECK: LazyLock<Lua> =
    LazyLock::new(|| with_handoff(include_str!("../scripts/check.lua")));

/// Compare-and-pexpire (refresh).
pub static REFRESH: LazyLock<Lua> = LazyLock::new(|| plain(include_str!("../scripts/refresh.lua")));

/// Acquire that is safe to replay after a dropped connection.
pub static ACQUIRE_REPLAY: LazyLock<Lua> =
    LazyLock::new(|| plain(include_str!("../scripts/acquire_replay.lua")));

/// Remaining lease if still ours.
pub static OWNED_PTTL: LazyLock<Lua> =
    LazyLock::new(|| plain(include_str!("../scripts/owned_pttl.lua")));

/// The first acquire's check: scripts run here, and the ACL lets this user
/// run every command of the other scripts on the lock's keys.
pub static PERMITTED: LazyLock<Lua> =
    LazyLock::new(|| plain(include_str!("../scripts/permitted.lua")));

/// Reentrant acquire: confirm ownership, never shorten the lease.
pub static REENTER: LazyLock<Lua> = LazyLock::new(|| plain(include_str!("../scripts/reenter.lua")));

/// SET NX PX plus INCR of the fence counter (acquire with fencing).
pub static ACQUIRE_FENCED: LazyLock<Lua> =
    LazyLock::new(|| plain(include_str!("../scripts/acquire_fenced.lua")));

/// Cleanup of a token whose acquire timed out: leave the queue, release.
pub static ABANDON: LazyLock<Lua> =
    LazyLock::new(|| with_handoff(include_str!("../scripts/abandon.lua")));

/// A Redlock waiter joins, renews or leaves the wake-up queue of one server.
pub static NOTIFY_QUEUE: LazyLock<Lua> =
    LazyLock::new(|| with_handoff(include_str!("../scripts/notify_queue.lua")));

/// Every script, for [`load_all`].
fn all() -> [&'static Lua; 11] {
    [
        &RELEASE,
        &ENQUEUE,
        &CHECK,
        &REFRESH,
        &ACQUIRE_REPLAY,
        &OWNED_PTTL,
        &PERMITTED,
        &REENTER,
        &ACQUIRE_FENCED,
        &ABANDON,
        &NOTIFY_QUEUE,
    ]
}

/// Builds every script now (on PHP's thread, so a fork can never catch
/// another thread half-way through building one).
pub fn prepare() {
    for script in all() {
        let _ = script.hash();
    }
}

/// Loads every script into the server's script cache (one round trip);
/// called when a server answered NOSCRIPT (restarted, or `SCRIPT FLUSH`).
pub fn load_all(con: &mut dyn ConnectionLike) -> RedisResult<()> {
    let mut pipe = redis::pipe();
    for script in all() {
        pipe.cmd("SCRIPT").arg("LOAD").arg(&script.code);
    }
    pipe.query::<Vec<String>>(con).map(drop)
}
