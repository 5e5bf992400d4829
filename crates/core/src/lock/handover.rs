//! A blocked acquire where one server holds the key (single server,
//! Sentinel, Cluster), in the manner of Go's `sync.Mutex`:
//!
//! - a free lock goes to whoever asks first, queued or not (barging): the
//!   lock never waits for a chosen successor to be scheduled;
//! - waiters queue on the server and sleep (`BLPOP` on their own list); a
//!   release wakes the first live one, which then tries for it;
//! - a waiter that was woken and lost the race, or has waited longer than
//!   [`STARVING_AFTER`], is starving: the next release hands the lock
//!   straight to it (the lock is set to its token and it claims the full
//!   lease when it runs), so nobody waits long behind barging newcomers.
//!
//! Every step is a round trip of its own, sent when the waiter runs, and a
//! lock it wins counts only if its lease, counted from that send, is not
//! over when the reply is read; a waiter paused past its lease undoes what
//! it won and waits on.

use std::time::{Duration, Instant};

use super::{Lock, Won, alive_window, block_time};
use crate::error::{LockError, Result};
use crate::net::pool::Role;
use crate::process::stats::{self, Counter};
use crate::protocol::call::{Attempt, Call};
use crate::protocol::commands::{self, Queued, Successor, Waiter};

/// How long a waiter may wait before the next release hands the lock to it
/// rather than waking it to race newcomers.
pub const STARVING_AFTER: Duration = Duration::from_millis(5);

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
        let started = Instant::now();
        let deadline = started + wait;
        let fallback = self.options.retry_delay;
        let keys = &*self.keys;
        let step = |starving: bool, give_up: bool| -> Result<(Queued, Instant)> {
            let sent = Instant::now();
            let queued = self.on_master(Role::Command, &|attempt| {
                self.acked(
                    commands::wait_step(keys, waiter, starving, give_up, attempt),
                    Queued::is_acquired,
                )
            })?;
            Ok((queued, sent))
        };
        let mut first = true;
        let mut starving = false;
        loop {
            let now = Instant::now();
            let give_up = !first && (now >= deadline || stop());
            // A step that failed may have run (taken the lock) all the same.
            let (queued, sent) = step(starving, give_up).map_err(|error| Failed {
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
                        return Ok(Some(Won { fence, sent }));
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
            let woken = match self.on_master(Role::Blocking, &|_| {
                commands::wait_for_wake(keys, waiter.token, block)
            }) {
                Ok(woken) => woken,
                // A late reply may still have woken us: the next step looks.
                Err(e) if e.is_timeout() => false,
                Err(error) => {
                    return Err(Failed {
                        error,
                        step_answered: true,
                    });
                }
            };
            // Woken and about to race for it, or waited too long: should
            // this step not win, the next release hands the lock to us.
            starving = woken || started.elapsed() >= STARVING_AFTER;
        }
    }
}
