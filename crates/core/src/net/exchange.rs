//! Running a [`Call`] on one or several servers at once.
//!
//! The request is written to every server's socket first, then the replies
//! are read against one deadline: the servers work in parallel, and a dead
//! or frozen server costs at most the read timeout, without a thread per
//! server. Connections come from the [`pool`]; a server without one gets a
//! new connection first (several are opened in parallel, on short-lived
//! threads that block every signal, so an unreachable server costs at most
//! the connect timeout whatever the number of servers).
//!
//! A pooled connection that turns out to be dead (the server restarted or
//! closed an idle client) is replaced and the call sent once more on that
//! server with [`Attempt::Replay`]: every call of the protocol is safe to
//! repeat.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{LockError, Result};
use crate::net::connection::ServerConfig;
use crate::net::pool::{self, Role};
use crate::net::wire::Conn;
use crate::protocol::call::{Attempt, Call};

/// How late Redis may answer a blocking command whose timeout ran out
/// (its timers run at `hz`, 10 per second by default).
const REDIS_TIMER_SLACK: Duration = Duration::from_millis(100);

/// A server's connection for this exchange, and whether it came from the
/// pool (then a dropped connection is worth one replay).
struct Slot {
    con: Conn,
    reused: bool,
}

/// Runs the call that `build` makes on every server of `servers` at once;
/// one result per server, in order.
pub fn run_all<T>(
    servers: &[Arc<ServerConfig>],
    role: Role,
    build: &dyn Fn(usize, Attempt) -> Call<T>,
) -> Vec<Result<T>> {
    let mut slots = connect_all(servers, role);
    let calls: Vec<Call<T>> = (0..servers.len())
        .map(|i| build(i, Attempt::First))
        .collect();
    // Send everything, then read everything against one deadline.
    let mut until: Option<Instant> = None;
    for ((slot, call), server) in slots.iter_mut().zip(&calls).zip(servers) {
        let sent = match slot {
            Ok(s) => {
                let due = prepare(&mut s.con, call, server);
                until = Some(until.map_or(due, |u| u.max(due)));
                s.con
                    .send(&call.packed())
                    .map_err(|e| (s.reused, LockError::from_redis(&server.name(), &e)))
            }
            Err(_) => Ok(()),
        };
        if let Err(failed) = sent {
            *slot = Err(failed);
        }
    }
    let until = until.unwrap_or_else(Instant::now);
    let mut results = Vec::with_capacity(servers.len());
    for (i, (slot, call)) in slots.into_iter().zip(&calls).enumerate() {
        let server = &servers[i];
        let result = match slot {
            Ok(mut s) => {
                let outcome = s
                    .con
                    .receive(call.reply_count(), until)
                    .and_then(|replies| call.finish(&mut s.con, replies));
                settle(server, role, s, outcome)
            }
            Err((reused, e)) => Err((reused, e)),
        };
        results.push(match result {
            Ok(value) => Ok(value),
            Err((true, e)) if e.is_retryable() => replay(server, role, &|a| build(i, a)),
            Err((_, e)) => Err(e),
        });
    }
    results
}

/// Runs one call on one server (the path of a single server: no vectors
/// of one).
pub fn run_one<T>(
    server: &Arc<ServerConfig>,
    role: Role,
    build: &dyn Fn(Attempt) -> Call<T>,
) -> Result<T> {
    let slot = match pool::take(server, role) {
        Some(con) => Slot { con, reused: true },
        None => Slot {
            con: server.open()?,
            reused: false,
        },
    };
    match exchange(server, role, slot, &build(Attempt::First)) {
        Ok(value) => Ok(value),
        Err((true, e)) if e.is_retryable() => replay(server, role, build),
        Err((_, e)) => Err(e),
    }
}

/// Sends `call` on `slot` and reads its replies.
fn exchange<T>(
    server: &Arc<ServerConfig>,
    role: Role,
    mut s: Slot,
    call: &Call<T>,
) -> std::result::Result<T, (bool, LockError)> {
    let until = prepare(&mut s.con, call, server);
    let outcome = s
        .con
        .send(&call.packed())
        .and_then(|()| s.con.receive(call.reply_count(), until))
        .and_then(|replies| call.finish(&mut s.con, replies));
    settle(server, role, s, outcome)
}

/// The call once more on a fresh connection, after a pooled one dropped.
fn replay<T>(
    server: &Arc<ServerConfig>,
    role: Role,
    build: &dyn Fn(Attempt) -> Call<T>,
) -> Result<T> {
    let slot = Slot {
        con: server.open()?,
        reused: false,
    };
    exchange(server, role, slot, &build(Attempt::Replay)).map_err(|(_, e)| e)
}

/// Readies `con` for `call` (a blocking call's reply is awaited for its
/// block plus the read timeout plus Redis's timer slack; PHP may end it
/// early) and returns when its replies are due (no later than the call's
/// own `until`).
fn prepare<T>(con: &mut Conn, call: &Call<T>, server: &ServerConfig) -> Instant {
    if let Some(block) = call.block {
        con.begin_wait(block + server.read_timeout + REDIS_TIMER_SLACK);
    }
    let due = con.reply_deadline();
    call.until.map_or(due, |until| until.min(due))
}

/// Classifies the outcome and puts the connection back unless it broke.
fn settle<T>(
    server: &Arc<ServerConfig>,
    role: Role,
    s: Slot,
    outcome: redis::RedisResult<T>,
) -> std::result::Result<T, (bool, LockError)> {
    match outcome {
        Ok(value) => {
            pool::put_back(server, role, s.con);
            Ok(value)
        }
        Err(e) => {
            let err = if s.con.stopped() {
                LockError::Interrupted
            } else {
                LockError::from_redis(&server.name(), &e)
            };
            if err.is_connection_error() {
                server.broken.add();
            } else if !matches!(err, LockError::Interrupted) {
                pool::put_back(server, role, s.con);
            }
            Err((s.reused, err))
        }
    }
}

type Connected = std::result::Result<Slot, (bool, LockError)>;

/// A connection to every server: pooled ones first; the missing ones are
/// opened in parallel when there are several.
fn connect_all(servers: &[Arc<ServerConfig>], role: Role) -> Vec<Connected> {
    let mut slots: Vec<Option<Connected>> = servers
        .iter()
        .map(|server| pool::take(server, role).map(|con| Ok(Slot { con, reused: true })))
        .collect();
    let missing: Vec<usize> = (0..servers.len()).filter(|&i| slots[i].is_none()).collect();
    let open = |i: usize| servers[i].open().map(|con| Slot { con, reused: false });
    if missing.len() == 1 {
        slots[missing[0]] = Some(open(missing[0]).map_err(|e| (false, e)));
    } else if missing.len() > 1 {
        let opened: Vec<(usize, Result<Slot>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = missing
                .iter()
                .map(|&i| {
                    let spawned = std::thread::Builder::new()
                        .name("redislock-connect".into())
                        .spawn_scoped(scope, move || {
                            crate::process::signals::block_all_in_this_thread();
                            open(i)
                        });
                    (i, spawned)
                })
                .collect();
            handles
                .into_iter()
                .map(|(i, spawned)| {
                    let result = match spawned {
                        Ok(handle) => handle.join().unwrap_or_else(|_| {
                            Err(LockError::Internal("opening a connection failed".into()))
                        }),
                        // No thread to spare: open it here.
                        Err(_) => open(i),
                    };
                    (i, result)
                })
                .collect()
        });
        for (i, result) in opened {
            slots[i] = Some(result.map_err(|e| (false, e)));
        }
    }
    slots
        .into_iter()
        .map(|s| s.unwrap_or_else(|| Err((false, LockError::Internal("no connection".into())))))
        .collect()
}
