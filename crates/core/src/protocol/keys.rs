//! Names of the keys of one lock.
//!
//! The lock itself lives at `K = prefix + key` and holds the owner token.
//! Its helper keys are `K` followed by `~~` and a tag. No lock name may
//! contain `~~` (`check_name`), so a helper key can never be another
//! lock's key; helper keys start with the same prefix (ACL key patterns
//! such as `~app:*` cover them) and share the lock's hash slot whenever `K`
//! carries a hash tag:
//!
//! | key | type | what, and how long it lives |
//! |---|---|---|
//! | `K~~q` | sorted set | waiters' tokens in arrival order; gone a second after the last waiter's mark |
//! | `K~~a~<token>` | string | a waiter's mark `<ttl ms>:<fenced>:<starving>` (or `h`: handed the lock), expiring when it stops checking in |
//! | `K~~w~<token>` | list | wake-up of the waiter with that token; expires a second after its push |
//! | `K~~f` | string | fencing token of the current hold (option `fencing`), with the lease |
//! | `K~~r` | sorted set | the readers of a read-held lock (`crate::protocol::readers`); `K` then holds the read mark |
//! | `K~~n`, `K~~nw` | list, string | wake-ups and waiters' mark on a server without scripts (`crate::protocol::scriptless`) |
//!
//! and one fencing counter per prefix and server (on Cluster per prefix and
//! hash slot), shared by every lock under that prefix: `prefix~~fence`
//! ([`fence_counter`]).
//!
//! The scripts build `K~~a~<token>` and `K~~w~<token>` of other waiters
//! themselves (`lib/queue.lua`): legal in Redis Cluster only because every
//! key here shares `K`'s hash slot, which is why helper keys always start
//! with the whole of `K`.

use std::sync::OnceLock;

use crate::protocol::command::{Arg, Command};

/// What separates a lock name from the tag of its helper keys; no lock
/// name may contain it.
pub const SEPARATOR: &[u8] = b"~~";

/// Whether `name` contains [`SEPARATOR`].
pub fn has_separator(name: &[u8]) -> bool {
    name.windows(SEPARATOR.len()).any(|w| w == SEPARATOR)
}

/// The part of `key` that Redis Cluster hashes: the content of the first
/// `{...}` if it is not empty, else the whole key.
pub fn hash_tag(key: &[u8]) -> &[u8] {
    if let Some(open) = key.iter().position(|&b| b == b'{')
        && let Some(len) = key[open + 1..].iter().position(|&b| b == b'}')
        && len > 0
    {
        return &key[open + 1..open + 1 + len];
    }
    key
}

/// The Redis Cluster hash slot of `key`: CRC16 (XMODEM) of its
/// [`hash_tag`], modulo 16384.
pub fn hash_slot(key: &[u8]) -> u16 {
    let crc = hash_tag(key).iter().fold(0u16, |mut crc, &byte| {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
        crc
    });
    crc % 16384
}

/// `K~~tag` for the lock key `K`.
pub fn helper_key(lock_key: &[u8], tag: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(lock_key.len() + tag.len() + SEPARATOR.len());
    out.extend_from_slice(lock_key);
    out.extend_from_slice(SEPARATOR);
    out.extend_from_slice(tag.as_bytes());
    out
}

/// `K~~q`, the waiter queue of the lock `K`.
pub fn queue_key(lock_key: &[u8]) -> Vec<u8> {
    helper_key(lock_key, "q")
}

/// `K~~r`, the readers of the lock `K` while readers hold it
/// (`crate::protocol::readers`).
pub fn readers_key(lock_key: &[u8]) -> Vec<u8> {
    helper_key(lock_key, "r")
}

/// `K~~f`, the fencing token of the current hold of the lock `K`.
pub fn fence_key(lock_key: &[u8]) -> Vec<u8> {
    helper_key(lock_key, "f")
}

/// `K~~o`, the nonce of the current hold of the lock `K` when its token is
/// not the hold's own (option `owner`): a release, refresh or clean-up of
/// an older hold of the same owner compares it and leaves a newer one be.
pub fn nonce_key(lock_key: &[u8]) -> Vec<u8> {
    helper_key(lock_key, "o")
}

/// The shortest decimal number whose hash slot is `slot`, for every slot:
/// a hash tag that puts a key into a chosen slot.
fn slot_tags() -> &'static [u32] {
    static TAGS: OnceLock<Vec<u32>> = OnceLock::new();
    TAGS.get_or_init(|| {
        let mut tags = vec![u32::MAX; 16384];
        let mut missing = tags.len();
        let mut n = 0u32;
        while missing > 0 {
            let slot = usize::from(hash_slot(n.to_string().as_bytes()));
            if tags[slot] == u32::MAX {
                tags[slot] = n;
                missing -= 1;
            }
            n += 1;
        }
        tags
    })
}

/// The fencing counter of the locks under `prefix` that live with
/// `lock_key`: `prefix~~fence`, on Redis Cluster (`cluster`) with a hash
/// tag that puts it into `lock_key`'s slot unless the prefix carries one.
/// `None` on Cluster when no such name shares the lock's slot (a prefix
/// with an unclosed `{`).
pub fn fence_counter(prefix: &[u8], lock_key: &[u8], cluster: bool) -> Option<Vec<u8>> {
    let plain = helper_key(prefix, "fence");
    if !cluster {
        return Some(plain);
    }
    let slot = hash_slot(lock_key);
    if hash_tag(&plain) != &plain[..] && hash_slot(&plain) == slot {
        return Some(plain);
    }
    let tag = slot_tags()[usize::from(slot)];
    let tagged = [&plain[..], b"{", tag.to_string().as_bytes(), b"}"].concat();
    (hash_slot(&tagged) == slot).then_some(tagged)
}

/// All key names of one lock, computed once per lock object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockKeys {
    /// The lock key `K` (prefix + user key).
    pub lock: Vec<u8>,
    /// `K~~q`, the waiters.
    pub queue: Vec<u8>,
    /// `K~~f`, the fencing token of the current hold.
    pub fence: Vec<u8>,
    /// `K~~o`, the nonce of the current hold of a fixed owner
    /// ([`nonce_key`]).
    pub nonce: Vec<u8>,
    /// The fencing counter shared by the locks under the lock's prefix
    /// ([`fence_counter`]).
    pub counter: Vec<u8>,
    /// `K~~w~`, the prefix of the waiters' wake-up lists.
    pub wake_prefix: Vec<u8>,
    /// The encoded start of the release's EVALSHA on the lock key (a
    /// release then only appends its token, and its flags when they are
    /// set).
    pub release_head: Vec<u8>,
    /// The encoded start of `SET K ...` (then the token, NX PX and ttl).
    pub set_head: Vec<u8>,
}

impl LockKeys {
    /// The key names of the lock stored at `lock`, whose fencing counter is
    /// `counter`.
    pub fn new(lock: Vec<u8>, counter: Vec<u8>) -> Self {
        let queue = queue_key(&lock);
        let fence = fence_key(&lock);
        let release_head = crate::protocol::scripts::RELEASE.evalsha_head(&[&lock], 1);
        let set_head = Command::head(6, [Arg::from("SET"), Arg::from(&lock)]);
        Self {
            wake_prefix: helper_key(&lock, "w~"),
            nonce: nonce_key(&lock),
            queue,
            fence,
            counter,
            release_head,
            set_head,
            lock,
        }
    }

    /// The wake-up list of the waiter holding `token`.
    pub fn wake(&self, token: &[u8]) -> Vec<u8> {
        [&self.wake_prefix[..], token].concat()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_tags_follow_redis_rules() {
        assert_eq!(hash_tag(b"plain"), b"plain");
        assert_eq!(hash_tag(b"user:{42}:lock"), b"42");
        assert_eq!(
            hash_tag(b"{}x"),
            b"{}x",
            "an empty tag hashes the whole key"
        );
        assert_eq!(hash_tag(b"a{b"), b"a{b");
        assert_eq!(hash_tag(b"{a}{b}"), b"a", "only the first tag counts");
    }

    #[test]
    fn hash_slots_match_redis_cluster() {
        // Values from CLUSTER KEYSLOT on Redis 7.0.
        assert_eq!(hash_slot(b"foo"), 12182);
        assert_eq!(hash_slot(b"bar"), 5061);
        // CRC16/XMODEM check value of "123456789" is 0x31C3.
        assert_eq!(hash_slot(b"123456789"), 0x31C3);
        assert_eq!(hash_slot(b"{user1000}.following"), hash_slot(b"user1000"));
        assert_eq!(hash_slot(b""), 0);
    }

    #[test]
    fn helper_keys_extend_the_lock_key() {
        let keys = LockKeys::new(b"app:jobs:1".to_vec(), b"app:~~fence".to_vec());
        assert_eq!(keys.queue, b"app:jobs:1~~q");
        assert_eq!(keys.fence, b"app:jobs:1~~f");
        assert_eq!(keys.wake(b"ab12"), b"app:jobs:1~~w~ab12");
        assert!(has_separator(&keys.queue) && !has_separator(b"app:jobs:1~x~"));
    }

    #[test]
    fn locks_sharing_a_hash_tag_have_their_own_helper_keys() {
        let keys = |k: &[u8]| LockKeys::new(k.to_vec(), Vec::new());
        assert_ne!(keys(b"jobs:{t}:a").queue, keys(b"jobs:{t}:b").queue);
        for key in [&b"jobs:{t}:a"[..], b"app:{tenant7}:jobs"] {
            let k = keys(key);
            for helper in [&k.queue, &k.fence, &k.wake(b"t")] {
                assert_eq!(hash_tag(helper), hash_tag(key));
            }
        }
    }

    #[test]
    fn fence_counters_share_the_lock_slot_one_per_prefix_and_slot() {
        assert_eq!(
            fence_counter(b"app:", b"app:x", false).unwrap(),
            b"app:~~fence"
        );
        for (prefix, lock) in [
            (&b"app:"[..], &b"app:{job}"[..]),
            (b"", b"{42}"),
            (b"app:", b"app:user:{42}:lock"),
            (b"t{7}:", b"t{7}:job"),
        ] {
            let counter = fence_counter(prefix, lock, true).unwrap();
            assert_eq!(hash_slot(&counter), hash_slot(lock), "{counter:?}");
            assert!(counter.starts_with(prefix) && has_separator(&counter));
        }
        // Two locks in one slot share one counter.
        let a = fence_counter(b"p:", b"p:{user1000}.a", true);
        assert_eq!(a, fence_counter(b"p:", b"p:{user1000}.following", true));
        // Every slot has a tag.
        assert!(slot_tags().iter().all(|&n| n != u32::MAX));
    }
}
