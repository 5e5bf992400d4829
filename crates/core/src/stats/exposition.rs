//! The figures in Prometheus's text exposition format (version 0.0.4):
//! what `RedisLock::metrics()` returns. Names follow Prometheus's
//! conventions: counters end in `_total`, times are in seconds, the wait
//! time is a histogram with cumulative `le` buckets.

use std::fmt::Write;

use super::{Figures, NameFigures, Primitive, Snapshot};

/// The wait histogram's bounds, in seconds as printed and in µs.
const BOUNDS: [(&str, u64); 17] = [
    ("0.0001", 100),
    ("0.00025", 250),
    ("0.0005", 500),
    ("0.001", 1_000),
    ("0.0025", 2_500),
    ("0.005", 5_000),
    ("0.01", 10_000),
    ("0.025", 25_000),
    ("0.05", 50_000),
    ("0.1", 100_000),
    ("0.25", 250_000),
    ("0.5", 500_000),
    ("1", 1_000_000),
    ("2.5", 2_500_000),
    ("5", 5_000_000),
    ("10", 10_000_000),
    ("30", 30_000_000),
];

/// A family of one sample per primitive: name, help, and the value.
type PerPrimitive = (&'static str, &'static str, fn(&Figures) -> u64);
/// A family of one sample per hot name: name, help, and the value as text.
type PerName = (&'static str, &'static str, fn(&NameFigures) -> String);

/// The `Content-Type` of the text this module writes.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The figures of `snapshot` as Prometheus text; `version` is the
/// extension's, shown in `redislock_info`.
pub fn render(snapshot: &Snapshot, version: &str) -> String {
    let mut out = String::with_capacity(8 * 1024);
    family(
        &mut out,
        "redislock_info",
        "gauge",
        "The extension's version and the scope of these figures (pool: every process of the pool; process: this one).",
    );
    let _ = writeln!(
        out,
        "redislock_info{{version=\"{}\",scope=\"{}\"}} 1",
        escape(version.as_bytes()),
        snapshot.scope.name()
    );
    family(
        &mut out,
        "redislock_acquires_total",
        "counter",
        "Acquire calls by primitive and result (acquired; timeout: the wait ran out; busy: taken, no wait asked; error: threw).",
    );
    for p in Primitive::ALL {
        let f = snapshot.primitive(p);
        for (result, n) in [
            ("acquired", f.acquired),
            ("timeout", f.timeouts),
            ("busy", f.busy),
            ("error", f.errors),
        ] {
            let _ = writeln!(
                out,
                "redislock_acquires_total{{primitive=\"{}\",result=\"{result}\"}} {n}",
                p.name()
            );
        }
    }
    let per_primitive: [PerPrimitive; 5] = [
        (
            "redislock_contended_total",
            "Acquires that found the lock taken (or the semaphore full) at their first try.",
            |f| f.contended,
        ),
        (
            "redislock_handovers_total",
            "Acquires handed their hold while they waited in the queue.",
            |f| f.handovers,
        ),
        (
            "redislock_releases_total",
            "Holds released in Redis.",
            |f| f.releases,
        ),
        (
            "redislock_lost_leases_total",
            "Leases found lost (expired or taken while the process believed it held them).",
            |f| f.lost_leases,
        ),
        (
            "redislock_renewals_total",
            "Leases extended by the renewal thread (auto_renew).",
            |f| f.renewals,
        ),
    ];
    for (name, help, get) in per_primitive {
        family(&mut out, name, "counter", help);
        for p in Primitive::ALL {
            let _ = writeln!(
                out,
                "{name}{{primitive=\"{}\"}} {}",
                p.name(),
                get(snapshot.primitive(p))
            );
        }
    }
    family(
        &mut out,
        "redislock_reconnects_total",
        "counter",
        "Connections opened to replace one that broke.",
    );
    let _ = writeln!(out, "redislock_reconnects_total {}", snapshot.reconnects);
    family(
        &mut out,
        "redislock_wait_seconds",
        "histogram",
        "How long successful acquires took, from call to return (bucket bounds within 6.25 %).",
    );
    for p in Primitive::ALL {
        let f = snapshot.primitive(p);
        for (le, us) in BOUNDS {
            let _ = writeln!(
                out,
                "redislock_wait_seconds_bucket{{primitive=\"{}\",le=\"{le}\"}} {}",
                p.name(),
                f.waits_at_most_us(us)
            );
        }
        let count = f.wait_count();
        let _ = writeln!(
            out,
            "redislock_wait_seconds_bucket{{primitive=\"{}\",le=\"+Inf\"}} {count}",
            p.name()
        );
        let _ = writeln!(
            out,
            "redislock_wait_seconds_sum{{primitive=\"{}\"}} {}",
            p.name(),
            seconds(f.wait_sum_us)
        );
        let _ = writeln!(
            out,
            "redislock_wait_seconds_count{{primitive=\"{}\"}} {count}",
            p.name()
        );
    }
    let per_name: [PerName; 3] = [
        (
            "redislock_name_contended_total",
            "Contended acquires of the hottest names (since the name entered the table).",
            |n| n.contended.to_string(),
        ),
        (
            "redislock_name_timeouts_total",
            "Contended acquires of the hottest names whose wait ran out.",
            |n| n.timeouts.to_string(),
        ),
        (
            "redislock_name_wait_seconds_total",
            "Time the contended acquires of the hottest names took, in all.",
            |n| seconds(n.wait_us),
        ),
    ];
    for (name, help, get) in per_name {
        family(&mut out, name, "counter", help);
        for n in &snapshot.names {
            let _ = writeln!(
                out,
                "{name}{{primitive=\"{}\",name=\"{}\"}} {}",
                n.primitive.name(),
                escape(n.label().as_bytes()),
                get(n)
            );
        }
    }
    family(
        &mut out,
        "redislock_names_untracked_total",
        "counter",
        "Contended acquires not counted per name (the table was being changed by another process).",
    );
    let _ = writeln!(
        out,
        "redislock_names_untracked_total {}",
        snapshot.names_untracked
    );
    family(
        &mut out,
        "redislock_server_unsafe",
        "gauge",
        "1 for each server (and reason) this process found able to lose a held lock by itself: eviction (maxmemory with a policy that evicts), no_aof (a restart forgets locks).",
    );
    for u in &snapshot.unsafe_servers {
        let _ = writeln!(
            out,
            "redislock_server_unsafe{{server=\"{}\",reason=\"{}\"}} 1",
            escape(u.server.as_bytes()),
            u.reason
        );
    }
    out
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// µs as seconds, exactly (up to 6 decimals, no trailing zeros).
fn seconds(us: u64) -> String {
    let whole = us / 1_000_000;
    let frac = us % 1_000_000;
    if frac == 0 {
        return whole.to_string();
    }
    let digits = format!("{frac:06}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

/// A label value: the bytes as UTF-8 (invalid sequences replaced), with
/// backslash, double quote and line feed escaped as the format requires.
fn escape(value: &[u8]) -> String {
    let text = String::from_utf8_lossy(value);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_exact() {
        assert_eq!(seconds(0), "0");
        assert_eq!(seconds(1_500_000), "1.5");
        assert_eq!(seconds(1_234), "0.001234");
        assert_eq!(seconds(30_000_000), "30");
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape(b"a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
        assert_eq!(escape(b"caf\xc3\xa9 \xff"), "caf\u{e9} \u{fffd}");
    }
}
