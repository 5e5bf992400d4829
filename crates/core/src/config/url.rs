//! Parsing of server URLs:
//! `redis://[[user]:password@]host[:port][/db]`, `rediss://...` (TLS) and
//! `unix:///path/redis.sock[?db=N&user=U&password=P]`.
//!
//! Passwords are kept out of every rendering: [`ServerUrl::redacted`] and the
//! error messages of [`ServerUrl::parse`] show `***` in their place.

use std::fmt;
use std::path::PathBuf;

use crate::error::{LockError, Result};

/// The advice given when credentials in a URL are not URL-encoded.
const ENCODE_HINT: &str = "URL-encode the user name and password, e.g. with rawurlencode()";

/// Why a user name without a password is refused.
const USER_WITHOUT_PASSWORD: &str = "names a user but no password, so no AUTH could be sent: \
     write user:password@ (or :password@ for a password alone)";

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

    /// The keyspace this URL names, without credentials: two URLs with the
    /// same keyspace reach the same keys.
    pub fn keyspace(&self) -> String {
        match &self.endpoint {
            Endpoint::Tcp { host, port, .. } => format!("{host}:{port}/{}", self.db),
            Endpoint::Unix { path } => format!("unix:{}/{}", path.display(), self.db),
        }
    }

    /// The server this URL reaches, whatever it is called: the addresses
    /// its host resolves to (with the port), or the socket's canonical
    /// path. The database is left out: two databases of one server are one
    /// server. Resolves names with the system resolver (no Redis command);
    /// a name that does not resolve stands for itself.
    pub fn server_identity(&self) -> Vec<String> {
        match &self.endpoint {
            Endpoint::Tcp { host, port, .. } => {
                use std::net::ToSocketAddrs;
                let resolved: Vec<String> = (host.as_str(), *port)
                    .to_socket_addrs()
                    .map(|addrs| addrs.map(|a| a.to_string()).collect())
                    .unwrap_or_default();
                if resolved.is_empty() {
                    vec![format!("{host}:{port}")]
                } else {
                    resolved
                }
            }
            Endpoint::Unix { path } => {
                let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
                vec![format!("unix:{}", path.display())]
            }
        }
    }

    /// The URL with the password replaced by `***`.
    pub fn redacted(&self) -> String {
        let auth = match (&self.username, &self.password) {
            (None, None) => String::new(),
            // A user name without a password is never used (AUTH needs a
            // password): most likely a password written without its `:`.
            (Some(_), None) => "***@".to_owned(),
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
    if tail.contains('@') {
        // `redis://u:pa/ss@host`: the `/` (or `?`, `#`) belongs to the
        // password, which ended the authority early.
        return Err(format!(
            "the user name or password contains an unencoded '/', '?' or '#'; {ENCODE_HINT}"
        ));
    }
    if tail.contains(['?', '#']) {
        return Err("query strings and fragments are not supported in redis:// URLs".into());
    }
    let (userinfo, hostport) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    let credential = |text: &str| {
        decode(text).map_err(|why| format!("{why} in the user name or password; {ENCODE_HINT}"))
    };
    let (username, password) = match userinfo {
        None => (None, None),
        Some(info) => match info.split_once(':') {
            Some((u, p)) => (non_empty(credential(u)?), Some(credential(p)?)),
            None if info.is_empty() => (None, None),
            // AUTH needs a password: this is most often a password written
            // without its ':' (never echoed back).
            None => return Err(USER_WITHOUT_PASSWORD.into()),
        },
    };
    let (host, port) = split_host_port(hostport).map_err(|why| {
        if userinfo.is_none() && port_looks_like_password(hostport) {
            let scheme = if tls { "rediss" } else { "redis" };
            format!(
                "{why} (a password goes before the host, followed by @: \
                 {scheme}://[user]:password@host[:port])"
            )
        } else {
            why
        }
    })?;
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

/// `host:port` (or `[ipv6]:port`); the port defaults to [`DEFAULT_PORT`].
///
/// A host never contains `:` unless it is a bracketed IPv6 address, so text
/// such as `:password:7100` (credentials without `@`) is an error rather
/// than a host name that error messages would later show.
fn split_host_port(hostport: &str) -> std::result::Result<(String, u16), String> {
    let (host, port) = if let Some(inner) = hostport.strip_prefix('[') {
        let (host, after) = inner
            .split_once(']')
            .ok_or("unterminated [ in IPv6 address")?;
        let address = host
            .split_once('%')
            .map_or(host, |(address, _zone)| address);
        if address.parse::<std::net::Ipv6Addr>().is_err() {
            return Err("invalid IPv6 address in [brackets]".into());
        }
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':').ok_or("expected :port after ]")?),
        };
        (host, port)
    } else {
        match hostport.split_once(':') {
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
            Ok(n) if n > 0 && p.bytes().all(|b| b.is_ascii_digit()) => n,
            _ => return Err("port must be a number from 1 to 65535".into()),
        },
    };
    Ok((host.to_owned(), port))
}

/// True when the text after the first `:` of an unbracketed `host:port`
/// cannot be a port, or there is no host: `redis://:secret` or
/// `redis://user:secret` (credentials written without `@host`).
fn port_looks_like_password(hostport: &str) -> bool {
    if hostport.starts_with('[') {
        return false;
    }
    match hostport.split_once(':') {
        Some((host, port)) => {
            host.is_empty() || port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit())
        }
        None => false,
    }
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
    let credential = |text: &str| {
        decode(text).map_err(|why| format!("{why} in the user name or password; {ENCODE_HINT}"))
    };
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let Some((name, value)) = pair.split_once('=') else {
            // A bare word could be a password: never echo it.
            return Err(
                "every query parameter needs a name and a value (known: db, user, password)".into(),
            );
        };
        match name {
            "db" => url.db = parse_db(value)?,
            "user" => url.username = non_empty(credential(value)?),
            "password" => url.password = Some(credential(value)?),
            // The name is not quoted: after a raw '&' in a password, it is
            // the rest of the password.
            _ => {
                return Err("unknown query parameter (known: db, user, password; \
                     a '&' or '=' in a password must be URL-encoded)"
                    .to_owned());
            }
        }
    }
    if url.username.is_some() && url.password.is_none() {
        return Err(USER_WITHOUT_PASSWORD.into());
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

/// Masks everything in a URL that may not parse that could be a password,
/// for error messages.
///
/// Conservative by design, since the input is malformed:
/// - everything between the scheme and the *last* `@` is credentials (a
///   password may contain unencoded `/`, `?`, `#` or `@`): only the user
///   name before the first `:` is kept;
/// - without an `@`, text after the first `:` that is not a port number
///   (`redis://:secret`, `redis://user:secret`, `redis://:secret:7100`) is
///   masked to the end;
/// - the value of a query parameter whose name suggests a credential
///   (`password=`, `pass=`, `auth=`, ...), a query word without `=`, and a
///   fragment are masked.
pub fn redact_raw(input: &str) -> String {
    // A scheme is a letter, then letters, digits, `+`, `-` or `.` (RFC
    // 3986): in `u:pass://word` the `://` belongs to a password written
    // without a scheme, and the text is masked as one without a scheme.
    let scheme_end = input
        .find("://")
        .filter(|&i| is_scheme(&input[..i]))
        .map(|i| i + 3);
    let Some(scheme_end) = scheme_end else {
        if input.contains('@') {
            return "***".into();
        }
        return mask_authority(input);
    };
    let (head, body) = input.split_at(scheme_end);
    let unix = head.eq_ignore_ascii_case("unix://");
    let body = if unix {
        // unix:// URLs carry credentials in the query string; user info
        // before the path (`unix://u:pw@/path`, not a standard form) is
        // masked whole first, even when its password holds a raw `?`.
        if !body.starts_with('/') && body.contains('@') {
            mask_userinfo(body)
        } else {
            mask_query(body)
        }
    } else if body.contains('@') {
        mask_userinfo(body)
    } else {
        mask_authority(body)
    };
    format!("{head}{body}")
}

/// Whether `text` is a URL scheme (RFC 3986: `ALPHA *( ALPHA / DIGIT / "+"
/// / "-" / "." )`).
fn is_scheme(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
}

/// `user:password@rest` (split at the last `@`) to `user:***@rest`, with the
/// query of `rest` masked.
fn mask_userinfo(body: &str) -> String {
    let Some(at) = body.rfind('@') else {
        return body.to_owned();
    };
    let (userinfo, rest) = (&body[..at], &body[at + 1..]);
    let userinfo = match userinfo.split_once(':') {
        Some((user, _)) => format!("{user}:***"),
        // A lone user name may be a password written without its `:`.
        None if !userinfo.is_empty() => "***".to_owned(),
        None => String::new(),
    };
    format!("{userinfo}@{}", mask_query(rest))
}

/// `host:port/...` without `@`: masks from the first `:` to the end when
/// what follows it is not a port number (or there is no host).
fn mask_authority(body: &str) -> String {
    let end = body.find(['/', '?', '#']).unwrap_or(body.len());
    let authority = &body[..end];
    if let Some(inner) = authority.strip_prefix('[') {
        let valid = inner.split_once(']').is_some_and(|(address, after)| {
            let address = address.split_once('%').map_or(address, |(a, _)| a);
            address.parse::<std::net::Ipv6Addr>().is_ok()
                && (after.is_empty()
                    || after
                        .strip_prefix(':')
                        .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit())))
        });
        return if valid {
            mask_query(body)
        } else {
            "***".into()
        };
    }
    if port_looks_like_password(authority) {
        let colon = authority.find(':').unwrap_or(authority.len());
        return format!("{}:***", &body[..colon]);
    }
    mask_query(body)
}

/// Masks the query and the fragment: the values of credential-like
/// parameters, and every other pair but `db` and `user` (a raw `&` or `=`
/// in a password makes its rest look like another parameter), and
/// everything after a credential.
fn mask_query(text: &str) -> String {
    let (text, fragment) = match text.find('#') {
        Some(i) => (&text[..i], Some("#***")),
        None => (text, None),
    };
    let mut out = match text.split_once('?') {
        None => text.to_owned(),
        Some((before, query)) => {
            let mut secret = false;
            // A user without a password may be a password in the wrong
            // parameter: shown only beside a password.
            let with_password = query.split('&').any(|pair| {
                pair.split_once('=')
                    .is_some_and(|(n, _)| is_credential_name(n))
            });
            let pairs: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    _ if secret => "***".to_owned(),
                    Some((name, _)) if is_credential_name(name) => {
                        secret = true;
                        format!("{name}=***")
                    }
                    Some(("user", _)) if !with_password => "user=***".to_owned(),
                    Some((name, _)) if ["db", "user"].contains(&name) => pair.to_owned(),
                    None if pair.is_empty() => String::new(),
                    _ => "***".to_owned(),
                })
                .collect();
            format!("{before}?{}", pairs.join("&"))
        }
    };
    out.push_str(fragment.unwrap_or(""));
    out
}

/// Query parameter names whose values are masked in messages.
fn is_credential_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    ["pass", "pw", "auth", "secret", "token", "cred", "key"]
        .iter()
        .any(|word| name.contains(word))
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
        assert_eq!(redact_raw("redis://u@h:x"), "redis://***@h:x");
        assert_eq!(redact_raw("redis://@h:x"), "redis://@h:x");
        assert_eq!(redact_raw("redis://h"), "redis://h");
        assert_eq!(redact_raw("u:p@h"), "***");
        assert_eq!(redact_raw("redis://:hunter2/x@h:1"), "redis://:***@h:1");
        assert_eq!(redact_raw("redis://:p@ss/SECRET@h"), "redis://:***@h");
        assert_eq!(redact_raw("redis://u:a?b#c@h/0"), "redis://u:***@h/0");
        assert_eq!(redact_raw("redis://h:6379/x"), "redis://h:6379/x");
        assert_eq!(redact_raw("redis://[::1]:1/0"), "redis://[::1]:1/0");
        assert_eq!(redact_raw("h:6379"), "h:6379");
        assert_eq!(redact_raw("h:secret"), "h:***");
        // `://` inside a password written without a scheme is no scheme.
        assert_eq!(redact_raw("u:Ka1Mb2://Nc3"), "u:***");
        assert_eq!(redact_raw(":pw://x"), ":***");
    }

    /// Every way of writing a password, through both parse errors and
    /// [`redact_raw`]: the password never shows.
    #[test]
    fn no_url_form_leaks_its_password() {
        const PW: &str = "Hunter2pw";
        let forms = [
            format!("redis://:{PW}"),
            format!("redis://u:{PW}"),
            format!("redis://:{PW}:7100"),
            format!("redis://u:{PW}:7100/0"),
            format!("redis://:{PW}/0"),
            format!("redis://u:pa/{PW}@h:1"),
            format!("redis://u:pa?{PW}@h:1"),
            format!("redis://u:pa#{PW}@h:1"),
            format!("redis://:pa%{PW}@h"),
            format!("redis://[:{PW}]:7100"),
            format!("redis://h:1?password={PW}"),
            format!("redis://h:1#{PW}"),
            format!("rediss://:{PW}"),
            format!("rediss://u:{PW}"),
            format!("rediss://:{PW}:7100"),
            format!("rediss://u:{PW}@h:x"),
            format!("unix:///x.sock?pass={PW}"),
            format!("unix:///x.sock?password={PW}&x=1"),
            format!("unix:///x.sock?db=x&password={PW}"),
            format!("unix:///x.sock?password=a%zz{PW}"),
            format!("unix:///x.sock?{PW}"),
            format!("unix:///x.sock?auth={PW}"),
            format!("unix://:{PW}@/x.sock"),
            format!("u:{PW}"),
            format!(":{PW}"),
            format!("u:{PW}@h"),
            format!("u:{PW}://x"),
            format!("u:a://{PW}"),
        ];
        for form in &forms {
            let msg = err(form);
            assert!(!msg.contains(PW), "{form}: {msg}");
            assert!(
                msg.starts_with("servers has a malformed server URL \""),
                "{msg}"
            );
            let masked = redact_raw(form);
            assert!(!masked.contains(PW), "{form}: {masked}");
        }
    }

    #[test]
    fn a_user_name_without_password_is_refused_unechoed() {
        // `redis://secret@h` names a user without a password, so no AUTH
        // could be sent: most likely it is a password without its ':'.
        for url in ["redis://Hunter2pw@h:1", "unix:///s.sock?user=Hunter2pw"] {
            let msg = err(url);
            assert!(msg.contains("no password"), "{msg}");
            assert!(!msg.contains("Hunter2pw"), "{msg}");
        }
        assert_eq!(parse("redis://u:@h:1").redacted(), "redis://u:***@h:1/0");
        assert_eq!(parse("redis://@h:1").redacted(), "redis://h:1/0");
    }

    #[test]
    fn credentials_without_at_are_not_a_host() {
        // Used to parse as host ":pw" (then shown by connection errors).
        let msg = err("redis://:pw:7100");
        assert_eq!(
            msg,
            "servers has a malformed server URL \"redis://:***\": missing host \
             (a password goes before the host, followed by @: \
             redis://[user]:password@host[:port])"
        );
        let msg = err("redis://u:pw");
        assert!(
            msg.contains("\"redis://u:***\": port must be a number"),
            "{msg}"
        );
        assert!(msg.contains("followed by @"), "{msg}");
        // A plain bad port gets no such hint.
        let msg = err("redis://h:0");
        assert!(!msg.contains("followed by @"), "{msg}");
        assert!(err("redis://h:1:2").contains("port must be a number"));
        assert!(err("redis://[zz]:1").contains("invalid IPv6 address"));
        assert!(err("redis://h:+1").contains("port must be a number"));
        assert_eq!(
            parse("redis://[fe80::1%25eth0]:7000").endpoint,
            Endpoint::Tcp {
                host: "fe80::1%25eth0".into(),
                port: 7000,
                tls: false
            }
        );
    }

    #[test]
    fn unencoded_reserved_characters_in_a_password_are_explained() {
        for url in [
            "redis://u:pa/ss@h",
            "redis://:pa?ss@h:1",
            "rediss://:p#w@h/0",
        ] {
            let msg = err(url);
            assert!(
                msg.ends_with(
                    "the user name or password contains an unencoded '/', '?' or '#'; \
                     URL-encode the user name and password, e.g. with rawurlencode()"
                ),
                "{msg}"
            );
            assert!(!msg.contains("Zq9") && !msg.contains(":pa"), "{msg}");
        }
        let msg = err("redis://:50%off@h");
        assert!(
            msg.contains("invalid %-escape in the user name or password; URL-encode"),
            "{msg}"
        );
        assert!(!msg.contains("50%off"), "{msg}");
        // Encoded, they work.
        assert_eq!(
            parse("redis://u:pa%2Fss@h").password.as_deref(),
            Some("pa/ss")
        );
    }
}
