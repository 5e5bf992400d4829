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
//! not in an object. A hint only, either way is correct: a busy lock on
//! the table (another thread, or one that was inside at a `fork()`) reads
//! as "not contended" and is not written, so no thread ever waits here.

use std::collections::HashSet;
use std::sync::Mutex;

/// At most this many keys are noted; beyond, new ones are not.
const MOST: usize = 1024;

/// The keys noted; `None` until the first (and after [`forget_all`]).
static CONTENDED: Mutex<Option<HashSet<Vec<u8>>>> = Mutex::new(None);

/// Whether the last note on `key` said it was contended (a permit release
/// found waiters; a wait for a lock had to queue).
pub(crate) fn seen(key: &[u8]) -> bool {
    CONTENDED
        .try_lock()
        .is_ok_and(|set| set.as_ref().is_some_and(|set| set.contains(key)))
}

/// Notes whether `key` was found contended (a permit release of the
/// semaphore with holders `key` found waiters; a wait for the lock `key`
/// had to queue).
pub(crate) fn note(key: &[u8], waiters: bool) {
    let Ok(mut set) = CONTENDED.try_lock() else {
        return;
    };
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
/// that unloads the extension finds nothing of it left allocated).
pub(crate) fn forget_all() {
    *CONTENDED.lock().unwrap_or_else(|p| p.into_inner()) = None;
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
}
