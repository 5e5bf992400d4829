//! The PHP arrays of a server checkup (`RedisLock::diagnose()`) and of the
//! servers found unsafe (`RedisLock::inspect()`'s `unsafe`,
//! `RedisLock::unsafeServers()`, `stats()`'s `unsafe_servers`).

use ext_php_rs::boxed::ZBox;
use ext_php_rs::exception::PhpResult;
use ext_php_rs::types::ZendHashTable;
use redislock_core::stats::servers::UnsafeServer;
use redislock_core::{Capability, NodeCheckup};

use crate::exceptions::{self, Class};

fn fail(e: ext_php_rs::error::Error) -> ext_php_rs::exception::PhpException {
    exceptions::exception(Class::Lock, format!("diagnose failed: {e}"))
}

/// One row per server and reason: `server`, `reason`, `detail`.
pub fn unsafe_list(found: &[UnsafeServer]) -> PhpResult<ZBox<ZendHashTable>> {
    let mut list = ZendHashTable::new();
    for u in found {
        let mut row = ZendHashTable::new();
        row.insert("server", u.server.as_str()).map_err(fail)?;
        row.insert("reason", u.reason).map_err(fail)?;
        row.insert("detail", u.detail.as_str()).map_err(fail)?;
        list.push(row).map_err(fail)?;
    }
    Ok(list)
}

/// One array per server: `server`, `verdict` (`safe`, `unsafe`,
/// `unknown`), `round_trip_ms`, what `INFO` said (`version`, `role`,
/// `replicas`, `cluster`, `maxmemory`, `maxmemory_policy`, `aof`, and
/// `appendfsync` where `CONFIG GET` is allowed; null
/// where it did not), `findings` (`severity`, `reason`, `detail`) and the
/// capabilities (`scripts`, `time_in_scripts`, `client_unblock`,
/// `compare_delete`, `acl`: each `status` yes/no/unknown and `detail`).
pub fn checkup(nodes: &[NodeCheckup]) -> PhpResult<ZBox<ZendHashTable>> {
    let mut list = ZendHashTable::new();
    for node in nodes {
        let mut row = ZendHashTable::new();
        row.insert("server", node.server.as_str()).map_err(fail)?;
        let verdict = match node.verdict() {
            redislock_core::Severity::Note => "safe",
            other => other.name(),
        };
        row.insert("verdict", verdict).map_err(fail)?;
        row.insert(
            "round_trip_ms",
            node.round_trip.map(|d| d.as_secs_f64() * 1000.0),
        )
        .map_err(fail)?;
        row.insert("version", node.version.clone()).map_err(fail)?;
        row.insert("role", node.role.clone()).map_err(fail)?;
        row.insert("replicas", node.replicas.map(i64::from))
            .map_err(fail)?;
        row.insert("cluster", node.cluster).map_err(fail)?;
        row.insert(
            "maxmemory",
            node.maxmemory.map(|m| i64::try_from(m).unwrap_or(i64::MAX)),
        )
        .map_err(fail)?;
        row.insert("maxmemory_policy", node.maxmemory_policy.clone())
            .map_err(fail)?;
        row.insert("aof", node.aof).map_err(fail)?;
        row.insert("appendfsync", node.appendfsync.clone())
            .map_err(fail)?;
        let mut findings = ZendHashTable::new();
        for f in &node.findings {
            let mut finding = ZendHashTable::new();
            finding
                .insert("severity", f.severity.name())
                .map_err(fail)?;
            finding.insert("reason", f.reason).map_err(fail)?;
            finding.insert("detail", f.detail.as_str()).map_err(fail)?;
            findings.push(finding).map_err(fail)?;
        }
        row.insert("findings", findings).map_err(fail)?;
        for (name, capability) in [
            ("scripts", &node.scripts),
            ("time_in_scripts", &node.time_in_scripts),
            ("client_unblock", &node.client_unblock),
            ("compare_delete", &node.compare_delete),
            ("acl", &node.acl),
        ] {
            row.insert(name, capability_row(capability)?)
                .map_err(fail)?;
        }
        list.push(row).map_err(fail)?;
    }
    Ok(list)
}

fn capability_row(capability: &Capability) -> PhpResult<ZBox<ZendHashTable>> {
    let mut row = ZendHashTable::new();
    row.insert("status", capability.name()).map_err(fail)?;
    row.insert("detail", capability.detail()).map_err(fail)?;
    Ok(row)
}
