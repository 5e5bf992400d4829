//! The lock protocol on one connection. Every function is one round trip
//! (plus a one-time script load after NOSCRIPT) and safe to replay.

use redis::{Connection, RedisResult};

use std::time::Duration;

use crate::keys;
use crate::pool::Attempt;
use crate::scripts;

/// `SET key token NX PX ttl`. On a replay (the first try's reply was lost)
/// the idempotent script is used instead, so a SET that did go through is
/// recognised as ours.
pub fn try_acquire(
    con: &mut Connection,
    key: &[u8],
    token: &[u8],
    ttl_ms: u64,
    attempt: Attempt,
) -> RedisResult<bool> {
    match attempt {
        Attempt::First => {
            let reply: Option<String> = redis::cmd("SET")
                .arg(key)
                .arg(token)
                .arg("NX")
                .arg("PX")
                .arg(ttl_ms)
                .query(con)?;
            Ok(reply.is_some())
        }
        Attempt::Replay => {
            let won: i64 = scripts::ACQUIRE_REPLAY
                .key(key)
                .arg(token)
                .arg(ttl_ms)
                .invoke(con)?;
            Ok(won == 1)
        }
    }
}

/// Confirms that the lock still holds `token` and makes its lease at least
/// `ttl_ms` long (a reentrant acquire). False when the lease was lost.
pub fn reenter(con: &mut Connection, key: &[u8], token: &[u8], ttl_ms: u64) -> RedisResult<bool> {
    let ours: i64 = scripts::REENTER
        .key(key)
        .arg(token)
        .arg(ttl_ms)
        .invoke(con)?;
    Ok(ours == 1)
}

/// Releases the lock if it still holds `token`: hands it to the next live
/// waiter (waking it) or deletes it. True when it was ours.
pub fn release(con: &mut Connection, key: &[u8], token: &[u8]) -> RedisResult<bool> {
    let released: i64 = scripts::RELEASE
        .key(key)
        .key(keys::queue_key(key))
        .arg(token)
        .arg(keys::wake_prefix(key))
        .invoke(con)?;
    Ok(released == 1)
}

/// What the first step of a blocking acquire found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Enqueued {
    /// The lock is ours.
    Acquired,
    /// We are queued behind a holder whose lease has `pttl_ms` left.
    Queued {
        /// Remaining lease of the current holder (-1: no expiry).
        pttl_ms: i64,
        /// Our queue member, needed to check or leave the queue.
        member: Vec<u8>,
    },
}

/// Takes the lock if it is free and nobody waits, else joins the queue of
/// waiters (one round trip). A replay removes any entry the first try made.
pub fn enqueue(
    con: &mut Connection,
    key: &[u8],
    token: &[u8],
    ttl_ms: u64,
    wait_ms: u64,
    attempt: Attempt,
) -> RedisResult<Enqueued> {
    let reply: Vec<redis::Value> = scripts::ENQUEUE
        .key(key)
        .key(keys::queue_key(key))
        .arg(token)
        .arg(ttl_ms)
        .arg(wait_ms)
        .arg(keys::wake_prefix(key))
        .arg(if attempt == Attempt::Replay { "1" } else { "0" })
        .invoke(con)?;
    match reply.as_slice() {
        [redis::Value::Int(1)] => Ok(Enqueued::Acquired),
        [redis::Value::Int(0), pttl, member] => Ok(Enqueued::Queued {
            pttl_ms: redis::from_redis_value(pttl.clone())?,
            member: redis::from_redis_value(member.clone())?,
        }),
        _ => Err(unexpected("enqueue", &reply)),
    }
}

/// What a queued waiter's check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checked {
    /// The lock is ours (handed over, or free and nobody ahead of us).
    Acquired,
    /// Still held by someone else, with `pttl_ms` left on its lease.
    Waiting {
        /// Remaining lease of the holder (-1: no expiry).
        pttl_ms: i64,
    },
    /// We gave up and left the queue.
    GaveUp,
}

/// A queued waiter's check (one round trip). With `give_up` the waiter
/// leaves the queue unless the lock was already handed to it.
pub fn check(
    con: &mut Connection,
    key: &[u8],
    token: &[u8],
    member: &[u8],
    give_up: bool,
) -> RedisResult<Checked> {
    let reply: Vec<redis::Value> = scripts::CHECK
        .key(key)
        .key(keys::queue_key(key))
        .key(keys::wake_key(key, token))
        .arg(token)
        .arg(member)
        .arg(if give_up { "1" } else { "0" })
        .arg(keys::wake_prefix(key))
        .invoke(con)?;
    match reply.as_slice() {
        [redis::Value::Int(1)] => Ok(Checked::Acquired),
        [redis::Value::Int(2)] => Ok(Checked::GaveUp),
        [redis::Value::Int(0), pttl] => Ok(Checked::Waiting {
            pttl_ms: redis::from_redis_value(pttl.clone())?,
        }),
        _ => Err(unexpected("check", &reply)),
    }
}

/// Blocks up to `timeout` for the wake-up of the waiter holding `token`
/// (`BLPOP`). True when woken: the releaser has already made us the owner.
pub fn wait_for_wake(
    con: &mut Connection,
    key: &[u8],
    token: &[u8],
    timeout: Duration,
) -> RedisResult<bool> {
    let popped: Option<(Vec<u8>, Vec<u8>)> = redis::cmd("BLPOP")
        .arg(keys::wake_key(key, token))
        .arg(format!("{:.3}", timeout.as_secs_f64().max(0.001)))
        .query(con)?;
    Ok(popped.is_some())
}

fn unexpected(script: &str, reply: &[redis::Value]) -> redis::RedisError {
    redis::RedisError::from((
        redis::ErrorKind::UnexpectedReturnType,
        "unexpected script reply",
        format!("{script}: {reply:?}"),
    ))
}

/// Sets the lease to `ttl_ms` if the lock still holds `token`.
pub fn refresh(con: &mut Connection, key: &[u8], token: &[u8], ttl_ms: u64) -> RedisResult<bool> {
    let extended: i64 = scripts::REFRESH
        .key(key)
        .arg(token)
        .arg(ttl_ms)
        .invoke(con)?;
    Ok(extended == 1)
}

/// The current owner token of the lock, if any.
pub fn owner(con: &mut Connection, key: &[u8]) -> RedisResult<Option<Vec<u8>>> {
    redis::cmd("GET").arg(key).query(con)
}

/// Remaining lease in ms if the lock still holds `token`: `Some(-1)` when
/// the key has no expiry, `None` when it is not ours.
pub fn owned_pttl(con: &mut Connection, key: &[u8], token: &[u8]) -> RedisResult<Option<i64>> {
    let pttl: i64 = scripts::OWNED_PTTL.key(key).arg(token).invoke(con)?;
    Ok((pttl != -3 && pttl != -2).then_some(pttl))
}

/// Deletes the lock whoever holds it. True when a key was deleted.
pub fn force_release(con: &mut Connection, key: &[u8]) -> RedisResult<bool> {
    let deleted: i64 = redis::cmd("DEL").arg(key).query(con)?;
    Ok(deleted == 1)
}
