//! Process-wide state that a `fork()` must not share.
//!
//! [`PerProcess`] holds one value per process: a `pthread_atfork` child
//! handler forgets the parent's value, so the child's first use builds a
//! fresh one. The parent's copy is abandoned in the child, never touched:
//! a mutex in it may be held by a thread (the renewal thread) that does not
//! exist in the child, and its sockets belong to the parent. The handler
//! only clears pointers, which is safe in a freshly forked child.

use std::sync::Once;
use std::sync::atomic::{AtomicPtr, Ordering};

/// A value created on first use, replaced by a fresh one in a forked child.
pub struct PerProcess<T> {
    current: AtomicPtr<T>,
    init: fn() -> T,
}

impl<T> PerProcess<T> {
    /// A value built by `init` on first use in each process.
    pub const fn new(init: fn() -> T) -> Self {
        Self {
            current: AtomicPtr::new(std::ptr::null_mut()),
            init,
        }
    }

    /// This process's value.
    pub fn get(&self) -> &T {
        register_fork_handler();
        let current = self.current.load(Ordering::Acquire);
        if !current.is_null() {
            // SAFETY: set below from Box::into_raw and never freed (values of
            // earlier processes are leaked, not dropped).
            return unsafe { &*current };
        }
        let fresh = Box::into_raw(Box::new((self.init)()));
        match self.current.compare_exchange(
            std::ptr::null_mut(),
            fresh,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            // SAFETY: as above.
            Ok(_) => unsafe { &*fresh },
            Err(existing) => {
                // SAFETY: `fresh` was never shared.
                drop(unsafe { Box::from_raw(fresh) });
                // SAFETY: as above.
                unsafe { &*existing }
            }
        }
    }

    /// Forgets this process's value (the fork child handler).
    fn forget(&self) {
        self.current.store(std::ptr::null_mut(), Ordering::Release);
    }
}

fn register_fork_handler() {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        // SAFETY: registering a plain extern "C" function; glibc unregisters
        // it if this library is unloaded.
        unsafe {
            libc::pthread_atfork(None, None, Some(child));
        }
    });
}

extern "C" fn child() {
    crate::pool::POOL.forget();
    crate::holds::TABLE.forget();
    crate::renewal::SHARED.forget();
}
