//! `RedisLock::inspect()`: what Redis knows of a lock, whoever holds it.

use crate::error::Result;
use crate::net::pool::Role;
use crate::protocol::inspect::{self, Seen};

use super::Lock;

/// What Redis knows of a lock (over Redlock, what a quorum of its masters
/// agree on).
#[derive(Debug, Clone, PartialEq)]
pub struct Inspection {
    /// Whether the lock is held: on a quorum of its servers under one
    /// token.
    pub held: bool,
    /// The owner tokens of the hold (the `owner` option's string when the
    /// holder set one); empty when free.
    pub owners: Vec<Vec<u8>>,
    /// Seconds left on the lease (the least among the servers that hold
    /// it; infinity when the key has no expiry); `None` when free.
    pub ttl: Option<f64>,
    /// Live waiters in the queue (the most any server has).
    pub waiting: u64,
    /// The fencing token of the current hold (`K~~f`), when the servers
    /// that hold it agree on one; `None` when free or unfenced.
    pub fence: Option<i64>,
}

impl Lock {
    /// Asks every server of the key at once, in one round trip, what it
    /// knows of the lock; reads only (one read-only script per server).
    /// Fails like any call when fewer than a quorum of servers answer.
    pub fn inspect(&self) -> Result<Inspection> {
        let keys = &*self.keys;
        let votes = self.run(Role::Command, &|_| inspect::inspect(keys));
        let quorum = votes.quorum();
        let seen: Vec<Seen> = votes.replies()?.into_iter().flatten().collect();
        Ok(decide(&seen, quorum))
    }
}

/// The lock as `quorum` of the servers that answered (`seen`) see it.
fn decide(seen: &[Seen], quorum: usize) -> Inspection {
    let owner = seen
        .iter()
        .filter_map(|s| s.owner.as_deref())
        .find(|token| holding(seen, token).count() >= quorum);
    let waiting = seen.iter().map(|s| s.waiting).max().unwrap_or(0);
    let Some(owner) = owner else {
        return Inspection {
            held: false,
            owners: Vec::new(),
            ttl: None,
            waiting,
            fence: None,
        };
    };
    let ttl = holding(seen, owner)
        .map(|s| match s.pttl_ms {
            ms if ms >= 0 => ms as f64 / 1000.0,
            _ => f64::INFINITY,
        })
        .fold(f64::INFINITY, f64::min);
    let mut fences = holding(seen, owner).map(|s| s.fence);
    let first = fences.next().flatten();
    let fence = match fences.all(|f| f == first) {
        true => first,
        false => None,
    };
    Inspection {
        held: true,
        owners: vec![owner.to_vec()],
        ttl: Some(ttl),
        waiting,
        fence,
    }
}

/// The servers' views in which `token` holds the lock.
fn holding<'a>(seen: &'a [Seen], token: &'a [u8]) -> impl Iterator<Item = &'a Seen> + 'a {
    seen.iter()
        .filter(move |s| s.owner.as_deref() == Some(token))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(owner: Option<&str>, pttl_ms: i64, fence: Option<i64>, waiting: u64) -> Seen {
        Seen {
            owner: owner.map(|o| o.as_bytes().to_vec()),
            pttl_ms,
            fence,
            waiting,
        }
    }

    #[test]
    fn a_free_lock_is_free() {
        let got = decide(&[seen(None, -2, None, 2)], 1);
        assert!(!got.held && got.owners.is_empty() && got.ttl.is_none());
        assert_eq!((got.waiting, got.fence), (2, None));
    }

    #[test]
    fn one_server_decides_alone() {
        let got = decide(&[seen(Some("t"), 1500, Some(7), 0)], 1);
        assert!(got.held);
        assert_eq!(got.owners, [b"t".to_vec()]);
        assert_eq!((got.ttl, got.fence), (Some(1.5), Some(7)));
        let got = decide(&[seen(Some("t"), -1, None, 0)], 1);
        assert_eq!(got.ttl, Some(f64::INFINITY), "no expiry");
    }

    #[test]
    fn a_quorum_holds_one_token_or_nobody_holds_it() {
        let got = decide(
            &[
                seen(Some("a"), 900, None, 1),
                seen(Some("b"), 5000, None, 0),
                seen(Some("a"), 700, None, 3),
            ],
            2,
        );
        assert!(got.held);
        assert_eq!(got.owners, [b"a".to_vec()]);
        assert_eq!(got.ttl, Some(0.7), "the least among those that hold it");
        assert_eq!(got.waiting, 3);
        let split = decide(
            &[
                seen(Some("a"), 900, None, 0),
                seen(Some("b"), 900, None, 0),
                seen(None, -2, None, 0),
            ],
            2,
        );
        assert!(!split.held && split.ttl.is_none());
        let fences = decide(
            &[
                seen(Some("a"), 9, Some(1), 0),
                seen(Some("a"), 9, Some(2), 0),
            ],
            2,
        );
        assert_eq!(fences.fence, None, "servers that disagree give no fence");
    }
}
