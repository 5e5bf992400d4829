//! Work on holds that Redis did not answer: a release whose reply was lost
//! (any primitive, from `release()`, the object's end or the request's),
//! and the clean-up of an acquire whose outcome is unknown (its reply was
//! lost: it may hold the lock or sit in a queue). Such work is finished,
//! not forgotten: it stays pending, process-wide, and the lease thread
//! ([`super::renewal`]) sends it again, 50 ms later and then at most every
//! 500 ms, until the servers it went to answer, or until the hold it ends
//! is surely over in Redis. Before an acquire of the same key, this process
//! sends it first ([`flush`]), so an object never finds its own forgotten
//! hold in its way.
//!
//! Every call sent here is safe to repeat: a release compares the hold's
//! token, which nobody else ever holds; a clean-up leaves the queue and
//! frees only what the token holds.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{LockError, Result};
use crate::topology::Topology;

/// Sends the work once on the servers still owed it; `Ok` when they all
/// answered.
pub(crate) type Resend = Box<dyn Fn(&[bool]) -> Vec<Result<()>> + Send + Sync>;

/// First pause before work is sent again, doubled up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(50);
const MAX_PAUSE: Duration = Duration::from_millis(500);

/// One piece of pending work.
pub(crate) struct Work {
    /// Where the hold lives (its scope is matched by [`flush`]).
    pub topology: Arc<Topology>,
    /// The key that routes the work (a lock's key, a semaphore's holders).
    pub key: Vec<u8>,
    /// The servers of the key still owed it (in the topology's order).
    pub owed: Vec<bool>,
    /// Sends it.
    pub resend: Resend,
    /// After this the hold is surely over in Redis: the work is dropped.
    pub until: Instant,
    /// When it is sent next, and the pause after that.
    next: Instant,
    pause: Duration,
}

impl std::fmt::Debug for Work {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Work")
            .field("key", &String::from_utf8_lossy(&self.key))
            .field("owed", &self.owed)
            .finish_non_exhaustive()
    }
}

impl Work {
    /// Work owed to the servers of `key` that `owed` marks, done by
    /// `resend`, pointless after `lasts` from now.
    pub fn new(
        topology: Arc<Topology>,
        key: Vec<u8>,
        owed: Vec<bool>,
        lasts: Duration,
        resend: Resend,
    ) -> Self {
        let now = Instant::now();
        Self {
            topology,
            key,
            owed,
            resend,
            until: now + lasts,
            next: now + FIRST_PAUSE,
            pause: FIRST_PAUSE,
        }
    }

    /// When it is due.
    pub fn due(&self) -> Instant {
        self.next
    }

    /// Sends it once: the servers that answered are no longer owed it.
    /// `Ok` when none is; else the first failure (and it is due again
    /// after a longer pause).
    pub fn send(&mut self) -> Result<()> {
        let results = (self.resend)(&self.owed);
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

    fn is_for(&self, scope: &str, key: &[u8]) -> bool {
        &**self.topology.scope() == scope && self.key == key
    }
}

/// Adds work (the lease thread sends it next).
pub(crate) fn add(work: Work) {
    super::renewal::add_pending(work);
}

/// Sends now, on this thread, the pending work of `key` in `scope`
/// (before an acquire of that key). Fails with the server's failure when
/// some of it is still not answered (it stays pending).
pub(crate) fn flush(scope: &str, key: &[u8]) -> Result<()> {
    let mut works = super::renewal::take_pending(|w| w.is_for(scope, key));
    let mut failure = None;
    for work in &mut works {
        if let Err(e) = work.send() {
            failure = failure.or(Some(e));
        }
    }
    let now = Instant::now();
    works.retain(|w| !w.finished(now));
    for work in works {
        add(work);
    }
    failure.map_or(Ok(()), Err)
}
