//! Property tests of everything that reads outside input without a server:
//! server URLs ([`ServerUrl::parse`], redaction), lock options
//! ([`LockOptions::set`] / `validate`), the php.ini settings, the numeric
//! coercions ([`numeric`], [`duration`]) and the reply parsers of the lock
//! protocol's calls ([`lock_calls`], [`Call::finish`]).
//!
//! Each property runs `PROPTEST_CASES` cases (proptest's default, 256);
//! the whole file takes a few seconds. A longer hunt:
//!
//! ```sh
//! PROPTEST_CASES=100000 cargo test -p redislock-core --test properties --release
//! ```
//!
//! Failures are not persisted to files: a case proptest finds (it prints
//! the shrunk input) becomes a named regression test at the end of this file.

use std::collections::VecDeque;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::PathBuf;
use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::Config;
use redis::{ConnectionLike, PushKind, RedisResult, Value, VerbatimFormat};
use redislock_core::config::duration::{self, MAX_SECONDS};
use redislock_core::config::options::{MAX_REPLICAS, OPTIONS, OnLost, OptionKind};
use redislock_core::config::php_numeric::{float_to_string, parse_numeric};
use redislock_core::config::settings;
use redislock_core::config::url::{DEFAULT_PORT, Endpoint, MAX_DB, ServerUrl, redact_raw};
use redislock_core::testing::protocol::call::{Attempt, Call};
use redislock_core::testing::protocol::keys::LockKeys;
use redislock_core::testing::protocol::lock_calls::{self, Released, Successor, Waiter};
use redislock_core::testing::protocol::permitted::Permitted;
use redislock_core::testing::protocol::step::Step;
use redislock_core::testing::protocol::token::MAX_TOKEN_LEN;
use redislock_core::testing::semaphore_calls;
use redislock_core::{LockError, LockOptions, OptionValue};

/// The default configuration (`PROPTEST_CASES` and friends from the
/// environment), without writing regression files into the source tree.
fn config() -> Config {
    Config {
        failure_persistence: None,
        ..Config::default()
    }
}

// ---------------------------------------------------------------------------
// Server URLs
// ---------------------------------------------------------------------------

/// A URL as the parser should read it, before rendering.
#[derive(Debug, Clone)]
struct UrlSpec {
    endpoint: Endpoint,
    /// Written port (`None`: left out, the default applies).
    port: Option<u16>,
    /// Written database (`None`: left out, or `/` alone).
    db: Option<i64>,
    username: Option<String>,
    password: Option<String>,
    /// How credentials and unix paths are %-encoded.
    encoding: Encoding,
    /// Rendering variations that must not change the result.
    trailing_slash: bool,
    scheme_upper: bool,
}

#[derive(Debug, Clone, Copy)]
enum Encoding {
    /// Every byte but `A-Za-z0-9-._~`, upper-case hex.
    Full,
    /// Same, lower-case hex.
    FullLower,
    /// Only what the grammar needs: `% : @ / ? # & =` and controls.
    Minimal,
}

/// %-encodes `text`: non-ASCII characters stay raw under
/// [`Encoding::Minimal`] and are encoded byte by byte otherwise.
fn encode(text: &str, encoding: Encoding) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if !c.is_ascii() && matches!(encoding, Encoding::Minimal) {
            out.push(c);
            continue;
        }
        let mut buf = [0u8; 4];
        for &b in c.encode_utf8(&mut buf).as_bytes() {
            let keep = b.is_ascii()
                && match encoding {
                    Encoding::Full | Encoding::FullLower => {
                        b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
                    }
                    Encoding::Minimal => {
                        !b.is_ascii_control()
                            && !matches!(b, b'%' | b':' | b'@' | b'/' | b'?' | b'#' | b'&' | b'=')
                    }
                };
            if keep {
                out.push(char::from(b));
            } else if matches!(encoding, Encoding::FullLower) {
                out.push_str(&format!("%{b:02x}"));
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

impl UrlSpec {
    /// The URL text.
    fn render(&self) -> String {
        let enc = |s: &str| encode(s, self.encoding);
        match &self.endpoint {
            Endpoint::Tcp { host, tls, .. } => {
                let mut scheme = if *tls { "rediss" } else { "redis" }.to_owned();
                if self.scheme_upper {
                    scheme = scheme.to_ascii_uppercase();
                }
                let auth = match (&self.username, &self.password) {
                    (None, None) => String::new(),
                    (Some(u), None) => format!("{}@", enc(u)),
                    (u, Some(p)) => format!("{}:{}@", enc(u.as_deref().unwrap_or("")), enc(p)),
                };
                let host = if host.contains(':') {
                    format!("[{host}]")
                } else {
                    host.clone()
                };
                let port = self.port.map_or(String::new(), |p| format!(":{p}"));
                let db = match self.db {
                    Some(db) => format!("/{db}"),
                    None if self.trailing_slash => "/".to_owned(),
                    None => String::new(),
                };
                format!("{scheme}://{auth}{host}{port}{db}")
            }
            Endpoint::Unix { path } => {
                let scheme = if self.scheme_upper { "UNIX" } else { "unix" };
                let path = path.to_str().expect("generated paths are UTF-8");
                // `/` separates nothing in a socket path: keep it raw.
                let path: Vec<String> = path.split('/').map(enc).collect();
                let mut query = Vec::new();
                if let Some(db) = self.db {
                    query.push(format!("db={db}"));
                }
                if let Some(u) = &self.username {
                    query.push(format!("user={}", enc(u)));
                }
                if let Some(p) = &self.password {
                    query.push(format!("password={}", enc(p)));
                }
                if self.trailing_slash {
                    // Query order does not matter.
                    query.reverse();
                }
                let query = if query.is_empty() {
                    String::new()
                } else {
                    format!("?{}", query.join("&"))
                };
                format!("{scheme}://{}{query}", path.join("/"))
            }
        }
    }

    /// What [`ServerUrl::parse`] should return for [`Self::render`].
    fn expected(&self) -> ServerUrl {
        let endpoint = match &self.endpoint {
            Endpoint::Tcp { host, tls, .. } => Endpoint::Tcp {
                host: host.clone(),
                port: self.port.unwrap_or(DEFAULT_PORT),
                tls: *tls,
            },
            unix => unix.clone(),
        };
        ServerUrl {
            endpoint,
            username: self.username.clone().filter(|u| !u.is_empty()),
            password: self.password.clone(),
            db: self.db.unwrap_or(0),
        }
    }
}

/// Host names: DNS-like names, IPv4 and IPv6 addresses (with zones), and
/// odd but accepted text.
fn host() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z][a-z0-9-]{0,12}(\\.[a-z][a-z0-9-]{0,12}){0,3}",
        2 => any::<[u8; 4]>().prop_map(|o| Ipv4Addr::from(o).to_string()),
        2 => any::<[u16; 8]>().prop_map(|s| Ipv6Addr::from(s).to_string()),
        1 => (any::<[u16; 8]>(), "[a-z0-9]{1,6}")
            .prop_map(|(s, zone)| format!("{}%25{zone}", Ipv6Addr::from(s))),
        1 => "[^ /@\\[\\]:?#%]{1,10}"
            .prop_filter("no control characters", |h| !h.chars().any(char::is_control)),
    ]
}

/// User names and passwords: anything, including reserved characters and
/// non-ASCII text.
fn credential() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9]{0,12}",
        "[ -~]{0,16}",
        "\\PC{0,10}",
        any::<String>(),
    ]
}

fn encoding() -> impl Strategy<Value = Encoding> {
    prop_oneof![
        Just(Encoding::Full),
        Just(Encoding::FullLower),
        Just(Encoding::Minimal)
    ]
}

fn db() -> impl Strategy<Value = Option<i64>> {
    prop_oneof![
        Just(None),
        (0..16i64).prop_map(Some),
        (0..=MAX_DB).prop_map(Some),
        Just(Some(MAX_DB)),
    ]
}

fn tcp_url() -> impl Strategy<Value = UrlSpec> {
    (
        host(),
        any::<bool>(),
        prop::option::of(1..=u16::MAX),
        db(),
        prop::option::of(credential()),
        prop::option::of(credential()),
        encoding(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(host, tls, port, db, username, password, encoding, slash, upper)| UrlSpec {
                endpoint: Endpoint::Tcp { host, port: 0, tls },
                port,
                db,
                password: with_user(&username, password),
                username,
                encoding,
                trailing_slash: slash,
                scheme_upper: upper,
            },
        )
}

fn unix_url() -> impl Strategy<Value = UrlSpec> {
    let segment = prop_oneof!["[a-zA-Z0-9._-]{1,12}", "[^/\\x00]{1,8}"];
    (
        prop::collection::vec(segment, 1..4),
        db(),
        prop::option::of(credential()),
        prop::option::of(credential()),
        encoding(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(segments, db, username, password, encoding, reorder, upper)| UrlSpec {
                endpoint: Endpoint::Unix {
                    path: PathBuf::from(format!("/{}", segments.join("/"))),
                },
                port: None,
                db,
                password: with_user(&username, password),
                username,
                encoding,
                trailing_slash: reorder,
                scheme_upper: upper,
            },
        )
}

/// A user name goes with a password (an empty one at least): a URL naming a
/// user without one is refused.
fn with_user(username: &Option<String>, password: Option<String>) -> Option<String> {
    match username {
        Some(user) if !user.is_empty() => password.or_else(|| Some(String::new())),
        _ => password,
    }
}

fn any_url() -> impl Strategy<Value = UrlSpec> {
    prop_oneof![3 => tcp_url(), 1 => unix_url()]
}

/// Text built from the pieces URLs are made of, so that the parser's
/// branches are reached far more often than by arbitrary strings.
fn url_like() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("redis://"),
        Just("rediss://"),
        Just("unix://"),
        Just("REDIS://"),
        Just("http://"),
        Just("://"),
        Just(":"),
        Just("@"),
        Just("/"),
        Just("?"),
        Just("#"),
        Just("&"),
        Just("="),
        Just("["),
        Just("]"),
        Just("%"),
        Just("%2"),
        Just("%41"),
        Just("%ff"),
        Just("%00"),
        Just("::1"),
        Just("fe80::1%25eth0"),
        Just("127.0.0.1"),
        Just("h"),
        Just("u"),
        Just("pw"),
        Just("0"),
        Just("6379"),
        Just("65535"),
        Just("65536"),
        Just("99999999999999999999"),
        Just("-1"),
        Just("+1"),
        Just("db="),
        Just("user="),
        Just("password="),
        Just(" "),
        Just("\u{0}"),
        Just("\u{85}"),
        Just("é"),
        Just("/tmp/r.sock"),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(config())]

    /// parse(render(url)) gives back the URL, for every valid URL.
    #[test]
    fn url_round_trips(spec in any_url()) {
        let text = spec.render();
        let parsed = ServerUrl::parse("servers", &text);
        prop_assert!(parsed.is_ok(), "{text:?}: {:?}", parsed.err().map(|e| e.to_string()));
        prop_assert_eq!(parsed.unwrap(), spec.expected(), "{:?}", text);
    }

    /// A URL without credentials renders (redacted) as a URL that parses
    /// back to itself.
    #[test]
    fn redacted_url_without_credentials_parses_back(mut spec in tcp_url()) {
        spec.username = None;
        spec.password = None;
        let url = ServerUrl::parse("servers", &spec.render()).unwrap();
        let again = ServerUrl::parse("servers", &url.redacted());
        prop_assert_eq!(again.ok(), Some(url));
    }

    /// Rendering a parsed URL never shows its password, whatever it is, and
    /// does not depend on it.
    #[test]
    fn redacted_url_never_shows_the_password(
        spec in any_url(),
        pw in ("[a-z]{0,4}", "[ -~]{0,8}", "\\PC{0,4}")
            .prop_map(|(a, b, c)| format!("Ka1{a}{b}Mb2{c}Nc3")),
    ) {
        let mut spec = spec;
        spec.password = Some(pw.clone());
        let url = ServerUrl::parse("servers", &spec.render()).unwrap();
        let mut other = url.clone();
        other.password = Some("x".into());
        prop_assert_eq!(url.redacted(), other.redacted());
        // The markers may turn up in a generated user name, host or path.
        let place = match &url.endpoint {
            Endpoint::Tcp { host, .. } => host.clone(),
            Endpoint::Unix { path } => path.display().to_string(),
        };
        let public = format!("{}\n{place}", url.username.as_deref().unwrap_or(""));
        for shown in [url.redacted(), format!("{url:?}"), url.to_string(), url.keyspace()] {
            for marker in ["Ka1", "Mb2", "Nc3"].into_iter().filter(|m| !public.contains(m)) {
                prop_assert!(!shown.contains(marker), "{shown:?} shows {marker}");
            }
        }
    }

    /// Arbitrary text never panics the parser or the raw redaction, and
    /// every error is an InvalidArgument naming the parameter.
    #[test]
    fn url_parse_never_panics(text in prop_oneof![any::<String>(), url_like()]) {
        match ServerUrl::parse("servers", &text) {
            Ok(url) => {
                let _ = (url.redacted(), url.keyspace());
            }
            Err(LockError::InvalidArgument { param, reason }) => {
                prop_assert_eq!(param, "servers");
                prop_assert!(reason.starts_with("has a malformed server URL \""), "{}", reason);
            }
            Err(other) => prop_assert!(false, "{text:?}: {other:?}"),
        }
        let _ = redact_raw(&text);
        let _ = settings::display(settings::SERVERS, &text);
        let _ = settings::check_servers(&settings::split_server_list(&text));
    }

    /// Bytes that are not UTF-8 reach the parser as lossy text (the binding
    /// converts PHP strings): same guarantees.
    #[test]
    fn url_parse_of_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = ServerUrl::parse("servers", &text);
        let _ = redact_raw(&text);
    }

    /// However a password is (mis)written into a URL, neither the parse
    /// error, nor the redacted URL, nor `redact_raw`, nor phpinfo's display
    /// of the servers setting shows any part of it.
    #[test]
    fn no_form_of_url_shows_its_password(
        (form, pw) in password_form(),
    ) {
        let text = form.replace("{PW}", &pw);
        let mut shown = vec![redact_raw(&text)];
        // The setting is split at commas first: a password with a raw `,`
        // is shown in part (ignored regression test
        // `servers_setting_shows_password_after_raw_comma`).
        let list = !pw.contains(',');
        if list {
            shown.push(settings::display(settings::SERVERS, &text));
        }
        match ServerUrl::parse("servers", &text) {
            Ok(url) => shown.extend([url.redacted(), format!("{url:?}"), url.keyspace()]),
            Err(err) => shown.push(err.to_string()),
        }
        if let Err(err) = settings::check_servers(&settings::split_server_list(&text))
            && list
        {
            shown.push(err.to_string());
        }
        for s in &shown {
            for marker in ["Ka1", "Mb2", "Nc3"] {
                prop_assert!(!s.contains(marker), "{text:?} -> {s:?} shows {marker}");
            }
        }
    }
}

/// A password with markers at its start, middle and end and arbitrary
/// (reserved, unencoded) characters between them, except those in
/// `excluded`.
fn marked_password(excluded: &'static str) -> impl Strategy<Value = String> {
    let between = || {
        prop_oneof!["[ -~]{0,6}", "\\PC{0,3}"]
            .prop_map(move |s: String| s.chars().filter(|c| !excluded.contains(*c)).collect())
    };
    (between(), between()).prop_map(|(a, b): (String, String)| format!("Ka1{a}Mb2{b}Nc3"))
}

/// Ways of writing a password into a URL, each with the characters a
/// password written there unencoded may not contain because the grammar
/// could no longer tell where it ends: `@` when no `@` follows, `:` in a
/// lone user name, `&` and `=` in a unix:// query (they start another
/// parameter). Characters excluded
/// only because the redaction shows them are named with their ignored
/// regression test below.
const PASSWORD_FORMS: &[(&[&str], &str)] = &[
    (
        &[
            "redis://u:{PW}@h",
            "redis://:{PW}@h:1/0",
            "rediss://bob:{PW}@h:x",
            "redis://u:{PW}@h?x=1",
            "redis://u:{PW}@[::1]:1",
            "redis://:{PW}@",
            "u:{PW}@h",
            "redis://:{PW}@h,redis://h2:1",
            "redis://h2:1, redis://u:{PW}@h:1/2",
        ],
        "",
    ),
    // A user name alone (taken for a password): its first `:` would end it.
    (&["redis://{PW}@h", "rediss://{PW}@h:1/0"], ":"),
    // `?` and `#`: unix_userinfo_password_with_raw_query_or_fragment_is_shown.
    (
        &["unix://:{PW}@/x.sock", "unix://u:{PW}@/x.sock?db=1"],
        "?#",
    ),
    (
        &[
            "redis://:{PW}",
            "redis://u:{PW}",
            "redis://:{PW}:7100",
            "redis://u:{PW}:7100/0",
            "redis://:{PW}/0",
            "rediss://:{PW}",
            "redis://[:{PW}]:7100",
            "redis://h:1#{PW}",
            "u:{PW}",
            ":{PW}",
        ],
        "@",
    ),
    (
        &[
            "unix:///x.sock?{PW}",
            "unix:///x.sock?password={PW}",
            "unix:///x.sock?pass={PW}",
            "unix:///x.sock?auth={PW}",
            "unix:///x.sock?password={PW}&x=1",
            "unix:///x.sock?db=x&password={PW}",
            "unix:///x.sock?password={PW}&db=1",
        ],
        "&=",
    ),
    (
        &["redis://h:1?password={PW}", "rediss://h?auth={PW}"],
        "@&=",
    ),
];

fn password_form() -> impl Strategy<Value = (String, String)> {
    let groups: Vec<_> = PASSWORD_FORMS
        .iter()
        .map(|(forms, excluded)| {
            (
                prop::sample::select(forms.to_vec()),
                marked_password(excluded),
            )
                .prop_map(|(f, p)| (f.to_owned(), p))
                .boxed()
        })
        .collect();
    let every_form: Vec<&str> = PASSWORD_FORMS
        .iter()
        .flat_map(|(forms, _)| forms.iter().copied())
        .collect();
    prop_oneof![
        4 => prop::strategy::Union::new(groups),
        // Encoded, any password is fine in any form.
        1 => (prop::sample::select(every_form), marked_password(""), encoding())
            .prop_map(|(f, p, e)| (f.to_owned(), encode(&p, e))),
    ]
}

// ---------------------------------------------------------------------------
// Options and settings
// ---------------------------------------------------------------------------

/// Numbers with the edges of every range in them.
fn number() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => prop::sample::select(vec![
            0.0, -0.0, 1.0, -1.0, 0.5, 0.499_999_999, 0.0001, 0.0004999, 0.0005, 0.001,
            0.0015, 2.0, MAX_SECONDS, MAX_SECONDS + 1e-6, MAX_SECONDS * 2.0, 1000.0, 1000.5,
            1001.0, 4_294_967_296.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY,
            f64::MIN_POSITIVE, 5e-324, f64::MAX, f64::MIN, f64::EPSILON,
        ]),
        2 => -10.0..2000.0f64,
        2 => (0u32..2000).prop_map(f64::from),
        1 => any::<f64>(),
    ]
}

fn text_value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        2 => prop::sample::select(vec![
            "", "0", "1", "2", "true", "FALSE", "On", "off", "yes", "NO", "y", "ignore",
            "interrupt", "Ignore", "x", "/tmp/ca.pem", "redis", "mymaster", " 1",
        ])
        .prop_map(|s| s.as_bytes().to_vec()),
        2 => prop::collection::vec(any::<u8>(), 0..24),
        1 => prop::collection::vec(any::<u8>(), MAX_TOKEN_LEN - 2..MAX_TOKEN_LEN + 3),
    ]
}

fn option_value() -> impl Strategy<Value = OptionValue> {
    prop_oneof![
        Just(OptionValue::Null),
        any::<bool>().prop_map(OptionValue::Bool),
        number().prop_map(OptionValue::Number),
        text_value().prop_map(OptionValue::Text),
    ]
}

fn option_name() -> impl Strategy<Value = String> {
    let names: Vec<String> = OPTIONS.iter().map(|(n, _)| (*n).to_owned()).collect();
    prop_oneof![
        8 => prop::sample::select(names),
        1 => "[a-z_]{0,16}",
        1 => any::<String>(),
    ]
}

/// Every field of `o` is within its documented range.
fn check_ranges(o: &LockOptions) -> Result<(), TestCaseError> {
    let year = Duration::from_secs_f64(MAX_SECONDS);
    let ms = Duration::from_millis(1);
    for (name, d) in [
        ("retry_delay", o.retry_delay),
        ("connect_timeout", o.connect_timeout),
        ("read_timeout", o.read_timeout),
    ]
    .into_iter()
    .chain(o.max_hold.map(|d| ("max_hold", d)))
    {
        prop_assert!(d >= ms && d <= year, "{name} = {d:?}");
        prop_assert_eq!(d.subsec_nanos() % 1_000_000, 0, "{} = {:?}", name, d);
    }
    prop_assert!(o.replicas <= MAX_REPLICAS);
    prop_assert!((0.0..0.5).contains(&o.drift_factor), "{}", o.drift_factor);
    for text in [&o.sentinel, &o.sentinel_user]
        .into_iter()
        .flatten()
        .chain(o.sentinel_password.as_ref().map(|s| &s.0))
    {
        prop_assert!(!text.is_empty());
    }
    for path in [&o.tls.ca, &o.tls.cert, &o.tls.key].into_iter().flatten() {
        prop_assert!(!path.as_os_str().is_empty());
    }
    if let Some(owner) = &o.owner {
        prop_assert!(!owner.0.is_empty() && owner.0.len() <= MAX_TOKEN_LEN);
    }
    Ok(())
}

/// What a bool option accepts: bools, 0, 1 and the ini words.
fn expected_flag(value: &OptionValue) -> Option<bool> {
    match value {
        OptionValue::Bool(b) => Some(*b),
        OptionValue::Number(n) if *n == 0.0 => Some(false),
        OptionValue::Number(n) if *n == 1.0 => Some(true),
        OptionValue::Text(t) => match t.to_ascii_lowercase().as_slice() {
            b"1" | b"true" | b"on" | b"yes" => Some(true),
            b"0" | b"false" | b"off" | b"no" | b"" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// What a seconds option accepts (`Some(Some(ms))`), `Some(None)` for a
/// nullable one given null, `None` when rejected.
fn expected_seconds(kind: OptionKind, value: &OptionValue) -> Option<Option<u64>> {
    match value {
        OptionValue::Null if kind == OptionKind::NullableSeconds => Some(None),
        OptionValue::Number(s)
            if s.is_finite() && *s > 0.0 && *s <= MAX_SECONDS && (s * 1000.0).round() >= 1.0 =>
        {
            Some(Some((s * 1000.0).round() as u64))
        }
        _ => None,
    }
}

proptest! {
    #![proptest_config(config())]

    /// Any value for any option name: set either succeeds with every field
    /// in range, or fails with InvalidArgument and changes nothing.
    #[test]
    fn option_set_is_in_range_or_rejected(
        setup in prop::collection::vec((option_name(), option_value()), 0..6),
        name in option_name(),
        value in option_value(),
    ) {
        let mut o = LockOptions::default();
        for (n, v) in setup {
            let _ = o.set(&n, v);
        }
        let before = o.clone();
        match o.set(&name, value.clone()) {
            Ok(()) => check_ranges(&o)?,
            Err(LockError::InvalidArgument { param, .. }) => {
                let known = OPTIONS.iter().any(|(n, _)| *n == name);
                let want = if known { format!("option \"{name}\"") } else { "options".to_owned() };
                prop_assert_eq!(param, want);
                prop_assert_eq!(&o, &before, "a rejected value changed the options");
            }
            Err(other) => prop_assert!(false, "{name} = {value:?}: {other:?}"),
        }
    }

    /// Bool and seconds options accept exactly their documented values.
    #[test]
    fn option_kinds_accept_exactly_their_values(
        index in 0..OPTIONS.len(),
        value in option_value(),
    ) {
        let (name, kind) = OPTIONS[index];
        let mut o = LockOptions::default();
        let result = o.set(name, value.clone());
        match kind {
            OptionKind::Bool => {
                prop_assert_eq!(result.is_ok(), expected_flag(&value).is_some(), "{:?}", value);
            }
            OptionKind::Seconds | OptionKind::NullableSeconds => {
                let want = expected_seconds(kind, &value);
                prop_assert_eq!(result.is_ok(), want.is_some(), "{:?}", value);
                if let Some(want) = want {
                    let got = match name {
                        "max_hold" => o.max_hold,
                        "retry_delay" => Some(o.retry_delay),
                        "connect_timeout" => Some(o.connect_timeout),
                        "read_timeout" => Some(o.read_timeout),
                        other => unreachable!("new seconds option {other}"),
                    };
                    prop_assert_eq!(got.map(|d| d.as_millis() as u64), want);
                }
            }
            OptionKind::Wait => {
                let want = match value {
                    OptionValue::Number(s) if s.is_finite() && (0.0..=MAX_SECONDS).contains(&s) => {
                        Some(Duration::from_secs_f64(s))
                    }
                    _ => None,
                };
                prop_assert_eq!(result.is_ok(), want.is_some(), "{:?}", value);
                if let Some(want) = want {
                    let got = match name {
                        "starve_after" => o.starve_after,
                        other => unreachable!("new wait option {other}"),
                    };
                    prop_assert_eq!(got, want);
                }
            }
            OptionKind::Count => {
                let ok = matches!(value, OptionValue::Number(n)
                    if n.fract() == 0.0 && (0.0..=f64::from(MAX_REPLICAS)).contains(&n));
                prop_assert_eq!(result.is_ok(), ok, "{:?}", value);
            }
            OptionKind::Fraction => {
                let ok = matches!(value, OptionValue::Number(f) if (0.0..0.5).contains(&f));
                prop_assert_eq!(result.is_ok(), ok, "{:?}", value);
            }
            OptionKind::Text | OptionKind::NullableText => {
                if result.is_ok() && name == "on_lost" {
                    prop_assert!(matches!(&value, OptionValue::Text(t)
                        if t == b"ignore" || t == b"interrupt"));
                }
                if matches!(value, OptionValue::Bool(_) | OptionValue::Number(_)) {
                    prop_assert!(result.is_err());
                }
            }
        }
    }

    /// After any sequence of sets, validate() accepts exactly the
    /// combinations the documentation allows.
    #[test]
    fn validate_accepts_exactly_the_allowed_combinations(
        sets in prop::collection::vec((option_name(), option_value()), 0..16),
        extra in prop::collection::vec(
            (prop::sample::select(vec![
                "tls_cert", "tls_key", "on_lost", "auto_renew", "sentinel", "sentinel_user",
                "sentinel_password", "cluster",
            ]), prop_oneof![
                Just(OptionValue::Bool(true)),
                Just(OptionValue::Text(b"/x".to_vec())),
                Just(OptionValue::Text(b"interrupt".to_vec())),
                Just(OptionValue::Null),
            ]),
            0..8,
        ),
    ) {
        let mut o = LockOptions::default();
        for (n, v) in sets {
            let _ = o.set(&n, v);
        }
        for (n, v) in extra {
            let _ = o.set(n, v);
        }
        check_ranges(&o)?;
        let allowed = o.tls.cert.is_some() == o.tls.key.is_some()
            && (o.on_lost != OnLost::Interrupt || o.auto_renew)
            && (o.sentinel.is_some() || (o.sentinel_user.is_none() && o.sentinel_password.is_none()))
            && !(o.cluster && o.sentinel.is_some());
        match o.validate() {
            Ok(()) => prop_assert!(allowed, "{o:?}"),
            Err(LockError::InvalidArgument { param, .. }) => {
                prop_assert!(!allowed, "{o:?}");
                prop_assert_eq!(param, "options");
            }
            Err(other) => prop_assert!(false, "{other:?}"),
        }
    }

    /// The php.ini settings: any text gives defaults in range or an error
    /// naming the setting.
    #[test]
    fn settings_defaults_are_in_range_or_rejected(
        ttl in numeric_text(),
        connect in numeric_text(),
        read in numeric_text(),
        prefix in any::<String>(),
        servers in prop_oneof![url_like(), any::<String>()],
    ) {
        let get = |name: &str| -> Option<String> {
            Some(match name {
                settings::DEFAULT_TTL => ttl.clone(),
                settings::CONNECT_TIMEOUT => connect.clone(),
                settings::READ_TIMEOUT => read.clone(),
                settings::PREFIX => prefix.clone(),
                settings::SERVERS => servers.clone(),
                _ => return None,
            })
        };
        match settings::defaults(get) {
            Ok(d) => {
                check_ranges(&d.options)?;
                prop_assert!(duration::ttl_ms("ttl", d.ttl).is_ok());
                prop_assert_eq!(d.options.prefix, prefix.as_bytes());
                for url in &d.servers {
                    prop_assert!(!url.is_empty() && !url.contains(','));
                    prop_assert_eq!(url.trim(), url.as_str());
                }
            }
            Err(LockError::InvalidArgument { param, .. }) => {
                prop_assert!(settings::ENTRIES.iter().any(|(n, _)| *n == param), "{}", param);
            }
            Err(other) => prop_assert!(false, "{other:?}"),
        }
    }
}

// ---------------------------------------------------------------------------
// Numeric coercions
// ---------------------------------------------------------------------------

/// Strings of PHP's numeric grammar, sometimes slightly broken.
fn numeric_text() -> impl Strategy<Value = String> {
    let ws = "[ \\t\\n\\r\\x0b\\x0c]{0,2}";
    let valid = (
        ws,
        "[+-]?",
        prop_oneof!["[0-9]{1,20}", "[0-9]{1,10}\\.[0-9]{0,10}", "\\.[0-9]{1,10}"],
        prop_oneof![Just(String::new()), "[eE][+-]?[0-9]{1,4}"],
        ws,
    )
        .prop_map(|(a, b, c, d, e)| format!("{a}{b}{c}{d}{e}"));
    prop_oneof![
        4 => valid,
        1 => "[0-9eE.+\\- xa]{0,12}",
        1 => any::<String>(),
    ]
}

/// Whether `text` is a numeric string by PHP's grammar, written
/// independently of [`parse_numeric`] (a small state machine).
fn is_numeric_string(text: &[u8]) -> bool {
    let ws = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c);
    let mut i = 0;
    while i < text.len() && ws(text[i]) {
        i += 1;
    }
    if i < text.len() && matches!(text[i], b'+' | b'-') {
        i += 1;
    }
    let int_start = i;
    while i < text.len() && text[i].is_ascii_digit() {
        i += 1;
    }
    let mut digits = i - int_start;
    if i < text.len() && text[i] == b'.' {
        i += 1;
        let frac_start = i;
        while i < text.len() && text[i].is_ascii_digit() {
            i += 1;
        }
        digits += i - frac_start;
    }
    if digits == 0 {
        return false;
    }
    if i < text.len() && matches!(text[i], b'e' | b'E') {
        i += 1;
        if i < text.len() && matches!(text[i], b'+' | b'-') {
            i += 1;
        }
        let exp_start = i;
        while i < text.len() && text[i].is_ascii_digit() {
            i += 1;
        }
        if i == exp_start {
            return false;
        }
    }
    while i < text.len() && ws(text[i]) {
        i += 1;
    }
    i == text.len()
}

proptest! {
    #![proptest_config(config())]

    /// parse_numeric accepts exactly PHP's numeric strings and never
    /// returns NaN.
    #[test]
    fn parse_numeric_follows_the_grammar(
        text in prop_oneof![
            numeric_text().prop_map(String::into_bytes),
            prop::collection::vec(any::<u8>(), 0..24),
        ],
    ) {
        let parsed = parse_numeric(&text);
        prop_assert_eq!(parsed.is_some(), is_numeric_string(&text), "{:?}", String::from_utf8_lossy(&text));
        if let Some(x) = parsed {
            prop_assert!(!x.is_nan());
        }
    }

    /// float_to_string never panics, for any precision, and reads back
    /// (to its precision) through parse_numeric.
    #[test]
    fn float_to_string_reads_back(d in any::<f64>(), precision in prop_oneof![
        -1i64..=17, any::<i64>(),
    ]) {
        let text = float_to_string(d, precision);
        if !d.is_finite() {
            return Ok(());
        }
        let back = parse_numeric(text.as_bytes());
        prop_assert!(back.is_some(), "{d:e} at {precision}: {text:?}");
        let back = back.unwrap();
        if precision < 0 {
            // serialize_precision = -1: the shortest text that reads back.
            prop_assert_eq!(back.to_bits(), d.to_bits(), "{:?}", text);
        } else if d.abs() < 1e300 {
            let p = precision.clamp(1, 40) as i32;
            let bound = d.abs() * 10f64.powi(1 - p) + f64::MIN_POSITIVE;
            prop_assert!((back - d).abs() <= bound, "{d:e} at {precision}: {text:?} -> {back:e}");
        }
    }

    /// The durations: accepted exactly when finite, positive (or zero for
    /// a wait), at most a year and (for ttl) at least 1 ms once rounded;
    /// results within range.
    #[test]
    fn durations_are_in_range_or_rejected(s in number()) {
        let ttl_ok = s.is_finite() && s > 0.0 && s <= MAX_SECONDS && (s * 1000.0).round() >= 1.0;
        match duration::ttl_ms("ttl", s) {
            Ok(ms) => {
                prop_assert!(ttl_ok, "{s:e}");
                prop_assert!((1..=(MAX_SECONDS as u64) * 1000).contains(&ms));
                prop_assert!((ms as f64 - s * 1000.0).abs() <= 0.5 + 1e-9, "{} -> {}", s, ms);
            }
            Err(LockError::InvalidArgument { param, .. }) => {
                prop_assert!(!ttl_ok, "{s:e}");
                prop_assert_eq!(param, "ttl");
            }
            Err(other) => prop_assert!(false, "{other:?}"),
        }
        prop_assert_eq!(duration::positive("t", s).is_ok(), ttl_ok);
        let wait_ok = (0.0..=MAX_SECONDS).contains(&s);
        match duration::wait("wait", s) {
            Ok(d) => {
                prop_assert!(wait_ok, "{s:e}");
                prop_assert!(d <= Duration::from_secs_f64(MAX_SECONDS));
                prop_assert!((d.as_secs_f64() - s).abs() <= 1e-9 * s.max(1.0));
            }
            Err(LockError::InvalidArgument { param, .. }) => {
                prop_assert!(!wait_ok, "{s:e}");
                prop_assert_eq!(param, "wait");
            }
            Err(other) => prop_assert!(false, "{other:?}"),
        }
    }
}

// ---------------------------------------------------------------------------
// Replies
// ---------------------------------------------------------------------------

fn server_error() -> impl Strategy<Value = Value> {
    let codes = prop::sample::select(vec![
        "ERR",
        "NOSCRIPT",
        "MOVED 866 127.0.0.1:7001",
        "ASK 866 127.0.0.1:7001",
        "MOVED",
        "ASK x",
        "TRYAGAIN",
        "CLUSTERDOWN",
        "MASTERDOWN",
        "READONLY",
        "WRONGTYPE",
        "NOPERM",
        "BUSY",
        "LOADING",
        "NOTREPLICATED",
        "EXECABORT",
        "CROSSSLOT",
        "WRONGPASS",
        "x",
    ]);
    (codes, "[ -~]{0,16}").prop_filter_map("a server error", |(code, detail)| {
        match redis::parse_redis_value(format!("-{code} {detail}\r\n").as_bytes()) {
            Ok(v @ Value::ServerError(_)) => Some(v),
            _ => None,
        }
    })
}

fn int() -> impl Strategy<Value = i64> {
    prop_oneof![
        4 => -4i64..5,
        1 => any::<i64>(),
        1 => prop::sample::select(vec![i64::MIN, i64::MAX, i64::from(u32::MAX) + 1, -1_000_000_000_000]),
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        2 => Just(Value::Nil),
        1 => Just(Value::Okay),
        4 => int().prop_map(Value::Int),
        2 => prop_oneof![
            prop::collection::vec(any::<u8>(), 0..24),
            "-?[0-9]{1,25}".prop_map(String::into_bytes),
            prop::sample::select(vec!["OK", "-", "1", "0", "-1", "-2", "-3", "nan", "inf", "1.5"])
                .prop_map(|s| s.as_bytes().to_vec()),
        ]
        .prop_map(Value::BulkString),
        1 => prop_oneof!["[ -~]{0,12}", "-?[0-9]{1,22}", Just("OK".to_owned())].prop_map(Value::SimpleString),
        1 => any::<f64>().prop_map(Value::Double),
        1 => any::<bool>().prop_map(Value::Boolean),
        1 => "-?[0-9]{1,40}".prop_filter_map("a big number", |n| {
            redis::parse_redis_value(format!("({n}\r\n").as_bytes()).ok()
        }),
        1 => "[ -~]{0,12}".prop_map(|text| Value::VerbatimString {
            format: VerbatimFormat::Text,
            text,
        }),
        2 => server_error(),
        // The shapes the scripts reply with, to reach past the first checks.
        3 => prop::collection::vec(int().prop_map(Value::Int), 0..4).prop_map(Value::Array),
        1 => ("[a-z0-9]{0,8}", prop_oneof!["-?[0-9]{1,20}", Just("-".to_owned())]).prop_map(|(k, f)| {
            Value::Array(vec![Value::BulkString(k.into_bytes()), Value::BulkString(f.into_bytes())])
        }),
    ]
}

/// Arbitrary reply trees: nested arrays, maps, sets, attributes, pushes.
fn reply() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            3 => prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            1 => prop::collection::vec((inner.clone(), inner.clone()), 0..4).prop_map(Value::Map),
            1 => prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Set),
            1 => (inner.clone(), prop::collection::vec((inner.clone(), inner.clone()), 0..2))
                .prop_map(|(data, attributes)| Value::Attribute {
                    data: Box::new(data),
                    attributes,
                }),
            1 => prop::collection::vec(inner, 0..3).prop_map(|data| Value::Push {
                kind: PushKind::Message,
                data,
            }),
        ]
    })
}

/// A connection that answers from a script of replies (for the script
/// loads and resends of [`Call::finish`]), then fails.
struct Scripted(VecDeque<Value>);

impl Scripted {
    fn next(&mut self) -> RedisResult<Value> {
        self.0.pop_front().ok_or_else(|| {
            redis::RedisError::from(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "script exhausted",
            ))
        })
    }
}

impl ConnectionLike for Scripted {
    fn req_packed_command(&mut self, _cmd: &[u8]) -> RedisResult<Value> {
        self.next()
    }

    fn req_packed_commands(
        &mut self,
        _cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        let mut all = (0..offset + count)
            .map(|_| self.next())
            .collect::<RedisResult<Vec<_>>>()?;
        Ok(all.split_off(offset))
    }

    fn get_db(&self) -> i64 {
        0
    }

    fn check_connection(&mut self) -> bool {
        true
    }

    fn is_open(&self) -> bool {
        true
    }
}

/// How one call is exercised.
struct Exercise<'a> {
    /// Replies of any number, straight to the parser.
    loose: &'a [Value],
    /// Replies for [`Call::finish`] (cut or padded to the count it expects).
    replies: &'a [Value],
    /// What the connection answers to script loads and resends.
    connection: &'a [Value],
    asking: bool,
    /// Option `replicas` (a `WAIT` after the call), if any.
    replicas: Option<u32>,
}

impl Exercise<'_> {
    /// Runs `call`'s parser and `finish`; both must return, Ok or Err.
    fn run<T: std::fmt::Debug>(&self, call: Call<T>, needed: fn(&T) -> bool) {
        let _ = (call.parse)(self.loose.to_vec());
        let shaped: Vec<Value> = self
            .loose
            .iter()
            .cloned()
            .chain(std::iter::repeat(Value::Nil))
            .take(call.commands().len())
            .collect();
        let _ = (call.parse)(shaped);
        let mut call = match self.replicas {
            Some(n) => call.acknowledged(n, Duration::from_millis(50), needed),
            None => call,
        };
        call.asking = self.asking;
        let replies: Vec<Value> = self
            .replies
            .iter()
            .cloned()
            .chain(std::iter::repeat(Value::Okay))
            .take(call.reply_count())
            .collect();
        let mut con = Scripted(self.connection.iter().cloned().collect());
        let _ = call.finish(&mut con, replies);
    }
}

const TOKEN: &[u8] = b"0123456789abcdef0123456789abcdef";
/// A fixed owner's hold nonce.
const NONCE: &[u8] = b"fedcba9876543210fedcba9876543210";

fn keys() -> LockKeys {
    LockKeys::new(b"prop:lock".to_vec(), b"prop:~~fence".to_vec())
}

fn waiter(fencing: bool) -> Waiter<'static> {
    Waiter {
        token: TOKEN,
        nonce: fencing.then_some(NONCE),
        ttl_ms: 1000,
        alive_ms: 500,
        fencing,
        arrival: 1,
    }
}

/// Every call of [`lock_calls`], in every variant.
fn exercise_all_calls(e: &Exercise<'_>) {
    let k = keys();
    let wait = Duration::from_millis(10);
    for attempt in [Attempt::First, Attempt::Replay] {
        for (fencing, nonce) in [(false, None), (true, None), (false, Some(NONCE))] {
            e.run(
                lock_calls::try_acquire(&k, TOKEN, nonce, 1000, fencing, attempt),
                Option::is_some,
            );
        }
        for nonce in [None, Some(NONCE)] {
            e.run(
                lock_calls::try_acquire_pttl(&k, TOKEN, nonce, 1000, attempt),
                |r| r.0,
            );
        }
    }
    e.run(Permitted::Lock(&k).call(), |_| false);
    for (fence, nonce) in [(None, None), (Some(&k.fence[..]), Some(NONCE))] {
        e.run(
            lock_calls::reenter(&k.lock, fence, TOKEN, nonce, 1000),
            |b| *b,
        );
    }
    for successor in [Successor::HandOver, Successor::Wake] {
        for (fenced, attempt, nonce) in [
            (false, Attempt::First, None),
            (true, Attempt::Replay, None),
            (false, Attempt::First, Some(NONCE)),
        ] {
            e.run(
                lock_calls::release(&k, TOKEN, nonce, successor, fenced, attempt),
                |r| *r == Released::Yes,
            );
        }
        for nonce in [None, Some(NONCE)] {
            e.run(lock_calls::abandon(&k, TOKEN, nonce, successor), |b| *b);
        }
    }
    e.run(lock_calls::abandon_if_handed(&k, TOKEN, Some(NONCE)), |b| {
        *b
    });
    e.run(lock_calls::owner_and_nonce(&k), |(o, _)| o.is_some());
    for fencing in [false, true] {
        let w = waiter(fencing);
        for (starving, give_up, attempt) in [
            (false, false, Attempt::First),
            (true, false, Attempt::Replay),
            (false, true, Attempt::First),
        ] {
            e.run(
                lock_calls::wait_step(&k, &w, starving, give_up, attempt),
                Step::is_won,
            );
            e.run(
                Call::after_wake(
                    lock_calls::blpop(&k.wake(w.token), wait),
                    wait,
                    lock_calls::wait_step(&k, &w, starving, give_up, attempt),
                ),
                Step::is_won,
            );
        }
        e.run(lock_calls::join_wake_queue(&k, &w), |_| false);
        e.run(lock_calls::leave_wake_queue(&k, &w), |_| false);
        e.run(lock_calls::wait_for_quorum_wake(&k, &w, wait), |b| *b);
    }
    e.run(lock_calls::owner(&k.lock), Option::is_some);
    for (fence, nonce) in [(None, None), (Some(&k.fence[..]), Some(NONCE))] {
        e.run(
            lock_calls::refresh(&k.lock, fence, TOKEN, nonce, 1000),
            |b| *b,
        );
    }
    let batch = || {
        vec![
            lock_calls::refresh_command(&k.lock, None, TOKEN, None, 1000),
            lock_calls::refresh_command(b"other", Some(b"other~~f"), TOKEN, Some(NONCE), 2000),
            semaphore_calls::lease_command(&semaphore_calls::SemKeys::new(b"s"), b"t", 1, 2),
            semaphore_calls::lease_command(&semaphore_calls::SemKeys::readers(&k), b"t", 1, 1),
        ]
    };
    for n in 0..=batch().len() {
        let mut cmds = batch();
        cmds.truncate(n);
        e.run(lock_calls::extend_many(cmds), |v| v.iter().any(|b| *b));
    }
    for nonce in [None, Some(NONCE)] {
        e.run(
            lock_calls::owned_pttl(&k.lock, TOKEN, nonce),
            Option::is_some,
        );
    }
    e.run(lock_calls::force_release(&k, b"k~~r"), |b| *b);
}

proptest! {
    #![proptest_config(config())]

    /// No reply tree, however odd (nested arrays, errors where values
    /// belong, nils, huge numbers, RESP3 types), panics a parser or
    /// `Call::finish`: they return Ok or Err.
    #[test]
    fn reply_parsers_never_panic(
        loose in prop::collection::vec(reply(), 0..4),
        replies in prop::collection::vec(reply(), 0..6),
        connection in prop::collection::vec(
            prop_oneof![
                3 => reply(),
                1 => prop::collection::vec(
                    "[0-9a-f]{40}".prop_map(|s| Value::BulkString(s.into_bytes())),
                    0..12,
                ).prop_map(Value::Array),
            ],
            0..12,
        ),
        asking in any::<bool>(),
        replicas in prop::option::of(0u32..3),
    ) {
        exercise_all_calls(&Exercise {
            loose: &loose,
            replies: &replies,
            connection: &connection,
            asking,
            replicas,
        });
    }

    /// Well-formed replies are read as documented.
    #[test]
    fn well_formed_replies_are_read_as_documented(n in int(), m in int()) {
        let k = keys();
        let parse_one = |call: Call<bool>, v: Value| (call.parse)(vec![v]).unwrap();
        let released = |attempt| {
            (lock_calls::release(&k, TOKEN, None, Successor::HandOver, false, attempt).parse)(vec![Value::Int(n)]).unwrap()
        };
        // Bit 1: what the first call found (bit 2: it is sent again).
        prop_assert_eq!(released(Attempt::First), if n & 1 == 1 { Released::Yes } else { Released::NotOurs });
        prop_assert_eq!(released(Attempt::Replay), if n & 1 == 1 { Released::Yes } else { Released::GoneOnReplay });
        prop_assert_eq!(parse_one(lock_calls::refresh(&k.lock, None, TOKEN, None, 1), Value::Int(n)), n == 1);
        prop_assert_eq!(parse_one(lock_calls::force_release(&k, b"r"), Value::Int(n)), n >= 1);
        let pttl = (lock_calls::owned_pttl(&k.lock, TOKEN, None).parse)(vec![Value::Int(n)]).unwrap();
        prop_assert_eq!(pttl, (n != -2 && n != -3).then_some(n));
        let w = waiter(true);
        let queued = |v: Vec<Value>| (lock_calls::wait_step(&k, &w, false, false, Attempt::First).parse)(vec![Value::Array(v)]);
        prop_assert_eq!(
            queued(vec![Value::Int(1), Value::Int(n)]).unwrap(),
            Step::Won { fence: (n >= 0).then_some(n), left_ms: None }
        );
        prop_assert_eq!(queued(vec![Value::Int(0), Value::Int(m)]).unwrap(), Step::Waiting { hint_ms: u64::try_from(m).ok() });
        prop_assert_eq!(queued(vec![Value::Int(2)]).unwrap(), Step::GaveUp);
        prop_assert_eq!(queued(vec![Value::Int(3)]).unwrap(), Step::Again);
        if !(0..=3).contains(&n) {
            prop_assert!(queued(vec![Value::Int(n), Value::Int(m)]).is_err());
        }
        let fenced = lock_calls::try_acquire(&k, TOKEN, None, 1, true, Attempt::First);
        prop_assert_eq!((fenced.parse)(vec![Value::Int(n)]).unwrap(), Some(Some(n)));
        prop_assert_eq!((fenced.parse)(vec![Value::Nil]).unwrap(), None);
        let plain = lock_calls::try_acquire(&k, TOKEN, None, 1, false, Attempt::Replay);
        prop_assert_eq!((plain.parse)(vec![Value::Int(n)]).unwrap(), (n == 1).then_some(None));
        prop_assert_eq!((plain.parse)(vec![Value::Okay]).unwrap(), Some(None));
        let many = lock_calls::extend_many(vec![
            lock_calls::refresh_command(b"a", None, b"t", None, 1),
            semaphore_calls::lease_command(&semaphore_calls::SemKeys::new(b"b"), b"t", 1, 1),
        ]);
        prop_assert_eq!(
            (many.parse)(vec![Value::Int(n), Value::Int(m)]).unwrap(),
            vec![n > 0, m > 0]
        );
    }
}

// ---------------------------------------------------------------------------
// Regression tests: cases the properties found
// ---------------------------------------------------------------------------

/// Everything shown for `text` given as a server URL or as the
/// `redislock.servers` setting: the parse error or the redacted URL,
/// `redact_raw`, phpinfo's display and the setting's error.
fn everything_shown(text: &str) -> Vec<String> {
    let mut shown = vec![redact_raw(text), settings::display(settings::SERVERS, text)];
    match ServerUrl::parse("servers", text) {
        Ok(url) => shown.push(url.redacted()),
        Err(err) => shown.push(err.to_string()),
    }
    if let Err(err) = settings::check_servers(&settings::split_server_list(text)) {
        shown.push(err.to_string());
    }
    shown
}

fn assert_hidden(text: &str, secret: &str) {
    for shown in everything_shown(text) {
        assert!(
            !shown.contains(secret),
            "{text:?} shows {secret:?}: {shown:?}"
        );
    }
}

/// The forms of the properties above with the characters they leave out,
/// where the grammar is ambiguous but the parser cannot be confused: each
/// is either read as a password or masked. These pass.
#[test]
fn ambiguous_but_masked_forms() {
    // `@` in a password written without `@host`: the text after it is the
    // host (a valid URL), so only the part before is masked.
    let url = ServerUrl::parse("servers", "redis://:Ka1@Mb2").unwrap();
    assert_eq!(url.redacted(), "redis://:***@Mb2:6379/0");
    // A lone user name with `:` is user:password.
    assert_eq!(redact_raw("redis://Ka1:Mb2@h:x"), "redis://Ka1:***@h:x");
    // Encoded, the same characters are fine (the password is masked whole).
    assert_hidden("unix:///x.sock?password=Ka1%26Mb2%3DNc3%2C&x=1", "Mb2");
    assert_hidden("unix://:Ka1%3FMb2@/x.sock", "Ka1");
    assert_hidden("redis://:Ka1%2CMb2%2CNc3@h:1,redis://h2", "Mb2");
}

/// Regression (found by these properties, fixed): the `redislock.servers` setting is
/// split at commas before anything is masked, so a password with a raw `,`
/// shows the part after the comma: in phpinfo (`settings::display` shows a
/// piece without `://`, `:` or `@` as it is) and in the error
/// `check_servers` raises for that piece (it adds the "a ',' in a password
/// must be URL-encoded" hint, but still quotes the piece). A piece without
/// a scheme in a list of several should be masked whole.
#[test]
fn servers_setting_shows_password_after_raw_comma() {
    // display: "unix:///x.sock?***, Mb2Nc3"
    assert_hidden("unix:///x.sock?Ka1,Mb2Nc3", "Mb2");
    // display: "redis://:***, Mb2, ***"
    assert_hidden("redis://:Ka1,Mb2,Nc3@h:1/0", "Mb2");
    // check_servers: "... malformed server URL \"Nc3\": ..."
    assert_hidden("unix:///x.sock?password=Ka1Mb2,Nc3", "Nc3");
}

/// Regression (found by these properties, fixed): `redact_raw` masks the query of a
/// unix:// URL before its user info, so a password in the user info that
/// contains a raw `?` or `#` loses its `@` to the query mask and the part
/// before the `?`/`#` is shown: `unix://:Ka1?Nc3@/x.sock` becomes
/// `unix://:Ka1?***` (in the parse error too).
#[test]
fn unix_userinfo_password_with_raw_query_or_fragment_is_shown() {
    assert_hidden("unix://:Ka1Mb2?Nc3@/x.sock", "Ka1");
    assert_hidden("unix://u:Ka1#Nc3@/x.sock?db=1", "Ka1");
}

/// Regression (found by these properties, fixed; the password is not
/// URL-encoded): in a query string, a password with a raw `&` ends at it and
/// the rest is shown as another parameter (`name=value` pairs whose name is
/// not credential-like are kept by `redact_raw`, and the parse error quotes
/// the unknown name); a bare word with a raw `=` likewise. Values (and
/// names) of unknown parameters after a credential could be masked, as the
/// raw `/`, `?`, `#` in a redis:// password are explained.
#[test]
fn query_password_with_raw_amp_or_eq_is_shown() {
    // "redis://h:1?password=***&Mb2=Nc3"
    assert_hidden("redis://h:1?password=Ka1&Mb2=Nc3", "Mb2");
    // "unix:///x.sock?password=***&Mb2=Nc3", and: unknown query parameter "Mb2"
    assert_hidden("unix:///x.sock?password=Ka1&Mb2=Nc3", "Mb2");
    // "unix:///x.sock?Ka1Mb2=Nc3"
    assert_hidden("unix:///x.sock?Ka1Mb2=Nc3", "Ka1");
}
