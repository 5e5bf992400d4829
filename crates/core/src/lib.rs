//! The PHP-agnostic core of the `redislock` extension.
//!
//! Nothing here knows about PHP: the binding in the parent crate turns PHP
//! values into calls on [`Lock`] and [`LockError`]s into PHP exceptions, and
//! installs its [`host`] hooks. The layers, bottom up:
//!
//! - [`config`]: what callers pass in, validated (options, php.ini
//!   settings, durations, URLs, PHP's numeric strings)
//! - `protocol`: the lock protocol on one server as data (key names,
//!   scripts, each step as a call)
//! - `net`: connections, the per-process pool, sending a call to one or
//!   several servers at once
//! - `topology`: where a lock lives (one server, Redlock, Sentinel,
//!   Cluster) behind one seam, the only code that knows how many servers
//!   there are
//! - `process`: per-process state that a `fork()` replaces, signals
//! - [`stats`]: the lock statistics of this process and of its pool
//! - `lease`: the lease engine under every hold (a lock's write hold, its
//!   read holds, a semaphore's permits): the table of holds, what the
//!   process believes of each lease, the queue-wait loop, renewal, pending
//!   releases, request scope
//! - `lock`: one lock object ([`Lock`]) over a topology
//! - `semaphore`: N permits under one name ([`Semaphore`])
//! - [`host`]: what the core asks of the binding
//!
//! `protocol` and `topology` are private. What the core's own tests reach
//! inside them is a chosen list, `testing` (hidden from the docs): not an
//! API, and the binding does not use it.

#![warn(missing_docs)]

pub mod config;
pub mod error;
pub mod host;
mod lease;
mod lock;
mod net;
mod process;
mod protocol;
mod semaphore;
pub mod stats;
mod topology;

pub use config::options::{LockOptions, OnLost, OptionKind, OptionValue};
pub use error::{ConnectionFailure, LockError, Redirect, Result};
pub use lease::scope::release_all;
pub use lock::{
    Capability, Finding, HoldMode, Inspection, Lock, LockInfo, NodeCheckup, SemaphoreInspection,
    Severity, hold_lost,
};
pub use semaphore::{Semaphore, SemaphoreInfo};

/// What the core's own tests (`crates/core/tests/`) reach inside it, a
/// chosen list: the protocol's calls, keys, scripts and steps that they
/// send by hand, a semaphore's calls, and the Sentinel topology's parts.
/// Not an API: hidden from the docs, it may change in any release.
#[doc(hidden)]
pub mod testing {
    /// The lock protocol's parts that tests drive by hand.
    pub mod protocol {
        pub use crate::protocol::{call, keys, lock_calls, permitted, scripts, step, token};
    }
    pub use crate::protocol::semaphore as semaphore_calls;
    /// The topologies' parts that tests look at.
    pub mod topology {
        /// Sentinel's.
        pub mod sentinel {
            pub use crate::topology::sentinel::RECHECK;
        }
    }
}

/// The end of the module: stops the renewal thread, closes the pooled
/// connections and forgets the contention hints. Builds nothing in a
/// process that never took a lock.
pub fn shutdown() {
    lease::worker::shutdown();
    net::pool::close_all();
    lease::contended::forget_all();
}

/// Idle pooled connections of this process (for phpinfo).
pub fn idle_connections() -> usize {
    net::pool::idle_count()
}

/// Version of the core (and of the extension).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Ends the request scope by hand (`RedisLock::releaseAll()`): releases the
/// locks, read holds and permits that request end would (`auto_release`),
/// in every Fiber of the calling thread's request, and returns how many
/// were released in Redis (a lock held reentrantly counts once). Holds
/// with `auto_release => false` stay with their objects.
pub fn end_request_scope() -> usize {
    lease::scope::end_request_scope()
}
