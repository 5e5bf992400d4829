//! Opening one connection to one server with its timeouts and TLS settings.

use std::io;
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redis::{ConnectionLike, Value};

use crate::config::options::{ConnectionOptions, TlsOptions};
use crate::config::url::{Endpoint, ServerUrl};
use crate::error::{ConnectionFailure, LockError, Result};
use crate::net::wire::{self, Conn, Stream};
use crate::process::PerProcess;
use crate::protocol::permitted::CheckKind;
use crate::protocol::scriptless::CompareDelete;

/// The interned configs of this process ([`intern`]).
static REGISTRY: PerProcess<Mutex<Vec<Arc<ServerConfig>>>> =
    PerProcess::new(|| Mutex::new(Vec::new()));

/// The one shared instance of `config`: equal configs (several lock
/// objects on one server) get the same `Arc`, so the pool can key
/// connections by its address. The registry keeps every distinct config of
/// the process (a handful). It is per process ([`PerProcess`]): the renewal
/// thread reaches it (a Sentinel's master, a Cluster node), and a fork at
/// that moment must not leave the child a registry locked forever.
pub fn intern(config: ServerConfig) -> Arc<ServerConfig> {
    let mut registry = REGISTRY
        .get()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(known) = registry.iter().find(|known| ***known == config) {
        return known.clone();
    }
    let config = Arc::new(config);
    registry.push(config.clone());
    config
}

/// Everything needed to open a connection to one server. Two locks with equal
/// configs share one pooled connection.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ServerConfig {
    /// Address, credentials and database.
    pub url: ServerUrl,
    /// TCP/TLS connect timeout.
    pub connect_timeout: Duration,
    /// Read and write timeout of every command.
    pub read_timeout: Duration,
    /// TLS settings (used for `rediss://` only).
    pub tls: TlsOptions,
    /// Whether this process has seen the server run our scripts.
    pub scripts: ScriptsChecked,
    /// Connections to this server dropped after an error and not yet
    /// replaced (the next ones opened are reconnects).
    pub broken: Broken,
    /// Whether the server refused `CLIENT ID` or `CLIENT UNBLOCK` (an ACL,
    /// a proxy): a blocking wait past its end is then ended by dropping
    /// its connection.
    pub unblock: UnblockRefused,
    /// What `INFO` told of the server, read once per process.
    pub facts: FactsMemo,
}

/// What this process knows of a server's facts ([`crate::net::facts`]):
/// nothing yet, the facts, or that `INFO` was refused (an ACL): unknown.
/// An atomic verdict answers the question every acquire asks without a
/// lock. Not part of a config's identity.
#[derive(Debug, Default)]
pub struct FactsMemo {
    /// 0: not read yet; 1: read, nothing found; 2: read, hazards found.
    verdict: AtomicU8,
    known: std::sync::Mutex<Option<Known>>,
    /// 1 + the process generation that recorded this server's hazards in
    /// its statistics (0: none did): a forked child records them again.
    recorded: std::sync::atomic::AtomicU64,
    /// When `INFO` last went unanswered (ms on this process's monotonic
    /// clock, +1; 0: never).
    unanswered_at: std::sync::atomic::AtomicU64,
}

/// A server's facts as far as they could be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Known {
    /// `INFO` answered.
    Facts(crate::net::facts::ServerFacts),
    /// `INFO` was refused: this.
    Refused(String),
}

impl FactsMemo {
    /// Whether the server can lose a held lock by itself, as far as known;
    /// `None` before it was read.
    pub fn hazardous(&self) -> Option<bool> {
        match self.verdict.load(Ordering::Acquire) {
            0 => None,
            v => Some(v == 2),
        }
    }

    /// What is known, if the server was read.
    pub fn get(&self) -> Option<Known> {
        self.known.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// How long a server whose `INFO` went unanswered is left alone.
    pub const RETRY: std::time::Duration = std::time::Duration::from_secs(10);

    /// Whether to ask the server's `INFO` now: not read yet, and not left
    /// unanswered within [`Self::RETRY`].
    pub fn to_ask(&self) -> bool {
        if self.hazardous().is_some() {
            return false;
        }
        match self.unanswered_at.load(Ordering::Acquire) {
            0 => true,
            at => monotonic_ms().saturating_sub(at - 1) >= Self::RETRY.as_millis() as u64,
        }
    }

    /// Notes that `INFO` went unanswered now.
    pub fn unanswered(&self) {
        self.unanswered_at
            .store(monotonic_ms() + 1, Ordering::Release);
    }

    /// Whether this process already recorded the server's hazards.
    pub fn recorded_here(&self) -> bool {
        self.recorded.load(Ordering::Acquire) == crate::process::generation() + 1
    }

    /// Notes that this process recorded the server's hazards.
    pub fn set_recorded(&self) {
        self.recorded
            .store(crate::process::generation() + 1, Ordering::Release);
    }

    /// Records what the server said.
    pub fn set(&self, known: Known) {
        let hazards = matches!(&known, Known::Facts(f) if !f.hazards().is_empty());
        *self.known.lock().unwrap_or_else(|p| p.into_inner()) = Some(known);
        self.verdict
            .store(if hazards { 2 } else { 1 }, Ordering::Release);
    }
}

/// Milliseconds since this process first asked.
fn monotonic_ms() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_millis() as u64
}

/// Set once the server refused to end a blocking command from another
/// connection (`CLIENT ID` or `CLIENT UNBLOCK`). Not part of a config's
/// identity.
#[derive(Debug, Default)]
pub struct UnblockRefused(AtomicBool);

impl UnblockRefused {
    /// True once the server refused.
    pub fn get(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Records a refusal.
    pub fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Counts connections dropped after an error, so that opening their
/// replacements counts as reconnects ([`crate::process::stats`]). Not part of a
/// config's identity.
#[derive(Debug, Default)]
pub struct Broken(AtomicU32);

impl Broken {
    /// A connection to the server broke and was dropped.
    pub fn add(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    /// A connection was opened: true (and one fewer owed) when it replaces
    /// a broken one.
    pub fn take(&self) -> bool {
        self.0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok()
    }
}

/// What this process found a server can do with our scripts: which script
/// checks it passed (`permitted.lua`, [`CheckKind`]: a plain `SET NX PX`
/// acquire asks first, once per kind, server and process, so that a server
/// refusing scripts, or a user the ACL would not let release, never gets a
/// hold it could not give back; one kind's check says nothing of another's
/// commands or keys), or that it refuses scripts but has a
/// compare-and-delete command ([`CompareDelete`]). A command the ACL
/// refuses later makes the process ask again ([`ScriptsChecked::forget`]).
/// Not part of a config's identity: equal configs compare equal whatever
/// this says.
#[derive(Debug, Default)]
pub struct ScriptsChecked {
    /// The kinds of check passed, one bit each ([`kind_bit`]).
    passed: AtomicU8,
    /// 0, or how the server deletes without scripts ([`DELIFEQ`], [`DELEX`]).
    scriptless: AtomicU8,
}

/// [`ScriptsChecked::scriptless`]'s states (0: scripts, or not known).
const DELIFEQ: u8 = 1;
const DELEX: u8 = 2;

/// `kind`'s bit in [`ScriptsChecked::passed`].
fn kind_bit(kind: CheckKind) -> u8 {
    match kind {
        CheckKind::Lock => 1,
        CheckKind::Permits => 2,
        CheckKind::Readers => 4,
    }
}

impl ScriptsChecked {
    /// True once the server passed a check of `kind` in this process.
    pub fn passed(&self, kind: CheckKind) -> bool {
        self.passed.load(Ordering::Relaxed) & kind_bit(kind) != 0
    }

    /// Records that the server passed a check of `kind`.
    pub fn set_passed(&self, kind: CheckKind) {
        self.passed.fetch_or(kind_bit(kind), Ordering::Relaxed);
    }

    /// How the server compares and deletes without scripts, once it was
    /// found to refuse them ([`ScriptsChecked::set_scriptless`]).
    pub fn scriptless(&self) -> Option<CompareDelete> {
        match self.scriptless.load(Ordering::Relaxed) {
            DELIFEQ => Some(CompareDelete::DelIfEq),
            DELEX => Some(CompareDelete::DelEx),
            _ => None,
        }
    }

    /// Forgets every check the server passed: it refused a command for
    /// this user's ACL (tightened since the check, say), so the next
    /// acquire asks again before it takes anything. A server found
    /// script-less stays so: the holds taken without scripts are released
    /// without them.
    pub fn forget(&self) {
        self.passed.store(0, Ordering::Relaxed);
    }

    /// Records that the server refuses scripts and compares and deletes
    /// with `how`.
    pub fn set_scriptless(&self, how: CompareDelete) {
        let state = match how {
            CompareDelete::DelIfEq => DELIFEQ,
            CompareDelete::DelEx => DELEX,
        };
        self.scriptless.store(state, Ordering::Relaxed);
    }
}

impl Clone for ScriptsChecked {
    fn clone(&self) -> Self {
        Self {
            passed: AtomicU8::new(self.passed.load(Ordering::Relaxed)),
            scriptless: AtomicU8::new(self.scriptless.load(Ordering::Relaxed)),
        }
    }
}

/// Per-process state kept beside a server's settings ([`FactsMemo`],
/// [`UnblockRefused`], [`Broken`], [`ScriptsChecked`]): not part of a
/// config's identity, so equal configs compare and hash equal whatever it
/// says.
macro_rules! not_identity {
    ($($ty:ty),*) => {$(
        impl PartialEq for $ty {
            fn eq(&self, _: &Self) -> bool {
                true
            }
        }

        impl Eq for $ty {}

        impl std::hash::Hash for $ty {
            fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
        }
    )*};
}

/// A clone of per-process state that starts afresh (a config cloned to be
/// another server's).
macro_rules! fresh_on_clone {
    ($($ty:ty),*) => {$(
        impl Clone for $ty {
            fn clone(&self) -> Self {
                Self::default()
            }
        }
    )*};
}

not_identity!(FactsMemo, UnblockRefused, Broken, ScriptsChecked);
fresh_on_clone!(FactsMemo, UnblockRefused, Broken);

impl ServerConfig {
    /// Combines a parsed URL with the connection's options.
    pub fn new(url: ServerUrl, options: &ConnectionOptions) -> Self {
        let tls = match url.endpoint {
            Endpoint::Tcp { tls: true, .. } => options.tls.clone(),
            _ => TlsOptions::default(),
        };
        Self {
            url,
            connect_timeout: options.connect_timeout,
            read_timeout: options.read_timeout,
            tls,
            scripts: ScriptsChecked::default(),
            broken: Broken::default(),
            unblock: UnblockRefused::default(),
            facts: FactsMemo::default(),
        }
    }

    /// The server as shown in messages: its URL with the password masked.
    pub fn name(&self) -> String {
        self.url.redacted()
    }

    /// Opens a new connection, authenticates, selects the database and sets
    /// the read/write timeouts. The whole setup is bounded by the connect
    /// timeout; signals do not interrupt it.
    pub fn open(&self) -> Result<Conn> {
        self.open_by(None)
    }

    /// [`ServerConfig::open`], given up at `by` if that comes before the
    /// connect timeout ends (a call whose replies are due by then: a
    /// renewal round, bounded by the leases it keeps).
    pub fn open_by(&self, by: Option<Instant>) -> Result<Conn> {
        let timeout = Instant::now() + self.connect_timeout;
        let deadline = by.map_or(timeout, |by| by.min(timeout));
        let io_failure = |e: io::Error| {
            let kind = match e.kind() {
                io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => ConnectionFailure::TimedOut,
                _ => ConnectionFailure::Unreachable,
            };
            self.failure(kind, e.to_string())
        };
        let stream = match &self.url.endpoint {
            Endpoint::Tcp { host, port, tls } => {
                let tcp = wire::connect_tcp(host, *port, deadline).map_err(io_failure)?;
                if *tls {
                    Stream::Tls(Box::new(self.handshake(host, tcp, deadline)?))
                } else {
                    Stream::Tcp(tcp)
                }
            }
            Endpoint::Unix { path } => Stream::Unix(UnixStream::connect(path).map_err(io_failure)?),
        };
        let setup_timeout = deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1));
        let mut con = Conn::new(stream, setup_timeout).map_err(io_failure)?;
        self.authenticate(&mut con)?;
        con.set_timeout(self.read_timeout).map_err(io_failure)?;
        con.set_db(self.url.db);
        if self.broken.take() {
            crate::stats::reconnected();
        }
        Ok(con)
    }

    /// AUTH (when the URL has credentials) and SELECT (db other than 0),
    /// pipelined in one round trip; over TLS at least a PING: a server that
    /// requires a client certificate may reject a client without one only
    /// after the handshake (TLS 1.3), and that must be said here, as a TLS
    /// error, not later as a lost connection.
    fn authenticate(&self, con: &mut Conn) -> Result<()> {
        let tls = matches!(self.url.endpoint, Endpoint::Tcp { tls: true, .. });
        let mut pipe = redis::pipe();
        if let Some(password) = &self.url.password {
            let auth = pipe.cmd("AUTH");
            if let Some(user) = &self.url.username {
                auth.arg(user);
            }
            auth.arg(password);
        }
        if self.url.db != 0 {
            pipe.cmd("SELECT").arg(self.url.db);
        }
        if pipe.is_empty() {
            if !tls {
                return Ok(());
            }
            pipe.cmd("PING");
        }
        let packed = pipe.get_packed_pipeline();
        let count = pipe.len();
        let replies =
            con.req_packed_commands(&packed, 0, count)
                .map_err(|e| match LockError::from_redis(&self.name(), &e) {
                    LockError::Connection {
                        kind: ConnectionFailure::Dropped,
                        detail,
                        ..
                    } if tls => self.failure(
                        ConnectionFailure::Tls,
                        format!(
                            "the server closed the connection right after the TLS handshake \
                         ({detail}); if it requires client certificates, set tls_cert and tls_key"
                        ),
                    ),
                    err => err,
                })?;
        for reply in replies {
            if let Value::ServerError(err) = reply {
                let err = redis::RedisError::from(err);
                let kind = match err.code() {
                    Some("WRONGPASS" | "NOAUTH" | "NOPASS" | "ERR")
                        if self.url.password.is_some() =>
                    {
                        ConnectionFailure::AuthFailed
                    }
                    _ => ConnectionFailure::Other,
                };
                return Err(self.failure(kind, err.to_string()));
            }
        }
        Ok(())
    }

    /// The TLS handshake on `tcp`, bounded by `deadline` (the socket's
    /// timeouts end each step; an interrupted or timed-out step resumes
    /// until the deadline).
    fn handshake(
        &self,
        host: &str,
        tcp: TcpStream,
        deadline: Instant,
    ) -> Result<native_tls::TlsStream<TcpStream>> {
        let tls_error = |detail: String| self.failure(ConnectionFailure::Tls, detail);
        let mut builder = native_tls::TlsConnector::builder();
        if !self.tls.verify {
            builder
                .danger_accept_invalid_certs(true)
                .danger_accept_invalid_hostnames(true);
        }
        if let Some(ca) = &self.tls.ca {
            // The CA file replaces the system's trust store (as PHP's
            // `cafile` does): every certificate in it, and only those.
            let pem = self.read_pem(ca)?;
            let blocks = pem_certificates(&pem);
            if blocks.is_empty() {
                return Err(tls_error(format!(
                    "{}: no PEM certificate in the file",
                    ca.display()
                )));
            }
            for block in blocks {
                let cert = native_tls::Certificate::from_pem(block)
                    .map_err(|e| tls_error(format!("{}: {e}", ca.display())))?;
                builder.add_root_certificate(cert);
            }
            builder.disable_built_in_roots(true);
        }
        if let (Some(cert), Some(key)) = (&self.tls.cert, &self.tls.key) {
            let identity =
                native_tls::Identity::from_pkcs8(&self.read_pem(cert)?, &self.read_pem(key)?)
                    .map_err(|e| tls_error(format!("client certificate: {e}")))?;
            builder.identity(identity);
        }
        let connector = builder.build().map_err(|e| tls_error(e.to_string()))?;
        let step = deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1));
        let _ = tcp.set_read_timeout(Some(step));
        let _ = tcp.set_write_timeout(Some(step));
        let timed_out = || {
            self.failure(
                ConnectionFailure::TimedOut,
                format!(
                    "no TLS handshake within the connect timeout ({} s)",
                    self.connect_timeout.as_secs_f64()
                ),
            )
        };
        let mut attempt = connector.connect(host, tcp);
        loop {
            match attempt {
                Ok(stream) => return Ok(stream),
                // A read that the socket timeout ended can surface as a
                // failure rather than WouldBlock: past the deadline, it is
                // the timeout.
                Err(native_tls::HandshakeError::Failure(_)) if Instant::now() >= deadline => {
                    return Err(timed_out());
                }
                Err(native_tls::HandshakeError::Failure(e)) => {
                    return Err(tls_error(e.to_string()));
                }
                Err(native_tls::HandshakeError::WouldBlock(mid)) => {
                    if Instant::now() >= deadline {
                        return Err(timed_out());
                    }
                    attempt = mid.handshake();
                }
            }
        }
    }

    fn failure(&self, kind: ConnectionFailure, detail: String) -> LockError {
        LockError::Connection {
            server: self.name(),
            kind,
            detail,
        }
    }

    fn read_pem(&self, path: &std::path::Path) -> Result<Vec<u8>> {
        std::fs::read(path).map_err(|e| {
            self.failure(
                ConnectionFailure::Tls,
                format!("cannot read {}: {e}", path.display()),
            )
        })
    }
}

/// The PEM certificate blocks of a file, each from its BEGIN to its END
/// line.
fn pem_certificates(pem: &[u8]) -> Vec<&[u8]> {
    const BEGIN: &[u8] = b"-----BEGIN CERTIFICATE-----";
    const END: &[u8] = b"-----END CERTIFICATE-----";
    let find = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).position(|w| w == needle);
    let mut blocks = Vec::new();
    let mut rest = pem;
    while let Some(start) = find(rest, BEGIN) {
        let Some(len) = find(&rest[start..], END) else {
            break;
        };
        let end = start + len + END.len();
        blocks.push(&rest[start..end]);
        rest = &rest[end..];
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fork while another thread holds the registry (the renewal thread
    /// resolving a Sentinel's master) leaves the child a registry of its
    /// own: interning there returns instead of waiting forever.
    #[test]
    fn a_fork_while_the_registry_is_held_leaves_the_child_its_own() {
        let url = ServerUrl::parse("servers", "redis://127.0.0.1:1").unwrap();
        let config = ServerConfig::new(url, &crate::config::options::ConnectionOptions::default());
        let held = REGISTRY.get().lock().unwrap();
        // SAFETY: the child only interns a config and leaves with _exit.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            intern(config);
            unsafe { libc::_exit(0) };
        }
        drop(held);
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut status = 0;
        // SAFETY: waiting for (and at worst killing) our own child.
        while unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } != pid {
            if Instant::now() >= deadline {
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    libc::waitpid(pid, &mut status, 0);
                }
                panic!("the child hung on the registry its parent held at fork time");
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    }

    #[test]
    fn every_certificate_of_a_pem_file_is_found() {
        let one = "-----BEGIN CERTIFICATE-----\nAAA\n-----END CERTIFICATE-----";
        let two = "-----BEGIN CERTIFICATE-----\nBBB\n-----END CERTIFICATE-----";
        let file = format!("# bundle\n{one}\nnoise\n{two}\n-----BEGIN CERTIFICATE-----\ncut");
        let blocks = pem_certificates(file.as_bytes());
        assert_eq!(blocks, vec![one.as_bytes(), two.as_bytes()]);
        assert!(pem_certificates(b"no certificate").is_empty());
    }
}
