//! The lease threads: per process, one that renews leases
//! ([`super::renewal`], option `auto_renew`) and one that finishes pending
//! work ([`super::pending`]: releases and clean-ups that Redis did not
//! answer), each started on first use. Two, so that a resend held up in
//! a stalled connection (up to the read timeout) never holds up a renewal:
//! a renewal's round is bounded by the leases it protects. Each sleeps
//! until its next hold or piece of work is due, is woken when one is added
//! or moved earlier ([`wake`]), and stops at module shutdown. They never
//! touch PHP, and block every signal. A forked child has no threads
//! ([`PerProcess`]); it starts its own on first use.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::lease::belief::Lease;
use crate::lease::pending::{self, Pending};
use crate::lease::renewal::{self, Job};
use crate::process::PerProcess;
use crate::protocol::scripts;

#[derive(Default)]
struct State {
    thread: Option<JoinHandle<()>>,
    shutdown: bool,
}

/// One thread of one process.
struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

/// What a thread does.
#[derive(Clone, Copy)]
enum Duty {
    /// Renews leases.
    Renewal,
    /// Finishes pending work.
    Pending,
}

/// This process's threads; a forked child gets fresh ones.
static RENEWER: PerProcess<Shared> = PerProcess::new(Shared::new);
static FINISHER: PerProcess<Shared> = PerProcess::new(Shared::new);

impl Duty {
    fn shared(self) -> &'static PerProcess<Shared> {
        match self {
            Duty::Renewal => &RENEWER,
            Duty::Pending => &FINISHER,
        }
    }

    fn thread_name(self) -> &'static str {
        match self {
            Duty::Renewal => "redislock-renew",
            Duty::Pending => "redislock-pending",
        }
    }
}

impl Shared {
    fn new() -> Self {
        Self {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Starts renewing `lease`, a hold just taken (due at a third of its
/// lease, or after the job's `first_in`). Starts the renewal thread on
/// first use in this process.
pub(crate) fn renew(job: Job, lease: Arc<Lease>) {
    renewal::push(job, lease);
    start_and_wake(Duty::Renewal);
}

/// Hands pending work to its thread ([`super::pending`]).
pub(crate) fn add_pending(work: Arc<Pending>) {
    pending::push(work);
    start_and_wake(Duty::Pending);
}

fn start_and_wake(duty: Duty) {
    // Initialised here, on PHP's thread, so a fork can never catch the
    // thread half-way through initialising them.
    scripts::prepare();
    let shared = duty.shared().get();
    let mut state = shared.lock();
    if state.thread.is_none() && !state.shutdown {
        state.thread = std::thread::Builder::new()
            .name(duty.thread_name().into())
            .spawn(move || {
                crate::process::signals::block_all_in_this_thread();
                run(shared, duty)
            })
            .ok();
    }
    drop(state);
    shared.wake.notify_all();
}

/// Wakes the renewal thread to look at its schedule again (a `refresh()`
/// moved a hold's next renewal).
pub(crate) fn wake() {
    if let Some(shared) = RENEWER.built() {
        // Taken so a thread between its look and its sleep gets the
        // notification after it sleeps.
        drop(shared.lock());
        shared.wake.notify_all();
    }
}

/// Stops the threads and waits for them (module shutdown). Builds nothing
/// in a process that never renewed (a php-fpm master).
pub fn shutdown() {
    let threads: Vec<_> = [Duty::Renewal, Duty::Pending]
        .into_iter()
        .filter_map(|duty| duty.shared().built())
        .map(|shared| {
            let mut state = shared.lock();
            state.shutdown = true;
            (shared, state.thread.take())
        })
        .collect();
    if threads.is_empty() {
        return;
    }
    renewal::clear();
    pending::clear();
    for (shared, thread) in threads {
        shared.wake.notify_all();
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }
}

/// A thread: sleep until a hold or piece of work of its duty is due, then
/// renew what is due, or send what is pending.
fn run(shared: &'static Shared, duty: Duty) {
    loop {
        let mut state = shared.lock();
        let work = loop {
            if state.shutdown {
                return;
            }
            let now = Instant::now();
            let (work, next) = poll(duty, now);
            if let Some(work) = work {
                break work;
            }
            let sleep = next.map_or(Duration::from_secs(60), |due| {
                due.saturating_duration_since(now)
            });
            state = shared
                .wake
                .wait_timeout(state, sleep)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        };
        drop(state);
        work();
    }
}

/// Work a thread does now, outside its lock.
type Work = Box<dyn FnOnce()>;

/// What `duty` has to do now, if anything, and when it is due next.
fn poll(duty: Duty, now: Instant) -> (Option<Work>, Option<Instant>) {
    match duty {
        Duty::Renewal => {
            let renewals = renewal::poll(now);
            if renewals.due.is_empty() {
                return (None, renewals.next);
            }
            let (due, until) = (renewals.due, renewals.until);
            (
                Some(Box::new(move || renewal::renew_batch(due, until))),
                renewals.next,
            )
        }
        Duty::Pending => {
            let (work, next) = pending::poll(now);
            if work.is_empty() {
                return (None, next);
            }
            (Some(Box::new(move || pending::resend(work))), next)
        }
    }
}
