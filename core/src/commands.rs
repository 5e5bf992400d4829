//! The lock protocol on one connection. Every function is one round trip
//! (plus a one-time script load after NOSCRIPT) and safe to replay.

use std::time::Duration;

use redis::{ConnectionLike, RedisResult, Value};

use crate::keys::LockKeys;
use crate::pool::Attempt;
use crate::scripts;

/// A fencing token: strictly greater than every earlier one of the key.
/// `None` when the acquirer did not ask for one.
pub type Fence = Option<i64>;

/// Takes the lock if it is free: `SET key token NX PX ttl`, or with
/// `fencing` a script that also increments the lock's fence counter. On a
/// replay (the first try's reply was lost) a script recognises a first try
/// that went through. `None` when someone else holds the lock.
pub fn try_acquire(
    con: &mut dyn ConnectionLike,
    keys: &LockKeys,
    token: &[u8],
    ttl_ms: u64,
    fencing: bool,
    attempt: Attempt,
) -> RedisResult<Option<Fence>> {
    let replay = attempt == Attempt::Replay;
    if fencing {
        let fence: Option<i64> = scripts::ACQUIRE_FENCED
            .key(&keys.lock)
            .key(&keys.fence)
            .arg(token)
            .arg(ttl_ms)
            .arg(if replay { "1" } else { "0" })
            .invoke(con)?;
        return Ok(fence.map(Some));
    }
    let won = if replay {
        let won: i64 = scripts::ACQUIRE_REPLAY
            .key(&keys.lock)
            .arg(token)
            .arg(ttl_ms)
            .invoke(con)?;
        won == 1
    } else {
        let reply: Option<String> = redis::cmd("SET")
            .arg(&keys.lock)
            .arg(token)
            .arg("NX")
            .arg("PX")
            .arg(ttl_ms)
            .query(con)?;
        reply.is_some()
    };
    Ok(won.then_some(None))
}

/// Asks the server to run one of our scripts (read-only, on the lock's
/// key), to learn before a plain `SET NX PX` whether locks could be
/// released here. Fails with the server's refusal when scripts are refused.
pub fn check_scripts(con: &mut dyn ConnectionLike, key: &[u8]) -> RedisResult<()> {
    let _: i64 = scripts::OWNED_PTTL.key(key).arg("-").invoke(con)?;
    Ok(())
}

/// Confirms that the lock still holds `token` and makes its lease at least
/// `ttl_ms` long (a reentrant acquire). False when the lease was lost.
pub fn reenter(
    con: &mut dyn ConnectionLike,
    key: &[u8],
    token: &[u8],
    ttl_ms: u64,
) -> RedisResult<bool> {
    let ours: i64 = scripts::REENTER
        .key(key)
        .arg(token)
        .arg(ttl_ms)
        .invoke(con)?;
    Ok(ours == 1)
}

/// Releases the lock if it still holds `token`: hands it to the next live
/// waiter (waking it) or deletes it. True when it was ours.
pub fn release(con: &mut dyn ConnectionLike, keys: &LockKeys, token: &[u8]) -> RedisResult<bool> {
    let released: i64 = scripts::RELEASE
        .key(&keys.lock)
        .key(&keys.queue)
        .key(&keys.fence)
        .arg(token)
        .invoke(con)?;
    Ok(released == 1)
}

/// Cleans up after an acquire of `token` whose outcome is unknown, or a
/// wait that PHP ended: leaves the queue and releases the lock if the token
/// holds it. True when it did.
pub fn abandon(con: &mut dyn ConnectionLike, keys: &LockKeys, token: &[u8]) -> RedisResult<bool> {
    let held: i64 = scripts::ABANDON
        .key(&keys.lock)
        .key(&keys.queue)
        .key(&keys.fence)
        .arg(token)
        .invoke(con)?;
    Ok(held == 1)
}

/// What a step of a blocking acquire found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queued {
    /// The lock is ours (free, or handed over to us).
    Acquired {
        /// Our fencing token, if we asked for one.
        fence: Fence,
    },
    /// Still held by someone else, with `pttl_ms` left on its lease
    /// (-1: no expiry); we are in the queue.
    Waiting {
        /// Remaining lease of the holder.
        pttl_ms: i64,
    },
    /// We gave up and left the queue.
    GaveUp,
}

/// A queued waiter, as the scripts need to know it.
#[derive(Debug, Clone, Copy)]
pub struct Waiter<'a> {
    /// The waiter's owner token (its queue member).
    pub token: &'a [u8],
    /// The lease it asks for.
    pub ttl_ms: u64,
    /// How long its queue entry counts as live without a [`check`].
    pub alive_ms: u64,
    /// Whether it wants a fencing token.
    pub fencing: bool,
}

/// Takes the lock if it is free and nobody waits, else joins the queue of
/// waiters (one round trip). Safe to replay: the token is the queue member,
/// so a replay keeps the first try's place.
pub fn enqueue(
    con: &mut dyn ConnectionLike,
    keys: &LockKeys,
    waiter: &Waiter<'_>,
) -> RedisResult<Queued> {
    let reply: Vec<Value> = scripts::ENQUEUE
        .key(&keys.lock)
        .key(&keys.queue)
        .key(&keys.fence)
        .arg(waiter.token)
        .arg(waiter.ttl_ms)
        .arg(waiter.alive_ms)
        .arg(flag(waiter.fencing))
        .invoke(con)?;
    queued_reply("enqueue", &reply)
}

/// A queued waiter's check (one round trip): takes a lock handed over
/// without a wake-up or freed by an expiry, else renews the waiter's entry.
/// With `give_up` the waiter leaves the queue unless the lock was already
/// handed to it.
pub fn check(
    con: &mut dyn ConnectionLike,
    keys: &LockKeys,
    waiter: &Waiter<'_>,
    give_up: bool,
) -> RedisResult<Queued> {
    let cmd = check_cmd(keys, waiter, give_up);
    let reply: Vec<Value> = match cmd.query(con) {
        Err(e) if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) => {
            scripts::CHECK.load(con)?;
            cmd.query(con)?
        }
        other => other?,
    };
    queued_reply("check", &reply)
}

/// The EVALSHA of [`check`]; a NOSCRIPT reply is answered by loading it.
fn check_cmd(keys: &LockKeys, waiter: &Waiter<'_>, give_up: bool) -> redis::Cmd {
    let mut cmd = redis::cmd("EVALSHA");
    cmd.arg(scripts::CHECK.get_hash())
        .arg(3)
        .arg(&keys.lock)
        .arg(&keys.queue)
        .arg(&keys.fence)
        .arg(waiter.token)
        .arg(waiter.ttl_ms)
        .arg(waiter.alive_ms)
        .arg(flag(give_up))
        .arg(flag(waiter.fencing));
    cmd
}

/// Blocks up to `timeout` for the wake-up of `waiter` (`BLPOP` on its own
/// list), followed in the same round trip by the waiter's [`check`]: it
/// claims the full lease of a lock handed to us (the hand-over set only the
/// waiter's alive window), or, after a timeout, finds a lost wake-up or an
/// expired holder and renews the waiter's place.
pub fn wait_and_check(
    con: &mut dyn ConnectionLike,
    keys: &LockKeys,
    waiter: &Waiter<'_>,
    timeout: Duration,
) -> RedisResult<Queued> {
    let mut pipe = redis::pipe();
    pipe.cmd("BLPOP")
        .arg(keys.wake(waiter.token))
        .arg(format!("{:.3}", timeout.as_secs_f64().max(0.001)));
    pipe.add_command(check_cmd(keys, waiter, false));
    let replies = con.req_packed_commands(&pipe.get_packed_pipeline(), 0, 2)?;
    let [popped, checked] =
        <[Value; 2]>::try_from(replies).map_err(|_| unexpected("wait: two replies"))?;
    // The wake-up element is the fencing token ("-" without one).
    let popped: Option<(Vec<u8>, String)> = redis::from_redis_value(popped.extract_error()?)?;
    let pushed = popped.and_then(|(_, fence)| fence.parse().ok());
    let queued = match checked {
        Value::ServerError(e) if e.kind() == Some(redis::ServerErrorKind::NoScript) => {
            scripts::CHECK.load(con)?;
            check(con, keys, waiter, false)?
        }
        other => queued_reply(
            "check",
            &redis::from_redis_value::<Vec<Value>>(other.extract_error()?)?,
        )?,
    };
    Ok(match queued {
        // The BLPOP took the fencing token out of the wake list.
        Queued::Acquired { fence: None } if pushed.is_some() => Queued::Acquired { fence: pushed },
        other => other,
    })
}

/// The current owner token of the lock, if any.
pub fn owner(con: &mut dyn ConnectionLike, key: &[u8]) -> RedisResult<Option<Vec<u8>>> {
    redis::cmd("GET").arg(key).query(con)
}

/// Sets the lease to `ttl_ms` if the lock still holds `token`.
pub fn refresh(
    con: &mut dyn ConnectionLike,
    key: &[u8],
    token: &[u8],
    ttl_ms: u64,
) -> RedisResult<bool> {
    let extended: i64 = scripts::REFRESH
        .key(key)
        .arg(token)
        .arg(ttl_ms)
        .invoke(con)?;
    Ok(extended == 1)
}

/// Remaining lease in ms if the lock still holds `token`: `Some(-1)` when
/// the key has no expiry, `None` when it is not ours.
pub fn owned_pttl(
    con: &mut dyn ConnectionLike,
    key: &[u8],
    token: &[u8],
) -> RedisResult<Option<i64>> {
    let pttl: i64 = scripts::OWNED_PTTL.key(key).arg(token).invoke(con)?;
    Ok((pttl != -3 && pttl != -2).then_some(pttl))
}

/// Deletes the lock whoever holds it. True when a key was deleted.
pub fn force_release(con: &mut dyn ConnectionLike, key: &[u8]) -> RedisResult<bool> {
    let deleted: i64 = redis::cmd("DEL").arg(key).query(con)?;
    Ok(deleted == 1)
}

fn flag(on: bool) -> &'static str {
    if on { "1" } else { "0" }
}

fn unexpected(what: &str) -> redis::RedisError {
    redis::RedisError::from((
        redis::ErrorKind::UnexpectedReturnType,
        "unexpected reply",
        what.to_owned(),
    ))
}

fn queued_reply(script: &str, reply: &[Value]) -> RedisResult<Queued> {
    let fence = |n: i64| (n >= 0).then_some(n);
    match reply {
        [Value::Int(1), Value::Int(n)] => Ok(Queued::Acquired { fence: fence(*n) }),
        [Value::Int(2)] => Ok(Queued::GaveUp),
        [Value::Int(0), Value::Int(pttl_ms)] => Ok(Queued::Waiting { pttl_ms: *pttl_ms }),
        _ => Err(redis::RedisError::from((
            redis::ErrorKind::UnexpectedReturnType,
            "unexpected script reply",
            format!("{script}: {reply:?}"),
        ))),
    }
}
