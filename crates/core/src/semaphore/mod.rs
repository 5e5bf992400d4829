//! `RedisLock\Semaphore`: at most N holders of one name at once, each with
//! a lease of its own, over the same topologies and executor as the lock
//! (single server, Sentinel, Cluster; Redlock is refused).
//!
//! The protocol (`lib/semaphore.lua`, docs/protocol.md "Semaphores"):
//! holders live in a sorted set scored by the end of their lease (by the
//! client's clock), so a crashed holder's permit comes back when its lease
//! ends; waiters queue in arrival order with the lock's queue helpers and
//! sleep on `BLPOP`; a release hands its permit straight to the first live
//! waiter (FIFO) and wakes it.
//!
//! Holds of this process are kept in a table with one list per request
//! (per PHP thread, [`PerThread`]), so that the request end releases them (also after a fatal error, which skips
//! destructors) and a forked child never believes it holds its parent's
//! permits. With `auto_renew` the lock's renewal thread
//! ([`crate::lease::renewal`]) keeps a permit's lease, in the same batches
//! as the locks of that server (`sem_refresh.lua`), until its release,
//! the object's end, the request end or `max_hold`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::config::duration;
use crate::config::options::{LockOptions, OnLost};
use crate::error::{LockError, Result};
use crate::lease::belief::{Applied, Effect, Lease};
use crate::lease::pending;
use crate::lease::queue::{self, Steps, Waited};
use crate::lease::renewal::{self, Job, Renewed};
use crate::net::pool::Role;
use crate::process::PerThread;
use crate::protocol::call::{Attempt, Call};
use crate::protocol::keys::{self, LockKeys};
use crate::protocol::semaphore as calls;
use crate::protocol::step::{Mode, Step};
use crate::protocol::{commands, readers, token};
use crate::topology::Topology;
use calls::SemKeys;

/// Most permits one semaphore may have.
pub const MAX_PERMITS: i64 = 1_000_000;

/// One permit held by this process.
#[derive(Debug, Clone)]
struct Hold {
    id: u64,
    topology: Arc<Topology>,
    keys: Arc<SemKeys>,
    token: Vec<u8>,
    /// What this process knows of the lease, on its monotonic clock
    /// (counted from the send of the request that won or last extended
    /// it); with `auto_renew` the renewal thread keeps it up to date.
    lease: Arc<Lease>,
    /// Renewed by the renewal thread (option `auto_renew`).
    renewed: bool,
    auto_release: bool,
}

/// The permits this process holds, per thread (request); a forked child
/// starts with none.
static HOLDS: PerThread<Hold> = PerThread::new();

fn next_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

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
        if name.is_empty() {
            return Err(LockError::invalid("name", "must not be empty"));
        }
        if name.len() > crate::lock::MAX_KEY_LEN {
            return Err(LockError::invalid(
                "name",
                format!("must be at most {} bytes long", crate::lock::MAX_KEY_LEN),
            ));
        }
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
        if keys::has_separator(&name) || keys::has_separator(&[&options.prefix[..], &name].concat())
        {
            return Err(LockError::invalid(
                "name",
                "must not contain \"~~\" (also not across prefix and name): \
                 redislock's helper keys use it",
            ));
        }
        let topology = Topology::build(servers, &options)?;
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

    /// The engine of the read holds of the lock whose keys are `lock`
    /// (`crate::lock::read`): no number of permits, the lock's ttl,
    /// topology and options (the lock checks which of them read holds
    /// accept).
    pub(crate) fn readers_of(
        name: Vec<u8>,
        lock: &LockKeys,
        ttl_ms: u64,
        topology: Arc<Topology>,
        options: LockOptions,
    ) -> Self {
        Self {
            name,
            keys: Arc::new(SemKeys::readers(lock)),
            permits: 0,
            ttl_ms,
            topology,
            options,
            hold: None,
        }
    }

    /// Forgets this object's hold without a word to Redis (the lock was
    /// force-released).
    pub(crate) fn forget(&mut self) {
        if let Some(id) = self.hold.take() {
            remove(id);
        }
    }

    /// The user's name, without prefix.
    pub fn name(&self) -> &[u8] {
        &self.name
    }

    /// The number of permits.
    pub fn permits(&self) -> u32 {
        self.permits
    }

    /// Whether this object holds a permit (local knowledge: no round trip).
    pub fn holds(&mut self) -> bool {
        self.held().is_some()
    }

    /// Runs a call on the server that holds the semaphore.
    fn on_master<T>(&self, role: Role, build: &dyn Fn(Attempt) -> Call<T>) -> Result<T> {
        self.topology.run_on(0, role, &self.keys.holders, build)
    }

    /// This object's hold, if it still has one.
    fn held(&mut self) -> Option<Hold> {
        let id = self.hold?;
        let found = HOLDS.with_owner(|h| h.id == id, |holds, at| holds[at].clone());
        if found.is_none() {
            self.hold = None;
        }
        found
    }

    /// Takes a permit, waiting up to `wait` for one. One round trip when a
    /// permit is free; otherwise the caller queues and sleeps until a
    /// release hands it a permit (or a lease may have ended, or
    /// `retry_delay` passed). `stop` is asked between wake-ups; true ends
    /// the wait with `false`.
    ///
    /// An object holds at most one permit: acquiring again while it holds
    /// one is an error (use another object for another permit).
    pub fn acquire(&mut self, wait: Duration, stop: &dyn Fn() -> bool) -> Result<bool> {
        if self.held().is_some() {
            return Err(LockError::Unsupported(format!(
                "this RedisLock\\Semaphore object already holds a permit of \"{}\"; \
                 release it first, or use another object for another permit",
                String::from_utf8_lossy(&self.name)
            )));
        }
        let token = token::new_token()?.into_bytes();
        self.acquire_as(token, wait, stop)
    }

    /// [`Semaphore::acquire`] under a token chosen by the caller: a fresh
    /// one, or for a lock's read hold the token of this process's write
    /// hold of that lock (which `read_acquire.lua` turns into a read hold).
    pub(crate) fn acquire_as(
        &mut self,
        token: Vec<u8>,
        wait: Duration,
        stop: &dyn Fn() -> bool,
    ) -> Result<bool> {
        self.check_scripts()?;
        // Earlier work on this name that Redis did not answer (a release,
        // an acquire's clean-up) goes first: this object's own permit never
        // fills the semaphore against it.
        pending::flush(self.topology.scope(), &self.keys.base)?;
        let steps = Counted {
            sem: self,
            token: &token,
            alive_ms: queue::alive_window(self.options.retry_delay),
            arrival: calls::now_us(),
        };
        // A replay (lost reply) finds its first try's holder entry; a try
        // that met departed waiters in the way (dropped) goes again.
        let (tried, sent) = loop {
            let sent = Instant::now();
            match self.on_master(Role::Command, &|_| steps.step(Mode::Try, false)) {
                Ok(Step::Again) => {}
                tried => break (tried, sent),
            }
        };
        let won = match tried {
            Ok(Step::Won { left_ms, .. }) => self.in_time(sent, left_ms, &steps),
            Ok(Step::Waiting { .. }) if wait.is_zero() => None,
            Ok(Step::Waiting { .. }) => match self.wait(&steps, wait, stop) {
                Ok(Waited::Won { sent, .. }) => Some(sent),
                Ok(Waited::Mismatch(n)) => return Err(self.mismatch(n)),
                Ok(Waited::Out | Waited::Gone) => None,
                Err(err) => {
                    if err.is_connection_error() {
                        // Its clean-up may not have reached the server.
                        give_back_later(&self.topology, &self.keys, &token, self.ttl_ms);
                    }
                    return Err(err);
                }
            },
            Ok(Step::Mismatch(n)) => return Err(self.mismatch(n)),
            Ok(Step::GaveUp | Step::Gone | Step::Again) => None,
            Err(err) => {
                if err.is_connection_error() {
                    // It may have taken a permit: given back later.
                    give_back_later(&self.topology, &self.keys, &token, self.ttl_ms);
                }
                return Err(err);
            }
        };
        match won {
            Some(sent) => {
                self.adopt(token, sent);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Waits in the queue with `steps` (the lease engine's loop).
    fn wait(&self, steps: &dyn Steps, wait: Duration, stop: &dyn Fn() -> bool) -> Result<Waited> {
        queue::wait_in_queue(
            &queue::Wait {
                topology: &self.topology,
                ttl_ms: self.ttl_ms,
                retry_delay: self.options.retry_delay,
                wait,
                stop,
            },
            steps,
        )
    }

    /// For a lock's read hold: turns it into the write hold of `lock` once
    /// no other reader holds the lock, waiting up to `wait` (in the lock's
    /// queue as a writer, so new readers wait behind). Returns the token
    /// and when the winning request was sent, the read hold then forgotten
    /// here (the lock adopts the token); `None` when other readers still
    /// hold it (the read hold stays), or when the read hold was found gone.
    pub(crate) fn promote(
        &mut self,
        lock: &LockKeys,
        wait: Duration,
        stop: &dyn Fn() -> bool,
    ) -> Result<Option<(Vec<u8>, Instant)>> {
        let Some(hold) = self.held() else {
            return Ok(None);
        };
        let steps = Promotion {
            sem: self,
            lock,
            token: &hold.token,
            alive_ms: queue::alive_window(self.options.retry_delay),
            arrival: calls::now_us(),
        };
        let sent = Instant::now();
        let outcome = match self.on_master(Role::Command, &|_| steps.step(Mode::Try, false))? {
            Step::Won { left_ms, .. } => self.in_time(sent, left_ms, &steps),
            Step::Waiting { .. } if !wait.is_zero() => match self.wait(&steps, wait, stop)? {
                Waited::Won { sent, .. } => Some(sent),
                Waited::Gone => {
                    self.lost(&hold);
                    return Ok(None);
                }
                Waited::Out | Waited::Mismatch(_) => None,
            },
            Step::Gone => {
                self.lost(&hold);
                return Ok(None);
            }
            _ => None,
        };
        let Some(sent) = outcome else {
            // Still a reader, unless the lease ended meanwhile.
            if hold.lease.valid_for().is_zero() {
                self.lost(&hold);
            }
            return Ok(None);
        };
        remove(hold.id);
        self.hold = None;
        Ok(Some((hold.token, sent)))
    }

    /// Before this process's first acquire on the semaphore's server: makes
    /// sure the server runs scripts and (Redis 7.0+) lets this user run
    /// every command the semaphore's scripts run, so that a user who could
    /// take a permit but not give it back is refused before any permit is
    /// taken (as a lock's first acquire is).
    fn check_scripts(&self) -> Result<()> {
        let key = &self.keys.holders;
        if self.topology.semaphore_checked(key) {
            return Ok(());
        }
        let keys = &*self.keys;
        self.on_master(Role::Command, &|_| calls::check_scripts(keys))?;
        self.topology.mark_semaphore_checked(key);
        Ok(())
    }

    /// Records a permit of `token`, won by a request sent at `sent`, as this
    /// object's, and starts renewing it with `auto_renew`.
    fn adopt(&mut self, token: Vec<u8>, sent: Instant) {
        let ttl_ms = self.ttl_ms;
        let lease = Lease::new(ttl_ms, sent, Duration::ZERO, false, true);
        if self.options.auto_renew {
            renewal::renew(
                Job {
                    topology: self.topology.clone(),
                    key: self.keys.holders.clone(),
                    what: Renewed::Permit {
                        keys: self.keys.clone(),
                    },
                    token: token.clone(),
                    max_hold: self.options.max_hold,
                    first_in: None,
                },
                lease.clone(),
            );
        }
        let id = next_id();
        let hold = Hold {
            id,
            topology: self.topology.clone(),
            keys: self.keys.clone(),
            token,
            lease,
            renewed: self.options.auto_renew,
            auto_release: self.options.auto_release,
        };
        HOLDS.with(|holds| holds.push(hold));
        self.hold = Some(id);
    }

    /// A hold won by a plain try sent at `sent` counts only if its lease is
    /// not over when the reply is read (nor, for one that was ours
    /// already, what it had left: [`Step::Won`]'s `left_ms`); otherwise it
    /// is given back. Returns the send to count the lease from.
    fn in_time(&self, sent: Instant, left_ms: Option<u64>, steps: &dyn Steps) -> Option<Instant> {
        let lease = left_ms.map_or(self.ttl_ms, |left| left.min(self.ttl_ms));
        if sent.elapsed() < Duration::from_millis(lease) {
            return Some(sent);
        }
        let _ = self.on_master(Role::Command, &|_| steps.give_back(false));
        None
    }

    fn mismatch(&self, stored: i64) -> LockError {
        LockError::Unsupported(format!(
            "semaphore \"{}\" has {stored} permits in Redis, but this object was built with {}: \
             every user of one semaphore must pass the same $permits",
            String::from_utf8_lossy(&self.name),
            self.permits
        ))
    }

    /// Gives this object's permit back (one round trip). True when it held
    /// one and the permit was still its own in Redis.
    pub fn release(&mut self) -> Result<bool> {
        let Some(hold) = self.held() else {
            return Ok(false);
        };
        self.hold = None;
        remove(hold.id);
        release_hold(&hold)
    }

    /// Called when the object goes away: gives the permit back with
    /// `auto_release` (errors swallowed: the lease then ends by itself).
    pub fn abandon(&mut self) {
        if let Some(hold) = self.held() {
            self.hold = None;
            remove(hold.id);
            if hold.auto_release {
                let _ = release_hold(&hold);
            }
        }
    }

    /// Sets our lease to `ttl` seconds (default: the semaphore's ttl) if the
    /// permit is still ours. False when it is not.
    pub fn refresh(&mut self, ttl: Option<f64>) -> Result<bool> {
        let ttl_ms = match ttl {
            Some(seconds) => duration::ttl_ms("ttl", seconds)?,
            None => self.ttl_ms,
        };
        let Some(hold) = self.held() else {
            return Ok(false);
        };
        if hold.lease.valid_for().is_zero() {
            self.lost(&hold);
            return Ok(false);
        }
        let sent = hold.lease.send(Effect::Sets(ttl_ms), Duration::ZERO);
        let left = match self.on_master(Role::Command, &|_| {
            calls::lease(&hold.keys, &hold.token, ttl_ms)
        }) {
            Ok(left) => left,
            Err(err) => {
                hold.lease.unanswered(&sent);
                return Err(err);
            }
        };
        // Only a reply that comes before the lease it extends ran out
        // counts: the script judges the hold by the clock reading in the
        // request, as old as the request, and one held up in flight past
        // the lease may find it taken meanwhile (a read hold's lock key
        // held by a writer, then marked again by another reader).
        let in_time = !hold.lease.valid_for().is_zero();
        let no_drift = |_: u64| Duration::ZERO;
        if !in_time
            || hold.lease.answered(&sent, left.is_some(), &no_drift) == Applied::NotOurs
            || hold.lease.valid_for().is_zero()
        {
            self.lost(&hold);
            return Ok(false);
        }
        // An auto-renewed permit keeps the lease length asked for here,
        // renewed next at a third of it.
        renewal::wake();
        Ok(true)
    }

    /// Forgets a hold found lost (counted in `stats()` `lost_leases`, once);
    /// its renewal, if any, ends.
    fn lost(&mut self, hold: &Hold) {
        hold.lease.found_lost();
        hold.lease.stop();
        remove(hold.id);
        self.hold = None;
    }

    /// Whether the permit is still ours: by this process's clock, then,
    /// with `auto_renew`, from the renewal thread's knowledge (no round
    /// trip: a renewal that found it gone marked it lost), else asking
    /// Redis (one round trip).
    pub fn is_acquired(&mut self) -> Result<bool> {
        if let Some(hold) = self.held()
            && hold.renewed
        {
            if hold.lease.valid_for().is_zero() {
                self.lost(&hold);
                return Ok(false);
            }
            return Ok(true);
        }
        Ok(self.remaining_ttl()?.is_some())
    }

    /// Seconds left on our lease; `None` when the permit is not ours. Never
    /// more than this process's clock gives it.
    pub fn remaining_ttl(&mut self) -> Result<Option<f64>> {
        let Some(hold) = self.held() else {
            return Ok(None);
        };
        if hold.lease.valid_for().is_zero() {
            self.lost(&hold);
            return Ok(None);
        }
        let left = self.on_master(Role::Command, &|_| calls::lease(&hold.keys, &hold.token, 0))?;
        let ours = hold.lease.valid_for();
        match left {
            Some(ms) if !ours.is_zero() => Ok(Some((ms as f64 / 1000.0).min(ours.as_secs_f64()))),
            _ => {
                self.lost(&hold);
                Ok(None)
            }
        }
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

/// A permit's (or a read hold's) steps in the semaphore's (the lock's)
/// queue.
struct Counted<'a> {
    sem: &'a Semaphore,
    token: &'a [u8],
    alive_ms: u64,
    arrival: u64,
}

impl Steps for Counted<'_> {
    fn key(&self) -> &[u8] {
        &self.sem.keys.holders
    }

    fn wake_list(&self) -> Vec<u8> {
        self.sem.keys.wake(self.token)
    }

    fn step(&self, mode: Mode, _replay: bool) -> Call<Step> {
        // A replay needs no flag: the scripts find a first try's entry.
        let sem = self.sem;
        calls::acquire(
            &sem.keys,
            self.token,
            sem.permits,
            sem.ttl_ms,
            mode,
            self.alive_ms,
            self.arrival,
        )
    }

    fn top_up(&self) -> Call<bool> {
        calls::extend(&self.sem.keys, self.token, self.sem.ttl_ms)
    }

    fn give_back(&self, _answered: bool) -> Call<bool> {
        calls::release(&self.sem.keys, self.token, true)
    }

    fn clock_judged(&self) -> bool {
        true
    }
}

/// A read hold's steps towards the lock's write hold, queued as a writer.
struct Promotion<'a> {
    sem: &'a Semaphore,
    lock: &'a LockKeys,
    token: &'a [u8],
    alive_ms: u64,
    arrival: u64,
}

impl Steps for Promotion<'_> {
    fn key(&self) -> &[u8] {
        &self.sem.keys.holders
    }

    fn wake_list(&self) -> Vec<u8> {
        self.sem.keys.wake(self.token)
    }

    fn step(&self, mode: Mode, _replay: bool) -> Call<Step> {
        readers::promote(
            &self.sem.keys,
            self.lock,
            self.token,
            self.sem.ttl_ms,
            mode,
            self.alive_ms,
            self.arrival,
        )
    }

    fn top_up(&self) -> Call<bool> {
        commands::refresh(&self.lock.lock, None, self.token, self.sem.ttl_ms)
    }

    fn give_back(&self, _answered: bool) -> Call<bool> {
        // Leaves the queue, and frees the lock if it was ours to write.
        commands::abandon(self.lock, self.token, commands::Successor::HandOver)
    }

    fn clock_judged(&self) -> bool {
        true
    }
}

impl Drop for Semaphore {
    fn drop(&mut self) {
        self.abandon();
    }
}

/// Takes hold `id` out of the table; its renewal (if any) stops, before
/// any release is sent.
fn remove(id: u64) -> Option<Hold> {
    let hold = HOLDS.with_owner(|h| h.id == id, |holds, at| holds.swap_remove(at))?;
    hold.lease.stop();
    Some(hold)
}

/// Gives a hold's permit back. A release whose reply was lost is sent
/// again; a replay that finds the permit gone counts as released when it
/// was sent within the lease (the first try gave it back). A lease that
/// is over by this process's clock is given back all the same (its entry
/// may linger up to the clock grace) but is no release: false.
fn release_hold(hold: &Hold) -> Result<bool> {
    let in_lease = !hold.lease.valid_for().is_zero();
    hold.lease.send(Effect::Ends, Duration::ZERO);
    let found = hold
        .topology
        .run_on(0, Role::Command, &hold.keys.holders, &|attempt| {
            let mut call = calls::release(&hold.keys, &hold.token, false);
            if attempt == Attempt::Replay && in_lease {
                call.parse = replayed_in_lease;
            }
            call
        })
        .inspect_err(|err| {
            if err.is_connection_error() {
                // Finished later: the permit never stays behind in Redis
                // because a reply was lost.
                let ttl_ms = hold.lease.ttl_ms();
                give_back_later(&hold.topology, &hold.keys, &hold.token, ttl_ms);
            }
        })?;
    let released = found && in_lease;
    if !released {
        hold.lease.found_lost();
    }
    Ok(released)
}

/// Leaves giving back `token`'s permit (or read hold), and leaving the
/// queue, to the lease thread ([`pending`]), until the server answers or a
/// lease of `ttl_ms` is surely over (with the clock grace).
fn give_back_later(topology: &Arc<Topology>, keys: &Arc<SemKeys>, token: &[u8], ttl_ms: u64) {
    // Filed under the name's base key: a lock's read holds under the lock
    // key, so the lock's next acquire (to read or write) sends it first.
    let key = keys.base.clone();
    let (on, keys, token) = (topology.clone(), keys.clone(), token.to_vec());
    let resend: pending::Resend = Box::new(move |_| {
        vec![
            on.run_on(0, Role::Command, &keys.holders, &|_| {
                calls::release(&keys, &token, true)
            })
            .map(drop),
        ]
    });
    let lasts = Duration::from_millis(ttl_ms) + calls::GRACE + Duration::from_secs(5);
    pending::add(topology, key, vec![true], lasts, resend);
}

fn replayed_in_lease(_: Vec<redis::Value>) -> redis::RedisResult<bool> {
    Ok(true)
}

/// Gives back every permit this request (the calling thread's) still holds
/// with `auto_release` on, and forgets the others (request end). Returns
/// how many were given back. Errors are ignored: the leases then end by
/// themselves.
pub fn release_all() -> usize {
    let drained: Vec<Hold> = HOLDS.take();
    for hold in &drained {
        hold.lease.stop();
    }
    drained
        .iter()
        .filter(|h| h.auto_release)
        .filter(|h| matches!(release_hold(h), Ok(true)))
        .count()
}

/// Ends the request scope by hand (`RedisLock::releaseAll()`): gives back
/// every permit this request holds with `auto_release` on, as request end
/// does, and keeps the others with their objects. Returns how many were
/// given back.
pub fn end_request_scope() -> usize {
    let ended: Vec<Hold> = HOLDS.with(|holds| {
        let (ended, kept) = std::mem::take(holds)
            .into_iter()
            .partition(|h| h.auto_release);
        *holds = kept;
        ended
    });
    ended
        .iter()
        .filter(|h| matches!(release_hold(h), Ok(true)))
        .count()
}
