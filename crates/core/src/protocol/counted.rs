//! The keys of holds counted in a sorted set, each with a lease of its
//! own: a semaphore's permits (`lib/semaphore.lua`) and a lock's read holds
//! (`lib/readers.lua`), and the client clock their scores are read by.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::protocol::keys::{self, LockKeys};

/// How far the clocks of a semaphore's clients may differ: a holder counts
/// as live until its lease end (by its own clock) plus this, by the clock
/// of whoever looks. A crashed holder's permit comes back this much after
/// its lease.
pub const GRACE: Duration = Duration::from_millis(500);

/// What the holders of a [`SemKeys`] hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Counted {
    /// Permits of a semaphore (their number is the member `~~n` of `S~~s`,
    /// scored -N).
    Permits,
    /// Read holds of the lock `K` (its keys): no number, but no writer
    /// (`lib/readers.lua`).
    Readers(LockKeys),
}

/// The key names of one semaphore `S` (see `lib/semaphore.lua`), or of the
/// read holds of one lock `K` (`lib/readers.lua`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SemKeys {
    /// `S~~s` (`K~~r`): the holders (sorted set: token -> lease end, ms).
    pub holders: Vec<u8>,
    /// `S~~s~~q` (`K~~q`): the waiters in arrival order.
    pub queue: Vec<u8>,
    /// The key the waiters' marks and wake-up lists extend: `S~~s` (`K`).
    pub base: Vec<u8>,
    /// What is counted.
    pub counted: Counted,
}

impl SemKeys {
    /// The keys of the semaphore whose name (prefix included, with its hash
    /// tag on Cluster) is `name`.
    pub fn new(name: &[u8]) -> Self {
        let holders = keys::helper_key(name, "s");
        Self {
            queue: keys::helper_key(&holders, "q"),
            counted: Counted::Permits,
            base: holders.clone(),
            holders,
        }
    }

    /// The keys of the read holds of the lock whose keys are `lock`:
    /// readers `K~~r`, waiting in the lock's own queue `K~~q`.
    pub fn readers(lock: &LockKeys) -> Self {
        Self {
            holders: keys::readers_key(&lock.lock),
            queue: lock.queue.clone(),
            base: lock.lock.clone(),
            counted: Counted::Readers(lock.clone()),
        }
    }

    /// The wake-up list of the waiter holding `token`.
    pub fn wake(&self, token: &[u8]) -> Vec<u8> {
        [&keys::helper_key(&self.base, "w~")[..], token].concat()
    }
}

/// Now by this client's clock, in ms since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Now by this client's clock, in µs since the Unix epoch (a waiter's
/// arrival).
pub fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// [`GRACE`] in ms, as the scripts take it.
pub fn grace_ms() -> u64 {
    GRACE.as_millis() as u64
}
