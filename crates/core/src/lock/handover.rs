//! A blocked acquire where one server holds the key (single server,
//! Sentinel, Cluster), in the manner of Go's `sync.Mutex` in starvation
//! mode, on the lease engine's queue-wait loop ([`crate::lease::queue`]):
//!
//! - a free lock nobody waits for goes to whoever asks first (the plain
//!   try, `SET NX`, one round trip): barging costs nothing while uncontended;
//! - a caller whose try found the lock held has lost its race: it queues on
//!   the server (FIFO, by arrival) and sleeps (`BLPOP` on its own list, with
//!   its next step behind it), and from then on it is starving: a release
//!   hands the lock straight to the first live waiter (the lock is set to
//!   its token for what is left of the waiter's mark's life, at most its
//!   ttl, and its mark says "h"), so the lock passes in arrival order and
//!   never waits for a woken waiter to win a race;
//! - with option `starve_after`, a waiter barges first (Go's normal
//!   mode): until it has waited that long its mark (`0`) asks a release
//!   neither to hand it the lock nor to wake it: the release frees the
//!   lock, and whoever asks first takes it (the releaser coming straight
//!   back, most often: no process is woken per section). The waiter
//!   sleeps in this process (no request) until it starves, or the
//!   holder's lease ends, then steps; from `starve_after` on it is
//!   starving as above, and a release hands the lock to the first starving
//!   waiter even behind waiters that still barge;
//! - the step behind the waiter's `BLPOP` runs the moment the release
//!   wakes it and claims the lock for its whole ttl (and its fencing token,
//!   and the replicas' acknowledgement), in the same round trip: a handed
//!   lock is held as long as one taken free. A waiter that is gone (its
//!   connection closed) never runs that step: what it was handed ends with
//!   its mark.

use std::time::Duration;

use super::{Claim, Lock, Won};
use crate::error::Result;
use crate::lease::contended;
use crate::lease::deadline::Deadline;
use crate::lease::queue::{self, Barging, Policy, Steps, Waited};
use crate::protocol::call::{Attempt, Call};
use crate::protocol::lock_calls::{self, Successor, Waiter};
use crate::protocol::step::{Mode, Step};

/// A writer's steps in the lock's queue.
struct Writer<'a> {
    lock: &'a Lock,
    waiter: Waiter<'a>,
    /// Whether it barges (from when its plain try had lost); its last
    /// step said so with mark `0`.
    barging: Barging,
}

impl Policy for Writer<'_> {
    fn starving_in(&self) -> Option<Duration> {
        self.barging.starving_in()
    }

    fn marked_barging(&self) -> bool {
        self.barging.marked()
    }
}

impl Steps for Writer<'_> {
    fn key(&self) -> &[u8] {
        &self.lock.keys.lock
    }

    fn wake_list(&self) -> Vec<u8> {
        self.lock.keys.wake(self.waiter.token)
    }

    fn step(&self, mode: Mode, replay: bool) -> Call<Step> {
        let starving = self.starving_in().is_none();
        self.barging.mark(!starving);
        let attempt = if replay {
            Attempt::Replay
        } else {
            Attempt::First
        };
        self.lock.acked(
            lock_calls::wait_step(
                &self.lock.keys,
                &self.waiter,
                starving,
                mode == Mode::GiveUp,
                attempt,
            ),
            Step::is_won,
        )
    }

    fn top_up(&self) -> Call<bool> {
        let keys = &self.lock.keys;
        let fence = self.waiter.fencing.then_some(&keys.fence[..]);
        self.lock.acked(
            lock_calls::refresh(
                &keys.lock,
                fence,
                self.waiter.token,
                self.waiter.nonce,
                self.lock.ttl_ms,
            ),
            |ok| *ok,
        )
    }

    fn give_back(&self, answered: bool) -> Call<bool> {
        // After an answered step only a hand-over can have given it to us:
        // a lock that holds our token without one is another object's
        // (the same `owner`).
        let (keys, token, nonce) = (&self.lock.keys, self.waiter.token, self.waiter.nonce);
        match answered {
            true => lock_calls::abandon_if_handed(keys, token, nonce),
            false => lock_calls::abandon(keys, token, nonce, Successor::HandOver),
        }
    }
}

impl Lock {
    /// A blocking acquire after a plain try that found the lock held (see
    /// the module documentation). When the wait fails (PHP ended it, or a
    /// step failed), the waiter has left the queue and freed the lock if
    /// it was handed over meanwhile, as far as the server answered.
    /// `unknown`: the plain try got no answer (its connection dropped), so
    /// the first step is a replay.
    pub(super) fn wait_in_queue(
        &self,
        claim: &Claim,
        deadline: &Deadline,
        unknown: bool,
    ) -> Result<Option<Won>> {
        let writer = Writer {
            lock: self,
            waiter: Waiter {
                token: &claim.token,
                nonce: claim.nonce(),
                ttl_ms: self.ttl_ms,
                alive_ms: queue::alive_window(self.options.retry_delay),
                fencing: self.options.fencing,
                arrival: lock_calls::arrival_now(),
            },
            barging: Barging::new(self.options.starve_after),
        };
        // A writer that starves from the start sends its first step with
        // its first wait.
        let first_wait = |block, mode| {
            let give_up = mode == Mode::GiveUp;
            self.topology.wait_on(0, &self.keys.lock, &|attempt| {
                let call =
                    lock_calls::first_wait(&self.keys, &writer.waiter, block, give_up, attempt);
                self.acked(call, |(step, _)| step.is_won())
            })
        };
        let starving = writer.starving_in().is_none();
        let waited = queue::wait_in_queue(
            &queue::Wait {
                topology: &self.topology,
                ttl_ms: self.ttl_ms,
                deadline,
                unknown,
                first_wait: starving.then_some(&first_wait as queue::FirstWait<'_>),
            },
            &writer,
        )?;
        // The next acquire of this key by this process starts with the
        // queue's step while this one had to queue ([`contended`]).
        let queued = !matches!(waited, Waited::Won { queued: false, .. });
        contended::note(&self.keys.lock, queued);
        Ok(match waited {
            Waited::Won { fence, sent, .. } => Some(Won { fence, sent }),
            _ => None,
        })
    }
}
