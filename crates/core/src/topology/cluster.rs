//! Redis Cluster: the URLs are seed nodes; the slot map (which master
//! serves which of the 16384 hash slots) is asked for with `CLUSTER SLOTS`
//! and kept per process. A lock's keys share one slot (its key carries a
//! hash tag), so every call of the protocol goes to one master.
//!
//! Routing is ours ([`Route::on_error`] here, followed by the executor in
//! [`super::Topology`]), on the same connections and [`crate::net::exchange`]
//! as every other topology, not redis-rs's cluster client: that client
//! resends a command by itself after a timeout or a dropped connection (a
//! bare `SET NX` resent answers nil for a lock we already hold: the lease
//! would leak) and a `BLPOP` resent after the server popped our wake-up
//! loses it. Here a command is sent again only when the node said it did
//! not run it (`MOVED`, `ASK`, `TRYAGAIN`, `CLUSTERDOWN`, `READONLY`), or,
//! after a lost connection whose slot now has another master (a failover),
//! as an [`crate::protocol::call::Attempt::Replay`], which every call of
//! the protocol is written to survive.

use std::sync::{Arc, Mutex, MutexGuard};

use redis::Value;

use super::route::{Next, Route, Servers, Tried};
use crate::config::options::TopologyOptions;
use crate::config::url::{Endpoint, ServerUrl};
use crate::error::{ConnectionFailure, LockError, Redirect, Result};
use crate::net::connection::{self, ServerConfig};
use crate::net::exchange;
use crate::net::pool::Role;
use crate::process::PerProcess;
use crate::protocol::call::Call;
use crate::protocol::command::Command;
use crate::protocol::keys::{hash_slot, hash_tag};

/// Most nodes asked for a slot map in one refresh: each may cost the
/// connect timeout when it is down.
const MAX_MAP_SOURCES: usize = 3;

/// A Redis Cluster reached through seed nodes.
pub(crate) struct Cluster {
    seeds: Vec<Arc<ServerConfig>>,
    /// The nodes' settings (credentials, TLS, timeouts); their addresses
    /// come from the slot map.
    template: ServerConfig,
    map: PerProcess<Mutex<Option<Arc<SlotMap>>>>,
}

/// Which master serves which slots, as one node saw it.
#[derive(Debug)]
struct SlotMap {
    /// `(first slot, last slot, master)`, sorted by first slot.
    ranges: Vec<(u16, u16, Arc<ServerConfig>)>,
    /// Every node named (masters and replicas): where the next map is
    /// asked for.
    nodes: Vec<Arc<ServerConfig>>,
}

impl SlotMap {
    fn master(&self, slot: u16) -> Option<&Arc<ServerConfig>> {
        let at = self.ranges.partition_point(|(first, _, _)| *first <= slot);
        let (first, last, master) = self.ranges.get(at.checked_sub(1)?)?;
        (*first..=*last).contains(&slot).then_some(master)
    }
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("seeds", &self.seeds.len())
            .finish_non_exhaustive()
    }
}

impl PartialEq for Cluster {
    fn eq(&self, other: &Self) -> bool {
        self.template == other.template
            && self.seeds.len() == other.seeds.len()
            && self
                .seeds
                .iter()
                .zip(&other.seeds)
                .all(|(a, b)| Arc::ptr_eq(a, b))
    }
}

/// Option `cluster`: the URLs are seed nodes ([`super::TOPOLOGIES`]).
pub(crate) fn build(
    urls: &[ServerUrl],
    options: &TopologyOptions,
) -> Result<Option<Box<dyn Route>>> {
    if !options.cluster {
        return Ok(None);
    }
    Ok(Some(Box::new(Cluster::new(urls.to_vec(), options)?)))
}

impl Cluster {
    /// The cluster behind the seed nodes `urls`; every node is reached with
    /// the first URL's credentials and TLS settings.
    pub(crate) fn new(urls: Vec<ServerUrl>, options: &TopologyOptions) -> Result<Self> {
        if let Some(url) = urls.iter().find(|url| url.db != 0) {
            return Err(LockError::invalid(
                "servers",
                format!(
                    "selects database {} in \"{url}\", but a Redis Cluster has only database 0",
                    url.db
                ),
            ));
        }
        if urls
            .iter()
            .any(|url| matches!(url.endpoint, Endpoint::Unix { .. }))
        {
            return Err(LockError::invalid(
                "servers",
                "names a unix socket, but Redis Cluster nodes are reached over TCP",
            ));
        }
        let template = ServerConfig::new(urls[0].clone(), &options.connection);
        let seeds = urls
            .into_iter()
            .map(|url| connection::intern(ServerConfig::new(url, &options.connection)))
            .collect();
        Ok(Self {
            seeds,
            template,
            map: PerProcess::new(|| Mutex::new(None)),
        })
    }

    /// The lock key for `prefix` + `key`: as is when it carries a hash tag,
    /// else `prefix{key}`, so that the helper keys (which extend it) share
    /// its slot while the prefix still starts every key (ACL patterns such
    /// as `~app:*` cover them).
    pub(crate) fn lock_key(prefix: &[u8], key: &[u8]) -> Result<Vec<u8>> {
        let plain = [prefix, key].concat();
        if has_tag(&plain) {
            return Ok(plain);
        }
        let wrapped = [prefix, b"{", key, b"}"].concat();
        if has_tag(&wrapped) {
            return Ok(wrapped);
        }
        if prefix.contains(&b'{') {
            // The prefix's "{" (an empty "{}" or one never closed) takes the
            // place of the tag the key would get.
            return Err(LockError::invalid(
                "options[\"prefix\"]",
                "has a \"{\" that leaves the lock without a Redis Cluster hash tag \
                 (the first {...} of a name is its tag, and an empty or unclosed one \
                 does not count): put a whole, non-empty {tag} in the prefix, or no brace",
            ));
        }
        Err(LockError::invalid(
            "key",
            "cannot be given a Redis Cluster hash tag (it starts with \"}\"); \
             put the part to hash in {braces} yourself",
        ))
    }

    /// The master that serves `key` now.
    pub(crate) fn master_of(&self, key: &[u8]) -> Result<Arc<ServerConfig>> {
        self.master(hash_slot(key))
    }

    /// The master of `slot` when it is not `old`: from the map when it
    /// already names another (a key of the same batch found it), else
    /// from a slot map asked for from other nodes than `old`.
    fn new_master(&self, slot: u16, old: &Arc<ServerConfig>) -> Option<Arc<ServerConfig>> {
        if let Some(known) = self.known_master(slot)
            && !Arc::ptr_eq(&known, old)
        {
            return Some(known);
        }
        self.refresh(None, Some(old))
            .ok()
            .and_then(|map| map.master(slot).cloned())
            .filter(|master| !Arc::ptr_eq(master, old))
    }

    /// The master of `slot` in the map known now, if any.
    fn known_master(&self, slot: u16) -> Option<Arc<ServerConfig>> {
        self.map()
            .as_ref()
            .and_then(|map| map.master(slot).cloned())
    }

    fn map(&self) -> MutexGuard<'_, Option<Arc<SlotMap>>> {
        self.map
            .get()
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The master of `slot` in the map (asked for first when there is none).
    fn master(&self, slot: u16) -> Result<Arc<ServerConfig>> {
        let known = self.map().clone();
        let map = match known {
            Some(map) => map,
            None => self.refresh(None, None)?,
        };
        map.master(slot)
            .cloned()
            .ok_or_else(|| LockError::Redirected {
                server: self.names().join(""),
                redirect: Redirect::Busy,
                detail: format!("no master serves hash slot {slot} (CLUSTERDOWN)"),
            })
    }

    /// Asks for a new slot map: `first` first, then the nodes of the map
    /// known so far, then the seeds; never `skip` (a node that just failed).
    fn refresh(
        &self,
        first: Option<&Arc<ServerConfig>>,
        skip: Option<&Arc<ServerConfig>>,
    ) -> Result<Arc<SlotMap>> {
        let known = self.map().clone();
        let mut sources: Vec<&Arc<ServerConfig>> = Vec::new();
        let candidates = first
            .into_iter()
            .chain(known.iter().flat_map(|map| map.nodes.iter()))
            .chain(&self.seeds);
        for node in candidates {
            let skipped = skip.is_some_and(|s| Arc::ptr_eq(s, node));
            if !skipped && !sources.iter().any(|s| Arc::ptr_eq(s, node)) {
                sources.push(node);
            }
        }
        let mut failures = Vec::new();
        for node in sources.into_iter().take(MAX_MAP_SOURCES) {
            match self.ask_slots(node) {
                Ok(map) => {
                    let map = Arc::new(map);
                    *self.map() = Some(map.clone());
                    return Ok(map);
                }
                Err(e) => failures.push(e.to_string()),
            }
        }
        Err(LockError::Connection {
            server: self.names().join(""),
            kind: ConnectionFailure::Unreachable,
            detail: format!("no node gave the slot map ({})", failures.join("; ")),
        })
    }

    /// `CLUSTER SLOTS` on `node`.
    fn ask_slots(&self, node: &Arc<ServerConfig>) -> Result<SlotMap> {
        let ranges = exchange::run_one(node, Role::Command, &|_| {
            Call::new(vec![Command::of(&[b"CLUSTER", b"SLOTS"])], parse_slots)
        })?;
        let mut map = SlotMap {
            ranges: Vec::with_capacity(ranges.len()),
            nodes: Vec::new(),
        };
        for (first, last, nodes) in ranges {
            let mut configs = nodes
                .into_iter()
                .map(|(host, port)| self.node_at(host, port, node));
            let Some(master) = configs.next() else {
                continue;
            };
            for config in std::iter::once(master.clone()).chain(configs) {
                if !map.nodes.iter().any(|n| Arc::ptr_eq(n, &config)) {
                    map.nodes.push(config);
                }
            }
            map.ranges.push((first, last, master));
        }
        if map.ranges.is_empty() {
            return Err(LockError::Connection {
                server: node.name(),
                kind: ConnectionFailure::Other,
                detail: "CLUSTER SLOTS names no master: the cluster is not set up yet".into(),
            });
        }
        map.ranges.sort_by_key(|(first, _, _)| *first);
        Ok(map)
    }

    /// The node written `host:port` in a redirect that `asked` sent.
    fn node(&self, address: &str, asked: &ServerConfig) -> Arc<ServerConfig> {
        let (host, port) = address.rsplit_once(':').unwrap_or((address, ""));
        let port = port.parse().unwrap_or(0);
        self.node_at(host.to_owned(), port, asked)
    }

    /// The node at `host:port`; an empty or `?` host (a node that does not
    /// know its own address) is the host of `asked`, which named it.
    fn node_at(&self, host: String, port: u16, asked: &ServerConfig) -> Arc<ServerConfig> {
        let host = match (host.as_str(), &asked.url.endpoint) {
            ("" | "?", Endpoint::Tcp { host: own, .. }) => own.clone(),
            _ => host,
        };
        let tls = matches!(self.template.url.endpoint, Endpoint::Tcp { tls: true, .. });
        let mut config = self.template.clone();
        config.url.endpoint = Endpoint::Tcp { host, port, tls };
        connection::intern(config)
    }
}

impl Route for Cluster {
    /// The master of the key's slot.
    fn servers(&self, key: &[u8]) -> Result<Servers<'_>> {
        self.master_of(key).map(Servers::Found)
    }

    fn by_key(&self) -> bool {
        true
    }

    /// Every node of a slot map asked for now: the masters, then the
    /// replicas (a failover promotes one, with what it has).
    fn nodes(&self) -> Result<Vec<Arc<ServerConfig>>> {
        let map = self.refresh(None, None)?;
        let mut nodes: Vec<Arc<ServerConfig>> = Vec::new();
        let masters = map.ranges.iter().map(|(_, _, master)| master);
        for node in masters.chain(&map.nodes) {
            if !nodes.iter().any(|known| Arc::ptr_eq(known, node)) {
                nodes.push(node.clone());
            }
        }
        Ok(nodes)
    }

    /// A command is sent again only when the node said it did not run it
    /// (`MOVED`, `ASK`, `TRYAGAIN`, `CLUSTERDOWN`, `READONLY`), or, after a
    /// lost connection whose slot now has another master (a failover), as
    /// a replay there.
    fn on_error(&self, tried: &Tried<'_>, err: &LockError) -> Next {
        let slot = hash_slot(tried.key);
        match err {
            LockError::Redirected { redirect, .. } => match redirect {
                // A redirect for another slot (a batch of keys): the key
                // goes where the map says.
                Redirect::Moved { slot: moved, .. } | Redirect::Ask { slot: moved, .. }
                    if *moved != slot =>
                {
                    Next::Reroute
                }
                Redirect::Moved { node: to, .. } => {
                    let to = self.node(to, tried.server);
                    // Later calls: the whole map has probably changed
                    // (unless a key of the same batch saw to it).
                    if self
                        .known_master(slot)
                        .is_none_or(|m| !Arc::ptr_eq(&m, &to))
                    {
                        let _ = self.refresh(Some(&to), None);
                    }
                    Next::Redirect(to)
                }
                Redirect::Ask { node: to, .. } => Next::Ask(self.node(to, tried.server)),
                Redirect::Busy => Next::Retry,
                // A master demoted to replica: the command did not run; go
                // where the cluster says the slot is now.
                Redirect::ReadOnly => match self.new_master(slot, tried.server) {
                    Some(master) => Next::Redirect(master),
                    None => Next::Retry,
                },
            },
            // A failover gives the slot another master: the call may have
            // run on the old one (and been replicated), so the new one gets
            // it as a replay. Same master: give up.
            e if e.is_connection_error() && !tried.asking => {
                match self.new_master(slot, tried.server) {
                    Some(master) => Next::Replay(master),
                    None => Next::Done,
                }
            }
            _ => Next::Done,
        }
    }

    /// `prefix{key}` unless it has a hash tag ([`Cluster::lock_key`]).
    fn lock_key(&self, prefix: &[u8], key: &[u8]) -> Result<Vec<u8>> {
        Cluster::lock_key(prefix, key)
    }

    /// One counter per hash slot.
    fn fence_counter(&self, prefix: &[u8], lock_key: &[u8]) -> Option<Vec<u8>> {
        crate::protocol::keys::fence_counter(prefix, lock_key, true)
    }

    /// The keyspace: the cluster, by its seed nodes.
    fn scope(&self) -> String {
        let seeds: Vec<String> = self.seeds.iter().map(|s| s.url.keyspace()).collect();
        format!("cluster({})", seeds.join(","))
    }

    /// The cluster, for messages.
    fn names(&self) -> Vec<String> {
        let seeds: Vec<String> = self.seeds.iter().map(|s| s.name()).collect();
        vec![format!("Cluster via {}", seeds.join(", "))]
    }

    fn lost_way(&self, hops: u32, last: &LockError) -> LockError {
        LockError::Connection {
            server: self.names().join(""),
            kind: ConnectionFailure::Other,
            detail: format!(
                "the cluster sent the call elsewhere {hops} times (last: {last}); \
                 its slots are being migrated or failed over, try again"
            ),
        }
    }
}

/// True when `key` has a non-empty hash tag (the first `{...}`).
fn has_tag(key: &[u8]) -> bool {
    hash_tag(key).len() != key.len()
}

/// One `CLUSTER SLOTS` entry: first and last slot, master then replicas as
/// `(host, port)`.
type SlotRange = (u16, u16, Vec<(String, u16)>);

fn parse_slots(replies: Vec<Value>) -> redis::RedisResult<Vec<SlotRange>> {
    let reply = replies.into_iter().next().unwrap_or(Value::Nil);
    let entries: Vec<Vec<Value>> = redis::from_redis_value(reply.extract_error()?)?;
    let mut ranges = Vec::with_capacity(entries.len());
    for entry in entries {
        let mut fields = entry.into_iter();
        let (Some(first), Some(last)) = (fields.next(), fields.next()) else {
            continue;
        };
        let first: u16 = redis::from_redis_value(first)?;
        let last: u16 = redis::from_redis_value(last)?;
        let mut nodes = Vec::new();
        for node in fields {
            let node: Vec<Value> = redis::from_redis_value(node)?;
            let mut parts = node.into_iter();
            let (Some(host), Some(port)) = (parts.next(), parts.next()) else {
                continue;
            };
            nodes.push((
                redis::from_redis_value(host)?,
                redis::from_redis_value(port)?,
            ));
        }
        ranges.push((first, last, nodes));
    }
    Ok(ranges)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_without_a_tag_is_wrapped_after_the_prefix() {
        assert_eq!(Cluster::lock_key(b"app:", b"job").unwrap(), b"app:{job}");
        assert_eq!(Cluster::lock_key(b"", b"job").unwrap(), b"{job}");
    }

    #[test]
    fn a_key_with_a_tag_is_kept() {
        assert_eq!(
            Cluster::lock_key(b"app:", b"{tenant}:job").unwrap(),
            b"app:{tenant}:job"
        );
        assert_eq!(Cluster::lock_key(b"{app}:", b"job").unwrap(), b"{app}:job");
    }

    #[test]
    fn braces_that_make_no_tag_are_wrapped_too() {
        assert_eq!(Cluster::lock_key(b"p:", b"a{b").unwrap(), b"p:{a{b}");
        assert_eq!(Cluster::lock_key(b"p:", b"{}x").unwrap(), b"p:{{}x}");
        let key = Cluster::lock_key(b"p:", b"a}b").unwrap();
        assert_eq!(hash_tag(&key), b"a");
    }

    #[test]
    fn a_key_that_cannot_be_tagged_is_refused() {
        let err = Cluster::lock_key(b"p:", b"}x").unwrap_err();
        assert!(err.to_string().contains("hash tag"), "{err}");
    }

    #[test]
    fn slot_map_lookup_finds_ranges_and_gaps() {
        let config = |port| {
            let url = ServerUrl::parse("s", &format!("redis://127.0.0.1:{port}")).unwrap();
            Arc::new(ServerConfig::new(
                url,
                &crate::config::options::ConnectionOptions::default(),
            ))
        };
        let (a, b) = (config(1), config(2));
        let map = SlotMap {
            ranges: vec![(0, 99, a.clone()), (200, 16383, b.clone())],
            nodes: vec![],
        };
        assert!(Arc::ptr_eq(map.master(0).unwrap(), &a));
        assert!(Arc::ptr_eq(map.master(99).unwrap(), &a));
        assert!(map.master(100).is_none());
        assert!(Arc::ptr_eq(map.master(16383).unwrap(), &b));
    }
}
