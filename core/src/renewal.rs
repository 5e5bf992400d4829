//! Lease renewal (option `auto_renew`): one background thread per process
//! extends every auto-renewed hold at about a third of its ttl with the
//! compare-and-pexpire script, pipelining all holds due on one server into
//! one round trip. It never touches PHP.
//!
//! A renewal that finds the lease gone marks the hold lost at once; the PHP
//! side reads that mark without a round trip ([`Lease::is_lost`],
//! [`Lease::valid_for`]). Renewal of a hold stops at release, object
//! destruction, request end, or after `max_hold`; the thread stops at module
//! shutdown. After `fork()` the child has no thread and no jobs: it neither
//! renews nor believes it is renewed.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::{Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::connection::ServerConfig;
use crate::pool::{self, Role};
use crate::process;
use crate::scripts;

/// What the renewal thread knows of one hold, shared with its lock object.
#[derive(Debug)]
pub struct Lease {
    lost: AtomicBool,
    stopped: AtomicBool,
    /// Milliseconds since [`epoch`] until which the lease is known to last.
    valid_until_ms: AtomicU64,
    /// Raise the lost-lease hook when this lease is lost.
    notify: bool,
}

impl Lease {
    /// True once a renewal found the lease gone (or renewals failed for
    /// longer than the lease).
    pub fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    /// How long the lease is known to last from now (zero when lost or
    /// expired by the thread's knowledge).
    pub fn valid_for(&self) -> Duration {
        if self.is_lost() {
            return Duration::ZERO;
        }
        let until = self.valid_until_ms.load(Ordering::Acquire);
        Duration::from_millis(until.saturating_sub(now_ms()))
    }

    /// Records that the lease was just extended to `ttl_ms` (a manual
    /// refresh).
    pub fn extended(&self, ttl_ms: u64) {
        self.valid_until_ms
            .fetch_max(now_ms() + ttl_ms, Ordering::AcqRel);
    }

    /// Ends renewal of this hold (released, destroyed, request end).
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::Release);
    }

    /// Marks the lease lost (a renewal or a refresh found it gone).
    pub fn mark_lost(&self) {
        if !self.lost.swap(true, Ordering::AcqRel) && self.notify {
            if let Some(hook) = LOST_HOOK.get() {
                hook();
            }
        }
    }
}

/// A hold to keep renewed.
#[derive(Debug)]
pub struct Job {
    /// Where the lock lives.
    pub server: Arc<ServerConfig>,
    /// The lock key.
    pub key: Vec<u8>,
    /// Our owner token.
    pub token: Vec<u8>,
    /// Lease to set at each renewal.
    pub ttl_ms: u64,
    /// Stop renewing after this long (`max_hold`).
    pub max_hold: Option<Duration>,
    /// Call the lost-lease hook when the lease is lost.
    pub notify: bool,
    /// Renew at once instead of after a third of the lease.
    pub renew_now: bool,
}

struct Entry {
    job: Job,
    lease: Arc<Lease>,
    started: Instant,
    next_due: Instant,
}

struct Renewer {
    generation: u64,
    entries: Vec<Entry>,
    thread: Option<JoinHandle<()>>,
    shutdown: bool,
}

struct Shared {
    state: Mutex<Option<Renewer>>,
    wake: Condvar,
}

static SHARED: Shared = Shared {
    state: Mutex::new(None),
    wake: Condvar::new(),
};

/// Called (on the renewal thread) when a lease with `notify` is lost.
static LOST_HOOK: OnceLock<fn()> = OnceLock::new();

/// Installs the lost-lease hook (once; later calls are ignored).
pub fn set_lost_hook(hook: fn()) {
    let _ = LOST_HOOK.set(hook);
}

fn lock_state() -> MutexGuard<'static, Option<Renewer>> {
    SHARED.state.lock()
}

/// fork() prepare handler: the renewal thread must not hold the state.
pub(crate) fn lock_for_fork() {
    std::mem::forget(SHARED.state.lock());
}

/// fork() parent/child handler: undoes [`lock_for_fork`].
pub(crate) fn unlock_after_fork() {
    // SAFETY: locked by `lock_for_fork` on this thread, guard forgotten.
    unsafe { SHARED.state.force_unlock() };
}

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn now_ms() -> u64 {
    epoch().elapsed().as_millis() as u64
}

/// Starts renewing a hold that was just taken (its lease lasts `ttl_ms`
/// from about now). Starts the thread on first use in this process.
pub fn renew(job: Job) -> Arc<Lease> {
    let lease = Arc::new(Lease {
        lost: AtomicBool::new(false),
        stopped: AtomicBool::new(false),
        valid_until_ms: AtomicU64::new(now_ms() + job.ttl_ms),
        notify: job.notify,
    });
    let now = Instant::now();
    let entry = Entry {
        next_due: if job.renew_now {
            now
        } else {
            now + interval(job.ttl_ms)
        },
        started: now,
        lease: lease.clone(),
        job,
    };
    let generation = process::generation();
    let mut guard = lock_state();
    if guard.as_ref().is_none_or(|r| r.generation != generation) {
        // First use, or inherited through fork: the parent's thread does not
        // exist here and its jobs are not ours.
        if let Some(inherited) = guard.take() {
            std::mem::forget(inherited.thread);
        }
        *guard = Some(Renewer {
            generation,
            entries: Vec::new(),
            thread: None,
            shutdown: false,
        });
    }
    let renewer = guard.as_mut().expect("renewer was just initialised");
    renewer.entries.push(entry);
    if renewer.thread.is_none() {
        renewer.thread = std::thread::Builder::new()
            .name("redislock-renew".into())
            .spawn(run)
            .ok();
    }
    drop(guard);
    SHARED.wake.notify_all();
    lease
}

/// Number of holds being renewed in this process.
pub fn active() -> usize {
    let generation = process::generation();
    let guard = lock_state();
    match guard.as_ref() {
        Some(r) if r.generation == generation => r
            .entries
            .iter()
            .filter(|e| !e.lease.stopped.load(Ordering::Acquire))
            .count(),
        _ => 0,
    }
}

/// Stops the thread and waits for it (module shutdown).
pub fn shutdown() {
    let generation = process::generation();
    let thread = {
        let mut guard = lock_state();
        match guard.as_mut() {
            Some(r) if r.generation == generation => {
                r.shutdown = true;
                r.entries.clear();
                r.thread.take()
            }
            _ => None,
        }
    };
    SHARED.wake.notify_all();
    if let Some(thread) = thread {
        let _ = thread.join();
    }
}

/// Renew at a third of the lease.
fn interval(ttl_ms: u64) -> Duration {
    Duration::from_millis((ttl_ms / 3).max(1))
}

/// The thread: sleep until the next hold is due, renew everything due.
fn run() {
    let generation = process::generation();
    loop {
        let due = {
            let mut guard = lock_state();
            loop {
                let Some(renewer) = guard.as_mut() else {
                    return;
                };
                if renewer.shutdown || renewer.generation != generation {
                    return;
                }
                let now = Instant::now();
                renewer.entries.retain(|e| {
                    let stopped = e.lease.stopped.load(Ordering::Acquire);
                    let over = e.job.max_hold.is_some_and(|max| now >= e.started + max);
                    !stopped && !over && !e.lease.is_lost()
                });
                if renewer.entries.iter().any(|e| e.next_due <= now) {
                    // Renew the due holds and, in the same round trips, those
                    // due within a quarter of their interval: after one round
                    // all holds of a server share one cadence.
                    let due: Vec<usize> = (0..renewer.entries.len())
                        .filter(|&i| {
                            let e = &renewer.entries[i];
                            e.next_due <= now + interval(e.job.ttl_ms) / 4
                        })
                        .collect();
                    break collect_due(renewer, &due, now);
                }
                let sleep = renewer
                    .entries
                    .iter()
                    .map(|e| e.next_due - now)
                    .min()
                    .unwrap_or(Duration::from_secs(60));
                SHARED.wake.wait_for(&mut guard, sleep);
            }
        };
        renew_batch(due);
    }
}

/// A due renewal, detached from the state so no lock is held during I/O.
struct Due {
    server: Arc<ServerConfig>,
    key: Vec<u8>,
    token: Vec<u8>,
    ttl_ms: u64,
    lease: Arc<Lease>,
}

fn collect_due(renewer: &mut Renewer, due: &[usize], now: Instant) -> Vec<Due> {
    due.iter()
        .map(|&i| {
            let entry = &mut renewer.entries[i];
            entry.next_due = now + interval(entry.job.ttl_ms);
            Due {
                server: entry.job.server.clone(),
                key: entry.job.key.clone(),
                token: entry.job.token.clone(),
                ttl_ms: entry.job.ttl_ms,
                lease: entry.lease.clone(),
            }
        })
        .collect()
}

/// Renews `due`, one pipelined round trip per server.
fn renew_batch(mut due: Vec<Due>) {
    due.sort_by_key(|d| d.server.name());
    let mut start = 0;
    while start < due.len() {
        let end = (start..due.len())
            .find(|&i| due[i].server != due[start].server)
            .unwrap_or(due.len());
        renew_on_server(&due[start..end]);
        start = end;
    }
}

fn renew_on_server(batch: &[Due]) {
    let sent_at = now_ms();
    let mut pipe = redis::pipe();
    for d in batch {
        pipe.cmd("EVALSHA")
            .arg(scripts::REFRESH.get_hash())
            .arg(1)
            .arg(&d.key)
            .arg(&d.token)
            .arg(d.ttl_ms);
    }
    let results = pool::with_role(&batch[0].server, Role::Renewal, |con, _| {
        match pipe.query::<Vec<i64>>(con) {
            Err(e) if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) => {
                scripts::REFRESH.load(con)?;
                pipe.query::<Vec<i64>>(con)
            }
            other => other,
        }
    });
    match results {
        Ok(extended) => {
            for (d, ok) in batch.iter().zip(extended) {
                if ok == 1 {
                    d.lease
                        .valid_until_ms
                        .fetch_max(sent_at + d.ttl_ms, Ordering::AcqRel);
                } else {
                    d.lease.mark_lost();
                }
            }
        }
        Err(_) => {
            // Redis unreachable: try again at the next interval; once the
            // lease has run out without a renewal it is lost.
            for d in batch {
                if d.lease.valid_until_ms.load(Ordering::Acquire) <= now_ms() {
                    d.lease.mark_lost();
                }
            }
        }
    }
}
