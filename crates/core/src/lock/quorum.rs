//! A blocked acquire over Redlock, where a quorum of independent servers
//! decides, on the lease engine's one wait ([`queue::wait`], which owns
//! the deadline, the blocks, late wins and the ends) with a [`Voter`]'s
//! requests. No server can hand the lock over, so a waiter:
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

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

use super::{Claim, Lock, Won};
use crate::error::{LockError, Result};
use crate::lease::deadline::Deadline;
use crate::lease::queue::{self, Policy, Waited, alive_window};
use crate::protocol::lock_calls::{self, Waiter};
use crate::protocol::step::{Mode, Step};
use crate::topology::{Role, Votes, Woken};

/// Longest random pause after a split vote.
const SPLIT_BACKOFF_MAX: Duration = Duration::from_millis(50);

impl Lock {
    /// The blocking acquire of Redlock (see the module documentation), on
    /// the lease engine's wait ([`queue::wait`]) with a [`Voter`]. A round
    /// whose undo a server left unanswered moves `claim` to a fresh token
    /// (or nonce).
    pub(super) fn wait_for_quorum(
        &self,
        claim: &mut Claim,
        deadline: &Deadline,
    ) -> Result<Option<Won>> {
        let voter = Voter {
            lock: self,
            claim: RefCell::new(claim),
            arrival: lock_calls::arrival_now(),
            listening: Cell::new(None),
            tried: Cell::new(Instant::now()),
            written: RefCell::new(Vec::new()),
        };
        let waited = queue::wait(
            &queue::Wait {
                topology: &self.topology,
                ttl_ms: self.ttl_ms,
                deadline,
                unknown: false,
                first_wait: None,
            },
            &voter,
        );
        // (A failed wait left the wake-up queue with its give-back.)
        voter.leave_wake_queue();
        Ok(match waited? {
            Waited::Won { sent, .. } => Some(Won { fence: None, sent }),
            _ => None,
        })
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

    /// One try on every server, with each server's remaining lease.
    fn try_with_lease(&self, claim: &Claim) -> Votes<(bool, i64)> {
        let keys = &*self.keys;
        let ttl_ms = self.ttl_ms;
        self.run(Role::Command, &|attempt| {
            lock_calls::try_acquire_pttl(keys, &claim.token, claim.nonce(), ttl_ms, attempt)
        })
    }
}

/// A Redlock waiter's requests for the lease engine's wait: each step is a
/// try on every master (undone where it may have written when it does
/// not win, and its wake-up queue joined on one master); each wait is a
/// `BLPOP` in that queue, then the step.
struct Voter<'a> {
    lock: &'a Lock,
    claim: RefCell<&'a mut Claim>,
    /// When the waiter began to wait (its place in the wake-up queue).
    arrival: u64,
    /// The master whose wake-up queue it is in, if any.
    listening: Cell<Option<usize>>,
    /// The send of the last try: a win counts from it.
    tried: Cell<Instant>,
    /// The masters where the last try may have written and was not undone
    /// (it won there, or gave no reply): where a give-back undoes it.
    written: RefCell<Vec<bool>>,
}

impl Voter<'_> {
    /// Joins the wake-up queue of the first master that answers, unless
    /// in one already.
    fn join_wake_queue(&self) {
        if self.listening.get().is_some() {
            return;
        }
        let (lock, keys) = (self.lock, &*self.lock.keys);
        let claim = self.claim.borrow();
        let waiter = lock.waiter(&claim.token, self.arrival);
        let node = (0..lock.topology.servers_per_key()).find(|&node| {
            lock.topology
                .run_on(node, Role::Command, &keys.lock, &|_| {
                    lock_calls::join_wake_queue(keys, &waiter)
                })
                .is_ok()
        });
        self.listening.set(node);
    }

    /// Leaves the wake-up queue it is in (as far as its master answers).
    fn leave_wake_queue(&self) {
        let Some(node) = self.listening.take() else {
            return;
        };
        let (lock, keys) = (self.lock, &*self.lock.keys);
        let claim = self.claim.borrow();
        let waiter = lock.waiter(&claim.token, self.arrival);
        let _ = lock.topology.run_on(node, Role::Command, &keys.lock, &|_| {
            lock_calls::leave_wake_queue(keys, &waiter)
        });
    }

    /// After an undo that a master left unanswered (it stays pending, and
    /// its resend would release what the claim wins there later): the
    /// next rounds use a fresh token (a fresh nonce with an `owner` token,
    /// which cannot change), in the wake-up queue under that token.
    fn renew_claim(&self) -> Result<()> {
        self.leave_wake_queue();
        self.claim.borrow_mut().renew()
    }
}

impl queue::Waiter for Voter<'_> {
    fn send_step(&self, mode: Mode, _replay: bool) -> Result<Step> {
        self.tried.set(Instant::now());
        let votes = self.lock.try_with_lease(&self.claim.borrow());
        // Only where this try may have written: a server that refused it
        // may hold the same token for another object (`owner`).
        let written = votes.may_have_written(|(won, _)| *won);
        if votes.agree(|(won, _)| *won) {
            *self.written.borrow_mut() = written;
            return Ok(Step::Won {
                fence: None,
                left_ms: None,
            });
        }
        self.written.borrow_mut().clear();
        let took_some = votes.count(|(won, _)| *won) > 0;
        let pending = self.lock.undo_where(&self.claim.borrow(), &written);
        if pending.is_some() {
            // Before anything else: a wait that goes on after a failure
            // (a dropped connection) must not win again under this token.
            self.renew_claim()?;
        }
        if votes.answered() < votes.quorum() {
            return Err(votes.failure());
        }
        if mode == Mode::Wait {
            self.join_wake_queue();
        }
        // Split votes: a random pause, after which one of the waiters soon
        // wins every master; else until the holder's lease ends.
        let hint = match took_some {
            true => Some(split_backoff(self.lock.options.retry_delay).as_millis() as u64),
            false => u64::try_from(holder_lease(&votes)).ok(),
        };
        Ok(Step::Waiting { hint_ms: hint })
    }

    fn send_wait(&self, block: Duration, mode: Mode, replay: bool) -> Result<Woken<Step>> {
        match self.listening.get() {
            Some(node) => {
                let keys = &*self.lock.keys;
                let woken = {
                    let claim = self.claim.borrow();
                    let waiter = self.lock.waiter(&claim.token, self.arrival);
                    self.lock.topology.wait_on(node, &keys.lock, &|_| {
                        lock_calls::wait_for_quorum_wake(keys, &waiter, block)
                    })
                };
                match woken {
                    // PHP ended the wait: the wake-up wait takes nothing,
                    // and the last try was undone where it did not win.
                    Ok(Woken::Ended(_)) => {
                        return Ok(Woken::Ended(Some(Step::Waiting { hint_ms: None })));
                    }
                    Ok(Woken::Answered(_)) => {}
                    // A refused command (an ACL without BLPOP) stays
                    // refused: say so instead of retrying until the end.
                    Err(e @ LockError::Server { .. }) => return Err(e),
                    Err(e) if e.is_timeout() => {}
                    // That master failed: the next step joins another.
                    Err(_) => self.listening.set(None),
                }
            }
            // No master took the queue entry (a quorum still answered the
            // try): the pause is slept out, then it tries again. A signal
            // that ends the wait ends the pause too.
            None => {
                if !queue::sleep_for(block.min(Duration::from_millis(100))) {
                    return Ok(Woken::Ended(Some(Step::Waiting { hint_ms: None })));
                }
            }
        }
        self.send_step(mode, replay).map(Woken::Answered)
    }

    fn send_top_up(&self) -> Result<bool> {
        let (keys, ttl_ms) = (&*self.lock.keys, self.lock.ttl_ms);
        let claim = self.claim.borrow();
        let votes = self.lock.run(Role::Command, &|_| {
            lock_calls::refresh(&keys.lock, None, &claim.token, claim.nonce(), ttl_ms)
        });
        Ok(votes.agree(|ours| *ours))
    }

    fn send_give_back(&self, answered: bool) -> Result<bool> {
        self.leave_wake_queue();
        // A try that did not win was undone at once, and no master hands
        // anything over: only a win (too late, or its top-up unanswered)
        // is left to give back, where it may have written.
        let written = std::mem::take(&mut *self.written.borrow_mut());
        if answered || !written.contains(&true) {
            return Ok(false);
        }
        let pending = self.lock.undo_where(&self.claim.borrow(), &written);
        if pending.is_some() {
            self.renew_claim()?;
        }
        Ok(true)
    }

    fn won_at(&self, _sent: Instant) -> Instant {
        self.tried.get()
    }

    fn policy(&self) -> &dyn Policy {
        self
    }
}

/// A Redlock wait never barges and has no queue to be handed a win from.
impl Policy for Voter<'_> {
    fn hands_over(&self) -> bool {
        false
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
