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
}

impl<T> Call<T> {
    /// A call of `cmds` whose replies `parse` reads.
    pub fn new(cmds: Vec<redis::Cmd>, parse: fn(Vec<Value>) -> RedisResult<T>) -> Self {
        Self {
            cmds,
            block: None,
            parse,
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
        }
    }

    /// The commands packed into one request.
    pub fn packed(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for cmd in &self.cmds {
            cmd.write_packed_command(&mut out);
        }
        out
    }

    /// Runs the call on one connection (one round trip, plus a script load
    /// after NOSCRIPT).
    pub fn query(&self, con: &mut dyn ConnectionLike) -> RedisResult<T> {
        let replies = con.req_packed_commands(&self.packed(), 0, self.cmds.len())?;
        self.finish(con, replies)
    }

    /// Parses `replies`, first re-running every command that a server
    /// without our scripts answered with NOSCRIPT (after loading them all).
    pub fn finish(&self, con: &mut dyn ConnectionLike, mut replies: Vec<Value>) -> RedisResult<T> {
        let mut loaded = false;
        for (i, reply) in replies.iter_mut().enumerate() {
            if is_noscript(reply) {
                if !loaded {
                    scripts::load_all(con)?;
                    loaded = true;
                }
                *reply = con.req_command(&self.cmds[i])?;
            }
        }
        (self.parse)(replies)
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

fn is_noscript(reply: &Value) -> bool {
    matches!(reply, Value::ServerError(e) if e.kind() == Some(redis::ServerErrorKind::NoScript))
}
