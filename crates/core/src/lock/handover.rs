//! A blocked acquire where one server holds the key (single server,
//! Sentinel, Cluster): the waiter queues there, and a release hands the
//! lock straight to the first live waiter and wakes it (FIFO, no barging).

use std::time::{Duration, Instant};

use super::{Lock, alive_window, block_time};
use crate::call::{Attempt, Call};
use crate::commands::{self, Fence, Queued, Successor, Waiter};
use crate::error::Result;
use crate::pool::Role;
use crate::stats::{self, Counter};

/// One step of a blocking acquire on the command connection.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// Take the lock if free, else join the queue.
    Join,
    /// Look for a lost wake-up or an expired holder; stay queued.
    Check,
    /// Leave the queue (unless the lock was handed over meanwhile).
    GiveUp,
}

impl Lock {
    /// Runs a call on the one server that holds the key.
    fn on_master<T>(&self, role: Role, build: &dyn Fn(Attempt) -> Call<T>) -> Result<T> {
        self.topology.run_on(0, role, &self.keys.lock, build)
    }

    /// A blocking acquire: take the lock if free, else queue up and sleep
    /// until the releaser hands the lock over and wakes us (BLPOP on our own
    /// wake-up list). A wake-up is never waited for longer than the holder's
    /// remaining lease or `retry_delay`; then one check finds a lost
    /// wake-up, or hands an expired lock to the head of the queue.
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
    ) -> Result<Option<Fence>> {
        let waiter = Waiter {
            token,
            ttl_ms: self.ttl_ms,
            alive_ms: alive_window(self.options.retry_delay),
            fencing: self.options.fencing,
        };
        let waited = self.wait_for_turn(&waiter, wait, stop);
        if waited.is_err() {
            // PHP ended the wait, or a step failed (a refused BLPOP, a lost
            // connection): leave the queue, and free the lock if it was
            // handed to us meanwhile, so a release never hands it to a
            // waiter that is gone. Best effort: should it fail, the queue
            // entry and any lock handed to us expire within the alive
            // window.
            let keys = &*self.keys;
            let _ = self.on_master(Role::Command, &|_| {
                commands::abandon(keys, token, Successor::HandOver)
            });
        }
        waited
    }

    fn wait_for_turn(
        &self,
        waiter: &Waiter<'_>,
        wait: Duration,
        stop: &dyn Fn() -> bool,
    ) -> Result<Option<Fence>> {
        let deadline = Instant::now() + wait;
        let fallback = self.options.retry_delay;
        let keys = &*self.keys;
        let step = |step: Step| {
            self.on_master(Role::Command, &|_| {
                let call = match step {
                    Step::Join => commands::enqueue(keys, waiter),
                    Step::Check => commands::check(keys, waiter, false),
                    Step::GiveUp => commands::check(keys, waiter, true),
                };
                self.acked(call, Queued::is_acquired)
            })
        };
        let done = |queued: Queued| match queued {
            Queued::Acquired { fence } => Some(fence),
            _ => None,
        };
        let mut holder_pttl = match step(Step::Join)? {
            Queued::Waiting { pttl_ms } => pttl_ms,
            other => return Ok(done(other)),
        };
        stats::add(Counter::Contended);
        loop {
            let now = Instant::now();
            if now >= deadline || stop() {
                // Leave the queue, unless the lock was handed to us meanwhile.
                return Ok(done(step(Step::GiveUp)?));
            }
            let block = block_time(deadline - now, holder_pttl, fallback);
            let waited = self.on_master(Role::Blocking, &|_| {
                self.acked(
                    commands::wait_and_check(keys, waiter, block),
                    Queued::is_acquired,
                )
            });
            let queued = match waited {
                Ok(queued) => queued,
                // A late reply may still have woken us: look again.
                Err(e) if e.is_timeout() => step(Step::Check)?,
                Err(e) => return Err(e),
            };
            match queued {
                Queued::Waiting { pttl_ms } => holder_pttl = pttl_ms,
                other => return Ok(done(other)),
            }
        }
    }
}
