//! `RedisLock::stats()` and the statistics table of `phpinfo()`: this
//! process's counters ([`redislock_core::stats`]).

use redislock_core::stats;

/// The counters by name, in the order shown.
pub fn rows() -> [(&'static str, u64); 11] {
    let s = stats::snapshot();
    [
        ("acquires", s.acquires),
        ("acquired", s.acquired),
        ("contended", s.contended),
        ("timeouts", s.timeouts),
        ("releases", s.releases),
        ("lost_leases", s.lost_leases),
        ("renewals", s.renewals),
        ("reconnects", s.reconnects),
        ("wait_p50_us", s.wait_p50_us),
        ("wait_p99_us", s.wait_p99_us),
        ("wait_max_us", s.wait_max_us),
    ]
}
