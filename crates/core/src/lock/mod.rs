//! One lock as a PHP `RedisLock` object sees it: a key, a lease length, a
//! topology and options, plus this object's share of a process-wide hold.
//!
//! Everything here is written against [`Topology`]: a call runs on every
//! server that holds the key and its [`Votes`] decide. A blocked acquire
//! waits as the topology says ([`Waiting`]): [`handover`] on one master,
//! [`quorum`] over Redlock.

mod handover;
pub mod holds;
mod inspect;
mod quorum;
mod read;
mod scope;
mod scriptless;

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::config::duration;
use crate::config::options::{LockOptions, OnLost};
use crate::error::{LockError, Result};
use crate::host;
use crate::lease::belief::{Applied, Effect, Lease};
use crate::lease::pending;
use crate::lease::renewal::{self, Job, Renewed};
use crate::net::pool::Role;
use crate::process::stats::{self, Counter};
use crate::protocol::call::{Attempt, Call};
use crate::protocol::commands::{self, Fence, Released, Successor};
use crate::protocol::keys::{self, LockKeys};
use crate::protocol::scriptless::CompareDelete;
use crate::protocol::token;
use crate::topology::{Topology, Votes, Waiting};
use holds::{Entry, Left};
pub use inspect::{HoldMode, Inspection, SemaphoreInspection};
pub use scope::end_request_scope;

/// How long after a hold's lease its pending release or clean-up is still
/// sent ([`pending`]): extensions on their way may still have run.
const PENDING_MARGIN: Duration = Duration::from_secs(5);

/// Longest key accepted, in bytes (prefix excluded).
pub const MAX_KEY_LEN: usize = 64 * 1024;

/// An acquire that won: the hold's fencing token, and when the request that
/// won it was sent (its lease is counted from then).
#[derive(Debug, Clone, Copy)]
struct Won {
    fence: Fence,
    sent: Instant,
}

/// What an object contributes to a hold in the process-wide table.
#[derive(Debug, Clone, Copy)]
struct Share {
    /// Entry id in [`holds`].
    id: u64,
    /// Acquires made through this object and not yet released.
    own: u32,
}

/// A distributed lock on one key.
#[derive(Debug)]
pub struct Lock {
    key: Vec<u8>,
    keys: Arc<LockKeys>,
    ttl_ms: u64,
    topology: Arc<Topology>,
    options: LockOptions,
    share: Option<Share>,
    /// This object's read holds (`acquireRead()`), built on first use.
    readers: Option<crate::semaphore::Semaphore>,
}

/// What `__debugInfo` shows of a lock (no secrets).
#[derive(Debug, Clone)]
pub struct LockInfo {
    /// The user's key.
    pub key: Vec<u8>,
    /// The key as stored in Redis.
    pub redis_key: Vec<u8>,
    /// Lease length in seconds.
    pub ttl: f64,
    /// Servers, passwords masked.
    pub servers: Vec<String>,
    /// Whether this object currently holds the lock (local knowledge).
    pub acquired: bool,
    /// Whether that hold is a read hold (`acquireRead()`), shared with
    /// other readers.
    pub shared: bool,
    /// The owner token of the current hold.
    pub token: Option<Vec<u8>>,
    /// Reentrant acquires made through this object and not yet released.
    pub hold_count: u32,
}

impl Lock {
    /// Validates everything and builds a lock. Sends nothing to Redis.
    ///
    /// `servers` are URLs; `ttl` is the lease in seconds.
    pub fn new(key: Vec<u8>, ttl: f64, servers: &[String], options: LockOptions) -> Result<Self> {
        if key.is_empty() {
            return Err(LockError::invalid("key", "must not be empty"));
        }
        if key.len() > MAX_KEY_LEN {
            return Err(LockError::invalid(
                "key",
                format!("must be at most {MAX_KEY_LEN} bytes long"),
            ));
        }
        let ttl_ms = duration::ttl_ms("ttl", ttl)?;
        options.validate()?;
        if servers.is_empty() {
            return Err(LockError::invalid("servers", "must not be empty"));
        }
        if keys::has_separator(&key) {
            return Err(LockError::invalid(
                "key",
                "must not contain \"~~\": redislock's helper keys use it",
            ));
        }
        if keys::has_separator(&[&options.prefix[..], &key[..]].concat()) {
            return Err(LockError::invalid(
                "key",
                "must not start with \"~\" when the prefix ends with \"~\": the lock name \
                 (prefix + key) would contain \"~~\", which redislock's helper keys use",
            ));
        }
        let topology = Topology::build(servers, &options)?;
        let keys = topology.lock_keys(&options.prefix, &key)?;
        Ok(Self {
            key,
            keys,
            ttl_ms,
            topology,
            options,
            share: None,
            readers: None,
        })
    }

    /// The user's key, without prefix.
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// The options the lock was built with.
    pub fn options(&self) -> &LockOptions {
        &self.options
    }

    /// Tries to take the lock, waiting up to `wait` for it to become free.
    ///
    /// When this process already holds the key (through this or another
    /// object) the hold is counted after one round trip that confirms the
    /// lease is still ours and makes it last at least this lock's ttl.
    /// Otherwise, with no wait: one `SET NX PX` on every server of the key
    /// at once. With a wait: as the topology says ([`Waiting`]). `stop` is
    /// polled after every wake-up timeout; when it returns true the wait
    /// ends early with `false` (the binding uses it for PHP's execution
    /// time limit).
    pub fn acquire(&mut self, mut wait: Duration, stop: &dyn Fn() -> bool) -> Result<bool> {
        stats::add(Counter::Acquires);
        let started = Instant::now();
        if let Some(promoted) = self.promote(wait, stop) {
            match promoted {
                Ok(true) => stats::add(Counter::Acquired),
                // Still a reader: other readers hold the lock.
                Ok(false) if self.read_hold().is_some() => {}
                // The read hold was gone (its lease ran out): nothing to
                // promote, so a plain acquire with what is left of the wait,
                // as on an object whose write hold was lost.
                Ok(false) => {
                    wait = wait.saturating_sub(started.elapsed());
                    return self.acquire_free(wait, stop, started);
                }
                Err(_) => {}
            }
            return promoted;
        }
        self.acquire_free(wait, stop, started)
    }

    /// [`Lock::acquire`] on an object that holds no read hold.
    fn acquire_free(
        &mut self,
        wait: Duration,
        stop: &dyn Fn() -> bool,
        started: Instant,
    ) -> Result<bool> {
        if self.reenter()? {
            stats::add(Counter::Acquired);
            return Ok(true);
        }
        // Earlier work on this key that Redis did not answer goes first.
        pending::flush(self.topology.scope(), &self.keys.lock)?;
        let scriptless = self.check_scripts()?;
        if scriptless.is_some() && self.options.fencing {
            return Err(self.fencing_refused());
        }
        let token = match &self.options.owner {
            Some(owner) => owner.0.clone(),
            None => token::new_token()?.into_bytes(),
        };
        let attempt = match self.topology.waiting() {
            _ if scriptless.is_some() => self.acquire_scriptless(&token, wait, stop),
            _ if wait.is_zero() => self.try_once(&token),
            // A free lock is taken with the plain try first (one SET, what
            // the recipe costs); only a lock found held costs the queue.
            Waiting::HandOver => match self.try_once(&token) {
                Ok(None) => self.wait_in_queue(&token, wait, stop),
                other => other,
            },
            Waiting::Quorum => self.wait_for_quorum(&token, wait, stop),
        };
        let won = match attempt {
            Ok(won) => won,
            Err(err) => {
                if matches!(err, LockError::Interrupted) {
                    // The wait already cleaned up after itself.
                } else if err.is_not_replicated() {
                    // Taken on the master only: a failover could lose it.
                    self.undo(&token);
                } else if err.is_connection_error() && self.topology.servers_per_key() == 1 {
                    // The command may have run: the token may hold the lock
                    // or sit in the queue. (Over several servers the try
                    // was undone where it may have written, and what did
                    // not answer is an orphan already.)
                    abandon_later(&self.topology, &self.keys, &token, vec![true], self.ttl_ms);
                }
                return Err(err);
            }
        };
        match won {
            Some(Won { fence, sent }) => {
                self.adopt(token, fence, sent);
                stats::add(Counter::Acquired);
                stats::wait(started.elapsed());
                Ok(true)
            }
            None => {
                if wait.is_zero() {
                    stats::add(Counter::Contended);
                } else {
                    stats::add(Counter::Timeouts);
                }
                Ok(false)
            }
        }
    }

    /// One try on every server of the key at once: held when a quorum
    /// accepted it and the lease left, counted from the send, is positive
    /// (a reply read after a long pause of this process may come too late:
    /// the lease may have ended and been given to someone else). A failed
    /// or late try is undone on every server that may have accepted it.
    fn try_once(&mut self, token: &[u8]) -> Result<Option<Won>> {
        let fencing = self.options.fencing;
        let keys = &*self.keys;
        let ttl_ms = self.ttl_ms;
        let sent = Instant::now();
        let votes = self.run(Role::Command, &|attempt| {
            self.acked(
                commands::try_acquire(keys, token, ttl_ms, fencing, attempt),
                Option::is_some,
            )
        });
        let in_time = |votes: &Votes<Option<Fence>>| {
            votes.agree(Option::is_some) && self.topology.validity(ttl_ms, sent.elapsed()).is_some()
        };
        if votes.is_single() {
            let won = votes.into_single()?;
            if let Some(fence) = won {
                if self.topology.validity(ttl_ms, sent.elapsed()).is_some() {
                    return Ok(Some(Won { fence, sent }));
                }
                self.undo(token);
            }
            return Ok(None);
        }
        if in_time(&votes) {
            return Ok(Some(Won { fence: None, sent }));
        }
        self.undo_where(token, &votes.may_have_written(Option::is_some));
        votes.decided()?;
        Ok(None)
    }

    /// Takes back a failed or ended attempt of `token` on every server at
    /// once (leaves queues, releases what it took).
    fn undo(&mut self, token: &[u8]) {
        self.undo_where(token, &vec![true; self.topology.servers_per_key()]);
    }

    /// Takes back a lost try of `token` on the servers that `on` marks, at
    /// once: those where the try may have written (it said it took the
    /// lock, or gave no reply). Never where the key held the token before
    /// the try: another lock object with the same `owner` holds it there,
    /// and undoing would release that hold. What a server does not answer
    /// stays pending ([`pending`]).
    fn undo_where(&mut self, token: &[u8], on: &[bool]) {
        if !on.contains(&true) {
            return;
        }
        let votes = self.abandon_where(token, on);
        let unanswered: Vec<bool> = votes.oks().into_iter().map(|ok| !ok).collect();
        if unanswered.contains(&true) {
            abandon_later(&self.topology, &self.keys, token, unanswered, self.ttl_ms);
        }
    }

    /// Runs `abandon` of `token` on the servers that `on` marks, all at
    /// once; the others count as answered (nothing to undo there).
    fn abandon_where(&self, token: &[u8], on: &[bool]) -> Votes<bool> {
        let keys = &*self.keys;
        let successor = self.successor();
        let scriptless = self.scriptless();
        self.topology.run_where(
            Role::Command,
            &keys.lock,
            on,
            false,
            &|_| match scriptless {
                Some(how) => crate::protocol::scriptless::abandon(keys, token, how),
                None => commands::abandon(keys, token, successor),
            },
        )
    }

    /// `call` followed by `WAIT` in the same request when option
    /// `replicas` asks for acknowledged writes: a result that `needed`
    /// accepts (an acquire that won, a refresh that extended) then fails as
    /// [`crate::ConnectionFailure::NotReplicated`] unless enough replicas
    /// acknowledged it within three quarters of the read timeout (so the
    /// reply still arrives within it).
    fn acked<T>(&self, call: Call<T>, needed: fn(&T) -> bool) -> Call<T> {
        match self.options.replicas {
            0 => call,
            replicas => call.acknowledged(replicas, self.options.read_timeout * 3 / 4, needed),
        }
    }

    /// How a release here treats the next waiter.
    fn successor(&self) -> Successor {
        successor_on(&self.topology)
    }

    /// Runs a call on every server of this lock's key.
    fn run<T>(&self, role: Role, build: &dyn Fn(Attempt) -> Call<T>) -> Votes<T> {
        self.topology.run(role, &self.keys.lock, build)
    }

    /// Before the first acquire on a server in this process: makes sure the
    /// server runs scripts and lets this user run what they run (release
    /// needs them), so that a refusal comes before anything is taken. A
    /// server that refuses scripts but compares and deletes without them
    /// is used without them: then how ([`scriptless`]).
    fn check_scripts(&self) -> Result<Option<CompareDelete>> {
        let key = &self.keys.lock;
        if self.topology.scripts_checked(key) {
            return Ok(None);
        }
        if let Some(how) = self.scriptless() {
            return Ok(Some(how));
        }
        let keys = &*self.keys;
        let votes = self.run(Role::Command, &|_| commands::check_scripts(keys));
        if let Some(refused) = votes.refused() {
            if let Some(how) = self.detect_scriptless(&refused)? {
                return Ok(Some(how));
            }
            return Err(self.sentinel_named(refused));
        }
        self.topology.mark_scripts_checked(key, &votes.oks());
        votes.decided().map(|_| None)
    }

    /// A server that refuses our scripts may be a Sentinel named as a
    /// Redis server (Sentinels know no EVALSHA): then that is the error,
    /// with what to write instead; otherwise `refused` itself.
    fn sentinel_named(&self, refused: LockError) -> LockError {
        let votes = self.run(Role::Command, &|_| commands::role());
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
        let entry = match self.live_entry().filter(|e| e.context == context) {
            Some(entry) => Some(entry),
            None => holds::find(self.topology.scope(), &self.keys.lock, context),
        };
        let Some(entry) = entry else {
            return Ok(false);
        };
        let ttl_ms = self.ttl_ms;
        let scriptless = entry.topology.scriptless(&entry.keys.lock);
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
            .run(Role::Command, &entry.keys.lock, &|_| match scriptless {
                Some(_) => {
                    crate::protocol::scriptless::refresh(&entry.keys.lock, &entry.token, at_least)
                }
                None => {
                    commands::reenter(&entry.keys.lock, entry.fence_key(), &entry.token, ttl_ms)
                }
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
            holds::remove(entry.id);
            self.share = None;
            return Ok(false);
        }
        holds::join_id(entry.id);
        match self.share.as_mut() {
            Some(share) => share.own += 1,
            None => {
                self.share = Some(Share {
                    id: entry.id,
                    own: 1,
                })
            }
        }
        Ok(true)
    }

    /// Records a hold of `token`, won by a request sent at `sent`, as this
    /// object's, and starts renewing it with `auto_renew`. `restored`: a
    /// hold taken over from its token, whose remaining lease is unknown
    /// (a first renewal is asked for at once) and which Redis has not yet
    /// said is ours (not a lost lease if found not ours before).
    fn adopt(&mut self, token: Vec<u8>, fence: Fence, sent: Instant) {
        self.adopt_hold(token, fence, sent, false);
    }

    /// [`Lock::adopt`], or with `restored` a hold taken over from a token
    /// (renewed at once when renewed at all: Redis never confirmed it).
    fn adopt_hold(&mut self, token: Vec<u8>, fence: Fence, sent: Instant, restored: bool) {
        let drift = self.topology.drift(self.ttl_ms);
        let lease = Lease::new(
            self.ttl_ms,
            sent,
            drift,
            self.options.on_lost == OnLost::Interrupt,
            !restored,
        );
        if self.options.auto_renew {
            renewal::renew(
                Job {
                    topology: self.topology.clone(),
                    key: self.keys.lock.clone(),
                    what: Renewed::Lock {
                        fence_key: fence.map(|_| self.keys.fence.clone()),
                    },
                    token: token.clone(),
                    max_hold: self.options.max_hold,
                    // Restored: the lease left is unknown, renewed at once.
                    first_in: restored.then_some(Duration::ZERO),
                },
                lease.clone(),
            );
        }
        let id = holds::insert(Entry {
            id: 0,
            keys: self.keys.clone(),
            token,
            count: 1,
            auto_release: self.options.auto_release,
            topology: self.topology.clone(),
            fence,
            lease,
            renewed: self.options.auto_renew,
            restored,
            reentrant: self.options.reentrant,
            context: host::context(),
        });
        self.share = Some(Share { id, own: 1 });
    }

    /// Takes over a hold made elsewhere (another process, a previous
    /// request) from its token. Sends nothing to Redis. When this process
    /// (this Fiber) holds the key under that token already, a reentrant
    /// lock joins that hold; with `reentrant => false` it is a hold of its
    /// own, whose release frees the key in Redis.
    pub fn restore(&mut self, token: Vec<u8>) -> Result<()> {
        token::validate_token(&token)?;
        let joined = match self.options.reentrant {
            true => holds::find(self.topology.scope(), &self.keys.lock, host::context()),
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
            holds::join_id(entry.id);
            self.share = Some(Share {
                id: entry.id,
                own: 1,
            });
            return Ok(());
        }
        // The remaining lease is unknown: counted as a whole ttl from now,
        // and asked for at once by the renewal thread with auto_renew.
        self.adopt_hold(token, None, Instant::now(), true);
        Ok(())
    }

    /// Releases one acquire. Redis is released (compare-and-delete, one
    /// round trip) at the last release of the process's hold.
    ///
    /// True when we held it and our hold is now released; false when this
    /// object held nothing or the lease was no longer ours in Redis.
    pub fn release(&mut self) -> Result<bool> {
        if let Some(readers) = self.read_hold() {
            return readers.release();
        }
        let Some(share) = self.share.as_mut() else {
            return Ok(false);
        };
        // A hold belongs to the context (PHP Fiber) that took it: another
        // one sharing this object releases nothing.
        if holds::context_of(share.id).is_some_and(|c| c != host::context()) {
            return Ok(false);
        }
        match holds::leave(share.id, 1) {
            Left::NotHeld => {
                self.share = None;
                Ok(false)
            }
            Left::StillHeld | Left::Kept => {
                share.own -= 1;
                if share.own == 0 {
                    self.share = None;
                }
                Ok(true)
            }
            Left::Last(entry) => {
                self.share = None;
                release_entry(&entry)
            }
        }
    }

    /// Called when the object goes away: drops this object's share, and
    /// releases in Redis if it was the last one and `auto_release` is on.
    /// Errors are swallowed (there is nobody to report them to); the lease
    /// then ends by itself. With `auto_release` off, an auto-renewed hold
    /// whose last object this was is renewed on ([`holds::let_go`]) until
    /// a release or refresh of its key and token from any object, a
    /// force-release, its loss or the request end.
    pub fn abandon(&mut self) {
        if let Some(share) = self.share.take()
            && let Left::Last(entry) = holds::let_go(share.id, share.own)
            && entry.auto_release
        {
            let _ = release_entry(&entry);
        }
    }

    /// The process's entry for this object's hold, if it still has one.
    fn live_entry(&mut self) -> Option<Entry> {
        let entry = holds::get(self.share?.id);
        if entry.is_none() {
            self.share = None;
        }
        entry
    }

    /// Whether anyone holds the lock now (the key exists on a quorum of its
    /// servers), whoever it is. One `GET` on every server of the key.
    pub fn is_locked(&mut self) -> Result<bool> {
        let key = &self.keys.lock;
        let votes = self.run(Role::Command, &|_| commands::owner(key));
        Ok(votes.decided()?.agree(Option::is_some))
    }

    /// Whether the lease is still ours. False once it is over by this
    /// process's clock (counted from the send of the request that won or
    /// last extended it); otherwise, with `auto_renew`, from the renewal
    /// thread's knowledge (no round trip), else asks Redis (one `GET` on
    /// every server of the key).
    pub fn is_acquired(&mut self) -> Result<bool> {
        if let Some(readers) = self.read_hold() {
            return readers.is_acquired();
        }
        let Some(entry) = self.live_entry() else {
            return Ok(false);
        };
        if entry.lease.valid_for().is_zero() {
            entry.lease.found_lost();
            return Ok(false);
        }
        if entry.renewed {
            return Ok(true);
        }
        let votes = entry.topology.run(Role::Command, &entry.keys.lock, &|_| {
            commands::owner(&entry.keys.lock)
        });
        // Still within the lease when the answer came: a pause during the
        // round trip may have outlasted it.
        let ours = entry.lease.confirmed_if(
            votes
                .decided()?
                .agree(|owner| owner.as_deref() == Some(&entry.token[..])),
        ) && !entry.lease.valid_for().is_zero();
        if !ours {
            entry.lease.found_lost();
        }
        Ok(ours)
    }

    /// Sets our lease to `ttl` seconds (default: the lock's ttl) if it is
    /// still ours. False when it is not.
    pub fn refresh(&mut self, ttl: Option<f64>) -> Result<bool> {
        // A read hold's lease defaults to the same ttl (its engine has the
        // lock's) and is checked the same way.
        if let Some(readers) = self.read_hold() {
            return readers.refresh(ttl);
        }
        let ttl_ms = match ttl {
            Some(seconds) => duration::ttl_ms("ttl", seconds)?,
            None => self.ttl_ms,
        };
        let Some(entry) = self.live_entry() else {
            return Ok(false);
        };
        // A hold of this key and token left renewing by its gone objects
        // stops: the lease is the one set here from now on.
        holds::end_left(entry.topology.scope(), &entry.keys.lock, &entry.token);
        let scriptless = entry.topology.scriptless(&entry.keys.lock);
        let sent = entry
            .lease
            .send(Effect::Sets(ttl_ms), entry.topology.drift(ttl_ms));
        let votes = entry.topology.run(Role::Command, &entry.keys.lock, &|_| {
            let call = match scriptless {
                Some(_) => {
                    crate::protocol::scriptless::refresh(&entry.keys.lock, &entry.token, ttl_ms)
                }
                None => {
                    commands::refresh(&entry.keys.lock, entry.fence_key(), &entry.token, ttl_ms)
                }
            };
            self.acked(call, |ok| *ok)
        });
        let ours = match votes.decided() {
            Ok(votes) => votes.agree(|ok| *ok),
            Err(err) => {
                entry.lease.unanswered(&sent);
                return Err(err);
            }
        };
        // An auto-renewed hold keeps the lease length asked for here, and
        // is renewed next at a third of it.
        let drift = |ms: u64| entry.topology.drift(ms);
        let extended = entry.lease.answered(&sent, ours, &drift) != Applied::NotOurs
            && !entry.lease.valid_for().is_zero();
        if extended {
            renewal::wake();
        } else {
            entry.lease.found_lost();
        }
        Ok(extended)
    }

    /// The process-wide id of this object's hold, if it holds the lock.
    pub fn hold_id(&mut self) -> Option<u64> {
        self.live_entry().map(|e| e.id)
    }

    /// Seconds left on our lease; `None` when it is not ours;
    /// infinity when someone removed the key's expiry. Over several
    /// servers: the lease that a quorum of them still gives us.
    pub fn remaining_ttl(&mut self) -> Result<Option<f64>> {
        if let Some(readers) = self.read_hold() {
            return readers.remaining_ttl();
        }
        let Some(entry) = self.live_entry() else {
            return Ok(None);
        };
        if entry.topology.scriptless(&entry.keys.lock).is_some() {
            return scriptless::remaining_ttl(&entry);
        }
        let votes = entry.topology.run(Role::Command, &entry.keys.lock, &|_| {
            commands::owned_pttl(&entry.keys.lock, &entry.token)
        });
        let quorum = votes.quorum();
        let mut leases: Vec<i64> = votes
            .replies()?
            .into_iter()
            .flatten()
            .flatten()
            .map(|ms| if ms < 0 { i64::MAX } else { ms })
            .collect();
        if leases.len() < quorum {
            return Ok(None);
        }
        entry.lease.confirmed();
        leases.sort_unstable_by(|a, b| b.cmp(a));
        let ms = leases[quorum - 1];
        if ms == i64::MAX {
            return Ok(Some(f64::INFINITY));
        }
        // Never more than this process's clock gives the lease.
        let ours = entry.lease.valid_for();
        if ours.is_zero() {
            entry.lease.found_lost();
            return Ok(None);
        }
        Ok(Some((ms as f64 / 1000.0).min(ours.as_secs_f64())))
    }

    /// The owner token of the current hold.
    pub fn token(&mut self) -> Option<Vec<u8>> {
        self.live_entry().map(|e| e.token)
    }

    /// The fencing token of the current hold (option `fencing`; `None` for
    /// a hold taken over with [`Lock::restore`]).
    pub fn fencing_token(&mut self) -> Option<i64> {
        self.live_entry().and_then(|e| e.fence)
    }

    /// Deletes the lock whoever holds it, writer or readers (one `DEL` of
    /// the key and its readers on every server). Any
    /// hold of this process on the key is forgotten first, its renewal
    /// stopped before the `DEL` is sent (as a release does): a renewal
    /// round on its way finds the key gone because of it, which is no lost
    /// lease. True when a key was deleted.
    pub fn force_release(&mut self) -> Result<bool> {
        holds::forget(self.topology.scope(), &self.keys.lock);
        self.share = None;
        if let Some(readers) = self.read_hold() {
            readers.forget();
        }
        let key = &self.keys.lock;
        let readers = keys::readers_key(key);
        let votes = self.run(Role::Command, &|_| commands::force_release(key, &readers));
        Ok(votes.decided()?.count(|deleted| *deleted) > 0)
    }

    /// A snapshot for `var_dump`.
    pub fn info(&mut self) -> LockInfo {
        let entry = self.live_entry();
        let shared = self.read_hold().is_some();
        LockInfo {
            key: self.key.clone(),
            redis_key: self.keys.lock.clone(),
            ttl: self.ttl_ms as f64 / 1000.0,
            servers: self.topology.names(),
            acquired: entry.is_some() || shared,
            shared,
            token: entry.map(|e| e.token),
            hold_count: if shared {
                1
            } else {
                self.share.map_or(0, |s| s.own)
            },
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        self.abandon();
    }
}

/// How a release on `topology` treats the next waiter.
fn successor_on(topology: &Topology) -> Successor {
    match topology.waiting() {
        Waiting::HandOver => Successor::HandOver,
        Waiting::Quorum => Successor::Wake,
    }
}

/// Compare-and-delete of one entry on every server of its key.
///
/// A release whose reply was lost is sent again; when that replay finds
/// the lock no longer ours, the first try may have released it, or the
/// lease may have ended before it arrived. No log in Redis tells which:
/// this process's clock does. Sent while the lease still lasted, the first
/// try ended a hold that was ours until then, and the release counts;
/// sent after, the lease had already ended and the release reports it lost.
fn release_entry(entry: &Entry) -> Result<bool> {
    if let Some(how) = entry.topology.scriptless(&entry.keys.lock) {
        return scriptless::release_entry(entry, how);
    }
    let successor = successor_on(&entry.topology);
    let in_lease = !entry.lease.valid_for().is_zero();
    let fenced = entry.fence.is_some();
    // The last command of the hold: a renewal's reply that comes later
    // changes nothing.
    entry.lease.send(Effect::Ends, Duration::ZERO);
    let votes = entry
        .topology
        .run(Role::Command, &entry.keys.lock, &|attempt| {
            commands::release(&entry.keys, &entry.token, successor, fenced, attempt)
        });
    // What a server did not answer is finished later: the hold never stays
    // behind in Redis because a reply was lost.
    let owed: Vec<bool> = votes.oks().into_iter().map(|ok| !ok).collect();
    if owed.contains(&true) {
        let ttl_ms = entry.lease.ttl_ms();
        abandon_later(&entry.topology, &entry.keys, &entry.token, owed, ttl_ms);
    }
    let released = votes.decided()?.agree(|found| match found {
        Released::Yes => true,
        Released::GoneOnReplay => in_lease,
        Released::NotOurs => false,
    });
    if released {
        stats::add(Counter::Releases);
    } else {
        entry.lease.found_lost();
    }
    Ok(released)
}

/// Leaves the clean-up of `token` (leave the queue, free the lock if the
/// token holds it, as a release does) on the servers of `keys` that `owed`
/// marks to the lease thread ([`pending`]), until they answer or a lease
/// of `ttl_ms` is surely over.
fn abandon_later(
    topology: &Arc<Topology>,
    keys: &Arc<LockKeys>,
    token: &[u8],
    owed: Vec<bool>,
    ttl_ms: u64,
) {
    let key = keys.lock.clone();
    let (on, keys, token) = (topology.clone(), keys.clone(), token.to_vec());
    let successor = successor_on(topology);
    let resend: pending::Resend = Box::new(move |owed| {
        let scriptless = on.scriptless(&keys.lock);
        on.run_where(
            Role::Command,
            &keys.lock,
            owed,
            false,
            &|_| match scriptless {
                Some(how) => crate::protocol::scriptless::abandon(&keys, &token, how),
                None => commands::abandon(&keys, &token, successor),
            },
        )
        .into_results()
        .into_iter()
        .map(|r| r.map(drop))
        .collect()
    });
    let lasts = Duration::from_millis(ttl_ms) + PENDING_MARGIN;
    pending::add(topology, key, owed, lasts, resend);
}

/// True when the hold `id` is auto-renewed and the renewal thread found its
/// lease lost (the binding's `on_lost => "interrupt"`).
pub fn hold_lost(id: u64) -> bool {
    holds::is_lost(id)
}

/// Releases every hold still open in this request (the calling thread's)
/// whose `auto_release` is on, and forgets the others (request end). Returns how many were released
/// in Redis. Errors are ignored: the leases then end by themselves.
pub fn release_all() -> usize {
    holds::drain()
        .into_iter()
        .filter(|entry| entry.auto_release)
        .filter(|entry| matches!(release_entry(entry), Ok(true)))
        .count()
}
