//! What this process found each server of a key can do, kept beside the
//! server's configuration (`ServerConfig::scripts`): which script checks
//! it passed (one per kind, server and process:
//! [`crate::protocol::permitted`]), or that it refuses scripts but
//! compares and deletes without ([`crate::protocol::scriptless`]). Read
//! and written per key here.

use super::{Role, Topology, Votes};
use crate::protocol::permitted::Permitted;
use crate::protocol::scriptless::CompareDelete;

impl Topology {
    /// The script check (`permitted.lua`) for `key`'s servers: `None` when
    /// every one of them passed a check of its kind in this process;
    /// else its votes, run on every server of `key` (on the servers that
    /// passed, it costs one round trip more, once), each server that
    /// passed it now recorded as such.
    pub(crate) fn check_scripts(&self, key: &[u8], check: Permitted<'_>) -> Option<Votes<()>> {
        let kind = check.kind();
        let servers = self.route.servers(key).ok();
        if servers
            .as_ref()
            .is_some_and(|servers| servers.iter().all(|s| s.scripts.passed(kind)))
        {
            return None;
        }
        let votes = self.run(Role::Command, key, &|_| check.call());
        if let Some(servers) = servers {
            for (server, ok) in servers.iter().zip(votes.oks()) {
                if ok {
                    server.scripts.set_passed(kind);
                }
            }
        }
        Some(votes)
    }

    /// How the servers of `key` compare and delete without scripts, when
    /// every one of them was found to refuse scripts but to have a
    /// compare-and-delete command ([`crate::protocol::scriptless`]).
    pub(crate) fn scriptless(&self, key: &[u8]) -> Option<CompareDelete> {
        let servers = self.route.servers(key).ok()?;
        let how = servers.first()?.scripts.scriptless()?;
        servers
            .iter()
            .all(|s| s.scripts.scriptless() == Some(how))
            .then_some(how)
    }

    /// Records that every server of `key` refuses scripts and compares and
    /// deletes with `how`.
    pub(crate) fn mark_scriptless(&self, key: &[u8], how: CompareDelete) {
        if let Ok(servers) = self.route.servers(key) {
            for server in servers.iter() {
                server.scripts.set_scriptless(how);
            }
        }
    }
}
