//! One block of counters: per primitive, the events and the wait-time
//! histogram; the reconnects; the hottest names. All relaxed atomics, all
//! zero when new, so a block is valid as zeroed memory (a fresh mapping
//! of the pool's, or a zeroed allocation).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::Primitive;
use super::histogram::{self, BUCKETS};
use super::names::NameTable;

/// What is counted per primitive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Event {
    /// An acquire that returned true.
    Acquired,
    /// An acquire whose wait ran out.
    Timeout,
    /// An acquire without a wait that found the hold taken.
    Busy,
    /// An acquire that failed with an error.
    Error,
    /// An acquire that found the hold taken at its first try.
    Contended,
    /// A hold released in Redis.
    Releases,
    /// A lease found lost.
    LostLeases,
    /// A lease extended by the renewal thread.
    Renewals,
    /// An acquire handed its hold while it waited in the queue.
    Handovers,
}

const EVENTS: usize = 9;

/// The counters of one primitive.
#[repr(C)]
pub(super) struct PrimitiveBlock {
    events: [AtomicU64; EVENTS],
    wait_sum_us: AtomicU64,
    wait_max_us: AtomicU64,
    waits: [AtomicU64; BUCKETS],
}

/// Every counter of one scope.
#[repr(C)]
pub(super) struct Block {
    primitives: [PrimitiveBlock; 3],
    reconnects: AtomicU64,
    /// The hottest names.
    pub(super) names: NameTable,
}

impl Block {
    /// A new block, all zero, on the heap.
    pub(super) fn boxed() -> Box<Block> {
        zeroed_box()
    }

    /// The counters of one primitive.
    pub(super) fn primitive(&self, primitive: Primitive) -> &PrimitiveBlock {
        &self.primitives[primitive as usize]
    }

    /// Counts a reconnect.
    pub(super) fn reconnected(&self) {
        self.reconnects.fetch_add(1, Ordering::Relaxed);
    }

    /// The reconnects so far.
    pub(super) fn reconnects(&self) -> u64 {
        self.reconnects.load(Ordering::Relaxed)
    }
}

/// A `T` of zeroed memory on the heap, for types made of atomic integers
/// only (all-zero bytes are a valid value of them).
pub(super) fn zeroed_box<T>() -> Box<T> {
    let layout = std::alloc::Layout::new::<T>();
    // SAFETY: T is not zero-sized (a block or a table of counters); the
    // memory is zeroed, which is a valid T for the callers' types, and is
    // allocated with T's layout, as Box::from_raw requires.
    unsafe {
        let ptr = std::alloc::alloc_zeroed(layout).cast::<T>();
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Box::from_raw(ptr)
    }
}

impl PrimitiveBlock {
    /// Counts one event.
    pub(super) fn add(&self, event: Event) {
        self.events[event as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// Records how long a successful acquire took (its call to its return).
    pub(super) fn waited(&self, took: Duration) {
        let us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        self.waits[histogram::bucket(us)].fetch_add(1, Ordering::Relaxed);
        self.wait_sum_us.fetch_add(us, Ordering::Relaxed);
        self.wait_max_us.fetch_max(us, Ordering::Relaxed);
    }

    /// Reads every counter (each one atomically; together, as they were
    /// at about this moment).
    pub(super) fn read(&self) -> Figures {
        let get = |e: Event| self.events[e as usize].load(Ordering::Relaxed);
        let acquired = get(Event::Acquired);
        let timeouts = get(Event::Timeout);
        let busy = get(Event::Busy);
        let errors = get(Event::Error);
        Figures {
            acquires: acquired + timeouts + busy + errors,
            acquired,
            timeouts,
            busy,
            errors,
            contended: get(Event::Contended),
            releases: get(Event::Releases),
            lost_leases: get(Event::LostLeases),
            renewals: get(Event::Renewals),
            handovers: get(Event::Handovers),
            waits: self
                .waits
                .iter()
                .map(|b| b.load(Ordering::Relaxed))
                .collect(),
            wait_sum_us: self.wait_sum_us.load(Ordering::Relaxed),
            wait_max_us: self.wait_max_us.load(Ordering::Relaxed),
        }
    }
}

/// The figures of one primitive (or of several added up).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Figures {
    /// Acquire calls (reentrant ones included): the four outcomes below.
    pub acquires: u64,
    /// Acquires that returned true.
    pub acquired: u64,
    /// Acquires whose wait ran out (returned false).
    pub timeouts: u64,
    /// Acquires without a wait that found the hold taken (returned false).
    pub busy: u64,
    /// Acquires that threw.
    pub errors: u64,
    /// Acquires that found the hold taken at their first try.
    pub contended: u64,
    /// Holds released in Redis (the last release of a hold, ours).
    pub releases: u64,
    /// Leases found lost.
    pub lost_leases: u64,
    /// Leases extended by the renewal thread.
    pub renewals: u64,
    /// Acquires handed their hold while they waited in the queue.
    pub handovers: u64,
    /// How long successful acquires took: the histogram's buckets.
    waits: Vec<u64>,
    /// Their sum, µs.
    pub wait_sum_us: u64,
    /// The longest, µs (exact).
    pub wait_max_us: u64,
}

impl Figures {
    /// Adds `other` to these.
    pub(super) fn merge(&mut self, other: &Figures) {
        self.acquires += other.acquires;
        self.acquired += other.acquired;
        self.timeouts += other.timeouts;
        self.busy += other.busy;
        self.errors += other.errors;
        self.contended += other.contended;
        self.releases += other.releases;
        self.lost_leases += other.lost_leases;
        self.renewals += other.renewals;
        self.handovers += other.handovers;
        if self.waits.is_empty() {
            self.waits = vec![0; BUCKETS];
        }
        for (sum, n) in self.waits.iter_mut().zip(&other.waits) {
            *sum += n;
        }
        self.wait_sum_us += other.wait_sum_us;
        self.wait_max_us = self.wait_max_us.max(other.wait_max_us);
    }

    /// Successful acquires timed (as many as `acquired`, read at about the
    /// same moment).
    pub fn wait_count(&self) -> u64 {
        self.waits.iter().sum()
    }

    /// The `q` quantile (0 to 1) of successful acquires' times, µs, within
    /// 1/16 (the top of its bucket, at most the maximum); 0 when none.
    pub fn wait_quantile_us(&self, q: f64) -> u64 {
        histogram::percentile(&self.waits, q).min(self.wait_max_us)
    }

    /// Successful acquires that took at most `us` µs (within 1/16: whole
    /// buckets, by their top).
    pub fn waits_at_most_us(&self, us: u64) -> u64 {
        histogram::count_at_most(&self.waits, us)
    }
}
