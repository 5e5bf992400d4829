//! The seam between the lock protocol and a topology: what a topology
//! decides ([`Route`]), and the answers it gives the executor in
//! [`super::Topology`] ([`Servers`], [`Next`], [`Waiting`]).
//!
//! A topology says where a key lives and what an error reply means; it
//! never sends a lock command itself. The executor sends, follows the
//! route's [`Next`] (bounded, with a pause on [`Next::Retry`]) and counts
//! the replies against the route's quorum.

use std::any::Any;
use std::fmt::Debug;
use std::ops::Deref;
use std::sync::Arc;
use std::time::Duration;

use crate::config::options::TopologyOptions;
use crate::config::url::ServerUrl;
use crate::error::{ConnectionFailure, LockError, Result};
use crate::net::connection::ServerConfig;

/// How a blocked acquire waits for its turn on this topology.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Waiting {
    /// One server decides: waiters queue there and a release hands the
    /// lock to the first live one (FIFO, no barging).
    HandOver,
    /// A quorum decides: a release wakes the first waiter queued on each
    /// server, which then tries for a quorum again.
    Quorum,
}

/// The servers that hold a key, in a fixed order (the order of the
/// replies counted in [`super::Votes`]). Borrowed when the topology keeps
/// them (single, Redlock), one owned server when it looks it up (the
/// Sentinels' master, a Cluster slot's master): no vector per call.
#[derive(Debug)]
pub(crate) enum Servers<'a> {
    /// Servers the topology keeps.
    Kept(&'a [Arc<ServerConfig>]),
    /// The one server found for this call.
    Found(Arc<ServerConfig>),
}

impl Deref for Servers<'_> {
    type Target = [Arc<ServerConfig>];

    fn deref(&self) -> &Self::Target {
        match self {
            Self::Kept(servers) => servers,
            Self::Found(server) => std::slice::from_ref(server),
        }
    }
}

/// What the executor does after a server answered a call with an error
/// ([`Route::on_error`]).
#[derive(Debug)]
pub(crate) enum Next {
    /// The error is the answer: report it.
    Done,
    /// The topology is reconfiguring: pause (longer each time), then send
    /// the call where [`Route::servers`] says.
    Retry,
    /// Send the call again at once where [`Route::servers`] says now (the
    /// route has learnt something, e.g. a new slot map).
    Reroute,
    /// The call did not run: send it to this server.
    Redirect(Arc<ServerConfig>),
    /// The call did not run: send it to this server, prefixed by `ASKING`
    /// (a Redis Cluster slot in migration).
    Ask(Arc<ServerConfig>),
    /// The call may have run (and been replicated) before the server was
    /// lost to a failover: send it to this server as an
    /// [`crate::protocol::call::Attempt::Replay`]. Once a replay, every
    /// later try of that call is one too.
    Replay(Arc<ServerConfig>),
}

/// One try of a call that failed, as [`Route::on_error`] sees it.
#[derive(Debug)]
pub(crate) struct Tried<'a> {
    /// The lock key the call was for.
    pub(crate) key: &'a [u8],
    /// The server that answered.
    pub(crate) server: &'a Arc<ServerConfig>,
    /// Whether the call was sent with `ASKING` ([`Next::Ask`]).
    pub(crate) asking: bool,
    /// Whether the call was a replay ([`Next::Replay`]).
    pub(crate) replay: bool,
}

/// Builds the topology that `urls` and `options` ask for, or `Ok(None)`
/// when they are not for it (see [`super::TOPOLOGIES`]).
pub(crate) type Builder = fn(&[ServerUrl], &TopologyOptions) -> Result<Option<Box<dyn Route>>>;

/// One topology: where a key's servers are and what their errors mean.
/// Every decision that depends on the kind of topology is a method here;
/// the defaults are those of one master that holds every key.
pub(crate) trait Route: Any + SameAs + Debug + Send + Sync {
    /// The servers that hold `key` now, in a fixed order. Looking them up
    /// may ask the network (a Sentinel's master, a Cluster's slot map).
    fn servers(&self, key: &[u8]) -> Result<Servers<'_>>;

    /// Every server that holds locks or may after a failover (Redlock's
    /// masters; a Sentinel group's master and replicas; every node of a
    /// Cluster's slot map, masters first), for a checkup of
    /// each ([`crate::lock::Lock::checkup`]). Looking them up may ask the
    /// network.
    fn nodes(&self) -> Result<Vec<Arc<ServerConfig>>> {
        self.servers(b"").map(|servers| servers.to_vec())
    }

    /// True when the servers depend on the key (Cluster's slots); otherwise
    /// a batch of keys looks them up once.
    fn by_key(&self) -> bool {
        false
    }

    /// What the error `err` of the try `tried` means ([`Next`]).
    fn on_error(&self, tried: &Tried<'_>, err: &LockError) -> Next {
        let _ = (tried, err);
        Next::Done
    }

    /// How many agreeing servers of `replies` make a decision.
    fn quorum(&self, replies: usize) -> usize {
        replies / 2 + 1
    }

    /// How many servers hold each key.
    fn servers_per_key(&self) -> usize {
        1
    }

    /// How a blocked acquire waits here.
    fn waiting(&self) -> Waiting {
        Waiting::HandOver
    }

    /// The clock drift between servers allowed for a lease of `ttl_ms`.
    fn drift(&self, ttl_ms: u64) -> Duration {
        let _ = ttl_ms;
        Duration::ZERO
    }

    /// The name in Redis of the lock on `key` with `prefix`.
    fn lock_key(&self, prefix: &[u8], key: &[u8]) -> Result<Vec<u8>> {
        Ok([prefix, key].concat())
    }

    /// The fencing counter of the locks under `prefix` that live with
    /// `lock_key` ([`crate::protocol::keys::fence_counter`]); `None` when
    /// the prefix makes one impossible.
    fn fence_counter(&self, prefix: &[u8], lock_key: &[u8]) -> Option<Vec<u8>> {
        crate::protocol::keys::fence_counter(prefix, lock_key, false)
    }

    /// The keyspace: two locks on one key and scope are one lock.
    fn scope(&self) -> String;

    /// The servers, passwords masked, for messages.
    fn names(&self) -> Vec<String>;

    /// The error of a call that was sent elsewhere `hops` times without an
    /// answer; `last` is the last error.
    fn lost_way(&self, hops: u32, last: &LockError) -> LockError {
        LockError::Connection {
            server: self.names().join(", "),
            kind: ConnectionFailure::Other,
            detail: format!(
                "the call was sent elsewhere {hops} times (last: {last}); \
                 the servers are being reconfigured, try again"
            ),
        }
    }
}

/// Equality of two routes of any type (interning: locks built on equal
/// servers and options share one topology). Implemented for every route
/// that is `PartialEq`.
pub(crate) trait SameAs {
    /// True when `other` is a route of the same type, equal to this one.
    fn same_as(&self, other: &dyn Any) -> bool;
}

impl<R: PartialEq + Any> SameAs for R {
    fn same_as(&self, other: &dyn Any) -> bool {
        other.downcast_ref::<R>().is_some_and(|other| other == self)
    }
}
