//! Pauses between attempts of a blocked acquire: capped exponential backoff
//! with jitter, never sleeping past a deadline.

use std::time::{Duration, Instant};

/// The first pause.
pub const INITIAL_DELAY: Duration = Duration::from_millis(2);

/// Capped exponential backoff with "equal jitter": each pause is drawn
/// uniformly from the upper half of the current step, so waiters that
/// started together spread out but nobody waits much less than the step.
#[derive(Debug, Clone)]
pub struct Backoff {
    step: Duration,
    cap: Duration,
}

impl Backoff {
    /// Starts at [`INITIAL_DELAY`] (or `cap`, if smaller) and doubles up to `cap`.
    pub fn new(cap: Duration) -> Self {
        Self {
            step: INITIAL_DELAY.min(cap),
            cap,
        }
    }

    /// The next pause, at most the time left until `deadline`.
    pub fn next_delay(&mut self, now: Instant, deadline: Instant) -> Duration {
        let step = self.step;
        self.step = (step * 2).min(self.cap);
        let half = step / 2;
        let jitter = half.mul_f64(unit_random());
        (half + jitter).min(deadline.saturating_duration_since(now))
    }
}

/// A number in [0, 1) from the OS generator (0.5 if it fails).
fn unit_random() -> f64 {
    getrandom::u64().map_or(0.5, |r| (r >> 11) as f64 / (1u64 << 53) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_to_the_cap_with_jitter_in_upper_half() {
        let cap = Duration::from_millis(50);
        let mut b = Backoff::new(cap);
        let now = Instant::now();
        let far = now + Duration::from_secs(60);
        let mut step = INITIAL_DELAY;
        for _ in 0..10 {
            let d = b.next_delay(now, far);
            assert!(d >= step / 2 && d <= step, "{d:?} for step {step:?}");
            step = (step * 2).min(cap);
        }
        assert_eq!(b.step, cap);
    }

    #[test]
    fn never_sleeps_past_the_deadline() {
        let mut b = Backoff::new(Duration::from_secs(1));
        let now = Instant::now();
        for _ in 0..20 {
            assert!(b.next_delay(now, now + Duration::from_millis(3)) <= Duration::from_millis(3));
        }
        assert_eq!(b.next_delay(now, now), Duration::ZERO);
    }
}
