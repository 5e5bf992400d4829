//! One connection to one Redis server: a socket (TCP, unix or TLS), a
//! reply buffer parsed in place ([`crate::net::resp`]), and reads that survive
//! signals.
//!
//! redis-rs's own `Connection` cannot be used for this: a socket with a
//! read timeout returns `EINTR` when a signal arrives, even under
//! `SA_RESTART`, and redis-rs then fails the command and skips the reply
//! that follows. Here a read interrupted by a signal, or by the 100 ms slice
//! of a blocking wait, simply goes on until the command's own deadline, so a
//! PHP signal handler never fails a call. Only a blocking wait
//! ([`Conn::begin_wait`]) asks [`crate::process::signals`] whether PHP wants the wait
//! to end (a signal handler threw or called `exit()`).
//!
//! `Conn` implements redis-rs's `ConnectionLike`, so `Cmd::query`,
//! pipelines and `Script::invoke` run on it unchanged.

use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use redis::{ConnectionLike, RedisError, RedisResult, Value};

use crate::net::resp;

/// Longest a blocking wait reads before it asks whether PHP wants it to end
/// (a signal that arrives between two reads is noticed within this).
const WAIT_SLICE: Duration = Duration::from_millis(100);

/// The reply buffer's first size (grown when a reply needs more).
const BUFFER: usize = 16 * 1024;

/// How far a socket's read timeout may be from the remaining time of a
/// request before it is set again.
const TIMEOUT_SLACK: Duration = Duration::from_millis(2);

/// The transport under a connection.
pub enum Stream {
    /// Plain TCP.
    Tcp(TcpStream),
    /// A unix domain socket.
    Unix(UnixStream),
    /// TLS over TCP.
    Tls(Box<native_tls::TlsStream<TcpStream>>),
}

impl Stream {
    fn set_read_timeout(&self, timeout: Duration) -> io::Result<()> {
        let timeout = Some(timeout.max(Duration::from_millis(1)));
        match self {
            Self::Tcp(s) => s.set_read_timeout(timeout),
            Self::Unix(s) => s.set_read_timeout(timeout),
            Self::Tls(s) => s.get_ref().set_read_timeout(timeout),
        }
    }

    fn set_write_timeout(&self, timeout: Duration) -> io::Result<()> {
        let timeout = Some(timeout.max(Duration::from_millis(1)));
        match self {
            Self::Tcp(s) => s.set_write_timeout(timeout),
            Self::Unix(s) => s.set_write_timeout(timeout),
            Self::Tls(s) => s.get_ref().set_write_timeout(timeout),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Self::Tcp(s) => s.read(buf),
            Self::Unix(s) => s.read(buf),
            Self::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Self::Tcp(s) => s.write(buf),
            Self::Unix(s) => s.write(buf),
            Self::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Self::Tcp(s) => s.flush(),
            Self::Unix(s) => s.flush(),
            Self::Tls(s) => s.flush(),
        }
    }
}

/// Opens a TCP connection to `host:port`, trying each address the name
/// resolves to until `deadline`. Signals do not interrupt it (the standard
/// library resumes an interrupted connect).
pub fn connect_tcp(host: &str, port: u16, deadline: Instant) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, "the host name resolves to nothing");
    for addr in (host, port).to_socket_addrs()? {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "connect timed out"));
        }
        match TcpStream::connect_timeout(&addr, left) {
            Ok(stream) => {
                stream.set_nodelay(true)?;
                return Ok(stream);
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// How the current command may read.
#[derive(Debug, Clone, Copy)]
enum Mode {
    /// An ordinary command: up to the read timeout, signals resumed.
    Command,
    /// A blocking wait: up to the given total, in slices, and PHP may end it.
    Wait(Duration),
}

/// A connection to one server.
pub struct Conn {
    stream: Stream,
    /// Bytes read and not yet parsed are `buf[start..end]`.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    read_timeout: Duration,
    /// The read timeout currently set on the socket (saves a syscall per
    /// command when unchanged).
    socket_timeout: Duration,
    mode: Mode,
    open: bool,
    stopped: bool,
    db: i64,
    /// The server's id for this connection (`CLIENT ID`), once asked:
    /// another connection can then end a blocking wait on this one
    /// (`CLIENT UNBLOCK`).
    client_id: Option<i64>,
}

impl Conn {
    /// Wraps a connected stream; every read and write is bounded by
    /// `read_timeout`.
    pub fn new(stream: Stream, read_timeout: Duration) -> io::Result<Self> {
        stream.set_read_timeout(read_timeout)?;
        stream.set_write_timeout(read_timeout)?;
        Ok(Self {
            stream,
            buf: vec![0; BUFFER],
            start: 0,
            end: 0,
            read_timeout,
            socket_timeout: read_timeout,
            mode: Mode::Command,
            open: true,
            stopped: false,
            db: 0,
            client_id: None,
        })
    }

    /// Changes the bound of every later read and write.
    pub fn set_timeout(&mut self, read_timeout: Duration) -> io::Result<()> {
        self.stream.set_read_timeout(read_timeout)?;
        self.stream.set_write_timeout(read_timeout)?;
        self.read_timeout = read_timeout;
        self.socket_timeout = read_timeout;
        Ok(())
    }

    /// Records the database selected on this connection.
    pub fn set_db(&mut self, db: i64) {
        self.db = db;
    }

    /// Makes the next command a blocking wait that may take up to `total`:
    /// its reply is read in slices, and [`crate::host::wait_should_end`]
    /// is asked after each slice and each signal. When it says so, the
    /// command fails and [`Conn::stopped`] is true (the connection is then
    /// unusable: the reply is still on its way).
    pub fn begin_wait(&mut self, total: Duration) {
        self.mode = Mode::Wait(total);
    }

    /// True when the last command ended because PHP asked the wait to end.
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// The server's id for this connection, if asked already.
    pub fn client_id(&self) -> Option<i64> {
        self.client_id
    }

    /// Records the server's id for this connection (`CLIENT ID`).
    pub fn set_client_id(&mut self, id: i64) {
        self.client_id = Some(id);
    }

    /// Writes a request (one or more packed commands) without reading the
    /// replies: several servers can then work on their requests at once
    /// ([`Conn::receive`] reads the replies).
    pub fn send(&mut self, bytes: &[u8]) -> RedisResult<()> {
        // write_all resumes writes interrupted by signals.
        self.stream.write_all(bytes).map_err(|e| self.broken(e))
    }

    /// When the replies of a request sent now are due: after the read
    /// timeout, or for a blocking wait ([`Conn::begin_wait`]) after its
    /// total.
    pub fn reply_deadline(&self) -> Instant {
        let total = match self.mode {
            Mode::Command => self.read_timeout,
            Mode::Wait(total) => total,
        };
        Instant::now() + total
    }

    /// Reads `count` replies of the request sent last, all before `until`.
    pub fn receive(&mut self, count: usize, until: Instant) -> RedisResult<Vec<Value>> {
        let mut replies = Vec::with_capacity(count);
        self.receive_into(&mut replies, count, until, false)?;
        Ok(replies)
    }

    /// Reads replies of the request sent last into `replies` until it holds
    /// `count`, all before `until`. With `resumable`, a read that times out
    /// (and that PHP did not end) leaves the connection open and in step,
    /// with the replies read so far in `replies`: the caller may read on
    /// with another deadline (after ending a blocking command from another
    /// connection, `CLIENT UNBLOCK`) or drop the connection. Any other
    /// failure leaves it closed.
    pub fn receive_into(
        &mut self,
        replies: &mut Vec<Value>,
        count: usize,
        until: Instant,
        resumable: bool,
    ) -> RedisResult<()> {
        let mode = std::mem::replace(&mut self.mode, Mode::Command);
        let interruptible = matches!(mode, Mode::Wait(_));
        let mut reader = Deadline {
            stream: &mut self.stream,
            until,
            socket_timeout: &mut self.socket_timeout,
            slice: if interruptible {
                WAIT_SLICE
            } else {
                self.read_timeout
            },
            interruptible,
            stopped: &mut self.stopped,
        };
        if let Err(e) = reader.prepare() {
            self.open = false;
            return Err(RedisError::from(e));
        }
        while replies.len() < count {
            match resp::parse(&self.buf[self.start..self.end]) {
                Ok(Some((value, used))) => {
                    self.start += used;
                    replies.push(value);
                }
                Ok(None) => {
                    if let Err(e) = fill(&mut self.buf, &mut self.start, &mut self.end, &mut reader)
                    {
                        // A timeout of a wait that PHP did not end leaves
                        // the stream in step (nothing was half read into
                        // a reply that is lost: unparsed bytes stay in the
                        // buffer); the caller decides.
                        let resume =
                            resumable && e.kind() == io::ErrorKind::TimedOut && !*reader.stopped;
                        self.open = resume;
                        if resume {
                            self.mode = mode;
                        }
                        return Err(RedisError::from(e));
                    }
                }
                Err(e) => {
                    // The stream is out of step with our requests.
                    self.open = false;
                    return Err(e);
                }
            }
        }
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        }
        Ok(())
    }

    fn broken(&mut self, e: io::Error) -> RedisError {
        self.open = false;
        RedisError::from(e)
    }
}

/// Reads more of a reply into `buf[*end..]`, first moving what is unparsed
/// to the front, or growing the buffer when a reply fills it.
fn fill(
    buf: &mut Vec<u8>,
    start: &mut usize,
    end: &mut usize,
    from: &mut impl Read,
) -> io::Result<()> {
    if *end == buf.len() {
        if *start > 0 {
            buf.copy_within(*start..*end, 0);
            (*start, *end) = (0, *end - *start);
        } else {
            buf.resize(buf.len() * 2, 0);
        }
    }
    match from.read(&mut buf[*end..])? {
        0 => Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the server closed the connection",
        )),
        n => {
            *end += n;
            Ok(())
        }
    }
}

/// A reader that turns the socket's per-read timeout into one deadline per
/// request and resumes reads that a signal interrupted.
struct Deadline<'a> {
    stream: &'a mut Stream,
    until: Instant,
    socket_timeout: &'a mut Duration,
    /// Longest single read.
    slice: Duration,
    interruptible: bool,
    stopped: &'a mut bool,
}

impl Deadline<'_> {
    /// Sets the socket's timeout for the first read of the request.
    fn prepare(&mut self) -> io::Result<()> {
        *self.stopped = false;
        let left = self.until.saturating_duration_since(Instant::now());
        self.set_timeout(left.min(self.slice))
    }

    fn set_timeout(&mut self, timeout: Duration) -> io::Result<()> {
        // A socket timeout within TIMEOUT_SLACK of the one asked for is
        // kept: setting it is a system call per request (and per server
        // over Redlock). A read may then end up to TIMEOUT_SLACK after its
        // deadline, or early, after which the deadline is checked again.
        let current = *self.socket_timeout;
        let off = current.abs_diff(timeout);
        if off > TIMEOUT_SLACK {
            self.stream.set_read_timeout(timeout)?;
            *self.socket_timeout = timeout;
        }
        Ok(())
    }
}

impl Read for Deadline<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let err = match self.stream.read(buf) {
                Ok(n) => return Ok(n),
                Err(e) => e,
            };
            let paused = matches!(
                err.kind(),
                io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            );
            if !paused {
                return Err(err);
            }
            if self.interruptible && crate::host::wait_should_end() {
                *self.stopped = true;
                return Err(io::Error::new(
                    io::ErrorKind::Interrupted,
                    "the wait was ended by PHP (a signal handler or the time limit)",
                ));
            }
            let left = self.until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "no reply within the read timeout",
                ));
            }
            self.set_timeout(left.min(self.slice))?;
        }
    }
}

impl ConnectionLike for Conn {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        let until = self.reply_deadline();
        self.send(cmd)?;
        Ok(self.receive(1, until)?.pop().unwrap_or(Value::Nil))
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        let until = self.reply_deadline();
        self.send(cmd)?;
        let mut replies = self.receive(offset + count, until)?;
        Ok(replies.split_off(offset))
    }

    fn get_db(&self) -> i64 {
        self.db
    }

    fn check_connection(&mut self) -> bool {
        redis::cmd("PING").query::<String>(self).is_ok()
    }

    fn is_open(&self) -> bool {
        self.open
    }
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conn")
            .field("open", &self.open)
            .field("db", &self.db)
            .finish_non_exhaustive()
    }
}
