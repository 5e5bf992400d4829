//! The lease engine under every hold (a lock's write hold, its read holds,
//! a semaphore's permits): what the holds of one name share, whatever
//! they count.
//!
//! - [`belief`]: what this process believes of a hold's lease, and the
//!   rule that keeps it inside what Redis gives (beliefs follow the last
//!   command sent);
//! - [`renewal`]: the background thread that renews leases (`auto_renew`)
//!   and finishes [`pending`] work (releases and clean-ups that Redis did
//!   not answer);
//! - [`queue`]: the one queue-wait loop of a blocked acquire where one
//!   server decides (single server, Sentinel, Cluster): a waiter sleeps on
//!   its wake-up list with its next step sent behind the wait, so Redis
//!   claims a hold handed to it (its whole lease) the moment the wait ends.

pub(crate) mod belief;
pub(crate) mod pending;
pub(crate) mod queue;
pub(crate) mod renewal;
