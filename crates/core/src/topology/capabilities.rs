//! What this process found each server of a key can do, kept beside the
//! server's configuration (`ServerConfig::scripts`): which script checks
//! it passed (one per kind, server and process:
//! [`crate::protocol::permitted`]), or that it refuses scripts but
//! compares and deletes without ([`crate::protocol::scriptless`]). Read
//! and written per key here.

use super::{Role, Topology, Votes};
use crate::protocol::permitted::{CheckKind, Permitted};
use crate::protocol::scriptless::CompareDelete;

/// What [`Topology::check_scripts`] found.
pub(crate) enum Checked {
    /// Every server of the key passed a check of that kind in this process.
    Passed,
    /// Every server of the key refuses scripts and compares and deletes
    /// with this (a lock's check only: the lock runs without scripts
    /// there; a counted hold's check is run, and refused).
    Scriptless(CompareDelete),
    /// The check was run: its votes (the servers that passed it are
    /// recorded as such).
    Ran(Votes<()>),
}

impl Topology {
    /// The script check (`permitted.lua`) for `key`'s servers, made before
    /// an acquire: what this process already knows of them (one look at
    /// the key's servers, the uncontended acquire's cost), else the check
    /// run on every server of `key` (on those that passed it already too).
    pub(crate) fn check_scripts(&self, key: &[u8], check: Permitted<'_>) -> Checked {
        let kind = check.kind();
        let servers = self.route.servers(key).ok();
        if let Some(servers) = &servers {
            if servers.iter().all(|s| s.scripts.passed(kind)) {
                return Checked::Passed;
            }
            if kind == CheckKind::Lock
                && let Some(how) = same_scriptless(servers)
            {
                return Checked::Scriptless(how);
            }
        }
        let votes = self.run(Role::Command, key, &|_| check.call());
        if let Some(servers) = servers {
            for (server, ok) in servers.iter().zip(votes.oks()) {
                if ok {
                    server.scripts.set_passed(kind);
                }
            }
        }
        Checked::Ran(votes)
    }

    /// How the servers of `key` compare and delete without scripts, when
    /// every one of them was found to refuse scripts but to have a
    /// compare-and-delete command ([`crate::protocol::scriptless`]).
    pub(crate) fn scriptless(&self, key: &[u8]) -> Option<CompareDelete> {
        same_scriptless(&self.route.servers(key).ok()?)
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

/// How every one of `servers` compares and deletes without scripts, when
/// all were found to refuse scripts and to do it the same way.
fn same_scriptless(
    servers: &[std::sync::Arc<crate::net::connection::ServerConfig>],
) -> Option<CompareDelete> {
    let how = servers.first()?.scripts.scriptless()?;
    servers
        .iter()
        .all(|s| s.scripts.scriptless() == Some(how))
        .then_some(how)
}
