//! Taking the lock to write: reentrancy, a plain try on every server at
//! once, the wait the topology says (`Waiting`), and the hold adopted
//! into the process's table (renewed with `auto_renew`); and taking over a
//! hold made elsewhere ([`Lock::restore`]).

use std::time::{Duration, Instant};

use super::{Claim, Held, Lock, Won};
use crate::config::options::OnLost;
use crate::error::{LockError, Result};
use crate::host;
use crate::lease::belief::{Applied, Effect, Lease};
use crate::lease::deadline::Deadline;
use crate::lease::hold::{abandon_later, successor_on};
use crate::lease::renewal::{Job, Renewed};
use crate::lease::table::{self, Entry, Kind};
use crate::lease::{contended, counted::Promoted, pending, queue, worker};
use crate::protocol::call::{Attempt, Call};
use crate::protocol::lock_calls::{self, Fence};
use crate::protocol::permitted::Permitted;
use crate::protocol::scriptless::CompareDelete;
use crate::protocol::token;
use crate::stats::{Primitive, Tally};
use crate::topology::{Checked, Role, Topology, Votes, Waiting};

impl Lock {
    /// Tries to take the lock, waiting up to `wait` for it to become free.
    ///
    /// When this process already holds the key (through this or another
    /// object) the hold is counted after one round trip that confirms the
    /// lease is still ours and makes it last at least this lock's ttl.
    /// Otherwise, with no wait: one `SET NX PX` on every server of the key
    /// at once. With a wait: as the topology says (`Waiting`). PHP's
    /// execution time limit ([`crate::host::time_limit_hit`]) is asked
    /// between the requests of the wait: once hit, the wait ends early
    /// with `false`.
    pub fn acquire(&mut self, wait: Duration) -> Result<bool> {
        let tally = Tally::start(Primitive::Lock);
        let result = self.acquire_write(wait);
        tally.finish(&self.key, wait, &result);
        result
    }

    /// [`Lock::acquire`], uncounted.
    fn acquire_write(&mut self, mut wait: Duration) -> Result<bool> {
        if let Some(read) = self.entry().filter(|e| !e.is_write()) {
            let started = Instant::now();
            match self.promote(&read, wait)? {
                Promoted::Won(_) => return Ok(true),
                // Still a reader: other readers hold the lock.
                Promoted::Out => return Ok(false),
                // The read hold was gone (its lease ran out): nothing to
                // promote, so a plain acquire with what is left of the wait,
                // as on an object whose write hold was lost.
                Promoted::Gone => wait = wait.saturating_sub(started.elapsed()),
            }
        }
        self.acquire_without_read_hold(wait)
    }

    /// [`Lock::acquire`] on an object that holds no read hold (in this
    /// Fiber).
    fn acquire_without_read_hold(&mut self, wait: Duration) -> Result<bool> {
        if self.reenter()? {
            return Ok(true);
        }
        // A wait goes on through dropped connections from its start, and
        // ends `wait` after it, whatever way it waits.
        let deadline = Deadline::new(wait, self.options.retry_delay);
        // Earlier work on this key that Redis did not answer goes first.
        let scriptless = queue::through_drops(deadline.end(), || {
            pending::flush(self.topology.scope(), &self.keys.lock)?;
            let scriptless = self.check_scripts()?;
            // A server that can lose the hold by itself: recorded, or
            // refused (option unsafe_server).
            let (key, policy) = (&self.keys.lock, self.options.unsafe_server);
            self.topology.check_unsafe(key, policy)?;
            Ok(scriptless)
        })?;
        if scriptless.is_some() && self.options.fencing {
            return Err(self.fencing_refused());
        }
        if scriptless.is_some() && self.options.owner.is_some() {
            return Err(self.owner_refused());
        }
        let mut claim = Claim::fresh(self.options.owner.as_ref().map(|o| &o.0[..]))?;
        let attempt = match self.topology.waiting() {
            _ if let Some(how) = scriptless => self.acquire_scriptless(&claim, &deadline, how),
            _ if wait.is_zero() => self.try_once(&claim),
            // While this process's last wait for the key had to queue, the
            // queue's first step takes the lock if it is free (one round
            // trip either way; it queues at once if not).
            Waiting::HandOver if contended::seen(&self.keys.lock) => {
                self.wait_in_queue(&claim, &deadline, false)
            }
            // A free lock is taken with the plain try first (one SET, what
            // the recipe costs); only a lock found held costs the queue.
            Waiting::HandOver => match self.try_single(&claim) {
                Ok(Tried::Won(won)) => Ok(Some(won)),
                Ok(Tried::Lost) => self.wait_in_queue(&claim, &deadline, false),
                // Won too late to count on, or its outcome unknown (the
                // connection dropped under it): the wait's first step
                // replays it (claims the lock for its whole lease if it
                // still holds our token). Nothing is undone: an undo left
                // pending could release what the wait takes with this
                // token.
                Ok(Tried::Late) => self.wait_in_queue(&claim, &deadline, true),
                Err(e) if e.is_retryable() => self.wait_in_queue(&claim, &deadline, true),
                Err(e) => Err(e),
            },
            // (It may move to a fresh token or nonce: see there.)
            Waiting::Quorum => self.wait_for_quorum(&mut claim, &deadline),
        };
        let won = match attempt {
            Ok(won) => won,
            Err(err) => {
                if matches!(err, LockError::Interrupted) {
                    // The wait already cleaned up after itself.
                } else if err.is_not_replicated() {
                    // Taken on the master only: a failover could lose it.
                    // (An undo left pending is sent again later: this
                    // acquire ends with `err` either way.)
                    let _ = self.undo(&claim);
                } else if err.is_connection_error() && self.topology.servers_per_key() == 1 {
                    // The command may have run: the token may hold the lock
                    // or sit in the queue. (Over several servers the try
                    // was undone where it may have written, and what did
                    // not answer is an orphan already.)
                    let id = (&claim.token[..], claim.nonce());
                    abandon_later(&self.topology, &self.keys, id, vec![true], self.ttl_ms);
                }
                return Err(err);
            }
        };
        match won {
            Some(Won { fence, sent }) => {
                self.adopt(claim, fence, sent);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// One try on every server of the key at once: held when a quorum
    /// accepted it and the lease left, counted from the send, is positive
    /// (a reply read after a long pause of this process may come too late:
    /// the lease may have ended and been given to someone else). A failed
    /// or late try is undone on every server that may have accepted it.
    fn try_once(&mut self, claim: &Claim) -> Result<Option<Won>> {
        if self.topology.servers_per_key() == 1 {
            return match self.try_single(claim)? {
                Tried::Won(won) => Ok(Some(won)),
                Tried::Lost => Ok(None),
                Tried::Late => {
                    // No wait follows with this token: an undo left
                    // pending is sent again later (and before this key's
                    // next acquire).
                    let _ = self.undo(claim);
                    Ok(None)
                }
            };
        }
        let ttl_ms = self.ttl_ms;
        let sent = Instant::now();
        let votes = self.run(Role::Command, &|attempt| self.try_request(claim, attempt));
        let in_time = |votes: &Votes<Option<Fence>>| {
            votes.agree(Option::is_some) && self.topology.validity(ttl_ms, sent.elapsed()).is_some()
        };
        if in_time(&votes) {
            return Ok(Some(Won { fence: None, sent }));
        }
        let _ = self.undo_where(claim, &votes.may_have_written(Option::is_some));
        votes.decided()?;
        Ok(None)
    }

    /// One plain try on the one server of the key (single server,
    /// Sentinel, Cluster), before a wait: a win too late to count on is
    /// left to the wait ([`Tried::Late`]), not undone.
    fn try_single(&mut self, claim: &Claim) -> Result<Tried> {
        let ttl_ms = self.ttl_ms;
        let sent = Instant::now();
        let votes = self.run(Role::Command, &|attempt| self.try_request(claim, attempt));
        Ok(Tried::of(
            votes.into_single()?,
            sent,
            ttl_ms,
            &self.topology,
        ))
    }

    /// The plain try's request (`SET NX PX`, or its script with fencing,
    /// `replicas` or a nonce).
    fn try_request(&self, claim: &Claim, attempt: Attempt) -> Call<Option<Fence>> {
        let (keys, ttl_ms) = (&*self.keys, self.ttl_ms);
        let (token, nonce, fencing) = (&claim.token, claim.nonce(), self.options.fencing);
        self.acked(
            lock_calls::try_acquire(keys, token, nonce, ttl_ms, fencing, attempt),
            Option::is_some,
        )
    }

    /// Takes back a failed or ended attempt of `claim` on every server at
    /// once (leaves queues, releases what it took); the failure of an undo
    /// that a server left unanswered (see [`Lock::undo_where`]).
    pub(super) fn undo(&self, claim: &Claim) -> Option<LockError> {
        self.undo_where(claim, &vec![true; self.topology.servers_per_key()])
    }

    /// Takes back a lost try of `claim` on the servers that `on` marks, at
    /// once: those where the try may have written (it said it took the
    /// lock, or gave no reply). Never where the key held the token before
    /// the try: another lock object with the same `owner` holds it there,
    /// and undoing would release that hold (its nonce differs, and a try
    /// that found the key held never wrote one). What a server does not
    /// answer stays pending ([`pending`]): then its failure is returned,
    /// and the claim must not win again (the resend would release what it
    /// wins).
    pub(super) fn undo_where(&self, claim: &Claim, on: &[bool]) -> Option<LockError> {
        if !on.contains(&true) {
            return None;
        }
        let votes = self.abandon_where(claim, on);
        let unanswered: Vec<bool> = votes.oks().into_iter().map(|ok| !ok).collect();
        if !unanswered.contains(&true) {
            return None;
        }
        let id = (&claim.token[..], claim.nonce());
        abandon_later(&self.topology, &self.keys, id, unanswered, self.ttl_ms);
        Some(votes.failure())
    }

    /// Runs `abandon` of `claim` on the servers that `on` marks, all at
    /// once; the others count as answered (nothing to undo there).
    fn abandon_where(&self, claim: &Claim, on: &[bool]) -> Votes<bool> {
        let (token, nonce) = (&claim.token[..], claim.nonce());
        let keys = &*self.keys;
        let successor = successor_on(&self.topology);
        let scriptless = self.scriptless();
        self.topology.run_where(
            Role::Command,
            &keys.lock,
            on,
            false,
            &|_| match scriptless {
                Some(how) => crate::protocol::scriptless::abandon(keys, token, how),
                None => lock_calls::abandon(keys, token, nonce, successor),
            },
        )
    }

    /// Before the first acquire on a server in this process: makes sure the
    /// server runs scripts and lets this user run what they run (release
    /// needs them), so that a refusal comes before anything is taken. A
    /// server that refuses scripts but compares and deletes without them
    /// is used without them: then how ([`scriptless`]).
    fn check_scripts(&self) -> Result<Option<CompareDelete>> {
        let votes = match self
            .topology
            .check_scripts(&self.keys.lock, Permitted::Lock(&self.keys))
        {
            Checked::Passed => return Ok(None),
            Checked::Scriptless(how) => return Ok(Some(how)),
            Checked::Ran(votes) => votes,
        };
        if let Some(refused) = votes.refused() {
            if let Some(how) = self.detect_scriptless(&refused)? {
                return Ok(Some(how));
            }
            return Err(self.sentinel_named(refused));
        }
        votes.decided().map(|_| None)
    }

    /// A server that refuses our scripts may be a Sentinel named as a
    /// Redis server (Sentinels know no EVALSHA): then that is the error,
    /// with what to write instead; otherwise `refused` itself.
    fn sentinel_named(&self, refused: LockError) -> LockError {
        let votes = self.run(Role::Command, &|_| lock_calls::role());
        let names = self.topology.names();
        match votes.replies() {
            Ok(roles) => match roles.iter().position(|r| r.as_deref() == Some("sentinel")) {
                Some(at) => LockError::Server {
                    server: names.get(at).cloned().unwrap_or_default(),
                    detail: "this is a Sentinel, not a Redis server (ROLE says \"sentinel\"): \
                             list the Sentinels and set option \"sentinel\" to the name of \
                             the master group, and redislock finds the master through them"
                        .into(),
                },
                None => refused,
            },
            Err(_) => refused,
        }
    }

    /// Joins the process's existing hold of this key, if it is still ours in
    /// Redis. A hold found lost is dropped from the table. True when joined.
    fn reenter(&mut self) -> Result<bool> {
        if !self.options.reentrant {
            return Ok(false);
        }
        let context = host::context();
        let entry = match self.write_entry() {
            Some(entry) => Some(entry),
            None => table::find(self.topology.scope(), &self.keys.lock, context),
        };
        let Some(entry) = entry else {
            return Ok(false);
        };
        let Kind::Write { keys, .. } = &entry.kind else {
            return Ok(false);
        };
        let ttl_ms = self.ttl_ms;
        let scriptless = entry.topology.scriptless(&keys.lock);
        // Without scripts the lease is set, not raised: to no less than
        // what this process knows is left of it.
        let at_least = ttl_ms.max(entry.lease.valid_for().as_millis() as u64);
        let effect = match scriptless {
            Some(_) => Effect::Sets(at_least),
            None => Effect::AtLeast(ttl_ms),
        };
        let sent = entry.lease.send(effect, entry.topology.drift(at_least));
        let votes = entry
            .topology
            .run(Role::Command, &keys.lock, &|_| match scriptless {
                Some(_) => crate::protocol::scriptless::refresh(&keys.lock, &entry.token, at_least),
                None => lock_calls::reenter(
                    &keys.lock,
                    entry.fence_key(),
                    &entry.token,
                    entry.nonce(),
                    ttl_ms,
                ),
            });
        let ours = match votes.decided() {
            Ok(votes) => votes.agree(|ours| *ours),
            Err(err) => {
                entry.lease.unanswered(&sent);
                return Err(err);
            }
        };
        let drift = |ms: u64| entry.topology.drift(ms);
        if entry.lease.answered(&sent, ours, &drift) == Applied::NotOurs
            || entry.lease.valid_for().is_zero()
        {
            // Gone, or this process was paused past the lease it set.
            entry.lease.found_lost();
            table::remove(entry.id);
            self.held = Held::None;
            return Ok(false);
        }
        table::join_id(entry.id);
        self.held = match self.held {
            Held::Write { id, own } if id == entry.id => Held::Write { id, own: own + 1 },
            _ => Held::Write {
                id: entry.id,
                own: 1,
            },
        };
        Ok(true)
    }

    /// Records a hold of `claim`, won by a request sent at `sent`, as this
    /// object's, and starts renewing it with `auto_renew`. `restored`: a
    /// hold taken over from its token, whose remaining lease is unknown
    /// (a first renewal is asked for at once) and which Redis has not yet
    /// said is ours (not a lost lease if found not ours before).
    pub(super) fn adopt(&mut self, claim: Claim, fence: Fence, sent: Instant) {
        self.adopt_hold(claim, fence, sent, false);
    }

    /// [`Lock::adopt`], or with `restored` a hold taken over from a token
    /// (renewed at once when renewed at all: Redis never confirmed it).
    fn adopt_hold(&mut self, claim: Claim, fence: Fence, sent: Instant, restored: bool) {
        let Claim { token, nonce } = claim;
        let drift = self.topology.drift(self.ttl_ms);
        let lease = Lease::new(
            self.ttl_ms,
            sent,
            drift,
            self.options.on_lost == OnLost::Interrupt,
            !restored,
            Primitive::Lock,
        );
        if self.options.auto_renew {
            worker::renew(
                Job {
                    topology: self.topology.clone(),
                    key: self.keys.lock.clone(),
                    what: Renewed::Lock {
                        fence_key: fence.map(|_| self.keys.fence.clone()),
                        nonce: nonce.clone(),
                    },
                    token: token.clone(),
                    max_hold: self.options.max_hold,
                    // Restored: the lease left is unknown, renewed at once.
                    first_in: restored.then_some(Duration::ZERO),
                },
                lease.clone(),
            );
        }
        let id = table::insert(Entry {
            id: 0,
            kind: Kind::Write {
                keys: self.keys.clone(),
                fence,
            },
            token,
            nonce,
            count: 1,
            auto_release: self.options.auto_release,
            topology: self.topology.clone(),
            lease,
            renewed: self.options.auto_renew,
            restored,
            reentrant: self.options.reentrant,
            context: host::context(),
            replicas: self.replicas(),
        });
        self.held = Held::Write { id, own: 1 };
    }

    /// Takes over a hold made elsewhere (another process, a previous
    /// request) from its token. When this process (this Fiber) holds the
    /// key under that token already, a reentrant lock joins that hold
    /// (nothing is sent); with `reentrant => false` it is a hold of its
    /// own, whose release frees the key in Redis. Otherwise one round trip
    /// reads which hold the token has now (`Lock::nonce_of`): the
    /// restored hold is that one, never a later hold of the same token.
    /// Nothing is believed of it before Redis answers a command of it.
    pub fn restore(&mut self, token: Vec<u8>) -> Result<()> {
        token::validate_token(&token)?;
        let joined = match self.options.reentrant {
            true => table::find(self.topology.scope(), &self.keys.lock, host::context()),
            // Not reentrant: a hold of its own, even beside this process's.
            false => None,
        };
        if let Some(entry) = joined {
            if entry.token != token {
                return Err(LockError::Unsupported(format!(
                    "this process already holds lock \"{}\" under another token; \
                     release it before restoring a different hold",
                    String::from_utf8_lossy(&self.key)
                )));
            }
            table::join_id(entry.id);
            self.held = Held::Write {
                id: entry.id,
                own: 1,
            };
            return Ok(());
        }
        let nonce = Some(self.nonce_of(&token)?);
        // The remaining lease is unknown: counted as a whole ttl from now,
        // asked for at once by the renewal thread with auto_renew, and
        // never believed without asking before an extension is answered.
        self.adopt_hold(Claim { token, nonce }, None, Instant::now(), true);
        Ok(())
    }

    /// The nonce of the hold that `token` has now (`K~~o`, one `MGET` with
    /// the key on every server): where a quorum agrees, the value kept
    /// beside the token, or empty when the key holds the token without one
    /// (a hold of a random token, of Laravel's own lock, of another tool),
    /// or nobody holds it under that token (then no later hold of it, all
    /// of which keep a nonce, is ever taken for this one).
    fn nonce_of(&self, token: &[u8]) -> Result<Vec<u8>> {
        let keys = &*self.keys;
        let votes = self.run(Role::Command, &|_| lock_calls::owner_and_nonce(keys));
        let quorum = votes.quorum();
        let seen: Vec<Vec<u8>> = votes
            .replies()?
            .into_iter()
            .flatten()
            .filter(|(owner, _)| owner.as_deref() == Some(token))
            .map(|(_, nonce)| nonce.unwrap_or_default())
            .collect();
        Ok(seen
            .iter()
            .find(|n| seen.iter().filter(|m| m == n).count() >= quorum)
            .cloned()
            .unwrap_or_default())
    }
}

/// What a plain try on one server found.
enum Tried {
    /// The lock is ours, in time.
    Won(Won),
    /// Held by someone else.
    Lost,
    /// Taken, but the reply came after the lease, counted from the send,
    /// had ended: it may be someone else's by now.
    Late,
}

impl Tried {
    /// A try sent at `sent` that answered `won` (its fencing token when
    /// it took the lock).
    fn of(won: Option<Fence>, sent: Instant, ttl_ms: u64, topology: &Topology) -> Self {
        match won {
            Some(fence) if topology.validity(ttl_ms, sent.elapsed()).is_some() => {
                Tried::Won(Won { fence, sent })
            }
            Some(_) => Tried::Late,
            None => Tried::Lost,
        }
    }
}
