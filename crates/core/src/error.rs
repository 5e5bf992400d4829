//! The one error type of the core, classified so that callers (the PHP
//! binding, the pool's retry logic) can decide what to do without parsing
//! messages.

use std::fmt;

/// Result alias used throughout the core.
pub type Result<T, E = LockError> = std::result::Result<T, E>;

/// Why talking to a Redis server failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectionFailure {
    /// The server could not be reached or refused the TCP/unix connection.
    Unreachable,
    /// The server rejected our credentials (`WRONGPASS`, `NOAUTH`, ...).
    AuthFailed,
    /// An operation took longer than the connect or read timeout.
    TimedOut,
    /// The connection broke while in use (reset, EOF, broken pipe).
    Dropped,
    /// The TLS handshake or the TLS settings failed.
    Tls,
    /// Fewer replicas than option `replicas` asks for acknowledged a write
    /// (`WAIT`); the connection itself is fine.
    NotReplicated,
    /// Any other transport-level failure.
    Other,
}

impl fmt::Display for ConnectionFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Unreachable => "unreachable",
            Self::AuthFailed => "authentication failed",
            Self::TimedOut => "timed out",
            Self::Dropped => "connection lost",
            Self::Tls => "TLS error",
            Self::NotReplicated => "not replicated",
            Self::Other => "connection error",
        })
    }
}

/// A reply saying that a command did not run on the server it was sent to,
/// and where it should go instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Redirect {
    /// `MOVED`: the slot is served by `node` (`host:port`) now.
    Moved {
        /// The hash slot.
        slot: u16,
        /// Where it lives, as the node wrote it.
        node: String,
    },
    /// `ASK`: the slot is being migrated; ask `node` for this key, once.
    Ask {
        /// The hash slot.
        slot: u16,
        /// The importing node.
        node: String,
    },
    /// `TRYAGAIN`, `CLUSTERDOWN` or `MASTERDOWN`: the cluster is
    /// reconfiguring; the same node may answer in a moment.
    Busy,
    /// `READONLY`: the server is a replica (a master demoted by a
    /// failover); the master must be found again.
    ReadOnly,
}

/// Everything that can go wrong in the core.
///
/// Each variant maps onto exactly one PHP exception class in the binding.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LockError {
    /// A caller-supplied value failed validation; nothing was sent to Redis.
    /// `param` names the argument (or option) at fault.
    #[error("{param} {reason}")]
    InvalidArgument {
        /// Name of the PHP argument or option, e.g. `ttl` or `options["prefix"]`.
        param: String,
        /// What is wrong with it, phrased to follow the name.
        reason: String,
    },
    /// A server could not be used: unreachable, refused, auth failed, I/O timeout.
    #[error("Redis {server}: {kind}: {detail}")]
    Connection {
        /// The server, with any password redacted.
        server: String,
        /// The class of failure.
        kind: ConnectionFailure,
        /// What the transport reported (never contains credentials).
        detail: String,
    },
    /// The lock could not be acquired within the allowed wait.
    #[error("could not acquire lock \"{key}\" within {wait_secs} s")]
    Timeout {
        /// The user's key (without prefix).
        key: String,
        /// The wait that ran out, in seconds.
        wait_secs: f64,
    },
    /// The lease expired or was taken by someone else while we held it.
    #[error("lock \"{key}\" was lost while held: {detail}")]
    LockLost {
        /// The user's key (without prefix).
        key: String,
        /// How the loss was noticed.
        detail: String,
    },
    /// Redis answered with an error or an unexpected reply (e.g. `NOPERM`,
    /// `WRONGTYPE`, a script error).
    #[error("Redis {server}: {detail}")]
    Server {
        /// The server, with any password redacted.
        server: String,
        /// The error Redis returned.
        detail: String,
    },
    /// The server did not run the command and said where it should go
    /// ([`Redirect`]). Cluster and Sentinel follow it; on a plain server it
    /// means the server is a cluster node or a replica.
    #[error("Redis {server}: {detail}")]
    Redirected {
        /// The node that answered, with any password redacted.
        server: String,
        /// Where the command should go.
        redirect: Redirect,
        /// What the node said.
        detail: String,
    },
    /// The request is valid but not something this build can do.
    #[error("{0}")]
    Unsupported(String),
    /// A server can lose a held lock by itself (eviction, no append-only
    /// file) and option `unsafe_server` says to refuse it; nothing was
    /// taken.
    #[error("{0}")]
    Unsafe(String),
    /// Something that cannot happen did (a broken invariant of the core,
    /// or the operating system failing us, such as its random number
    /// generator). Never the caller's fault.
    #[error("internal error in redislock: {0}")]
    Internal(String),
    /// PHP ended a blocking wait: a signal handler threw or called `exit()`,
    /// or the execution time limit was hit. The binding lets PHP's own
    /// exception (or fatal error) through instead of raising one.
    #[error("the wait was ended by PHP")]
    Interrupted,
}

impl LockError {
    /// Builds an [`LockError::InvalidArgument`].
    pub fn invalid(param: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::InvalidArgument {
            param: param.into(),
            reason: reason.into(),
        }
    }

    /// Classifies a redis-rs error raised while talking to `server`.
    pub fn from_redis(server: &str, err: &redis::RedisError) -> Self {
        use redis::ErrorKind;
        let detail = without_arguments(&err.to_string());
        // A server out of memory under `maxmemory-policy noeviction` refuses
        // every write (and every script that may write) before running it.
        if err.code() == Some("OOM") {
            return Self::Server {
                server: server.to_owned(),
                detail: format!(
                    "the server is full ({detail}): it refuses writes, so this call changed \
                     nothing in Redis and no lock was taken; free memory there, raise \
                     `maxmemory`, or keep locks on a Redis of their own"
                ),
            };
        }
        if let Some(command) = refused_script_command(&detail) {
            return Self::Server {
                server: server.to_owned(),
                detail: format!(
                    "the server refuses {command} ({detail}); redislock needs EVAL/EVALSHA \
                     (Lua scripts) to release and hand over locks safely, so this call changed \
                     nothing in Redis"
                ),
            };
        }
        if detail.contains(SEMAPHORE_ACL_REFUSAL) {
            return Self::Server {
                server: server.to_owned(),
                detail: format!(
                    "{detail}: its ACL refuses a command that redislock's semaphore scripts \
                     need to give permits back and hand them over, so this call changed nothing \
                     in Redis"
                ),
            };
        }
        if detail.contains(ACL_REFUSAL) {
            return Self::Server {
                server: server.to_owned(),
                detail: format!(
                    "{detail}: its ACL refuses a command that redislock's scripts need to \
                     release and hand over locks, so this call changed nothing in Redis"
                ),
            };
        }
        if let Some(redirect) = redirect_of(err) {
            let hint = match redirect {
                Redirect::Busy => "",
                Redirect::ReadOnly => REPLICA_HINT,
                Redirect::Moved { .. } | Redirect::Ask { .. } => CLUSTER_HINT,
            };
            return Self::Redirected {
                server: server.to_owned(),
                redirect,
                detail: format!("{detail}{hint}"),
            };
        }
        if err.code() == Some(NOT_REPLICATED) {
            return Self::Connection {
                server: server.to_owned(),
                kind: ConnectionFailure::NotReplicated,
                detail: err.detail().unwrap_or_default().to_owned(),
            };
        }
        // A server still loading its data after a restart ran nothing: it
        // cannot be used yet, like one that does not answer.
        if err.kind() == ErrorKind::Server(redis::ServerErrorKind::BusyLoading) {
            return Self::Connection {
                server: server.to_owned(),
                kind: ConnectionFailure::Unreachable,
                detail,
            };
        }
        if err.kind() == ErrorKind::Server(redis::ServerErrorKind::CrossSlot) {
            return Self::Server {
                server: server.to_owned(),
                detail: format!("{detail}{CLUSTER_HINT}"),
            };
        }
        let kind = if err.is_io_error() && looks_like_tls(&detail) {
            Some(ConnectionFailure::Tls)
        } else if err.is_timeout() {
            Some(ConnectionFailure::TimedOut)
        } else if err.is_connection_refusal() {
            Some(ConnectionFailure::Unreachable)
        } else if err.is_connection_dropped() || (err.is_io_error() && closed_under_tls(&detail)) {
            Some(ConnectionFailure::Dropped)
        } else {
            match err.kind() {
                ErrorKind::AuthenticationFailed => Some(ConnectionFailure::AuthFailed),
                // A reply that does not parse leaves the stream out of step.
                ErrorKind::Io | ErrorKind::Parse => Some(ConnectionFailure::Other),
                ErrorKind::InvalidClientConfig => Some(ConnectionFailure::Other),
                _ => match err.code() {
                    Some("WRONGPASS" | "NOAUTH" | "NOPASS") => Some(ConnectionFailure::AuthFailed),
                    _ => None,
                },
            }
        };
        match kind {
            Some(kind) => Self::Connection {
                server: server.to_owned(),
                kind,
                detail,
            },
            None => Self::Server {
                server: server.to_owned(),
                detail,
            },
        }
    }

    /// True when Redis refused a command (or a command a script ran) for
    /// the user's ACL: `NOPERM` outside scripts, "The user executing the
    /// script can't ..." inside them, and redislock's own check's refusal.
    pub fn is_acl_refusal(&self) -> bool {
        let Self::Server { detail, .. } = self else {
            return false;
        };
        // Lower case, as `refused_script_command` reads Redis's words.
        let lower = detail.to_ascii_lowercase();
        [
            "noperm",
            "no permissions to",
            "the user executing the script can't",
            ACL_REFUSAL,
            SEMAPHORE_ACL_REFUSAL,
        ]
        .iter()
        .any(|refusal| lower.contains(refusal))
    }

    /// True when the failure is in the transport: the connection that saw it
    /// must not be used again.
    pub fn is_connection_error(&self) -> bool {
        matches!(self, Self::Connection { kind, .. } if *kind != ConnectionFailure::NotReplicated)
    }

    /// True when too few replicas acknowledged a write (option `replicas`).
    pub fn is_not_replicated(&self) -> bool {
        matches!(
            self,
            Self::Connection {
                kind: ConnectionFailure::NotReplicated,
                ..
            }
        )
    }

    /// True when an I/O timeout caused the failure.
    pub fn is_timeout(&self) -> bool {
        matches!(
            self,
            Self::Connection {
                kind: ConnectionFailure::TimedOut,
                ..
            }
        )
    }

    /// True when a wait may go on through this error on a new connection:
    /// the connection dropped under it (`CLIENT KILL`, a restart, a
    /// failover) or the server refused a new one for a moment. A stalled
    /// server (a timeout) is not waited through: that would cost the read
    /// timeout again and again.
    pub fn is_passing(&self) -> bool {
        matches!(
            self,
            Self::Connection {
                kind: ConnectionFailure::Dropped | ConnectionFailure::Unreachable,
                ..
            }
        )
    }

    /// True when repeating the same idempotent command on a fresh connection
    /// may succeed: the connection dropped under us. Timeouts are not
    /// retryable (the server may be stalled, a retry would double the wait),
    /// and neither are refused connections or failed authentication.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Self::Connection {
                kind: ConnectionFailure::Dropped,
                ..
            }
        )
    }
}

/// Added to a cluster node's redirect or cross-slot error on a topology
/// that is not Cluster.
/// The error code the protocol gives a result that too few replicas
/// acknowledged ([`ConnectionFailure::NotReplicated`]).
pub const NOT_REPLICATED: &str = "NOTREPLICATED";

const CLUSTER_HINT: &str =
    " (a Redis Cluster node: set option \"cluster\" => true to follow the cluster's slots)";

/// Added to a `READONLY` reply that reaches the caller.
const REPLICA_HINT: &str = " (the server is a replica: point the lock at the master, \
     or let Sentinel or Cluster find it)";

/// The redirect an error reply carries.
fn redirect_of(err: &redis::RedisError) -> Option<Redirect> {
    use redis::{ErrorKind, ServerErrorKind};
    let ErrorKind::Server(kind) = err.kind() else {
        return None;
    };
    match kind {
        ServerErrorKind::Moved | ServerErrorKind::Ask => {
            let (node, slot) = err.redirect_node()?;
            let node = node.to_owned();
            Some(if kind == ServerErrorKind::Ask {
                Redirect::Ask { slot, node }
            } else {
                Redirect::Moved { slot, node }
            })
        }
        ServerErrorKind::TryAgain | ServerErrorKind::ClusterDown | ServerErrorKind::MasterDown => {
            Some(Redirect::Busy)
        }
        ServerErrorKind::ReadOnly => Some(Redirect::ReadOnly),
        _ => None,
    }
}

/// How the first acquire's check (`scripts/permitted.lua`) words a command
/// that the ACL refuses.
const ACL_REFUSAL: &str = "redislock: this user may not run";

/// The same check for a semaphore's commands.
const SEMAPHORE_ACL_REFUSAL: &str = "redislock (semaphore): this user may not run";

/// Redis echoes the first arguments of an unknown command ("with args
/// beginning with: ..."): they can carry an owner token, so they are cut.
fn without_arguments(detail: &str) -> String {
    match detail.find(", with args beginning with") {
        Some(at) => detail[..at].to_owned(),
        None => detail.to_owned(),
    }
}

/// The scripting command a server refused, when `detail` says that one was
/// refused (renamed away, or not allowed for this ACL user).
fn refused_script_command(detail: &str) -> Option<&'static str> {
    let lower = detail.to_ascii_lowercase();
    let refused = lower.contains("unknown command") || lower.contains("noperm");
    if !refused {
        return None;
    }
    ["evalsha", "eval", "script"]
        .into_iter()
        .find(|name| lower.contains(&format!("'{name}'")))
        .map(|name| match name {
            "evalsha" => "EVALSHA",
            "eval" => "EVAL",
            _ => "SCRIPT",
        })
}

fn looks_like_tls(detail: &str) -> bool {
    let lower = detail.to_ascii_lowercase();
    lower.contains("tls") || lower.contains("ssl") || lower.contains("certificate")
}

/// The peer closed a TLS connection without a close_notify: the openssl
/// crate says "unexpected EOF" in an I/O error of kind `Other`, where a
/// plain socket gives `UnexpectedEof`. Seen on Debian 13 (OpenSSL 3.5,
/// Redis 8.0) when the server drops a client without a certificate right
/// after the TLS 1.3 handshake.
fn closed_under_tls(detail: &str) -> bool {
    detail.to_ascii_lowercase().contains("unexpected eof")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io_err(kind: std::io::ErrorKind) -> redis::RedisError {
        redis::RedisError::from(std::io::Error::new(kind, "boom"))
    }

    #[test]
    fn broken_pipe_is_retryable_connection_error() {
        let e = LockError::from_redis("redis://h:1", &io_err(std::io::ErrorKind::BrokenPipe));
        assert!(e.is_connection_error());
        assert!(e.is_retryable());
        assert!(!e.is_timeout());
    }

    #[test]
    fn tls_eof_is_a_dropped_connection() {
        // What the openssl crate reports when the peer closed the socket.
        let io = std::io::Error::other("unexpected EOF");
        let e = LockError::from_redis("rediss://h:1", &redis::RedisError::from(io));
        assert!(
            matches!(
                e,
                LockError::Connection {
                    kind: ConnectionFailure::Dropped,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.is_retryable());
    }

    #[test]
    fn timeout_is_not_retryable() {
        let e = LockError::from_redis("redis://h:1", &io_err(std::io::ErrorKind::WouldBlock));
        assert!(e.is_timeout());
        assert!(!e.is_retryable());
    }

    #[test]
    fn refusal_is_unreachable() {
        let e = LockError::from_redis(
            "redis://h:1",
            &io_err(std::io::ErrorKind::ConnectionRefused),
        );
        assert!(matches!(
            e,
            LockError::Connection {
                kind: ConnectionFailure::Unreachable,
                ..
            }
        ));
        assert!(!e.is_retryable());
    }

    #[test]
    fn refused_scripts_are_named_and_arguments_cut() {
        let err = redis::RedisError::from((
            redis::ErrorKind::Server(redis::ServerErrorKind::ResponseError),
            "An error was signalled by the server",
            "unknown command 'EVALSHA', with args beginning with: 'abc' '1' 'k' 'tok3n'".into(),
        ));
        let msg = LockError::from_redis("redis://h:1/0", &err).to_string();
        assert!(msg.contains("refuses EVALSHA"), "{msg}");
        assert!(msg.contains("needs EVAL/EVALSHA"), "{msg}");
        assert!(!msg.contains("tok3n"), "{msg}");
    }

    #[test]
    fn redirects_are_classified_by_kind_not_by_text() {
        let server_error = |code: &str, detail: &str| {
            let reply = format!("-{code} {detail}\r\n");
            let value = redis::parse_redis_value(reply.as_bytes()).unwrap();
            value.extract_error().unwrap_err()
        };
        let moved = LockError::from_redis("s", &server_error("MOVED", "3999 127.0.0.1:7002"));
        assert!(
            matches!(&moved, LockError::Redirected { redirect: Redirect::Moved { slot: 3999, node }, .. } if node == "127.0.0.1:7002"),
            "{moved:?}"
        );
        assert!(moved.to_string().contains("\"cluster\" => true"), "{moved}");
        let ask = LockError::from_redis("s", &server_error("ASK", "12 10.0.0.1:7000"));
        assert!(matches!(
            ask,
            LockError::Redirected {
                redirect: Redirect::Ask { slot: 12, .. },
                ..
            }
        ));
        let readonly = LockError::from_redis(
            "s",
            &server_error("READONLY", "You can't write against a read only replica."),
        );
        assert!(matches!(
            readonly,
            LockError::Redirected {
                redirect: Redirect::ReadOnly,
                ..
            }
        ));
        assert!(readonly.to_string().contains("replica"), "{readonly}");
        for code in ["TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN"] {
            let busy = LockError::from_redis("s", &server_error(code, "wait"));
            assert!(
                matches!(
                    busy,
                    LockError::Redirected {
                        redirect: Redirect::Busy,
                        ..
                    }
                ),
                "{code}"
            );
        }
        assert!(!readonly.is_connection_error());
    }

    #[test]
    fn invalid_argument_message_names_param() {
        let e = LockError::invalid("ttl", "must be greater than 0");
        assert_eq!(e.to_string(), "ttl must be greater than 0");
    }

    #[test]
    fn acl_refusals_are_told_apart_in_any_case() {
        let server = |detail: &str| LockError::Server {
            server: "redis://h".into(),
            detail: detail.into(),
        };
        for refused in [
            "NOPERM this user has no permissions to run the 'blpop' command",
            "NoPerm: this user has no permissions to run the 'blpop' command",
            "ResponseError: The user executing the script can't run this command",
            "redislock: this user may not run DEL on k: its ACL refuses ...",
            "redislock (semaphore): this user may not run ZREM on s~~s: ...",
        ] {
            assert!(server(refused).is_acl_refusal(), "{refused}");
        }
        assert!(!server("ERR wrong number of arguments").is_acl_refusal());
        assert!(!LockError::invalid("ttl", "no permissions to").is_acl_refusal());
    }
}
