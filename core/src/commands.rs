//! The lock protocol on one connection. Every function is one round trip
//! (plus a one-time script load after NOSCRIPT) and safe to replay.

use redis::{Connection, RedisResult};

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

/// Deletes the lock if it still holds `token`. True when it did.
pub fn release(con: &mut Connection, key: &[u8], token: &[u8]) -> RedisResult<bool> {
    let deleted: i64 = scripts::RELEASE.key(key).arg(token).invoke(con)?;
    Ok(deleted == 1)
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
