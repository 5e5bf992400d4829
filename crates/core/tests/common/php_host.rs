//! A host standing in for PHP (`redislock_core::host`) for the tests of
//! PHP ending a wait: per thread, a time limit that can be hit and a
//! "signal handler" that asks to end the wait from a given moment.
//! Otherwise the pure-Rust default (main flow, nothing done for a lost
//! lease), so the other tests of a program that installs it see no
//! difference.

use std::cell::Cell;
use std::time::{Duration, Instant};

thread_local! {
    static TIME_LIMIT_HIT: Cell<bool> = const { Cell::new(false) };
    static END_WAIT_AT: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Installs the host (the first install of the process wins; every test
/// of a program that uses this module installs this one).
pub fn install() {
    redislock_core::host::install(redislock_core::host::Host {
        context: || 0,
        wait_should_end: || END_WAIT_AT.with(|at| at.get().is_some_and(|t| Instant::now() >= t)),
        time_limit_hit: || TIME_LIMIT_HIT.with(Cell::get),
        lease_lost: || {},
    });
}

/// This thread's time limit: hit or not.
pub fn time_limit_hit(hit: bool) {
    TIME_LIMIT_HIT.with(|h| h.set(hit));
}

/// This thread's handler asks to end its wait from `after` from now on;
/// `None`: never.
pub fn end_wait_after(after: Option<Duration>) {
    END_WAIT_AT.with(|at| at.set(after.map(|d| Instant::now() + d)));
}
