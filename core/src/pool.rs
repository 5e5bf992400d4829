//! One connection per server per process, reused across calls and across PHP
//! requests (like phpredis' `pconnect`).
//!
//! A connection is taken out of the pool for the duration of one operation
//! and put back only when the operation did not break it. A connection that
//! dropped under a reused connection is replaced and the operation is run
//! once more (every operation the core sends is written to be safe to
//! repeat; see [`Attempt`]). After a `fork()` the child never touches the
//! parent's sockets: the first use in a new process forgets every inherited
//! connection without closing or writing to it, and opens its own.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use redis::{Connection, ConnectionLike};

use crate::connection::ServerConfig;
use crate::error::{LockError, Result};

/// Which try of an operation this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempt {
    /// The first try.
    First,
    /// The second try, on a new connection, after the first one's connection
    /// dropped without a reply: the first command may or may not have run.
    Replay,
}

struct Pool {
    pid: u32,
    idle: HashMap<ServerConfig, Connection>,
}

static POOL: Mutex<Option<Pool>> = Mutex::new(None);

fn lock_pool() -> MutexGuard<'static, Option<Pool>> {
    POOL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Takes the idle connection for `server` out of the pool, if any, dropping
/// the whole pool first when it was inherited through `fork()`.
fn take(server: &ServerConfig) -> Option<Connection> {
    let mut guard = lock_pool();
    let pid = std::process::id();
    match guard.as_mut() {
        Some(pool) if pool.pid == pid => pool.idle.remove(server),
        _ => {
            if let Some(inherited) = guard.take() {
                // The parent still uses these sockets: closing them here is
                // harmless for plain TCP but a TLS close_notify would corrupt
                // the parent's session, so leak them instead.
                std::mem::forget(inherited.idle);
            }
            *guard = Some(Pool {
                pid,
                idle: HashMap::new(),
            });
            None
        }
    }
}

fn put_back(server: &ServerConfig, con: Connection) {
    let mut guard = lock_pool();
    match guard.as_mut() {
        Some(pool) if pool.pid == std::process::id() => {
            pool.idle.insert(server.clone(), con);
        }
        _ => std::mem::forget(con),
    }
}

/// Runs `op` on a connection to `server`.
///
/// Errors from redis-rs are classified with [`LockError::from_redis`]. A
/// connection that saw a transport error is closed, never reused. When a
/// pooled connection turns out to be dead (the server restarted, closed an
/// idle client, ...), `op` is run once more on a fresh connection with
/// [`Attempt::Replay`].
pub fn with_connection<T>(
    server: &ServerConfig,
    mut op: impl FnMut(&mut Connection, Attempt) -> redis::RedisResult<T>,
) -> Result<T> {
    let reused = take(server).filter(|c| c.is_open());
    let was_reused = reused.is_some();
    let mut con = match reused {
        Some(con) => con,
        None => server.open()?,
    };
    match run(server, &mut con, &mut op, Attempt::First) {
        Ok(value) => {
            put_back(server, con);
            Ok(value)
        }
        Err(err) if err.is_retryable() && was_reused => {
            drop(con);
            let mut fresh = server.open()?;
            let value = run(server, &mut fresh, &mut op, Attempt::Replay)?;
            put_back(server, fresh);
            Ok(value)
        }
        Err(err) => {
            if !err.is_connection_error() {
                put_back(server, con);
            }
            Err(err)
        }
    }
}

fn run<T>(
    server: &ServerConfig,
    con: &mut Connection,
    op: &mut impl FnMut(&mut Connection, Attempt) -> redis::RedisResult<T>,
    attempt: Attempt,
) -> Result<T> {
    op(con, attempt).map_err(|e| LockError::from_redis(&server.name(), &e))
}

/// Closes every pooled connection of this process (module shutdown).
/// Connections inherited from a parent process are forgotten, not closed.
pub fn close_all() {
    let mut guard = lock_pool();
    if let Some(pool) = guard.take() {
        if pool.pid == std::process::id() {
            drop(pool.idle);
        } else {
            std::mem::forget(pool.idle);
        }
    }
}

/// Number of idle pooled connections (for tests and phpinfo).
pub fn idle_count() -> usize {
    let guard = lock_pool();
    match guard.as_ref() {
        Some(pool) if pool.pid == std::process::id() => pool.idle.len(),
        _ => 0,
    }
}
