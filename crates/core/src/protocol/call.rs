//! One step of the lock protocol on one server, as data: the commands to
//! send and how to read their replies. Keeping the request apart from the
//! connection lets a topology send it to several servers at once and read
//! the replies afterwards (`crate::net::exchange`), or run it on any
//! `ConnectionLike` ([`Call::query`]).

use std::borrow::Cow;
use std::time::Duration;

use redis::{ConnectionLike, RedisResult, Value};

use crate::error::NOT_REPLICATED;
use crate::protocol::command::{Arg, Command};
use crate::protocol::scripts;

/// The commands of a call: one (most calls: no vector for it) or several.
enum Commands {
    One(Command),
    Many(Vec<Command>),
}

impl Commands {
    fn as_slice(&self) -> &[Command] {
        match self {
            Self::One(cmd) => std::slice::from_ref(cmd),
            Self::Many(cmds) => cmds,
        }
    }
}

/// Which try of a call this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempt {
    /// The first try.
    First,
    /// The second try, on a new connection, after the first one's connection
    /// dropped without a reply: the first command may or may not have run.
    Replay,
}

/// Most times a call that did only part of its work is sent again
/// ([`Call::until_done`]): each drops 64 departed waiters, so this is
/// millions of them; a script that never says it is done (a bug) cannot
/// hold a caller forever.
const MAX_AGAIN: u32 = 100_000;

/// Commands for one server and the parser of their replies.
pub struct Call<T> {
    /// Sent together in one write; one reply each.
    cmds: Commands,
    /// For a blocking command: how long the server may block. The reply is
    /// then awaited that long plus the read timeout, and PHP may end the
    /// wait early.
    pub block: Option<Duration>,
    /// Turns the replies (one per command, in order) into the result.
    pub parse: fn(Vec<Value>) -> RedisResult<T>,
    /// Redis Cluster: send `ASKING` before every command (the slot is being
    /// migrated and its keys were asked for on the importing node).
    pub asking: bool,
    /// Option `replicas`: a `WAIT` after the commands, and when its count
    /// must be reached ([`Call::acknowledged`]).
    pub ack: Option<Ack<T>>,
    /// A reply not read by then counts as timed out, even within the read
    /// timeout ([`Call::within`]).
    pub until: Option<std::time::Instant>,
    /// Replies of leading commands that only block ([`Call::after_wake`]):
    /// not parsed, only checked for errors.
    pub skip: usize,
    /// The script may do only part of its work ([`Call::until_done`]).
    pub again: bool,
    /// For a blocking call: the commands before the blocking one
    /// ([`Call::blocking_after`]).
    pub ahead: usize,
}

/// How many replicas must acknowledge a call's writes (`WAIT`), and for
/// which results: an acquire that did not win needs no acknowledgement.
pub struct Ack<T> {
    /// Replicas that must acknowledge.
    pub replicas: u32,
    /// `WAIT`'s own timeout.
    pub timeout: Duration,
    /// True for a result that counts only once acknowledged.
    pub needed: fn(&T) -> bool,
}

impl<T> Call<T> {
    /// A call of `cmds` whose replies `parse` reads.
    pub fn new(mut cmds: Vec<Command>, parse: fn(Vec<Value>) -> RedisResult<T>) -> Self {
        let cmds = match cmds.len() {
            1 => Commands::One(cmds.remove(0)),
            _ => Commands::Many(cmds),
        };
        Self {
            cmds,
            block: None,
            parse,
            asking: false,
            ack: None,
            until: None,
            skip: 0,
            again: false,
            ahead: 0,
        }
    }

    /// The call with its replies due by `until` at the latest (the renewal
    /// of a lease: a server that answers later cannot help keep it).
    pub fn within(mut self, until: std::time::Instant) -> Self {
        self.until = Some(until);
        self
    }

    /// A call of one command whose reply `parse` reads.
    pub fn one(cmd: Command, parse: fn(Vec<Value>) -> RedisResult<T>) -> Self {
        Self {
            cmds: Commands::One(cmd),
            block: None,
            parse,
            asking: false,
            ack: None,
            until: None,
            skip: 0,
            again: false,
            ahead: 0,
        }
    }

    /// A call of one script that answers a number with its bit 2 set when
    /// it did only part of its work (it looked at as many departed waiters
    /// as one call may and others wait behind them): it is sent again, on
    /// the same connection, until it says it is done. Its result is read
    /// from the first reply (bit 1: what the first call found).
    pub fn until_done(mut self) -> Self {
        self.again = true;
        self
    }

    /// The commands, in order.
    pub fn commands(&self) -> &[Command] {
        self.cmds.as_slice()
    }

    /// A call whose first command blocks on the server for up to `block`.
    pub fn blocking(
        block: Duration,
        cmds: Vec<Command>,
        parse: fn(Vec<Value>) -> RedisResult<T>,
    ) -> Self {
        Self::blocking_after(0, block, cmds, parse)
    }

    /// `call` sent behind a blocking `wait` command (a waiter's `BLPOP` on
    /// its wake-up list, which blocks up to `block`) in one request: Redis
    /// runs it as soon as the wait ends, woken or timed out, even while
    /// this process is paused. The result is `call`'s; the wait's reply is
    /// only checked for errors.
    pub fn after_wake(wait: Command, block: Duration, call: Call<T>) -> Self {
        let mut cmds = vec![wait];
        cmds.extend_from_slice(call.commands());
        Self {
            block: Some(block),
            skip: 1,
            ..Self::new(cmds, call.parse)
        }
        .with_ack(call.ack)
    }

    /// A call whose command at index `ahead` blocks on the server for up
    /// to `block`, with the commands before it answered at once; `parse`
    /// reads every reply (errors included).
    pub fn blocking_after(
        ahead: usize,
        block: Duration,
        cmds: Vec<Command>,
        parse: fn(Vec<Value>) -> RedisResult<T>,
    ) -> Self {
        Self {
            block: Some(block),
            ahead,
            ..Self::new(cmds, parse)
        }
    }

    /// How many replies come before the blocking command's (the commands
    /// before it, [`Call::blocking_after`], and their `ASKING` replies):
    /// while no more have come, it still blocks.
    pub fn replies_before_wait(&self) -> usize {
        let before = self.ahead;
        match self.asking {
            true => 2 * before + 1,
            false => before,
        }
    }

    fn with_ack(mut self, ack: Option<Ack<T>>) -> Self {
        self.ack = ack;
        self
    }

    /// The call followed by `WAIT replicas timeout` in the same request:
    /// a result that `needed` accepts fails with
    /// [`NOT_REPLICATED`] when fewer replicas acknowledged.
    pub fn acknowledged(
        mut self,
        replicas: u32,
        timeout: Duration,
        needed: fn(&T) -> bool,
    ) -> Self {
        self.ack = Some(Ack {
            replicas,
            timeout,
            needed,
        });
        self
    }

    /// The commands packed into one request: the one command itself when
    /// that is all (no copy), else all of them (with `ASKING` before each
    /// and `WAIT` after them when the call asks for those).
    pub fn packed(&self) -> Cow<'_, [u8]> {
        if let [only] = self.commands()
            && !self.asking
            && self.ack.is_none()
        {
            return Cow::Borrowed(only.bytes());
        }
        let mut out = Vec::new();
        for cmd in self.commands() {
            self.pack(cmd, &mut out);
        }
        if let Some(wait) = self.wait_cmd() {
            self.pack(&wait, &mut out);
        }
        Cow::Owned(out)
    }

    /// How many replies the request gets (one per command and `WAIT`, one
    /// more per `ASKING`).
    pub fn reply_count(&self) -> usize {
        (self.commands().len() + usize::from(self.ack.is_some())) * if self.asking { 2 } else { 1 }
    }

    fn wait_cmd(&self) -> Option<Command> {
        let ack = self.ack.as_ref()?;
        Some(Command::new([
            Arg::from("WAIT"),
            Arg::Int(u64::from(ack.replicas)),
            Arg::Int(ack.timeout.as_millis().max(1) as u64),
        ]))
    }

    fn pack(&self, cmd: &Command, out: &mut Vec<u8>) {
        if self.asking {
            out.extend_from_slice(b"*1\r\n$6\r\nASKING\r\n");
        }
        out.extend_from_slice(cmd.bytes());
    }

    /// Runs the call on one connection (one round trip, plus a script load
    /// after NOSCRIPT).
    pub fn query(&self, con: &mut dyn ConnectionLike) -> RedisResult<T> {
        let replies = con.req_packed_commands(&self.packed(), 0, self.reply_count())?;
        self.finish(con, replies)
    }

    /// Parses `replies`, first re-running every command that a server
    /// without our scripts answered with NOSCRIPT (after loading them all).
    ///
    /// A Redis Cluster reply that says the command did not run here (`MOVED`,
    /// `ASK`, `TRYAGAIN`, `CLUSTERDOWN`, `MASTERDOWN`) is returned as the
    /// error, whatever the other replies were: the topology routes the
    /// call again.
    pub fn finish(&self, con: &mut dyn ConnectionLike, replies: Vec<Value>) -> RedisResult<T> {
        let mut replies = self.without_asking(replies)?;
        let mut acks = match self.ack {
            Some(_) => replies.pop(),
            None => None,
        };
        if let Some(redirect) = replies.iter().find_map(cluster_redirect) {
            return Err(redirect);
        }
        let mut loaded = false;
        for (i, reply) in replies.iter_mut().enumerate() {
            if is_noscript(reply) {
                if !loaded {
                    scripts::load_all(con)?;
                    loaded = true;
                }
                *reply = self.send_again(con, &self.commands()[i])?;
            }
        }
        if loaded && let Some(wait) = self.wait_cmd() {
            // The first WAIT counted acknowledgements of nothing.
            acks = Some(self.send_again(con, &wait)?);
        }
        if self.again {
            let partly = |reply: Option<&Value>| matches!(reply, Some(Value::Int(n)) if n & 2 != 0);
            let mut more = partly(replies.first());
            let mut calls = 0;
            while more && calls < MAX_AGAIN {
                more = partly(Some(&self.send_again(con, &self.commands()[0])?));
                calls += 1;
            }
        }
        for reply in replies.drain(..self.skip.min(replies.len())) {
            reply.extract_error()?;
        }
        let value = (self.parse)(replies)?;
        match (&self.ack, acks) {
            (Some(ack), Some(acks)) if (ack.needed)(&value) => {
                // A server that refuses WAIT (renamed, a proxy, a managed
                // plan) confirms no replica: the write counts as not
                // replicated, so the caller undoes it.
                let acks = acks.extract_error().map_err(|refused| {
                    redis::make_extension_error(
                        NOT_REPLICATED.into(),
                        Some(format!(
                            "the server refused WAIT ({refused}), so no replica can be confirmed"
                        )),
                    )
                })?;
                let acked: i64 = redis::from_redis_value(acks)?;
                if acked < i64::from(ack.replicas) {
                    return Err(redis::make_extension_error(
                        NOT_REPLICATED.into(),
                        Some(format!(
                            "only {acked} of {} replicas acknowledged within {} ms",
                            ack.replicas,
                            ack.timeout.as_millis()
                        )),
                    ));
                }
                Ok(value)
            }
            _ => Ok(value),
        }
    }

    /// Sends one command of the call again, alone (with `ASKING` if the
    /// call has it).
    fn send_again(&self, con: &mut dyn ConnectionLike, cmd: &Command) -> RedisResult<Value> {
        let mut again = Vec::new();
        self.pack(cmd, &mut again);
        let offset = usize::from(self.asking);
        Ok(con
            .req_packed_commands(&again, offset, 1)?
            .pop()
            .unwrap_or(Value::Nil))
    }

    /// The replies of the commands, without those of `ASKING` (an error
    /// there is the call's error).
    fn without_asking(&self, replies: Vec<Value>) -> RedisResult<Vec<Value>> {
        if !self.asking {
            return Ok(replies);
        }
        let mut out = Vec::with_capacity(replies.len() / 2);
        for (i, reply) in replies.into_iter().enumerate() {
            if i % 2 == 0 {
                reply.extract_error()?;
            } else {
                out.push(reply);
            }
        }
        Ok(out)
    }
}

impl<T> std::fmt::Debug for Call<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Call")
            .field("commands", &self.commands().len())
            .field("block", &self.block)
            .finish_non_exhaustive()
    }
}

/// The error of a Redis Cluster reply that routes the call elsewhere.
fn cluster_redirect(reply: &Value) -> Option<redis::RedisError> {
    use redis::ServerErrorKind::{Ask, ClusterDown, MasterDown, Moved, TryAgain};
    match reply {
        Value::ServerError(e)
            if matches!(
                e.kind(),
                Some(Moved | Ask | TryAgain | ClusterDown | MasterDown)
            ) =>
        {
            Some(e.clone().into())
        }
        _ => None,
    }
}

fn is_noscript(reply: &Value) -> bool {
    matches!(reply, Value::ServerError(e) if e.kind() == Some(redis::ServerErrorKind::NoScript))
}
