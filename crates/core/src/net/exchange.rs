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

use redis::ConnectionLike;
use std::time::{Duration, Instant};

use crate::error::{LockError, Result};
use crate::net::connection::ServerConfig;
use crate::net::pool::{self, Role};
use crate::net::wire::Conn;
use crate::protocol::call::{Attempt, Call};

/// How late Redis may answer a blocking command whose timeout ran out
/// (its timers run at `hz`, 10 per second by default).
const REDIS_TIMER_SLACK: Duration = Duration::from_millis(100);

/// How long after a blocking command's end its reply is awaited before
/// the server is asked to end it ([`exchange_blocking`]).
const UNBLOCK_SLACK: Duration = Duration::from_millis(3);

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
    let calls: Vec<Call<T>> = (0..servers.len())
        .map(|i| build(i, Attempt::First))
        .collect();
    let by: Vec<Option<Instant>> = calls.iter().map(connect_by).collect();
    let mut slots = connect_all(servers, role, &by);
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
    let call = build(Attempt::First);
    let slot = match pool::take(server, role) {
        Some(con) => Slot { con, reused: true },
        None => Slot {
            con: server.open_by(connect_by(&call))?,
            reused: false,
        },
    };
    match exchange(server, role, slot, &call) {
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
    let outcome = match call.block {
        Some(block) => exchange_blocking(server, &mut s.con, call, block),
        None => {
            let until = prepare(&mut s.con, call, server);
            s.con
                .send(&call.packed())
                .and_then(|()| s.con.receive(call.reply_count(), until))
                .and_then(|replies| call.finish(&mut s.con, replies))
        }
    };
    settle(server, role, s, outcome)
}

/// A call whose first command blocks on the server for up to `block`
/// (a waiter's `BLPOP`). Its replies are awaited until the block's end,
/// whatever the resolution of the server's timers (Redis answers a
/// `BLPOP` timeout at its next timer tick: 100 ms late at `hz 10`). Still
/// blocked then, the server is asked from another connection to end it
/// at once (`CLIENT UNBLOCK id TIMEOUT`: it answers as a timeout, and the
/// commands behind it run), and the replies are read with the read
/// timeout. A server that refuses `CLIENT ID` or `CLIENT UNBLOCK` is
/// waited for as long as its timers take; one that only left such a
/// request unanswered (paused, a dropped connection) is asked again at
/// the next block's end.
fn exchange_blocking<T>(
    server: &Arc<ServerConfig>,
    con: &mut Conn,
    call: &Call<T>,
    block: Duration,
) -> redis::RedisResult<T> {
    if con.client_id().is_none() && !server.unblock.get() {
        match con.req_packed_command(b"*2\r\n$6\r\nCLIENT\r\n$2\r\nID\r\n") {
            Ok(redis::Value::Int(id)) => con.set_client_id(id),
            Ok(_) => server.unblock.set(),
            Err(e) if is_refusal(&e) => server.unblock.set(),
            // No answer: it says nothing of what the server allows.
            Err(e) => return Err(e),
        }
    }
    WAIT_ENDED.with(|ended| ended.set(false));
    let count = call.reply_count();
    let mut replies = Vec::with_capacity(count);
    con.begin_wait(block + server.read_timeout + REDIS_TIMER_SLACK);
    con.send(&call.packed())?;
    let sent = Instant::now();
    let id = con.client_id().filter(|_| !server.unblock.get());
    let until = match id {
        Some(_) => sent + block + UNBLOCK_SLACK,
        None => sent + block + server.read_timeout + REDIS_TIMER_SLACK,
    };
    let mut received = Ok(());
    let ahead = call.replies_before_wait();
    if ahead > 0 {
        // The commands ahead of the wait answer at once. One that failed
        // (a script the server does not have yet) leaves the wait to block
        // for nothing, and the commands behind it to fail too: it is ended
        // at once, and the call sorts the failure out.
        received = con.receive_into(&mut replies, ahead, until, id.is_some());
        if received.is_ok()
            && replies
                .iter()
                .any(|r| matches!(r, redis::Value::ServerError(_)))
            && let Some(id) = id
            && unblock(server, id) == Unblocked::Refused
        {
            server.unblock.set();
        }
    }
    if received.is_ok() {
        // (Each read takes the wait's mode: the wait is still on.)
        con.begin_wait(until.saturating_duration_since(Instant::now()) + server.read_timeout);
        received = con.receive_into(&mut replies, count, until, id.is_some());
    }
    if let Err(e) = received {
        if con.stopped() {
            // PHP ends the wait: end the block at once, and read what the
            // commands behind it did, so the caller knows what it holds.
            if !id.is_some_and(|id| unblock(server, id) == Unblocked::Yes) {
                return Err(e);
            }
            let until = Instant::now() + server.read_timeout;
            con.receive_into(&mut replies, count, until, false)?;
            let value = call.finish(con, replies)?;
            WAIT_ENDED.with(|ended| ended.set(true));
            return Ok(value);
        }
        if !con.is_open() {
            return Err(e);
        }
        // Blocked past its end. Once the blocking command answered, the
        // rest follows at once.
        if replies.len() <= call.replies_before_wait()
            && let Some(id) = id
            && unblock(server, id) == Unblocked::Refused
        {
            server.unblock.set();
        }
        let until = Instant::now() + server.read_timeout + REDIS_TIMER_SLACK;
        con.receive_into(&mut replies, count, until, false)?;
    }
    call.finish(con, replies)
}

thread_local! {
    /// Set when PHP ended a blocking wait whose replies were read all the
    /// same ([`take_wait_ended`]).
    static WAIT_ENDED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// True (once) when the last blocking call on this thread answered after
/// PHP asked its wait to end (a signal handler threw or called `exit()`,
/// or the time limit): the call's result is what Redis did, and the
/// caller ends the wait.
pub fn take_wait_ended() -> bool {
    WAIT_ENDED.with(|ended| ended.replace(false))
}

/// What became of a request to end a blocking command ([`unblock`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unblocked {
    /// The server ran it.
    Yes,
    /// The server refused it (an ACL without `+client|unblock`, a proxy
    /// that knows no such command): it never will run it.
    Refused,
    /// No answer (a timeout, a dropped connection, none to be had): it
    /// says nothing of what the server allows.
    Unknown,
}

/// Ends the blocking command of the connection `id` on `server` as if it
/// timed out (`CLIENT UNBLOCK id TIMEOUT`), from a pooled command
/// connection.
fn unblock(server: &Arc<ServerConfig>, id: i64) -> Unblocked {
    let Some(mut con) = pool::take(server, Role::Command).or_else(|| server.open().ok()) else {
        return Unblocked::Unknown;
    };
    let id = id.to_string();
    let cmd =
        crate::protocol::command::Command::of(&[b"CLIENT", b"UNBLOCK", id.as_bytes(), b"TIMEOUT"]);
    match con.req_packed_command(cmd.bytes()) {
        Ok(redis::Value::Int(_)) => {
            pool::put_back(server, Role::Command, con);
            Unblocked::Yes
        }
        Ok(_) => {
            pool::put_back(server, Role::Command, con);
            Unblocked::Refused
        }
        // An error reply is a refusal, unless the server is only passing
        // through a state (loading, a failover); anything else left no
        // answer.
        Err(e) if is_refusal(&e) => {
            pool::put_back(server, Role::Command, con);
            Unblocked::Refused
        }
        Err(_) => Unblocked::Unknown,
    }
}

/// Whether `e` is the server's refusal of a command (an error reply that
/// will come again), not a passing state or a failure to get an answer.
fn is_refusal(e: &redis::RedisError) -> bool {
    use redis::{ErrorKind, ServerErrorKind};
    match e.kind() {
        ErrorKind::Server(kind) => !matches!(
            kind,
            ServerErrorKind::BusyLoading
                | ServerErrorKind::TryAgain
                | ServerErrorKind::ClusterDown
                | ServerErrorKind::MasterDown
        ),
        _ => false,
    }
}

/// The call once more on a fresh connection, after a pooled one dropped.
fn replay<T>(
    server: &Arc<ServerConfig>,
    role: Role,
    build: &dyn Fn(Attempt) -> Call<T>,
) -> Result<T> {
    let call = build(Attempt::Replay);
    let slot = Slot {
        con: server.open_by(connect_by(&call))?,
        reused: false,
    };
    exchange(server, role, slot, &call).map_err(|(_, e)| e)
}

/// When opening a connection for `call` is given up: a call whose replies
/// are due by a time of its own (a renewal round, bounded by the leases it
/// keeps) connects in the first half of what is left, so a server that
/// never answers (its packets dropped) cannot use up the round of the
/// servers that do, and a request sent then still has the other half for
/// its reply. Other calls wait the connect timeout.
fn connect_by<T>(call: &Call<T>) -> Option<Instant> {
    let now = Instant::now();
    call.until
        .map(|until| now + until.saturating_duration_since(now) / 2)
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
            // An ACL tightened since this process checked the server: the
            // next acquire checks again before it takes anything.
            if err.is_acl_refusal() {
                server.scripts.forget();
            }
            Err((s.reused, err))
        }
    }
}

type Connected = std::result::Result<Slot, (bool, LockError)>;

/// A connection to every server: pooled ones first; the missing ones are
/// opened in parallel when there are several.
fn connect_all(
    servers: &[Arc<ServerConfig>],
    role: Role,
    by: &[Option<Instant>],
) -> Vec<Connected> {
    let mut slots: Vec<Option<Connected>> = servers
        .iter()
        .map(|server| pool::take(server, role).map(|con| Ok(Slot { con, reused: true })))
        .collect();
    let missing: Vec<usize> = (0..servers.len()).filter(|&i| slots[i].is_none()).collect();
    let open = |i: usize| {
        servers[i]
            .open_by(by[i])
            .map(|con| Slot { con, reused: false })
    };
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
