//! A look at a lock on one server (`RedisLock::inspect()`): one read-only
//! script, one round trip, nothing written. It reads the lock's write or
//! read holds and, when that name is also a semaphore's, the semaphore.

use redis::{RedisResult, Value};

use crate::protocol::call::Call;
use crate::protocol::keys::LockKeys;
use crate::protocol::reply::unexpected;
use crate::protocol::scripts;
use crate::protocol::semaphore::{SemKeys, grace_ms, now_ms};

/// Most holders' tokens one look lists (readers, or a semaphore's
/// holders); all live ones are counted.
#[cfg(test)]
const SCAN: usize = 64;

/// What one server knows of a lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Seen {
    /// What the lock key holds, if it exists: the owner token, or the read
    /// mark ([`crate::protocol::readers::READ_MARK`]) while readers hold it.
    pub(crate) owner: Option<Vec<u8>>,
    /// `PTTL` of the lock key in ms: -2 when it does not exist, -1 when it
    /// has no expiry.
    pub(crate) pttl_ms: i64,
    /// The fencing token of the current hold (`K~~f`), if any.
    pub(crate) fence: Option<i64>,
    /// Live waiters in the queue (`K~~q` entries whose mark has not
    /// expired; past the first 64, every entry counts): writers and
    /// readers.
    pub(crate) waiting: u64,
    /// The live readers (`K~~r`) when the lock key holds the read mark.
    pub(crate) readers: Option<Holders>,
    /// The semaphore of the same name, when any of its keys exists.
    pub(crate) semaphore: Option<SemSeen>,
}

/// The live holders of a sorted set scored by lease end (a lock's readers,
/// a semaphore's holders): live while the lease end is above the looker's
/// now minus the clocks' grace.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Holders {
    /// How many are live.
    pub(crate) live: u64,
    /// Up to [`SCAN`] of their tokens, soonest lease end first.
    pub(crate) tokens: Vec<Vec<u8>>,
    /// Ms left on the longest live lease by the looker's clock (negative
    /// when it ended within the grace); 0 when none is live.
    pub(crate) longest_ms: i64,
}

/// What one server knows of a semaphore (`S~~s`, `S~~s~~q`, `S~~s~~n`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SemSeen {
    /// Its number of permits (the member `~~n` of `S~~s`), if set (it is
    /// while anyone holds or waits).
    pub(crate) permits: Option<i64>,
    /// Its live holders.
    pub(crate) holders: Holders,
    /// Live waiters in its queue (as for the lock's).
    pub(crate) waiting: u64,
}

/// Reads the lock's owner (or readers), lease, fencing token and live
/// waiters, and the semaphore of the same name, at once (`inspect.lua`,
/// which calls no command that writes). Every key shares the lock key's
/// hash slot: the semaphore's name is the lock's key.
pub(crate) fn inspect(keys: &LockKeys) -> Call<Seen> {
    let readers = SemKeys::readers(keys);
    let sem = SemKeys::new(&keys.lock);
    let cmd = scripts::INSPECT.evalsha(
        &[
            &keys.lock,
            &keys.queue,
            &keys.fence,
            &readers.holders,
            &sem.holders,
            &sem.queue,
        ],
        &[now_ms().into(), grace_ms().into()],
    );
    Call::one(cmd, parse)
}

fn parse(replies: Vec<Value>) -> RedisResult<Seen> {
    let [reply] = <[Value; 1]>::try_from(replies).map_err(|_| unexpected("one reply"))?;
    let fields: Vec<Value> = redis::from_redis_value(reply.extract_error()?)?;
    let [owner, pttl, fence, waiting, readers, semaphore] =
        <[Value; 6]>::try_from(fields).map_err(|_| unexpected("six fields"))?;
    Ok(Seen {
        owner: redis::from_redis_value(owner)?,
        pttl_ms: redis::from_redis_value(pttl)?,
        fence: number(fence)?,
        waiting: redis::from_redis_value(waiting)?,
        readers: match readers {
            Value::Nil => None,
            readers => Some(holders(redis::from_redis_value(readers)?)?),
        },
        semaphore: match semaphore {
            Value::Nil => None,
            sem => {
                let fields: Vec<Value> = redis::from_redis_value(sem)?;
                let [permits, live, tokens, longest, waiting] =
                    <[Value; 5]>::try_from(fields).map_err(|_| unexpected("five fields"))?;
                Some(SemSeen {
                    permits: number(permits)?,
                    holders: holders(vec![live, tokens, longest])?,
                    waiting: redis::from_redis_value(waiting)?,
                })
            }
        },
    })
}

/// A string that should hold a number; one that holds none (written by
/// someone else) is no number.
fn number(value: Value) -> RedisResult<Option<i64>> {
    let text: Option<Vec<u8>> = redis::from_redis_value(value)?;
    Ok(text.and_then(|t| std::str::from_utf8(&t).ok()?.parse().ok()))
}

/// `{live, tokens, ms left on the longest lease}`.
fn holders(fields: Vec<Value>) -> RedisResult<Holders> {
    let [live, tokens, longest] =
        <[Value; 3]>::try_from(fields).map_err(|_| unexpected("three fields"))?;
    Ok(Holders {
        live: redis::from_redis_value(live)?,
        tokens: redis::from_redis_value(tokens)?,
        longest_ms: redis::from_redis_value(longest)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(s: &str) -> Value {
        Value::BulkString(s.as_bytes().to_vec())
    }

    #[test]
    fn reads_a_write_hold_a_read_hold_and_a_semaphore() {
        let plain = Value::Array(vec![
            bulk("tok"),
            Value::Int(900),
            bulk("12"),
            Value::Int(1),
            Value::Nil,
            Value::Nil,
        ]);
        let seen = parse(vec![plain]).unwrap();
        assert_eq!(seen.owner.as_deref(), Some(&b"tok"[..]));
        assert_eq!((seen.pttl_ms, seen.fence, seen.waiting), (900, Some(12), 1));
        assert!(seen.readers.is_none() && seen.semaphore.is_none());

        let read = Value::Array(vec![
            bulk("~~read"),
            Value::Int(5000),
            Value::Nil,
            Value::Int(0),
            Value::Array(vec![
                Value::Int(70),
                Value::Array(vec![bulk("r1"), bulk("r2")]),
                Value::Int(4800),
            ]),
            Value::Array(vec![
                bulk("3"),
                Value::Int(1),
                Value::Array(vec![bulk("s1")]),
                Value::Int(-20),
                Value::Int(2),
            ]),
        ]);
        let seen = parse(vec![read]).unwrap();
        let readers = seen.readers.unwrap();
        assert_eq!((readers.live, readers.longest_ms), (70, 4800));
        assert_eq!(readers.tokens, [b"r1".to_vec(), b"r2".to_vec()]);
        let sem = seen.semaphore.unwrap();
        assert_eq!((sem.permits, sem.waiting), (Some(3), 2));
        assert_eq!(sem.holders.tokens, [b"s1".to_vec()]);
        assert_eq!(sem.holders.longest_ms, -20);
    }

    #[test]
    fn a_fence_or_permits_key_without_a_number_is_none() {
        assert_eq!(number(bulk("x")).unwrap(), None);
        assert_eq!(number(Value::Nil).unwrap(), None);
        assert_eq!(number(bulk("7")).unwrap(), Some(7));
    }

    #[test]
    fn the_script_lists_no_more_tokens_than_the_core_says() {
        let code = include_str!("../../scripts/inspect.lua");
        assert!(code.contains(&format!("local SCAN = {SCAN}\n")));
        let mark = String::from_utf8_lossy(crate::protocol::readers::READ_MARK);
        assert!(code.contains(&format!("'{mark}'")));
    }
}
