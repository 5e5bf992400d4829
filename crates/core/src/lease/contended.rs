//! Which keys this process last found contended, so that the next call
//! on them skips a round trip that would find them so again:
//!
//! - a semaphore's holders key (`S~~s`), noted by each permit release: a
//!   release of a semaphore whose last release found waiters sends
//!   `sem_release.lua` at once (one round trip: the script hands the
//!   permits on); any other sends the plain `ZREM` and `EXISTS` first, and
//!   the script only when someone waits;
//! - a lock's key (`K`), noted by each wait for it: while the last wait had
//!   to queue, a waiting acquire starts with the queue's step (which takes
//!   a free lock as well) instead of the plain `SET NX PX` first.
//!
//! PHP makes new objects per request, so the note lives in the process,
//! not in an object. A hint only, either way is correct; but a hint that
//! another thread's look at the table could lose (a ZTS PHP's requests
//! run beside each other) would cost that request its round trip for
//! nothing, so a look waits for the table (a hash set's lookup or insert
//! long). A forked child gets a table of its own ([`PerProcess`]): one
//! that a thread of the parent held at the `fork()` is never touched.

use std::collections::HashSet;
use std::sync::{Mutex, MutexGuard};

use crate::process::PerProcess;

/// At most this many keys are noted; beyond, new ones are not.
const MOST: usize = 1024;

/// The keys noted; `None` until the first (and after [`forget_all`]).
static CONTENDED: PerProcess<Mutex<Option<HashSet<Vec<u8>>>>> =
    PerProcess::new(|| Mutex::new(None));

/// This process's table.
fn table() -> MutexGuard<'static, Option<HashSet<Vec<u8>>>> {
    CONTENDED
        .get()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Whether the last note on `key` said it was contended (a permit release
/// found waiters; a wait for a lock had to queue).
pub(crate) fn seen(key: &[u8]) -> bool {
    table().as_ref().is_some_and(|set| set.contains(key))
}

/// Notes whether `key` was found contended (a permit release of the
/// semaphore with holders `key` found waiters; a wait for the lock `key`
/// had to queue).
pub(crate) fn note(key: &[u8], waiters: bool) {
    let mut set = table();
    if !waiters {
        if let Some(set) = set.as_mut() {
            set.remove(key);
        }
        return;
    }
    let set = set.get_or_insert_with(HashSet::new);
    if set.len() < MOST && !set.contains(key) {
        set.insert(key.to_vec());
    }
}

/// Forgets every note and frees the table (the end of the module: a host
/// that unloads the extension finds nothing of it left allocated). Builds
/// nothing in a process that never noted a key (a php-fpm master).
pub(crate) fn forget_all() {
    if let Some(table) = CONTENDED.built() {
        *table.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_release_that_found_waiters_is_remembered_until_one_finds_none() {
        let key = b"contended-test~~s";
        assert!(!seen(key));
        note(key, true);
        assert!(seen(key));
        note(key, false);
        assert!(!seen(key));
    }

    /// A note and a look are never lost to another thread's use of the
    /// table at the same moment (the table was tried, not waited for: a
    /// busy table read as "not contended" and dropped the note).
    #[test]
    fn another_thread_at_the_table_loses_no_note() {
        use std::sync::atomic::{AtomicBool, Ordering};
        static STOP: AtomicBool = AtomicBool::new(false);
        let beside = std::thread::spawn(|| {
            while !STOP.load(Ordering::Relaxed) {
                note(b"contended-beside~~s", true);
                let _ = seen(b"contended-beside~~s");
                note(b"contended-beside~~s", false);
            }
        });
        let key = b"contended-ours";
        let mut lost = 0;
        for _ in 0..200_000 {
            note(key, true);
            lost += usize::from(!seen(key));
        }
        STOP.store(true, Ordering::Relaxed);
        beside.join().unwrap();
        note(key, false);
        assert_eq!(lost, 0, "looks that missed a note of their own thread");
    }
}
