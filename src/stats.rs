//! `RedisLock::stats()`, `RedisLock::metrics()` and the statistics tables
//! of `phpinfo()`: the figures of [`redislock_core::stats`] as PHP arrays,
//! Prometheus text and table rows.

use ext_php_rs::boxed::ZBox;
use ext_php_rs::exception::PhpResult;
use ext_php_rs::types::ZendHashTable;
use redislock_core::stats::{self, Figures, Primitive, Scope, Snapshot};

use crate::exceptions::{self, Class};

/// The counters of one primitive (or of all), by name, in the order shown.
fn rows(f: &Figures) -> [(&'static str, u64); 14] {
    [
        ("acquires", f.acquires),
        ("acquired", f.acquired),
        ("contended", f.contended),
        ("timeouts", f.timeouts),
        ("busy", f.busy),
        ("errors", f.errors),
        ("releases", f.releases),
        ("lost_leases", f.lost_leases),
        ("renewals", f.renewals),
        ("handovers", f.handovers),
        ("wait_p50_us", f.wait_quantile_us(0.50)),
        ("wait_p99_us", f.wait_quantile_us(0.99)),
        ("wait_max_us", f.wait_max_us),
        ("wait_sum_us", f.wait_sum_us),
    ]
}

/// The scope a caller names: `pool`, `process`, or null for the one
/// php.ini's `redislock.stats` says.
pub fn scope(named: Option<Vec<u8>>) -> Result<Scope, String> {
    match named {
        None => Ok(stats::default_scope()),
        Some(name) => Scope::parse(&name).ok_or_else(|| {
            format!(
                "must be \"pool\", \"process\" or null, \"{}\" given",
                String::from_utf8_lossy(&name)
            )
        }),
    }
}

/// `RedisLock::stats()`: the totals of every primitive, `scope`,
/// `enabled`, `reconnects`, then per primitive under `primitives`, and the
/// hottest names under `names`.
pub fn table(scope: Scope) -> PhpResult<ZBox<ZendHashTable>> {
    let fail = |e: ext_php_rs::error::Error| {
        exceptions::exception(Class::Lock, format!("stats failed: {e}"))
    };
    let snapshot = stats::snapshot(scope);
    let counters = |f: &Figures| -> PhpResult<ZBox<ZendHashTable>> {
        let mut t = ZendHashTable::new();
        for (name, value) in rows(f) {
            t.insert(name, int(value)).map_err(fail)?;
        }
        Ok(t)
    };
    let mut table = counters(&snapshot.total())?;
    table
        .insert("reconnects", int(snapshot.reconnects))
        .map_err(fail)?;
    table.insert("scope", scope.name()).map_err(fail)?;
    table.insert("enabled", snapshot.enabled).map_err(fail)?;
    let mut primitives = ZendHashTable::new();
    for p in Primitive::ALL {
        primitives
            .insert(p.name(), counters(snapshot.primitive(p))?)
            .map_err(fail)?;
    }
    table.insert("primitives", primitives).map_err(fail)?;
    let mut names = ZendHashTable::new();
    for n in &snapshot.names {
        let mut row = ZendHashTable::new();
        row.insert("primitive", n.primitive.name()).map_err(fail)?;
        row.insert("name", n.label()).map_err(fail)?;
        row.insert("contended", int(n.contended)).map_err(fail)?;
        row.insert("timeouts", int(n.timeouts)).map_err(fail)?;
        row.insert("wait_us", int(n.wait_us)).map_err(fail)?;
        names.push(row).map_err(fail)?;
    }
    table.insert("names", names).map_err(fail)?;
    table
        .insert("names_untracked", int(snapshot.names_untracked))
        .map_err(fail)?;
    table
        .insert(
            "unsafe_servers",
            crate::diagnose::unsafe_list(&snapshot.unsafe_servers)?,
        )
        .map_err(fail)?;
    Ok(table)
}

/// `RedisLock::metrics()`: the figures of the default scope as Prometheus
/// text.
pub fn metrics() -> String {
    stats::exposition::render(
        &stats::snapshot(stats::default_scope()),
        redislock_core::VERSION,
    )
}

/// The rows of one scope's phpinfo() table (totals, then the wait time
/// per primitive that has any).
pub fn info_rows(scope: Scope) -> Vec<(String, String)> {
    let snapshot: Snapshot = stats::snapshot(scope);
    if !snapshot.enabled {
        return vec![(
            "counted".into(),
            format!("no (redislock.stats = {})", stats::mode().name()),
        )];
    }
    let mut out: Vec<(String, String)> = rows(&snapshot.total())
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value.to_string()))
        .collect();
    out.push(("reconnects".into(), snapshot.reconnects.to_string()));
    for u in &snapshot.unsafe_servers {
        out.push((
            format!("unsafe server ({})", u.reason),
            format!("{}: {}", u.server, u.detail),
        ));
    }
    for p in Primitive::ALL {
        let f = snapshot.primitive(p);
        if f.acquires > 0 {
            out.push((
                format!("{} acquires / contended / p99 wait", p.name()),
                format!(
                    "{} / {} / {} µs",
                    f.acquires,
                    f.contended,
                    f.wait_quantile_us(0.99)
                ),
            ));
        }
    }
    out
}

/// A count as a PHP int (saturating: counters never come near).
fn int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}
