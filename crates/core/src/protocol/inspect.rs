//! A look at a lock on one server (`RedisLock::inspect()`): one read-only
//! script, one round trip, nothing written.

use redis::{RedisResult, Value};

use crate::protocol::call::Call;
use crate::protocol::keys::LockKeys;
use crate::protocol::reply::unexpected;
use crate::protocol::scripts;

/// What one server knows of a lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// The owner token the lock key holds, if it exists.
    pub owner: Option<Vec<u8>>,
    /// `PTTL` of the lock key in ms: -2 when it does not exist, -1 when it
    /// has no expiry.
    pub pttl_ms: i64,
    /// The fencing token of the current hold (`K~~f`), if any.
    pub fence: Option<i64>,
    /// Live waiters in the queue (`K~~q` entries whose mark has not
    /// expired; past the first 64, every entry counts).
    pub waiting: u64,
}

/// Reads the lock's owner, lease, fencing token and live waiters at once
/// (`inspect.lua`, which calls no command that writes).
pub fn inspect(keys: &LockKeys) -> Call<Seen> {
    let cmd = scripts::INSPECT.evalsha(&[&keys.lock, &keys.queue, &keys.fence], &[]);
    Call::one(cmd, parse)
}

fn parse(replies: Vec<Value>) -> RedisResult<Seen> {
    let [reply] = <[Value; 1]>::try_from(replies).map_err(|_| unexpected("one reply"))?;
    let fields: Vec<Value> = redis::from_redis_value(reply.extract_error()?)?;
    let [owner, pttl, fence, waiting] =
        <[Value; 4]>::try_from(fields).map_err(|_| unexpected("four fields"))?;
    let fence: Option<Vec<u8>> = redis::from_redis_value(fence)?;
    Ok(Seen {
        owner: redis::from_redis_value(owner)?,
        pttl_ms: redis::from_redis_value(pttl)?,
        // A fence key that holds no number (written by someone else) is
        // no fencing token.
        fence: fence.and_then(|f| std::str::from_utf8(&f).ok()?.parse().ok()),
        waiting: redis::from_redis_value(waiting)?,
    })
}
