//! Which process this is, and what a `fork()` must not inherit.
//!
//! [`generation`] is a number that a fork handler bumps in the child: code
//! that keeps process-wide state (the connection pool, the hold table, the
//! renewal thread's jobs) compares it with the generation that created the
//! state, without a `getpid()` system call on every operation.
//!
//! The handlers also make `fork()` safe while the renewal thread runs: the
//! prepare handler takes the locks that thread uses, so the child never
//! inherits one of them locked by a thread that does not exist there.

use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::{pool, renewal};

static GENERATION: AtomicU64 = AtomicU64::new(0);
static REGISTER: Once = Once::new();

/// The current process generation (changes in a forked child).
pub fn generation() -> u64 {
    REGISTER.call_once(|| {
        // SAFETY: registering plain extern "C" functions; glibc unregisters
        // them if this library is unloaded.
        unsafe {
            libc::pthread_atfork(Some(prepare), Some(parent), Some(child));
        }
    });
    GENERATION.load(Ordering::Acquire)
}

extern "C" fn prepare() {
    renewal::lock_for_fork();
    pool::lock_for_fork();
}

extern "C" fn parent() {
    pool::unlock_after_fork();
    renewal::unlock_after_fork();
}

extern "C" fn child() {
    GENERATION.fetch_add(1, Ordering::AcqRel);
    pool::unlock_after_fork();
    renewal::unlock_after_fork();
}
