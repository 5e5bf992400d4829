//! Where a lock's keys live: the only place that knows how many Redis
//! servers there are and how they relate.
//!
//! The lock protocol ([`crate::lock`], [`crate::lock::renewal`]) is written once
//! against [`Topology`]: it asks the topology to run a [`Call`] for a key
//! and gets [`Votes`] back, one result per server that holds the key,
//! counted against the topology's quorum. On a single server that is one
//! reply and a quorum of one; over Redlock's N independent masters, N
//! replies and `floor(N/2) + 1`.
//!
//! - [`single`]: one server
//! - [`redlock`]: several independent masters, every call to all at once
//! - [`sentinel`]: the master that Sentinels name, followed across failovers
//! - [`cluster`]: Redis Cluster, each key on the master of its hash slot

pub mod cluster;
pub mod redlock;
pub mod sentinel;
pub mod single;
mod votes;

use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use votes::Votes;

use crate::config::options::LockOptions;
use crate::config::url::ServerUrl;
use crate::error::{LockError, Result};
use crate::net::connection::{self, ServerConfig};
use crate::net::exchange;
use crate::net::pool::Role;
use crate::process::PerProcess;
use crate::protocol::call::{Attempt, Call};
use crate::protocol::keys::LockKeys;

/// How a blocked acquire waits for its turn on this topology.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waiting {
    /// One server decides: waiters queue there and a release hands the
    /// lock to the first live one (FIFO, no barging).
    HandOver,
    /// A quorum decides: a release wakes the first waiter queued on each
    /// server, which then tries for a quorum again.
    Quorum,
}

/// Topologies kept by [`Topology::build`] for reuse.
const RECENT_TOPOLOGIES: usize = 16;

/// Builds the call for a batch of keys (their indices), one result each.
pub type BatchCall<'a, T> = dyn Fn(&[usize], Attempt) -> Call<Vec<T>> + 'a;

/// Runs a call on the given servers; `Some(attempt)` overrides the
/// attempt of every call (a replay after a failover).
type OnServers<'a, T> = dyn Fn(&[Arc<ServerConfig>], Option<Attempt>) -> Vec<Result<T>> + 'a;

/// The servers of a lock and how they are used.
#[derive(Debug)]
pub struct Topology {
    kind: Kind,
    scope: Arc<str>,
    /// The servers as shown in messages (passwords masked), built once:
    /// every call's [`Votes`] carries them for its error message.
    names: Arc<[String]>,
    /// The key names of the locks built here lately, by prefix and key
    /// ([`Topology::lock_keys`]).
    keys: PerProcess<Mutex<Vec<RecentKeys>>>,
}

/// A prefix, a key, and the key names of their lock.
type RecentKeys = (Vec<u8>, Vec<u8>, Arc<LockKeys>);

/// Servers, options and the topology built of them.
type RecentTopology = (Vec<String>, LockOptions, Arc<Topology>);

/// Lock key names kept per topology for reuse.
const RECENT_KEYS: usize = 64;

#[derive(Debug, PartialEq)]
enum Kind {
    Single(single::Single),
    Redlock(redlock::Redlock),
    Sentinel(Box<sentinel::Sentinel>),
    Cluster(Box<cluster::Cluster>),
}

impl Topology {
    /// Parses `urls` and the topology options into a shared topology
    /// (equal topologies of one process share one instance). Sends nothing.
    pub fn build(urls: &[String], options: &LockOptions) -> Result<Arc<Self>> {
        // Most locks of a process are built with the same servers and
        // options: the topology of the last few is kept (no parsing, no
        // registry walk).
        static RECENT: PerProcess<Mutex<Vec<RecentTopology>>> =
            PerProcess::new(|| Mutex::new(Vec::new()));
        let mut recent = RECENT.get().lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, _, known)) = recent
            .iter()
            .find(|(u, o, _)| u.as_slice() == urls && o == options)
        {
            return Ok(known.clone());
        }
        let built = Self::parse_and_build(urls, options)?;
        if recent.len() >= RECENT_TOPOLOGIES {
            recent.remove(0);
        }
        recent.push((urls.to_vec(), options.clone(), built.clone()));
        Ok(built)
    }

    fn parse_and_build(urls: &[String], options: &LockOptions) -> Result<Arc<Self>> {
        let parsed = urls
            .iter()
            .map(|url| ServerUrl::parse("servers", url))
            .collect::<Result<Vec<_>>>()?;
        if parsed.is_empty() {
            return Err(LockError::invalid("servers", "must not be empty"));
        }
        if options.cluster {
            return Ok(intern(Kind::Cluster(Box::new(cluster::Cluster::new(
                parsed, options,
            )?))));
        }
        if let Some(name) = &options.sentinel {
            return Ok(intern(Kind::Sentinel(Box::new(sentinel::Sentinel::new(
                name, parsed, options,
            )))));
        }
        let mut servers: Vec<Arc<ServerConfig>> = parsed
            .into_iter()
            .map(|url| connection::intern(ServerConfig::new(url, options)))
            .collect();
        let kind = if servers.len() == 1 {
            Kind::Single(single::Single::new(servers.swap_remove(0)))
        } else {
            Kind::Redlock(redlock::Redlock::new(servers, options)?)
        };
        Ok(intern(kind))
    }

    /// The name in Redis of the lock on `key` with `prefix`: `prefix` +
    /// `key`, on Redis Cluster wrapped in a hash tag when it has none
    /// ([`cluster::Cluster::lock_key`]).
    pub fn lock_key(&self, prefix: &[u8], key: &[u8]) -> Result<Vec<u8>> {
        match &self.kind {
            Kind::Cluster(_) => cluster::Cluster::lock_key(prefix, key),
            _ => Ok([prefix, key].concat()),
        }
    }

    /// The key names of the lock on `key` with `prefix` ([`Topology::lock_key`]
    /// and [`Topology::fence_counter`], with their encoded command heads),
    /// shared by the locks built on it lately.
    pub fn lock_keys(&self, prefix: &[u8], key: &[u8]) -> Result<Arc<LockKeys>> {
        let mut recent = self.keys.get().lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, _, known)) = recent.iter().find(|(p, k, _)| p == prefix && k == key) {
            return Ok(known.clone());
        }
        let lock = self.lock_key(prefix, key)?;
        let counter = self.fence_counter(prefix, &lock)?;
        let keys = Arc::new(LockKeys::new(lock, counter));
        if recent.len() >= RECENT_KEYS {
            recent.remove(0);
        }
        recent.push((prefix.to_vec(), key.to_vec(), keys.clone()));
        Ok(keys)
    }

    /// The fencing counter shared by the locks under `prefix` that live with
    /// `lock_key` ([`crate::protocol::keys::fence_counter`]): one per server, on
    /// Redis Cluster one per hash slot.
    pub fn fence_counter(&self, prefix: &[u8], lock_key: &[u8]) -> Result<Vec<u8>> {
        let cluster = matches!(self.kind, Kind::Cluster(_));
        crate::protocol::keys::fence_counter(prefix, lock_key, cluster).ok_or_else(|| {
            LockError::invalid(
                "options[\"prefix\"]",
                "has a \"{\" without its \"}\": on Redis Cluster a prefix may carry a whole \
                 hash tag or none",
            )
        })
    }

    /// Identifies the keyspace: two locks on the same key and scope are the
    /// same lock (reentrancy).
    pub fn scope(&self) -> &Arc<str> {
        &self.scope
    }

    /// The servers, passwords masked, for messages and `var_dump`.
    pub fn names(&self) -> Vec<String> {
        self.names.to_vec()
    }

    /// How long after a call is sent its replay can still come: the call's
    /// reply is lost (at most a read timeout), a new connection is opened
    /// (at most a connect timeout) and the call sent again, plus a second
    /// of slack. Released tokens are kept this long for a replay to find.
    pub fn replay_window(&self) -> Duration {
        let of = |s: &ServerConfig| s.connect_timeout + s.read_timeout;
        let slowest = match &self.kind {
            Kind::Single(single) => of(single.server()),
            Kind::Redlock(redlock) => redlock
                .servers()
                .iter()
                .map(|s| of(s))
                .max()
                .unwrap_or_default(),
            Kind::Sentinel(sentinel) => of(sentinel.template()),
            // A lost master's call is replayed on its successor, found
            // through one more node.
            Kind::Cluster(cluster) => 2 * of(cluster.template()),
        };
        slowest + Duration::from_secs(1)
    }

    /// How a blocked acquire waits here.
    pub fn waiting(&self) -> Waiting {
        match &self.kind {
            Kind::Single(_) | Kind::Sentinel(_) | Kind::Cluster(_) => Waiting::HandOver,
            Kind::Redlock(_) => Waiting::Quorum,
        }
    }

    /// The clock drift between servers allowed for a lease of `ttl_ms`:
    /// `ttl * drift_factor + 2 ms` over Redlock, none on one master.
    pub fn drift(&self, ttl_ms: u64) -> Duration {
        match &self.kind {
            Kind::Redlock(r) => r.drift(ttl_ms),
            Kind::Single(_) | Kind::Sentinel(_) | Kind::Cluster(_) => Duration::ZERO,
        }
    }

    /// How long a lease of `ttl_ms` taken `elapsed` after the request was
    /// sent can be counted on (the [`Topology::drift`] subtracted); `None`
    /// when nothing is left.
    pub fn validity(&self, ttl_ms: u64, elapsed: Duration) -> Option<Duration> {
        Duration::from_millis(ttl_ms)
            .checked_sub(elapsed + self.drift(ttl_ms))
            .filter(|left| !left.is_zero())
    }

    /// Runs a call on every server that holds `key`, all at once.
    pub fn run<T>(&self, role: Role, key: &[u8], build: &dyn Fn(Attempt) -> Call<T>) -> Votes<T> {
        if let Kind::Cluster(cluster) = &self.kind {
            return self.votes(vec![cluster.run(role, key, build)]);
        }
        let results = self.on_servers(&|servers, replay| match servers {
            [one] => vec![exchange::run_one(one, role, &|attempt| {
                build(replay.unwrap_or(attempt))
            })],
            _ => exchange::run_all(servers, role, &|_, attempt| {
                build(replay.unwrap_or(attempt))
            }),
        });
        self.votes(results)
    }

    /// Runs a call on the `node`-th server that holds `key` (a blocking
    /// wait listens on one server).
    pub fn run_on<T>(
        &self,
        node: usize,
        role: Role,
        key: &[u8],
        build: &dyn Fn(Attempt) -> Call<T>,
    ) -> Result<T> {
        if let Kind::Cluster(cluster) = &self.kind {
            return match node {
                0 => cluster.run(role, key, build),
                _ => Err(LockError::Internal(format!("no server number {node}"))),
            };
        }
        let mut results = self.on_servers(&|servers, replay| match servers.get(node) {
            Some(server) => vec![exchange::run_one(server, role, &|attempt| {
                build(replay.unwrap_or(attempt))
            })],
            None => vec![Err(LockError::Internal(format!("no server number {node}")))],
        });
        results
            .pop()
            .unwrap_or_else(|| Err(LockError::Internal("no reply".into())))
    }

    /// How many servers hold each key.
    pub fn servers_per_key(&self) -> usize {
        match &self.kind {
            Kind::Redlock(r) => r.servers().len(),
            Kind::Single(_) | Kind::Sentinel(_) | Kind::Cluster(_) => 1,
        }
    }

    /// Runs one call per server for many keys at once (the renewal
    /// thread): `build` gets the indices of the keys that server holds and
    /// returns one result per index. Returns the votes of each key.
    pub fn run_batch<T>(
        &self,
        role: Role,
        keys: &[&[u8]],
        build: &BatchCall<'_, T>,
    ) -> Vec<Votes<T>> {
        if let Kind::Cluster(cluster) = &self.kind {
            return cluster
                .run_batch(role, keys, build)
                .into_iter()
                .map(|result| self.votes(vec![result]))
                .collect();
        }
        let indices: Vec<usize> = (0..keys.len()).collect();
        let per_server = self.on_servers(&|servers, replay| {
            exchange::run_all(servers, role, &|_, attempt| {
                build(&indices, replay.unwrap_or(attempt))
            })
        });
        let mut per_key: Vec<Vec<Result<T>>> = (0..keys.len()).map(|_| Vec::new()).collect();
        for result in per_server {
            match result {
                Ok(values) if values.len() == keys.len() => {
                    for (slot, value) in per_key.iter_mut().zip(values) {
                        slot.push(Ok(value));
                    }
                }
                Ok(_) => per_key.iter_mut().for_each(|slot| {
                    slot.push(Err(LockError::Internal("short batch reply".into())))
                }),
                Err(e) => per_key
                    .iter_mut()
                    .for_each(|slot| slot.push(Err(e.clone()))),
            }
        }
        per_key
            .into_iter()
            .map(|results| self.votes(results))
            .collect()
    }

    /// Whether every server of `key` is known to run our scripts.
    pub fn scripts_checked(&self, key: &[u8]) -> bool {
        match self.current(key) {
            Ok(servers) => servers.iter().all(|s| s.scripts.get()),
            Err(_) => false,
        }
    }

    /// Records that the servers of `key` whose `ok` is true ran a script.
    pub fn mark_scripts_checked(&self, key: &[u8], ok: &[bool]) {
        if let Ok(servers) = self.current(key) {
            for (server, ok) in servers.iter().zip(ok) {
                if *ok {
                    server.scripts.set();
                }
            }
        }
    }

    fn votes<T>(&self, results: Vec<Result<T>>) -> Votes<T> {
        let quorum = results.len() / 2 + 1;
        Votes::new(results, quorum, self.names.clone())
    }

    /// The servers that hold `key` now (Sentinel: the current master;
    /// Cluster: the master of its slot).
    fn current(&self, key: &[u8]) -> Result<Cow<'_, [Arc<ServerConfig>]>> {
        match &self.kind {
            Kind::Single(s) => Ok(Cow::Borrowed(std::slice::from_ref(s.server()))),
            Kind::Redlock(r) => Ok(Cow::Borrowed(r.servers())),
            Kind::Sentinel(s) => Ok(Cow::Owned(vec![s.master()?])),
            Kind::Cluster(c) => Ok(Cow::Owned(vec![c.master_of(key)?])),
        }
    }

    /// Runs `go` on the current servers. On Sentinel, a reply that says the
    /// master moved (READONLY, or the master gone) makes it ask the
    /// Sentinels again and, when they name another master, run once more
    /// there as a replay (the first try may have run and replicated).
    fn on_servers<T>(&self, go: &OnServers<'_, T>) -> Vec<Result<T>> {
        // Not Cluster (routed per key by `cluster::Cluster`): the servers
        // here are the same for every key.
        let servers = match self.current(&[]) {
            Ok(servers) => servers,
            Err(e) => return vec![Err(e)],
        };
        let results = go(&servers, None);
        let Kind::Sentinel(sentinel) = &self.kind else {
            return results;
        };
        let moved = results
            .iter()
            .any(|r| r.as_ref().is_err_and(sentinel::master_moved));
        if !moved {
            return results;
        }
        sentinel.forget(&servers[0]);
        match sentinel.master() {
            Ok(master) if !Arc::ptr_eq(&master, &servers[0]) => {
                go(&[master], Some(Attempt::Replay))
            }
            _ => results,
        }
    }
}

/// The one shared instance of a topology (per process, as
/// [`connection::intern`]'s registry and for the same reason).
fn intern(kind: Kind) -> Arc<Topology> {
    static REGISTRY: PerProcess<Mutex<Vec<Arc<Topology>>>> =
        PerProcess::new(|| Mutex::new(Vec::new()));
    let mut registry = REGISTRY
        .get()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(known) = registry.iter().find(|t| t.kind == kind) {
        return known.clone();
    }
    let scope: Arc<str> = match &kind {
        Kind::Single(s) => s.server().url.keyspace().into(),
        Kind::Redlock(r) => r.scope().into(),
        Kind::Sentinel(s) => s.scope().into(),
        Kind::Cluster(c) => c.scope().into(),
    };
    let names: Arc<[String]> = match &kind {
        Kind::Single(s) => vec![s.server().name()].into(),
        Kind::Redlock(r) => r.servers().iter().map(|s| s.name()).collect(),
        Kind::Sentinel(s) => s.names().into(),
        Kind::Cluster(c) => c.names().into(),
    };
    let topology = Arc::new(Topology {
        kind,
        scope,
        names,
        keys: PerProcess::new(|| Mutex::new(Vec::new())),
    });
    registry.push(topology.clone());
    topology
}
