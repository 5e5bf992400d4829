//! The end of a request's holds, whatever they are: at the request's end
//! (also after a fatal error, which skips destructors) and by hand
//! (`RedisLock::releaseAll()`, for worker loops whose runtime announces no
//! request end to the extension).

use crate::lease::hold;
use crate::lease::table::{self, Entry};

/// Releases every hold still open in this request (the calling thread's)
/// whose `auto_release` is on, and forgets the others (request end).
/// Returns how many were released in Redis. Errors are ignored: a release
/// that got no answer stays pending (the lease engine's pending work).
pub fn release_all() -> usize {
    release(table::drain())
}

/// Ends the request scope now, as request end does ([`release_all`]), for
/// every Fiber of this request (the calling thread's): releases in Redis
/// every hold with `auto_release` on and stops renewing the holds left by
/// their objects. A hold with `auto_release` off that a live object still
/// has stays its own (renewed, released by it), but no other acquire joins
/// it any more.
///
/// Objects whose holds ended here hold nothing afterwards: `isAcquired()`
/// is false, `release()` returns false, and a later acquire of the key
/// competes anew (reentrancy does not cross the call).
///
/// Returns how many holds were released in Redis: distinct holds (one per
/// name and token, however many reentrant acquires or objects shared it).
/// A hold whose release failed or found the lease no longer ours is not
/// counted.
pub fn end_request_scope() -> usize {
    release(table::end_scope())
}

/// Releases the holds among `ended` whose `auto_release` is on, once per
/// name and token; returns how many were ours.
fn release(ended: Vec<Entry>) -> usize {
    let mut released: Vec<&Entry> = Vec::new();
    for entry in ended.iter().filter(|e| e.auto_release) {
        let seen = released.iter().any(|r| {
            r.topology.scope() == entry.topology.scope()
                && r.key() == entry.key()
                && r.token == entry.token
        });
        if !seen && matches!(hold::release(entry), Ok(true)) {
            released.push(entry);
        }
    }
    released.len()
}
