//! One idle connection per server (and role) per process, reused across
//! calls and across PHP requests (like phpredis' `pconnect`).
//!
//! A connection is taken out of the pool for one exchange
//! ([`crate::net::exchange`]) and put back only when the exchange did not break
//! it. After a `fork()` the child never touches the parent's sockets: it
//! starts with an empty pool ([`PerProcess`]) and opens its own
//! connections.
//!
//! Servers are interned ([`crate::net::connection::intern`]), so the pool is
//! keyed by the address of the shared config: no hashing of URLs per call.

use std::sync::Arc;
use std::sync::{Mutex, MutexGuard};

use redis::ConnectionLike;

use crate::net::connection::ServerConfig;
use crate::net::wire::Conn;
use crate::process::PerProcess;

/// What a pooled connection is used for. Blocking waits (`BLPOP`) and the
/// renewal thread get their own connection per server, so neither holds up
/// the connection that the commands of other locks use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// Ordinary commands with the configured read timeout.
    Command,
    /// Blocking waits, with a read timeout set per call.
    Blocking,
    /// The lease renewal thread.
    Renewal,
}

/// (address of the interned server config, role).
type PoolKey = (usize, Role);

/// Idle connections of this process. A forked child starts with an empty
/// pool: the parent's sockets are left alone (never closed or written by
/// the child: a TLS close_notify would corrupt the parent's session).
static POOL: PerProcess<Mutex<Vec<(PoolKey, Conn)>>> = PerProcess::new(|| Mutex::new(Vec::new()));

fn idle() -> MutexGuard<'static, Vec<(PoolKey, Conn)>> {
    guard(POOL.get())
}

fn guard(pool: &Mutex<Vec<(PoolKey, Conn)>>) -> MutexGuard<'_, Vec<(PoolKey, Conn)>> {
    pool.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn key(server: &Arc<ServerConfig>, role: Role) -> PoolKey {
    (Arc::as_ptr(server) as usize, role)
}

/// Takes the idle connection to `server` for `role` out of the pool, if
/// there is one that is still open.
pub fn take(server: &Arc<ServerConfig>, role: Role) -> Option<Conn> {
    let key = key(server, role);
    let mut idle = idle();
    let pos = idle.iter().position(|(k, _)| *k == key)?;
    Some(idle.swap_remove(pos).1).filter(|c| c.is_open())
}

/// Returns a connection that is in step with its server to the pool.
pub fn put_back(server: &Arc<ServerConfig>, role: Role, con: Conn) {
    if con.is_open() {
        idle().push((key(server, role), con));
    }
}

/// Closes every pooled connection of this process (module shutdown).
pub fn close_all() {
    // Builds nothing in a process that never connected (a php-fpm master).
    if let Some(pool) = POOL.built() {
        drop(std::mem::take(&mut *guard(pool)));
    }
}

/// Number of idle pooled connections (for tests and phpinfo).
pub fn idle_count() -> usize {
    idle().len()
}
