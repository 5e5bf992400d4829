//! The clock of one blocked acquire, the same for every way of waiting (a
//! queue where one server decides, a Redlock quorum, the poll of a server
//! without scripts): when the wait ends, whether it is over (its end has
//! passed, or PHP's time limit says so), and how long the next block may
//! last.

use std::time::{Duration, Instant};

use crate::host;

/// Margin added to the holder's remaining lease, so the step after an
/// expiry finds the key gone.
pub(crate) const EXPIRY_MARGIN: Duration = Duration::from_millis(2);

/// When a wait ends, and what bounds its blocks.
pub(crate) struct Deadline {
    wait: Duration,
    end: Instant,
    retry_delay: Duration,
}

impl Deadline {
    /// A wait of `wait` from now, each block at most `retry_delay` (the
    /// option).
    pub(crate) fn new(wait: Duration, retry_delay: Duration) -> Self {
        Self {
            wait,
            end: Instant::now() + wait,
            retry_delay,
        }
    }

    /// Whether it waits at all (`wait` 0 is one try).
    pub(crate) fn waits(&self) -> bool {
        !self.wait.is_zero()
    }

    /// When the wait ends.
    pub(crate) fn end(&self) -> Instant {
        self.end
    }

    /// The time left (zero once the end has passed).
    pub(crate) fn left(&self) -> Duration {
        self.end.saturating_duration_since(Instant::now())
    }

    /// Whether the end has passed.
    pub(crate) fn passed(&self) -> bool {
        Instant::now() >= self.end
    }

    /// Whether the wait is over: the end has passed, or PHP's time limit
    /// was hit ([`host::time_limit_hit`]).
    pub(crate) fn over(&self) -> bool {
        self.passed() || host::time_limit_hit()
    }

    /// The option `retry_delay`: the longest block.
    pub(crate) fn retry_delay(&self) -> Duration {
        self.retry_delay
    }
}

/// How long to block for a wake-up: until the wait ends (`remaining`), the
/// holder's lease ends (`holder_pttl_ms`; negative: unknown), or
/// `fallback` (option `retry_delay`) passes, whichever comes first; 1 ms
/// at least.
pub(crate) fn block_time(remaining: Duration, holder_pttl_ms: i64, fallback: Duration) -> Duration {
    let lease = match u64::try_from(holder_pttl_ms) {
        Ok(ms) => Duration::from_millis(ms) + EXPIRY_MARGIN,
        // No expiry (-1) or no key (-2, it vanished just now): the fallback
        // bounds the wait, a step sorts it out.
        Err(_) => fallback,
    };
    remaining
        .min(lease)
        .min(fallback)
        .max(Duration::from_millis(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_ends_with_the_wait_the_holders_lease_or_retry_delay() {
        let s = Duration::from_secs;
        let ms = Duration::from_millis;
        // The holder's lease, plus the margin.
        assert_eq!(block_time(s(5), 300, s(1)), ms(302));
        // retry_delay when shorter, or when the lease is unknown.
        assert_eq!(block_time(s(5), 3_000, s(1)), s(1));
        assert_eq!(block_time(s(5), -1, s(1)), s(1));
        assert_eq!(block_time(s(5), -2, s(1)), s(1));
        // The wait left when shorter; never under 1 ms.
        assert_eq!(block_time(ms(40), 300, s(1)), ms(40));
        assert_eq!(block_time(Duration::ZERO, 0, s(1)), ms(1));
    }

    #[test]
    fn a_wait_is_over_at_its_end() {
        // PHP's time limit: tests/waiting.rs, through a host.
        let wait = Deadline::new(Duration::from_secs(10), Duration::from_millis(500));
        assert!(!wait.over() && !wait.passed());
        assert!(wait.left() > Duration::from_secs(9));
        let ended = Deadline::new(Duration::ZERO, Duration::from_millis(500));
        assert!(ended.over() && ended.passed());
        assert_eq!(ended.left(), Duration::ZERO);
    }
}
