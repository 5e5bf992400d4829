//! Where a lock's keys live: the only place that knows how many Redis
//! servers there are and how they relate.
//!
//! The lock protocol (the lock and the lease engine above) is written once
//! against [`Topology`]: it asks the topology to run a
//! [`Call`](crate::protocol::call::Call) for a key
//! and gets [`Votes`] back, one result per server that holds the key,
//! counted against the topology's quorum. On a single server that is one
//! reply and a quorum of one; over Redlock's N independent masters, N
//! replies and `floor(N/2) + 1`.
//!
//! Each topology is one file that implements [`Route`]: which servers
//! hold a key, what an error reply means ([`Next`]), the quorum, how a
//! blocked acquire waits, the drift, the lock key's name. Nothing outside
//! those files asks which topology it is. [`Topology`] holds one route and
//! is its one executor (`executor.rs`): [`Topology::run`],
//! [`Topology::run_where`], [`Topology::run_on`] and
//! [`Topology::run_batch`] send a call, follow the route's [`Next`] for a
//! server that failed (at most `MAX_HOPS` tries, a growing pause on
//! [`Next::Retry`], `ASKING` on [`Next::Ask`], a replay staying a replay)
//! and count the replies against the route's quorum. What each server was
//! found to run is kept beside its configuration (`capabilities.rs`,
//! `server_facts.rs`).
//!
//! - [`single`]: one server
//! - [`redlock`]: several independent masters, every call to all at once
//! - [`sentinel`]: the master that Sentinels name, followed across failovers
//! - [`cluster`]: Redis Cluster, each key on the master of its hash slot
//!
//! A new topology is one new file with a `build` function (`Ok(None)` when
//! the servers and options are not for it) and one line in [`TOPOLOGIES`].

mod capabilities;
pub(crate) mod cluster;
mod executor;
mod node;
pub(crate) mod redlock;
pub(crate) mod route;
pub(crate) mod sentinel;
mod server_facts;
pub(crate) mod single;
mod votes;
mod wait;

use std::any::Any;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What a server's `INFO` says ([`Node::read_facts`]).
pub(crate) use crate::net::facts::ServerFacts;
/// Which connection of a server a call goes on: the floors above ask for
/// it here, not in `net`.
pub(crate) use crate::net::pool::Role;
pub(crate) use capabilities::Checked;
pub(crate) use node::Node;
pub(crate) use route::{Builder, Next, Route, Tried, Waiting};
pub(crate) use votes::Votes;
pub(crate) use wait::Woken;

use crate::config::options::TopologyOptions;
use crate::config::url::ServerUrl;
use crate::error::{LockError, Result};
use crate::process::PerProcess;
use crate::protocol::keys::LockKeys;

/// Every topology, asked in this order; the first that accepts the
/// servers and options builds the topology. Options that name a topology
/// (`cluster`, `sentinel`) come before the plain server lists.
pub(crate) const TOPOLOGIES: &[Builder] = &[
    cluster::build,
    sentinel::build,
    redlock::build,
    single::build,
];

/// Topologies kept by [`Topology::build`] for reuse.
const RECENT_TOPOLOGIES: usize = 16;

/// The servers of a lock and how they are used.
#[derive(Debug)]
pub(crate) struct Topology {
    route: Box<dyn Route>,
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
type RecentTopology = (Vec<String>, TopologyOptions, Arc<Topology>);

/// Lock key names kept per topology for reuse.
const RECENT_KEYS: usize = 64;

impl Topology {
    /// Parses `urls` and the topology options into a shared topology
    /// (equal topologies of one process share one instance). Sends nothing.
    pub(crate) fn build(urls: &[String], options: &TopologyOptions) -> Result<Arc<Self>> {
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

    fn parse_and_build(urls: &[String], options: &TopologyOptions) -> Result<Arc<Self>> {
        let parsed = urls
            .iter()
            .map(|url| ServerUrl::parse("servers", url))
            .collect::<Result<Vec<_>>>()?;
        if parsed.is_empty() {
            return Err(LockError::invalid("servers", "must not be empty"));
        }
        for build in TOPOLOGIES {
            if let Some(route) = build(&parsed, options)? {
                return Ok(intern(route));
            }
        }
        Err(LockError::Internal(
            "no topology accepts these servers and options".into(),
        ))
    }

    /// The name in Redis of the lock on `key` with `prefix`: `prefix` +
    /// `key`, on Redis Cluster wrapped in a hash tag when it has none
    /// ([`cluster::Cluster::lock_key`]).
    pub(crate) fn lock_key(&self, prefix: &[u8], key: &[u8]) -> Result<Vec<u8>> {
        self.route.lock_key(prefix, key)
    }

    /// The key names of the lock on `key` with `prefix` ([`Topology::lock_key`]
    /// and [`Topology::fence_counter`], with their encoded command heads),
    /// shared by the locks built on it lately.
    pub(crate) fn lock_keys(&self, prefix: &[u8], key: &[u8]) -> Result<Arc<LockKeys>> {
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
    pub(crate) fn fence_counter(&self, prefix: &[u8], lock_key: &[u8]) -> Result<Vec<u8>> {
        self.route.fence_counter(prefix, lock_key).ok_or_else(|| {
            LockError::invalid(
                "options[\"prefix\"]",
                "has a \"{\" without its \"}\": on Redis Cluster a prefix may carry a whole \
                 hash tag or none",
            )
        })
    }

    /// Identifies the keyspace: two locks on the same key and scope are the
    /// same lock (reentrancy).
    pub(crate) fn scope(&self) -> &Arc<str> {
        &self.scope
    }

    /// The servers, passwords masked, for messages and `var_dump`.
    pub(crate) fn names(&self) -> Vec<String> {
        self.names.to_vec()
    }

    /// How a blocked acquire waits here.
    pub(crate) fn waiting(&self) -> Waiting {
        self.route.waiting()
    }

    /// The clock drift between servers allowed for a lease of `ttl_ms`:
    /// `ttl * drift_factor + 2 ms` over Redlock, none on one master.
    pub(crate) fn drift(&self, ttl_ms: u64) -> Duration {
        self.route.drift(ttl_ms)
    }

    /// How long a lease of `ttl_ms` taken `elapsed` after the request was
    /// sent can be counted on (the [`Topology::drift`] subtracted); `None`
    /// when nothing is left.
    pub(crate) fn validity(&self, ttl_ms: u64, elapsed: Duration) -> Option<Duration> {
        Duration::from_millis(ttl_ms)
            .checked_sub(elapsed + self.drift(ttl_ms))
            .filter(|left| !left.is_zero())
    }

    /// Every server that holds locks ([`Route::nodes`]), each on its own.
    pub(crate) fn nodes(&self) -> Result<Vec<Node>> {
        Ok(self.route.nodes()?.into_iter().map(Node::new).collect())
    }

    /// How many servers hold each key.
    pub(crate) fn servers_per_key(&self) -> usize {
        self.route.servers_per_key()
    }

    fn votes<T>(&self, results: Vec<Result<T>>) -> Votes<T> {
        let quorum = self.route.quorum(results.len());
        Votes::new(results, quorum, self.names.clone())
    }
}

/// The one shared instance of a topology (per process, as
/// [`crate::net::connection::intern`]'s registry and for the same reason).
fn intern(route: Box<dyn Route>) -> Arc<Topology> {
    static REGISTRY: PerProcess<Mutex<Vec<Arc<Topology>>>> =
        PerProcess::new(|| Mutex::new(Vec::new()));
    let mut registry = REGISTRY
        .get()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let any: &dyn Any = &*route;
    if let Some(known) = registry.iter().find(|t| t.route.same_as(any)) {
        return known.clone();
    }
    let scope: Arc<str> = route.scope().into();
    let names: Arc<[String]> = route.names().into();
    let topology = Arc::new(Topology {
        route,
        scope,
        names,
        keys: PerProcess::new(|| Mutex::new(Vec::new())),
    });
    registry.push(topology.clone());
    topology
}

#[cfg(test)]
mod tests;
