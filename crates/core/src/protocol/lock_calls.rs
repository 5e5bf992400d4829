//! The lock protocol on one server, as [`Call`]s: each is one round trip
//! (plus a one-time script load after NOSCRIPT) and safe to replay. A
//! topology decides on which server(s) a call runs.

use std::time::Duration;

use redis::{RedisResult, Value};

use crate::protocol::call::{Attempt, Call};
use crate::protocol::command::{Arg, Command};
use crate::protocol::keys::LockKeys;
use crate::protocol::reply::{one, two, value};
use crate::protocol::scripts;
use crate::protocol::step::Step;

pub use crate::protocol::step::Fence;

/// What a release does for the next waiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Successor {
    /// One server decides: the first live waiter is woken, or handed the
    /// lock when it is starving (it lost a race after a wake-up, or waited
    /// too long).
    HandOver,
    /// Redlock (a quorum decides): the lock is deleted and the first live
    /// waiter only woken.
    Wake,
}

impl Successor {
    fn flag(self) -> &'static [u8] {
        flag(self == Self::Wake)
    }
}

/// Takes the lock if it is free: `SET key token NX PX ttl`, or with
/// `fencing` a script that also takes the next fencing token. On a replay
/// (the first try's reply was lost) a script recognises a first try that
/// went through. `nonce`: the hold's nonce, kept beside a token that is
/// not the hold's own (option `owner`) in `K~~o` (a script then, on the
/// first try too). `None` when someone else holds the lock.
pub fn try_acquire(
    keys: &LockKeys,
    token: &[u8],
    nonce: Option<&[u8]>,
    ttl_ms: u64,
    fencing: bool,
    attempt: Attempt,
) -> Call<Option<Fence>> {
    let replay = attempt == Attempt::Replay;
    if fencing {
        let mut args = vec![
            token.into(),
            ttl_ms.into(),
            fence_floor().into(),
            flag(replay).into(),
        ];
        args.extend(nonce.map(Arg::from));
        let cmd = scripts::ACQUIRE_FENCED.evalsha(&[&keys.lock, &keys.fence, &keys.counter], &args);
        return Call::one(cmd, |r| Ok(value::<Option<i64>>(one(r)?)?.map(Some)));
    }
    let cmd = plain_acquire(keys, token, nonce, ttl_ms, attempt);
    Call::one(cmd, |r| Ok(won(one(r)?)?.then_some(None)))
}

/// The least fencing token this client may be given: its clock, in
/// microseconds since the Unix epoch (see `lib/fence.lua`).
pub fn fence_floor() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// `SET key token NX PX ttl`, or on a replay (and for a hold with a
/// nonce) the script that also accepts a first try that went through.
fn plain_acquire(
    keys: &LockKeys,
    token: &[u8],
    nonce: Option<&[u8]>,
    ttl_ms: u64,
    attempt: Attempt,
) -> Command {
    if attempt == Attempt::Replay || nonce.is_some() {
        let mut args = vec![token.into(), ttl_ms.into()];
        args.extend(nonce.map(Arg::from));
        return scripts::ACQUIRE_REPLAY.evalsha(&[&keys.lock], &args);
    }
    set_nx(keys, token, ttl_ms)
}

/// `SET key token NX PX ttl` on the lock key (its head pre-encoded): the
/// recipe's acquire, with scripts or without.
pub fn set_nx(keys: &LockKeys, token: &[u8], ttl_ms: u64) -> Command {
    Command::with_head(
        &keys.set_head,
        &[
            Arg::from(token),
            Arg::from("NX"),
            Arg::from("PX"),
            Arg::Int(ttl_ms),
        ],
    )
}

/// Whether a [`plain_acquire`] took the lock: `OK`/nil from `SET`, 1/0 from
/// the replay script.
fn won(reply: Value) -> RedisResult<bool> {
    match reply {
        Value::Int(n) => Ok(n == 1),
        other => Ok(value::<Option<String>>(other)?.is_some()),
    }
}

/// A plain [`try_acquire`] that also reports the lock's remaining lease
/// (Redlock's blocking acquire bounds its sleep by it): `(won, pttl ms)`.
pub fn try_acquire_pttl(
    keys: &LockKeys,
    token: &[u8],
    nonce: Option<&[u8]>,
    ttl_ms: u64,
    attempt: Attempt,
) -> Call<(bool, i64)> {
    let acquire = plain_acquire(keys, token, nonce, ttl_ms, attempt);
    let pttl = Command::of(&[b"PTTL", &keys.lock]);
    Call::new(vec![acquire, pttl], |r| {
        let [acquired, pttl] = two(r)?;
        Ok((won(acquired)?, value(pttl)?))
    })
}

/// The server's role (`ROLE`'s first field: `master`, `slave` or
/// `sentinel`).
pub fn role() -> Call<String> {
    Call::new(vec![Command::of(&[b"ROLE"])], |r| {
        let fields: Vec<Value> = value(one(r)?)?;
        value(fields.into_iter().next().unwrap_or(Value::Nil))
    })
}

/// Confirms that the lock still holds `token` (and `K~~o` the hold's
/// `nonce`, if it has one) and makes its lease at least `ttl_ms` long (a
/// reentrant acquire); `fence`, the hold's fencing-token key (`K~~f`) of a
/// fenced hold, follows the lease. False when the lease was lost.
pub fn reenter(
    key: &[u8],
    fence: Option<&[u8]>,
    token: &[u8],
    nonce: Option<&[u8]>,
    ttl_ms: u64,
) -> Call<bool> {
    let cmd = scripts::REENTER.evalsha(&lease_keys(key, fence), &hold_args(token, ttl_ms, nonce));
    Call::one(cmd, is_one)
}

/// A hold's token, a lease and its nonce if it has one: the arguments of
/// the scripts that extend a hold.
fn hold_args<'a>(token: &'a [u8], ttl_ms: u64, nonce: Option<&'a [u8]>) -> Vec<Arg<'a>> {
    let mut args = vec![Arg::from(token), Arg::Int(ttl_ms)];
    args.extend(nonce.map(Arg::from));
    args
}

/// The keys of a script that extends a hold's lease: the lock, and the
/// hold's fencing-token key when the hold is fenced (unfenced holds send
/// one key, and the script does nothing more for them).
fn lease_keys<'a>(key: &'a [u8], fence: Option<&'a [u8]>) -> Vec<&'a [u8]> {
    std::iter::once(key).chain(fence).collect()
}

/// What a release found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Released {
    /// The lock held our token and is released.
    Yes,
    /// The lock did not hold our token.
    NotOurs,
    /// A replay (the first try's reply was lost) found the lock no longer
    /// ours: the first try may have released it. The caller decides from
    /// its own clock (the lock's release).
    GoneOnReplay,
}

/// Releases the lock if it still holds `token` (and `K~~o` the hold's
/// `nonce`, if it has one): deletes it and, when others wait, wakes the
/// first or hands it the lock (see [`Successor`]). `fenced`: the hold has
/// a fencing token, whose key goes too.
pub fn release(
    keys: &LockKeys,
    token: &[u8],
    nonce: Option<&[u8]>,
    successor: Successor,
    fenced: bool,
    attempt: Attempt,
) -> Call<Released> {
    // The common case (unfenced, one server decides, no nonce) sends the
    // token alone: every argument costs the server a string to build.
    let flags = [fenced, successor == Successor::Wake, nonce.is_some()];
    let sent = flags.iter().rposition(|&f| f).map_or(0, |last| last + 1);
    let args = [
        token.into(),
        flag(fenced).into(),
        successor.flag().into(),
        nonce.unwrap_or_default().into(),
    ];
    let cmd = match sent {
        0 => Command::with_head(&keys.release_head, &args[..1]),
        _ => scripts::RELEASE.evalsha(&[&keys.lock], &args[..=sent]),
    };
    let call = match attempt {
        Attempt::First => Call::one(cmd, |r| {
            Ok(if found(r)? {
                Released::Yes
            } else {
                Released::NotOurs
            })
        }),
        Attempt::Replay => Call::one(cmd, |r| {
            Ok(if found(r)? {
                Released::Yes
            } else {
                Released::GoneOnReplay
            })
        }),
    };
    call.until_done()
}

/// Cleans up after an acquire of `token` whose outcome is unknown, a wait
/// that PHP ended, or a lease that was over when it was won: leaves the
/// queue and frees the lock if the token holds it (with a `nonce`: if a
/// release handed it over, or `K~~o` holds that nonce). True when it did.
pub fn abandon(
    keys: &LockKeys,
    token: &[u8],
    nonce: Option<&[u8]>,
    successor: Successor,
) -> Call<bool> {
    abandon_cmd(keys, token, nonce, successor, false)
}

/// [`abandon`] for a waiter on one server whose every step was answered:
/// it leaves the queue, and frees the lock only if a release handed it
/// over (the same token may hold it for another object with that `owner`).
/// True when it freed the lock.
pub fn abandon_if_handed(keys: &LockKeys, token: &[u8], nonce: Option<&[u8]>) -> Call<bool> {
    abandon_cmd(keys, token, nonce, Successor::HandOver, true)
}

fn abandon_cmd(
    keys: &LockKeys,
    token: &[u8],
    nonce: Option<&[u8]>,
    successor: Successor,
    handed: bool,
) -> Call<bool> {
    let mut args = vec![token.into(), successor.flag().into(), flag(handed).into()];
    args.extend(nonce.map(Arg::from));
    let cmd = scripts::ABANDON.evalsha(&[&keys.lock, &keys.queue, &keys.fence], &args);
    Call::one(cmd, found).until_done()
}

/// A queued waiter, as the scripts need to know it.
#[derive(Debug, Clone, Copy)]
pub struct Waiter<'a> {
    /// The waiter's owner token (its queue member).
    pub token: &'a [u8],
    /// The nonce of the hold it waits for, when its token is not the
    /// hold's own (option `owner`): kept in `K~~o` once it wins.
    pub nonce: Option<&'a [u8]>,
    /// The lease it asks for.
    pub ttl_ms: u64,
    /// How long its queue entry counts as live without another step.
    pub alive_ms: u64,
    /// Whether it wants a fencing token.
    pub fencing: bool,
    /// When it began to wait (microseconds since the Unix epoch, its
    /// clock): its place in the queue.
    pub arrival: u64,
}

/// Now, in microseconds since the Unix epoch: a waiter's arrival.
pub fn arrival_now() -> u64 {
    fence_floor()
}

/// One step of a blocking acquire on the server that decides (one round
/// trip, `wait.lua`): claims a lock a release handed to the waiter (its
/// whole lease), takes a free lock, or joins (stays in) the queue;
/// `starving` asks the next release to hand it the lock (otherwise a
/// release frees the lock without waking it: it barges, and steps by
/// itself when it starves). With `give_up` the waiter leaves, unless
/// the lock was handed to it. Safe to replay: the token is the queue
/// member, and a replay that finds the lock holding the token claims it.
pub fn wait_step(
    keys: &LockKeys,
    waiter: &Waiter<'_>,
    starving: bool,
    give_up: bool,
    attempt: Attempt,
) -> Call<Step> {
    let replay = attempt == Attempt::Replay;
    let cmd = wait_step_cmd(keys, waiter, [starving, give_up, replay, false]);
    Call::one(cmd, |r| queued_reply("wait", one(r)?))
}

/// A starving writer's first step and its first wake-up wait in one
/// request (one round trip where [`wait_step`] and a wait behind the next
/// step take two): the step, the `BLPOP` on the waiter's own list for up
/// to `block`, and a replay of the step (with `give_up`, it leaves the
/// queue unless the lock is ours). A first step that does anything but
/// queue pushes to that list, so the `BLPOP` ends at once and the replay
/// claims what the step took; one that queues leaves the wait to a
/// hand-over (or its timeout), and the replay claims what was handed over,
/// as the step behind every wait does. Answers the replay's [`Step`], and
/// whether the first step queued.
pub fn first_wait(
    keys: &LockKeys,
    waiter: &Waiter<'_>,
    block: Duration,
    give_up: bool,
    attempt: Attempt,
) -> Call<(Step, bool)> {
    let replay = attempt == Attempt::Replay;
    let cmds = vec![
        wait_step_cmd(keys, waiter, [true, false, replay, true]),
        blpop(&keys.wake(waiter.token), block),
        wait_step_cmd(keys, waiter, [true, give_up, true, false]),
    ];
    Call::blocking_after(1, block, cmds, |replies| {
        match <[Value; 3]>::try_from(replies) {
            Ok([first, wait, claim]) => {
                let first = queued_reply("wait", first.extract_error()?)?;
                wait.extract_error()?;
                let step = queued_reply("wait", claim.extract_error()?)?;
                Ok((step, matches!(first, Step::Waiting { .. })))
            }
            Err(replies) => Err(redis::RedisError::from((
                redis::ErrorKind::UnexpectedReturnType,
                "unexpected replies",
                format!("wait: {replies:?}"),
            ))),
        }
    })
}

/// `wait.lua` with `[starving, give_up, replay, wake_self]`.
fn wait_step_cmd(keys: &LockKeys, waiter: &Waiter<'_>, flags: [bool; 4]) -> Command {
    let [starving, give_up, replay, wake_self] = flags;
    let args = [
        waiter.token.into(),
        waiter.ttl_ms.into(),
        waiter.alive_ms.into(),
        flag(waiter.fencing).into(),
        fence_floor().into(),
        flag(starving).into(),
        flag(give_up).into(),
        flag(replay).into(),
        waiter.arrival.into(),
        flag(wake_self).into(),
        waiter.nonce.unwrap_or_default().into(),
    ];
    // The nonce goes only when the waiter has one.
    let sent = args.len() - usize::from(waiter.nonce.is_none());
    scripts::WAIT.evalsha(
        &[&keys.lock, &keys.queue, &keys.fence, &keys.counter],
        &args[..sent],
    )
}

/// A Redlock waiter joins the wake-up queue of one server (or renews its
/// place there). Returns the lock's remaining lease on that server (-2:
/// free).
pub fn join_wake_queue(keys: &LockKeys, waiter: &Waiter<'_>) -> Call<i64> {
    Call::one(notify_queue_cmd(keys, waiter, false), |r| value(one(r)?))
}

/// A Redlock waiter leaves the wake-up queue of one server.
pub fn leave_wake_queue(keys: &LockKeys, waiter: &Waiter<'_>) -> Call<()> {
    Call::one(notify_queue_cmd(keys, waiter, true), |r| {
        value::<i64>(one(r)?).map(drop)
    })
}

/// A Redlock waiter blocks up to `timeout` for a wake-up on one server,
/// then renews its place in that server's queue, in one round trip. True
/// when it was woken (a release on that server).
pub fn wait_for_quorum_wake(keys: &LockKeys, waiter: &Waiter<'_>, timeout: Duration) -> Call<bool> {
    Call::blocking(
        timeout,
        vec![
            blpop(&keys.wake(waiter.token), timeout),
            notify_queue_cmd(keys, waiter, false),
        ],
        |r| {
            let [popped, joined] = two(r)?;
            value::<i64>(joined)?;
            Ok(value::<Option<(Vec<u8>, Vec<u8>)>>(popped)?.is_some())
        },
    )
}

fn notify_queue_cmd(keys: &LockKeys, waiter: &Waiter<'_>, leave: bool) -> Command {
    scripts::NOTIFY_QUEUE.evalsha(
        &[&keys.lock, &keys.queue],
        &[
            waiter.token.into(),
            waiter.alive_ms.into(),
            flag(leave).into(),
            waiter.arrival.into(),
        ],
    )
}

/// `BLPOP list timeout`: a waiter sleeps on its wake-up list. The
/// timeout is rounded up to whole milliseconds (at least one), so the
/// server never ends the block before the time asked: a block that ended
/// a fraction of a millisecond before its wait's end would cost the wait
/// one more step.
pub fn blpop(list: &[u8], timeout: Duration) -> Command {
    let ms = timeout.as_micros().div_ceil(1000).max(1);
    let seconds = format!("{}.{:03}", ms / 1000, ms % 1000);
    Command::of(&[b"BLPOP", list, seconds.as_bytes()])
}

/// The current owner token of the lock, if any.
pub fn owner(key: &[u8]) -> Call<Option<Vec<u8>>> {
    Call::new(vec![Command::of(&[b"GET", key])], |r| value(one(r)?))
}

/// `INFO`: what the server is (its default sections, a few KB), read
/// once per server and process (`crate::net::facts`).
pub fn info() -> Call<String> {
    Call::new(vec![Command::of(&[b"INFO"])], |r| value(one(r)?))
}

/// What `K` and `K~~o` hold: the owner token and, beside a fixed owner's,
/// the hold's nonce.
pub type OwnerAndNonce = (Option<Vec<u8>>, Option<Vec<u8>>);

/// The lock's owner token and the nonce kept beside it (`K~~o`, a fixed
/// owner's hold), in one `MGET`.
pub fn owner_and_nonce(keys: &LockKeys) -> Call<OwnerAndNonce> {
    Call::new(
        vec![Command::of(&[b"MGET", &keys.lock, &keys.nonce])],
        |r| value(one(r)?),
    )
}

/// Sets the lease to `ttl_ms` if the lock still holds `token` (and `K~~o`
/// the hold's `nonce`, if it has one, which gets the same lease); `fence`,
/// the hold's fencing-token key (`K~~f`) of a fenced hold, gets the same
/// lease (when it exists).
pub fn refresh(
    key: &[u8],
    fence: Option<&[u8]>,
    token: &[u8],
    nonce: Option<&[u8]>,
    ttl_ms: u64,
) -> Call<bool> {
    Call::one(refresh_command(key, fence, token, nonce, ttl_ms), is_one)
}

/// The command of a [`refresh`]: `refresh.lua`, which answers 1 when the
/// lease was ours and is extended, 0 otherwise.
pub fn refresh_command(
    key: &[u8],
    fence: Option<&[u8]>,
    token: &[u8],
    nonce: Option<&[u8]>,
    ttl_ms: u64,
) -> Command {
    scripts::REFRESH.evalsha(&lease_keys(key, fence), &hold_args(token, ttl_ms, nonce))
}

/// Lease extensions of many holds in one round trip (the renewal thread):
/// each command one that answers a positive number when the lease was
/// ours and is now extended, and 0 or less when it was not:
/// [`refresh_command`] (1 or 0) for a lock, a semaphore permit's
/// [`crate::protocol::semaphore::lease_command`] (the new lease in ms, at least
/// 1, or -3). One result per command, in order.
pub fn extend_many(cmds: Vec<Command>) -> Call<Vec<bool>> {
    Call::new(cmds, |replies| {
        replies
            .into_iter()
            .map(|r| Ok(value::<i64>(r)? > 0))
            .collect()
    })
}

/// Remaining lease in ms if the lock still holds `token` (and `K~~o` the
/// hold's `nonce`, if it has one): `Some(-1)` when the key has no expiry,
/// `None` when it is not ours.
pub fn owned_pttl(key: &[u8], token: &[u8], nonce: Option<&[u8]>) -> Call<Option<i64>> {
    let mut args = vec![Arg::from(token)];
    args.extend(nonce.map(Arg::from));
    let cmd = scripts::OWNED_PTTL.evalsha(&[key], &args);
    Call::one(cmd, |r| {
        let pttl: i64 = value(one(r)?)?;
        Ok((pttl != -3 && pttl != -2).then_some(pttl))
    })
}

/// Deletes the lock whoever holds it (its readers, and the hold's nonce
/// `K~~o`, with it). True when a key was deleted.
pub fn force_release(keys: &LockKeys, readers: &[u8]) -> Call<bool> {
    let cmd = Command::of(&[b"DEL", &keys.lock, readers, &keys.nonce]);
    Call::new(vec![cmd], |r| Ok(value::<i64>(one(r)?)? >= 1))
}

fn flag(on: bool) -> &'static [u8] {
    if on { b"1" } else { b"0" }
}

fn is_one(replies: Vec<Value>) -> RedisResult<bool> {
    Ok(value::<i64>(one(replies)?)? == 1)
}

/// Bit 1 of a script's answer that may come in parts ([`Call::until_done`]):
/// what its first call found.
fn found(replies: Vec<Value>) -> RedisResult<bool> {
    Ok(value::<i64>(one(replies)?)? & 1 == 1)
}

fn queued_reply(script: &str, reply: Value) -> RedisResult<Step> {
    let reply: Vec<Value> = value(reply)?;
    let fence = |n: i64| (n >= 0).then_some(n);
    match reply[..] {
        [Value::Int(1), Value::Int(n)] => Ok(Step::Won {
            fence: fence(n),
            left_ms: None,
        }),
        [Value::Int(2)] => Ok(Step::GaveUp),
        [Value::Int(3)] => Ok(Step::Again),
        [Value::Int(0), Value::Int(pttl_ms)] => Ok(Step::waiting(pttl_ms)),
        _ => Err(redis::RedisError::from((
            redis::ErrorKind::UnexpectedReturnType,
            "unexpected script reply",
            format!("{script}: {reply:?}"),
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `BLPOP`'s timeout argument for `timeout`.
    fn blpop_timeout(timeout: Duration) -> String {
        let bytes = blpop(b"w", timeout).bytes().to_vec();
        let text = String::from_utf8(bytes).unwrap();
        text.trim_end().rsplit("\r\n").next().unwrap().to_owned()
    }

    #[test]
    fn a_block_s_timeout_is_never_shorter_than_asked() {
        let us = Duration::from_micros;
        assert_eq!(blpop_timeout(us(20_400)), "0.021");
        assert_eq!(blpop_timeout(us(20_000)), "0.020");
        assert_eq!(blpop_timeout(us(1_999_001)), "2.000");
        assert_eq!(blpop_timeout(us(12_345_678)), "12.346");
        assert_eq!(blpop_timeout(Duration::ZERO), "0.001");
    }
}
