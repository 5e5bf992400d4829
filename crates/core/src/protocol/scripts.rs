//! The Lua scripts, kept as `.lua` files beside the crate and compiled in.
//! They are sent with EVALSHA; a server that answers NOSCRIPT gets all of
//! them loaded at once ([`load_all`]) and the command again, so a script
//! costs one round trip once the server knows it.

use std::sync::LazyLock;

use redis::{ConnectionLike, RedisResult, Script};

use crate::protocol::command::{Arg, Command};

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

    /// The start of this script's EVALSHA on `keys` with `args` arguments
    /// to come ([`Command::with_head`]).
    pub fn evalsha_head(&self, keys: &[&[u8]], args: usize) -> Vec<u8> {
        let head = [
            Arg::from("EVALSHA"),
            Arg::from(self.hash()),
            Arg::Int(keys.len() as u64),
        ];
        Command::head(
            3 + keys.len() + args,
            head.into_iter().chain(keys.iter().map(|k| Arg::Bytes(k))),
        )
    }

    /// The EVALSHA of this script on `keys` with `args`.
    pub fn evalsha(&self, keys: &[&[u8]], args: &[Arg<'_>]) -> Command {
        let head = [
            Arg::from("EVALSHA"),
            Arg::from(self.hash()),
            Arg::Int(keys.len() as u64),
        ];
        Command::new(
            head.into_iter()
                .chain(keys.iter().map(|k| Arg::Bytes(k)))
                .chain(args.iter().copied()),
        )
    }
}

/// Builds a script from its file: each `-- @include NAME` line is replaced
/// by `lib/NAME.lua`. Scripts put their includes after their fast path, so
/// a call that returns early creates none of the library's closures
/// (creating them costs Redis a few microseconds per call).
fn script(code: &str) -> Lua {
    let mut out = String::with_capacity(code.len() * 2);
    for line in code.split_inclusive('\n') {
        match line.trim_end().strip_prefix("-- @include ") {
            Some("fence") => out.push_str(include_str!("../../scripts/lib/fence.lua")),
            Some("queue") => out.push_str(include_str!("../../scripts/lib/queue.lua")),
            Some("readers") => out.push_str(include_str!("../../scripts/lib/readers.lua")),
            Some("semaphore") => out.push_str(include_str!("../../scripts/lib/semaphore.lua")),
            Some(other) => panic!("no script library {other}"),
            None => out.push_str(line),
        }
    }
    Lua::new(out)
}

/// Compare-and-delete; with waiters, wakes the first or hands it the lock
/// (release). With its notify flag, the next waiter is only woken
/// (Redlock).
pub static RELEASE: LazyLock<Lua> =
    LazyLock::new(|| script(include_str!("../../scripts/release.lua")));

/// A step of a blocking acquire on one master: claim a hand-over, take a
/// free lock, join or stay in the queue, or give up.
pub static WAIT: LazyLock<Lua> = LazyLock::new(|| script(include_str!("../../scripts/wait.lua")));

/// Compare-and-pexpire (refresh).
pub static REFRESH: LazyLock<Lua> =
    LazyLock::new(|| script(include_str!("../../scripts/refresh.lua")));

/// Acquire that is safe to replay after a dropped connection.
pub static ACQUIRE_REPLAY: LazyLock<Lua> =
    LazyLock::new(|| script(include_str!("../../scripts/acquire_replay.lua")));

/// Remaining lease if still ours.
pub static OWNED_PTTL: LazyLock<Lua> =
    LazyLock::new(|| script(include_str!("../../scripts/owned_pttl.lua")));

/// The first acquire's check: scripts run here, and the ACL lets this user
/// run every command of the other scripts on the lock's keys.
pub static PERMITTED: LazyLock<Lua> =
    LazyLock::new(|| script(include_str!("../../scripts/permitted.lua")));

/// Reentrant acquire: confirm ownership, never shorten the lease.
pub static REENTER: LazyLock<Lua> =
    LazyLock::new(|| script(include_str!("../../scripts/reenter.lua")));

/// SET NX PX plus the next fencing token (acquire with fencing).
pub static ACQUIRE_FENCED: LazyLock<Lua> =
    LazyLock::new(|| script(include_str!("../../scripts/acquire_fenced.lua")));

/// Cleanup of a token whose acquire timed out: leave the queue, release.
pub static ABANDON: LazyLock<Lua> =
    LazyLock::new(|| script(include_str!("../../scripts/abandon.lua")));

/// A Redlock waiter joins, renews or leaves the wake-up queue of one server.
pub static NOTIFY_QUEUE: LazyLock<Lua> =
    LazyLock::new(|| script(include_str!("../../scripts/notify_queue.lua")));

/// What a server knows of a lock (`RedisLock::inspect()`); reads only.
pub static INSPECT: LazyLock<Lua> =
    LazyLock::new(|| script(include_str!("../../scripts/inspect.lua")));

/// A semaphore's acquire, or a step of its blocking acquire.
pub static SEM_ACQUIRE: LazyLock<Lua> =
    LazyLock::new(|| script(include_str!("../../scripts/sem_acquire.lua")));

/// A semaphore's release (or the cleanup of a token whose acquire or wait
/// ended without an answer): hands freed permits to the first waiters.
pub static SEM_RELEASE: LazyLock<Lua> =
    LazyLock::new(|| script(include_str!("../../scripts/sem_release.lua")));

/// A semaphore holder's lease: extend it, or read what is left.
pub static SEM_REFRESH: LazyLock<Lua> =
    LazyLock::new(|| script(include_str!("../../scripts/sem_refresh.lua")));

/// A lock's read acquire, a step of a blocking one, or a demotion.
pub static READ_ACQUIRE: LazyLock<Lua> =
    LazyLock::new(|| script(include_str!("../../scripts/read_acquire.lua")));

/// A reader gives its hold back; the last frees the lock for writers.
pub static READ_RELEASE: LazyLock<Lua> =
    LazyLock::new(|| script(include_str!("../../scripts/read_release.lua")));

/// A read hold's lease: extend it (also the renewal thread's), or read it.
pub static READ_REFRESH: LazyLock<Lua> =
    LazyLock::new(|| script(include_str!("../../scripts/read_refresh.lua")));

/// A read hold becomes the write hold once no other reader holds the lock.
pub static READ_PROMOTE: LazyLock<Lua> =
    LazyLock::new(|| script(include_str!("../../scripts/read_promote.lua")));

/// Every script, for [`load_all`].
fn all() -> [&'static Lua; 18] {
    [
        &RELEASE,
        &WAIT,
        &REFRESH,
        &ACQUIRE_REPLAY,
        &OWNED_PTTL,
        &PERMITTED,
        &REENTER,
        &ACQUIRE_FENCED,
        &ABANDON,
        &NOTIFY_QUEUE,
        &INSPECT,
        &SEM_ACQUIRE,
        &SEM_RELEASE,
        &SEM_REFRESH,
        &READ_ACQUIRE,
        &READ_RELEASE,
        &READ_REFRESH,
        &READ_PROMOTE,
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
