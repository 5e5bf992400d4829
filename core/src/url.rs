//! Parsing of server URLs:
//! `redis://[[user]:password@]host[:port][/db]`, `rediss://...` (TLS) and
//! `unix:///path/redis.sock[?db=N&user=U&password=P]`.
//!
//! Passwords are kept out of every rendering: [`ServerUrl::redacted`] and the
//! error messages of [`ServerUrl::parse`] show `***` in their place.

use std::fmt;
use std::path::PathBuf;

use crate::error::{LockError, Result};

/// The port used when a `redis://` URL names none.
pub const DEFAULT_PORT: u16 = 6379;

/// Highest database number accepted in a URL.
pub const MAX_DB: i64 = i32::MAX as i64;

/// Where a server listens.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// TCP, optionally wrapped in TLS (`rediss://`).
    Tcp {
        /// Host name or IP address (IPv6 without brackets).
        host: String,
        /// TCP port.
        port: u16,
        /// Whether the connection uses TLS.
        tls: bool,
    },
    /// A unix domain socket.
    Unix {
        /// Filesystem path of the socket.
        path: PathBuf,
    },
}

/// One parsed server URL.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ServerUrl {
    /// Where to connect.
    pub endpoint: Endpoint,
    /// ACL user name, if any.
    pub username: Option<String>,
    /// Password, if any. Never printed.
    pub password: Option<String>,
    /// Database number selected after connecting.
    pub db: i64,
}

impl fmt::Debug for ServerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl fmt::Display for ServerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl ServerUrl {
    /// Parses one URL. `param` names the argument in error messages.
    pub fn parse(param: &str, input: &str) -> Result<Self> {
        let bad = |why: &str| {
            LockError::invalid(
                param,
                format!(
                    "has a malformed server URL \"{}\": {why}",
                    redact_raw(input)
                ),
            )
        };
        let (scheme, rest) = input
            .split_once("://")
            .ok_or_else(|| bad("expected redis://, rediss:// or unix://"))?;
        match scheme.to_ascii_lowercase().as_str() {
            "redis" => parse_tcp(rest, false).map_err(|why| bad(&why)),
            "rediss" => parse_tcp(rest, true).map_err(|why| bad(&why)),
            "unix" => parse_unix(rest).map_err(|why| bad(&why)),
            _ => Err(bad("unknown scheme, expected redis, rediss or unix")),
        }
    }

    /// The URL with the password replaced by `***`.
    pub fn redacted(&self) -> String {
        let auth = match (&self.username, &self.password) {
            (None, None) => String::new(),
            (Some(u), None) => format!("{u}@"),
            (u, Some(_)) => format!("{}:***@", u.as_deref().unwrap_or("")),
        };
        match &self.endpoint {
            Endpoint::Tcp { host, port, tls } => {
                let scheme = if *tls { "rediss" } else { "redis" };
                let host = if host.contains(':') {
                    format!("[{host}]")
                } else {
                    host.clone()
                };
                format!("{scheme}://{auth}{host}:{port}/{}", self.db)
            }
            Endpoint::Unix { path } => {
                let mut out = format!("unix://{}?db={}", path.display(), self.db);
                if let Some(u) = &self.username {
                    out.push_str(&format!("&user={u}"));
                }
                if self.password.is_some() {
                    out.push_str("&password=***");
                }
                out
            }
        }
    }
}

fn parse_tcp(rest: &str, tls: bool) -> std::result::Result<ServerUrl, String> {
    let (authority, tail) = match rest.find(['/', '?', '#']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    if tail.contains(['?', '#']) {
        return Err("query strings and fragments are not supported in redis:// URLs".into());
    }
    let (userinfo, hostport) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    let (username, password) = match userinfo {
        None => (None, None),
        Some(info) => match info.split_once(':') {
            Some((u, p)) => (non_empty(decode(u)?), Some(decode(p)?)),
            None => (non_empty(decode(info)?), None),
        },
    };
    let (host, port) = split_host_port(hostport)?;
    let db = match tail.trim_start_matches('/') {
        "" => 0,
        db => parse_db(db)?,
    };
    Ok(ServerUrl {
        endpoint: Endpoint::Tcp { host, port, tls },
        username,
        password,
        db,
    })
}

fn split_host_port(hostport: &str) -> std::result::Result<(String, u16), String> {
    let (host, port) = if let Some(inner) = hostport.strip_prefix('[') {
        let (host, after) = inner
            .split_once(']')
            .ok_or("unterminated [ in IPv6 address")?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':').ok_or("expected :port after ]")?),
        };
        (host, port)
    } else {
        match hostport.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (hostport, None),
        }
    };
    if host.is_empty() {
        return Err("missing host".into());
    }
    if host.contains([' ', '/', '@', '[', ']']) || host.chars().any(char::is_control) {
        return Err("invalid character in host".into());
    }
    let port = match port {
        None => DEFAULT_PORT,
        Some(p) => match p.parse::<u16>() {
            Ok(0) | Err(_) => return Err("port must be a number from 1 to 65535".into()),
            Ok(n) => n,
        },
    };
    Ok((host.to_owned(), port))
}

fn parse_unix(rest: &str) -> std::result::Result<ServerUrl, String> {
    let (path, query) = match rest.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (rest, None),
    };
    if !path.starts_with('/') {
        return Err("the socket path must be absolute (unix:///path/to/redis.sock)".into());
    }
    let path = decode(path)?;
    if path.contains('\0') {
        return Err("the socket path must not contain NUL".into());
    }
    let mut url = ServerUrl {
        endpoint: Endpoint::Unix {
            path: PathBuf::from(path),
        },
        username: None,
        password: None,
        db: 0,
    };
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        match name {
            "db" => url.db = parse_db(value)?,
            "user" => url.username = non_empty(decode(value)?),
            "password" => url.password = Some(decode(value)?),
            other => {
                return Err(format!(
                    "unknown query parameter \"{other}\" (known: db, user, password)"
                ));
            }
        }
    }
    Ok(url)
}

fn parse_db(text: &str) -> std::result::Result<i64, String> {
    match text.parse::<i64>() {
        Ok(db) if (0..=MAX_DB).contains(&db) && text.bytes().all(|b| b.is_ascii_digit()) => Ok(db),
        _ => Err("the database must be a number from 0".into()),
    }
}

fn non_empty(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}

/// Decodes `%XX` escapes. Invalid escapes and non-UTF-8 results are errors.
fn decode(text: &str) -> std::result::Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or("invalid %-escape")?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "a %-escape does not decode to UTF-8".into())
}

/// Masks the password of a URL that may not parse, for error messages.
///
/// A password may contain unescaped `/`, `?`, `#` or `@`, so everything
/// between the scheme and the *last* `@` of the whole string is treated as
/// credentials: only the user name before the first `:` is kept.
pub fn redact_raw(input: &str) -> String {
    let Some(start) = input.find("://").map(|i| i + 3) else {
        return if input.contains('@') {
            "***".into()
        } else {
            input.into()
        };
    };
    let mut out = input.to_owned();
    // unix:// URLs carry the password in the query string.
    if let Some(q) = out.find("password=") {
        let value_start = q + "password=".len();
        let value_end = out[value_start..]
            .find('&')
            .map_or(out.len(), |i| value_start + i);
        out.replace_range(value_start..value_end, "***");
    }
    if let Some(at) = out[start..].rfind('@') {
        let userinfo = &out[start..start + at];
        let masked = match userinfo.split_once(':') {
            Some((user, _)) => format!("{user}:***"),
            None => userinfo.to_owned(),
        };
        out.replace_range(start..start + at, &masked);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> ServerUrl {
        ServerUrl::parse("servers", s).unwrap()
    }

    fn err(s: &str) -> String {
        ServerUrl::parse("servers", s).unwrap_err().to_string()
    }

    #[test]
    fn plain_host_gets_default_port_and_db() {
        let u = parse("redis://127.0.0.1");
        assert_eq!(
            u.endpoint,
            Endpoint::Tcp {
                host: "127.0.0.1".into(),
                port: 6379,
                tls: false
            }
        );
        assert_eq!(u.db, 0);
        assert_eq!(u.redacted(), "redis://127.0.0.1:6379/0");
    }

    #[test]
    fn full_url_with_acl_user_and_encoded_password() {
        let u = parse("rediss://alice:p%40ss%3Aw0rd@cache.example:6380/3");
        assert_eq!(u.username.as_deref(), Some("alice"));
        assert_eq!(u.password.as_deref(), Some("p@ss:w0rd"));
        assert_eq!(u.db, 3);
        assert_eq!(u.redacted(), "rediss://alice:***@cache.example:6380/3");
    }

    #[test]
    fn password_only() {
        let u = parse("redis://:secret@h:1/");
        assert_eq!(u.username, None);
        assert_eq!(u.password.as_deref(), Some("secret"));
        assert!(!format!("{u:?}").contains("secret"));
    }

    #[test]
    fn ipv6_host() {
        let u = parse("redis://[::1]:7000");
        assert_eq!(
            u.endpoint,
            Endpoint::Tcp {
                host: "::1".into(),
                port: 7000,
                tls: false
            }
        );
        assert_eq!(u.redacted(), "redis://[::1]:7000/0");
    }

    #[test]
    fn unix_socket_with_query() {
        let u = parse("unix:///run/redis.sock?db=2&password=s%26cret");
        assert_eq!(
            u.endpoint,
            Endpoint::Unix {
                path: "/run/redis.sock".into()
            }
        );
        assert_eq!(u.db, 2);
        assert_eq!(u.password.as_deref(), Some("s&cret"));
        assert_eq!(u.redacted(), "unix:///run/redis.sock?db=2&password=***");
    }

    #[test]
    fn malformed_urls_are_rejected_without_leaking_passwords() {
        for bad in [
            "127.0.0.1:6379",
            "http://h",
            "redis://",
            "redis://:pw@",
            "redis://h:0",
            "redis://h:99999",
            "redis://h:abc",
            "redis://h/x",
            "redis://h/-1",
            "redis://h?timeout=1",
            "redis://[::1",
            "unix://relative.sock",
            "unix:///s.sock?foo=1",
            "redis://u:pa%zzss@h",
        ] {
            let msg = err(bad);
            assert!(
                msg.starts_with("servers has a malformed server URL"),
                "{bad}: {msg}"
            );
        }
        let msg = err("redis://bob:hunter2@h:notaport");
        assert!(!msg.contains("hunter2"), "{msg}");
        assert!(msg.contains("bob:***@"), "{msg}");
        let msg = err("unix://x.sock?password=hunter2");
        assert!(!msg.contains("hunter2"), "{msg}");
    }

    #[test]
    fn raw_redaction_masks_only_the_password() {
        assert_eq!(redact_raw("redis://u:p@h:1/0"), "redis://u:***@h:1/0");
        assert_eq!(redact_raw("redis://u@h"), "redis://u@h");
        assert_eq!(redact_raw("redis://h"), "redis://h");
        assert_eq!(redact_raw("u:p@h"), "***");
        assert_eq!(redact_raw("redis://:hunter2/x@h:1"), "redis://:***@h:1");
        assert_eq!(redact_raw("redis://:p@ss/SECRET@h"), "redis://:***@h");
        assert_eq!(redact_raw("redis://u:a?b#c@h/0"), "redis://u:***@h/0");
    }
}
