//! What can be done with a hold, whatever it is ([`Kind`]): ask whether it
//! is still ours, how long it has left, extend it, give it back. One rule
//! for all of them: what this process believes never outlasts what Redis
//! gives ([`super::belief`]), and a release that Redis did not answer is
//! finished later ([`super::pending`]).

use std::sync::Arc;
use std::time::Duration;

use crate::error::Result;
use crate::lease::belief::{Applied, Effect};
use crate::lease::table::{Entry, Kind};
use crate::lease::{contended, pending, worker};
use crate::protocol::call::{Attempt, Call};
use crate::protocol::counted::{Counted, GRACE, SemKeys};
use crate::protocol::keys::LockKeys;
use crate::protocol::lock_calls::{self, Released, Successor};
use crate::protocol::scriptless;
use crate::protocol::semaphore as calls;
use crate::stats;
use crate::topology::{Role, Topology, Waiting};

/// How long after a hold's lease its pending release or clean-up is still
/// sent: extensions on their way may still have run.
const PENDING_MARGIN: Duration = Duration::from_secs(5);

/// How a release on `topology` treats the next waiter.
pub(crate) fn successor_on(topology: &Topology) -> Successor {
    match topology.waiting() {
        Waiting::HandOver => Successor::HandOver,
        Waiting::Quorum => Successor::Wake,
    }
}

/// `call` followed by `WAIT` in the same request when the hold asks for
/// acknowledged writes (option `replicas`): a result that `needed`
/// accepts then fails as not replicated unless enough replicas
/// acknowledged it in time.
pub(crate) fn acked<T>(
    replicas: (u32, Duration),
    call: Call<T>,
    needed: fn(&T) -> bool,
) -> Call<T> {
    match replicas {
        (0, _) => call,
        (n, timeout) => call.acknowledged(n, timeout, needed),
    }
}

/// Whether the hold is still ours. False once it is over by this process's
/// clock; otherwise, with `auto_renew`, from the renewal thread's knowledge
/// (no round trip), else asks Redis (one round trip). A hold taken over
/// from a token (`restore()`) is asked about until an extension of it was
/// answered: the lease it counts from `restore()` is a guess, and the
/// token may be another holder's by now.
pub(crate) fn is_ours(entry: &Entry) -> Result<bool> {
    if entry.lease.valid_for().is_zero() {
        entry.lease.found_lost();
        return Ok(false);
    }
    if entry.renewed && entry.lease.is_counted() {
        return Ok(true);
    }
    let ours = match &entry.kind {
        // A hold with a nonce is the token's only while `K~~o` holds the
        // nonce: one script compares both.
        Kind::Write { keys, .. } if entry.nonce.is_some() => write_left(entry, keys)?.is_some(),
        Kind::Write { keys, .. } => {
            let votes = entry.topology.run(Role::Command, &keys.lock, &|_| {
                lock_calls::owner(&keys.lock)
            });
            votes
                .decided()?
                .agree(|owner| owner.as_deref() == Some(&entry.token[..]))
        }
        Kind::Counted { .. } => return Ok(left(entry)?.is_some()),
    };
    // Still within the lease when the answer came: a pause during the
    // round trip may have outlasted it.
    let ours = entry.lease.confirmed_if(ours) && !entry.lease.valid_for().is_zero();
    if !ours {
        entry.lease.found_lost();
    }
    Ok(ours)
}

/// Seconds left on the hold; `None` when it is not ours; infinity when
/// someone removed the key's expiry. Over several servers: the lease that
/// a quorum of them still gives us. Never more than this process's clock
/// gives it.
pub(crate) fn left(entry: &Entry) -> Result<Option<f64>> {
    let ms = match &entry.kind {
        Kind::Write { keys, .. } => match entry.topology.scriptless(&keys.lock) {
            Some(_) => write_left_scriptless(entry, keys)?,
            None => write_left(entry, keys)?,
        },
        Kind::Counted { keys, count } => {
            let left = entry
                .topology
                .run_on(0, Role::Command, &keys.holders, &|_| {
                    calls::lease(keys, &entry.token, 0, *count)
                })?;
            left.map(|ms| i64::try_from(ms).unwrap_or(i64::MAX))
        }
    };
    let Some(ms) = ms else {
        if !entry.is_write() {
            entry.lease.found_lost();
        }
        return Ok(None);
    };
    entry.lease.confirmed();
    if ms == i64::MAX && entry.is_write() {
        return Ok(Some(f64::INFINITY));
    }
    let ours = entry.lease.valid_for();
    if ours.is_zero() {
        entry.lease.found_lost();
        return Ok(None);
    }
    Ok(Some((ms as f64 / 1000.0).min(ours.as_secs_f64())))
}

/// A write hold's lease left on a quorum of its servers (`i64::MAX`: no
/// expiry), `None` when not ours there.
fn write_left(entry: &Entry, keys: &LockKeys) -> Result<Option<i64>> {
    let votes = entry.topology.run(Role::Command, &keys.lock, &|_| {
        lock_calls::owned_pttl(&keys.lock, &entry.token, entry.nonce())
    });
    let quorum = votes.quorum();
    let mut leases: Vec<i64> = votes
        .replies()?
        .into_iter()
        .flatten()
        .flatten()
        .map(|ms| if ms < 0 { i64::MAX } else { ms })
        .collect();
    if leases.len() < quorum {
        return Ok(None);
    }
    leases.sort_unstable_by(|a, b| b.cmp(a));
    Ok(Some(leases[quorum - 1]))
}

/// [`write_left`] without scripts (`GET` + `PTTL`).
fn write_left_scriptless(entry: &Entry, keys: &LockKeys) -> Result<Option<i64>> {
    let key = &keys.lock;
    let (owner, pttl) = entry
        .topology
        .run_on(0, Role::Command, key, &|_| scriptless::owner_pttl(key))?;
    if owner.as_deref() != Some(&entry.token[..]) || pttl == -2 {
        return Ok(None);
    }
    Ok(Some(if pttl < 0 { i64::MAX } else { pttl }))
}

/// Sets the hold's lease to `ttl_ms` from now if it is still ours, and
/// makes later renewals keep that length (the next one at a third of it).
/// False when it is not ours.
pub(crate) fn extend(entry: &Entry, ttl_ms: u64) -> Result<bool> {
    if entry.lease.valid_for().is_zero() && !entry.is_write() {
        entry.lease.found_lost();
        return Ok(false);
    }
    let drift = entry.topology.drift(ttl_ms);
    let sent = entry.lease.send(Effect::Sets(ttl_ms), drift);
    let answer = match &entry.kind {
        Kind::Write { keys, .. } => {
            let scriptless = entry.topology.scriptless(&keys.lock);
            let votes = entry.topology.run(Role::Command, &keys.lock, &|_| {
                let call = match scriptless {
                    Some(_) => scriptless::refresh(&keys.lock, &entry.token, ttl_ms),
                    None => lock_calls::refresh(
                        &keys.lock,
                        entry.fence_key(),
                        &entry.token,
                        entry.nonce(),
                        ttl_ms,
                    ),
                };
                acked(entry.replicas, call, |ok| *ok)
            });
            votes.decided().map(|votes| votes.agree(|ok| *ok))
        }
        Kind::Counted { keys, count } => entry
            .topology
            .run_on(0, Role::Command, &keys.holders, &|_| {
                calls::lease(keys, &entry.token, ttl_ms, *count)
            })
            // Only a reply that comes before the lease it extends ran out
            // counts: the script judges the hold by the clock reading in
            // the request, as old as the request, and one held up in
            // flight past the lease may find it taken meanwhile (a read
            // hold's lock key held by a writer, then marked again by
            // another reader). The lease was cut to this extension's end
            // when it was sent.
            .map(|left| left.is_some() && !entry.lease.valid_for().is_zero()),
    };
    let ours = match answer {
        Ok(ours) => ours,
        Err(err) => {
            entry.lease.unanswered(&sent);
            return Err(err);
        }
    };
    let drift = |ms: u64| entry.topology.drift(ms);
    let extended = entry.lease.answered(&sent, ours, &drift) != Applied::NotOurs
        && !entry.lease.valid_for().is_zero();
    if extended {
        worker::wake();
    } else {
        entry.lease.found_lost();
    }
    Ok(extended)
}

/// Gives the hold back in Redis (its last command: a renewal's reply that
/// comes later changes nothing). True when it was still ours.
///
/// A release whose reply was lost is sent again at once; when that replay
/// finds the hold no longer ours, the first try may have released it, or
/// the lease may have ended before it arrived. No log in Redis tells
/// which: this process's clock does. Sent while the lease still lasted,
/// the first try ended a hold that was ours until then, and the release
/// counts; sent after, the lease had already ended and the release reports
/// it lost. What no server answered is finished later ([`pending`]).
pub(crate) fn release(entry: &Entry) -> Result<bool> {
    let in_lease = !entry.lease.valid_for().is_zero();
    entry.lease.send(Effect::Ends, Duration::ZERO);
    let released = match &entry.kind {
        Kind::Write { keys, .. } => match entry.topology.scriptless(&keys.lock) {
            Some(how) => release_scriptless(entry, keys, how, in_lease)?,
            None => release_write(entry, keys, in_lease)?,
        },
        Kind::Counted { keys, count } => release_counted(entry, keys, *count, in_lease)?,
    };
    if released {
        stats::released(entry.lease.primitive());
    } else {
        entry.lease.found_lost();
    }
    Ok(released)
}

/// Compare-and-delete of a write hold on every server of its key.
fn release_write(entry: &Entry, keys: &Arc<LockKeys>, in_lease: bool) -> Result<bool> {
    let successor = successor_on(&entry.topology);
    let fenced = entry.fence().is_some();
    let votes = entry.topology.run(Role::Command, &keys.lock, &|attempt| {
        lock_calls::release(
            keys,
            &entry.token,
            entry.nonce(),
            successor,
            fenced,
            attempt,
        )
    });
    let owed: Vec<bool> = votes.oks().into_iter().map(|ok| !ok).collect();
    if owed.contains(&true) {
        let ttl_ms = entry.lease.ttl_ms();
        let id = (&entry.token[..], entry.nonce());
        abandon_later(&entry.topology, keys, id, owed, ttl_ms);
    }
    Ok(votes.decided()?.agree(|found| match found {
        Released::Yes => true,
        Released::GoneOnReplay => in_lease,
        Released::NotOurs => false,
    }))
}

/// Compare-and-delete without scripts, then a wake-up when someone waits.
fn release_scriptless(
    entry: &Entry,
    keys: &Arc<LockKeys>,
    how: scriptless::CompareDelete,
    in_lease: bool,
) -> Result<bool> {
    let key = &keys.lock;
    let (found, waiting) = entry
        .topology
        .run_on(0, Role::Command, key, &|attempt| {
            scriptless::release(keys, &entry.token, how, attempt)
        })
        .inspect_err(|err| {
            if err.is_connection_error() {
                let ttl_ms = entry.lease.ttl_ms();
                let id = (&entry.token[..], entry.nonce());
                abandon_later(&entry.topology, keys, id, vec![true], ttl_ms);
            }
        })?;
    if found == Released::Yes && waiting {
        // Best effort: a waiter that misses it finds the lock free at its
        // next step, within `retry_delay`.
        let _ = entry
            .topology
            .run_on(0, Role::Command, key, &|_| scriptless::wake(keys));
    }
    Ok(match found {
        Released::Yes => true,
        Released::GoneOnReplay => in_lease,
        Released::NotOurs => false,
    })
}

/// Gives a permit (or a read hold) back. A lease that is over by this
/// process's clock is given back all the same (its entry may linger up to
/// the clock grace) but is no release: false.
fn release_counted(entry: &Entry, keys: &Arc<SemKeys>, count: u32, in_lease: bool) -> Result<bool> {
    if matches!(keys.counted, Counted::Permits) {
        return give_back_permits(entry, keys, count, in_lease);
    }
    let found = send_release(entry, keys, count, &|attempt| {
        let mut call = calls::release(keys, &entry.token, false, count);
        if attempt == Attempt::Replay && in_lease {
            call.parse = replayed_in_lease;
        }
        call
    })?;
    Ok(found && in_lease)
}

fn replayed_in_lease(_: Vec<redis::Value>) -> redis::RedisResult<bool> {
    Ok(true)
}

/// Sends a counted hold's release on the server of its holders; one that
/// met a connection error is left to the pending-work thread
/// ([`give_back_later`]).
fn send_release<T>(
    entry: &Entry,
    keys: &Arc<SemKeys>,
    count: u32,
    call: &dyn Fn(Attempt) -> Call<T>,
) -> Result<T> {
    entry
        .topology
        .run_on(0, Role::Command, &keys.holders, call)
        .inspect_err(|err| {
            if err.is_connection_error() {
                let ttl_ms = entry.lease.ttl_ms();
                give_back_later(&entry.topology, keys, &entry.token, count, ttl_ms);
            }
        })
}

/// A permit's release: the plain give-back ([`calls::give_back`]: `ZREM`
/// and `EXISTS` of the queue, no script), then, only when someone waits,
/// the script that hands the freed permits on; after a release that found
/// waiters ([`contended`]), the script at once ([`calls::hand_on`], one
/// round trip), until one finds nobody waiting. That hand-over is owed to
/// the waiters, not to this release: should it fail, each waiter's next
/// step (at the end of its wake-up wait) finds the permits free and takes
/// them, so its error is not this release's.
fn give_back_permits(
    entry: &Entry,
    keys: &Arc<SemKeys>,
    count: u32,
    in_lease: bool,
) -> Result<bool> {
    let contended = contended::seen(&keys.holders);
    let (found, queued) = send_release(entry, keys, count, &|attempt| {
        let replayed = attempt == Attempt::Replay && in_lease;
        match contended {
            true => calls::hand_on(keys, &entry.token, count, replayed),
            false => calls::give_back(keys, &entry.token, count, replayed),
        }
    })?;
    contended::note(&keys.holders, queued);
    if queued && !contended {
        let _ = entry
            .topology
            .run_on(0, Role::Command, &keys.holders, &|_| {
                calls::release(keys, &entry.token, false, count)
            });
    }
    Ok(found && in_lease)
}

/// Leaves the clean-up of the hold `(token, nonce)` on the lock `keys`
/// (leave the queue, free the lock if the hold has it, as a release does)
/// on the servers that `owed` marks to the pending-work thread
/// ([`pending`]), until they answer or a lease of `ttl_ms` is surely over.
/// A hold whose token is not its own (option `owner`) is known by its
/// nonce too: the resend never frees a later hold of the same owner.
pub(crate) fn abandon_later(
    topology: &Arc<Topology>,
    keys: &Arc<LockKeys>,
    (token, nonce): (&[u8], Option<&[u8]>),
    owed: Vec<bool>,
    ttl_ms: u64,
) {
    let key = keys.lock.clone();
    let (on, keys, token) = (topology.clone(), keys.clone(), token.to_vec());
    let nonce = nonce.map(<[u8]>::to_vec);
    let successor = successor_on(topology);
    let resend: pending::Resend = Box::new(move |owed, until| {
        let scriptless = on.scriptless(&keys.lock);
        on.run_where(Role::Command, &keys.lock, owed, false, &|_| {
            let call = match scriptless {
                Some(how) => scriptless::abandon(&keys, &token, how),
                None => lock_calls::abandon(&keys, &token, nonce.as_deref(), successor),
            };
            match until {
                Some(until) => call.within(until),
                None => call,
            }
        })
        .into_results()
        .into_iter()
        .map(|r| r.map(drop))
        .collect()
    });
    let lasts = Duration::from_millis(ttl_ms) + PENDING_MARGIN;
    worker::add_pending(pending::Pending::new(topology, key, owed, lasts, resend));
}

/// Leaves giving back `token`'s `count` permits (or read hold), and leaving the
/// queue, to the pending-work thread ([`pending`]), until the server answers or a
/// lease of `ttl_ms` is surely over (with the clock grace). Filed under
/// the name's base key: a lock's read holds under the lock key, so the
/// lock's next acquire (to read or write) sends it first.
pub(crate) fn give_back_later(
    topology: &Arc<Topology>,
    keys: &Arc<SemKeys>,
    token: &[u8],
    count: u32,
    ttl_ms: u64,
) {
    let key = keys.base.clone();
    let (on, keys, token) = (topology.clone(), keys.clone(), token.to_vec());
    let resend: pending::Resend = Box::new(move |_, until| {
        vec![
            on.run_on(0, Role::Command, &keys.holders, &|_| {
                let call = calls::release(&keys, &token, true, count);
                match until {
                    Some(until) => call.within(until),
                    None => call,
                }
            })
            .map(drop),
        ]
    });
    let lasts = Duration::from_millis(ttl_ms) + GRACE + PENDING_MARGIN;
    worker::add_pending(pending::Pending::new(
        topology,
        key,
        vec![true],
        lasts,
        resend,
    ));
}
