//! Signals, as the core sees them.
//!
//! - PHP's thread: every read resumes after a signal ([`crate::net::wire`]); a
//!   blocking wait also asks the host ([`crate::host::wait_should_end`])
//!   whether PHP wants the wait to end.
//! - The core's own threads (lease renewal, connects) block every signal, so
//!   that signals meant for PHP are always delivered to PHP's thread and
//!   never interrupt them.

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
