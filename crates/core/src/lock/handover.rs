//! A blocked acquire where one server holds the key (single server,
//! Sentinel, Cluster), in the manner of Go's `sync.Mutex` in starvation
//! mode:
//!
//! - a free lock nobody waits for goes to whoever asks first (the plain
//!   try, `SET NX`, one round trip): barging costs nothing while uncontended;
//! - a caller whose try found the lock held has lost its race: it queues on
//!   the server (FIFO, by arrival) and sleeps (`BLPOP` on its own list), and
//!   from then on it is starving: a release hands the lock straight to the
//!   first live waiter (the lock is set to its token for what is left of
//!   the waiter's mark's life, at most its ttl), so the lock passes in
//!   arrival order and never waits for a woken waiter to win a race;
//! - a waiter woken with the hand-over ("h") enters at once: its lease is
//!   counted from the send of its last step (the hand-over came after that
//!   step, and its mark lived `alive_ms` from it), and the rest of its ttl
//!   is claimed in the background at a third of that lease. A fenced
//!   waiter, one with `replicas`, and one with a shared `owner` claim the
//!   lease in a step first (the fencing token, the replicas' acknowledgement,
//!   the hand-over's mark), as does every waiter whose wake-up was lost.
//!
//! A lock it wins counts only if its lease, counted from the send of the
//! request that won it, is not over when the reply is read; a waiter
//! paused past its lease undoes what it won and waits on.

use std::time::{Duration, Instant};

use super::{Lock, Won, alive_window, block_time};
use crate::error::{LockError, Result};
use crate::net::pool::Role;
use crate::process::stats::{self, Counter};
use crate::protocol::call::{Attempt, Call};
use crate::protocol::commands::{self, Queued, Successor, Waiter, Wake};

/// A wait that failed, and whether its last step was answered (then only
/// a release's hand-over can have given the waiter the lock).
struct Failed {
    error: LockError,
    step_answered: bool,
}

impl Lock {
    /// Runs a call on the one server that holds the key.
    fn on_master<T>(&self, role: Role, build: &dyn Fn(Attempt) -> Call<T>) -> Result<T> {
        self.topology.run_on(0, role, &self.keys.lock, build)
    }

    /// A blocking acquire (see the module documentation). A wake-up is never
    /// waited for longer than the holder's remaining lease or `retry_delay`;
    /// then a step finds a lost wake-up or a lease that ran out.
    ///
    /// When the wait fails (PHP ended it, [`crate::LockError::Interrupted`]: a
    /// signal handler threw or called `exit()`; or a step failed: a refused
    /// command, a lost connection), the waiter leaves the queue and frees
    /// the lock if it was handed over meanwhile, before the error is
    /// returned.
    pub(super) fn wait_in_queue(
        &self,
        token: &[u8],
        wait: Duration,
        stop: &dyn Fn() -> bool,
    ) -> Result<Option<Won>> {
        let waiter = Waiter {
            token,
            ttl_ms: self.ttl_ms,
            alive_ms: alive_window(self.options.retry_delay),
            fencing: self.options.fencing,
            arrival: commands::arrival_now(),
        };
        match self.wait_for_turn(&waiter, wait, stop) {
            Ok(won) => Ok(won),
            Err(Failed {
                error,
                step_answered,
            }) => {
                // Leave the queue, and free the lock if it was handed to us
                // meanwhile, so it never stays with a waiter that is gone.
                // After an answered step only a hand-over can have given
                // it to us: a lock that holds our token without one is
                // another object's (the same `owner`). Best effort: should
                // it fail, the queue entry and any lock handed to us expire
                // within the alive window.
                let keys = &*self.keys;
                let _ = self.on_master(Role::Command, &|_| match step_answered {
                    true => commands::abandon_if_handed(keys, token),
                    false => commands::abandon(keys, token, Successor::HandOver),
                });
                Err(error)
            }
        }
    }

    fn abandon_on_master(&self, token: &[u8]) {
        let keys = &*self.keys;
        let _ = self.on_master(Role::Command, &|_| {
            commands::abandon(keys, token, Successor::HandOver)
        });
    }

    fn wait_for_turn(
        &self,
        waiter: &Waiter<'_>,
        wait: Duration,
        stop: &dyn Fn() -> bool,
    ) -> std::result::Result<Option<Won>, Failed> {
        let deadline = Instant::now() + wait;
        let fallback = self.options.retry_delay;
        let keys = &*self.keys;
        // Enter on the hand-over's wake-up, without a claim step, when the
        // step would add nothing but the rest of the lease.
        let direct = !waiter.fencing && self.options.replicas == 0 && self.options.owner.is_none();
        let handed_ms = waiter.ttl_ms.min(waiter.alive_ms);
        let step = |give_up: bool| -> Result<(Queued, Instant)> {
            let sent = Instant::now();
            let queued = self.on_master(Role::Command, &|attempt| {
                self.acked(
                    // Starving from the first step: its plain try lost.
                    commands::wait_step(keys, waiter, true, give_up, attempt),
                    Queued::is_acquired,
                )
            })?;
            Ok((queued, sent))
        };
        let mut first = true;
        loop {
            let now = Instant::now();
            let give_up = !first && (now >= deadline || stop());
            // A step that failed may have run (taken the lock) all the same.
            let (queued, sent) = step(give_up).map_err(|error| Failed {
                error,
                step_answered: false,
            })?;
            let holder_pttl = match queued {
                Queued::Acquired { fence } => {
                    if self
                        .topology
                        .validity(self.ttl_ms, sent.elapsed())
                        .is_some()
                    {
                        return Ok(Some(Won {
                            fence,
                            sent,
                            handed_ms: None,
                        }));
                    }
                    // Won, but this process was paused until the lease was
                    // over: it may be someone else's by now. Undo, wait on.
                    self.abandon_on_master(waiter.token);
                    if give_up {
                        return Ok(None);
                    }
                    0
                }
                Queued::GaveUp => return Ok(None),
                Queued::Waiting { pttl_ms } if !give_up => pttl_ms,
                Queued::Waiting { .. } => return Ok(None),
            };
            if std::mem::take(&mut first) {
                stats::add(Counter::Contended);
            }
            let now = Instant::now();
            if now >= deadline {
                continue;
            }
            let block = block_time(deadline - now, holder_pttl, fallback);
            let wake = match self.on_master(Role::Blocking, &|_| {
                commands::wait_for_wake(keys, waiter.token, block)
            }) {
                Ok(wake) => wake,
                // A late reply may still have woken us: the next step looks.
                Err(e) if e.is_timeout() => Wake::None,
                Err(error) => {
                    return Err(Failed {
                        error,
                        step_answered: true,
                    });
                }
            };
            if wake == Wake::Handed && direct {
                // Handed over after our last step ran: the lease lasts at
                // least handed_ms from that step's send.
                if self.topology.validity(handed_ms, sent.elapsed()).is_some() {
                    return Ok(Some(Won {
                        fence: None,
                        sent,
                        handed_ms: Some(handed_ms),
                    }));
                }
                // Paused past it: it may be someone else's by now.
                self.abandon_on_master(waiter.token);
            }
            // Otherwise the next step claims a hand-over, or tries for a
            // lock that was freed, or stays in the queue.
        }
    }
}
