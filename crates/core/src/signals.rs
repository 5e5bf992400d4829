//! Signals, as the core sees them.
//!
//! - PHP's thread: every read resumes after a signal ([`crate::wire`]); a
//!   blocking wait also asks the hook that the binding installs here
//!   whether PHP wants the wait to end. The binding's hook runs PHP's
//!   pending signal handlers (as the engine would at the next opcode) and
//!   answers true when one threw or called `exit()`, or when the execution
//!   time limit was hit.
//! - The core's own threads (lease renewal) block every signal, so that
//!   signals meant for PHP are always delivered to PHP's thread and never
//!   interrupt a renewal.

use std::sync::OnceLock;

/// The binding's answer to "should this blocking wait end now?".
static WAIT_HOOK: OnceLock<fn() -> bool> = OnceLock::new();

/// Installs the hook asked during blocking waits (module startup).
pub fn set_wait_hook(hook: fn() -> bool) {
    let _ = WAIT_HOOK.set(hook);
}

/// Asks the binding whether the blocking wait in progress must end. Called
/// on PHP's thread only, after a signal or every 100 ms of waiting. False
/// when no hook is installed (pure-Rust callers).
pub fn wait_should_end() -> bool {
    WAIT_HOOK.get().is_some_and(|hook| hook())
}

/// Blocks every blockable signal in the calling thread (called first thing
/// in each thread the core starts).
pub fn block_all_in_this_thread() {
    // SAFETY: plain libc calls on a stack-allocated signal set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut set);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}
