//! The replies of one call from every server that holds a lock's keys, and
//! the quorum they are counted against.

use std::sync::Arc;

use crate::error::{ConnectionFailure, LockError, Result};

/// One result per server, and how many agreeing servers make a decision
/// (1 of 1 on a single master; `floor(N/2) + 1` of N for Redlock).
#[derive(Debug)]
pub(crate) struct Votes<T> {
    results: Vec<Result<T>>,
    quorum: usize,
    servers: Arc<[String]>,
}

impl<T> Votes<T> {
    /// Results of `servers` (names for messages, passwords masked), in
    /// order, counted against `quorum`.
    pub(crate) fn new(results: Vec<Result<T>>, quorum: usize, servers: Arc<[String]>) -> Self {
        Self {
            results,
            quorum,
            servers,
        }
    }

    /// Where a write may have happened, per server: true for a reply that
    /// `wrote` accepts and for a server that gave no reply (its state is
    /// unknown), false for a reply that says nothing was written.
    pub(crate) fn may_have_written(&self, wrote: impl Fn(&T) -> bool) -> Vec<bool> {
        self.results
            .iter()
            .map(|r| r.as_ref().map_or(true, &wrote))
            .collect()
    }

    /// Every server's result, in order.
    pub(crate) fn into_results(self) -> Vec<Result<T>> {
        self.results
    }

    /// How many servers replied.
    pub(crate) fn answered(&self) -> usize {
        self.results.iter().filter(|r| r.is_ok()).count()
    }

    /// How many servers replied with something `pred` accepts.
    pub(crate) fn count(&self, pred: impl Fn(&T) -> bool) -> usize {
        self.results
            .iter()
            .filter(|r| r.as_ref().is_ok_and(&pred))
            .count()
    }

    /// True when a quorum replied with something `pred` accepts.
    pub(crate) fn agree(&self, pred: impl Fn(&T) -> bool) -> bool {
        self.count(pred) >= self.quorum
    }

    /// Servers needed for a decision.
    pub(crate) fn quorum(&self) -> usize {
        self.quorum
    }

    /// The one server's reply, or its error (one server holds the keys).
    pub(crate) fn into_single(mut self) -> Result<T> {
        match self.results.pop() {
            Some(result) if self.results.is_empty() => result,
            _ => Err(LockError::Internal("into_single on several servers".into())),
        }
    }

    /// The replies, when enough servers replied for a decision; otherwise
    /// why not ([`Votes::failure`]). Servers that failed give `None`.
    pub(crate) fn replies(self) -> Result<Vec<Option<T>>> {
        let votes = self.decided()?;
        Ok(votes.results.into_iter().map(Result::ok).collect())
    }

    /// The votes, when enough servers replied for a decision; otherwise
    /// why not ([`Votes::failure`]).
    pub(crate) fn decided(self) -> Result<Self> {
        if self.answered() >= self.quorum {
            Ok(self)
        } else {
            Err(self.failure())
        }
    }

    /// Why no decision could be made: the one server's error; with several
    /// servers, a `ConnectionException`-class error that names the quorum
    /// and every server that failed (a refused command or an ended wait is
    /// reported as itself).
    pub(crate) fn failure(mut self) -> LockError {
        if self.results.len() == 1 {
            return match self.results.pop() {
                Some(Err(e)) => e,
                _ => LockError::Internal("no failure to report".into()),
            };
        }
        let total = self.results.len();
        let mut errors: Vec<(String, LockError)> = self
            .servers
            .iter()
            .cloned()
            .zip(self.results)
            .filter_map(|(name, r)| r.err().map(|e| (name, e)))
            .collect();
        // PHP ended the wait: that wins, the binding lets PHP's own
        // exception through.
        if errors
            .iter()
            .any(|(_, e)| matches!(e, LockError::Interrupted))
        {
            return LockError::Interrupted;
        }
        // A server that refused a command (scripts, ACL) is a server error,
        // not a connectivity problem: report it as such.
        if let Some(pos) = errors
            .iter()
            .position(|(_, e)| matches!(e, LockError::Server { .. }))
        {
            return errors.swap_remove(pos).1;
        }
        let kind = errors
            .iter()
            .find_map(|(_, e)| match e {
                LockError::Connection { kind, .. } => Some(*kind),
                _ => None,
            })
            .unwrap_or(ConnectionFailure::Other);
        let detail = errors
            .iter()
            .map(|(name, e)| match e {
                LockError::Connection { kind, detail, .. } => format!("{name}: {kind}: {detail}"),
                other => format!("{name}: {other}"),
            })
            .collect::<Vec<_>>()
            .join("; ");
        LockError::Connection {
            server: format!("servers ({} of {total} failed)", errors.len()),
            kind,
            detail: format!(
                "a lock needs a quorum of {} of {total} servers; {detail}",
                self.quorum
            ),
        }
    }
}

impl<T> Votes<T> {
    /// The smallest value `pick` takes from a reply, if any.
    pub(crate) fn min_of<V: Ord>(&self, pick: impl Fn(&T) -> Option<V>) -> Option<V> {
        self.results
            .iter()
            .filter_map(|r| r.as_ref().ok().and_then(&pick))
            .min()
    }

    /// Which servers replied.
    pub(crate) fn oks(&self) -> Vec<bool> {
        self.results.iter().map(Result::is_ok).collect()
    }

    /// The first refusal of a command by a server (scripts refused, ACL),
    /// if any: such a server can never take part in a lock.
    pub(crate) fn refused(&self) -> Option<LockError> {
        self.results.iter().find_map(|r| match r {
            Err(e @ LockError::Server { .. }) => Some(e.clone()),
            _ => None,
        })
    }
}
