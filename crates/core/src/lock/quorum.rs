//! A blocked acquire over Redlock, where a quorum of independent servers
//! decides. No server can hand the lock over, so a waiter:
//!
//! 1. tries every server at once (`SET NX PX`, and the lease left);
//! 2. when it does not win, undoes what it took and joins the wake-up queue
//!    of one server (the first that answers, in the order given); an undo
//!    that a server leaves unanswered stays pending (it is sent again
//!    later), and a later round that won with the same token there would
//!    be released by it, so the next rounds use a fresh token (with an
//!    `owner` token, which cannot change, a fresh nonce: the undo compares
//!    the nonce of its own round);
//! 3. sleeps there (`BLPOP`) until a release on that server wakes the first
//!    live waiter, the holder's lease runs out, or `retry_delay` passes;
//!    then tries again.
//!
//! Fairness: waiters are woken one per release, in the order they queued
//! on their server, but a woken waiter competes with newcomers (barging is
//! possible), so there is no FIFO guarantee over Redlock. When waiters
//! split the votes (each took some servers, none a quorum), each undoes its
//! part and retries after a random pause of 1 ms to
//! [`SPLIT_BACKOFF_MAX`] (or `retry_delay` when smaller): one of them soon
//! wins all servers, so split votes never livelock.

use std::time::{Duration, Instant};

use super::{Claim, Lock, Won};
use crate::error::{LockError, Result};
use crate::lease::deadline::Deadline;
use crate::lease::queue::alive_window;
use crate::net::pool::Role;
use crate::protocol::commands::{self, Waiter};
use crate::stats;
use crate::topology::{Votes, Woken};

/// Longest random pause after a split vote.
const SPLIT_BACKOFF_MAX: Duration = Duration::from_millis(50);

impl Lock {
    /// The blocking acquire of Redlock (see the module documentation).
    pub(super) fn wait_for_quorum(
        &mut self,
        claim: &mut Claim,
        deadline: &Deadline,
    ) -> Result<Option<Won>> {
        let arrival = commands::arrival_now();
        let mut listening: Option<usize> = None;
        let mut first = true;
        let outcome = loop {
            let sent = Instant::now();
            let votes = self.try_with_lease(claim);
            if votes.agree(|(won, _)| *won)
                && self
                    .topology
                    .validity(self.ttl_ms, sent.elapsed())
                    .is_some()
            {
                break Ok(Some(Won { fence: None, sent }));
            }
            if std::mem::take(&mut first) {
                stats::contended();
            }
            let took_some = votes.count(|(won, _)| *won) > 0;
            // Only where this try may have written: a server that refused
            // it may hold the same token for another object (`owner`).
            let pending = self.undo_where(claim, &votes.may_have_written(|(won, _)| *won));
            if votes.answered() < votes.quorum() {
                break Err(votes.failure());
            }
            if pending.is_some() {
                // The undo stays pending on a server that did not answer,
                // and its resend would release what this claim wins
                // there later: the next rounds use a fresh token (a fresh
                // nonce with an `owner` token, which cannot change).
                if let Some(node) = listening.take() {
                    self.leave_wake_queue(node, &self.waiter(&claim.token, arrival));
                }
                claim.renew()?;
            }
            let waiter = self.waiter(&claim.token, arrival);
            if deadline.over() {
                break Ok(None);
            }
            let block = if took_some {
                split_backoff(self.options.retry_delay).min(deadline.left())
            } else {
                deadline.block(holder_lease(&votes))
            };
            if listening.is_none() {
                listening = self.join_wake_queue(&waiter);
            }
            match listening {
                Some(node) => {
                    let keys = &*self.keys;
                    let woken = self.topology.wait_on(node, &keys.lock, &|_| {
                        commands::wait_for_quorum_wake(keys, &waiter, block)
                    });
                    match woken {
                        // PHP ended the wait (the wake-up wait takes
                        // nothing, answered or not).
                        Ok(Woken::Ended(_)) => break Err(LockError::Interrupted),
                        Ok(Woken::Answered(_)) => {}
                        // A refused command (an ACL without BLPOP) stays
                        // refused: say so instead of retrying until the
                        // deadline.
                        Err(e @ LockError::Server { .. }) => break Err(e),
                        Err(e) if e.is_timeout() => {}
                        // That server failed: listen on another one next time.
                        Err(_) => listening = None,
                    }
                }
                // No server took our queue entry (a quorum still answered
                // the try): sleep out the pause, then try again.
                None => std::thread::sleep(block.min(Duration::from_millis(100))),
            }
        };
        if let Some(node) = listening {
            self.leave_wake_queue(node, &self.waiter(&claim.token, arrival));
        }
        outcome
    }

    /// The waiter `token` that began to wait at `arrival`, as the wake-up
    /// queue knows it.
    fn waiter<'a>(&self, token: &'a [u8], arrival: u64) -> Waiter<'a> {
        Waiter {
            token,
            nonce: None,
            ttl_ms: self.ttl_ms,
            alive_ms: alive_window(self.options.retry_delay),
            fencing: false,
            arrival,
        }
    }

    /// Leaves the wake-up queue of server `node` (as far as it answers).
    fn leave_wake_queue(&self, node: usize, waiter: &Waiter<'_>) {
        let keys = &*self.keys;
        let _ = self.topology.run_on(node, Role::Command, &keys.lock, &|_| {
            commands::leave_wake_queue(keys, waiter)
        });
    }

    /// One try on every server, with each server's remaining lease.
    fn try_with_lease(&self, claim: &Claim) -> Votes<(bool, i64)> {
        let keys = &*self.keys;
        let ttl_ms = self.ttl_ms;
        self.run(Role::Command, &|attempt| {
            commands::try_acquire_pttl(keys, &claim.token, claim.nonce(), ttl_ms, attempt)
        })
    }

    /// Joins the wake-up queue of the first server that answers.
    fn join_wake_queue(&self, waiter: &Waiter<'_>) -> Option<usize> {
        let keys = &*self.keys;
        (0..self.topology.servers_per_key()).find(|&node| {
            self.topology
                .run_on(node, Role::Command, &keys.lock, &|_| {
                    commands::join_wake_queue(keys, waiter)
                })
                .is_ok()
        })
    }
}

/// When the holder's lease ends on enough servers for a quorum to be free:
/// the smallest remaining lease among the servers that refused us.
fn holder_lease(votes: &Votes<(bool, i64)>) -> i64 {
    votes
        .min_of(|(won, pttl)| (!won && *pttl >= 0).then_some(*pttl))
        .unwrap_or(-1)
}

/// A random pause of 1 ms to `SPLIT_BACKOFF_MAX` (at most `retry_delay`).
fn split_backoff(retry_delay: Duration) -> Duration {
    let max = SPLIT_BACKOFF_MAX.min(retry_delay).as_micros().max(1_000) as u64;
    let mut bytes = [0u8; 8];
    let random = getrandom::fill(&mut bytes).map_or(max / 2, |()| u64::from_le_bytes(bytes));
    Duration::from_micros(1_000 + random % max)
}
