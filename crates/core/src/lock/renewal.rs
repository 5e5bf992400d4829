//! Lease renewal (option `auto_renew`): one background thread per process
//! extends every auto-renewed hold at about a third of its lease with the
//! compare-and-pexpire script (a semaphore's permit: `sem_refresh.lua`,
//! [`Renewed`]), pipelining all holds due on one server into one round
//! trip. It never touches PHP.
//!
//! A renewal that finds the lease gone marks the hold lost at once; the PHP
//! side reads that mark without a round trip ([`Lease::is_lost`],
//! [`Lease::valid_for`]). Renewal of a hold stops at release, object
//! destruction (not with `auto_release` off: see [`super::holds`]) or
//! request end (the hold table stops it), and after
//! `max_hold`: the thread then only watches the lease and marks it lost when
//! it runs out. The thread stops at module shutdown. A forked child has no
//! thread and no jobs ([`PerProcess`]): it neither renews nor believes it is
//! renewed.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::net::pool::Role;
use crate::process::PerProcess;
use crate::process::stats::{self, Counter};
use crate::protocol::command::Command;
use crate::protocol::commands;
use crate::protocol::scripts;
use crate::topology::Topology;

/// What this process knows of one hold's lease, on its own monotonic
/// clock: until when it lasts (counted from the send of the request that
/// won or last extended it, minus the topology's drift), whether it was
/// found lost. Every hold has one; with `auto_renew` the renewal thread
/// keeps it up to date.
///
/// A lost lease (`stats()` `lost_leases`, the lost-lease hook) is one this
/// process held and lost: Redis said it was ours once (an acquire won it,
/// or a refresh, renewal, check or reentrant acquire found it ours). A
/// hold taken over from a token ([`super::Lock::restore`]) that Redis
/// never confirmed is found not ours without counting: the token may have
/// never been ours at all.
#[derive(Debug)]
pub struct Lease {
    lost: AtomicBool,
    stopped: AtomicBool,
    /// Redis said the lease was ours at least once.
    held: AtomicBool,
    /// Microseconds on [`clock_us`] until which the lease lasts.
    valid_until_us: AtomicU64,
    /// The lease each renewal sets (the lock's ttl, or the last explicit
    /// `refresh($ttl)`).
    ttl_ms: AtomicU64,
    /// Raise the lost-lease hook when the renewal thread finds this lease
    /// lost.
    notify: bool,
}

impl Lease {
    /// The lease of a hold of `ttl_ms` that lasts until `valid_until` (on
    /// [`clock_us`]); `notify` raises the lost-lease hook when the renewal
    /// thread finds it lost. `held`: Redis said it is ours (an acquire won
    /// it); false for a hold taken over from a token, until
    /// [`Lease::confirmed`].
    pub fn new(ttl_ms: u64, valid_until: u64, notify: bool, held: bool) -> Arc<Self> {
        Arc::new(Self {
            lost: AtomicBool::new(false),
            stopped: AtomicBool::new(false),
            held: AtomicBool::new(held),
            valid_until_us: AtomicU64::new(valid_until),
            ttl_ms: AtomicU64::new(ttl_ms),
            notify,
        })
    }

    /// True once the lease was found gone, or ran out unrenewed.
    pub fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    /// How long the lease lasts from now by this process's clock (zero when
    /// lost or run out).
    pub fn valid_for(&self) -> Duration {
        if self.is_lost() {
            return Duration::ZERO;
        }
        let until = self.valid_until_us.load(Ordering::Acquire);
        Duration::from_micros(until.saturating_sub(clock_us(Instant::now())))
    }

    /// Records an extension to `ttl_ms` that lasts until `valid_until` (a
    /// successful `refresh()`); later renewals use that lease length.
    pub fn refreshed(&self, ttl_ms: u64, valid_until: u64) {
        self.confirmed();
        self.ttl_ms.store(ttl_ms, Ordering::Release);
        self.valid_until_us.store(valid_until, Ordering::Release);
    }

    /// Records that Redis said the lease is ours: from now on, finding it
    /// not ours is a lost lease.
    pub fn confirmed(&self) {
        self.held.store(true, Ordering::Release);
    }

    /// [`Lease::confirmed`] when `ours` (what Redis said, whatever this
    /// process's clock says of the lease); returns `ours`.
    pub fn confirmed_if(&self, ours: bool) -> bool {
        if ours {
            self.confirmed();
        }
        ours
    }

    /// Ends renewal of this hold (released, destroyed, request end); called
    /// before a release is sent, so a round on its way finds it stopped.
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::Release);
    }

    /// Marks the lease lost, found so by PHP's thread (a release, refresh
    /// or check that found the lock no longer ours, or its time over).
    /// Counted once per lease in [`stats`], if it was held.
    pub fn found_lost(&self) {
        if !self.lost.swap(true, Ordering::AcqRel) && self.held.load(Ordering::Acquire) {
            stats::add(Counter::LostLeases);
        }
    }

    /// Marks the lease lost, found so by the renewal thread: also raises the
    /// lost-lease hook when asked to. Not a lease whose renewal was stopped
    /// (released on purpose, request end): a round on its way at the
    /// release finds the key gone because of that release, and the holder
    /// stops renewing before it sends a release. Nor one that was never
    /// held (counted and raised nothing: marked lost only).
    fn mark_lost(&self) {
        if self.stopped.load(Ordering::Acquire)
            || self.lost.swap(true, Ordering::AcqRel)
            || !self.held.load(Ordering::Acquire)
        {
            return;
        }
        stats::add(Counter::LostLeases);
        if self.notify {
            crate::host::lease_lost();
        }
    }

    /// Records that the lease lasts at least until `valid_until` (a
    /// renewal, or a reentrant acquire that made it last its ttl): Redis
    /// said it is ours.
    pub fn extended(&self, valid_until: u64) {
        self.confirmed();
        self.valid_until_us.fetch_max(valid_until, Ordering::AcqRel);
    }
}

/// The end of a lease of `ttl_ms` won or extended by a request sent at
/// `sent`, with `drift` (the clock drift the topology allows) taken off,
/// on [`clock_us`].
pub fn lease_end(sent: Instant, ttl_ms: u64, drift: Duration) -> u64 {
    (clock_us(sent) + ttl_ms * 1000).saturating_sub(drift.as_micros() as u64)
}

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
    /// once (zero) for a hold taken over from a token, a third of the
    /// hand-over's lease for a lock handed over with less than its ttl.
    pub first_in: Option<Duration>,
    /// Renew once, then stop: the claim of a lock handed over with a short
    /// lease, for a hold without `auto_renew` (it then keeps its ttl, counted
    /// from that renewal's send, as if its acquire had been sent then).
    pub once: bool,
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
    },
    /// A semaphore's permit (`sem_refresh.lua` on the holders key), or a
    /// lock's read hold (`read_refresh.lua` on the readers key).
    Permit {
        /// The keys of the semaphore (or of the lock's readers).
        keys: Arc<crate::protocol::semaphore::SemKeys>,
    },
}

struct Entry {
    job: Job,
    lease: Arc<Lease>,
    started: Instant,
    next_due: Instant,
    /// A [`Job::once`] renewal collected: the entry leaves.
    done: bool,
}

impl Entry {
    /// True once the hold has been renewed for `max_hold`.
    fn past_max_hold(&self, now: Instant) -> bool {
        self.job
            .max_hold
            .is_some_and(|max| now >= self.started + max)
    }
}

#[derive(Default)]
struct Renewer {
    entries: Vec<Entry>,
    thread: Option<JoinHandle<()>>,
    shutdown: bool,
}

/// The renewal state of one process.
struct Shared {
    state: Mutex<Renewer>,
    wake: Condvar,
}

/// This process's renewal state; a forked child gets a fresh one.
static SHARED: PerProcess<Shared> = PerProcess::new(|| Shared {
    state: Mutex::new(Renewer::default()),
    wake: Condvar::new(),
});

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Renewer> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(|| {
        let now = Instant::now();
        now.checked_sub(Duration::from_secs(1)).unwrap_or(now)
    })
}

/// Microseconds since this process's lease clock started, at `at`
/// (rounded up, so a lease counted from it never lasts too long). The
/// clock starts a second before its first use, so no instant of interest
/// comes before it.
pub fn clock_us(at: Instant) -> u64 {
    let since = at.saturating_duration_since(epoch());
    since.as_micros() as u64 + u64::from(!since.subsec_nanos().is_multiple_of(1000))
}

/// Starts renewing `lease`, a hold just taken (renewal is due at a third
/// of its lease, or after the job's `first_in`). Starts the thread on first
/// use in this process.
pub fn renew(job: Job, lease: Arc<Lease>) {
    // Initialised here, on PHP's thread, so a fork can never catch the
    // renewal thread half-way through initialising them.
    scripts::prepare();
    let now = Instant::now();
    let ttl_ms = lease.ttl_ms.load(Ordering::Acquire);
    let entry = Entry {
        next_due: now + job.first_in.unwrap_or_else(|| interval(ttl_ms)),
        started: now,
        done: false,
        lease,
        job,
    };
    let shared = SHARED.get();
    let mut renewer = shared.lock();
    renewer.entries.push(entry);
    if renewer.thread.is_none() {
        renewer.thread = std::thread::Builder::new()
            .name("redislock-renew".into())
            .spawn(move || {
                crate::process::signals::block_all_in_this_thread();
                run(shared)
            })
            .ok();
    }
    drop(renewer);
    shared.wake.notify_all();
}

/// Stops the thread and waits for it (module shutdown). Builds nothing in a
/// process that never renewed (a php-fpm master).
pub fn shutdown() {
    let Some(shared) = SHARED.built() else {
        return;
    };
    let thread = {
        let mut renewer = shared.lock();
        renewer.shutdown = true;
        renewer.entries.clear();
        renewer.thread.take()
    };
    shared.wake.notify_all();
    if let Some(thread) = thread {
        let _ = thread.join();
    }
}

/// The least time a renewal round gets for its replies, however little is
/// left of the leases (a round trip on a loaded machine).
const MIN_ROUND: Duration = Duration::from_millis(20);

/// Renew at a third of the lease.
fn interval(ttl_ms: u64) -> Duration {
    Duration::from_millis((ttl_ms / 3).max(1))
}

/// The thread: sleep until the next hold is due, renew everything due.
fn run(shared: &'static Shared) {
    loop {
        let due = {
            let mut renewer = shared.lock();
            loop {
                if renewer.shutdown {
                    return;
                }
                let now = Instant::now();
                expire_or_drop(&mut renewer.entries, now);
                if renewer.entries.iter().any(|e| e.next_due <= now) {
                    // Every round of this pass ends by half of the shortest
                    // lease the thread keeps, due now or not: one slow
                    // server never holds up another lock's renewal past
                    // its lease.
                    let left = renewer
                        .entries
                        .iter()
                        .map(|e| e.lease.valid_for())
                        .min()
                        .unwrap_or_default();
                    let until = now + (left / 2).max(MIN_ROUND);
                    break (collect_due(&mut renewer.entries, now), until);
                }
                let sleep = renewer
                    .entries
                    .iter()
                    .map(|e| e.next_due - now)
                    .min()
                    .unwrap_or(Duration::from_secs(60));
                renewer = shared
                    .wake
                    .wait_timeout(renewer, sleep)
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .0;
            }
        };
        renew_batch(due.0, due.1);
    }
}

/// Drops holds that were released or lost. A hold past `max_hold` is no
/// longer renewed: it is watched until its lease runs out, then marked lost.
fn expire_or_drop(entries: &mut Vec<Entry>, now: Instant) {
    entries.retain_mut(|e| {
        if e.lease.stopped.load(Ordering::Acquire) || e.lease.is_lost() {
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
        e.next_due = now + left;
        true
    });
}

/// A due renewal, detached from the state so no lock is held during I/O.
struct Due {
    topology: Arc<Topology>,
    key: Vec<u8>,
    what: Renewed,
    token: Vec<u8>,
    ttl_ms: u64,
    lease: Arc<Lease>,
}

impl Due {
    /// The command that extends this lease, in a pipelined batch
    /// ([`commands::extend_many`]).
    fn command(&self) -> Command {
        match &self.what {
            Renewed::Lock { fence_key } => {
                commands::refresh_command(&self.key, fence_key.as_deref(), &self.token, self.ttl_ms)
            }
            Renewed::Permit { keys } => {
                crate::protocol::semaphore::lease_command(keys, &self.token, self.ttl_ms)
            }
        }
    }
}

/// The holds to renew now: those due, and those due within a quarter of
/// their interval (so after one round all holds of a server share one
/// cadence and one round trip). Holds past `max_hold` are only watched;
/// holds renewed once ([`Job::once`]) leave once collected.
fn collect_due(entries: &mut Vec<Entry>, now: Instant) -> Vec<Due> {
    let due: Vec<Due> = entries
        .iter_mut()
        .filter(|e| !e.past_max_hold(now))
        .filter_map(|e| {
            let ttl_ms = e.lease.ttl_ms.load(Ordering::Acquire);
            if e.next_due > now + interval(ttl_ms) / 4 {
                return None;
            }
            e.next_due = now + interval(ttl_ms);
            e.done = e.job.once;
            Some(Due {
                topology: e.job.topology.clone(),
                key: e.job.key.clone(),
                what: e.job.what.clone(),
                token: e.job.token.clone(),
                ttl_ms,
                lease: e.lease.clone(),
            })
        })
        .collect();
    entries.retain(|e| !e.done);
    due
}

/// Renews `due` by `until`: the holds of one topology in one pipelined
/// round trip per server, several topologies side by side.
fn renew_batch(mut due: Vec<Due>, until: Instant) {
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
    let sent = Instant::now();
    let keys: Vec<&[u8]> = batch.iter().map(|d| &d.key[..]).collect();
    let scriptless = topology.scriptless(keys[0]).is_some();
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
            commands::extend_many(cmds).within(until)
        }
    });
    let elapsed = sent.elapsed();
    for (d, votes) in batch.iter().zip(results) {
        if votes.answered() < votes.quorum() {
            // Redis unreachable: try again at the next interval; once the
            // lease has run out without a renewal it is lost.
            if d.lease.valid_for().is_zero() {
                d.lease.mark_lost();
            }
            continue;
        }
        // A permit's (or read hold's) script judges it by the clock reading
        // in the request: a reply that comes after the lease it extends ran
        // out may come from a request held up in flight past that end,
        // which found the hold taken meanwhile. (A lock's script compares
        // its token, which nobody else ever holds.)
        let in_time = match d.what {
            Renewed::Lock { .. } => true,
            Renewed::Permit { .. } => !d.lease.valid_for().is_zero(),
        };
        if d.lease.confirmed_if(votes.agree(|ok| *ok))
            && in_time
            && topology.validity(d.ttl_ms, elapsed).is_some()
        {
            // Counted from the send, as every lease, less the drift the
            // servers' clocks may take off it.
            d.lease
                .extended(lease_end(sent, d.ttl_ms, topology.drift(d.ttl_ms)));
            stats::add(Counter::Renewals);
        } else {
            d.lease.mark_lost();
        }
    }
}
