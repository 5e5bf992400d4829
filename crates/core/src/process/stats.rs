//! This process's lock counters since it started (a forked child starts
//! from zero): what `RedisLock::stats()` and `phpinfo()` show.
//!
//! Counters are relaxed atomics (the renewal thread counts too). Wait
//! times go into a log-linear histogram: exact below 16 µs, then 16
//! buckets per power of two, so a percentile is within 1/16 (6.25 %) of the
//! true value; the maximum is exact.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::process::PerProcess;

/// What is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    /// `acquire()` calls (reentrant ones included).
    Acquires,
    /// Acquires that returned true.
    Acquired,
    /// Acquires that found the lock held by someone else at their first try.
    Contended,
    /// Acquires with a wait that ran out (returned false).
    Timeouts,
    /// Holds released in Redis (the last release of a hold, ours).
    Releases,
    /// Auto-renewed leases found lost.
    LostLeases,
    /// Leases extended by the renewal thread.
    Renewals,
    /// Connections opened to replace one that broke (dropped, timed out).
    Reconnects,
}

const COUNTERS: usize = 8;
/// Sub-buckets per power of two.
const SUB: u64 = 16;
const SUB_BITS: u32 = 4;
/// Buckets: 16 exact ones, then 16 per power of two from 2^4 to 2^63.
const BUCKETS: usize = (SUB + (64 - SUB_BITS as u64) * SUB) as usize;

struct Stats {
    counters: [AtomicU64; COUNTERS],
    waits: [AtomicU64; BUCKETS],
    max_wait_us: AtomicU64,
}

static STATS: PerProcess<Stats> = PerProcess::new(|| Stats {
    counters: std::array::from_fn(|_| AtomicU64::new(0)),
    waits: std::array::from_fn(|_| AtomicU64::new(0)),
    max_wait_us: AtomicU64::new(0),
});

/// Counts one event.
pub fn add(counter: Counter) {
    STATS.get().counters[counter as usize].fetch_add(1, Ordering::Relaxed);
}

/// Records how long a successful acquire took (its call to its return).
pub fn wait(took: Duration) {
    let us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
    let stats = STATS.get();
    stats.waits[bucket(us)].fetch_add(1, Ordering::Relaxed);
    stats.max_wait_us.fetch_max(us, Ordering::Relaxed);
}

/// The counters and wait-time percentiles now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// `acquire()` calls.
    pub acquires: u64,
    /// Acquires that returned true.
    pub acquired: u64,
    /// Acquires that found the lock held at their first try.
    pub contended: u64,
    /// Acquires whose wait ran out.
    pub timeouts: u64,
    /// Holds released in Redis.
    pub releases: u64,
    /// Auto-renewed leases found lost.
    pub lost_leases: u64,
    /// Leases extended by the renewal thread.
    pub renewals: u64,
    /// Connections opened to replace a broken one.
    pub reconnects: u64,
    /// Median time of a successful acquire, µs (0: none yet).
    pub wait_p50_us: u64,
    /// 99th percentile, µs.
    pub wait_p99_us: u64,
    /// Longest, µs.
    pub wait_max_us: u64,
}

/// Reads every counter.
pub fn snapshot() -> Snapshot {
    let stats = STATS.get();
    let get = |c: Counter| stats.counters[c as usize].load(Ordering::Relaxed);
    let counts: Vec<u64> = stats
        .waits
        .iter()
        .map(|b| b.load(Ordering::Relaxed))
        .collect();
    let max = stats.max_wait_us.load(Ordering::Relaxed);
    Snapshot {
        acquires: get(Counter::Acquires),
        acquired: get(Counter::Acquired),
        contended: get(Counter::Contended),
        timeouts: get(Counter::Timeouts),
        releases: get(Counter::Releases),
        lost_leases: get(Counter::LostLeases),
        renewals: get(Counter::Renewals),
        reconnects: get(Counter::Reconnects),
        wait_p50_us: percentile(&counts, 0.50).min(max),
        wait_p99_us: percentile(&counts, 0.99).min(max),
        wait_max_us: max,
    }
}

/// The bucket of a value in µs.
fn bucket(us: u64) -> usize {
    if us < SUB {
        return us as usize;
    }
    let power = 63 - us.leading_zeros(); // >= SUB_BITS
    let sub = (us >> (power - SUB_BITS)) & (SUB - 1);
    (SUB + u64::from(power - SUB_BITS) * SUB + sub) as usize
}

/// The highest value of a bucket.
fn bucket_top(index: usize) -> u64 {
    let index = index as u64;
    if index < SUB {
        return index;
    }
    let power = (index - SUB) / SUB + u64::from(SUB_BITS);
    let sub = (index - SUB) % SUB;
    let low = (1u64 << power) + (sub << (power - u64::from(SUB_BITS)));
    low + ((1u64 << (power - u64::from(SUB_BITS))) - 1)
}

/// The value below which `q` of the recorded values lie (the top of the
/// bucket holding that rank), 0 when nothing was recorded.
fn percentile(counts: &[u64], q: f64) -> u64 {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return 0;
    }
    let rank = ((total as f64 * q).ceil() as u64).max(1);
    let mut seen = 0;
    for (i, n) in counts.iter().enumerate() {
        seen += n;
        if seen >= rank {
            return bucket_top(i);
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_exact_below_sixteen_and_within_a_sixteenth_above() {
        for us in 0..16 {
            assert_eq!(bucket_top(bucket(us)), us);
        }
        for us in [
            16,
            17,
            100,
            1_000,
            12_345,
            1_000_000,
            u64::MAX / 3,
            u64::MAX,
        ] {
            let top = bucket_top(bucket(us));
            assert!(top >= us, "{us}: top {top}");
            assert!((top - us) as f64 <= us as f64 / 16.0, "{us}: top {top}");
        }
        assert!(bucket(u64::MAX) < BUCKETS);
    }

    #[test]
    fn percentiles_come_from_the_histogram() {
        let mut counts = vec![0; BUCKETS];
        for us in 1..=100u64 {
            counts[bucket(us * 10)] += 1;
        }
        let p50 = percentile(&counts, 0.5);
        let p99 = percentile(&counts, 0.99);
        assert!((500..=532).contains(&p50), "{p50}");
        assert!((990..=1_023).contains(&p99), "{p99}");
        assert_eq!(percentile(&vec![0; BUCKETS], 0.5), 0);
    }
}
