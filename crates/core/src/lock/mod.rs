//! One lock as a PHP `RedisLock` object sees it: a key, a lease length, a
//! topology and options, plus this object's one hold: none, a share of the
//! process's write hold of the key, or a read hold ([`Held`]).
//!
//! Everything here is written against [`Topology`]: a call runs on every
//! server that holds the key and its [`Votes`] decide. A blocked acquire
//! waits as the topology says ([`crate::topology::Waiting`]): [`handover`] on one master,
//! [`quorum`] over Redlock. What a hold is, and what is done with it once
//! held, is the lease engine's ([`crate::lease`]); a hold belongs to the
//! PHP Fiber that took it, for every method.

mod acquire;
mod checkup;
mod handover;
mod inspect;
mod quorum;
mod read;
mod scriptless;

use std::sync::Arc;
use std::time::Instant;

use crate::config::duration;
use crate::config::names;
use crate::config::options::LockOptions;
use crate::error::{LockError, Result};
use crate::host;
use crate::lease::hold;
use crate::lease::table::{self, Entry, Left};
use crate::protocol::call::{Attempt, Call};
use crate::protocol::keys::{self, LockKeys};
use crate::protocol::lock_calls::{self, Fence};
use crate::protocol::token;
use crate::topology::{Role, Topology, Votes};
pub use checkup::{Capability, Finding, NodeCheckup, Severity};
pub use inspect::{HoldMode, Inspection, SemaphoreInspection};

/// An acquire that won: the hold's fencing token, and when the request that
/// won it was sent (its lease is counted from then).
#[derive(Debug, Clone, Copy)]
struct Won {
    fence: Fence,
    sent: Instant,
}

/// What a write hold is in Redis: the owner token its key holds and, when
/// that token is not the hold's own (option `owner`: every hold of the
/// object writes the same one), a nonce of the hold, kept beside it in
/// `K~~o` for its lease. Every command of the hold compares both, so a
/// release, refresh or clean-up of an older hold of the same owner, held
/// up in flight or resent, never acts on a newer one.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Claim {
    token: Vec<u8>,
    nonce: Option<Vec<u8>>,
}

impl Claim {
    /// A new hold's claim: the `owner` token with a fresh nonce, or a
    /// fresh random token (which nobody else ever holds: no nonce).
    fn fresh(owner: Option<&[u8]>) -> Result<Self> {
        Ok(match owner {
            Some(owner) => Self {
                token: owner.to_vec(),
                nonce: Some(token::new_token()?.into_bytes()),
            },
            None => Self {
                token: token::new_token()?.into_bytes(),
                nonce: None,
            },
        })
    }

    /// The same owner's next claim: a fresh nonce for a fixed owner, a
    /// fresh token otherwise.
    fn renew(&mut self) -> Result<()> {
        let fresh = token::new_token()?.into_bytes();
        match &mut self.nonce {
            Some(nonce) => *nonce = fresh,
            None => self.token = fresh,
        }
        Ok(())
    }

    /// The nonce, if the hold has one.
    fn nonce(&self) -> Option<&[u8]> {
        self.nonce.as_deref()
    }
}

/// This object's hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    /// None.
    None,
    /// A share of the process's write hold of the key (entry `id` in the
    /// table; `own` acquires made through this object, not yet released).
    Write { id: u64, own: u32 },
    /// A read hold (entry `id` in the table).
    Read { id: u64 },
}

/// A distributed lock on one key.
#[derive(Debug)]
pub struct Lock {
    key: Vec<u8>,
    keys: Arc<LockKeys>,
    ttl_ms: u64,
    topology: Arc<Topology>,
    options: LockOptions,
    held: Held,
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
        names::validate("key", &key, &options.prefix)?;
        let ttl_ms = duration::ttl_ms("ttl", ttl)?;
        options.validate()?;
        if servers.is_empty() {
            return Err(LockError::invalid("servers", "must not be empty"));
        }
        let topology = Topology::build(servers, &options.topology())?;
        let keys = topology.lock_keys(&options.prefix, &key)?;
        Ok(Self {
            key,
            keys,
            ttl_ms,
            topology,
            options,
            held: Held::None,
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

    /// Runs a call on every server of this lock's key.
    fn run<T>(&self, role: Role, build: &dyn Fn(Attempt) -> Call<T>) -> Votes<T> {
        self.topology.run(role, &self.keys.lock, build)
    }

    /// `call` followed by `WAIT` in the same request when option
    /// `replicas` asks for acknowledged writes (see [`hold::acked`]).
    fn acked<T>(&self, call: Call<T>, needed: fn(&T) -> bool) -> Call<T> {
        hold::acked(self.replicas(), call, needed)
    }

    /// Option `replicas` and how long `WAIT` may take: three quarters of
    /// the read timeout, so the reply still arrives within it.
    fn replicas(&self) -> (u32, std::time::Duration) {
        (self.options.replicas, self.options.read_timeout * 3 / 4)
    }

    /// This object's hold, if it still has one and it belongs to the
    /// calling context (PHP Fiber): a hold taken in another Fiber is not
    /// this one's to use. A hold that left the table (released elsewhere,
    /// request end, fork) is forgotten.
    fn entry(&mut self) -> Option<Entry> {
        let id = match self.held {
            Held::None => return None,
            Held::Write { id, .. } | Held::Read { id } => id,
        };
        let Some(entry) = table::get(id) else {
            self.held = Held::None;
            return None;
        };
        (entry.context == host::context()).then_some(entry)
    }

    /// This object's write hold (see [`Lock::entry`]).
    fn write_entry(&mut self) -> Option<Entry> {
        self.entry().filter(Entry::is_write)
    }

    /// True when this object holds the lock (to write or read) in the
    /// calling context: `withLock()` ends whatever its callback left.
    pub fn holds(&mut self) -> bool {
        self.entry().is_some()
    }

    /// Releases one acquire (a read hold: gives it back). Redis is released
    /// (compare-and-delete, one round trip) at the last release of the
    /// process's hold.
    ///
    /// True when we held it and our hold is now released; false when this
    /// object held nothing (in this Fiber) or the lease was no longer ours
    /// in Redis. A release that Redis did not answer fails; the hold is
    /// over for this object, and the release is finished later.
    pub fn release(&mut self) -> Result<bool> {
        let Some(entry) = self.entry() else {
            return Ok(false);
        };
        match self.held {
            Held::Read { id } => {
                self.held = Held::None;
                table::remove(id);
                hold::release(&entry)
            }
            Held::Write { id, own } => match table::leave(id, 1) {
                Left::NotHeld => {
                    self.held = Held::None;
                    Ok(false)
                }
                Left::StillHeld | Left::Kept => {
                    self.held = match own {
                        1 => Held::None,
                        own => Held::Write { id, own: own - 1 },
                    };
                    Ok(true)
                }
                Left::Last(entry) => {
                    self.held = Held::None;
                    hold::release(&entry)
                }
            },
            Held::None => Ok(false),
        }
    }

    /// Called when the object goes away: drops this object's hold, and
    /// releases in Redis if it was the last share and `auto_release` is on.
    /// Errors are swallowed (there is nobody to report them to); a release
    /// that got no answer is finished later. With `auto_release` off, an
    /// auto-renewed write hold whose last object this was is renewed on
    /// (the holds table's `let_go`) until a release or refresh of its key and token
    /// from any object, a force-release, its loss or the request end.
    pub fn abandon(&mut self) {
        match std::mem::replace(&mut self.held, Held::None) {
            Held::Write { id, own } => {
                if let Left::Last(entry) = table::let_go(id, own)
                    && entry.auto_release
                {
                    let _ = hold::release(&entry);
                }
            }
            Held::Read { id } => {
                if let Some(entry) = table::remove(id)
                    && entry.auto_release
                {
                    let _ = hold::release(&entry);
                }
            }
            Held::None => {}
        }
    }

    /// Whether anyone holds the lock now (the key exists on a quorum of its
    /// servers), whoever it is. One `GET` on every server of the key.
    pub fn is_locked(&mut self) -> Result<bool> {
        let key = &self.keys.lock;
        let votes = self.run(Role::Command, &|_| lock_calls::owner(key));
        Ok(votes.decided()?.agree(Option::is_some))
    }

    /// Whether the hold (write or read) is still ours. False once it is
    /// over by this process's clock (counted from the send of the request
    /// that won or last extended it); otherwise, with `auto_renew`, from
    /// the renewal thread's knowledge (no round trip), else asks Redis.
    pub fn is_acquired(&mut self) -> Result<bool> {
        match self.entry() {
            Some(entry) => hold::is_ours(&entry),
            None => Ok(false),
        }
    }

    /// Sets our lease to `ttl` seconds (default: the lock's ttl) if it is
    /// still ours; later renewals keep that length. False when it is not.
    pub fn refresh(&mut self, ttl: Option<f64>) -> Result<bool> {
        let ttl_ms = match ttl {
            Some(seconds) => duration::ttl_ms("ttl", seconds)?,
            None => self.ttl_ms,
        };
        let Some(entry) = self.entry() else {
            return Ok(false);
        };
        if entry.is_write() {
            // A hold of this key and token left renewing by its gone
            // objects stops: the lease is the one set here from now on.
            table::end_left(entry.topology.scope(), entry.key(), &entry.token);
        }
        hold::extend(&entry, ttl_ms)
    }

    /// The process-wide id of this object's write hold, if it holds one.
    pub fn hold_id(&mut self) -> Option<u64> {
        self.write_entry().map(|e| e.id)
    }

    /// Seconds left on our lease; `None` when it is not ours; infinity
    /// when someone removed the key's expiry. Over several servers: the
    /// lease that a quorum of them still gives us.
    pub fn remaining_ttl(&mut self) -> Result<Option<f64>> {
        match self.entry() {
            Some(entry) => hold::left(&entry),
            None => Ok(None),
        }
    }

    /// The owner token of the current write hold.
    pub fn token(&mut self) -> Option<Vec<u8>> {
        self.write_entry().map(|e| e.token)
    }

    /// The fencing token of the current hold (option `fencing`; `None` for
    /// a hold taken over with [`Lock::restore`]).
    pub fn fencing_token(&mut self) -> Option<i64> {
        self.write_entry().and_then(|e| e.fence())
    }

    /// Deletes the lock whoever holds it, writer or readers (one `DEL` of
    /// the key and its readers on every server). Every hold of this process
    /// on the key is forgotten first, its renewal stopped before the `DEL`
    /// is sent (as a release does): a renewal round on its way finds the
    /// key gone because of it, which is no lost lease. True when a key was
    /// deleted.
    pub fn force_release(&mut self) -> Result<bool> {
        table::forget(self.topology.scope(), &self.keys.lock);
        self.held = Held::None;
        let lock = &*self.keys;
        let readers = keys::readers_key(&lock.lock);
        let votes = self.run(Role::Command, &|_| {
            lock_calls::force_release(lock, &readers)
        });
        Ok(votes.decided()?.count(|deleted| *deleted) > 0)
    }

    /// A snapshot for `var_dump`.
    pub fn info(&mut self) -> LockInfo {
        let entry = self.entry();
        let shared = entry.as_ref().is_some_and(|e| !e.is_write());
        LockInfo {
            key: self.key.clone(),
            redis_key: self.keys.lock.clone(),
            ttl: self.ttl_ms as f64 / 1000.0,
            servers: self.topology.names(),
            acquired: entry.is_some(),
            shared,
            token: entry.filter(Entry::is_write).map(|e| e.token),
            hold_count: match self.held {
                Held::Write { own, .. } => own,
                Held::Read { .. } => 1,
                Held::None => 0,
            },
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        self.abandon();
    }
}

/// True when the hold `id` is auto-renewed and the renewal thread found its
/// lease lost (the binding's `on_lost => "interrupt"`).
pub fn hold_lost(id: u64) -> bool {
    table::is_lost(id)
}
