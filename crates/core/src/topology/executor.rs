//! The executor of [`Topology`]: every call goes out from here, in one
//! loop ([`Topology::drive`]). A call is a set of legs, one per key and
//! server of the key; each round sends every leg (those of a batch that go
//! to one server in one call, all servers at once) and follows each leg
//! that failed where the route says ([`Next`], read in one place: [`hop`]):
//! at most [`MAX_HOPS`] tries, a growing pause on [`Next::Retry`],
//! `ASKING` on [`Next::Ask`], a replay staying a replay.
//! [`Topology::run`], [`Topology::run_where`], [`Topology::run_on`] and
//! [`Topology::run_batch`] are the ways to ask, each a view of that loop;
//! a call to one server tries once before it (the uncontended path: no
//! vectors, nothing added).

use std::sync::Arc;
use std::time::Duration;

use super::{Next, Role, Topology, Tried, Votes};
use crate::error::{LockError, Result};
use crate::net::connection::ServerConfig;
use crate::net::exchange;
use crate::protocol::call::{Attempt, Call};

/// Most tries of one call (redirects, waits for a reconfiguring topology,
/// a failover).
pub(super) const MAX_HOPS: u32 = 8;

/// The first pause after [`Next::Retry`]; doubled each time up to
/// [`RETRY_PAUSE_MAX`] (about a second over [`MAX_HOPS`] tries).
pub(super) const RETRY_PAUSE: Duration = Duration::from_millis(10);
const RETRY_PAUSE_MAX: Duration = Duration::from_millis(200);

/// Builds the call for a batch of keys (their indices), one result each.
pub(crate) type BatchCall<'a, T> = dyn Fn(&[usize], Attempt) -> Call<Vec<T>> + 'a;

impl Topology {
    /// Runs a call on every server that holds `key`, all at once; a server
    /// that fails is followed where the topology says ([`Next`]).
    pub(crate) fn run<T>(
        &self,
        role: Role,
        key: &[u8],
        build: &dyn Fn(Attempt) -> Call<T>,
    ) -> Votes<T> {
        let servers = match self.route.servers(key) {
            Ok(servers) => servers,
            Err(e) => return self.votes(vec![Err(e)]),
        };
        if let [one] = &*servers {
            return self.votes(vec![self.follow(role, key, 0, one, build)]);
        }
        let legs = servers
            .iter()
            .enumerate()
            .map(|(node, server)| Leg::first(0, node, server))
            .collect();
        let mut results = vec![unanswered(servers.len())];
        self.drive(role, &[key], legs, 0, &Build::One(build), &mut results);
        self.votes(answers(results.pop().unwrap_or_default()))
    }

    /// Runs a call on the servers of `key` that `on` marks (in the order
    /// of [`Topology::run`]'s votes), all at once, each followed where the
    /// topology says, as [`Topology::run`] does for all of them. A server
    /// not marked (also one beyond the end of `on`) is sent nothing and
    /// counts as having answered `skipped`; the votes are one per server
    /// of the key, counted against the quorum of all of them.
    pub(crate) fn run_where<T: Clone>(
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
        let mut results = vec![
            (0..servers.len())
                .map(|node| (!marked(node)).then(|| Ok(skipped.clone())))
                .collect(),
        ];
        let legs = servers
            .iter()
            .enumerate()
            .filter(|&(node, _)| marked(node))
            .map(|(node, server)| Leg::first(0, node, server))
            .collect();
        self.drive(role, &[key], legs, 0, &Build::One(build), &mut results);
        self.votes(answers(results.pop().unwrap_or_default()))
    }

    /// Runs a call on the `node`-th server that holds `key` (a blocking
    /// wait listens on one server), followed where the topology says.
    pub(crate) fn run_on<T>(
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
    pub(crate) fn run_batch<T>(
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
                    results.push(unanswered(servers.len()));
                    legs.extend(
                        servers
                            .iter()
                            .enumerate()
                            .map(|(node, server)| Leg::first(i, node, server)),
                    );
                }
                Err(e) => results.push(vec![Some(Err(e))]),
            }
        }
        self.drive(role, keys, legs, 0, &Build::Batch(build), &mut results);
        results
            .into_iter()
            .map(|key| self.votes(answers(key)))
            .collect()
    }

    /// Runs a call on `server`, the `node`-th server of `key`; an error is
    /// followed where the topology says. The first try is the plain call
    /// (the path of every uncontended lock: nothing added to it); the
    /// rest is the loop's.
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
        let Some(hop) = hop(self.route.on_error(&tried, &err), false) else {
            return Err(err);
        };
        let mut results = vec![unanswered(node + 1)];
        let legs = vec![Leg::after(0, node, hop)];
        self.drive(role, &[key], legs, 1, &Build::One(build), &mut results);
        results[0][node]
            .take()
            .unwrap_or_else(|| Err(LockError::Internal("no reply".into())))
    }

    /// The executor's one loop: sends `legs` (after `tries` tries already
    /// made), each into its place in `results` (`results[key][node]`), and
    /// follows each leg that failed where the route says, until every leg
    /// has its result or [`MAX_HOPS`] tries were made.
    fn drive<T>(
        &self,
        role: Role,
        keys: &[&[u8]],
        mut legs: Vec<Leg>,
        mut tries: u32,
        build: &Build<'_, T>,
        results: &mut [Vec<Option<Result<T>>>],
    ) {
        let mut pauses = 0;
        let batched = matches!(build, Build::Batch(_));
        while !legs.is_empty() {
            tries += 1;
            if legs.iter().any(|leg| leg.pause) {
                pauses = pause(pauses);
            }
            // One call per server (and way of sending) for a batch, one per
            // leg otherwise: the legs that a route sent elsewhere are routed
            // now.
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
                match groups.iter_mut().find(|g| {
                    batched && Arc::ptr_eq(&g.to, &to) && g.asking == asking && g.replay == replay
                }) {
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
            let replies = send(role, &groups, build);
            let mut again = Vec::new();
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
                    let Some(hop) = hop(self.route.on_error(&tried, &err), group.replay) else {
                        results[key][node] = Some(Err(err.clone()));
                        continue;
                    };
                    if tries >= MAX_HOPS {
                        results[key][node] = Some(Err(self.route.lost_way(MAX_HOPS, &err)));
                        continue;
                    }
                    again.push(Leg::after(key, node, hop));
                }
            }
            legs = again;
        }
    }

    /// The `node`-th server of `key` now.
    fn nth(&self, key: &[u8], node: usize) -> Result<Arc<ServerConfig>> {
        let servers = self.route.servers(key)?;
        servers.get(node).cloned().ok_or_else(|| no_server(node))
    }
}

/// How the loop builds a leg's call: one call per leg (one key), or one
/// per server for the keys it holds (a batch).
enum Build<'a, T> {
    One(&'a dyn Fn(Attempt) -> Call<T>),
    Batch(&'a BatchCall<'a, T>),
}

/// Sends one call per group, all at once; each group's results, one per
/// leg.
fn send<T>(role: Role, groups: &[Group], build: &Build<'_, T>) -> Vec<Result<Vec<T>>> {
    let servers: Vec<Arc<ServerConfig>> = groups.iter().map(|g| g.to.clone()).collect();
    // A replay stays a replay; the exchange's own replay (a dropped pooled
    // connection) asks for one too.
    let attempt = |group: &Group, attempt| match group.replay {
        true => Attempt::Replay,
        false => attempt,
    };
    match build {
        Build::One(one) => exchange::run_all(&servers, role, &|g, a| {
            let mut call = one(attempt(&groups[g], a));
            call.asking = groups[g].asking;
            call
        })
        .into_iter()
        .map(|reply| reply.map(|value| vec![value]))
        .collect(),
        Build::Batch(batch) => exchange::run_all(&servers, role, &|g, a| {
            let mut call = batch(&groups[g].keys, attempt(&groups[g], a));
            call.asking = groups[g].asking;
            call
        }),
    }
}

/// `count` places for results, none in yet.
fn unanswered<T>(count: usize) -> Vec<Option<Result<T>>> {
    (0..count).map(|_| None).collect()
}

/// The results of one key's servers (a place never filled: an internal
/// error).
fn answers<T>(places: Vec<Option<Result<T>>>) -> Vec<Result<T>> {
    places
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(LockError::Internal("no reply".into()))))
        .collect()
}

/// Where a call goes after a failure, as the route said.
struct Hop {
    /// The server named by the route; `None`: the key's server as the
    /// route says at the next try (it may have moved).
    to: Option<Arc<ServerConfig>>,
    /// Sent with `ASKING` first (a slot on its way to another node).
    asking: bool,
    /// Sent as a replay: the earlier try's outcome is unknown (a replay
    /// stays a replay).
    replay: bool,
    /// A pause before it (the topology is reconfiguring).
    pause: bool,
}

/// The one reading of a route's [`Next`]: where a call whose last try was
/// a replay (`replay`) goes next; `None` when it is done (its error
/// stands).
fn hop(next: Next, replay: bool) -> Option<Hop> {
    let (to, asking, replay, pause) = match next {
        Next::Done => return None,
        Next::Retry => (None, false, replay, true),
        Next::Reroute => (None, false, replay, false),
        Next::Redirect(to) => (Some(to), false, replay, false),
        Next::Ask(to) => (Some(to), true, replay, false),
        Next::Replay(to) => (Some(to), false, true, false),
    };
    Some(Hop {
        to,
        asking,
        replay,
        pause,
    })
}

/// One key's call to one of its servers.
struct Leg {
    /// Which key (its index in the loop's keys).
    key: usize,
    /// Which of the key's servers.
    node: usize,
    /// Where it goes next; `None`: where the route says then.
    to: Option<Arc<ServerConfig>>,
    asking: bool,
    replay: bool,
    /// A pause before it (see [`Hop::pause`]).
    pause: bool,
}

impl Leg {
    /// The first try of `key`'s `node`-th server, `server`.
    fn first(key: usize, node: usize, server: &Arc<ServerConfig>) -> Self {
        Self {
            key,
            node,
            to: Some(server.clone()),
            asking: false,
            replay: false,
            pause: false,
        }
    }

    /// The next try of `key`'s `node`-th server after a failure.
    fn after(key: usize, node: usize, hop: Hop) -> Self {
        Self {
            key,
            node,
            to: hop.to,
            asking: hop.asking,
            replay: hop.replay,
            pause: hop.pause,
        }
    }
}

/// The legs sent to one server in one call.
struct Group {
    to: Arc<ServerConfig>,
    asking: bool,
    replay: bool,
    /// Indices of the legs.
    legs: Vec<usize>,
    /// Their keys' indices, in the same order (for a batch's call).
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
