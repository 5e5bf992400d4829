//! One step of the lock protocol on one server, as data: the commands to
//! send and how to read their replies. Keeping the request apart from the
//! connection lets a topology send it to several servers at once and read
//! the replies afterwards ([`crate::net::exchange`]), or run it on any
//! `ConnectionLike` ([`Call::query`]).

use std::borrow::Cow;
use std::time::Duration;

use redis::{ConnectionLike, RedisResult, Value};

use crate::protocol::scripts;

/// One command, already in RESP form: built once, written as is. (redis-rs's
/// `Cmd` grows a buffer argument by argument and is packed again at every
/// send, which cost a lock cycle more than its round trip's own work.)
#[derive(Clone, PartialEq, Eq)]
pub struct Command(Vec<u8>);

/// An argument of a [`Command`]: bytes or a number.
#[derive(Clone, Copy)]
pub enum Arg<'a> {
    /// Sent as is.
    Bytes(&'a [u8]),
    /// Sent in decimal.
    Int(u64),
}

impl<'a> From<&'a [u8]> for Arg<'a> {
    fn from(bytes: &'a [u8]) -> Self {
        Self::Bytes(bytes)
    }
}

impl<'a> From<&'a str> for Arg<'a> {
    fn from(text: &'a str) -> Self {
        Self::Bytes(text.as_bytes())
    }
}

impl<'a, const N: usize> From<&'a [u8; N]> for Arg<'a> {
    fn from(bytes: &'a [u8; N]) -> Self {
        Self::Bytes(bytes)
    }
}

impl<'a> From<&'a Vec<u8>> for Arg<'a> {
    fn from(bytes: &'a Vec<u8>) -> Self {
        Self::Bytes(bytes)
    }
}

impl From<u64> for Arg<'_> {
    fn from(n: u64) -> Self {
        Self::Int(n)
    }
}

impl Command {
    /// The command made of `args` (its name first), in one allocation.
    pub fn new<'a, I>(args: I) -> Self
    where
        I: IntoIterator<Item = Arg<'a>>,
        I::IntoIter: Clone,
    {
        let args = args.into_iter();
        let (count, size) = args.clone().fold((0usize, 0usize), |(n, size), arg| {
            let len = match arg {
                Arg::Bytes(b) => b.len(),
                Arg::Int(_) => 20,
            };
            // "$" + up to 20 digits + CRLF + the argument + CRLF
            (n + 1, size + len + 25)
        });
        let mut out = Vec::with_capacity(size + 24);
        let mut digits = itoa::Buffer::new();
        out.push(b'*');
        out.extend_from_slice(digits.format(count).as_bytes());
        out.extend_from_slice(b"\r\n");
        let mut number = itoa::Buffer::new();
        for arg in args {
            let bytes = match arg {
                Arg::Bytes(b) => b,
                Arg::Int(i) => number.format(i).as_bytes(),
            };
            out.push(b'$');
            out.extend_from_slice(digits.format(bytes.len()).as_bytes());
            out.extend_from_slice(b"\r\n");
            out.extend_from_slice(bytes);
            out.extend_from_slice(b"\r\n");
        }
        Self(out)
    }

    /// The start of a command of `count` arguments, `first` of them
    /// encoded: for [`Command::with_head`], when those are the same for
    /// many commands (a lock's own keys).
    pub fn head<'a, I>(count: usize, first: I) -> Vec<u8>
    where
        I: IntoIterator<Item = Arg<'a>>,
        I::IntoIter: Clone,
    {
        let mut out = Self::new(first).0;
        // Replace the header of `first` alone with the whole command's.
        let end = out.iter().position(|&b| b == b'\n').map_or(0, |i| i + 1);
        let header = format!("*{count}\r\n");
        out.splice(..end, header.bytes());
        out
    }

    /// A command that starts with `head` (see [`Command::head`]) and goes
    /// on with `rest`.
    pub fn with_head(head: &[u8], rest: &[Arg<'_>]) -> Self {
        let size: usize = rest
            .iter()
            .map(|arg| match arg {
                Arg::Bytes(b) => b.len() + 25,
                Arg::Int(_) => 45,
            })
            .sum();
        let mut out = Vec::with_capacity(head.len() + size);
        out.extend_from_slice(head);
        let (mut digits, mut number) = (itoa::Buffer::new(), itoa::Buffer::new());
        for arg in rest {
            let bytes = match *arg {
                Arg::Bytes(b) => b,
                Arg::Int(i) => number.format(i).as_bytes(),
            };
            out.push(b'$');
            out.extend_from_slice(digits.format(bytes.len()).as_bytes());
            out.extend_from_slice(b"\r\n");
            out.extend_from_slice(bytes);
            out.extend_from_slice(b"\r\n");
        }
        Self(out)
    }

    /// The command of `args`, all bytes (a name and plain arguments).
    pub fn of(args: &[&[u8]]) -> Self {
        Self::new(args.iter().map(|a| Arg::Bytes(a)))
    }

    /// The command in RESP form.
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Arguments may be tokens or passwords: only the size is shown.
        write!(f, "Command({} bytes)", self.0.len())
    }
}

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

/// The error code of a result that too few replicas acknowledged
/// ([`crate::error::ConnectionFailure::NotReplicated`]).
pub const NOT_REPLICATED: &str = "NOTREPLICATED";

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
        }
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
        Self {
            block: Some(block),
            ..Self::new(cmds, parse)
        }
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
        let value = (self.parse)(replies)?;
        match (&self.ack, acks) {
            (Some(ack), Some(acks)) if (ack.needed)(&value) => {
                let acked: i64 = redis::from_redis_value(acks.extract_error()?)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_packed_as_redis_rs_packs_them() {
        let mut cmd = redis::cmd("SET");
        cmd.arg(&b"k\r\n\0"[..])
            .arg("tok")
            .arg("NX")
            .arg("PX")
            .arg(1500u64);
        let expected = cmd.get_packed_command();
        let args = [
            Arg::from("SET"),
            Arg::from(&b"k\r\n\0"[..]),
            Arg::from("tok"),
            Arg::from("NX"),
            Arg::from("PX"),
            Arg::Int(1500),
        ];
        assert_eq!(Command::new(args).bytes(), &expected[..]);
        let head = Command::head(6, args[..2].iter().copied());
        assert_eq!(Command::with_head(&head, &args[2..]).bytes(), &expected[..]);
        assert_eq!(Command::of(&[b"PING"]).bytes(), b"*1\r\n$4\r\nPING\r\n");
        assert_eq!(
            Command::new([Arg::Int(0), Arg::Int(u64::MAX)]).bytes(),
            b"*2\r\n$1\r\n0\r\n$20\r\n18446744073709551615\r\n"
        );
    }
}
