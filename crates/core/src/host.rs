//! What the core asks of its host (the PHP binding), in one place: which
//! execution context a call runs in (on PHP, the Fiber), whether a blocking
//! wait must end (PHP's signal handlers threw or called `exit()`, or the
//! time limit was hit), and what to do when the renewal thread finds a
//! lease lost (`on_lost => "interrupt"`). The host installs them once at
//! startup; without a host (pure-Rust callers, tests) every call runs in
//! context 0, no wait is ended early and a lost lease is only recorded.

use std::sync::OnceLock;

/// The hooks a host installs.
#[derive(Debug, Clone, Copy)]
pub struct Host {
    /// Names the current execution context (0: the main flow). Holds
    /// belong to the context that took them.
    pub context: fn() -> u64,
    /// Asked on the calling thread after a signal and every 100 ms of a
    /// blocking wait: true ends the wait.
    pub wait_should_end: fn() -> bool,
    /// Called on the renewal thread when a lease with `on_lost =>
    /// "interrupt"` is found lost.
    pub lease_lost: fn(),
}

static HOST: OnceLock<Host> = OnceLock::new();

/// Installs the host's hooks (module startup; the first call wins).
pub fn install(host: Host) {
    let _ = HOST.set(host);
}

/// The current execution context (0 without a host).
pub fn context() -> u64 {
    HOST.get().map_or(0, |h| (h.context)())
}

/// Whether the blocking wait in progress must end (false without a host).
pub fn wait_should_end() -> bool {
    HOST.get().is_some_and(|h| (h.wait_should_end)())
}

/// Tells the host that an interrupt-enabled lease was lost.
pub fn lease_lost() {
    if let Some(h) = HOST.get() {
        (h.lease_lost)();
    }
}
