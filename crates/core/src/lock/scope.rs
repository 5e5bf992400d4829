//! The request scope ended by hand: `RedisLock::releaseAll()`, for worker
//! loops whose runtime announces no request end to the extension.

use super::holds::{self, Entry};
use super::release_entry;

/// Ends the request scope now, as request end does ([`super::release_all`]),
/// for every Fiber of this request (the calling thread's): releases in Redis every hold with
/// `auto_release` on and stops renewing the holds left by their objects.
/// A hold with `auto_release` off that a live object still has stays its
/// own (renewed, released by it), but no other acquire joins it any more.
///
/// Objects whose holds ended here hold nothing afterwards: `isAcquired()`
/// is false, `release()` returns false, and a later acquire of the key
/// competes anew (reentrancy does not cross the call).
///
/// Returns how many holds were released in Redis: distinct keys (one per
/// key and token, however many reentrant acquires or objects shared it).
/// A hold whose release failed or found the lease no longer ours is not
/// counted; its lease ends by itself.
pub fn end_request_scope() -> usize {
    let ended: Vec<Entry> = holds::end_scope();
    let mut released: Vec<&Entry> = Vec::new();
    for entry in ended.iter().filter(|e| e.auto_release) {
        let seen = released.iter().any(|r| {
            r.topology.scope() == entry.topology.scope()
                && r.keys.lock == entry.keys.lock
                && r.token == entry.token
        });
        if !seen && matches!(release_entry(entry), Ok(true)) {
            released.push(entry);
        }
    }
    released.len()
}
