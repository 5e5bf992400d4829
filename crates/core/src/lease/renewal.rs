//! Lease renewal (option `auto_renew`): the holds the renewal thread
//! ([`super::worker`]) extends at about a third of their lease with the
//! compare-and-pexpire script (a semaphore's permit or a read hold:
//! `sem_refresh.lua` / `read_refresh.lua`, [`Renewed`]), pipelining all
//! holds due on one server into one round trip. It never touches PHP.
//!
//! A renewal is one more command of its hold ([`Lease::send`]): its reply
//! counts only if no later command was sent meanwhile (a `refresh()`, a
//! release), and one that gets no answer is sent again soon, until
//! answered or the lease is over. A renewal that finds the lease gone
//! marks the hold lost at once; the PHP side reads that mark without a
//! round trip ([`Lease::is_lost`], [`Lease::valid_for`]). A `refresh()`
//! sets the lease length that later renewals keep, and when the next one
//! is due. Renewal of a hold stops at release, object destruction (not
//! with `auto_release` off: see [`super::holds`]) or request end (the hold
//! table stops it), and after `max_hold`: the thread then only watches the
//! lease and marks it lost when it runs out. A forked child has no jobs
//! ([`PerProcess`]): it neither renews nor believes it is renewed.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::lease::belief::{Applied, Effect, Lease, Sent};
use crate::process::PerProcess;
use crate::protocol::command::Command;
use crate::protocol::lock_calls;
use crate::stats;
use crate::topology::{Role, Topology};

/// A hold to keep renewed.
#[derive(Debug)]
pub struct Job {
    /// Where the lock lives.
    pub topology: Arc<Topology>,
    /// The key that routes the renewal: the lock key, or a semaphore's
    /// holders key (`S~~s`).
    pub key: Vec<u8>,
    /// What is renewed: a lock's hold or a semaphore's permit.
    pub what: Renewed,
    /// Our owner token.
    pub token: Vec<u8>,
    /// Stop renewing after this long (`max_hold`).
    pub max_hold: Option<Duration>,
    /// Renew first after this long instead of a third of the lease: at
    /// once (zero) for a hold taken over from a token.
    pub first_in: Option<Duration>,
}

/// What a [`Job`] renews, with the keys its renewal needs besides the
/// job's key.
#[derive(Debug, Clone)]
pub enum Renewed {
    /// A lock's hold (`refresh.lua` on the lock key).
    Lock {
        /// The hold's fencing-token key (`K~~f`) when the hold is fenced:
        /// it is extended with the lease, in the same script call.
        fence_key: Option<Vec<u8>>,
        /// The hold's nonce (in `K~~o`), when its token is not its own
        /// (option `owner`, a restored token): compared, and extended.
        nonce: Option<Vec<u8>>,
    },
    /// A semaphore's permit (`sem_refresh.lua` on the holders key), or a
    /// lock's read hold (`read_refresh.lua` on the readers key).
    Permit {
        /// The keys of the semaphore (or of the lock's readers).
        keys: Arc<crate::protocol::counted::SemKeys>,
        /// How many permits (1 for a read hold).
        count: u32,
    },
}

struct Entry {
    job: Job,
    lease: Arc<Lease>,
    started: Instant,
    /// Watched only (past `max_hold`): due when its lease runs out.
    watch_until: Option<Instant>,
}

impl Entry {
    /// When this entry is due next.
    fn due(&self) -> Instant {
        self.watch_until.unwrap_or_else(|| self.lease.renew_at())
    }
}

impl Entry {
    /// True once the hold has been renewed for `max_hold`.
    fn past_max_hold(&self, now: Instant) -> bool {
        self.job
            .max_hold
            .is_some_and(|max| now >= self.started + max)
    }
}

/// The holds this process renews; a forked child starts with none.
static JOBS: PerProcess<Mutex<Vec<Entry>>> = PerProcess::new(|| Mutex::new(Vec::new()));

fn jobs() -> MutexGuard<'static, Vec<Entry>> {
    JOBS.get().lock().unwrap_or_else(|p| p.into_inner())
}

/// Adds `lease`, a hold just taken, to the holds renewed (due at a third of
/// its lease, or after the job's `first_in`): [`super::worker::renew`].
pub(super) fn push(job: Job, lease: Arc<Lease>) {
    if let Some(first_in) = job.first_in {
        lease.renew_after(first_in);
    }
    let entry = Entry {
        started: Instant::now(),
        watch_until: None,
        lease,
        job,
    };
    jobs().push(entry);
}

/// Forgets every job (module shutdown).
pub(super) fn clear() {
    if let Some(jobs) = JOBS.built() {
        jobs.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

/// What the renewal thread must do about renewals now: the holds due now
/// (and the deadline of their round) and when the next one is due.
pub(super) struct Poll {
    /// Holds to renew now.
    pub due: Vec<Due>,
    /// When their round must end.
    pub until: Instant,
    /// When the next hold is due (none: no hold).
    pub next: Option<Instant>,
}

/// Drops released and lost holds, and collects those due at `now`.
pub(super) fn poll(now: Instant) -> Poll {
    let Some(jobs) = JOBS.built() else {
        return Poll {
            due: Vec::new(),
            until: now,
            next: None,
        };
    };
    let mut entries = jobs.lock().unwrap_or_else(|p| p.into_inner());
    expire_or_drop(&mut entries, now);
    // Every round of this pass ends by half of the shortest lease the
    // thread keeps, due now or not: one slow server never holds up another
    // lock's renewal past its lease.
    let left = entries
        .iter()
        .map(|e| e.lease.valid_for())
        .min()
        .unwrap_or_default();
    let until = now + (left / 2).max(MIN_ROUND);
    let due = if entries.iter().any(|e| e.due() <= now) {
        collect_due(&mut entries, now)
    } else {
        Vec::new()
    };
    let next = entries.iter().map(Entry::due).min();
    Poll { due, until, next }
}

/// The least time a renewal round gets for its replies, however little is
/// left of the leases (a round trip on a loaded machine).
const MIN_ROUND: Duration = Duration::from_millis(20);

/// How soon a renewal that got no answer is sent again (at most).
const RETRY: Duration = Duration::from_millis(100);

/// Drops holds that were released or lost. A hold past `max_hold` is no
/// longer renewed: it is watched until its lease runs out, then marked lost.
fn expire_or_drop(entries: &mut Vec<Entry>, now: Instant) {
    entries.retain_mut(|e| {
        if e.lease.is_stopped() || e.lease.is_lost() {
            return false;
        }
        if !e.past_max_hold(now) {
            return true;
        }
        let left = e.lease.valid_for();
        if left.is_zero() {
            e.lease.mark_lost();
            return false;
        }
        e.watch_until = Some(now + left);
        true
    });
}

/// A due renewal, detached from the state so no lock is held during I/O.
pub(super) struct Due {
    topology: Arc<Topology>,
    key: Vec<u8>,
    what: Renewed,
    token: Vec<u8>,
    ttl_ms: u64,
    lease: Arc<Lease>,
}

/// A renewal on its way: its hold, and the command as the lease recorded
/// it.
struct InFlight<'a> {
    due: &'a Due,
    sent: Sent,
}

impl Due {
    /// The command that extends this lease, in a pipelined batch
    /// ([`lock_calls::extend_many`]).
    fn command(&self) -> Command {
        match &self.what {
            Renewed::Lock { fence_key, nonce } => lock_calls::refresh_command(
                &self.key,
                fence_key.as_deref(),
                &self.token,
                nonce.as_deref(),
                self.ttl_ms,
            ),
            Renewed::Permit { keys, count } => {
                crate::protocol::semaphore::lease_command(keys, &self.token, self.ttl_ms, *count)
            }
        }
    }
}

/// The holds to renew now: those due, and those due within a quarter of
/// a third of their lease (so after one round all holds of a server share
/// one cadence and one round trip). Holds past `max_hold` are only
/// watched.
fn collect_due(entries: &mut [Entry], now: Instant) -> Vec<Due> {
    entries
        .iter_mut()
        .filter(|e| !e.past_max_hold(now))
        .filter_map(|e| {
            let ttl_ms = e.lease.ttl_ms();
            let early = Duration::from_millis(ttl_ms / 12);
            if e.due() > now + early {
                return None;
            }
            // Not due again before its reply (or its loss) says when.
            e.lease
                .renew_after(Duration::from_millis(ttl_ms.max(3) / 3));
            Some(Due {
                topology: e.job.topology.clone(),
                key: e.job.key.clone(),
                what: e.job.what.clone(),
                token: e.job.token.clone(),
                ttl_ms,
                lease: e.lease.clone(),
            })
        })
        .collect()
}

/// Renews `due` by `until`: the holds of one topology in one pipelined
/// round trip per server, several topologies side by side.
pub(super) fn renew_batch(mut due: Vec<Due>, until: Instant) {
    due.sort_by_key(|d| Arc::as_ptr(&d.topology) as usize);
    let batches: Vec<&[Due]> = due
        .chunk_by(|a, b| Arc::ptr_eq(&a.topology, &b.topology))
        .collect();
    if let [one] = batches[..] {
        renew_on(one, until);
        return;
    }
    // Several topologies: their rounds run side by side, so that their
    // waits do not add up.
    std::thread::scope(|scope| {
        for batch in batches {
            let spawned = std::thread::Builder::new()
                .name("redislock-renew-round".into())
                .spawn_scoped(scope, move || {
                    crate::process::signals::block_all_in_this_thread();
                    renew_on(batch, until)
                });
            if spawned.is_err() {
                // No thread to spare: this round here, after the others.
                renew_on(batch, until);
            }
        }
    });
}

/// Renews `batch` in one round that ends by `until`: a round is bounded by
/// the leases the thread protects, not by the read timeout. A server that
/// answers later (frozen, overloaded) cannot help keep them, and waiting
/// for it would let them run out on the servers that did answer.
fn renew_on(batch: &[Due], until: Instant) {
    let topology = &batch[0].topology;
    let keys: Vec<&[u8]> = batch.iter().map(|d| &d.key[..]).collect();
    let scriptless = topology.scriptless(keys[0]).is_some();
    let flights: Vec<InFlight<'_>> = batch
        .iter()
        .map(|due| InFlight {
            due,
            sent: due
                .lease
                .send(Effect::Sets(due.ttl_ms), topology.drift(due.ttl_ms)),
        })
        .collect();
    let results = topology.run_batch(Role::Renewal, &keys, &|indices, _| match scriptless {
        // Only locks here: no fencing without scripts, and a semaphore
        // never takes a permit on a server that refuses scripts.
        true => {
            let items: Vec<(&[u8], &[u8], u64)> = indices
                .iter()
                .map(|&i| (&batch[i].key[..], &batch[i].token[..], batch[i].ttl_ms))
                .collect();
            crate::protocol::scriptless::refresh_many(&items).within(until)
        }
        false => {
            let cmds = indices.iter().map(|&i| batch[i].command()).collect();
            lock_calls::extend_many(cmds).within(until)
        }
    });
    let drift = |ms: u64| topology.drift(ms);
    for (flight, votes) in flights.iter().zip(results) {
        let (d, sent) = (flight.due, &flight.sent);
        if votes.answered() < votes.quorum() {
            // Redis unreachable, or too slow for this lease: it may still
            // run. Sent again soon; once the lease has run out without an
            // answer it is lost.
            d.lease.unanswered(sent);
            if d.lease.valid_for().is_zero() {
                d.lease.mark_lost();
            } else {
                d.lease.renew_after(RETRY.min(d.lease.valid_for() / 3));
            }
            continue;
        }
        // A permit's (or read hold's) script judges it by the clock reading
        // in the request: a reply that comes after the lease it extends ran
        // out may come from a request held up in flight past that end,
        // which found the hold taken meanwhile. (A lock's script compares
        // its token, which no other hold ever has, and a fixed owner's
        // hold its nonce too.)
        let in_time = match d.what {
            Renewed::Lock { .. } => true,
            Renewed::Permit { .. } => !d.lease.valid_for().is_zero(),
        };
        let ours = votes.agree(|ok| *ok)
            && in_time
            && topology.validity(d.ttl_ms, sent.at.elapsed()).is_some();
        match d.lease.answered(sent, ours, &drift) {
            Applied::Ours => stats::renewed(d.lease.primitive()),
            Applied::NotOurs => d.lease.mark_lost(),
            // A later command of the hold (a refresh, a release) decides.
            Applied::Superseded => {}
        }
    }
}
