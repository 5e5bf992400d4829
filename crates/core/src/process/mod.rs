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
//!
//! [`PerThread`] holds what belongs to a request (the holds tables): one
//! list per thread, within [`PerProcess`]. A ZTS PHP runs several requests
//! at once in one process, each on its own thread; each looks up, joins and
//! ends only its own. A value reached by its id (an object's own hold) is
//! found on whichever list it is.

pub mod signals;

use std::marker::PhantomData;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, Once, PoisonError};

/// Bumped in every forked child.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// This process's generation: 0 in the process that loaded the extension,
/// another number in each forked child.
pub fn generation() -> u64 {
    register_fork_handler();
    GENERATION.load(Ordering::Acquire)
}

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

/// One list of values per thread (the request running on it), per
/// process: a forked child starts with none.
pub struct PerThread<T> {
    lists: PerProcess<Mutex<Lists<T>>>,
}

/// Each thread's list, by [`crate::host::thread`].
type Lists<T> = Vec<(u64, Vec<T>)>;

impl<T> PerThread<T> {
    /// No list yet.
    pub const fn new() -> Self {
        Self {
            lists: PerProcess::new(|| Mutex::new(Vec::new())),
        }
    }

    /// Runs `f` on the calling thread's list ([`crate::host::thread`]).
    /// `f` must not use this table again (the lists are behind one mutex,
    /// held only for `f`).
    pub fn with<R>(&self, f: impl FnOnce(&mut Vec<T>) -> R) -> R {
        let thread = crate::host::thread();
        let mut lists = self.lock();
        let pos = match lists.iter().position(|(t, _)| *t == thread) {
            Some(pos) => pos,
            None => {
                lists.push((thread, Vec::new()));
                lists.len() - 1
            }
        };
        f(&mut lists[pos].1)
    }

    /// Runs `f` on the list that has a value `pred` accepts, with that
    /// value's index: the calling thread's list first, then the others (a
    /// pure-Rust caller may hand a lock object to another thread; PHP never
    /// does). None when no list has one.
    pub fn with_owner<R>(
        &self,
        pred: impl Fn(&T) -> bool,
        f: impl FnOnce(&mut Vec<T>, usize) -> R,
    ) -> Option<R> {
        let thread = crate::host::thread();
        let mut lists = self.lock();
        let mine = lists.iter().position(|(t, _)| *t == thread);
        let order = mine
            .into_iter()
            .chain((0..lists.len()).filter(|&i| Some(i) != mine));
        for i in order {
            if let Some(pos) = lists[i].1.iter().position(&pred) {
                return Some(f(&mut lists[i].1, pos));
            }
        }
        None
    }

    /// Takes the calling thread's list out of the table (request end), so
    /// that threads that come and go leave nothing behind.
    pub fn take(&self) -> Vec<T> {
        let thread = crate::host::thread();
        let mut lists = self.lock();
        match lists.iter().position(|(t, _)| *t == thread) {
            Some(pos) => lists.swap_remove(pos).1,
            None => Vec::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Lists<T>> {
        self.lists
            .get()
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl<T> std::fmt::Debug for PerThread<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PerThread(..)")
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
