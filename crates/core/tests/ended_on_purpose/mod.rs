//! Shared by the tests of a hold ended on purpose (`release()`,
//! `forceRelease()`) while a renewal round is on its way: that round's
//! "not ours any more" reply must count no lost lease (`stats()`
//! `lost_leases`) and raise no lost-lease hook (`on_lost => 'interrupt'`).
//!
//! How the tests catch the round on its way: the renewal thread opens a
//! connection of its own for its first round, through a proxy that holds
//! every reply back. With db 1 in the URL that connection's `SELECT` must
//! be answered before the refresh goes out, so once the proxy has accepted
//! it, the round is on its way and its refresh is not sent yet: a hold
//! ended then is ended before the refresh reaches the server.
//!
//! The counters are per process: one such test per program.

use std::sync::atomic::{AtomicU32, Ordering};

use redislock_core::host::{self, Host};
use redislock_core::{LockOptions, OptionValue};

static LOST_HOOK_CALLS: AtomicU32 = AtomicU32::new(0);

fn count_lost_hook() {
    LOST_HOOK_CALLS.fetch_add(1, Ordering::Relaxed);
}

/// Installs a host whose lost-lease hook counts its calls
/// ([`lost_hook_calls`]); the first install of a program wins.
pub fn install_counting_host() {
    host::install(Host {
        context: || 0,
        wait_should_end: || false,
        time_limit_hit: || false,
        lease_lost: count_lost_hook,
    });
}

/// How many times the renewal thread raised the lost-lease hook.
pub fn lost_hook_calls() -> u32 {
    LOST_HOOK_CALLS.load(Ordering::Relaxed)
}

/// Options of an auto-renewed lock that raises the lost-lease hook.
pub fn renewed_with_hook() -> LockOptions {
    let mut options = LockOptions::default();
    options.set("auto_renew", OptionValue::Bool(true)).unwrap();
    options
        .set("on_lost", OptionValue::Text(b"interrupt".to_vec()))
        .unwrap();
    options
}
