//! The table of every hold this process has in Redis (a lock's write
//! hold, its read holds, a semaphore's permits), one list per request (per
//! PHP thread: a ZTS PHP runs several requests at once, each on its own
//! thread). Lookups by key ([`find`], [`end_left`], [`forget`]) and the ends
//! of the request ([`drain`], [`end_scope`]) see only the calling thread's
//! list, so one request never joins, forgets or ends another's holds, as
//! with two processes; an object reaches its own hold by id wherever it is.
//!
//! It gives guarantees that a single object cannot:
//! - **reentrancy** (write holds): a second acquire of a key this request
//!   already holds
//!   (through any lock object, in the same [`crate::host::context`]: the
//!   same PHP Fiber) joins the existing hold and is counted; Redis is released at the
//!   last matching release;
//! - **request end**: whatever is still held when the request ends (also after
//!   a fatal error, which skips destructors) is released by [`drain`];
//! - **Fibers**: a hold belongs to the [`crate::host::context`] (PHP Fiber)
//!   that took it ([`Entry::context`]), for every method;
//! - **fork**: a child process starts with an empty table, so it never
//!   believes it holds its parent's holds;
//! - **left holds**: an auto-renewed hold with `auto_release` off outlives
//!   its last object (count 0, joined by nobody) and is renewed until a
//!   release or refresh of its key and token from any object of this
//!   request ([`leave`], [`end_left`]), a force-release ([`forget`]),
//!   its loss, or the request end ([`drain`]);
//! - **request scope by hand**: [`end_scope`] ends what request end would,
//!   between the "requests" of a worker loop.
//!
//! Objects refer to an entry by its id; an id that is no longer in the
//! table (released, drained at request end, or inherited across fork) means
//! the object holds nothing.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use std::time::Duration;

use crate::lease::belief::Lease;
use crate::process::PerThread;
use crate::protocol::counted::SemKeys;
use crate::protocol::keys::LockKeys;
use crate::topology::Topology;

/// What a hold is.
#[derive(Debug, Clone)]
pub enum Kind {
    /// A lock's write hold: the lock's keys, and the hold's fencing token
    /// (option `fencing`).
    Write {
        /// The key names of the lock (the lock key includes the prefix).
        keys: Arc<LockKeys>,
        /// The fencing token of this hold.
        fence: Option<i64>,
    },
    /// A hold counted in a sorted set: a semaphore's permit, or a lock's
    /// read hold ([`SemKeys::counted`] says which).
    Counted {
        /// The keys of the holders.
        keys: Arc<SemKeys>,
        /// How many permits it is (1 for a read hold).
        count: u32,
    },
}

/// One hold.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Unique for the life of the process tree (ids are never reused).
    pub id: u64,
    /// What it is, with its keys.
    pub kind: Kind,
    /// The owner token written into Redis.
    pub token: Vec<u8>,
    /// A write hold's nonce, kept in `K~~o` beside a token that is not the
    /// hold's own (option `owner`, a restored token): compared by every
    /// command of the hold. `None` for a token that nobody else ever holds.
    pub nonce: Option<Vec<u8>>,
    /// Number of acquires not yet matched by a release; 0 for a hold
    /// whose objects are all gone ([`let_go`]).
    pub count: u32,
    /// Release in Redis when the last holder object goes away or the
    /// request ends (the `auto_release` option of the first acquirer).
    pub auto_release: bool,
    /// Where the hold lives: its keyspace (reentrancy scope) and where to
    /// send the release.
    pub topology: Arc<Topology>,
    /// What this process knows of the lease; with `renewed`, the renewal
    /// thread keeps it up to date until the entry leaves the table.
    pub lease: Arc<Lease>,
    /// Whether the renewal thread renews the lease (option `auto_renew`).
    pub renewed: bool,
    /// Taken over from a token (`restore()`): a write hold made elsewhere,
    /// which never turns into a read hold.
    pub restored: bool,
    /// Whether other acquires of this request may join the hold (option
    /// `reentrant` of the acquirer; write holds only): a hold taken with
    /// `reentrant => false` is never re-entered, by any object; nor one
    /// kept across [`end_scope`].
    pub reentrant: bool,
    /// The [`crate::host::context`] (PHP Fiber, in this thread's request)
    /// that took the hold: only it uses it.
    pub context: u64,
    /// Option `replicas`: extensions of a write hold wait for this many
    /// replicas, at most this long (0: they do not wait).
    pub replicas: (u32, Duration),
}

impl Entry {
    /// The key of the name the hold is of: the lock key for a lock's write
    /// and read holds, the holders key for a semaphore's permits. Holds of
    /// one name and token are one hold; pending work is filed under it.
    pub fn key(&self) -> &[u8] {
        match &self.kind {
            Kind::Write { keys, .. } => &keys.lock,
            Kind::Counted { keys, .. } => &keys.base,
        }
    }

    /// The hold's nonce, if it has one.
    pub fn nonce(&self) -> Option<&[u8]> {
        self.nonce.as_deref()
    }

    /// The hold's fencing-token key (`K~~f`) when the hold is fenced: it
    /// follows the lease wherever the lease is extended.
    pub fn fence_key(&self) -> Option<&[u8]> {
        match &self.kind {
            Kind::Write {
                keys,
                fence: Some(_),
            } => Some(&keys.fence[..]),
            _ => None,
        }
    }

    /// The fencing token of a fenced write hold.
    pub fn fence(&self) -> Option<i64> {
        match self.kind {
            Kind::Write { fence, .. } => fence,
            Kind::Counted { .. } => None,
        }
    }

    /// True for a lock's write hold.
    pub fn is_write(&self) -> bool {
        matches!(self.kind, Kind::Write { .. })
    }

    fn stop_renewal(&self) {
        self.lease.stop();
    }
}

/// Takes entry `pos` out of the table; its renewal (if any) stops.
fn take(entries: &mut Vec<Entry>, pos: usize) -> Entry {
    let entry = entries.swap_remove(pos);
    entry.stop_renewal();
    entry
}

/// The holds of this process, per thread (request); a forked child starts
/// with none.
static TABLE: PerThread<Entry> = PerThread::new();
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Runs `f` on the entries of the calling thread's request.
fn with_entries<T>(f: impl FnOnce(&mut Vec<Entry>) -> T) -> T {
    TABLE.with(f)
}

/// Runs `f` on the entries of the request that holds entry `id`, with the
/// entry's index (the calling thread's, unless a pure-Rust caller moved the
/// lock object to another thread).
fn with_entry<T>(id: u64, f: impl FnOnce(&mut Vec<Entry>, usize) -> T) -> Option<T> {
    TABLE.with_owner(|e| e.id == id, f)
}

/// Adds a new hold with count 1 and returns its id.
pub fn insert(mut entry: Entry) -> u64 {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    entry.id = id;
    entry.count = 1;
    with_entries(|entries| entries.push(entry));
    id
}

/// Counts one more acquire on the entry `id`, if it is still held.
pub fn join_id(id: u64) -> bool {
    with_entry(id, |entries, pos| entries[pos].count += 1).is_some()
}

/// A copy of the entry `id`, if this request still holds it.
pub fn get(id: u64) -> Option<Entry> {
    with_entry(id, |entries, pos| entries[pos].clone())
}

/// True when the hold `id` is auto-renewed and its lease was found lost.
pub fn is_lost(id: u64) -> bool {
    with_entry(id, |entries, pos| {
        let e = &entries[pos];
        e.renewed && e.lease.is_lost()
    })
    .unwrap_or(false)
}

/// A copy of the reentrant write hold of the lock `redis_key` in `scope`
/// taken in `context`, if held by an object (a left hold is joined by
/// nobody).
pub fn find(scope: &str, redis_key: &[u8], context: u64) -> Option<Entry> {
    with_entries(|entries| {
        entries
            .iter()
            .find(|e| {
                e.reentrant
                    && e.is_write()
                    && e.count > 0
                    && &**e.topology.scope() == scope
                    && e.key() == redis_key
                    && e.context == context
            })
            .cloned()
    })
}

/// What [`leave`] did.
#[derive(Debug)]
pub enum Left {
    /// The entry was not held (any more).
    NotHeld,
    /// Other acquires remain; nothing to do in Redis.
    StillHeld,
    /// That was the last one: the entry is removed and returned so the
    /// caller can release it in Redis (every other hold of its key and
    /// token is removed with it when the caller releases: [`leave`], or
    /// [`let_go`] with `auto_release` on).
    Last(Entry),
    /// That was the last object of an auto-renewed hold with `auto_release`
    /// off: the hold stays in the table, renewed, with count 0.
    Kept,
}

/// Matches `n` acquires of entry `id` with releases.
pub fn leave(id: u64, n: u32) -> Left {
    with_entry(id, |entries, pos| drop_count(entries, pos, n, false)).unwrap_or(Left::NotHeld)
}

/// Matches the `n` acquires of entry `id` that an object still had when it
/// went away. Its last object gone, an auto-renewed hold with
/// `auto_release` off stays (count 0) and is renewed on; it replaces an
/// earlier left hold of the same key and token, and left holds found lost
/// meanwhile are dropped.
pub fn let_go(id: u64, n: u32) -> Left {
    with_entry(id, |entries, pos| drop_count(entries, pos, n, true)).unwrap_or(Left::NotHeld)
}

/// [`leave`] and [`let_go`] on entry `pos` of its request's `entries`.
fn drop_count(entries: &mut Vec<Entry>, pos: usize, n: u32, keep_renewed: bool) -> Left {
    let id = entries[pos].id;
    let entry = &mut entries[pos];
    entry.count = entry.count.saturating_sub(n);
    if entry.count > 0 {
        return Left::StillHeld;
    }
    let entry = &entries[pos];
    let renewed_on = entry.renewed && !entry.auto_release && !entry.lease.is_lost();
    if keep_renewed && renewed_on {
        let (scope, key, token) = (
            entry.topology.scope().clone(),
            entry.key().to_vec(),
            entry.token.clone(),
        );
        remove_where(entries, |e| {
            e.id != id && e.count == 0 && (e.lease.is_lost() || same(e, &scope, &key, &token))
        });
        return Left::Kept;
    }
    let entry = take(entries, pos);
    if !keep_renewed || entry.auto_release {
        // Released in Redis next: every other hold of this key and token
        // (one left renewing by its gone objects, one restored beside it)
        // ends with it, its renewal stopped before the release is sent, so
        // none is counted lost.
        let (scope, key, token) = (entry.topology.scope(), entry.key(), &entry.token);
        remove_where(entries, |e| same(e, scope, key, token));
    }
    Left::Last(entry)
}

/// Whether `e` is a write hold of `token` on `redis_key` in `scope` (the
/// holds a write hold's release or refresh ends with it; a read hold under
/// the same token is another hold).
fn same(e: &Entry, scope: &str, redis_key: &[u8], token: &[u8]) -> bool {
    e.is_write() && &**e.topology.scope() == scope && e.key() == redis_key && e.token == token
}

/// Removes (and stops renewing) every entry that `pred` accepts.
fn remove_where(entries: &mut Vec<Entry>, pred: impl Fn(&Entry) -> bool) {
    entries.retain(|e| {
        if pred(e) {
            e.stop_renewal();
            return false;
        }
        true
    });
}

/// Removes the left holds (count 0) of `token` on `redis_key` in `scope`
/// and stops their renewal (an object refreshed that key and token: the
/// lease is now the one it set).
pub fn end_left(scope: &str, redis_key: &[u8], token: &[u8]) {
    with_entries(|entries| {
        remove_where(entries, |e| {
            e.count == 0 && same(e, scope, redis_key, token)
        })
    });
}

/// Removes every entry for `redis_key` in `scope` whatever its count (the
/// lock was force-released: its write and read holds).
pub fn forget(scope: &str, redis_key: &[u8]) {
    with_entries(|entries| {
        remove_where(entries, |e| {
            &**e.topology.scope() == scope && e.key() == redis_key
        })
    });
}

/// Removes the entry `id` whatever its count (its lease was found lost).
pub fn remove(id: u64) -> Option<Entry> {
    with_entry(id, take)
}

/// Ends the request scope by hand (`RedisLock::releaseAll()`): takes out
/// and returns every hold that request end would release (`auto_release`
/// on) and every left hold (count 0, its objects gone: request end stops
/// renewing it), their renewal stopped. A hold with `auto_release` off
/// that an object still has stays with that object (renewed as before),
/// but no other acquire joins it any more: reentrancy starts afresh.
pub fn end_scope() -> Vec<Entry> {
    with_entries(|entries| {
        let mut ended = Vec::new();
        let mut pos = 0;
        while pos < entries.len() {
            if entries[pos].auto_release || entries[pos].count == 0 {
                ended.push(take(entries, pos));
            } else {
                entries[pos].reentrant = false;
                pos += 1;
            }
        }
        ended
    })
}

/// Empties the calling thread's table (its request's end) and returns
/// what was in it.
pub fn drain() -> Vec<Entry> {
    let entries = TABLE.take();
    entries.iter().for_each(Entry::stop_renewal);
    entries
}
