//! One connection per server (and role) per process, reused across calls
//! and across PHP requests (like phpredis' `pconnect`).
//!
//! A connection is taken out of the pool for the duration of one operation
//! and put back only when the operation did not break it. When a pooled
//! connection turns out to be dead, it is replaced and the operation runs
//! once more (every operation the core sends is written to be safe to
//! repeat; see [`Attempt`]). After a `fork()` the child never touches the
//! parent's sockets: it starts with an empty pool ([`PerProcess`]) and
//! opens its own connections.
//!
//! Servers are interned ([`crate::connection::intern`]), so the pool is
//! keyed by the address of the shared config: no hashing of URLs per call.

use std::sync::Arc;
use std::time::Duration;

use std::sync::{Mutex, MutexGuard};

use redis::ConnectionLike;

use crate::connection::ServerConfig;
use crate::error::{LockError, Result};
use crate::process::PerProcess;
use crate::wire::Conn;

/// Which try of an operation this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempt {
    /// The first try.
    First,
    /// The second try, on a new connection, after the first one's connection
    /// dropped without a reply: the first command may or may not have run.
    Replay,
}

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
pub(crate) static POOL: PerProcess<Mutex<Vec<(PoolKey, Conn)>>> =
    PerProcess::new(|| Mutex::new(Vec::new()));

fn idle() -> MutexGuard<'static, Vec<(PoolKey, Conn)>> {
    POOL.get()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn key(server: &Arc<ServerConfig>, role: Role) -> PoolKey {
    (Arc::as_ptr(server) as usize, role)
}

/// Takes the idle connection for `key` out of the pool, if any.
fn take(key: PoolKey) -> Option<Conn> {
    let mut idle = idle();
    let pos = idle.iter().position(|(k, _)| *k == key)?;
    Some(idle.swap_remove(pos).1)
}

fn put_back(key: PoolKey, con: Conn) {
    idle().push((key, con));
}

/// Runs `op` on a connection to `server`.
///
/// Errors from redis-rs are classified with [`LockError::from_redis`]. A
/// connection that saw a transport error is closed, never reused. When a
/// pooled connection turns out to be dead (the server restarted, closed an
/// idle client, ...), `op` is run once more on a fresh connection with
/// [`Attempt::Replay`].
pub fn with_connection<T>(
    server: &Arc<ServerConfig>,
    op: impl FnMut(&mut Conn, Attempt) -> redis::RedisResult<T>,
) -> Result<T> {
    with_role(server, Role::Command, op)
}

/// Like [`with_connection`], for one blocking request that may take up to
/// `block`: runs on the server's [`Role::Blocking`] connection, and its
/// reply is awaited for `block` plus the read timeout plus Redis's own
/// timer granularity (a blocked command's timeout fires up to 100 ms late).
/// PHP may end the wait early ([`crate::signals`]): that is
/// [`LockError::Interrupted`], and the connection is closed.
pub fn with_blocking_connection<T>(
    server: &Arc<ServerConfig>,
    block: Duration,
    mut op: impl FnMut(&mut Conn, Attempt) -> redis::RedisResult<T>,
) -> Result<T> {
    let total = block + server.read_timeout + REDIS_TIMER_SLACK;
    with_role(server, Role::Blocking, |con, attempt| {
        con.begin_wait(total);
        op(con, attempt)
    })
}

/// How late Redis may answer a blocking command whose timeout ran out
/// (its timers run at `hz`, 10 per second by default).
const REDIS_TIMER_SLACK: Duration = Duration::from_millis(100);

pub(crate) fn with_role<T>(
    server: &Arc<ServerConfig>,
    role: Role,
    mut op: impl FnMut(&mut Conn, Attempt) -> redis::RedisResult<T>,
) -> Result<T> {
    let key = key(server, role);
    let reused = take(key).filter(|c| c.is_open());
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
            if con.is_open() && !err.is_connection_error() {
                put_back(key, con);
            }
            Err(err)
        }
    }
}

fn run<T>(
    server: &ServerConfig,
    con: &mut Conn,
    op: &mut impl FnMut(&mut Conn, Attempt) -> redis::RedisResult<T>,
    attempt: Attempt,
) -> Result<T> {
    op(con, attempt).map_err(|e| {
        if con.stopped() {
            LockError::Interrupted
        } else {
            LockError::from_redis(&server.name(), &e)
        }
    })
}

/// Closes every pooled connection of this process (module shutdown).
pub fn close_all() {
    drop(std::mem::take(&mut *idle()));
}

/// Number of idle pooled connections (for tests and phpinfo).
pub fn idle_count() -> usize {
    idle().len()
}
