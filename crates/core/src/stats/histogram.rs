//! Wait times as a log-linear histogram: exact below 16 µs, then 16
//! buckets per power of two, so a percentile is within 1/16 (6.25 %) of
//! the true value.

/// Sub-buckets per power of two.
const SUB: u64 = 16;
const SUB_BITS: u32 = 4;
/// Buckets: 16 exact ones, then 16 per power of two from 2^4 to 2^63.
pub(super) const BUCKETS: usize = (SUB + (64 - SUB_BITS as u64) * SUB) as usize;

/// The bucket of a value in µs.
pub(super) fn bucket(us: u64) -> usize {
    if us < SUB {
        return us as usize;
    }
    let power = 63 - us.leading_zeros(); // >= SUB_BITS
    let sub = (us >> (power - SUB_BITS)) & (SUB - 1);
    (SUB + u64::from(power - SUB_BITS) * SUB + sub) as usize
}

/// The highest value of a bucket.
pub(super) fn bucket_top(index: usize) -> u64 {
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
pub(super) fn percentile(counts: &[u64], q: f64) -> u64 {
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

/// How many recorded values lie in buckets whose top is at most `us`
/// (a histogram's cumulative count at the bound `us`, within 1/16).
pub(super) fn count_at_most(counts: &[u64], us: u64) -> u64 {
    counts
        .iter()
        .enumerate()
        .take_while(|(i, _)| bucket_top(*i) <= us)
        .map(|(_, n)| n)
        .sum()
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

    #[test]
    fn cumulative_counts_follow_the_bucket_tops() {
        let mut counts = vec![0; BUCKETS];
        for us in [5, 100, 1_000, 10_000] {
            counts[bucket(us)] += 1;
        }
        assert_eq!(count_at_most(&counts, 4), 0);
        assert_eq!(count_at_most(&counts, 5), 1);
        assert_eq!(
            count_at_most(&counts, 1_000),
            2,
            "1,000 is in a bucket whose top is above it"
        );
        assert_eq!(count_at_most(&counts, bucket_top(bucket(1_000))), 3);
        assert_eq!(count_at_most(&counts, u64::MAX), 4);
    }
}
