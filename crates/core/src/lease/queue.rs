//! The one wait loop of every blocked acquire ([`wait`]). A waiter says
//! how to send its requests ([`Waiter`]): where one server decides (single
//! server, Sentinel, Cluster) the lock's writers, its readers and
//! promotions, a semaphore's permits and the lock on a server without
//! scripts (whose steps only try, with no queue: `lock/scriptless.rs`)
//! give their steps as calls ([`Steps`], run on that server by
//! [`wait_in_queue`]); a Redlock quorum sends a try to every master and
//! waits in one master's wake-up queue (`lock/quorum.rs`: steps 1 and 4
//! below do not apply, nothing is handed over). The loop is the same for
//! all of them:
//!
//! 1. a first step joins the queue (FIFO, by arrival) with a mark that
//!    lives `2 x retry_delay + 0.5 s` after each step; a writer that
//!    starves from the start sends it with its first wait and the step
//!    behind it, in one request ([`Wait::first_wait`]; its block lasts
//!    100 ms at most, as the holder's lease is not known yet);
//! 2. then, each time, one request: `BLPOP` on the waiter's own wake-up
//!    list, bounded by the wait's end, `retry_delay` and what the step said
//!    may change (the holder's lease), with the next step behind it. Redis
//!    runs that step as soon as the `BLPOP` ends, woken or not, even while
//!    this process is paused: a hold that a release handed over is claimed
//!    for its whole ttl at once (in the same round trip as the wake-up),
//!    so a handed hold is no cheaper to lose than one taken free; a waiter
//!    that is gone (its connection closed) never claims, and what it was
//!    handed ends with its mark. A waiter that barges (option
//!    `starve_after`, [`Steps::starving_in`]) is never woken: it sleeps in
//!    this process instead and sends its step after the sleep;
//! 3. a win counts only if its lease, counted from the send of the request
//!    that won it, is not over when the reply is read; a win whose request
//!    went out long before (the wait took a good part of the lease) is
//!    extended once more, and counts only if that extension's reply is
//!    read within the lease it set, counted from its send, so the hold
//!    starts with about its whole ttl in this process's belief too; a win
//!    that came too late (or whose extension came back late) is given
//!    back and the wait goes on, and when that give-back gets no answer
//!    the wait ends with its failure (it may still run, late, and would
//!    release what the same token wins next); an extension that gets no
//!    answer at all ends the wait with that error, its win given back;
//! 4. a connection that drops (`CLIENT KILL`, a restart, a failover)
//!    costs nothing but a pause: the next step is sent again on a new
//!    connection as a replay (every step is safe to repeat), and the
//!    waiter keeps its place (its arrival), until the wait ends; a server
//!    that stalls (a read timeout) ends the wait with that error;
//! 5. at the wait's end the step behind the last wait gives up (it still
//!    claims a hold handed over meanwhile; a wake-up that ended that wait
//!    early lets the wait go on, its next step joining again at its
//!    place); when PHP ends the wait (a
//!    [`crate::topology::Woken::Ended`], or its time limit through the
//!    [`Deadline`]) or the server refuses a step, the waiter leaves the
//!    queue and gives back whatever it may have been handed.

use std::cell::Cell;
use std::time::{Duration, Instant};

use super::deadline::{Deadline, EXPIRY_MARGIN, block_time};
use crate::error::{LockError, Result};
use crate::protocol::call::{Attempt, Call};
use crate::protocol::lock_calls::{Fence, blpop};
use crate::protocol::step::{Mode, Step};
use crate::stats;
use crate::topology::{Role, Topology, Woken};

/// One primitive's steps on the server that decides.
pub(crate) trait Steps: Policy {
    /// The key that routes every call of this wait.
    fn key(&self) -> &[u8];
    /// The waiter's wake-up list.
    fn wake_list(&self) -> Vec<u8>;
    /// One step; `replay` when an earlier request's outcome is unknown
    /// (its connection failed): a hold that holds our token is ours then.
    fn step(&self, mode: Mode, replay: bool) -> Call<Step>;
    /// Extends a hold just won to its whole lease; true when it was ours.
    fn top_up(&self) -> Call<bool>;
    /// Leaves the queue and gives back whatever the waiter may hold.
    /// `answered`: every request of the wait was answered, so only a hold
    /// that a release handed over meanwhile can be ours.
    fn give_back(&self, answered: bool) -> Call<bool>;
}

/// What the loop asks of a waiter besides its requests: how it judges
/// holds, whether it barges, and what a win after queuing counts as. Each
/// waiter has one ([`Waiter::policy`]); a primitive's [`Steps`] are theirs.
pub(crate) trait Policy {
    /// True when the steps judge holds by the caller's clock reading in
    /// the request (permits, read holds): a step sent behind a wait runs
    /// with a reading as old as the wait, so when the wait lasted until a
    /// hold may have ended, a fresh step follows at once.
    fn clock_judged(&self) -> bool {
        false
    }
    /// How long until the waiter starves (asks to be handed the hold in
    /// arrival order); `None` once it does (always, for those that never
    /// barge). While it does not, nobody wakes it: it sleeps in this
    /// process until it starves (or the holder's lease ends) and steps
    /// then, so a free hold goes to whoever asks first meanwhile; the
    /// step after the sleep says it starves.
    fn starving_in(&self) -> Option<Duration> {
        None
    }
    /// Whether its last step said it barges (a release neither hands it
    /// the hold nor wakes it): once it starves, it must step to say so
    /// before it blocks, or no release would end the block.
    fn marked_barging(&self) -> bool {
        false
    }
    /// Whether a win after queuing was handed over by a release (counted
    /// in the `handovers` statistics): not for a waiter with no queue.
    fn hands_over(&self) -> bool {
        true
    }
}

/// A waiter's barging policy (option `starve_after`), the same for every
/// primitive: it barges until it has waited `starve_after` from its start,
/// then it starves. Kept with the waiter ([`Policy::starving_in`],
/// [`Policy::marked_barging`]).
pub(crate) struct Barging {
    starve_after: Duration,
    began: Instant,
    /// The last step built said it barges.
    last: Cell<bool>,
}

impl Barging {
    /// The policy of a wait that starts now.
    pub(crate) fn new(starve_after: Duration) -> Self {
        Self {
            starve_after,
            began: Instant::now(),
            last: Cell::new(false),
        }
    }

    /// How long until the waiter starves; `None` once it does (at once
    /// with `starve_after` 0).
    pub(crate) fn starving_in(&self) -> Option<Duration> {
        self.starve_after
            .checked_sub(self.began.elapsed())
            .filter(|left| !left.is_zero())
    }

    /// Notes whether the step being built barges.
    pub(crate) fn mark(&self, barging: bool) {
        self.last.set(barging);
    }

    /// Whether the last step built said it barges.
    pub(crate) fn marked(&self) -> bool {
        self.last.get()
    }
}

/// What the wait's loop asks of a waiter, each request run by the waiter
/// on its servers: the primitives where one server decides give their
/// [`Steps`] as calls ([`wait_in_queue`] runs them on that server); a
/// Redlock quorum (`lock/quorum.rs`) sends its own requests to every
/// master. The loop owns the rest: the deadline, the blocks, the policy,
/// late and unanswered wins, replays through dropped connections.
pub(crate) trait Waiter {
    /// One step alone; `replay` when an earlier request's outcome is
    /// unknown.
    fn send_step(&self, mode: Mode, replay: bool) -> Result<Step>;
    /// A wait for a wake-up of up to `block`, then the next step; how the
    /// wait ended ([`Woken`]).
    fn send_wait(&self, block: Duration, mode: Mode, replay: bool) -> Result<Woken<Step>>;
    /// See [`Steps::top_up`].
    fn send_top_up(&self) -> Result<bool>;
    /// See [`Steps::give_back`].
    fn send_give_back(&self, answered: bool) -> Result<bool>;
    /// When the request whose win this process counts from was sent, given
    /// the send of the loop's last request (`sent`): that send itself for
    /// a step sent behind a wait (it ran at some time after).
    fn won_at(&self, sent: Instant) -> Instant {
        sent
    }
    /// Its policy.
    fn policy(&self) -> &dyn Policy;
}

/// A [`Steps`]'s calls run on the server that decides.
struct OnServer<'a> {
    topology: &'a Topology,
    steps: &'a dyn Steps,
    /// The waiter's wake-up list.
    wake: Vec<u8>,
}

impl OnServer<'_> {
    fn run<T>(&self, build: &dyn Fn(Attempt) -> Call<T>) -> Result<T> {
        self.topology
            .run_on(0, Role::Command, self.steps.key(), build)
    }
}

impl Waiter for OnServer<'_> {
    fn send_step(&self, mode: Mode, replay: bool) -> Result<Step> {
        self.run(&|attempt| self.steps.step(mode, replay || attempt == Attempt::Replay))
    }

    fn send_wait(&self, block: Duration, mode: Mode, replay: bool) -> Result<Woken<Step>> {
        self.topology.wait_on(0, self.steps.key(), &|attempt| {
            let step = self.steps.step(mode, replay || attempt == Attempt::Replay);
            Call::after_wake(blpop(&self.wake, block), block, step)
        })
    }

    fn send_top_up(&self) -> Result<bool> {
        self.run(&|_| self.steps.top_up())
    }

    fn send_give_back(&self, answered: bool) -> Result<bool> {
        self.run(&|_| self.steps.give_back(answered))
    }

    fn policy(&self) -> &dyn Policy {
        self.steps
    }
}

/// How a wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Waited {
    /// The hold is ours: its fencing token, the send of the request whose
    /// lease this process counts from, and whether the waiter had joined
    /// the queue (false: its first step found the hold free).
    Won {
        fence: Fence,
        sent: Instant,
        queued: bool,
    },
    /// The wait ran out (or `stop` said so).
    Out,
    /// See [`Step::Mismatch`]; the waiter left the queue.
    Mismatch(i64),
    /// See [`Step::Gone`].
    Gone,
}

/// The longest first block, sent with the first step before the holder's
/// remaining lease is known: a holder that keeps the lock longer is asked
/// about then (the step behind the block answers its lease, and later
/// blocks end with it), so a lease that ends without a release is noticed
/// within this much, whatever `retry_delay` is.
const FIRST_BLOCK: Duration = Duration::from_millis(100);

/// First pause after a failed connection; doubled up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(10);
const MAX_PAUSE: Duration = Duration::from_millis(200);

/// How long a waiter's queue entry stays live without a step: two
/// `retry_delay`s plus slack. A waiter that is gone is skipped once this
/// has passed since its last step.
pub(crate) fn alive_window(retry_delay: Duration) -> u64 {
    (retry_delay * 2).as_millis() as u64 + 500
}

/// Runs `call` again through dropped connections (the server dropped
/// them: restarted, failed over), pausing 10 ms doubling to 200 ms between
/// tries, until `deadline`: what a wait does before its first step (its
/// checks, its plain try). Once a connection dropped, a server that
/// refuses new ones is passing too ([`LockError::is_passing`]: it is
/// restarting); one that refused from the start is not: a wrong address
/// or a server down fails at once, as a plain try does. Any other error,
/// or one still there at the deadline, is the result; a signal that ends
/// the wait during a pause ends it with [`LockError::Interrupted`] (`call`
/// takes nothing).
pub(crate) fn through_drops<T>(
    deadline: Instant,
    mut call: impl FnMut() -> Result<T>,
) -> Result<T> {
    let mut pause = FIRST_PAUSE;
    let mut dropped = false;
    loop {
        match call() {
            Err(e)
                if (e.is_retryable() || (dropped && e.is_passing()))
                    && Instant::now() + pause < deadline =>
            {
                dropped = true;
                // Nothing is taken yet: a signal that ends the wait ends
                // it here.
                if !sleep_for(pause) {
                    return Err(LockError::Interrupted);
                }
                pause = (pause * 2).min(MAX_PAUSE);
            }
            other => return other,
        }
    }
}

/// The wait: `ttl_ms` is the lease asked for; `deadline` says when the
/// wait ends (PHP's time limit is asked between requests) and bounds
/// every block.
pub(crate) struct Wait<'a> {
    pub topology: &'a Topology,
    pub ttl_ms: u64,
    pub deadline: &'a Deadline,
    /// The caller's try got no answer (its connection dropped): its
    /// outcome is unknown, so the first step is sent as a replay.
    pub unknown: bool,
    /// The first step and the first wait in one request, for a waiter
    /// that expects to queue (the lock was just found held): given a block
    /// time and the mode of the step behind the wait, sends it; it answers
    /// how the wait ended, with that step's [`Step`] and whether the first
    /// step queued ([`crate::protocol::lock_calls::first_wait`]). `None`:
    /// the first step goes alone.
    pub first_wait: Option<FirstWait<'a>>,
}

/// See [`Wait::first_wait`].
pub(crate) type FirstWait<'a> = &'a dyn Fn(Duration, Mode) -> Result<Woken<(Step, bool)>>;

/// Waits in the queue of the server that decides, with `steps` (see the
/// module documentation).
pub(crate) fn wait_in_queue(w: &Wait<'_>, steps: &dyn Steps) -> Result<Waited> {
    let on_server = OnServer {
        topology: w.topology,
        steps,
        wake: steps.wake_list(),
    };
    wait(w, &on_server)
}

/// The wait's loop (see the module documentation), for any waiter.
pub(crate) fn wait(w: &Wait<'_>, waiter: &dyn Waiter) -> Result<Waited> {
    let d = w.deadline;
    // The last step's hint while queued; None before the first answered
    // step (and after a request whose outcome is unknown).
    let mut queued: Option<Option<u64>> = None;
    let mut first = true;
    let mut announced = false;
    let mut unknown = w.unknown;
    let mut pause = FIRST_PAUSE;
    loop {
        let ending = if first { d.passed() } else { d.over() };
        // The send of the request whose win this process would count
        // from: the step's (behind a wait, the wait's).
        let mut sent = Instant::now();
        let (mode, result, stale) = match queued {
            Some(hint_ms) if !ending => {
                // One reading of the time left decides both the block and
                // whether the step behind it gives up (block >= left).
                let left = d.left();
                let hint = hint_ms.map_or(-1, |ms| i64::try_from(ms).unwrap_or(i64::MAX));
                let mut barging = waiter.policy().starving_in();
                let mut block = block_time(left, hint, d.retry_delay());
                if let Some(starving_in) = barging {
                    block = block.min(starving_in.max(Duration::from_millis(1)));
                } else if waiter.policy().marked_barging() {
                    // Starving since its last step, which said it barges:
                    // it steps at once to say it starves.
                    barging = Some(Duration::ZERO);
                    block = Duration::ZERO;
                }
                // Judged with the reading of before the wait, which lasts
                // until a hold may have ended.
                let stale = waiter.policy().clock_judged()
                    && hint_ms.is_some_and(|ms| {
                        Duration::from_millis(ms) + EXPIRY_MARGIN <= d.retry_delay().min(left)
                    });
                // The step behind the last wait gives up with it.
                let mode = if block >= left {
                    Mode::GiveUp
                } else {
                    Mode::Wait
                };
                let result = match barging {
                    // Not starving: nobody wakes it (a release frees the
                    // lock for whoever asks first), so it sleeps here
                    // until it starves or its block ends, then waiter.
                    Some(_) => {
                        if !sleep_for(block) {
                            let _ = waiter.send_give_back(false);
                            return Err(LockError::Interrupted);
                        }
                        // A win counts from this send, not from before
                        // the sleep.
                        sent = Instant::now();
                        waiter.send_step(mode, unknown).map(Woken::Answered)
                    }
                    None => waiter.send_wait(block, mode, unknown),
                };
                (mode, result, stale)
            }
            // The first step of a waiter that starves from the start goes
            // with its first wait (it expects to queue): one round trip.
            _ if let Some(first_wait) = w.first_wait.filter(|_| first && !ending && !unknown) => {
                let left = d.left();
                let block = block_time(left, -1, d.retry_delay().min(FIRST_BLOCK));
                let mode = if block >= left {
                    Mode::GiveUp
                } else {
                    Mode::Wait
                };
                let result = first_wait(block, mode).map(|woken| {
                    woken.map(|(step, queued)| {
                        if queued && !std::mem::replace(&mut announced, true) {
                            stats::contended();
                        }
                        step
                    })
                });
                (mode, result, false)
            }
            _ => {
                let mode = if ending { Mode::GiveUp } else { Mode::Wait };
                let result = waiter.send_step(mode, unknown);
                (mode, result.map(Woken::Answered), false)
            }
        };
        first = false;
        let result = match result {
            Err(LockError::Interrupted) => Ok(Woken::Ended(None)),
            other => other,
        };
        let step = match result {
            Ok(Woken::Ended(outcome)) => {
                // PHP ended the wait: give back exactly what the step
                // behind it holds when it answered; when it did not, it
                // may have run (claimed a hold handed over) or not.
                let answered = outcome.is_some_and(|step| !step.is_won());
                let _ = waiter.send_give_back(answered);
                return Err(LockError::Interrupted);
            }
            Ok(Woken::Answered(step)) => {
                unknown = false;
                pause = FIRST_PAUSE;
                step
            }
            Err(error) if error.is_passing() => {
                // The connection dropped: the request may have run or not.
                // The next step replays, on a new connection, keeping the
                // waiter's place (its arrival).
                unknown = true;
                queued = None;
                let now = Instant::now();
                if ending || now + pause >= d.end() {
                    let _ = waiter.send_give_back(false);
                    return Err(error);
                }
                if !sleep_for(pause) {
                    // A signal ended the wait while the server was away:
                    // given back, it ends as PHP asked; when the give-back
                    // got no answer either, with the failure, which the
                    // caller leaves pending (as at the wait's end).
                    return match waiter.send_give_back(false) {
                        Ok(_) => Err(LockError::Interrupted),
                        Err(_) => Err(error),
                    };
                }
                pause = (pause * 2).min(MAX_PAUSE);
                continue;
            }
            Err(error) => {
                let _ = waiter.send_give_back(!unknown);
                return Err(error);
            }
        };
        match step {
            Step::Won { fence, left_ms } => {
                let sent = waiter.won_at(sent);
                let lease_ms = left_ms.map_or(w.ttl_ms, |left| left.min(w.ttl_ms));
                let topped = match w.topology.validity(lease_ms, sent.elapsed()) {
                    Some(_) => top_up(w, waiter, sent),
                    None => TopUp::Late,
                };
                match topped {
                    TopUp::InTime(sent) => {
                        if announced && waiter.policy().hands_over() {
                            stats::handed();
                        }
                        return Ok(Waited::Won {
                            fence,
                            sent,
                            queued: announced,
                        });
                    }
                    TopUp::Late => {}
                    TopUp::Unanswered(error) => {
                        // The top-up may still run, late (held up in
                        // flight): a permit's or a read hold's judges by
                        // the clock reading it carries and would cut a
                        // later hold of the same token short. The win is
                        // given back and the wait ends with the error
                        // (what the give-back leaves undone, the caller
                        // leaves pending).
                        let _ = waiter.send_give_back(false);
                        return Err(error);
                    }
                }
                // Won, but too late to count on: the lease, counted from
                // the send of the request that won it (or of its top-up),
                // was over when the reply was read, or the top-up found
                // the hold gone. It may be someone else's by now. Give it
                // back. A give-back without an answer may still run (held
                // up in flight) after this wait wins again with the same
                // token, and release that win: the wait ends with its
                // failure instead (the caller leaves the clean-up
                // pending).
                waiter.send_give_back(false)?;
                // The step behind the last block gave up with it; a
                // hand-over may have ended that block early, and the wait
                // goes on while it has time left (its next step joins
                // again at its arrival, its place).
                if mode == Mode::GiveUp && d.passed() {
                    return Ok(Waited::Out);
                }
                queued = None;
            }
            // The step behind the last block gave up; when a wake-up ended
            // that block before the wait's end (a release that only woke
            // it, a push left from an earlier wait), the wait goes on: its
            // next step joins again at its arrival, its place.
            Step::Waiting { .. } | Step::GaveUp if mode == Mode::GiveUp => {
                if d.over() {
                    return Ok(Waited::Out);
                }
                queued = None;
            }
            Step::Waiting { hint_ms } => {
                if !std::mem::replace(&mut announced, true) {
                    stats::contended();
                }
                // A hint judged by the clock reading in the request counts
                // from its send. After a wait until a hold may have ended,
                // the step behind it judged with the reading of before: a
                // fresh one now.
                let hint_ms = match waiter.policy().clock_judged() {
                    true => hint_ms.map(|ms| ms.saturating_sub(sent.elapsed().as_millis() as u64)),
                    false => hint_ms,
                };
                queued = Some(hint_ms).filter(|_| !stale);
            }
            // Departed waiters in the way, dropped: step again at once.
            Step::Again => queued = None,
            Step::GaveUp => return Ok(Waited::Out),
            Step::Mismatch(n) => {
                let _ = waiter.send_give_back(true);
                return Ok(Waited::Mismatch(n));
            }
            Step::Gone => return Ok(Waited::Gone),
        }
    }
}

/// Longest sleep between two looks at whether PHP ends the wait.
const SLEEP_SLICE: Duration = Duration::from_millis(5);

/// A sleep of `block` in this process, with no request, that a signal
/// ending the wait ends ([`host::wait_should_end`](crate::host::wait_should_end),
/// asked every 5 ms): a barging waiter's (nobody wakes a waiter that
/// barges; a `BLPOP` would not do either: a blocked command's timeout ends
/// on the server's next timer tick, up to 100 ms late on an idle Redis),
/// and a Redlock waiter's that no master queued. False when PHP ended the
/// wait.
pub(crate) fn sleep_for(block: Duration) -> bool {
    let end = Instant::now() + block;
    loop {
        if crate::host::wait_should_end() {
            return false;
        }
        let now = Instant::now();
        if now >= end {
            return true;
        }
        std::thread::sleep((end - now).min(SLEEP_SLICE));
    }
}

/// What the top-up of a win found.
enum TopUp {
    /// The hold is ours, its lease counted from this send.
    InTime(Instant),
    /// The hold was not ours any more, or the reply came after the lease
    /// it set was over: a late win.
    Late,
    /// No answer (a timeout, a dropped connection): it may still run.
    Unanswered(LockError),
}

/// A hold won by a request sent at `sent`: when that was long ago (the
/// wait behind which the step ran took more than a quarter of the lease),
/// the lease is extended once more, and counted from that extension's
/// send. The win counts only on an answer read within the lease the
/// extension set: a late reply, or none, never stands for one (the lease
/// counted from the win's own send is a good part over, and the hold
/// would be cheaper to lose than another of the same ttl).
fn top_up(w: &Wait<'_>, waiter: &dyn Waiter, sent: Instant) -> TopUp {
    if sent.elapsed() <= Duration::from_millis(w.ttl_ms / 4) {
        return TopUp::InTime(sent);
    }
    let again = Instant::now();
    match waiter.send_top_up() {
        Ok(true) if w.topology.validity(w.ttl_ms, again.elapsed()).is_some() => {
            TopUp::InTime(again)
        }
        Ok(_) => TopUp::Late,
        Err(error) => TopUp::Unanswered(error),
    }
}
