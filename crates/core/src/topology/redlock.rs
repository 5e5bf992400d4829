//! Redlock: N independent Redis masters (no replication between them). A
//! lock is held when a majority accepted it and the lease left after the
//! round trip and the allowed clock drift is positive. Every call goes to
//! all masters at once ([`crate::net::exchange`]).

use std::sync::Arc;
use std::time::Duration;

use super::route::{Route, Servers, Waiting};
use crate::config::options::TopologyOptions;
use crate::config::url::ServerUrl;
use crate::error::{LockError, Result};
use crate::net::connection::{self, ServerConfig};

/// Several independent masters.
#[derive(Debug)]
pub(crate) struct Redlock {
    servers: Vec<Arc<ServerConfig>>,
    drift_factor: f64,
}

impl PartialEq for Redlock {
    fn eq(&self, other: &Self) -> bool {
        self.servers.len() == other.servers.len()
            && self
                .servers
                .iter()
                .zip(&other.servers)
                .all(|(a, b)| Arc::ptr_eq(a, b))
            && self.drift_factor == other.drift_factor
    }
}

/// Several URLs (and no option naming another topology): Redlock
/// ([`super::TOPOLOGIES`]).
pub(crate) fn build(
    urls: &[ServerUrl],
    options: &TopologyOptions,
) -> Result<Option<Box<dyn Route>>> {
    if urls.len() < 2 {
        return Ok(None);
    }
    let servers = urls
        .iter()
        .map(|url| connection::intern(ServerConfig::new(url.clone(), &options.connection)))
        .collect();
    Ok(Some(Box::new(Redlock::new(servers, options)?)))
}

impl Redlock {
    /// Redlock over `servers` (at least two, each named once).
    pub(crate) fn new(servers: Vec<Arc<ServerConfig>>, options: &TopologyOptions) -> Result<Self> {
        // Independent servers: not one server under two names (localhost
        // and 127.0.0.1) or two of its databases.
        let identities: Vec<Vec<String>> =
            servers.iter().map(|s| s.url.server_identity()).collect();
        for (i, server) in servers.iter().enumerate() {
            if let Some(same) = (0..i).find(|&j| {
                identities[j]
                    .iter()
                    .any(|address| identities[i].contains(address))
            }) {
                return Err(LockError::invalid(
                    "servers",
                    format!(
                        "names one server twice ({} and {}); Redlock needs independent servers",
                        servers[same].name(),
                        server.name()
                    ),
                ));
            }
        }
        if options.fencing {
            return Err(LockError::Unsupported(
                "option \"fencing\" is not available over several servers (Redlock): \
                 each server counts on its own, so no token would be strictly greater \
                 than every earlier one; use one server, Sentinel or Cluster for fencing"
                    .into(),
            ));
        }
        if options.replicas > 0 {
            return Err(LockError::Unsupported(
                "option \"replicas\" is not available over several servers (Redlock): \
                 each master stands alone, a quorum of masters is what keeps a lock; \
                 use it with one server, Sentinel or Cluster"
                    .into(),
            ));
        }
        Ok(Self {
            servers,
            drift_factor: options.drift_factor,
        })
    }
}

impl Route for Redlock {
    /// Every master, for every key.
    fn servers(&self, _key: &[u8]) -> Result<Servers<'_>> {
        Ok(Servers::Kept(&self.servers))
    }

    fn servers_per_key(&self) -> usize {
        self.servers.len()
    }

    /// Woken on any master, then a quorum again.
    fn waiting(&self) -> Waiting {
        Waiting::Quorum
    }

    /// `ttl * drift_factor + 2 ms`.
    fn drift(&self, ttl_ms: u64) -> Duration {
        Duration::from_secs_f64(ttl_ms as f64 * self.drift_factor / 1000.0)
            + Duration::from_millis(2)
    }

    /// All masters together.
    fn scope(&self) -> String {
        let spaces: Vec<String> = self.servers.iter().map(|s| s.url.keyspace()).collect();
        format!("redlock({})", spaces.join(","))
    }

    fn names(&self) -> Vec<String> {
        self.servers.iter().map(|s| s.name()).collect()
    }
}
