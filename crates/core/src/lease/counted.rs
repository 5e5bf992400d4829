//! Taking holds counted in a sorted set, each with a lease of its own: a
//! semaphore's permits (`sem_*.lua`, `lib/semaphore.lua`) and a lock's read
//! holds (`read_*.lua`, `lib/readers.lua`), and turning a read hold into
//! the lock's write hold (a promotion). A free hold costs one round trip;
//! otherwise the caller waits on the one queue-wait loop ([`super::queue`]),
//! and a hold won goes into the process's table ([`super::holds`]), renewed
//! with `auto_renew`.
//!
//! Their scripts judge holds by the caller's clock reading in the request
//! (scores are lease ends, in ms since the Unix epoch): a hold that was
//! the caller's already (handed over, or its first try's on a replay)
//! counts only if the reply comes within what it had left by that reading.

use std::cell::Cell;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::config::options::LockOptions;
use crate::error::{LockError, Result};
use crate::host;
use crate::lease::belief::Lease;
use crate::lease::deadline::Deadline;
use crate::lease::hold::give_back_later;
use crate::lease::queue::{self, Barging, Policy, Steps, Waited};
use crate::lease::renewal::{Job, Renewed};
use crate::lease::table::{self, Entry, Kind};
use crate::lease::{pending, worker};
use crate::protocol::call::{Attempt, Call};
use crate::protocol::counted::{self as clock, Counted, SemKeys};
use crate::protocol::keys::LockKeys;
use crate::protocol::lock_calls::{self, Successor};
use crate::protocol::permitted::Permitted;
use crate::protocol::readers;
use crate::protocol::semaphore as calls;
use crate::protocol::step::{Mode, Step};
use crate::stats::Primitive;
use crate::topology::{Checked, Role, Topology};

/// How counted holds of one name are taken: the keys, the number of
/// permits (0 for read holds: none to check), the lease, where they live
/// and the options of the object that takes them.
pub(crate) struct Counter<'a> {
    /// The keys of the holders.
    pub keys: &'a Arc<SemKeys>,
    /// The semaphore's permits (0 for a lock's read holds).
    pub permits: u32,
    /// The lease asked for.
    pub ttl_ms: u64,
    /// Where the name lives.
    pub topology: &'a Arc<Topology>,
    /// The taker's options.
    pub options: &'a LockOptions,
}

/// How an acquire of a counted hold ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Taken {
    /// Ours, its lease counted from this send.
    Won(Instant),
    /// Not within the wait.
    Out,
    /// The semaphore has this many permits, not the number asked for.
    Mismatch(i64),
}

/// How a promotion ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Promoted {
    /// The read hold is the lock's write hold now, its lease counted from
    /// this send.
    Won(Instant),
    /// Other readers still hold the lock: the read hold stays.
    Out,
    /// The read hold was gone (its lease ran out).
    Gone,
}

impl Counter<'_> {
    /// Runs a call on the server that holds the name.
    fn on_master<T>(&self, build: &dyn Fn(Attempt) -> Call<T>) -> Result<T> {
        self.topology
            .run_on(0, Role::Command, &self.keys.holders, build)
    }

    /// Takes a hold under `token`, waiting up to `wait` for one: one round
    /// trip when one is free, else the queue. Work on this name that Redis
    /// did not answer goes first (the caller's own unreleased hold never
    /// keeps it out). A try or wait whose outcome is unknown is given back
    /// later ([`pending`]).
    pub fn acquire(&self, token: &[u8], count: u32, wait: Duration) -> Result<Taken> {
        // A wait goes on through dropped connections from its start.
        let deadline = Instant::now() + wait;
        queue::through_drops(deadline, || {
            self.check_scripts()?;
            let (key, policy) = (&self.keys.holders, self.options.unsafe_server);
            self.topology.check_unsafe(key, policy)?;
            pending::flush(self.topology.scope(), &self.keys.base)
        })?;
        let steps = Holder {
            counter: self,
            token,
            count,
            alive_ms: queue::alive_window(self.options.retry_delay),
            arrival: clock::now_us(),
            stepped: Cell::new(false),
            barging: Barging::new(self.options.starve_after),
        };
        if self.permits > 0 && !wait.is_zero() {
            // A semaphore's wait starts with its first step, which takes
            // free permits as a try does (one round trip when nobody
            // waits) or joins the queue: a try first would cost a script
            // call of its own whenever the semaphore is full.
            return self.wait_or_give_back(token, count, &steps, wait, false);
        }
        // A read hold tries the free lock key first, as a writer does (a
        // lone reader: one SET); found held, it goes on with the script.
        // A replay (lost reply) finds its first try's holder entry; a try
        // that met departed waiters in the way (dropped) goes again.
        let mut lone = matches!(self.keys.counted, Counted::Readers(_));
        let (tried, sent) = loop {
            let sent = Instant::now();
            let tried = if std::mem::take(&mut lone) {
                self.on_master(&|attempt| steps.lone_try(attempt))
            } else {
                self.on_master(&|attempt| steps.step(Mode::Try, attempt == Attempt::Replay))
            };
            match tried {
                Ok(Step::Again) => {}
                tried => break (tried, sent),
            }
        };
        let taken = match tried {
            Ok(Step::Won { left_ms, .. }) if self.in_time(sent, left_ms) => Taken::Won(sent),
            // Won too late: with wait left, the wait's first step settles
            // it (a hold still ours is claimed for its whole lease, as on a
            // replay) and nothing is undone, so no late undo can meet the
            // hold that wait takes under the same token.
            Ok(Step::Won { .. }) if Instant::now() < deadline => {
                let left = deadline.saturating_duration_since(Instant::now());
                self.wait_or_give_back(token, count, &steps, left, true)?
            }
            Ok(Step::Won { .. }) => {
                self.give_back_late(token, count, &steps);
                Taken::Out
            }
            Ok(Step::Waiting { .. }) if wait.is_zero() => Taken::Out,
            // A try whose connection dropped: the wait's steps find what it
            // took, if anything.
            Err(err) if err.is_retryable() && !wait.is_zero() => {
                self.wait_or_give_back(token, count, &steps, wait, true)?
            }
            Ok(Step::Waiting { .. }) => {
                self.wait_or_give_back(token, count, &steps, wait, false)?
            }
            Ok(Step::Mismatch(n)) => Taken::Mismatch(n),
            Ok(Step::GaveUp | Step::Gone | Step::Again) => Taken::Out,
            Err(err) => {
                // It may have taken a hold.
                self.give_back_later_after(&err, token, count);
                return Err(err);
            }
        };
        Ok(taken)
    }

    /// Waits in the queue; a wait that failed with a connection error may
    /// have left a hold or a queue entry: given back later. `unknown`: a
    /// try before it may have taken a hold (no reply, or one too late), so
    /// the first step is a replay that looks for it.
    fn wait_or_give_back(
        &self,
        token: &[u8],
        count: u32,
        steps: &dyn Steps,
        wait: Duration,
        unknown: bool,
    ) -> Result<Taken> {
        match self.wait(steps, wait, unknown) {
            Ok(Waited::Won { sent, .. }) => Ok(Taken::Won(sent)),
            Ok(Waited::Mismatch(n)) => Ok(Taken::Mismatch(n)),
            Ok(Waited::Out | Waited::Gone) => Ok(Taken::Out),
            Err(err) => {
                // Its clean-up may not have reached the server.
                self.give_back_later_after(&err, token, count);
                Err(err)
            }
        }
    }

    /// Turns the read hold of `token` into the write hold of `lock` once no
    /// other reader holds the lock, waiting up to `wait` (in the lock's
    /// queue as a writer, so new readers wait behind).
    pub fn promote(&self, lock: &LockKeys, token: &[u8], wait: Duration) -> Result<Promoted> {
        let steps = Promotion {
            counter: self,
            lock,
            token,
            alive_ms: queue::alive_window(self.options.retry_delay),
            arrival: clock::now_us(),
        };
        let sent = Instant::now();
        Ok(match self.on_master(&|_| steps.step(Mode::Try, false))? {
            Step::Won { left_ms, .. } if self.in_time(sent, left_ms) => Promoted::Won(sent),
            Step::Won { .. } => {
                // Too late: given back (the lock freed if it was ours to
                // write). Unanswered, the promotion fails with that error
                // rather than leave an undo that a later promotion under
                // the same token could meet.
                self.on_master(&|_| steps.give_back(false))?;
                Promoted::Out
            }
            Step::Waiting { .. } if !wait.is_zero() => match self.wait(&steps, wait, false)? {
                Waited::Won { sent, .. } => Promoted::Won(sent),
                Waited::Gone => Promoted::Gone,
                Waited::Out | Waited::Mismatch(_) => Promoted::Out,
            },
            Step::Gone => Promoted::Gone,
            _ => Promoted::Out,
        })
    }

    /// Records a hold of `count` permits (a read hold: 1) of `token`, won by
    /// a request sent at `sent`, in the process's table, and starts renewing
    /// it with `auto_renew`. Returns its id.
    pub fn adopt(&self, token: Vec<u8>, count: u32, sent: Instant) -> u64 {
        let primitive = match self.keys.counted {
            Counted::Permits => Primitive::Permit,
            Counted::Readers(_) => Primitive::Read,
        };
        let lease = Lease::new(self.ttl_ms, sent, Duration::ZERO, false, true, primitive);
        if self.options.auto_renew {
            worker::renew(
                Job {
                    topology: self.topology.clone(),
                    key: self.keys.holders.clone(),
                    what: Renewed::Permit {
                        keys: self.keys.clone(),
                        count,
                    },
                    token: token.clone(),
                    max_hold: self.options.max_hold,
                    first_in: None,
                },
                lease.clone(),
            );
        }
        table::insert(Entry {
            id: 0,
            kind: Kind::Counted {
                keys: self.keys.clone(),
                count,
            },
            token,
            nonce: None,
            count: 1,
            auto_release: self.options.auto_release,
            topology: self.topology.clone(),
            lease,
            renewed: self.options.auto_renew,
            restored: false,
            reentrant: false,
            context: host::context(),
            replicas: (0, Duration::ZERO),
        })
    }

    /// Waits in the queue with `steps` (the lease engine's loop);
    /// `unknown`: the first step replays (a try before it may have taken a
    /// hold).
    fn wait(&self, steps: &dyn Steps, wait: Duration, unknown: bool) -> Result<Waited> {
        let deadline = Deadline::new(wait, self.options.retry_delay);
        queue::wait_in_queue(
            &queue::Wait {
                topology: self.topology,
                ttl_ms: self.ttl_ms,
                deadline: &deadline,
                unknown,
                first_wait: None,
            },
            steps,
        )
    }

    /// Whether a hold won by a plain try sent at `sent` counts: only if its
    /// lease is not over when the reply is read (nor, for one that was
    /// ours already, what it had left).
    fn in_time(&self, sent: Instant, left_ms: Option<u64>) -> bool {
        let lease = left_ms.map_or(self.ttl_ms, |left| left.min(self.ttl_ms));
        sent.elapsed() < Duration::from_millis(lease)
    }

    /// Gives back a hold a plain try won too late, with no wait left to
    /// settle it; unanswered, the give-back is resent later ([`pending`])
    /// like any release without a reply.
    fn give_back_late(&self, token: &[u8], count: u32, steps: &dyn Steps) {
        if let Err(err) = self.on_master(&|_| steps.give_back(false)) {
            self.give_back_later_after(&err, token, count);
        }
    }

    /// After `err`: when it is a connection error (the request may have
    /// run, or its reply was lost), what `token` may hold is given back
    /// later ([`pending`]).
    fn give_back_later_after(&self, err: &LockError, token: &[u8], count: u32) {
        if err.is_connection_error() {
            give_back_later(self.topology, self.keys, token, count, self.ttl_ms);
        }
    }

    /// Before this process's first acquire of such holds on the server:
    /// makes sure the server runs scripts and (Redis 7.0+) lets this user
    /// run every command their scripts run, so that a user who could take
    /// a hold but not give it back is refused before any is taken (as a
    /// lock's first acquire is).
    fn check_scripts(&self) -> Result<()> {
        let check = Permitted::Counted(self.keys);
        match self.topology.check_scripts(&self.keys.holders, check) {
            Checked::Ran(votes) => votes.decided().map(drop),
            Checked::Passed | Checked::Scriptless(_) => Ok(()),
        }
    }
}

/// A permit's (or a read hold's) steps in the semaphore's (the lock's)
/// queue.
struct Holder<'a> {
    counter: &'a Counter<'a>,
    token: &'a [u8],
    count: u32,
    alive_ms: u64,
    arrival: u64,
    /// Whether it barges (from its acquire's start); its last step did
    /// (a plain try that left it out of the queue).
    barging: Barging,
    /// A step was built already: the token may be queued or hold.
    stepped: Cell<bool>,
}

impl Holder<'_> {
    /// A read hold's plain try on the free lock key
    /// ([`readers::lone_try`]); a replay, and a permit's try, is the
    /// script's ([`Steps::step`]).
    fn lone_try(&self, attempt: Attempt) -> Call<Step> {
        match (&self.counter.keys.counted, attempt) {
            (Counted::Readers(lock), Attempt::First) => {
                readers::lone_try(lock, self.token, self.counter.ttl_ms)
            }
            _ => self.step(Mode::Try, attempt == Attempt::Replay),
        }
    }

    /// One call of the acquire script; `fresh`: a waiter's step that
    /// cannot be queued yet (see [`calls::acquire`]).
    fn script_step(&self, mode: Mode, replay: bool, fresh: bool) -> Call<Step> {
        let c = self.counter;
        let ask = calls::Ask {
            permits: c.permits,
            count: self.count,
            ttl_ms: c.ttl_ms,
        };
        calls::acquire(
            c.keys,
            self.token,
            ask,
            mode,
            self.alive_ms,
            self.arrival,
            replay,
            fresh,
        )
    }
}

impl Steps for Holder<'_> {
    fn key(&self) -> &[u8] {
        &self.counter.keys.holders
    }

    fn wake_list(&self) -> Vec<u8> {
        self.counter.keys.wake(self.token)
    }

    fn step(&self, mode: Mode, replay: bool) -> Call<Step> {
        // A waiter that barges is not queued at all: its steps are plain
        // tries (a free hold goes to whoever asks first, itself included,
        // unless a starving waiter is queued), so no release hands it a
        // hold or wakes it. Once it starves it joins the queue at its
        // arrival, behind the starving waiters that arrived before it.
        // (Its last step, at the wait's end, is a try too: it has no
        // place to give up.)
        let barging = mode != Mode::Try && self.starving_in().is_some();
        self.barging.mark(barging);
        if barging {
            return self.script_step(Mode::Try, replay, false);
        }
        // A replay finds its first try's entry (a plain try looks for it
        // only then).
        let fresh = !self.stepped.replace(true) && !replay;
        self.script_step(mode, replay, fresh && mode == Mode::Wait)
    }

    fn top_up(&self) -> Call<bool> {
        calls::extend(
            self.counter.keys,
            self.token,
            self.counter.ttl_ms,
            self.count,
        )
    }

    fn give_back(&self, _answered: bool) -> Call<bool> {
        calls::release(self.counter.keys, self.token, true, self.count)
    }
}

impl Policy for Holder<'_> {
    fn clock_judged(&self) -> bool {
        true
    }

    fn starving_in(&self) -> Option<Duration> {
        self.barging.starving_in()
    }

    fn marked_barging(&self) -> bool {
        self.barging.marked()
    }
}

/// A read hold's steps towards the lock's write hold, queued as a writer.
struct Promotion<'a> {
    counter: &'a Counter<'a>,
    lock: &'a LockKeys,
    token: &'a [u8],
    alive_ms: u64,
    arrival: u64,
}

impl Steps for Promotion<'_> {
    fn key(&self) -> &[u8] {
        &self.counter.keys.holders
    }

    fn wake_list(&self) -> Vec<u8> {
        self.counter.keys.wake(self.token)
    }

    fn step(&self, mode: Mode, _replay: bool) -> Call<Step> {
        readers::promote(
            self.counter.keys,
            self.lock,
            self.token,
            self.counter.ttl_ms,
            mode,
            self.alive_ms,
            self.arrival,
        )
    }

    fn top_up(&self) -> Call<bool> {
        lock_calls::refresh(&self.lock.lock, None, self.token, None, self.counter.ttl_ms)
    }

    fn give_back(&self, _answered: bool) -> Call<bool> {
        // Leaves the queue, and frees the lock if it was ours to write.
        lock_calls::abandon(self.lock, self.token, None, Successor::HandOver)
    }
}

impl Policy for Promotion<'_> {
    fn clock_judged(&self) -> bool {
        true
    }
}
