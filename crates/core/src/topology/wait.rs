//! A blocking wait on one server of a key (a waiter's `BLPOP`, with what
//! rides behind it), and how it ended as a value: answered, or ended by
//! PHP (a signal handler threw or called `exit()`, the time limit), with
//! the answer of the commands behind the wait when the server gave it.
//! The connection layer notes an ended wait on the thread that ran it;
//! this is the one place above it that reads the note, so no floor above
//! the topology looks at the connections.

use super::Topology;
use crate::error::{LockError, Result};
use crate::net::exchange;
use crate::net::pool::Role;
use crate::protocol::call::{Attempt, Call};

/// How a blocking wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Woken<T> {
    /// The wait ended by itself (woken or timed out) and its call answered.
    Answered(T),
    /// PHP ended the wait: with the call's answer when the server gave it
    /// (the wait was ended on the server and the commands behind it ran),
    /// `None` when what they did is unknown.
    Ended(Option<T>),
}

impl<T> Woken<T> {
    /// The same end, with `f` applied to the answer.
    pub(crate) fn map<U>(self, f: impl FnOnce(T) -> U) -> Woken<U> {
        match self {
            Woken::Answered(value) => Woken::Answered(f(value)),
            Woken::Ended(value) => Woken::Ended(value.map(f)),
        }
    }
}

impl Topology {
    /// Runs the blocking `build` on the `node`-th server of `key`, on the
    /// connection kept for waits ([`Topology::run_on`]), and says how the
    /// wait ended. Errors other than PHP ending it are the call's.
    pub(crate) fn wait_on<T>(
        &self,
        node: usize,
        key: &[u8],
        build: &dyn Fn(Attempt) -> Call<T>,
    ) -> Result<Woken<T>> {
        match self.run_on(node, Role::Blocking, key, build) {
            Ok(value) if exchange::take_wait_ended() => Ok(Woken::Ended(Some(value))),
            Ok(value) => Ok(Woken::Answered(value)),
            Err(LockError::Interrupted) => Ok(Woken::Ended(None)),
            Err(error) => Err(error),
        }
    }
}
