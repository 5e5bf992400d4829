//! Process-wide state that a `fork()` must not share.
//!
//! [`PerProcess`] holds one value per process. A `pthread_atfork` child
//! handler bumps the process generation; a value built in an earlier
//! generation is then ignored and the child's first use builds a fresh one.
//! The parent's copy is abandoned in the child, never touched: a mutex in it
//! may be held by a thread (the renewal thread) that does not exist in the
//! child, and its sockets belong to the parent. So every per-process cache
//! (pooled connections, holds, renewal jobs, topology caches) is fork-safe by
//! construction, without a list of them here.

pub mod signals;
pub mod stats;

use std::marker::PhantomData;
use std::sync::Once;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

/// Bumped in every forked child.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// A value of one process generation.
struct Slot<T> {
    generation: u64,
    value: T,
    /// The slot of the parent process this one replaced, never touched
    /// again: kept reachable so that a memory checker sees an abandoned
    /// value, not a leak.
    _parent: *mut Slot<T>,
}

/// A value created on first use, replaced by a fresh one in a forked child.
/// Shared between threads only when `T` is (the marker: an `AtomicPtr`
/// alone would make it `Sync` for any `T`).
pub struct PerProcess<T> {
    current: AtomicPtr<Slot<T>>,
    init: fn() -> T,
    _value: PhantomData<T>,
}

impl<T> PerProcess<T> {
    /// A value built by `init` on first use in each process.
    pub const fn new(init: fn() -> T) -> Self {
        Self {
            current: AtomicPtr::new(std::ptr::null_mut()),
            init,
            _value: PhantomData,
        }
    }

    /// This process's value.
    pub fn get(&self) -> &T {
        register_fork_handler();
        let generation = GENERATION.load(Ordering::Acquire);
        let mut current = self.current.load(Ordering::Acquire);
        loop {
            // SAFETY: slots come from Box::into_raw below and are never freed
            // (slots of earlier processes are abandoned, not dropped).
            if let Some(slot) = unsafe { current.as_ref() }
                && slot.generation == generation
            {
                return &slot.value;
            }
            let fresh = Box::into_raw(Box::new(Slot {
                generation,
                value: (self.init)(),
                _parent: current,
            }));
            match self
                .current
                .compare_exchange(current, fresh, Ordering::AcqRel, Ordering::Acquire)
            {
                // SAFETY: as above; the slot replaced is abandoned (kept
                // behind `_parent`).
                Ok(_) => return unsafe { &(*fresh).value },
                Err(now) => {
                    // SAFETY: `fresh` was never shared.
                    drop(unsafe { Box::from_raw(fresh) });
                    current = now;
                }
            }
        }
    }

    /// This process's value if it was built, without building it.
    pub fn built(&self) -> Option<&T> {
        let generation = GENERATION.load(Ordering::Acquire);
        // SAFETY: as in `get`: slots are never freed.
        let slot = unsafe { self.current.load(Ordering::Acquire).as_ref() }?;
        (slot.generation == generation).then_some(&slot.value)
    }
}

impl<T> std::fmt::Debug for PerProcess<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PerProcess(..)")
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

/// The fork child handler: only an atomic increment, safe in a freshly
/// forked child.
extern "C" fn child() {
    GENERATION.fetch_add(1, Ordering::AcqRel);
}
