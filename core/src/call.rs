//! One step of the lock protocol on one server, as data: the commands to
//! send and how to read their replies. Keeping the request apart from the
//! connection lets a topology send it to several servers at once and read
//! the replies afterwards ([`crate::exchange`]), or run it on any
//! `ConnectionLike` ([`Call::query`]).

use std::time::Duration;

use redis::{ConnectionLike, RedisResult, Value};

use crate::scripts;

/// Which try of a call this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempt {
    /// The first try.
    First,
    /// The second try, on a new connection, after the first one's connection
    /// dropped without a reply: the first command may or may not have run.
    Replay,
}

/// Commands for one server and the parser of their replies.
pub struct Call<T> {
    /// Sent together in one write; one reply each.
    pub cmds: Vec<redis::Cmd>,
    /// For a blocking command: how long the server may block. The reply is
    /// then awaited that long plus the read timeout, and PHP may end the
    /// wait early.
    pub block: Option<Duration>,
    /// Turns the replies (one per command, in order) into the result.
    pub parse: fn(Vec<Value>) -> RedisResult<T>,
    /// Redis Cluster: send `ASKING` before every command (the slot is being
    /// migrated and its keys were asked for on the importing node).
    pub asking: bool,
}

impl<T> Call<T> {
    /// A call of `cmds` whose replies `parse` reads.
    pub fn new(cmds: Vec<redis::Cmd>, parse: fn(Vec<Value>) -> RedisResult<T>) -> Self {
        Self {
            cmds,
            block: None,
            parse,
            asking: false,
        }
    }

    /// A call whose first command blocks on the server for up to `block`.
    pub fn blocking(
        block: Duration,
        cmds: Vec<redis::Cmd>,
        parse: fn(Vec<Value>) -> RedisResult<T>,
    ) -> Self {
        Self {
            cmds,
            block: Some(block),
            parse,
            asking: false,
        }
    }

    /// The commands packed into one request.
    pub fn packed(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for cmd in &self.cmds {
            self.pack(cmd, &mut out);
        }
        out
    }

    /// How many replies the request gets (one per command, one more per
    /// `ASKING`).
    pub fn reply_count(&self) -> usize {
        self.cmds.len() * if self.asking { 2 } else { 1 }
    }

    fn pack(&self, cmd: &redis::Cmd, out: &mut Vec<u8>) {
        if self.asking {
            redis::cmd("ASKING").write_packed_command(out);
        }
        cmd.write_packed_command(out);
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
                let mut again = Vec::new();
                self.pack(&self.cmds[i], &mut again);
                let offset = usize::from(self.asking);
                *reply = con
                    .req_packed_commands(&again, offset, 1)?
                    .pop()
                    .unwrap_or(Value::Nil);
            }
        }
        (self.parse)(replies)
    }

    /// The replies of the commands, without those of `ASKING` (an error
    /// there is the call's error).
    fn without_asking(&self, replies: Vec<Value>) -> RedisResult<Vec<Value>> {
        if !self.asking {
            return Ok(replies);
        }
        let mut out = Vec::with_capacity(self.cmds.len());
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
            .field("commands", &self.cmds.len())
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
