//! Where a lock's keys live: the only place that knows how many Redis
//! servers there are and how they relate.
//!
//! The lock protocol ([`crate::lock`], [`crate::renewal`]) is written once
//! against [`Topology`]: it asks the topology to run a [`Call`] for a key
//! and gets [`Votes`] back, one result per server that holds the key,
//! counted against the topology's quorum. On a single server that is one
//! reply and a quorum of one; over Redlock's N independent masters, N
//! replies and `floor(N/2) + 1`.
//!
//! - [`single`]: one server
//! - [`redlock`]: several independent masters, every call to all at once

pub mod redlock;
pub mod single;
mod votes;

use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use votes::Votes;

use crate::call::{Attempt, Call};
use crate::connection::{self, ServerConfig};
use crate::error::{LockError, Result};
use crate::exchange;
use crate::options::LockOptions;
use crate::pool::Role;
use crate::url::ServerUrl;

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

/// Builds the call for a batch of keys (their indices), one result each.
pub type BatchCall<'a, T> = dyn Fn(&[usize], Attempt) -> Call<Vec<T>> + 'a;

/// The servers of a lock and how they are used.
#[derive(Debug)]
pub struct Topology {
    kind: Kind,
    scope: Arc<str>,
}

#[derive(Debug, PartialEq)]
enum Kind {
    Single(single::Single),
    Redlock(redlock::Redlock),
}

impl Topology {
    /// Parses `urls` and the topology options into a shared topology
    /// (equal topologies of one process share one instance). Sends nothing.
    pub fn build(urls: &[String], options: &LockOptions) -> Result<Arc<Self>> {
        let parsed = urls
            .iter()
            .map(|url| ServerUrl::parse("servers", url))
            .collect::<Result<Vec<_>>>()?;
        if parsed.is_empty() {
            return Err(LockError::invalid("servers", "must not be empty"));
        }
        reject_unsupported(options)?;
        let servers: Vec<Arc<ServerConfig>> = parsed
            .into_iter()
            .map(|url| connection::intern(ServerConfig::new(url, options)))
            .collect();
        let kind = if servers.len() == 1 {
            Kind::Single(single::Single::new(servers.swap_remove_first()))
        } else {
            Kind::Redlock(redlock::Redlock::new(servers, options)?)
        };
        Ok(intern(kind))
    }

    /// Identifies the keyspace: two locks on the same key and scope are the
    /// same lock (reentrancy).
    pub fn scope(&self) -> &Arc<str> {
        &self.scope
    }

    /// The servers, passwords masked, for messages and `var_dump`.
    pub fn names(&self) -> Vec<String> {
        self.servers().iter().map(|s| s.name()).collect()
    }

    /// How a blocked acquire waits here.
    pub fn waiting(&self) -> Waiting {
        match &self.kind {
            Kind::Single(_) => Waiting::HandOver,
            Kind::Redlock(_) => Waiting::Quorum,
        }
    }

    /// How long a lease of `ttl_ms` taken `elapsed` after the request was
    /// sent can be counted on: Redlock subtracts the clock drift between
    /// servers (`ttl * drift_factor + 2 ms`); `None` when nothing is left.
    pub fn validity(&self, ttl_ms: u64, elapsed: Duration) -> Option<Duration> {
        let drift = match &self.kind {
            Kind::Single(_) => Duration::ZERO,
            Kind::Redlock(r) => r.drift(ttl_ms),
        };
        Duration::from_millis(ttl_ms)
            .checked_sub(elapsed + drift)
            .filter(|left| !left.is_zero())
    }

    /// Runs a call on every server that holds `key`, all at once.
    pub fn run<T>(&self, role: Role, key: &[u8], build: &dyn Fn(Attempt) -> Call<T>) -> Votes<T> {
        let _ = key;
        let servers = self.servers();
        let results = exchange::run_all(servers, role, &|_, attempt| build(attempt));
        Votes::new(results, self.quorum(), self.names())
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
        let _ = key;
        let server = self
            .servers()
            .get(node)
            .ok_or_else(|| LockError::Unsupported(format!("no server number {node}")))?;
        exchange::run_one(server, role, build)
    }

    /// How many servers hold each key.
    pub fn servers_per_key(&self) -> usize {
        self.servers().len()
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
        let indices: Vec<usize> = (0..keys.len()).collect();
        let servers = self.servers();
        let per_server = exchange::run_all(servers, role, &|_, attempt| build(&indices, attempt));
        let mut per_key: Vec<Vec<Result<T>>> = (0..keys.len()).map(|_| Vec::new()).collect();
        for result in per_server {
            match result {
                Ok(values) if values.len() == keys.len() => {
                    for (slot, value) in per_key.iter_mut().zip(values) {
                        slot.push(Ok(value));
                    }
                }
                Ok(_) => per_key.iter_mut().for_each(|slot| {
                    slot.push(Err(LockError::Unsupported("short batch reply".into())))
                }),
                Err(e) => per_key
                    .iter_mut()
                    .for_each(|slot| slot.push(Err(e.clone()))),
            }
        }
        per_key
            .into_iter()
            .map(|results| Votes::new(results, self.quorum(), self.names()))
            .collect()
    }

    /// Whether every server of `key` is known to run our scripts.
    pub fn scripts_checked(&self, key: &[u8]) -> bool {
        let _ = key;
        self.servers().iter().all(|s| s.scripts.get())
    }

    /// Records that the servers of `key` whose `ok` is true ran a script.
    pub fn mark_scripts_checked(&self, key: &[u8], ok: &[bool]) {
        let _ = key;
        for (server, ok) in self.servers().iter().zip(ok) {
            if *ok {
                server.scripts.set();
            }
        }
    }

    fn quorum(&self) -> usize {
        self.servers().len() / 2 + 1
    }

    fn servers(&self) -> &[Arc<ServerConfig>] {
        match &self.kind {
            Kind::Single(s) => std::slice::from_ref(s.server()),
            Kind::Redlock(r) => r.servers(),
        }
    }
}

trait SwapRemoveFirst<T> {
    fn swap_remove_first(self) -> T;
}

impl<T> SwapRemoveFirst<T> for Vec<T> {
    fn swap_remove_first(mut self) -> T {
        self.swap_remove(0)
    }
}

/// The one shared instance of a topology.
fn intern(kind: Kind) -> Arc<Topology> {
    static REGISTRY: Mutex<Vec<Arc<Topology>>> = Mutex::new(Vec::new());
    let mut registry = REGISTRY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(known) = registry.iter().find(|t| t.kind == kind) {
        return known.clone();
    }
    let scope: Arc<str> = match &kind {
        Kind::Single(s) => s.server().url.keyspace().into(),
        Kind::Redlock(r) => r.scope().into(),
    };
    let topology = Arc::new(Topology { kind, scope });
    registry.push(topology.clone());
    topology
}

fn reject_unsupported(options: &LockOptions) -> Result<()> {
    let unsupported = if options.cluster {
        Some("cluster")
    } else if options.sentinel.is_some() {
        Some("sentinel")
    } else {
        None
    };
    match unsupported {
        Some(name) => Err(LockError::Unsupported(format!(
            "option \"{name}\" is not supported by this version ({}) yet",
            env!("CARGO_PKG_VERSION")
        ))),
        None => Ok(()),
    }
}
