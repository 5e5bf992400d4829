//! What this process found each server of a key can do, kept beside the
//! server's configuration (`ServerConfig::scripts`): whether it runs our
//! scripts (a lock's and a semaphore's checks, once per server and
//! process), or refuses them but compares and deletes without
//! ([`crate::protocol::scriptless`]). Read and written per key here.

use super::Topology;
use crate::protocol::scriptless::CompareDelete;

impl Topology {
    /// Whether every server of `key` is known to run our scripts.
    pub(crate) fn scripts_checked(&self, key: &[u8]) -> bool {
        match self.route.servers(key) {
            Ok(servers) => servers.iter().all(|s| s.scripts.get()),
            Err(_) => false,
        }
    }

    /// Records that the servers of `key` whose `ok` is true ran a script.
    pub(crate) fn mark_scripts_checked(&self, key: &[u8], ok: &[bool]) {
        if let Ok(servers) = self.route.servers(key) {
            for (server, ok) in servers.iter().zip(ok) {
                if *ok {
                    server.scripts.set();
                }
            }
        }
    }

    /// True when every server of `key` (a semaphore's) passed a
    /// semaphore's check in this process.
    pub(crate) fn semaphore_checked(&self, key: &[u8]) -> bool {
        match self.route.servers(key) {
            Ok(servers) => servers.iter().all(|s| s.scripts.semaphore()),
            Err(_) => false,
        }
    }

    /// Records that the servers of `key` passed a semaphore's check.
    pub(crate) fn mark_semaphore_checked(&self, key: &[u8]) {
        if let Ok(servers) = self.route.servers(key) {
            for server in servers.iter() {
                server.scripts.set_semaphore();
            }
        }
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
