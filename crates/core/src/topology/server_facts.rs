//! Whether the servers of a key can lose a held lock by themselves (an
//! evicting `maxmemory`, no append-only file: [`crate::net::facts`]), read
//! with `INFO` once per server and process, and what an acquire does about
//! it (option `unsafe_server`): record it (`warn`), refuse (`refuse`), or
//! neither (`ignore`).

use std::sync::Arc;

use super::Topology;
use crate::config::options::UnsafeServer;
use crate::error::{LockError, Result};
use crate::net::connection::{Known, ServerConfig};
use crate::net::facts::ServerFacts;
use crate::net::pool::Role;
use crate::protocol::lock_calls;
use crate::stats;

impl Topology {
    /// Before an acquire of `key`: reads the facts of its servers not read
    /// yet in this process (one `INFO` each, all at once), then, as
    /// `policy` says, records the servers that can lose a held lock
    /// ([`stats::servers`]) or fails naming them. A server that refuses
    /// `INFO` (an ACL) is unknown, never unsafe; one that does not answer
    /// is asked again at an acquire 10 s later. One atomic load per server once
    /// every server is read.
    pub(crate) fn check_unsafe(&self, key: &[u8], policy: UnsafeServer) -> Result<()> {
        if policy == UnsafeServer::Ignore {
            return Ok(());
        }
        let servers = self.route.servers(key)?;
        // Known safe, or (warn) its hazards already recorded here: one or
        // two atomic loads per server, no lock, no allocation.
        let settled = |s: &Arc<ServerConfig>| match s.facts.hazardous() {
            Some(false) => true,
            Some(true) => policy == UnsafeServer::Warn && s.facts.recorded_here(),
            None => false,
        };
        if servers.iter().all(settled) {
            return Ok(());
        }
        self.read_facts(key, &servers);
        let found = hazards_of(&servers);
        if policy == UnsafeServer::Warn {
            for u in found {
                stats::servers::record(u.server, u.reason, u.detail);
            }
            for server in servers.iter().filter(|s| s.facts.hazardous() == Some(true)) {
                server.facts.set_recorded();
            }
            return Ok(());
        }
        let refused: Vec<String> = found
            .iter()
            .map(|u| format!("{}: {}", u.server, u.detail))
            .collect();
        if refused.is_empty() {
            return Ok(());
        }
        Err(LockError::Unsafe(format!(
            "option \"unsafe_server\" is \"refuse\" (ini redislock.unsafe_server), and {} can \
             lose a held lock by itself, so no lock was taken: {} (or set unsafe_server to \
             \"warn\" to take locks there all the same)",
            if refused.len() == 1 {
                "a server"
            } else {
                "servers"
            },
            refused.join("; ")
        )))
    }

    /// The servers of `key` that can lose a held lock by themselves, each
    /// with the reason and its fix (`RedisLock::inspect()`); reads the
    /// facts of those not read yet in this process. A server whose `INFO`
    /// was refused or not answered is not listed.
    pub(crate) fn unsafe_servers(&self, key: &[u8]) -> Result<Vec<stats::servers::UnsafeServer>> {
        let servers = self.route.servers(key)?;
        self.read_facts(key, &servers);
        let found = hazards_of(&servers);
        Ok(found)
    }

    /// Reads with `INFO` (all at once) the facts of the servers of `key`
    /// not read yet in this process; a refusal is kept (unknown). A server
    /// that does not answer is asked again at an acquire at least
    /// [`crate::net::connection::FactsMemo::RETRY`] later (a Redlock master that is down costs its
    /// acquires no second timeout each).
    fn read_facts(&self, key: &[u8], servers: &[Arc<ServerConfig>]) {
        let ask: Vec<bool> = servers.iter().map(|s| s.facts.to_ask()).collect();
        if !ask.contains(&true) {
            return;
        }
        // A server not asked answers "" (skipped below).
        let votes = self.run_where(Role::Command, key, &ask, String::new(), &|_| {
            lock_calls::info()
        });
        for ((server, result), asked) in servers.iter().zip(votes.into_results()).zip(ask) {
            match result {
                _ if !asked => {}
                Ok(text) => server.facts.set(Known::Facts(ServerFacts::parse(&text))),
                Err(refused @ LockError::Server { .. }) => {
                    server.facts.set(Known::Refused(refused.to_string()));
                }
                Err(_) => server.facts.unanswered(),
            }
        }
    }
}

/// The hazards of `servers` whose facts were read: one row per server and
/// reason, with what it does and the fix.
fn hazards_of(servers: &[Arc<ServerConfig>]) -> Vec<stats::servers::UnsafeServer> {
    let mut found = Vec::new();
    for server in servers {
        if let Some(Known::Facts(facts)) = server.facts.get() {
            for hazard in facts.hazards() {
                found.push(stats::servers::UnsafeServer {
                    server: server.name(),
                    reason: hazard.reason(),
                    detail: hazard.explain(),
                });
            }
        }
    }
    found
}
