//! The servers this process found able to lose a held lock by themselves
//! (option `unsafe_server => "warn"`): each server and reason once, for
//! `stats()`, `metrics()` and `phpinfo()`. Per process (a PHP-FPM worker
//! finds them at its first acquire on the server), not pool-wide.

use std::sync::{Mutex, MutexGuard};

use crate::process::PerProcess;

/// One server found unsafe, for one reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsafeServer {
    /// The server as messages show it (no password).
    pub server: String,
    /// A short name of the reason (`eviction`, `no_aof`).
    pub reason: &'static str,
    /// What it does to a lock, and the fix.
    pub detail: String,
}

static FOUND: PerProcess<Mutex<Vec<UnsafeServer>>> = PerProcess::new(|| Mutex::new(Vec::new()));

fn found() -> MutexGuard<'static, Vec<UnsafeServer>> {
    FOUND.get().lock().unwrap_or_else(|p| p.into_inner())
}

/// Records that `server` can lose a held lock for `reason` (once); true
/// when it was not known yet.
pub fn record(server: String, reason: &'static str, detail: String) -> bool {
    let mut found = found();
    if found
        .iter()
        .any(|u| u.server == server && u.reason == reason)
    {
        return false;
    }
    found.push(UnsafeServer {
        server,
        reason,
        detail,
    });
    true
}

/// Every server found unsafe so far, in the order found.
pub fn list() -> Vec<UnsafeServer> {
    found().clone()
}
