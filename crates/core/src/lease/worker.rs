//! The lease thread: one background thread per process that renews leases
//! ([`super::renewal`], option `auto_renew`) and finishes pending work
//! ([`super::pending`]: releases and clean-ups that Redis did not answer).
//! It sleeps until the next hold or piece of work is due, is woken when
//! one is added or moved earlier ([`wake`]), and stops at module shutdown.
//! It never touches PHP, and blocks every signal. A forked child has no
//! thread ([`PerProcess`]); it starts its own on first use.

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

/// The thread of one process.
struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

/// This process's thread; a forked child gets a fresh one.
static SHARED: PerProcess<Shared> = PerProcess::new(|| Shared {
    state: Mutex::new(State::default()),
    wake: Condvar::new(),
});

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Starts renewing `lease`, a hold just taken (due at a third of its
/// lease, or after the job's `first_in`). Starts the thread on first use
/// in this process.
pub(crate) fn renew(job: Job, lease: Arc<Lease>) {
    renewal::push(job, lease);
    start_and_wake();
}

/// Hands pending work to the thread ([`super::pending`]).
pub(crate) fn add_pending(work: Arc<Pending>) {
    pending::push(work);
    start_and_wake();
}

fn start_and_wake() {
    // Initialised here, on PHP's thread, so a fork can never catch the
    // thread half-way through initialising them.
    scripts::prepare();
    let shared = SHARED.get();
    let mut state = shared.lock();
    if state.thread.is_none() && !state.shutdown {
        state.thread = std::thread::Builder::new()
            .name("redislock-renew".into())
            .spawn(move || {
                crate::process::signals::block_all_in_this_thread();
                run(shared)
            })
            .ok();
    }
    drop(state);
    shared.wake.notify_all();
}

/// Wakes the thread to look at its schedule again (a `refresh()` moved a
/// hold's next renewal).
pub(crate) fn wake() {
    if let Some(shared) = SHARED.built() {
        // Taken so a thread between its look and its sleep gets the
        // notification after it sleeps.
        drop(shared.lock());
        shared.wake.notify_all();
    }
}

/// Stops the thread and waits for it (module shutdown). Builds nothing in a
/// process that never renewed (a php-fpm master).
pub fn shutdown() {
    let Some(shared) = SHARED.built() else {
        return;
    };
    let thread = {
        let mut state = shared.lock();
        state.shutdown = true;
        state.thread.take()
    };
    renewal::clear();
    pending::clear();
    shared.wake.notify_all();
    if let Some(thread) = thread {
        let _ = thread.join();
    }
}

/// The thread: sleep until a hold or piece of work is due, then renew what
/// is due and send what is pending.
fn run(shared: &'static Shared) {
    loop {
        let (renewals, work) = {
            let mut state = shared.lock();
            loop {
                if state.shutdown {
                    return;
                }
                let now = Instant::now();
                let renewals = renewal::poll(now);
                let (work, next_work) = pending::poll(now);
                if !renewals.due.is_empty() || !work.is_empty() {
                    break (renewals, work);
                }
                let sleep = [renewals.next, next_work]
                    .into_iter()
                    .flatten()
                    .min()
                    .map_or(Duration::from_secs(60), |due| {
                        due.saturating_duration_since(now)
                    });
                state = shared
                    .wake
                    .wait_timeout(state, sleep)
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .0;
            }
        };
        if !renewals.due.is_empty() {
            renewal::renew_batch(renewals.due, renewals.until);
        }
        if !work.is_empty() {
            pending::resend(work);
        }
    }
}
