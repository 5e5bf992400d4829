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
use std::time::Duration;

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

/// What a pooled connection is used for. Blocking waits (`BLPOP`) get their
/// own connection per server, so a waiter never holds up the connection that
/// commands of other locks use (or, later, a renewal thread).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// Ordinary commands with the configured read timeout.
    Command,
    /// Blocking waits, with a read timeout set per call.
    Blocking,
    /// The lease renewal thread.
    Renewal,
}

type PoolKey = (ServerConfig, Role);

struct Pool {
    pid: u32,
    idle: HashMap<PoolKey, Connection>,
}

static POOL: Mutex<Option<Pool>> = Mutex::new(None);

fn lock_pool() -> MutexGuard<'static, Option<Pool>> {
    POOL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Takes the idle connection for `server` out of the pool, if any, dropping
/// the whole pool first when it was inherited through `fork()`.
fn take(key: &PoolKey) -> Option<Connection> {
    let mut guard = lock_pool();
    let pid = std::process::id();
    match guard.as_mut() {
        Some(pool) if pool.pid == pid => pool.idle.remove(key),
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

fn put_back(key: PoolKey, con: Connection) {
    let mut guard = lock_pool();
    match guard.as_mut() {
        Some(pool) if pool.pid == std::process::id() => {
            pool.idle.insert(key, con);
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
    op: impl FnMut(&mut Connection, Attempt) -> redis::RedisResult<T>,
) -> Result<T> {
    with_role(server, Role::Command, op)
}

/// Like [`with_connection`], for one blocking command that may take up to
/// `block`: runs on the server's [`Role::Blocking`] connection with a read
/// timeout of `block` plus the configured read timeout.
pub fn with_blocking_connection<T>(
    server: &ServerConfig,
    block: Duration,
    mut op: impl FnMut(&mut Connection, Attempt) -> redis::RedisResult<T>,
) -> Result<T> {
    let read_timeout = block + server.read_timeout;
    with_role(server, Role::Blocking, |con, attempt| {
        con.set_read_timeout(Some(read_timeout))?;
        op(con, attempt)
    })
}

pub(crate) fn with_role<T>(
    server: &ServerConfig,
    role: Role,
    mut op: impl FnMut(&mut Connection, Attempt) -> redis::RedisResult<T>,
) -> Result<T> {
    let key = (server.clone(), role);
    let reused = take(&key).filter(|c| c.is_open());
    let was_reused = reused.is_some();
    let mut con = match reused {
        Some(con) => con,
        None => server.open()?,
    };
    match run(server, &mut con, &mut op, Attempt::First) {
        Ok(value) => {
            put_back(key, con);
            Ok(value)
        }
        Err(err) if err.is_retryable() && was_reused => {
            drop(con);
            let mut fresh = server.open()?;
            let value = run(server, &mut fresh, &mut op, Attempt::Replay)?;
            put_back(key, fresh);
            Ok(value)
        }
        Err(err) => {
            if !err.is_connection_error() {
                put_back(key, con);
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
