//! Lock options: their names, the kind of value each takes, defaults and
//! validation. The binding converts PHP values to [`OptionValue`] using
//! [`OptionKind`]; everything else happens here.

use std::path::PathBuf;
use std::time::Duration;

use crate::config::duration;
use crate::error::{LockError, Result};
use crate::protocol::token;

/// The kind of value an option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionKind {
    /// `true` / `false`, 0 / 1, or an ini word ("on", "no", ...).
    Bool,
    /// Seconds as a float, strictly positive.
    Seconds,
    /// Seconds as a float, strictly positive, or `null` for none.
    NullableSeconds,
    /// Seconds as a float, 0 or more (a wait).
    Wait,
    /// A string.
    Text,
    /// A string, or `null` for none.
    NullableText,
    /// A float from 0 (inclusive) to 0.5 (exclusive).
    Fraction,
    /// A whole number, 0 or more.
    Count,
}

impl OptionKind {
    /// The PHP type name used in `TypeError` messages.
    pub fn php_type(self) -> &'static str {
        match self {
            Self::Bool => "bool",
            Self::Seconds | Self::Wait | Self::Fraction => "float",
            Self::NullableSeconds => "?float",
            Self::Text => "string",
            Self::NullableText => "?string",
            Self::Count => "int",
        }
    }
}

/// The words a bool option takes as strings (as php.ini does), compared
/// without case: true, then false.
const TRUE_WORDS: [&str; 4] = ["1", "true", "on", "yes"];
const FALSE_WORDS: [&str; 5] = ["0", "false", "off", "no", ""];

/// A bool option's value: a bool, 0 or 1, or an ini word. Anything else is
/// an error, so `'false'` never turns into true.
fn flag(param: &str, value: OptionValue) -> Result<bool> {
    let word = match &value {
        OptionValue::Bool(b) => return Ok(*b),
        OptionValue::Number(n) if *n == 0.0 => return Ok(false),
        OptionValue::Number(n) if *n == 1.0 => return Ok(true),
        OptionValue::Text(t) => String::from_utf8_lossy(t).to_ascii_lowercase(),
        _ => String::from("?"),
    };
    if TRUE_WORDS.contains(&word.as_str()) {
        Ok(true)
    } else if FALSE_WORDS.contains(&word.as_str()) {
        Ok(false)
    } else {
        Err(LockError::invalid(
            param,
            "must be a bool, 0, 1, or one of \"1\", \"0\", \"true\", \"false\", \"on\", \"off\", \"yes\", \"no\", \"\"",
        ))
    }
}

/// Most replicas option `replicas` may ask for.
pub const MAX_REPLICAS: u32 = 1000;

/// Every option name with its kind, in documentation order.
pub const OPTIONS: &[(&str, OptionKind)] = &[
    ("prefix", OptionKind::Text),
    ("auto_release", OptionKind::Bool),
    ("auto_renew", OptionKind::Bool),
    ("max_hold", OptionKind::NullableSeconds),
    ("fencing", OptionKind::Bool),
    ("retry_delay", OptionKind::Seconds),
    ("connect_timeout", OptionKind::Seconds),
    ("read_timeout", OptionKind::Seconds),
    ("cluster", OptionKind::Bool),
    ("sentinel", OptionKind::NullableText),
    ("sentinel_user", OptionKind::NullableText),
    ("sentinel_password", OptionKind::NullableText),
    ("replicas", OptionKind::Count),
    ("drift_factor", OptionKind::Fraction),
    ("tls_verify", OptionKind::Bool),
    ("tls_ca", OptionKind::NullableText),
    ("tls_cert", OptionKind::NullableText),
    ("tls_key", OptionKind::NullableText),
    ("on_lost", OptionKind::Text),
    ("reentrant", OptionKind::Bool),
    ("owner", OptionKind::NullableText),
    ("unsafe_server", OptionKind::Text),
    ("starve_after", OptionKind::Wait),
];

/// Looks up the kind of an option by name.
pub fn kind_of(name: &str) -> Option<OptionKind> {
    OPTIONS.iter().find(|(n, _)| *n == name).map(|(_, k)| *k)
}

/// A value already converted to the option's kind by the caller.
#[derive(Debug, Clone, PartialEq)]
pub enum OptionValue {
    /// PHP `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A number of seconds or a fraction.
    Number(f64),
    /// A byte string.
    Text(Vec<u8>),
}

/// A password: compared and used, never shown (`Debug` prints `***`).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

/// An owner token given as option `owner`: used, never shown (`Debug`
/// prints `***`).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Owner(pub Vec<u8>);

impl std::fmt::Debug for Owner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

/// TLS settings for `rediss://` servers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TlsOptions {
    /// Verify the server certificate and host name (default true).
    pub verify: bool,
    /// PEM file of the CAs to trust (every certificate in it) instead of the
    /// system store.
    pub ca: Option<PathBuf>,
    /// PEM client certificate for mutual TLS.
    pub cert: Option<PathBuf>,
    /// PEM private key of the client certificate.
    pub key: Option<PathBuf>,
}

impl Default for TlsOptions {
    fn default() -> Self {
        Self {
            verify: true,
            ca: None,
            cert: None,
            key: None,
        }
    }
}

/// What to do when the renewal thread finds an auto-renewed lease lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnLost {
    /// Only record it: `isAcquired()` turns false, `withLock()` throws
    /// `LockLostException` after the callback returns.
    Ignore,
    /// Also interrupt the running `withLock()` callback with
    /// `LockLostException` at its next opcode.
    Interrupt,
}

/// What an acquire does on a server that can lose a held lock by itself
/// (an evicting `maxmemory`, no append-only file: `net::facts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnsafeServer {
    /// Take the lock, and record the server as unsafe (`stats()`,
    /// `metrics()`, `phpinfo()`), once per process and server.
    Warn,
    /// Refuse: the acquire throws, naming the setting and the fix.
    Refuse,
    /// Neither look nor record.
    Ignore,
}

impl UnsafeServer {
    /// Reads `warn`, `refuse` or `ignore`.
    pub fn parse(text: &[u8]) -> Option<Self> {
        match text {
            b"warn" => Some(Self::Warn),
            b"refuse" => Some(Self::Refuse),
            b"ignore" => Some(Self::Ignore),
            _ => None,
        }
    }
}

/// Default connect timeout.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Default read (and write) timeout.
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(2);
/// Default longest time a queued waiter sleeps before it checks the lock
/// itself (what a lost wake-up can cost at most).
pub const DEFAULT_RETRY_DELAY: Duration = Duration::from_millis(500);
/// Longest key prefix accepted, in bytes.
pub const MAX_PREFIX_LEN: usize = 1024;

/// A key prefix, if it is one: at most [`MAX_PREFIX_LEN`] bytes, without
/// the `~~` that only helper keys contain. `param` names it in errors.
pub fn checked_prefix(param: &str, prefix: Vec<u8>) -> Result<Vec<u8>> {
    if prefix.len() > MAX_PREFIX_LEN {
        return Err(LockError::invalid(
            param,
            format!("must be at most {MAX_PREFIX_LEN} bytes long"),
        ));
    }
    if crate::protocol::keys::has_separator(&prefix) {
        return Err(LockError::invalid(
            param,
            "must not contain \"~~\": redislock's helper keys use it",
        ));
    }
    Ok(prefix)
}

/// Default Redlock clock drift factor.
pub const DEFAULT_DRIFT_FACTOR: f64 = 0.01;

/// All options of one lock.
#[derive(Debug, Clone, PartialEq)]
pub struct LockOptions {
    /// Prepended to every key.
    pub prefix: Vec<u8>,
    /// Release holds when their object is destroyed or the request ends.
    pub auto_release: bool,
    /// Extend the lease in the background while held.
    pub auto_renew: bool,
    /// Upper bound on auto-renewal.
    pub max_hold: Option<Duration>,
    /// Hand out fencing tokens on acquire.
    pub fencing: bool,
    /// Longest time a queued waiter sleeps before it checks the lock itself.
    pub retry_delay: Duration,
    /// TCP/TLS connect timeout.
    pub connect_timeout: Duration,
    /// Read and write timeout of every command.
    pub read_timeout: Duration,
    /// Treat the servers as Redis Cluster seed nodes.
    pub cluster: bool,
    /// Treat the servers as Sentinels for this master name.
    pub sentinel: Option<String>,
    /// ACL user for the Sentinels (not the master).
    pub sentinel_user: Option<String>,
    /// Password for the Sentinels (not the master); never shown.
    pub sentinel_password: Option<Secret>,
    /// Replicas that must acknowledge an acquire, refresh or hand-over
    /// (`WAIT`); 0 for none.
    pub replicas: u32,
    /// Redlock clock drift factor.
    pub drift_factor: f64,
    /// TLS settings.
    pub tls: TlsOptions,
    /// Reaction to a lost auto-renewed lease.
    pub on_lost: OnLost,
    /// Whether a second acquire of a key this process (this Fiber) holds
    /// joins the hold; false: it competes like another process.
    pub reentrant: bool,
    /// The token of this object's holds; `None`: a fresh random one each.
    pub owner: Option<Owner>,
    /// What an acquire does on a server that can lose a held lock by
    /// itself.
    pub unsafe_server: UnsafeServer,
    /// How long a queued writer lets a free lock go to whoever asks first
    /// (barging) before a release hands it the lock in arrival order;
    /// zero (the default): from its first step (strict FIFO).
    pub starve_after: Duration,
}

impl Default for LockOptions {
    fn default() -> Self {
        Self {
            prefix: Vec::new(),
            auto_release: true,
            auto_renew: false,
            max_hold: None,
            fencing: false,
            retry_delay: DEFAULT_RETRY_DELAY,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            read_timeout: DEFAULT_READ_TIMEOUT,
            cluster: false,
            sentinel: None,
            sentinel_user: None,
            sentinel_password: None,
            replicas: 0,
            drift_factor: DEFAULT_DRIFT_FACTOR,
            tls: TlsOptions::default(),
            on_lost: OnLost::Ignore,
            reentrant: true,
            owner: None,
            unsafe_server: UnsafeServer::Warn,
            starve_after: Duration::ZERO,
        }
    }
}

/// The options of a connection to one server, the only ones that reach
/// the connection layer (`net`): its timeouts and its TLS settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectionOptions {
    /// TCP/TLS connect timeout.
    pub connect_timeout: Duration,
    /// Read and write timeout of every command.
    pub read_timeout: Duration,
    /// TLS settings (used where the URL asks for TLS).
    pub tls: TlsOptions,
}

impl Default for ConnectionOptions {
    /// The connection options of [`LockOptions::default`].
    fn default() -> Self {
        LockOptions::default().connection()
    }
}

/// The options that choose and build a topology (`topology`): which one
/// (`cluster`, `sentinel`), its own settings, its servers' connections,
/// and the two that a hold asks of every topology and that Redlock
/// refuses (`fencing`, `replicas`). Equal groups share one topology.
#[derive(Debug, Clone, PartialEq)]
pub struct TopologyOptions {
    /// Treat the servers as Redis Cluster seed nodes.
    pub cluster: bool,
    /// Treat the servers as Sentinels for this master name.
    pub sentinel: Option<String>,
    /// ACL user for the Sentinels (not the master).
    pub sentinel_user: Option<String>,
    /// Password for the Sentinels (not the master); never shown.
    pub sentinel_password: Option<Secret>,
    /// Redlock clock drift factor.
    pub drift_factor: f64,
    /// Holds hand out fencing tokens (Redlock refuses).
    pub fencing: bool,
    /// Replicas that must acknowledge writes (Redlock refuses).
    pub replicas: u32,
    /// Each server's connections.
    pub connection: ConnectionOptions,
}

impl LockOptions {
    /// The options of each connection (timeouts, TLS), apart from the
    /// topology's and the holds'.
    pub fn connection(&self) -> ConnectionOptions {
        ConnectionOptions {
            connect_timeout: self.connect_timeout,
            read_timeout: self.read_timeout,
            tls: self.tls.clone(),
        }
    }

    /// The options of the topology (and its connections), apart from the
    /// holds'.
    pub fn topology(&self) -> TopologyOptions {
        TopologyOptions {
            cluster: self.cluster,
            sentinel: self.sentinel.clone(),
            sentinel_user: self.sentinel_user.clone(),
            sentinel_password: self.sentinel_password.clone(),
            drift_factor: self.drift_factor,
            fencing: self.fencing,
            replicas: self.replicas,
            connection: self.connection(),
        }
    }

    /// Sets one option. `value` must already have the option's kind (the
    /// binding raises `TypeError` otherwise); range checks happen here.
    pub fn set(&mut self, name: &str, value: OptionValue) -> Result<()> {
        let param = format!("option \"{name}\"");
        let kind = kind_of(name).ok_or_else(|| {
            let known: Vec<&str> = OPTIONS.iter().map(|(n, _)| *n).collect();
            LockError::invalid(
                "options",
                format!(
                    "contains unknown option \"{name}\" (known: {})",
                    known.join(", ")
                ),
            )
        })?;
        let mismatch = || {
            LockError::invalid(
                param.clone(),
                format!("must be of type {}", kind.php_type()),
            )
        };
        let value = match (kind, value) {
            (OptionKind::Bool, value) => OptionValue::Bool(flag(&param, value)?),
            (_, value) => value,
        };
        match (name, value) {
            ("prefix", OptionValue::Text(t)) => self.prefix = checked_prefix(&param, t)?,
            ("auto_release", OptionValue::Bool(b)) => self.auto_release = b,
            ("auto_renew", OptionValue::Bool(b)) => self.auto_renew = b,
            ("reentrant", OptionValue::Bool(b)) => self.reentrant = b,
            ("owner", OptionValue::Null) => self.owner = None,
            ("owner", OptionValue::Text(t)) => {
                token::validate_token(&t).map_err(|e| match e {
                    LockError::InvalidArgument { reason, .. } => {
                        LockError::invalid(param.clone(), reason)
                    }
                    other => other,
                })?;
                self.owner = Some(Owner(t));
            }
            ("max_hold", OptionValue::Null) => self.max_hold = None,
            ("max_hold", OptionValue::Number(s)) => {
                self.max_hold = Some(duration::positive(&param, s)?)
            }
            ("fencing", OptionValue::Bool(b)) => self.fencing = b,
            ("starve_after", OptionValue::Number(s)) => {
                self.starve_after = duration::wait(&param, s)?
            }
            ("retry_delay", OptionValue::Number(s)) => {
                self.retry_delay = duration::positive(&param, s)?
            }
            ("connect_timeout", OptionValue::Number(s)) => {
                self.connect_timeout = duration::positive(&param, s)?
            }
            ("read_timeout", OptionValue::Number(s)) => {
                self.read_timeout = duration::positive(&param, s)?
            }
            ("cluster", OptionValue::Bool(b)) => self.cluster = b,
            ("sentinel", OptionValue::Null) => self.sentinel = None,
            ("sentinel", OptionValue::Text(t)) => self.sentinel = Some(non_empty_utf8(&param, t)?),
            ("sentinel_user", OptionValue::Null) => self.sentinel_user = None,
            ("sentinel_user", OptionValue::Text(t)) => {
                self.sentinel_user = Some(non_empty_utf8(&param, t)?)
            }
            ("sentinel_password", OptionValue::Null) => self.sentinel_password = None,
            ("sentinel_password", OptionValue::Text(t)) => {
                self.sentinel_password = Some(Secret(non_empty_utf8(&param, t)?))
            }
            ("replicas", OptionValue::Number(n)) => {
                if n.fract() != 0.0 || !(0.0..=f64::from(MAX_REPLICAS)).contains(&n) {
                    return Err(LockError::invalid(
                        param,
                        format!("must be a whole number from 0 to {MAX_REPLICAS}"),
                    ));
                }
                self.replicas = n as u32;
            }
            ("drift_factor", OptionValue::Number(f)) => {
                if !(0.0..0.5).contains(&f) {
                    return Err(LockError::invalid(
                        param,
                        "must be at least 0 and less than 0.5",
                    ));
                }
                self.drift_factor = f;
            }
            ("tls_verify", OptionValue::Bool(b)) => self.tls.verify = b,
            ("unsafe_server", OptionValue::Text(t)) => {
                self.unsafe_server = UnsafeServer::parse(&t).ok_or_else(|| {
                    LockError::invalid(param.clone(), "must be \"warn\", \"refuse\" or \"ignore\"")
                })?;
            }
            ("on_lost", OptionValue::Text(t)) => {
                self.on_lost = match t.as_slice() {
                    b"ignore" => OnLost::Ignore,
                    b"interrupt" => OnLost::Interrupt,
                    _ => {
                        return Err(LockError::invalid(
                            param,
                            "must be \"ignore\" or \"interrupt\"",
                        ));
                    }
                }
            }
            ("tls_ca", v) => self.tls.ca = path(&param, v).ok_or_else(mismatch)??,
            ("tls_cert", v) => self.tls.cert = path(&param, v).ok_or_else(mismatch)??,
            ("tls_key", v) => self.tls.key = path(&param, v).ok_or_else(mismatch)??,
            _ => return Err(mismatch()),
        }
        Ok(())
    }

    /// Checks combinations of options that are each valid alone.
    pub fn validate(&self) -> Result<()> {
        if self.tls.cert.is_some() != self.tls.key.is_some() {
            return Err(LockError::invalid(
                "options",
                "must set tls_cert and tls_key together",
            ));
        }
        if self.on_lost == OnLost::Interrupt && !self.auto_renew {
            return Err(LockError::invalid(
                "options",
                "on_lost => \"interrupt\" needs auto_renew => true",
            ));
        }
        if self.sentinel.is_none()
            && (self.sentinel_user.is_some() || self.sentinel_password.is_some())
        {
            return Err(LockError::invalid(
                "options",
                "sets sentinel_user or sentinel_password without sentinel",
            ));
        }
        if self.cluster && self.sentinel.is_some() {
            return Err(LockError::invalid(
                "options",
                "cannot set both cluster and sentinel",
            ));
        }
        Ok(())
    }
}

fn non_empty_utf8(param: &str, bytes: Vec<u8>) -> Result<String> {
    let text =
        String::from_utf8(bytes).map_err(|_| LockError::invalid(param, "must be valid UTF-8"))?;
    if text.is_empty() {
        return Err(LockError::invalid(param, "must not be empty"));
    }
    Ok(text)
}

/// `None` when the value has the wrong kind.
fn path(param: &str, value: OptionValue) -> Option<Result<Option<PathBuf>>> {
    match value {
        OptionValue::Null => Some(Ok(None)),
        OptionValue::Text(t) => Some(non_empty_utf8(param, t).map(|s| Some(PathBuf::from(s)))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_option_has_a_kind_and_accepts_a_value_of_it() {
        for (name, kind) in OPTIONS {
            let value = match kind {
                OptionKind::Bool => OptionValue::Bool(true),
                OptionKind::Seconds | OptionKind::NullableSeconds | OptionKind::Wait => {
                    OptionValue::Number(1.5)
                }
                OptionKind::Text if *name == "on_lost" => OptionValue::Text(b"ignore".to_vec()),
                OptionKind::Text if *name == "unsafe_server" => OptionValue::Text(b"warn".to_vec()),
                OptionKind::Text | OptionKind::NullableText => OptionValue::Text(b"x".to_vec()),
                OptionKind::Fraction => OptionValue::Number(0.1),
                OptionKind::Count => OptionValue::Number(2.0),
            };
            LockOptions::default().set(name, value).unwrap();
        }
    }

    #[test]
    fn unknown_option_lists_known_ones() {
        let err = LockOptions::default()
            .set("ttl", OptionValue::Number(1.0))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("options contains unknown option \"ttl\""),
            "{err}"
        );
        assert!(err.contains("auto_release"), "{err}");
    }

    #[test]
    fn ranges_are_checked() {
        let mut o = LockOptions::default();
        assert!(o.set("connect_timeout", OptionValue::Number(0.0)).is_err());
        assert!(o.set("drift_factor", OptionValue::Number(0.5)).is_err());
        assert!(o.set("sentinel", OptionValue::Text(vec![])).is_err());
        o.set("read_timeout", OptionValue::Number(0.25)).unwrap();
        assert_eq!(o.read_timeout, Duration::from_millis(250));
    }

    #[test]
    fn wrong_kind_is_reported() {
        let err = LockOptions::default()
            .set("read_timeout", OptionValue::Bool(true))
            .unwrap_err()
            .to_string();
        assert_eq!(err, "option \"read_timeout\" must be of type float");
    }

    #[test]
    fn bool_options_take_bools_zero_one_and_ini_words_only() {
        let mut o = LockOptions::default();
        for (value, expected) in [
            (OptionValue::Bool(false), false),
            (OptionValue::Number(1.0), true),
            (OptionValue::Number(0.0), false),
            (OptionValue::Text(b"false".to_vec()), false),
            (OptionValue::Text(b"Off".to_vec()), false),
            (OptionValue::Text(b"".to_vec()), false),
            (OptionValue::Text(b"YES".to_vec()), true),
        ] {
            o.set("auto_release", value).unwrap();
            assert_eq!(o.auto_release, expected);
        }
        for bad in [
            OptionValue::Number(2.0),
            OptionValue::Text(b"yes please".to_vec()),
            OptionValue::Null,
        ] {
            let err = o.set("auto_release", bad).unwrap_err().to_string();
            assert!(err.contains("must be a bool, 0, 1, or one of"), "{err}");
        }
    }

    #[test]
    fn tls_cert_needs_key() {
        let mut o = LockOptions::default();
        o.set("tls_cert", OptionValue::Text(b"/c.pem".to_vec()))
            .unwrap();
        assert!(o.validate().is_err());
        o.set("tls_key", OptionValue::Text(b"/k.pem".to_vec()))
            .unwrap();
        o.validate().unwrap();
    }
}
