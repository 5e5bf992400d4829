//! `RedisLock\Semaphore`: at most N holders of one name at once, each with
//! a lease of its own, over the same topologies and executor as the lock
//! (single server, Sentinel, Cluster; Redlock is refused).
//!
//! The protocol (`lib/semaphore.lua`, docs/protocol.md "Semaphores"):
//! holders live in a sorted set scored by the end of their lease (by the
//! client's clock), so a crashed holder's permit comes back when its lease
//! ends; waiters queue in arrival order with the lock's queue helpers and
//! sleep on `BLPOP` with their next step behind it; a release hands its
//! permit straight to the first live waiter (FIFO), whose step claims it.
//!
//! A permit is a counted hold of the lease engine ([`crate::lease`]): taken
//! by [`Counter`], kept in the process's one table of holds (request end,
//! Fibers, fork, pending releases), renewed with `auto_renew` by the lease
//! thread, and asked about, extended and given back as every hold is
//! ([`hold`]).

use std::sync::Arc;
use std::time::Duration;

use crate::config::duration;
use crate::config::names;
use crate::config::options::{LockOptions, OnLost};
use crate::error::{LockError, Result};
use crate::host;
use crate::lease::counted::{Counter, Taken};
use crate::lease::hold;
use crate::lease::table::{self, Entry};
use crate::protocol::counted::SemKeys;
use crate::protocol::token;
use crate::stats::{Primitive, Tally};
use crate::topology::Topology;

/// Most permits one semaphore may have.
pub const MAX_PERMITS: i64 = 1_000_000;

/// Most permits one acquire may take at once (each is a member of the
/// holders' sorted set: the scripts' work grows with it).
pub const MAX_COUNT: i64 = 1_000;

/// What `__debugInfo` shows of a semaphore (no secrets).
#[derive(Debug, Clone)]
pub struct SemaphoreInfo {
    /// The user's name.
    pub name: Vec<u8>,
    /// The holders' key as stored in Redis.
    pub redis_key: Vec<u8>,
    /// Number of permits.
    pub permits: u32,
    /// Lease length in seconds.
    pub ttl: f64,
    /// Servers, passwords masked.
    pub servers: Vec<String>,
    /// Whether this object holds a permit (local knowledge).
    pub acquired: bool,
}

/// N permits under one name.
#[derive(Debug)]
pub struct Semaphore {
    name: Vec<u8>,
    keys: Arc<SemKeys>,
    permits: u32,
    ttl_ms: u64,
    topology: Arc<Topology>,
    options: LockOptions,
    /// The id of this object's hold in the process's table.
    hold: Option<u64>,
}

impl Semaphore {
    /// Validates everything and builds a semaphore. Sends nothing to Redis.
    pub fn new(
        name: Vec<u8>,
        permits: i64,
        ttl: f64,
        servers: &[String],
        options: LockOptions,
    ) -> Result<Self> {
        names::validate("name", &name, &options.prefix)?;
        if !(1..=MAX_PERMITS).contains(&permits) {
            return Err(LockError::invalid(
                "permits",
                format!("must be between 1 and {MAX_PERMITS}"),
            ));
        }
        let ttl_ms = duration::ttl_ms("ttl", ttl)?;
        options.validate()?;
        for (set, option, why) in [
            (
                options.on_lost == OnLost::Interrupt,
                "on_lost",
                "\"interrupt\" is for locks only; withPermit() throws LockLostException \
                 after its callback when the permit was lost",
            ),
            (
                options.fencing,
                "fencing",
                "semaphores give no fencing tokens",
            ),
            (
                options.owner.is_some(),
                "owner",
                "every permit has a fresh random token",
            ),
            (
                options.replicas > 0,
                "replicas",
                "semaphores do not wait for replicas yet",
            ),
        ] {
            if set {
                return Err(LockError::invalid(
                    format!("option \"{option}\""),
                    format!("is not supported by RedisLock\\Semaphore: {why}"),
                ));
            }
        }
        if servers.is_empty() {
            return Err(LockError::invalid("servers", "must not be empty"));
        }
        let topology = Topology::build(servers, &options.topology())?;
        if topology.servers_per_key() > 1 {
            return Err(LockError::Unsupported(
                "RedisLock\\Semaphore does not run over several independent servers (Redlock): \
                 counting holders needs one server that decides, and there is no quorum \
                 implementation for semaphores yet; use one server, Sentinel or Cluster"
                    .into(),
            ));
        }
        let redis_name = topology.lock_key(&options.prefix, &name)?;
        Ok(Self {
            keys: Arc::new(SemKeys::new(&redis_name)),
            name,
            permits: permits as u32,
            ttl_ms,
            topology,
            options,
            hold: None,
        })
    }

    /// The user's name, without prefix.
    pub fn name(&self) -> &[u8] {
        &self.name
    }

    /// The number of permits.
    pub fn permits(&self) -> u32 {
        self.permits
    }

    /// How this semaphore's permits are taken.
    fn counter(&self) -> Counter<'_> {
        Counter {
            keys: &self.keys,
            permits: self.permits,
            ttl_ms: self.ttl_ms,
            topology: &self.topology,
            options: &self.options,
        }
    }

    /// This object's permit, if it still has one and it belongs to the
    /// calling context (PHP Fiber).
    fn held(&mut self) -> Option<Entry> {
        let Some(entry) = table::get(self.hold?) else {
            self.hold = None;
            return None;
        };
        (entry.context == host::context()).then_some(entry)
    }

    /// Takes a permit, waiting up to `wait` for one. One round trip when a
    /// permit is free; otherwise the caller queues and sleeps until a
    /// release hands it a permit (or a lease may have ended, or
    /// `retry_delay` passed). PHP's time limit ends the wait with `false`,
    /// as for a lock ([`crate::Lock::acquire`]).
    ///
    /// An object holds at most one hold: acquiring again while it holds
    /// one is an error (use another object for another). One whose lease
    /// is over holds none.
    pub fn acquire(&mut self, wait: Duration) -> Result<bool> {
        self.acquire_permits(wait, 1)
    }

    /// [`Semaphore::acquire`] of `count` permits at once (1 to the
    /// semaphore's permits, and at most `MAX_COUNT`), first come, first
    /// served as Go's `semaphore.Weighted`: a waiter asking more than is
    /// free holds the ones behind it. They are released, refreshed and
    /// renewed together.
    pub fn acquire_permits(&mut self, wait: Duration, count: i64) -> Result<bool> {
        let tally = Tally::start(Primitive::Permit);
        let result = self.acquire_uncounted(wait, count);
        tally.finish(&self.name, wait, &result);
        result
    }

    /// [`Semaphore::acquire_permits`], uncounted.
    fn acquire_uncounted(&mut self, wait: Duration, count: i64) -> Result<bool> {
        let max = MAX_COUNT.min(i64::from(self.permits));
        if !(1..=max).contains(&count) {
            return Err(LockError::invalid(
                "count",
                format!(
                    "must be between 1 and {max} (the semaphore's {} permits, at most \
                     {MAX_COUNT} at once)",
                    self.permits
                ),
            ));
        }
        let count = count as u32;
        if let Some(entry) = self.held() {
            if !entry.lease.valid_for().is_zero() {
                return Err(LockError::Unsupported(format!(
                    "this RedisLock\\Semaphore object already holds a permit of \"{}\"; \
                     release it first, or use another object for another permit",
                    String::from_utf8_lossy(&self.name)
                )));
            }
            entry.lease.found_lost();
            table::remove(entry.id);
            self.hold = None;
        }
        let token = token::new_token()?.into_bytes();
        let counter = self.counter();
        match counter.acquire(&token, count, wait)? {
            Taken::Won(sent) => {
                let id = counter.adopt(token, count, sent);
                self.hold = Some(id);
                Ok(true)
            }
            Taken::Out => Ok(false),
            Taken::Mismatch(stored) => Err(LockError::Unsupported(format!(
                "semaphore \"{}\" has {stored} permits in Redis, but this object was built with \
                 {}: every user of one semaphore must pass the same $permits",
                String::from_utf8_lossy(&self.name),
                self.permits
            ))),
        }
    }

    /// Gives this object's permits back, all of them (one round trip). True
    /// when it held them and they were still its own in Redis. A release that Redis
    /// did not answer fails; the permit is over for this object, and the
    /// release is finished later.
    pub fn release(&mut self) -> Result<bool> {
        let Some(entry) = self.held() else {
            return Ok(false);
        };
        self.hold = None;
        table::remove(entry.id);
        hold::release(&entry)
    }

    /// Called when the object goes away: gives the permit back with
    /// `auto_release` (errors swallowed: a release that got no answer is
    /// finished later).
    pub fn abandon(&mut self) {
        if let Some(id) = self.hold.take()
            && let Some(entry) = table::remove(id)
            && entry.auto_release
        {
            let _ = hold::release(&entry);
        }
    }

    /// Sets our lease to `ttl` seconds (default: the semaphore's ttl) if the
    /// permit is still ours; later renewals keep that length. False when it
    /// is not.
    pub fn refresh(&mut self, ttl: Option<f64>) -> Result<bool> {
        let ttl_ms = match ttl {
            Some(seconds) => duration::ttl_ms("ttl", seconds)?,
            None => self.ttl_ms,
        };
        match self.held() {
            Some(entry) => hold::extend(&entry, ttl_ms),
            None => Ok(false),
        }
    }

    /// Whether the permit is still ours: by this process's clock, then,
    /// with `auto_renew`, from the renewal thread's knowledge (no round
    /// trip: a renewal that found it gone marked it lost), else asking
    /// Redis (one round trip).
    pub fn is_acquired(&mut self) -> Result<bool> {
        match self.held() {
            Some(entry) => hold::is_ours(&entry),
            None => Ok(false),
        }
    }

    /// Seconds left on our lease; `None` when the permit is not ours. Never
    /// more than this process's clock gives it.
    pub fn remaining_ttl(&mut self) -> Result<Option<f64>> {
        match self.held() {
            Some(entry) => hold::left(&entry),
            None => Ok(None),
        }
    }

    /// True when this object holds a permit (in the calling Fiber):
    /// `withPermit()` ends whatever its callback left.
    pub fn holds(&mut self) -> bool {
        self.held().is_some()
    }

    /// A snapshot for `var_dump`.
    pub fn info(&mut self) -> SemaphoreInfo {
        SemaphoreInfo {
            name: self.name.clone(),
            redis_key: self.keys.holders.clone(),
            permits: self.permits,
            ttl: self.ttl_ms as f64 / 1000.0,
            servers: self.topology.names(),
            acquired: self.held().is_some(),
        }
    }
}

impl Drop for Semaphore {
    fn drop(&mut self) {
        self.abandon();
    }
}
