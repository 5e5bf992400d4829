//! Names of the keys of one lock.
//!
//! The lock itself lives at `prefix + key` and holds the owner token. Its
//! helper keys are named `{T}:suffix`, where `T` is the lock key's hash tag
//! (the part between the first `{` and the next `}`, when not empty) or else
//! the whole lock key, so that in Redis Cluster every key of a lock hashes to
//! the lock's slot:
//!
//! | key | type | what |
//! |---|---|---|
//! | `{T}:q` | sorted set | waiters' tokens, scored by arrival time |
//! | `{T}:i` | hash | token -> `<alive until ms>:<ttl ms>` of each waiter |
//! | `{T}:w:<token>` | list | wake-up of the waiter with that token |
//! | `{T}:f` | string | fencing counter (option `fencing`), never expires |

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

/// `{T}:suffix` for the lock key `lock_key`.
pub fn helper_key(lock_key: &[u8], suffix: &str) -> Vec<u8> {
    let tag = hash_tag(lock_key);
    let mut out = Vec::with_capacity(tag.len() + suffix.len() + 3);
    out.push(b'{');
    out.extend_from_slice(tag);
    out.extend_from_slice(b"}:");
    out.extend_from_slice(suffix.as_bytes());
    out
}

/// The waiter queue of a lock.
pub fn queue_key(lock_key: &[u8]) -> Vec<u8> {
    helper_key(lock_key, "q")
}

/// The waiters' info hash of a lock.
pub fn info_key(lock_key: &[u8]) -> Vec<u8> {
    helper_key(lock_key, "i")
}

/// The fencing counter of a lock.
pub fn fence_key(lock_key: &[u8]) -> Vec<u8> {
    helper_key(lock_key, "f")
}

/// The prefix of the wake-up lists of a lock's waiters; a waiter's list is
/// this prefix followed by its token.
pub fn wake_prefix(lock_key: &[u8]) -> Vec<u8> {
    helper_key(lock_key, "w:")
}

/// The wake-up list of the waiter holding `token`.
pub fn wake_key(lock_key: &[u8], token: &[u8]) -> Vec<u8> {
    let mut key = wake_prefix(lock_key);
    key.extend_from_slice(token);
    key
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
    fn helper_keys_share_the_lock_key_hash_tag() {
        assert_eq!(queue_key(b"jobs:1"), b"{jobs:1}:q");
        assert_eq!(queue_key(b"app:{tenant7}:jobs"), b"{tenant7}:q");
        assert_eq!(wake_key(b"jobs:1", b"ab12"), b"{jobs:1}:w:ab12");
        for key in [&b"jobs:1"[..], b"app:{tenant7}:jobs", b"a{b"] {
            assert_eq!(hash_tag(&queue_key(key)), hash_tag(key));
            assert_eq!(hash_tag(&wake_key(key, b"t")), hash_tag(key));
        }
    }
}
