//! The lease engine under every hold (a lock's write hold, its read holds,
//! a semaphore's permits): what the holds of one name share, whatever
//! they count.
//!
//! - [`belief`]: what this process believes of a hold's lease, and the
//!   rule that keeps it inside what Redis gives (beliefs follow the last
//!   command sent);
//! - [`table`]: the table of the holds this process has (reentrancy,
//!   Fibers, request end, fork);
//! - [`hold`]: what can be done with a hold of any kind: is it ours, how
//!   long is left, extend it, give it back;
//! - [`queue`]: the one queue-wait loop of a blocked acquire where one
//!   server decides (single server, Sentinel, Cluster): a waiter sleeps on
//!   its wake-up list with its next step sent behind the wait, so Redis
//!   claims a hold handed to it (its whole lease) the moment the wait ends;
//! - [`counted`]: taking holds counted in a sorted set (permits, read
//!   holds) on that loop; [`contended`]: which semaphores' last permit
//!   release found waiters (the next one sends the script at once);
//! - [`scope`]: the request's end, and `releaseAll()`;
//! - [`worker`]: the lease threads, one that [`renewal`] renews leases
//!   with (`auto_renew`), one that finishes [`pending`] work (releases and
//!   clean-ups that Redis did not answer).

pub(crate) mod belief;
pub(crate) mod contended;
pub(crate) mod counted;
pub(crate) mod deadline;
pub(crate) mod hold;
pub(crate) mod pending;
pub(crate) mod queue;
pub(crate) mod renewal;
pub(crate) mod scope;
pub(crate) mod table;
pub(crate) mod worker;
