//! Names of the keys of one lock.
//!
//! The lock itself lives at `K = prefix + key` and holds the owner token.
//! Its helper keys are `K` followed by a `~` suffix, so they are unique to
//! the lock, start with the same prefix (ACL key patterns such as `~app:*`
//! cover them), and share the lock's hash slot whenever `K` carries a hash
//! tag:
//!
//! | key | type | what |
//! |---|---|---|
//! | `K~q` | sorted set | waiters' tokens, scored by arrival order |
//! | `K~a~<token>` | string | `<ttl ms>:<alive ms>:<fenced>` of a waiter, expiring when it stops checking in |
//! | `K~w~<token>` | list | wake-up of the waiter with that token |
//! | `K~f` | string | fencing counter (option `fencing`), never expires |
//! | `K~r` | list | the last 16 released tokens, expiring once a lost reply's replay is due |
//!
//! The scripts build `K~a~<token>` and `K~w~<token>` of other waiters
//! themselves (`lib/handoff.lua`): legal in Redis Cluster only because every
//! key here shares `K`'s hash slot, which is why helper keys always start
//! with the whole of `K`.

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

/// `K~suffix` for the lock key `K`.
pub fn helper_key(lock_key: &[u8], suffix: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(lock_key.len() + suffix.len() + 1);
    out.extend_from_slice(lock_key);
    out.push(b'~');
    out.extend_from_slice(suffix.as_bytes());
    out
}

/// The waiter queue of a lock.
pub fn queue_key(lock_key: &[u8]) -> Vec<u8> {
    helper_key(lock_key, "q")
}

/// The recently released tokens of a lock (a release's replay looks for its
/// token there).
pub fn released_key(lock_key: &[u8]) -> Vec<u8> {
    helper_key(lock_key, "r")
}

/// The fencing counter of a lock.
pub fn fence_key(lock_key: &[u8]) -> Vec<u8> {
    helper_key(lock_key, "f")
}

/// The prefix of the wake-up lists of a lock's waiters; a waiter's list is
/// this prefix followed by its token.
pub fn wake_prefix(lock_key: &[u8]) -> Vec<u8> {
    helper_key(lock_key, "w~")
}

/// The wake-up list of the waiter holding `token`.
pub fn wake_key(lock_key: &[u8], token: &[u8]) -> Vec<u8> {
    let mut key = wake_prefix(lock_key);
    key.extend_from_slice(token);
    key
}

/// All key names of one lock, computed once per lock object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockKeys {
    /// The lock key `K` (prefix + user key).
    pub lock: Vec<u8>,
    /// `K~q`.
    pub queue: Vec<u8>,
    /// `K~f`.
    pub fence: Vec<u8>,
    /// `K~r`.
    pub released: Vec<u8>,
    /// `K~w~`.
    pub wake_prefix: Vec<u8>,
}

impl LockKeys {
    /// The key names of the lock stored at `lock`.
    pub fn new(lock: Vec<u8>) -> Self {
        Self {
            queue: queue_key(&lock),
            fence: fence_key(&lock),
            released: released_key(&lock),
            wake_prefix: wake_prefix(&lock),
            lock,
        }
    }

    /// The wake-up list of the waiter holding `token`.
    pub fn wake(&self, token: &[u8]) -> Vec<u8> {
        let mut key = Vec::with_capacity(self.wake_prefix.len() + token.len());
        key.extend_from_slice(&self.wake_prefix);
        key.extend_from_slice(token);
        key
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
        assert_eq!(queue_key(b"app:jobs:1"), b"app:jobs:1~q");
        assert_eq!(fence_key(b"app:jobs:1"), b"app:jobs:1~f");
        assert_eq!(wake_key(b"app:jobs:1", b"ab12"), b"app:jobs:1~w~ab12");
    }

    #[test]
    fn locks_sharing_a_hash_tag_have_their_own_helper_keys() {
        assert_ne!(queue_key(b"jobs:{t}:a"), queue_key(b"jobs:{t}:b"));
        for key in [&b"jobs:{t}:a"[..], b"app:{tenant7}:jobs"] {
            assert_eq!(hash_tag(&queue_key(key)), hash_tag(key));
            assert_eq!(hash_tag(&wake_key(key, b"t")), hash_tag(key));
            assert_eq!(hash_tag(&fence_key(key)), hash_tag(key));
        }
    }
}
