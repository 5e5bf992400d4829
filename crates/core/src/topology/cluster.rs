//! Redis Cluster: the URLs are seed nodes; the slot map (which master
//! serves which of the 16384 hash slots) is asked for with `CLUSTER SLOTS`
//! and kept per process. A lock's keys share one slot (its key carries a
//! hash tag), so every call of the protocol goes to one master.
//!
//! Routing is ours, on the same connections and [`crate::net::exchange`] as every
//! other topology, not redis-rs's cluster client: that client resends a
//! command by itself after a timeout or a dropped connection (a bare
//! `SET NX` resent answers nil for a lock we already hold: the lease would
//! leak) and a `BLPOP` resent after the server popped our wake-up loses it.
//! Here a command is sent again only when the node said it did not run it
//! (`MOVED`, `ASK`, `TRYAGAIN`, `CLUSTERDOWN`), or, after a lost connection
//! whose slot now has another master (a failover), as an
//! [`Attempt::Replay`], which every call of the protocol is written to
//! survive.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use redis::Value;

use crate::config::options::LockOptions;
use crate::config::url::{Endpoint, ServerUrl};
use crate::error::{ConnectionFailure, LockError, Redirect, Result};
use crate::net::connection::{self, ServerConfig};
use crate::net::exchange;
use crate::net::pool::Role;
use crate::process::PerProcess;
use crate::protocol::call::{Attempt, Call};
use crate::protocol::command::Command;
use crate::protocol::keys::{hash_slot, hash_tag};

/// Most routes tried for one call (redirects, waits for a reconfiguring
/// cluster, a failover).
const MAX_ROUTES: u32 = 8;

/// Most nodes asked for a slot map in one refresh: each may cost the
/// connect timeout when it is down.
const MAX_MAP_SOURCES: usize = 3;

/// The first pause after `TRYAGAIN` / `CLUSTERDOWN`; doubled each time up
/// to [`BUSY_PAUSE_MAX`] (about a second over [`MAX_ROUTES`] tries).
const BUSY_PAUSE: Duration = Duration::from_millis(10);
const BUSY_PAUSE_MAX: Duration = Duration::from_millis(200);

/// A Redis Cluster reached through seed nodes.
pub struct Cluster {
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

/// Where the next try of a call goes.
enum Route {
    /// The slot's master in the map.
    Master,
    /// The node a `MOVED` named (the map may lag behind it).
    Moved(Arc<ServerConfig>),
    /// The importing node of an `ASK`, with `ASKING`.
    Ask(Arc<ServerConfig>),
}

impl Cluster {
    /// The nodes' settings (timeouts, credentials, TLS).
    pub fn template(&self) -> &ServerConfig {
        &self.template
    }

    /// The cluster behind the seed nodes `urls`; every node is reached with
    /// the first URL's credentials and TLS settings.
    pub fn new(urls: Vec<ServerUrl>, options: &LockOptions) -> Result<Self> {
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
        let template = ServerConfig::new(urls[0].clone(), options);
        let seeds = urls
            .into_iter()
            .map(|url| connection::intern(ServerConfig::new(url, options)))
            .collect();
        Ok(Self {
            seeds,
            template,
            map: PerProcess::new(|| Mutex::new(None)),
        })
    }

    /// The keyspace: the cluster, by its seed nodes.
    pub fn scope(&self) -> String {
        let seeds: Vec<String> = self.seeds.iter().map(|s| s.url.keyspace()).collect();
        format!("cluster({})", seeds.join(","))
    }

    /// The cluster, for messages.
    pub fn names(&self) -> Vec<String> {
        let seeds: Vec<String> = self.seeds.iter().map(|s| s.name()).collect();
        vec![format!("Cluster via {}", seeds.join(", "))]
    }

    /// The lock key for `prefix` + `key`: as is when it carries a hash tag,
    /// else `prefix{key}`, so that the helper keys (which extend it) share
    /// its slot while the prefix still starts every key (ACL patterns such
    /// as `~app:*` cover them).
    pub fn lock_key(prefix: &[u8], key: &[u8]) -> Result<Vec<u8>> {
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
    pub fn master_of(&self, key: &[u8]) -> Result<Arc<ServerConfig>> {
        self.master(hash_slot(key))
    }

    /// Runs a call on the master of `key`'s slot, following the cluster's
    /// redirects and a failover.
    pub fn run<T>(&self, role: Role, key: &[u8], build: &dyn Fn(Attempt) -> Call<T>) -> Result<T> {
        let slot = hash_slot(key);
        let mut route = Route::Master;
        let mut replay = false;
        let mut busy = 0;
        let mut last = None;
        for _ in 0..MAX_ROUTES {
            let node = match &route {
                Route::Master => self.master(slot)?,
                Route::Moved(node) | Route::Ask(node) => node.clone(),
            };
            let asking = matches!(route, Route::Ask(_));
            let result = exchange::run_one(&node, role, &|attempt| {
                let mut call = build(if replay { Attempt::Replay } else { attempt });
                call.asking = asking;
                call
            });
            let err = match result {
                Ok(value) => return Ok(value),
                Err(err) => err,
            };
            route = match &err {
                LockError::Redirected { redirect, .. } => match redirect {
                    Redirect::Moved { node: to, .. } => {
                        let to = self.node(to, &node);
                        // Later calls: the whole map has probably changed.
                        let _ = self.refresh(Some(&to), None);
                        Route::Moved(to)
                    }
                    Redirect::Ask { node: to, .. } => Route::Ask(self.node(to, &node)),
                    Redirect::Busy => {
                        busy = pause(busy);
                        Route::Master
                    }
                    // A master demoted to replica: the command did not run;
                    // go where the cluster says the slot is now.
                    Redirect::ReadOnly => match self.new_master(slot, &node) {
                        Some(master) => Route::Moved(master),
                        None => {
                            busy = pause(busy);
                            Route::Master
                        }
                    },
                },
                e if e.is_connection_error() && !asking => {
                    // A failover gives the slot another master: the call may
                    // have run on the old one (and been replicated), so the
                    // new one gets it as a replay. Same master: give up.
                    match self.new_master(slot, &node) {
                        Some(master) => {
                            replay = true;
                            Route::Moved(master)
                        }
                        None => return Err(err),
                    }
                }
                _ => return Err(err),
            };
            last = Some(err);
        }
        Err(LockError::Connection {
            server: self.names().join(""),
            kind: ConnectionFailure::Other,
            detail: format!(
                "the cluster sent the call elsewhere {MAX_ROUTES} times (last: {}); \
                 its slots are being migrated or failed over, try again",
                last.map_or_else(String::new, |e| e.to_string())
            ),
        })
    }

    /// Runs one call per master for many keys (the renewal thread): `build`
    /// gets the indices of the keys that master serves. A master whose call
    /// was redirected or lost is retried key by key through [`Cluster::run`].
    /// Returns one result per key.
    pub fn run_batch<T>(
        &self,
        role: Role,
        keys: &[&[u8]],
        build: &super::BatchCall<'_, T>,
    ) -> Vec<Result<T>> {
        let mut groups: Vec<(Arc<ServerConfig>, Vec<usize>)> = Vec::new();
        let mut results: Vec<Option<Result<T>>> = (0..keys.len()).map(|_| None).collect();
        for (i, key) in keys.iter().enumerate() {
            match self.master_of(key) {
                Ok(master) => match groups.iter_mut().find(|(m, _)| Arc::ptr_eq(m, &master)) {
                    Some((_, indices)) => indices.push(i),
                    None => groups.push((master, vec![i])),
                },
                Err(e) => results[i] = Some(Err(e)),
            }
        }
        let masters: Vec<Arc<ServerConfig>> = groups.iter().map(|(m, _)| m.clone()).collect();
        let replies = exchange::run_all(&masters, role, &|g, attempt| build(&groups[g].1, attempt));
        for ((_, indices), reply) in groups.iter().zip(replies) {
            match reply {
                Ok(values) if values.len() == indices.len() => {
                    for (&i, value) in indices.iter().zip(values) {
                        results[i] = Some(Ok(value));
                    }
                }
                Ok(_) => {
                    for &i in indices {
                        results[i] = Some(Err(LockError::Internal("short batch reply".into())));
                    }
                }
                Err(e) if matches!(e, LockError::Redirected { .. }) || e.is_connection_error() => {
                    for &i in indices {
                        let one = self.run(role, keys[i], &|attempt| build(&[i], attempt));
                        results[i] = Some(one.and_then(|mut values| {
                            values
                                .pop()
                                .ok_or_else(|| LockError::Internal("empty batch reply".into()))
                        }));
                    }
                }
                Err(e) => {
                    for &i in indices {
                        results[i] = Some(Err(e.clone()));
                    }
                }
            }
        }
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(LockError::Internal("no reply".into()))))
            .collect()
    }

    /// The master of `slot` in a slot map asked for from other nodes than
    /// `old`, when it is not `old`.
    fn new_master(&self, slot: u16, old: &Arc<ServerConfig>) -> Option<Arc<ServerConfig>> {
        self.refresh(None, Some(old))
            .ok()
            .and_then(|map| map.master(slot).cloned())
            .filter(|master| !Arc::ptr_eq(master, old))
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

/// Sleeps before the `busy`-th retry of a reconfiguring cluster; returns
/// the next count.
fn pause(busy: u32) -> u32 {
    std::thread::sleep((BUSY_PAUSE * 2u32.pow(busy.min(10))).min(BUSY_PAUSE_MAX));
    busy + 1
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
            Arc::new(ServerConfig::new(url, &LockOptions::default()))
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
