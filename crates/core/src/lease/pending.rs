//! Work on holds that Redis did not answer: a release whose reply was lost
//! (any primitive, from `release()`, the object's end or the request's),
//! and the clean-up of an acquire whose outcome is unknown (its reply was
//! lost: it may hold the lock or sit in a queue). Such work is finished,
//! not forgotten: it stays pending, process-wide, and its thread
//! ([`super::worker`]) sends it again, 50 ms later and then at most every
//! 500 ms, until the servers it went to answer, or until the hold it ends
//! is surely over in Redis. Before an acquire of the same key, this process
//! sends it first ([`flush`]), so an object never finds its own forgotten
//! hold in its way.
//!
//! Every call sent here is safe to repeat, and can never touch a hold
//! taken after it was first sent (neither a resend nor the first copy,
//! held up in flight): a release compares the hold's token, which no other
//! hold ever has, and for a fixed owner's holds (whose token is the same
//! for every hold) the hold's nonce too; a clean-up leaves the queue and
//! frees only what the token (and nonce) holds.

use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

use crate::error::{LockError, Result};
use crate::process::PerProcess;
use crate::topology::Topology;

/// Sends the work once on the servers still owed it, waiting for their
/// answers until the deadline if there is one (else the read timeout);
/// `Ok` when they all answered.
pub(crate) type Resend = Box<dyn Fn(&[bool], Option<Instant>) -> Vec<Result<()>> + Send + Sync>;

/// How long the pending-work thread waits for an answer to a resend: a
/// server that holds one reply up does not hold up the work of other
/// servers for the whole read timeout (what it does not answer now is
/// sent again).
const RESEND_WAIT: Duration = Duration::from_millis(500);

/// First pause before work is sent again, doubled up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(50);
const MAX_PAUSE: Duration = Duration::from_millis(500);

/// One piece of pending work, shared by its thread and [`flush`]:
/// whoever sends it holds its lock, so an acquire that flushes it waits
/// for a send the thread has on its way.
pub(crate) struct Pending {
    /// The scope of the hold's topology ([`flush`] matches it).
    scope: Arc<str>,
    /// The key the work is filed under, which [`flush`] matches: the lock's
    /// key for its write and read holds, a semaphore's holders key.
    key: Vec<u8>,
    work: Mutex<Work>,
}

impl Pending {
    fn is_for(&self, scope: &str, key: &[u8]) -> bool {
        &*self.scope == scope && self.key == key
    }

    /// The work, waiting for a send on its way.
    pub fn lock(&self) -> MutexGuard<'_, Work> {
        self.work.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The work unless someone is sending it now.
    pub fn try_lock(&self) -> Option<MutexGuard<'_, Work>> {
        match self.work.try_lock() {
            Ok(work) => Some(work),
            Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending")
            .field("key", &String::from_utf8_lossy(&self.key))
            .finish_non_exhaustive()
    }
}

/// What is left to do of one piece of pending work.
pub(crate) struct Work {
    /// The servers of the key still owed it (in the topology's order).
    owed: Vec<bool>,
    /// Sends it.
    resend: Resend,
    /// After this the hold is surely over in Redis: the work is dropped.
    until: Instant,
    /// When it is sent next, and the pause after that.
    next: Instant,
    pause: Duration,
}

impl Work {
    /// When it is due.
    pub fn due(&self) -> Instant {
        self.next
    }

    /// Sends it once, waiting for the answers until `until` if given: the
    /// servers that answered are no longer owed it. `Ok` when none is;
    /// else the first failure (and it is due again after a longer pause).
    pub fn send(&mut self, until: Option<Instant>) -> Result<()> {
        let results = (self.resend)(&self.owed, until);
        let mut failure = None;
        for (owed, result) in self.owed.iter_mut().zip(results) {
            match result {
                Ok(()) => *owed = false,
                Err(e) if *owed => failure = failure.or(Some(e)),
                Err(_) => {}
            }
        }
        match failure {
            None if !self.owed.contains(&true) => Ok(()),
            None => Err(LockError::Internal("no reply from a server".into())),
            Some(e) => {
                self.next = Instant::now() + self.pause;
                self.pause = (self.pause * 2).min(MAX_PAUSE);
                Err(e)
            }
        }
    }

    /// True once the work is done or pointless.
    pub fn finished(&self, now: Instant) -> bool {
        !self.owed.contains(&true) || now >= self.until
    }
}

impl Pending {
    /// Work owed to the servers of `key` in `topology` that `owed` marks,
    /// done by `resend`, pointless after `lasts` from now; due first 50 ms
    /// from now. [`super::worker::add_pending`] hands it to the thread.
    pub fn new(
        topology: &Topology,
        key: Vec<u8>,
        owed: Vec<bool>,
        lasts: Duration,
        resend: Resend,
    ) -> Arc<Self> {
        let now = Instant::now();
        Arc::new(Self {
            scope: topology.scope().clone(),
            key,
            work: Mutex::new(Work {
                owed,
                resend,
                until: now + lasts,
                next: now + FIRST_PAUSE,
                pause: FIRST_PAUSE,
            }),
        })
    }
}

/// The pending work of this process; a forked child starts with none.
static LIST: PerProcess<Mutex<Vec<Arc<Pending>>>> = PerProcess::new(|| Mutex::new(Vec::new()));

fn list() -> MutexGuard<'static, Vec<Arc<Pending>>> {
    LIST.get().lock().unwrap_or_else(|p| p.into_inner())
}

/// Adds work to the list ([`super::worker::add_pending`]).
pub(super) fn push(work: Arc<Pending>) {
    list().push(work);
}

/// Forgets every piece of work (module shutdown).
pub(super) fn clear() {
    if let Some(list) = LIST.built() {
        list.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

/// Drops finished work (not being sent now); returns the work due at
/// `now` (it stays in the list until finished) and when the next is due.
/// Work an acquire is sending now ([`flush`]) is skipped, and looked at
/// again [`FIRST_PAUSE`] later: nothing tells the thread when that send
/// ends, and a send that failed leaves the work owed.
pub(super) fn poll(now: Instant) -> (Vec<Arc<Pending>>, Option<Instant>) {
    let Some(list) = LIST.built() else {
        return (Vec::new(), None);
    };
    let mut list = list.lock().unwrap_or_else(|p| p.into_inner());
    list.retain(|p| p.try_lock().is_none_or(|w| !w.finished(now)));
    let mut due = Vec::new();
    let mut next: Option<Instant> = None;
    for p in list.iter() {
        let at = match p.try_lock() {
            Some(work) if work.due() <= now => {
                due.push(p.clone());
                continue;
            }
            Some(work) => work.due(),
            None => now + FIRST_PAUSE,
        };
        next = Some(next.map_or(at, |n| n.min(at)));
    }
    (due, next)
}

/// Sends `due` work once (unless an acquire sent it meanwhile); what is
/// finished leaves the list.
pub(super) fn resend(due: Vec<Arc<Pending>>) {
    for p in &due {
        let mut work = p.lock();
        let now = Instant::now();
        if !work.finished(now) && work.due() <= now {
            let _ = work.send(Some(now + RESEND_WAIT));
        }
    }
    drop_finished();
}

/// Drops the work that is finished (and not being sent now).
fn drop_finished() {
    if let Some(list) = LIST.built() {
        let now = Instant::now();
        list.lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|p| p.try_lock().is_none_or(|w| !w.finished(now)));
    }
}

/// Sends now, on this thread, the pending work of `key` in `scope`
/// (before an acquire of that key), after any send of it the thread
/// has on its way. Fails with the server's failure when some of it is
/// still not answered (it stays pending).
pub(crate) fn flush(scope: &str, key: &[u8]) -> Result<()> {
    let pending: Vec<Arc<Pending>> = match LIST.built() {
        Some(list) => list
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|p| p.is_for(scope, key))
            .cloned()
            .collect(),
        None => return Ok(()),
    };
    let mut failure = None;
    for p in &pending {
        let mut work = p.lock();
        if !work.finished(Instant::now())
            && let Err(e) = work.send(None)
        {
            failure = failure.or(Some(e));
        }
    }
    if !pending.is_empty() {
        drop_finished();
    }
    failure.map_or(Ok(()), Err)
}
