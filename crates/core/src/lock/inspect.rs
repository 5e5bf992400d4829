//! `RedisLock::inspect()`: what Redis knows of a lock, whoever holds it (a
//! writer or readers), and of the semaphore of the same name.

use crate::error::Result;
use crate::protocol::inspect::{self, Holders, Seen};
use crate::protocol::readers::READ_MARK;
use crate::topology::Role;

use super::Lock;

/// Who holds a lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HoldMode {
    /// One writer (`acquire()`): the lock key holds its token.
    Write,
    /// Readers (`acquireRead()`): the lock key holds the read mark.
    Read,
}

impl HoldMode {
    /// How PHP spells it: `"write"` or `"read"`.
    pub fn name(self) -> &'static str {
        match self {
            HoldMode::Write => "write",
            HoldMode::Read => "read",
        }
    }
}

/// What Redis knows of a lock (over Redlock, what a quorum of its masters
/// agree on).
#[derive(Debug, Clone, PartialEq)]
pub struct Inspection {
    /// Whether the lock is held: on a quorum of its servers under one
    /// token, or by readers.
    pub held: bool,
    /// Who holds it; `None` when free.
    pub mode: Option<HoldMode>,
    /// The owner token of a write hold (the `owner` option's string when
    /// the holder set one), or the tokens of up to
    /// `inspect::SCAN` live readers (soonest lease end first); empty
    /// when free.
    pub owners: Vec<Vec<u8>>,
    /// How many live readers hold it (all of them, also past those listed
    /// in `owners`); 0 unless read-held.
    pub readers: u64,
    /// Seconds left on the lease (the least among the servers that hold
    /// it; infinity when the key has no expiry; for readers the longest
    /// live reader's lease, at most the lock key's); `None` when free.
    pub ttl: Option<f64>,
    /// Live waiters in the queue, writers and readers (the most any
    /// server has).
    pub waiting: u64,
    /// The fencing token of the current write hold (`K~~f`), when the
    /// servers that hold it agree on one; `None` when free, read-held or
    /// unfenced.
    pub fence: Option<i64>,
    /// The semaphore of the same name, when Redis keeps any of its keys
    /// (never over Redlock, where semaphores do not run).
    pub semaphore: Option<SemaphoreInspection>,
    /// The servers of the lock that can lose a held lock by themselves (an
    /// evicting `maxmemory`, no append-only file), each with the reason
    /// and its fix; their facts are read once per process (`INFO`), and a
    /// server whose `INFO` is refused is not listed (the command line's
    /// `doctor` reports it as unknown).
    pub unsafe_servers: Vec<crate::stats::servers::UnsafeServer>,
}

/// What Redis knows of the semaphore of a name.
#[derive(Debug, Clone, PartialEq)]
pub struct SemaphoreInspection {
    /// Whether any permit is held.
    pub held: bool,
    /// Its number of permits, as its first user passed it (kept until a
    /// second past the last lease set ended); `None` when Redis keeps
    /// only waiters' keys of it.
    pub permits: Option<u64>,
    /// Live holders: permits in use.
    pub holders: u64,
    /// The tokens of up to `inspect::SCAN` live holders, soonest lease
    /// end first.
    pub owners: Vec<Vec<u8>>,
    /// Seconds left on the longest live lease; `None` when no permit is
    /// held.
    pub ttl: Option<f64>,
    /// Live waiters in its queue.
    pub waiting: u64,
}

impl Lock {
    /// Asks every server of the key at once, in one round trip, what it
    /// knows of the lock; reads only (one read-only script per server).
    /// The servers' facts are read first where this process has not yet
    /// (`INFO`, for [`Inspection::unsafe_servers`]). Fails like any call
    /// when fewer than a quorum of servers answer.
    pub fn inspect(&self) -> Result<Inspection> {
        let keys = &*self.keys;
        let votes = self.run(Role::Command, &|_| inspect::inspect(keys));
        let quorum = votes.quorum();
        let seen: Vec<Seen> = votes.replies()?.into_iter().flatten().collect();
        let mut inspection = decide(&seen, quorum);
        inspection.unsafe_servers = self.topology.unsafe_servers(&keys.lock)?;
        Ok(inspection)
    }
}

/// The lock as `quorum` of the servers that answered (`seen`) see it.
/// Read holds and semaphores run on one server that decides (never over
/// Redlock): their details come from that server's view alone.
fn decide(seen: &[Seen], quorum: usize) -> Inspection {
    let owner = seen
        .iter()
        .filter_map(|s| s.owner.as_deref())
        .find(|token| holding(seen, token).count() >= quorum);
    let waiting = seen.iter().map(|s| s.waiting).max().unwrap_or(0);
    let alone = match seen {
        [only] if quorum == 1 => Some(only),
        _ => None,
    };
    let semaphore = alone.and_then(|s| s.semaphore.as_ref()).map(|sem| {
        let holders = &sem.holders;
        SemaphoreInspection {
            held: holders.live > 0,
            permits: sem.permits.and_then(|n| u64::try_from(n).ok()),
            holders: holders.live,
            owners: holders.tokens.clone(),
            ttl: longest(holders, -1),
            waiting: sem.waiting,
        }
    });
    let Some(owner) = owner else {
        return Inspection {
            held: false,
            mode: None,
            owners: Vec::new(),
            readers: 0,
            ttl: None,
            waiting,
            fence: None,
            semaphore,
            unsafe_servers: Vec::new(),
        };
    };
    let ttl = holding(seen, owner)
        .map(|s| seconds(s.pttl_ms))
        .fold(f64::INFINITY, f64::min);
    if owner == READ_MARK {
        // Readers hold it: the lock key holds the read mark (over Redlock
        // only by hand: redislock refuses read holds there).
        let readers = alone.and_then(|s| s.readers.as_ref());
        let pttl_ms = alone.map_or(-1, |s| s.pttl_ms);
        return Inspection {
            held: true,
            mode: Some(HoldMode::Read),
            owners: readers.map(|r| r.tokens.clone()).unwrap_or_default(),
            readers: readers.map_or(0, |r| r.live),
            ttl: Some(readers.and_then(|r| longest(r, pttl_ms)).unwrap_or(ttl)),
            waiting,
            fence: None,
            semaphore,
            unsafe_servers: Vec::new(),
        };
    }
    let mut fences = holding(seen, owner).map(|s| s.fence);
    let first = fences.next().flatten();
    let fence = match fences.all(|f| f == first) {
        true => first,
        false => None,
    };
    Inspection {
        held: true,
        mode: Some(HoldMode::Write),
        owners: vec![owner.to_vec()],
        readers: 0,
        ttl: Some(ttl),
        waiting,
        fence,
        semaphore,
        unsafe_servers: Vec::new(),
    }
}

/// A `PTTL` in seconds (infinity for a key without expiry).
fn seconds(pttl_ms: i64) -> f64 {
    match pttl_ms {
        ms if ms >= 0 => ms as f64 / 1000.0,
        _ => f64::INFINITY,
    }
}

/// Seconds left on the longest live lease of `holders` (0 for one that
/// ended within the clocks' grace), at most `cap_ms` when that is a
/// `PTTL` (the key that outlives the leases); `None` when none is live.
fn longest(holders: &Holders, cap_ms: i64) -> Option<f64> {
    if holders.live == 0 {
        return None;
    }
    let left = holders.longest_ms.max(0);
    let left = match cap_ms {
        cap if cap >= 0 => left.min(cap),
        _ => left,
    };
    Some(left as f64 / 1000.0)
}

/// The servers' views in which `token` holds the lock.
fn holding<'a>(seen: &'a [Seen], token: &'a [u8]) -> impl Iterator<Item = &'a Seen> + 'a {
    seen.iter()
        .filter(move |s| s.owner.as_deref() == Some(token))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::inspect::SemSeen;

    fn seen(owner: Option<&str>, pttl_ms: i64, fence: Option<i64>, waiting: u64) -> Seen {
        Seen {
            owner: owner.map(|o| o.as_bytes().to_vec()),
            pttl_ms,
            fence,
            waiting,
            readers: None,
            semaphore: None,
        }
    }

    fn holders(live: u64, tokens: &[&str], longest_ms: i64) -> Holders {
        Holders {
            live,
            tokens: tokens.iter().map(|t| t.as_bytes().to_vec()).collect(),
            longest_ms,
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

    #[test]
    fn readers_hold_it_in_read_mode() {
        let mut one = seen(Some("~~read"), 9000, Some(3), 2);
        one.readers = Some(holders(70, &["r1", "r2"], 4200));
        let got = decide(&[one.clone()], 1);
        assert!(got.held);
        assert_eq!(got.mode, Some(HoldMode::Read));
        assert_eq!(
            got.owners,
            [b"r1".to_vec(), b"r2".to_vec()],
            "never the mark"
        );
        assert_eq!((got.readers, got.waiting, got.fence), (70, 2, None));
        assert_eq!(got.ttl, Some(4.2), "the longest live reader's lease");
        one.readers = Some(holders(1, &["r1"], 12_000));
        assert_eq!(decide(&[one.clone()], 1).ttl, Some(9.0), "at most K's");
        one.readers = Some(holders(1, &["r1"], -300));
        assert_eq!(decide(&[one.clone()], 1).ttl, Some(0.0), "within the grace");
        one.readers = Some(holders(0, &[], 0));
        let ended = decide(&[one], 1);
        assert!(ended.held && ended.owners.is_empty() && ended.readers == 0);
        assert_eq!(ended.ttl, Some(9.0), "no live reader: K's lease");
        // Over Redlock (by hand only): held by readers, nothing more known.
        let mut a = seen(Some("~~read"), 800, None, 0);
        a.readers = Some(holders(2, &["r"], 700));
        let got = decide(&[a.clone(), a], 2);
        assert_eq!(got.mode, Some(HoldMode::Read));
        assert!(got.owners.is_empty() && got.readers == 0);
        assert_eq!(got.ttl, Some(0.8));
    }

    #[test]
    fn a_write_hold_is_in_write_mode() {
        let got = decide(&[seen(Some("t"), 1500, None, 0)], 1);
        assert_eq!((got.mode, got.readers), (Some(HoldMode::Write), 0));
        assert_eq!(decide(&[seen(None, -2, None, 0)], 1).mode, None);
    }

    #[test]
    fn a_semaphore_of_the_same_name_is_reported_beside_the_lock() {
        let mut one = seen(Some("t"), 1500, None, 0);
        one.semaphore = Some(SemSeen {
            permits: Some(3),
            holders: holders(2, &["s1", "s2"], 2500),
            waiting: 4,
        });
        let got = decide(&[one.clone()], 1);
        assert_eq!(got.owners, [b"t".to_vec()], "the lock's own owner");
        let sem = got.semaphore.unwrap();
        assert!(sem.held);
        assert_eq!((sem.permits, sem.holders, sem.waiting), (Some(3), 2, 4));
        assert_eq!(sem.owners, [b"s1".to_vec(), b"s2".to_vec()]);
        assert_eq!(sem.ttl, Some(2.5));
        one.semaphore = Some(SemSeen {
            permits: None,
            holders: holders(0, &[], 0),
            waiting: 0,
        });
        let idle = decide(&[one.clone()], 1).semaphore.unwrap();
        assert!(!idle.held && idle.ttl.is_none() && idle.permits.is_none());
        assert!(
            decide(&[one.clone(), one], 2).semaphore.is_none(),
            "never over Redlock"
        );
    }
}
