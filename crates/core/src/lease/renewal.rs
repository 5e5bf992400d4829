//! Lease renewal (option `auto_renew`): one background thread per process
//! extends every auto-renewed hold at about a third of its lease with the
//! compare-and-pexpire script (a semaphore's permit: `sem_refresh.lua`,
//! [`Renewed`]), pipelining all holds due on one server into one round
//! trip. It never touches PHP.
//!
//! A renewal is one more command of its hold ([`Lease::send`]): its reply
//! counts only if no later command was sent meanwhile (a `refresh()`, a
//! release), and one that gets no answer is sent again soon, until
//! answered or the lease is over. A renewal that finds the lease gone
//! marks the hold lost at once; the PHP side reads that mark without a
//! round trip ([`Lease::is_lost`], [`Lease::valid_for`]). A `refresh()`
//! sets the lease length that later renewals keep, and when the next one
//! is due. Renewal of a hold stops at release, object
//! destruction (not with `auto_release` off: see [`super::holds`]) or
//! request end (the hold table stops it), and after
//! `max_hold`: the thread then only watches the lease and marks it lost when
//! it runs out. The thread stops at module shutdown. A forked child has no
//! thread and no jobs ([`PerProcess`]): it neither renews nor believes it is
//! renewed.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::lease::belief::{Applied, Effect, Lease, Sent};
use crate::lease::pending::Pending;
use crate::net::pool::Role;
use crate::process::PerProcess;
use crate::process::stats::{self, Counter};
use crate::protocol::command::Command;
use crate::protocol::commands;
use crate::protocol::scripts;
use crate::topology::Topology;

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

#[derive(Default)]
struct Renewer {
    entries: Vec<Entry>,
    /// Releases and clean-ups that Redis did not answer ([`super::pending`]).
    pending: Vec<Arc<Pending>>,
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

/// Starts renewing `lease`, a hold just taken (renewal is due at a third
/// of its lease, or after the job's `first_in`). Starts the thread on first
/// use in this process.
pub fn renew(job: Job, lease: Arc<Lease>) {
    // Initialised here, on PHP's thread, so a fork can never catch the
    // renewal thread half-way through initialising them.
    scripts::prepare();
    let now = Instant::now();
    if let Some(first_in) = job.first_in {
        lease.renew_after(first_in);
    }
    let entry = Entry {
        started: now,
        watch_until: None,
        lease,
        job,
    };
    let shared = SHARED.get();
    let mut renewer = shared.lock();
    renewer.entries.push(entry);
    start(shared, &mut renewer);
    drop(renewer);
    shared.wake.notify_all();
}

/// Starts the thread on first use in this process.
fn start(shared: &'static Shared, renewer: &mut Renewer) {
    if renewer.thread.is_none() {
        renewer.thread = std::thread::Builder::new()
            .name("redislock-renew".into())
            .spawn(move || {
                crate::process::signals::block_all_in_this_thread();
                run(shared)
            })
            .ok();
    }
}

/// Adds pending work ([`super::pending::add`]): the thread sends it when
/// it is due.
pub(crate) fn add_pending(work: Arc<Pending>) {
    scripts::prepare();
    let shared = SHARED.get();
    let mut renewer = shared.lock();
    renewer.pending.push(work);
    start(shared, &mut renewer);
    drop(renewer);
    shared.wake.notify_all();
}

/// The pending work that `pred` accepts ([`super::pending::flush`]); it
/// stays in the thread's list until it is finished.
pub(crate) fn pending_where(pred: impl Fn(&Pending) -> bool) -> Vec<Arc<Pending>> {
    let Some(shared) = SHARED.built() else {
        return Vec::new();
    };
    let renewer = shared.lock();
    renewer
        .pending
        .iter()
        .filter(|p| pred(p))
        .cloned()
        .collect()
}

/// Drops the pending work that is finished (and not being sent now).
pub(crate) fn drop_finished() {
    if let Some(shared) = SHARED.built() {
        let now = Instant::now();
        shared
            .lock()
            .pending
            .retain(|p| p.try_lock().is_none_or(|w| !w.finished(now)));
    }
}

/// Wakes the renewal thread to look at its schedule again (a `refresh()`
/// moved a hold's next renewal).
pub fn wake() {
    if let Some(shared) = SHARED.built() {
        shared.wake.notify_all();
    }
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
        renewer.pending.clear();
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

/// How soon a renewal that got no answer is sent again (at most).
const RETRY: Duration = Duration::from_millis(100);

/// The thread: sleep until the next hold is due, renew everything due.
fn run(shared: &'static Shared) {
    loop {
        let (due, until, work) = {
            let mut renewer = shared.lock();
            loop {
                if renewer.shutdown {
                    return;
                }
                let now = Instant::now();
                expire_or_drop(&mut renewer.entries, now);
                renewer
                    .pending
                    .retain(|p| p.try_lock().is_none_or(|w| !w.finished(now)));
                let renew = renewer.entries.iter().any(|e| e.due() <= now);
                // Work an acquire is sending now is skipped: it waits.
                let due_work = |p: &Arc<Pending>| p.try_lock().is_some_and(|w| w.due() <= now);
                let resend = renewer.pending.iter().any(due_work);
                if renew || resend {
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
                    let due = collect_due(&mut renewer.entries, now);
                    let work: Vec<Arc<Pending>> = renewer
                        .pending
                        .iter()
                        .filter(|p| due_work(p))
                        .cloned()
                        .collect();
                    break (due, until, work);
                }
                let sleep = renewer
                    .entries
                    .iter()
                    .map(Entry::due)
                    .chain(
                        renewer
                            .pending
                            .iter()
                            .filter_map(|p| p.try_lock().map(|w| w.due())),
                    )
                    .map(|due| due.saturating_duration_since(now))
                    .min()
                    .unwrap_or(Duration::from_secs(60));
                renewer = shared
                    .wake
                    .wait_timeout(renewer, sleep)
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .0;
            }
        };
        if !due.is_empty() {
            renew_batch(due, until);
        }
        resend(work);
    }
}

/// Sends pending work once (unless an acquire sent it meanwhile); what is
/// finished leaves the list.
fn resend(work: Vec<Arc<Pending>>) {
    if work.is_empty() {
        return;
    }
    for p in &work {
        let mut w = p.lock();
        if !w.finished(Instant::now()) && w.due() <= Instant::now() {
            let _ = w.send();
        }
    }
    drop_finished();
}

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
struct Due {
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
            commands::extend_many(cmds).within(until)
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
        // its token, which nobody else ever holds.)
        let in_time = match d.what {
            Renewed::Lock { .. } => true,
            Renewed::Permit { .. } => !d.lease.valid_for().is_zero(),
        };
        let ours = votes.agree(|ok| *ok)
            && in_time
            && topology.validity(d.ttl_ms, sent.at.elapsed()).is_some();
        match d.lease.answered(sent, ours, &drift) {
            Applied::Ours => stats::add(Counter::Renewals),
            Applied::NotOurs => d.lease.mark_lost(),
            // A later command of the hold (a refresh, a release) decides.
            Applied::Superseded => {}
        }
    }
}
