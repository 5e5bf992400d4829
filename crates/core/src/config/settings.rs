//! The `redislock.*` php.ini settings: names, defaults, and how their text
//! becomes defaults for a lock. The binding registers the entries and hands
//! their current values here.

use crate::config::duration;
use crate::config::options::{LockOptions, UnsafeServer};
use crate::config::php_numeric::parse_numeric;
use crate::config::url::{ServerUrl, redact_raw};
use crate::error::{LockError, Result};

/// `redislock.servers`: one URL or a comma-separated list.
pub const SERVERS: &str = "redislock.servers";
/// `redislock.default_ttl`: lease in seconds when the constructor gets null.
pub const DEFAULT_TTL: &str = "redislock.default_ttl";
/// `redislock.prefix`: prepended to every key.
pub const PREFIX: &str = "redislock.prefix";
/// `redislock.connect_timeout`: seconds.
pub const CONNECT_TIMEOUT: &str = "redislock.connect_timeout";
/// `redislock.read_timeout`: seconds.
pub const READ_TIMEOUT: &str = "redislock.read_timeout";
/// `redislock.unsafe_server`: what an acquire does on a server that can
/// lose a held lock by itself (`warn`, `refuse`, `ignore`).
pub const UNSAFE_SERVER: &str = "redislock.unsafe_server";
/// `redislock.starve_after`: seconds a queued writer lets others take a
/// free lock first before it is handed the lock in arrival order (0:
/// strict FIFO).
pub const STARVE_AFTER: &str = "redislock.starve_after";

/// `redislock.stats`: what is counted (`pool`, `process`, `off`); read
/// once, at startup (php.ini or `-d` only). Not a lock default, so not in
/// [`ENTRIES`].
pub const STATS: &str = "redislock.stats";
/// [`STATS`]'s default.
pub const STATS_DEFAULT: &str = "pool";

/// Every setting with its default value, in documentation order.
pub const ENTRIES: &[(&str, &str)] = &[
    (SERVERS, "redis://127.0.0.1:6379"),
    (DEFAULT_TTL, "30"),
    (PREFIX, ""),
    (CONNECT_TIMEOUT, "2"),
    (READ_TIMEOUT, "2"),
    (UNSAFE_SERVER, "warn"),
    (STARVE_AFTER, "0"),
];

/// Defaults for a new lock, read from the settings.
#[derive(Debug, Clone)]
pub struct Defaults {
    /// Server URLs.
    pub servers: Vec<String>,
    /// Lease in seconds (validated when the lock is built).
    pub ttl: f64,
    /// Options before the constructor's `$options` are applied.
    pub options: LockOptions,
}

/// Reads the defaults; `get` returns a setting's current text.
pub fn defaults(get: impl Fn(&str) -> Option<String>) -> Result<Defaults> {
    let text = |name: &str| {
        get(name).unwrap_or_else(|| {
            ENTRIES
                .iter()
                .find(|(n, _)| *n == name)
                .map_or(String::new(), |(_, d)| (*d).to_owned())
        })
    };
    let seconds = |name: &str| {
        let value = text(name);
        parse_numeric(value.as_bytes()).ok_or_else(|| {
            LockError::invalid(
                name,
                format!("must be a number of seconds, \"{value}\" set"),
            )
        })
    };
    let servers = split_server_list(&text(SERVERS));
    let ttl = seconds(DEFAULT_TTL)?;
    duration::ttl_ms(DEFAULT_TTL, ttl)?;
    let options = LockOptions {
        prefix: crate::config::options::checked_prefix(PREFIX, text(PREFIX).into_bytes())?,
        connect_timeout: duration::positive(CONNECT_TIMEOUT, seconds(CONNECT_TIMEOUT)?)?,
        read_timeout: duration::positive(READ_TIMEOUT, seconds(READ_TIMEOUT)?)?,
        unsafe_server: {
            let value = text(UNSAFE_SERVER);
            UnsafeServer::parse(value.as_bytes()).ok_or_else(|| {
                LockError::invalid(
                    UNSAFE_SERVER,
                    format!("must be \"warn\", \"refuse\" or \"ignore\", \"{value}\" set"),
                )
            })?
        },
        starve_after: duration::wait(STARVE_AFTER, seconds(STARVE_AFTER)?)?,
        ..LockOptions::default()
    };
    Ok(Defaults {
        servers,
        ttl,
        options,
    })
}

/// Checks the servers taken from `redislock.servers` (only when a lock uses
/// them), so that errors name the setting rather than an argument.
pub fn check_servers(servers: &[String]) -> Result<()> {
    if servers.is_empty() {
        return Err(LockError::invalid(
            SERVERS,
            "must name at least one server URL",
        ));
    }
    // `redis://:pa,ss@h` splits into `redis://:pa` and `ss@h`: a piece
    // without a scheme points at a comma inside a password.
    let split_password = servers.len() > 1 && servers.iter().any(|url| !url.contains("://"));
    for url in servers {
        if split_password && !url.contains("://") {
            // Not quoted: it is most likely the rest of a password.
            return Err(LockError::invalid(
                SERVERS,
                "has a piece without a scheme (not shown: it looks like the part of a \
                 password after a ','); the list is split at commas: a ',' in a password \
                 must be URL-encoded as %2C",
            ));
        }
        ServerUrl::parse(SERVERS, url).map_err(|err| match err {
            LockError::InvalidArgument { param, reason } if split_password => LockError::invalid(
                param,
                format!(
                    "{reason} (the list is split at commas: a ',' in a password must be \
                     URL-encoded as %2C)"
                ),
            ),
            other => other,
        })?;
    }
    Ok(())
}

/// Splits a comma-separated server list into URLs.
pub fn split_server_list(list: &str) -> Vec<String> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// A setting's value as phpinfo shows it: server passwords masked.
pub fn display(name: &str, value: &str) -> String {
    if name != SERVERS {
        return value.to_owned();
    }
    let urls = split_server_list(value);
    let several = urls.len() > 1;
    urls.iter()
        .map(|url| match ServerUrl::parse(SERVERS, url) {
            Ok(parsed) => parsed.redacted(),
            // A piece without a scheme in a list is most likely the rest of
            // a password that held a ','.
            Err(_) if several && !url.contains("://") => "***".to_owned(),
            Err(_) => redact_raw(url),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn built_in_defaults() {
        let d = defaults(|_| None).unwrap();
        assert_eq!(d.servers, vec!["redis://127.0.0.1:6379"]);
        assert_eq!(d.ttl, 30.0);
        assert!(d.options.prefix.is_empty());
        assert_eq!(d.options.connect_timeout, Duration::from_secs(2));
    }

    #[test]
    fn settings_override_defaults() {
        let d = defaults(|name| match name {
            SERVERS => Some("redis://a:1, redis://b:2".into()),
            DEFAULT_TTL => Some("2.5".into()),
            PREFIX => Some("app:".into()),
            READ_TIMEOUT => Some("0.5".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(d.servers, vec!["redis://a:1", "redis://b:2"]);
        assert_eq!(d.ttl, 2.5);
        assert_eq!(d.options.prefix, b"app:");
        assert_eq!(d.options.read_timeout, Duration::from_millis(500));
    }

    #[test]
    fn bad_settings_name_themselves() {
        let err = defaults(|name| (name == CONNECT_TIMEOUT).then(|| "soon".into()))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "redislock.connect_timeout must be a number of seconds, \"soon\" set"
        );
        let err = defaults(|name| (name == DEFAULT_TTL).then(|| "0".into()))
            .unwrap_err()
            .to_string();
        assert_eq!(err, "redislock.default_ttl must be greater than 0");
    }

    #[test]
    fn bad_server_settings_name_the_setting() {
        let check = |list: &str| {
            check_servers(&split_server_list(list))
                .unwrap_err()
                .to_string()
        };
        let err = check("redis://:pw@h:x");
        assert!(
            err.starts_with("redislock.servers has a malformed server URL"),
            "{err}"
        );
        assert!(!err.contains("pw"), "{err}");
        // Every form of password is masked in the setting's messages too.
        for list in [
            "redis://:Hunter2pw",
            "redis://u:Hunter2pw",
            "redis://:Hunter2pw:7100",
            "rediss://u:Hunter2pw",
            "redis://u:pa/Hunter2pw@h",
            "unix:///x.sock?pass=Hunter2pw",
            "unix:///x.sock?password=Hunter2pw&x=1",
            "redis://h:1, redis://:Hunter2pw",
        ] {
            let err = check(list);
            assert!(
                err.starts_with("redislock.servers has a malformed"),
                "{err}"
            );
            assert!(!err.contains("Hunter2pw"), "{list}: {err}");
            let shown = display(SERVERS, list);
            assert!(!shown.contains("Hunter2pw"), "{list}: {shown}");
        }
        let err = check("redis://:pa,Hunter2pw@h:1");
        assert_eq!(
            err,
            "redislock.servers has a malformed server URL \"redis://:***\": missing host \
             (a password goes before the host, followed by @: redis://[user]:password@host[:port]) \
             (the list is split at commas: a ',' in a password must be URL-encoded as %2C)"
        );
        let err = check(" , ");
        assert_eq!(err, "redislock.servers must name at least one server URL");
    }

    #[test]
    fn display_masks_passwords() {
        assert_eq!(
            display(SERVERS, "redis://:pw@h:1,redis://u:x@h:2/3"),
            "redis://:***@h:1/0, redis://u:***@h:2/3"
        );
        assert_eq!(display(SERVERS, "redis://:pw@h:bad"), "redis://:***@h:bad");
        assert_eq!(display(PREFIX, "p:"), "p:");
    }
}
