//! What the core asks of its host (the PHP binding), in one place: which
//! execution context a call runs in (on PHP, the Fiber of the request that
//! runs on this thread), whether a blocking
//! wait must end (PHP's signal handlers threw or called `exit()`, or the
//! time limit was hit), and what to do when the renewal thread finds a
//! lease lost (`on_lost => "interrupt"`). The host installs them once at
//! startup; without a host (pure-Rust callers, tests) every call runs in
//! the main flow (Fiber 0) of its thread, no wait is ended early and a lost
//! lease is only recorded.

use std::sync::OnceLock;

/// The calling thread's number: unique in the process for its life (a
/// thread that ends never passes its number on), 1 for the first thread
/// that asks. It names the request that runs there: PHP runs a request on
/// one thread from start to end (NTS PHP on the process's one PHP thread,
/// ZTS PHP on one of several at once).
pub fn thread() -> u64 {
    use std::cell::Cell;
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local!(static THREAD: Cell<u64> = const { Cell::new(0) });
    THREAD.with(|this| {
        if this.get() == 0 {
            this.set(NEXT.fetch_add(1, Ordering::Relaxed));
        }
        this.get()
    })
}

/// The hooks a host installs.
#[derive(Debug, Clone, Copy)]
pub struct Host {
    /// Names the Fiber running on the calling thread (0: the main flow),
    /// uniquely among the live Fibers of that thread. Holds belong to the
    /// Fiber that took them.
    pub context: fn() -> u64,
    /// Asked on the calling thread after a signal and every 100 ms of a
    /// blocking wait: true ends the wait.
    pub wait_should_end: fn() -> bool,
    /// Asked on the calling thread between the requests of a wait: true
    /// once PHP's execution time limit was hit (the wait gives up, as at
    /// its end, so the engine can raise its fatal error).
    pub time_limit_hit: fn() -> bool,
    /// Called on the renewal thread when a lease with `on_lost =>
    /// "interrupt"` is found lost.
    pub lease_lost: fn(),
}

static HOST: OnceLock<Host> = OnceLock::new();

/// Installs the host's hooks (module startup; the first call wins).
pub fn install(host: Host) {
    let _ = HOST.set(host);
}

/// The Fiber running on the calling thread (0 without a host). Fibers are
/// compared only within one thread's request (the holds tables and the
/// binding's interrupt registry keep one list per thread), so the main flow
/// (0) of two threads is never taken for one.
pub fn context() -> u64 {
    HOST.get().map_or(0, |h| (h.context)())
}

/// Whether the blocking wait in progress must end (false without a host).
pub fn wait_should_end() -> bool {
    HOST.get().is_some_and(|h| (h.wait_should_end)())
}

/// Whether PHP's time limit was hit (false without a host).
pub fn time_limit_hit() -> bool {
    HOST.get().is_some_and(|h| (h.time_limit_hit)())
}

/// Tells the host that an interrupt-enabled lease was lost.
pub fn lease_lost() {
    if let Some(h) = HOST.get() {
        (h.lease_lost)();
    }
}
