//! Where a lock's keys live: the only place that knows how many Redis
//! servers there are and how they relate.
//!
//! The lock protocol (the lock and the lease engine above) is written once
//! against [`Topology`]: it asks the topology to run a [`Call`] for a key
//! and gets [`Votes`] back, one result per server that holds the key,
//! counted against the topology's quorum. On a single server that is one
//! reply and a quorum of one; over Redlock's N independent masters, N
//! replies and `floor(N/2) + 1`.
//!
//! Each topology is one file that implements [`Route`]: which servers
//! hold a key, what an error reply means ([`Next`]), the quorum, how a
//! blocked acquire waits, the drift, the lock key's name. Nothing outside
//! those files asks which topology it is. [`Topology`] holds one route and
//! is its one executor: [`Topology::run`], [`Topology::run_where`],
//! [`Topology::run_on`] and [`Topology::run_batch`] send a call, follow
//! the route's [`Next`] for a server that failed (at most `MAX_HOPS`
//! tries, a growing pause on [`Next::Retry`], `ASKING` on [`Next::Ask`], a
//! replay staying a replay) and count the replies against the route's
//! quorum.
//!
//! - [`single`]: one server
//! - [`redlock`]: several independent masters, every call to all at once
//! - [`sentinel`]: the master that Sentinels name, followed across failovers
//! - [`cluster`]: Redis Cluster, each key on the master of its hash slot
//!
//! A new topology is one new file with a `build` function (`Ok(None)` when
//! the servers and options are not for it) and one line in [`TOPOLOGIES`].

pub mod cluster;
mod node;
pub mod redlock;
pub mod route;
pub mod sentinel;
mod server_facts;
pub mod single;
mod votes;
mod wait;

use std::any::Any;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What a server's `INFO` says ([`Node::read_facts`]).
pub use crate::net::facts::ServerFacts;
/// Which connection of a server a call goes on: the floors above ask for
/// it here, not in `net`.
pub use crate::net::pool::Role;
pub use node::Node;
#[cfg(feature = "internals")]
pub use route::Servers;
pub use route::{Builder, Next, Route, Tried, Waiting};
pub use votes::Votes;
pub use wait::Woken;

use crate::config::options::LockOptions;
use crate::config::url::ServerUrl;
use crate::error::{LockError, Result};
use crate::net::connection::ServerConfig;
use crate::net::exchange;
use crate::process::PerProcess;
use crate::protocol::call::{Attempt, Call};
use crate::protocol::keys::LockKeys;
use crate::protocol::scriptless::CompareDelete;

/// Every topology, asked in this order; the first that accepts the
/// servers and options builds the topology. Options that name a topology
/// (`cluster`, `sentinel`) come before the plain server lists.
pub const TOPOLOGIES: &[Builder] = &[
    cluster::build,
    sentinel::build,
    redlock::build,
    single::build,
];

/// Topologies kept by [`Topology::build`] for reuse.
const RECENT_TOPOLOGIES: usize = 16;

/// Most tries of one call (redirects, waits for a reconfiguring topology,
/// a failover).
const MAX_HOPS: u32 = 8;

/// The first pause after [`Next::Retry`]; doubled each time up to
/// [`RETRY_PAUSE_MAX`] (about a second over [`MAX_HOPS`] tries).
const RETRY_PAUSE: Duration = Duration::from_millis(10);
const RETRY_PAUSE_MAX: Duration = Duration::from_millis(200);

/// Builds the call for a batch of keys (their indices), one result each.
pub type BatchCall<'a, T> = dyn Fn(&[usize], Attempt) -> Call<Vec<T>> + 'a;

/// The servers of a lock and how they are used.
#[derive(Debug)]
pub struct Topology {
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
type RecentTopology = (Vec<String>, LockOptions, Arc<Topology>);

/// Lock key names kept per topology for reuse.
const RECENT_KEYS: usize = 64;

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
    pub fn lock_key(&self, prefix: &[u8], key: &[u8]) -> Result<Vec<u8>> {
        self.route.lock_key(prefix, key)
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
    pub fn scope(&self) -> &Arc<str> {
        &self.scope
    }

    /// The servers, passwords masked, for messages and `var_dump`.
    pub fn names(&self) -> Vec<String> {
        self.names.to_vec()
    }

    /// How a blocked acquire waits here.
    pub fn waiting(&self) -> Waiting {
        self.route.waiting()
    }

    /// The clock drift between servers allowed for a lease of `ttl_ms`:
    /// `ttl * drift_factor + 2 ms` over Redlock, none on one master.
    pub fn drift(&self, ttl_ms: u64) -> Duration {
        self.route.drift(ttl_ms)
    }

    /// How long a lease of `ttl_ms` taken `elapsed` after the request was
    /// sent can be counted on (the [`Topology::drift`] subtracted); `None`
    /// when nothing is left.
    pub fn validity(&self, ttl_ms: u64, elapsed: Duration) -> Option<Duration> {
        Duration::from_millis(ttl_ms)
            .checked_sub(elapsed + self.drift(ttl_ms))
            .filter(|left| !left.is_zero())
    }

    /// Every server that holds locks ([`Route::nodes`]), each on its own.
    pub fn nodes(&self) -> Result<Vec<Node>> {
        Ok(self.route.nodes()?.into_iter().map(Node::new).collect())
    }

    /// How many servers hold each key.
    pub fn servers_per_key(&self) -> usize {
        self.route.servers_per_key()
    }

    /// Runs a call on every server that holds `key`, all at once; a server
    /// that fails is followed where the topology says ([`Next`]).
    pub fn run<T>(&self, role: Role, key: &[u8], build: &dyn Fn(Attempt) -> Call<T>) -> Votes<T> {
        let servers = match self.route.servers(key) {
            Ok(servers) => servers,
            Err(e) => return self.votes(vec![Err(e)]),
        };
        let results = match &*servers {
            [one] => vec![self.follow(role, key, 0, one, build)],
            all => self.follow_all(role, key, all, &|node| node, build),
        };
        self.votes(results)
    }

    /// Runs a call on the servers of `key` that `on` marks (in the order
    /// of [`Topology::run`]'s votes), all at once, each followed where the
    /// topology says, as [`Topology::run`] does for all of them. A server
    /// not marked (also one beyond the end of `on`) is sent nothing and
    /// counts as having answered `skipped`; the votes are one per server
    /// of the key, counted against the quorum of all of them.
    pub fn run_where<T: Clone>(
        &self,
        role: Role,
        key: &[u8],
        on: &[bool],
        skipped: T,
        build: &dyn Fn(Attempt) -> Call<T>,
    ) -> Votes<T> {
        let marked = |node: usize| on.get(node).is_some_and(|&here| here);
        let servers = match self.route.servers(key) {
            Ok(servers) => servers,
            Err(e) => {
                let results = (0..on.len())
                    .map(|node| match marked(node) {
                        true => Err(e.clone()),
                        false => Ok(skipped.clone()),
                    })
                    .collect();
                return self.votes(results);
            }
        };
        let chosen: Vec<usize> = (0..servers.len()).filter(|&node| marked(node)).collect();
        let mut results: Vec<Result<T>> = servers.iter().map(|_| Ok(skipped.clone())).collect();
        match chosen[..] {
            [] => {}
            [node] => results[node] = self.follow(role, key, node, &servers[node], build),
            _ => {
                let subset: Vec<Arc<ServerConfig>> =
                    chosen.iter().map(|&node| servers[node].clone()).collect();
                let replies = self.follow_all(role, key, &subset, &|i| chosen[i], build);
                for (&node, reply) in chosen.iter().zip(replies) {
                    results[node] = reply;
                }
            }
        }
        self.votes(results)
    }

    /// Runs a call on the `node`-th server that holds `key` (a blocking
    /// wait listens on one server), followed where the topology says.
    pub fn run_on<T>(
        &self,
        node: usize,
        role: Role,
        key: &[u8],
        build: &dyn Fn(Attempt) -> Call<T>,
    ) -> Result<T> {
        let servers = self.route.servers(key)?;
        let server = servers.get(node).ok_or_else(|| no_server(node))?;
        self.follow(role, key, node, server, build)
    }

    /// Runs one call per server for many keys at once (the renewal
    /// thread): `build` gets the indices of the keys that server holds and
    /// returns one result per index. The keys of a server whose call
    /// failed go where the topology says, key by key (those sent to one
    /// server again share a call). Returns the votes of each key.
    pub fn run_batch<T>(
        &self,
        role: Role,
        keys: &[&[u8]],
        build: &BatchCall<'_, T>,
    ) -> Vec<Votes<T>> {
        // Each key's results, one per server of the key, in its order.
        let mut results: Vec<Vec<Option<Result<T>>>> = Vec::with_capacity(keys.len());
        let mut legs: Vec<Leg> = Vec::new();
        let shared = (!self.route.by_key()).then(|| self.route.servers(&[]));
        for (i, key) in keys.iter().enumerate() {
            let own;
            let servers: Result<&[Arc<ServerConfig>]> = match &shared {
                Some(Ok(servers)) => Ok(servers),
                Some(Err(e)) => Err(e.clone()),
                None => {
                    own = self.route.servers(key);
                    match &own {
                        Ok(servers) => Ok(servers),
                        Err(e) => Err(e.clone()),
                    }
                }
            };
            match servers {
                Ok(servers) => {
                    results.push(servers.iter().map(|_| None).collect());
                    legs.extend(servers.iter().enumerate().map(|(node, server)| Leg {
                        key: i,
                        node,
                        to: Some(server.clone()),
                        asking: false,
                        replay: false,
                    }));
                }
                Err(e) => results.push(vec![Some(Err(e))]),
            }
        }
        let (mut tries, mut pauses) = (0, 0);
        while !legs.is_empty() {
            tries += 1;
            // One call per server (and way of sending): the legs that a
            // route sent elsewhere are routed now.
            let mut groups: Vec<Group> = Vec::new();
            for (l, leg) in legs.iter_mut().enumerate() {
                let to = match leg.to.take() {
                    Some(to) => to,
                    None => match self.nth(keys[leg.key], leg.node) {
                        Ok(to) => to,
                        Err(e) => {
                            results[leg.key][leg.node] = Some(Err(e));
                            continue;
                        }
                    },
                };
                let (asking, replay) = (leg.asking, leg.replay);
                match groups
                    .iter_mut()
                    .find(|g| Arc::ptr_eq(&g.to, &to) && g.asking == asking && g.replay == replay)
                {
                    Some(group) => {
                        group.legs.push(l);
                        group.keys.push(leg.key);
                    }
                    None => groups.push(Group {
                        to,
                        asking,
                        replay,
                        legs: vec![l],
                        keys: vec![leg.key],
                    }),
                }
            }
            let servers: Vec<Arc<ServerConfig>> = groups.iter().map(|g| g.to.clone()).collect();
            let replies = exchange::run_all(&servers, role, &|g, attempt| {
                let group = &groups[g];
                let mut call = build(
                    &group.keys,
                    if group.replay {
                        Attempt::Replay
                    } else {
                        attempt
                    },
                );
                call.asking = group.asking;
                call
            });
            let mut again = Vec::new();
            let mut retry = false;
            for (group, reply) in groups.iter().zip(replies) {
                let err = match reply {
                    Ok(values) if values.len() == group.keys.len() => {
                        for (&l, value) in group.legs.iter().zip(values) {
                            results[legs[l].key][legs[l].node] = Some(Ok(value));
                        }
                        continue;
                    }
                    Ok(_) => LockError::Internal("short batch reply".into()),
                    Err(err) => err,
                };
                for &l in &group.legs {
                    let Leg { key, node, .. } = legs[l];
                    let tried = Tried {
                        key: keys[key],
                        server: &group.to,
                        asking: group.asking,
                        replay: group.replay,
                    };
                    let (to, asking, replay) = match self.route.on_error(&tried, &err) {
                        Next::Done => {
                            results[key][node] = Some(Err(err.clone()));
                            continue;
                        }
                        _ if tries >= MAX_HOPS => {
                            results[key][node] = Some(Err(self.route.lost_way(MAX_HOPS, &err)));
                            continue;
                        }
                        Next::Retry => {
                            retry = true;
                            (None, false, group.replay)
                        }
                        Next::Reroute => (None, false, group.replay),
                        Next::Redirect(to) => (Some(to), false, group.replay),
                        Next::Ask(to) => (Some(to), true, group.replay),
                        Next::Replay(to) => (Some(to), false, true),
                    };
                    again.push(Leg {
                        key,
                        node,
                        to,
                        asking,
                        replay,
                    });
                }
            }
            if retry {
                pauses = pause(pauses);
            }
            legs = again;
        }
        results
            .into_iter()
            .map(|key| {
                let key = key
                    .into_iter()
                    .map(|r| r.unwrap_or_else(|| Err(LockError::Internal("no reply".into()))))
                    .collect();
                self.votes(key)
            })
            .collect()
    }

    /// Whether every server of `key` is known to run our scripts.
    pub fn scripts_checked(&self, key: &[u8]) -> bool {
        match self.route.servers(key) {
            Ok(servers) => servers.iter().all(|s| s.scripts.get()),
            Err(_) => false,
        }
    }

    /// Records that the servers of `key` whose `ok` is true ran a script.
    pub fn mark_scripts_checked(&self, key: &[u8], ok: &[bool]) {
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
    pub fn semaphore_checked(&self, key: &[u8]) -> bool {
        match self.route.servers(key) {
            Ok(servers) => servers.iter().all(|s| s.scripts.semaphore()),
            Err(_) => false,
        }
    }

    /// Records that the servers of `key` passed a semaphore's check.
    pub fn mark_semaphore_checked(&self, key: &[u8]) {
        if let Ok(servers) = self.route.servers(key) {
            for server in servers.iter() {
                server.scripts.set_semaphore();
            }
        }
    }

    /// How the servers of `key` compare and delete without scripts, when
    /// every one of them was found to refuse scripts but to have a
    /// compare-and-delete command ([`crate::protocol::scriptless`]).
    pub fn scriptless(&self, key: &[u8]) -> Option<CompareDelete> {
        let servers = self.route.servers(key).ok()?;
        let how = servers.first()?.scripts.scriptless()?;
        servers
            .iter()
            .all(|s| s.scripts.scriptless() == Some(how))
            .then_some(how)
    }

    /// Records that every server of `key` refuses scripts and compares and
    /// deletes with `how`.
    pub fn mark_scriptless(&self, key: &[u8], how: CompareDelete) {
        if let Ok(servers) = self.route.servers(key) {
            for server in servers.iter() {
                server.scripts.set_scriptless(how);
            }
        }
    }

    fn votes<T>(&self, results: Vec<Result<T>>) -> Votes<T> {
        let quorum = self.route.quorum(results.len());
        Votes::new(results, quorum, self.names.clone())
    }

    /// Runs a call on `server`, the `node`-th server of `key`; an error is
    /// followed where the topology says. The first try is the plain call
    /// (the path of every uncontended lock: nothing added to it).
    fn follow<T>(
        &self,
        role: Role,
        key: &[u8],
        node: usize,
        server: &Arc<ServerConfig>,
        build: &dyn Fn(Attempt) -> Call<T>,
    ) -> Result<T> {
        let err = match exchange::run_one(server, role, build) {
            Ok(value) => return Ok(value),
            Err(err) => err,
        };
        let tried = Tried {
            key,
            server,
            asking: false,
            replay: false,
        };
        let next = self.route.on_error(&tried, &err);
        self.reroute(role, key, node, build, next, err)
    }

    /// Runs a call on every server of `servers` at once (the `i`-th of
    /// them is the `node(i)`-th server of `key`); a server that failed is
    /// followed where the topology says. One result per server, in order.
    fn follow_all<T>(
        &self,
        role: Role,
        key: &[u8],
        servers: &[Arc<ServerConfig>],
        node: &dyn Fn(usize) -> usize,
        build: &dyn Fn(Attempt) -> Call<T>,
    ) -> Vec<Result<T>> {
        let mut results = exchange::run_all(servers, role, &|_, attempt| build(attempt));
        for (i, (result, server)) in results.iter_mut().zip(servers).enumerate() {
            let Err(err) = result else { continue };
            let tried = Tried {
                key,
                server,
                asking: false,
                replay: false,
            };
            let next = self.route.on_error(&tried, err);
            if !matches!(next, Next::Done) {
                *result = self.reroute(role, key, node(i), build, next, err.clone());
            }
        }
        results
    }

    /// The executor's loop for one call after its first try failed with
    /// `err`: goes where `next` says until a server answers, the route says
    /// [`Next::Done`], or [`MAX_HOPS`] tries were made.
    fn reroute<T>(
        &self,
        role: Role,
        key: &[u8],
        node: usize,
        build: &dyn Fn(Attempt) -> Call<T>,
        mut next: Next,
        mut err: LockError,
    ) -> Result<T> {
        let (mut replay, mut pauses) = (false, 0);
        for _ in 1..MAX_HOPS {
            let (server, asking) = match next {
                Next::Done => return Err(err),
                Next::Retry => {
                    pauses = pause(pauses);
                    (self.nth(key, node)?, false)
                }
                Next::Reroute => (self.nth(key, node)?, false),
                Next::Redirect(server) => (server, false),
                Next::Ask(server) => (server, true),
                Next::Replay(server) => {
                    replay = true;
                    (server, false)
                }
            };
            let result = exchange::run_one(&server, role, &|attempt| {
                let mut call = build(if replay { Attempt::Replay } else { attempt });
                call.asking = asking;
                call
            });
            err = match result {
                Ok(value) => return Ok(value),
                Err(err) => err,
            };
            let tried = Tried {
                key,
                server: &server,
                asking,
                replay,
            };
            next = self.route.on_error(&tried, &err);
        }
        match next {
            Next::Done => Err(err),
            _ => Err(self.route.lost_way(MAX_HOPS, &err)),
        }
    }

    /// The `node`-th server of `key` now.
    fn nth(&self, key: &[u8], node: usize) -> Result<Arc<ServerConfig>> {
        let servers = self.route.servers(key)?;
        servers.get(node).cloned().ok_or_else(|| no_server(node))
    }
}

/// One key's call to one of its servers, in a batch.
struct Leg {
    key: usize,
    /// Which of the key's servers.
    node: usize,
    /// Where it goes next; `None`: where the route says then.
    to: Option<Arc<ServerConfig>>,
    asking: bool,
    replay: bool,
}

/// The legs of a batch sent to one server in one call.
struct Group {
    to: Arc<ServerConfig>,
    asking: bool,
    replay: bool,
    /// Indices of the legs.
    legs: Vec<usize>,
    /// Their keys' indices, in the same order (for the call).
    keys: Vec<usize>,
}

/// The error of a call for a server a key does not have.
fn no_server(node: usize) -> LockError {
    LockError::Internal(format!("no server number {node}"))
}

/// Sleeps before the `pauses`-th retry of a reconfiguring topology;
/// returns the next count.
fn pause(pauses: u32) -> u32 {
    std::thread::sleep((RETRY_PAUSE * 2u32.pow(pauses.min(10))).min(RETRY_PAUSE_MAX));
    pauses + 1
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
mod tests {
    use super::*;
    use crate::protocol::command::Command;
    use std::io::{Read, Write};
    use std::os::unix::net::UnixListener;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A server nobody listens on: every call fails at once (refused).
    fn unreachable() -> Arc<ServerConfig> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap();
        let url = ServerUrl::parse("servers", &format!("redis://127.0.0.1:{port}")).unwrap();
        Arc::new(ServerConfig::new(url, &LockOptions::default()))
    }

    /// A route that answers every error from a script and records what
    /// the executor tried.
    #[derive(Debug)]
    struct Scripted {
        servers: Vec<Arc<ServerConfig>>,
        next: fn(usize, &Arc<ServerConfig>) -> Next,
        tried: Mutex<Vec<(Vec<u8>, bool, bool)>>,
    }

    impl PartialEq for Scripted {
        fn eq(&self, other: &Self) -> bool {
            std::ptr::eq(self, other)
        }
    }

    impl Route for Scripted {
        fn servers(&self, _key: &[u8]) -> Result<Servers<'_>> {
            Ok(Servers::Kept(&self.servers))
        }
        fn on_error(&self, tried: &Tried<'_>, _err: &LockError) -> Next {
            let mut log = self.tried.lock().unwrap();
            log.push((tried.key.to_vec(), tried.asking, tried.replay));
            (self.next)(log.len(), tried.server)
        }
        fn scope(&self) -> String {
            "scripted".into()
        }
        fn names(&self) -> Vec<String> {
            vec!["scripted".into()]
        }
    }

    /// A server that answers every command `+PONG`, on a Unix socket of
    /// its own (a TCP port could be one that [`unreachable`] let go, which
    /// other tests expect nobody to answer). Its threads end with the test
    /// program; its socket file with the value.
    struct Answering {
        server: Arc<ServerConfig>,
        /// The PINGs it got.
        pings: Arc<AtomicUsize>,
        path: std::path::PathBuf,
    }

    impl Drop for Answering {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.path);
        }
    }

    fn answering() -> Answering {
        static SERVERS: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "redislock-topology-test-{}-{}.sock",
            std::process::id(),
            SERVERS.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path).unwrap();
        let pings = Arc::new(AtomicUsize::new(0));
        let counted = pings.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let counted = counted.clone();
                std::thread::spawn(move || {
                    let mut buf = [0u8; 1024];
                    while let Ok(n @ 1..) = stream.read(&mut buf) {
                        let got = buf[..n].windows(4).filter(|w| w == b"PING").count();
                        counted.fetch_add(got, Ordering::SeqCst);
                        if stream.write_all(&b"+PONG\r\n".repeat(got)).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        let url = ServerUrl::parse("servers", &format!("unix://{}", path.display())).unwrap();
        // Interned, as every server of a topology: the pool keys idle
        // connections by the config's address, which a dropped config
        // would leave to the next one allocated there.
        let server =
            crate::net::connection::intern(ServerConfig::new(url, &LockOptions::default()));
        Answering {
            server,
            pings,
            path,
        }
    }

    fn topology(servers: usize, next: fn(usize, &Arc<ServerConfig>) -> Next) -> Topology {
        topology_of((0..servers).map(|_| unreachable()).collect(), next)
    }

    fn topology_of(
        servers: Vec<Arc<ServerConfig>>,
        next: fn(usize, &Arc<ServerConfig>) -> Next,
    ) -> Topology {
        let count = servers.len();
        let route = Scripted {
            servers,
            next,
            tried: Mutex::new(Vec::new()),
        };
        Topology {
            route: Box::new(route),
            scope: "scripted".into(),
            names: vec!["scripted".to_owned(); count].into(),
            keys: PerProcess::new(|| Mutex::new(Vec::new())),
        }
    }

    fn tried(t: &Topology) -> Vec<(Vec<u8>, bool, bool)> {
        let any: &dyn Any = &*t.route;
        let route = any.downcast_ref::<Scripted>().unwrap();
        route.tried.lock().unwrap().clone()
    }

    fn ping(_: Attempt) -> Call<()> {
        Call::new(vec![Command::of(&[b"PING"])], |_| Ok(()))
    }

    /// A PING whose answer is `true` (a server that was not asked counts
    /// as `false` in [`Topology::run_where`]).
    fn ping_true(_: Attempt) -> Call<bool> {
        Call::new(vec![Command::of(&[b"PING"])], |_| Ok(true))
    }

    fn pings(servers: &[Answering]) -> Vec<usize> {
        servers
            .iter()
            .map(|s| s.pings.load(Ordering::SeqCst))
            .collect()
    }

    #[test]
    fn a_call_on_some_servers_reaches_exactly_those() {
        let servers: Vec<Answering> = (0..3).map(|_| answering()).collect();
        let t = topology_of(
            servers.iter().map(|s| s.server.clone()).collect(),
            |_, _| Next::Done,
        );
        let votes = t.run_where(Role::Command, b"k", &[true, false, true], false, &ping_true);
        assert_eq!(pings(&servers), [1, 0, 1]);
        assert_eq!(votes.oks(), [true; 3], "the second counts as answered");
        assert_eq!(votes.count(|asked| *asked), 2);
        assert_eq!(votes.quorum(), 2, "the quorum of all three");

        // One server: the plain call of one server; none: nothing sent.
        let votes = t.run_where(Role::Command, b"k", &[false, true], false, &ping_true);
        assert_eq!(pings(&servers), [1, 1, 1]);
        assert_eq!(votes.count(|asked| *asked), 1);
        let votes = t.run_where(Role::Command, b"k", &[false; 3], false, &ping_true);
        assert_eq!(pings(&servers), [1, 1, 1]);
        assert_eq!(votes.oks(), [true; 3]);
        assert!(tried(&t).is_empty());
    }

    #[test]
    fn a_call_on_some_servers_follows_those_that_fail() {
        let answers: Vec<Answering> = (0..2).map(|_| answering()).collect();
        let servers = vec![
            unreachable(),
            answers[0].server.clone(),
            answers[1].server.clone(),
        ];
        let t = topology_of(servers, |n, _| match n {
            1 => Next::Reroute,
            _ => Next::Done,
        });
        let votes = t.run_where(Role::Command, b"k", &[true, true, false], false, &ping_true);
        assert_eq!(pings(&answers), [1, 0]);
        assert_eq!(tried(&t).len(), 2, "the unreachable one, sent again once");
        assert_eq!(votes.oks(), [false, true, true]);
        assert_eq!(votes.count(|asked| *asked), 1);
    }

    #[test]
    fn a_call_is_sent_elsewhere_at_most_max_hops_times() {
        let t = topology(1, |_, at| Next::Redirect(at.clone()));
        let err = t.run_on(0, Role::Command, b"k", &ping).unwrap_err();
        assert_eq!(tried(&t).len(), MAX_HOPS as usize);
        assert!(err.to_string().contains("sent elsewhere 8 times"), "{err}");
    }

    #[test]
    fn a_replay_stays_a_replay_and_asking_lasts_one_try() {
        let t = topology(1, |n, at| match n {
            1 => Next::Replay(at.clone()),
            2 => Next::Ask(at.clone()),
            3 => Next::Redirect(at.clone()),
            _ => Next::Done,
        });
        let votes = t.run(Role::Command, b"k", &ping);
        assert!(votes.into_single().unwrap_err().is_connection_error());
        let how: Vec<(bool, bool)> = tried(&t).into_iter().map(|(_, a, r)| (a, r)).collect();
        assert_eq!(
            how,
            [(false, false), (false, true), (true, true), (false, true)]
        );
    }

    #[test]
    fn a_retry_pauses_first() {
        let t = topology(1, |n, _| if n == 1 { Next::Retry } else { Next::Done });
        let started = std::time::Instant::now();
        assert!(t.run_on(0, Role::Command, b"k", &ping).is_err());
        assert!(started.elapsed() >= RETRY_PAUSE);
        assert_eq!(tried(&t).len(), 2);
    }

    #[test]
    fn every_server_of_a_key_is_followed_and_counted() {
        let t = topology(3, |n, _| if n <= 3 { Next::Reroute } else { Next::Done });
        let votes = t.run(Role::Command, b"k", &ping);
        assert_eq!(votes.quorum(), 2);
        assert_eq!(votes.answered(), 0);
        assert_eq!(tried(&t).len(), 6);
    }

    #[test]
    fn a_batch_follows_each_key_and_keeps_replays() {
        let t = topology(2, |n, at| {
            if n <= 4 {
                Next::Replay(at.clone())
            } else {
                Next::Done
            }
        });
        let keys: [&[u8]; 2] = [b"a", b"b"];
        let votes = t.run_batch(Role::Command, &keys, &|indices, _| {
            let cmds = indices.iter().map(|_| Command::of(&[b"PING"])).collect();
            Call::new(cmds, |replies| Ok(replies.iter().map(|_| ()).collect()))
        });
        assert_eq!(votes.len(), 2);
        assert!(votes.iter().all(|v| v.answered() == 0 && v.quorum() == 2));
        let log = tried(&t);
        // Two keys on two servers: four legs, each replayed once.
        assert_eq!(log.len(), 8);
        assert!(log[..4].iter().all(|(_, _, replay)| !replay));
        assert!(log[4..].iter().all(|(_, _, replay)| *replay));
    }
}
