//! The lock protocol without Lua, for servers that refuse scripts (renamed
//! or ACL-denied `EVAL`/`EVALSHA`, proxies, managed plans) but compare and
//! delete in one command: `DELIFEQ key value` (Valkey 9.0+) or
//! `DELEX key IFEQ value` (Redis 8.4+), both with `SET ... IFEQ value`
//! (Valkey 8.1+, Redis 8.4+).
//!
//! | step | commands (one round trip each) |
//! |---|---|
//! | acquire | `SET K token NX PX ttl` (a replay adds `GET K`) |
//! | release | `DELIFEQ K token` + `EXISTS K~~nw`; then, when waiters are marked, `RPUSH K~~n 1` + `PEXPIRE K~~n 1000` |
//! | refresh, reentrant acquire | `SET K token IFEQ token PX ttl` |
//! | `remainingTtl` | `GET K` + `PTTL K` |
//! | a blocked acquire's step | `BLPOP K~~n timeout` (not before the first step) + `SET K~~nw 1 PX alive` + `SET K token NX PX ttl` + `SET K token IFEQ token PX ttl` + `PTTL K`: the step rides behind the wait, so Redis runs it the moment a release wakes the waiter |
//!
//! Waiters share one wake-up list, `K~~n`, and mark their presence in
//! `K~~nw`: a release that deleted the lock and finds the mark pushes one
//! wake-up. There is no queue: whoever's `SET NX` comes first wins (no
//! FIFO), and a wake-up lost to a race is found by the waiter's next step,
//! at most `retry_delay` (or the holder's remaining lease) later. Fencing
//! tokens need an atomic counter-and-SET, which only a script gives: they
//! are refused on these servers.
//!
//! Nothing here is used on a server that runs scripts.

use redis::{RedisResult, Value};

use crate::protocol::call::{Attempt, Call};
use crate::protocol::command::Command;
use crate::protocol::keys::{LockKeys, helper_key};
use crate::protocol::lock_calls::{Released, set_nx};
use crate::protocol::reply::{one, two, unexpected, value};
use crate::protocol::step::Step;

/// How a script-less server compares and deletes in one command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CompareDelete {
    /// `DELIFEQ key value` (Valkey 9.0+).
    DelIfEq,
    /// `DELEX key IFEQ value` (Redis 8.4+).
    DelEx,
}

/// How long a pushed wake-up stays in `K~~n` when nobody pops it, in ms.
const WAKE_TTL_MS: u64 = 1000;

/// `K~~n`, the wake-up list that the waiters of the lock `K` share.
pub(crate) fn wake_list(lock: &[u8]) -> Vec<u8> {
    helper_key(lock, "n")
}

/// `K~~nw`, present while someone waits for the lock `K`.
pub(crate) fn waiters_mark(lock: &[u8]) -> Vec<u8> {
    helper_key(lock, "nw")
}

/// What [`probe`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Probe {
    /// The compare-and-delete the server has, if any (`DELIFEQ` first).
    pub(crate) how: Option<CompareDelete>,
    /// The connection's ACL user (`ACL WHOAMI`), when the server says.
    pub(crate) user: Option<String>,
}

/// Asks a server that refused our scripts which compare-and-delete it
/// has (`COMMAND INFO DELIFEQ DELEX`) and who we are there (`ACL WHOAMI`).
/// Reads and writes nothing.
pub(crate) fn probe() -> Call<Probe> {
    Call::new(
        vec![
            Command::of(&[b"COMMAND", b"INFO", b"DELIFEQ", b"DELEX"]),
            Command::of(&[b"ACL", b"WHOAMI"]),
        ],
        |replies| {
            let [info, whoami] = two(replies)?;
            let known: Vec<Value> = value(info)?;
            let has = |at: usize| matches!(known.get(at), Some(Value::Array(a)) if !a.is_empty());
            let how = if has(0) {
                Some(CompareDelete::DelIfEq)
            } else if has(1) {
                Some(CompareDelete::DelEx)
            } else {
                None
            };
            // A user who may not ask who they are: nothing to check with.
            let user = value::<String>(whoami).ok();
            Ok(Probe { how, user })
        },
    )
}

/// Asks the ACL (`ACL DRYRUN user ...`, Redis 7.0+ and Valkey) whether
/// `user` may run every command of the script-less lock on its keys. Runs
/// none of them. `Some(reason)` names the first one refused; `None` when
/// all are allowed, or when the server does not let this user ask (then a
/// refusal comes from the command itself).
pub(crate) fn permitted(user: &str, keys: &LockKeys, how: CompareDelete) -> Call<Option<String>> {
    let lock = &keys.lock[..];
    let (wake, mark) = (wake_list(lock), waiters_mark(lock));
    let delete: &[&[u8]] = match how {
        CompareDelete::DelIfEq => &[b"DELIFEQ", lock, b"-"],
        CompareDelete::DelEx => &[b"DELEX", lock, b"IFEQ", b"-"],
    };
    let needed: [&[&[u8]]; 10] = [
        &[b"SET", lock, b"-", b"NX", b"PX", b"1"],
        &[b"SET", lock, b"-", b"IFEQ", b"-", b"PX", b"1"],
        &[b"GET", lock],
        &[b"PTTL", lock],
        delete,
        &[b"EXISTS", &mark],
        &[b"SET", &mark, b"1", b"PX", b"1"],
        &[b"BLPOP", &wake, b"1"],
        &[b"RPUSH", &wake, b"1"],
        &[b"PEXPIRE", &wake, b"1"],
    ];
    let cmds = needed
        .iter()
        .map(|call| {
            let mut args: Vec<&[u8]> = vec![b"ACL", b"DRYRUN", user.as_bytes()];
            args.extend_from_slice(call);
            Command::of(&args)
        })
        .collect();
    Call::new(cmds, |replies| {
        for reply in replies {
            match reply {
                Value::Okay => {}
                Value::SimpleString(s) if s == "OK" => {}
                // DRYRUN refused to this user, or unknown: cannot tell.
                Value::ServerError(_) => return Ok(None),
                other => return Ok(Some(value::<String>(other)?)),
            }
        }
        Ok(None)
    })
}

/// `SET K token NX PX ttl`; on a replay (the first try's reply was lost)
/// also `GET K`, so that a first try that went through is recognised.
/// Returns whether the `SET` took the lock and, on a replay, the owner
/// token found (the caller compares it with its own).
pub(crate) fn acquire(
    keys: &LockKeys,
    token: &[u8],
    ttl_ms: u64,
    attempt: Attempt,
) -> Call<(bool, Option<Vec<u8>>)> {
    let set = set_nx(keys, token, ttl_ms);
    if attempt == Attempt::First {
        return Call::one(set, |r| Ok((set_ok(one(r)?)?, None)));
    }
    Call::new(vec![set, Command::of(&[b"GET", &keys.lock])], |r| {
        let [set, owner] = two(r)?;
        Ok((set_ok(set)?, value(owner)?))
    })
}

/// One step of a blocked acquire: marks that someone waits (`K~~nw`, for
/// `alive_ms`), tries `SET NX PX`, sets the lease again when the lock
/// holds `token` already (`SET IFEQ`: a replay whose first step went
/// through, its lease counted from this send), and reads the holder's
/// remaining lease. [`Step::Won`] (no fencing token), or
/// [`Step::Waiting`] with that lease, or [`Step::Again`] when the lock was
/// freed between the `SET`s. Safe to replay.
pub(crate) fn wait_step(keys: &LockKeys, token: &[u8], ttl_ms: u64, alive_ms: u64) -> Call<Step> {
    let mark = waiters_mark(&keys.lock);
    let alive = alive_ms.to_string();
    Call::new(
        vec![
            Command::of(&[b"SET", &mark, b"1", b"PX", alive.as_bytes()]),
            set_nx(keys, token, ttl_ms),
            refresh_cmd(&keys.lock, token, ttl_ms),
            Command::of(&[b"PTTL", &keys.lock]),
        ],
        |r| {
            let [marked, set, ours, pttl] =
                <[Value; 4]>::try_from(r).map_err(|_| unexpected("four replies"))?;
            marked.extract_error()?;
            if set_ok(set)? || set_ok(ours)? {
                return Ok(Step::Won {
                    fence: None,
                    left_ms: None,
                });
            }
            Ok(match value::<i64>(pttl)? {
                // Freed between the SETs: step again at once.
                -2 => Step::Again,
                pttl => Step::Waiting {
                    hint_ms: u64::try_from(pttl).ok(),
                },
            })
        },
    )
}

fn compare_delete(lock: &[u8], token: &[u8], how: CompareDelete) -> Command {
    match how {
        CompareDelete::DelIfEq => Command::of(&[b"DELIFEQ", lock, token]),
        CompareDelete::DelEx => Command::of(&[b"DELEX", lock, b"IFEQ", token]),
    }
}

/// Deletes the lock if it holds `token`, and looks whether anyone waits.
/// Returns what the delete found and whether waiters are marked (then the
/// caller sends [`wake`]).
pub(crate) fn release(
    keys: &LockKeys,
    token: &[u8],
    how: CompareDelete,
    attempt: Attempt,
) -> Call<(Released, bool)> {
    let cmds = vec![
        compare_delete(&keys.lock, token, how),
        Command::of(&[b"EXISTS", &waiters_mark(&keys.lock)]),
    ];
    let parse: fn(Vec<Value>) -> RedisResult<(Released, bool)> = match attempt {
        Attempt::First => |r| {
            let [deleted, waiting] = two(r)?;
            let found = match value::<i64>(deleted)? {
                1 => Released::Yes,
                _ => Released::NotOurs,
            };
            Ok((found, value::<i64>(waiting)? == 1))
        },
        Attempt::Replay => |r| {
            let [deleted, waiting] = two(r)?;
            let found = match value::<i64>(deleted)? {
                1 => Released::Yes,
                _ => Released::GoneOnReplay,
            };
            Ok((found, value::<i64>(waiting)? == 1))
        },
    };
    Call::new(cmds, parse)
}

/// Wakes one waiter of the lock: pushes to the shared list, which
/// expires a second after the push if nobody pops it.
pub(crate) fn wake(keys: &LockKeys) -> Call<()> {
    let list = wake_list(&keys.lock);
    let ttl = WAKE_TTL_MS.to_string();
    Call::new(
        vec![
            Command::of(&[b"RPUSH", &list, b"1"]),
            Command::of(&[b"PEXPIRE", &list, ttl.as_bytes()]),
        ],
        |r| {
            let [pushed, expiring] = two(r)?;
            value::<i64>(pushed)?;
            value::<i64>(expiring).map(drop)
        },
    )
}

/// Frees the lock if it holds `token` (an acquire whose outcome is
/// unknown, or a lease that was over when it was won). True when it did.
pub(crate) fn abandon(keys: &LockKeys, token: &[u8], how: CompareDelete) -> Call<bool> {
    Call::one(compare_delete(&keys.lock, token, how), |r| {
        Ok(value::<i64>(one(r)?)? == 1)
    })
}

/// Sets the lease to `ttl_ms` if the lock still holds `token`:
/// `SET K token IFEQ token PX ttl` (`OK`, or nil when it is not ours).
pub(crate) fn refresh(key: &[u8], token: &[u8], ttl_ms: u64) -> Call<bool> {
    Call::one(refresh_cmd(key, token, ttl_ms), |r| set_ok(one(r)?))
}

fn refresh_cmd(key: &[u8], token: &[u8], ttl_ms: u64) -> Command {
    let ttl = ttl_ms.to_string();
    Command::of(&[b"SET", key, token, b"IFEQ", token, b"PX", ttl.as_bytes()])
}

/// [`refresh`] of many holds in one round trip: `(key, token, ttl ms)`
/// each; one result per hold, in order.
pub(crate) fn refresh_many(items: &[(&[u8], &[u8], u64)]) -> Call<Vec<bool>> {
    let cmds = items
        .iter()
        .map(|(key, token, ttl_ms)| refresh_cmd(key, token, *ttl_ms))
        .collect();
    Call::new(cmds, |replies| replies.into_iter().map(set_ok).collect())
}

/// The lock's owner token and remaining lease in ms (`GET` + `PTTL`).
pub(crate) fn owner_pttl(key: &[u8]) -> Call<(Option<Vec<u8>>, i64)> {
    Call::new(
        vec![Command::of(&[b"GET", key]), Command::of(&[b"PTTL", key])],
        |r| {
            let [owner, pttl] = two(r)?;
            Ok((value(owner)?, value(pttl)?))
        },
    )
}

/// Whether a `SET` (NX, or IFEQ) wrote: `OK`, or nil when it did not.
fn set_ok(reply: Value) -> RedisResult<bool> {
    Ok(value::<Option<String>>(reply)?.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helper_keys_share_the_lock_slot_and_differ_from_the_others() {
        let keys = LockKeys::new(b"app:{t}:job".to_vec(), b"app:~~fence".to_vec());
        let (wake, mark) = (wake_list(&keys.lock), waiters_mark(&keys.lock));
        assert_eq!(wake, b"app:{t}:job~~n");
        assert_eq!(mark, b"app:{t}:job~~nw");
        // Nor a semaphore's keys of the same name (all `S~~s...`).
        let semaphore = [keys.lock.as_slice(), b"~~s"].concat();
        assert!(!wake.starts_with(&semaphore) && !mark.starts_with(&semaphore));
        for other in [&keys.queue, &keys.fence, &keys.wake(b"nw")] {
            assert_ne!(&wake, other);
            assert_ne!(&mark, other);
        }
        let slot = crate::protocol::keys::hash_slot(&keys.lock);
        assert_eq!(crate::protocol::keys::hash_slot(&wake), slot);
        assert_eq!(crate::protocol::keys::hash_slot(&mark), slot);
    }

    #[test]
    fn release_and_refresh_compare_with_the_token() {
        let keys = LockKeys::new(b"k".to_vec(), b"~~fence".to_vec());
        let text = |cmd: &Command| String::from_utf8_lossy(cmd.bytes()).replace("\r\n", " ");
        let del = release(&keys, b"tok", CompareDelete::DelIfEq, Attempt::First);
        assert!(text(&del.commands()[0]).contains("DELIFEQ $1 k $3 tok"));
        let delex = release(&keys, b"tok", CompareDelete::DelEx, Attempt::First);
        assert!(text(&delex.commands()[0]).contains("DELEX $1 k $4 IFEQ $3 tok"));
        let refresh = refresh(b"k", b"tok", 500);
        assert!(
            text(&refresh.commands()[0]).contains("SET $1 k $3 tok $4 IFEQ $3 tok $2 PX $3 500")
        );
    }
}
