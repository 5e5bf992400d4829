//! The `RedisLock` PHP class: argument conversion around
//! [`redislock_core::Lock`], nothing more.

use std::time::Duration;

use ext_php_rs::boxed::ZBox;
use ext_php_rs::exception::{PhpException, PhpResult};
use ext_php_rs::flags::ClassFlags;
use ext_php_rs::prelude::*;
use ext_php_rs::types::{ZendClassObject, ZendHashTable, Zval};
use redislock_core::OnLost;
use redislock_core::config::settings;
use redislock_core::{Lock, LockError};

use crate::args::{
    self, Bytes, Callback, Float, NullableBytes, NullableFloat, Options, PhpBytes, Servers,
    Signature,
};
use crate::callback;
use crate::exceptions::{self, Class, from_core, value_error};
use crate::guarded::{self, Guarded};
use crate::ini;

/// A distributed lock on one key in Redis.
///
/// `acquire()` writes a fresh random token with `SET key token NX PX ttl`;
/// `release()` deletes the key only if it still holds that token (Lua
/// compare-and-delete). Holds still open when the object is destroyed or the
/// request ends are released (option `auto_release`).
#[php_class]
#[php(name = "RedisLock")]
#[php(flags = ClassFlags::Final)]
pub struct RedisLock {
    lock: Lock,
}

/// Builds a core lock from PHP arguments, filling in php.ini defaults.
fn build(
    sig: &Signature,
    key: Bytes,
    ttl: Option<NullableFloat>,
    servers: Servers,
    options: Options,
) -> PhpResult<Lock> {
    let key = key.get(sig, "key")?;
    let ttl = match ttl {
        Some(ttl) => ttl.get(sig, "ttl")?,
        None => None,
    };
    let servers = servers.get(sig)?;
    let mut defaults = ini::defaults().map_err(|e| from_core(sig, e))?;
    options.apply(sig, &mut defaults.options)?;
    let servers = match servers {
        Some(servers) => servers,
        None => {
            settings::check_servers(&defaults.servers).map_err(|e| from_core(sig, e))?;
            defaults.servers
        }
    };
    Lock::new(key, ttl.unwrap_or(defaults.ttl), &servers, defaults.options)
        .map_err(|e| from_core(sig, e))
}

#[php_impl]
impl RedisLock {
    /// Describes a lock; connects to nothing until it is used.
    ///
    /// @param string $key Lock name; Redis key is `prefix . $key`.
    /// @param ?float $ttl Lease in seconds (ms precision); null: `redislock.default_ttl`.
    /// @param string|array|null $servers A URL or a list of URLs; null: `redislock.servers`.
    /// @param array $options See the README; an unknown key is a ValueError.
    #[php(defaults(options = Options::empty()))]
    pub fn __construct(
        key: Bytes,
        ttl: NullableFloat,
        servers: Servers,
        options: Options,
    ) -> PhpResult<Self> {
        let lock = build(&args::CONSTRUCT, key, Some(ttl), servers, options)?;
        Ok(Self { lock })
    }

    /// Takes the lock. `$wait` = 0 tries once; > 0 waits up to `$wait`
    /// seconds, woken by the release. True when the lock is ours.
    #[php(defaults(wait = 0.0))]
    pub fn acquire(&mut self, wait: Float) -> PhpResult<bool> {
        let wait = wait.wait(&args::ACQUIRE)?;
        match self.lock.acquire(wait) {
            // PHP ended the wait: its exception (or the time limit's fatal
            // error) is pending and wins over the return value.
            Err(LockError::Interrupted) => Ok(false),
            other => other.map_err(|e| from_core(&args::ACQUIRE, e)),
        }
    }

    /// Takes a shared (read) hold: many readers at once, none while a writer
    /// holds the lock or waits for it. `$wait` as for `acquire()`. On an
    /// object holding the write lock it turns it into a read hold
    /// (demotion); `acquire()` on an object holding a read hold promotes it.
    #[php(defaults(wait = 0.0))]
    pub fn acquire_read(&mut self, wait: Float) -> PhpResult<bool> {
        let wait = wait.wait(&args::ACQUIRE_READ)?;
        match self.lock.acquire_read(wait) {
            Err(LockError::Interrupted) => Ok(false),
            other => other.map_err(|e| from_core(&args::ACQUIRE_READ, e)),
        }
    }

    /// Releases the lock. True when we held it and it is now free; false when
    /// we did not hold it (or the lease was lost). Deletes only our own hold.
    pub fn release(&mut self) -> PhpResult<bool> {
        self.lock
            .release()
            .map_err(|e| from_core(&args::RELEASE, e))
    }

    /// Acquires (waiting up to `$wait` seconds, else TimeoutException), calls
    /// `$callback($this)`, releases in every case and returns the callback's
    /// value. Throws LockLostException when the lease was lost meanwhile.
    #[php(defaults(wait = 0.0))]
    pub fn with_lock(
        self_: &mut ZendClassObject<RedisLock>,
        callback: Callback,
        wait: Float,
    ) -> PhpResult<Zval> {
        let sig = &args::WITH_LOCK;
        let (callback, wait) = match (callback.get(sig, "callback"), wait.wait(sig)) {
            (Ok(callback), Ok(wait)) => (callback, wait),
            (Err(e), _) | (_, Err(e)) => return Err(e),
        };
        match guarded::call(self_, callback, wait, 1, sig) {
            Ok(result) => result,
            // SAFETY: `guarded::call` has returned, so everything it owned
            // is dropped; nothing of this frame needs dropping.
            Err(callback::BailedOut) => unsafe { callback::resume() },
        }
    }

    /// Extends our lease to `$ttl` seconds (null: the lock's ttl). False when
    /// the lease is no longer ours.
    pub fn refresh(&mut self, ttl: NullableFloat) -> PhpResult<bool> {
        let ttl = ttl.get(&args::REFRESH, "ttl")?;
        self.lock
            .refresh(ttl)
            .map_err(|e| from_core(&args::REFRESH, e))
    }

    /// Whether the lease is still ours: with `auto_renew` from the renewal
    /// thread's knowledge (no round trip), else asks Redis (one GET).
    pub fn is_acquired(&mut self) -> PhpResult<bool> {
        self.lock
            .is_acquired()
            .map_err(|e| from_core(&args::IS_ACQUIRED, e))
    }

    /// Whether anyone holds the lock (this process or another), asked of
    /// Redis.
    pub fn is_locked(&mut self) -> PhpResult<bool> {
        self.lock
            .is_locked()
            .map_err(|e| from_core(&args::IS_LOCKED, e))
    }

    /// Seconds left on our lease, or null when it is not ours.
    pub fn remaining_ttl(&mut self) -> PhpResult<Option<f64>> {
        self.lock
            .remaining_ttl()
            .map_err(|e| from_core(&args::REMAINING_TTL, e))
    }

    /// The lock's key, without prefix.
    pub fn key(&self) -> PhpBytes {
        PhpBytes(self.lock.key().to_vec())
    }

    /// The owner token of the current hold (hand it to `restore()`), or null.
    pub fn token(&mut self) -> Option<PhpBytes> {
        self.lock.token().map(PhpBytes)
    }

    /// The fencing token of the current hold: strictly greater than every
    /// earlier one for this key. Null without option `fencing`, when not
    /// held, or for a hold taken over with `restore()`.
    pub fn fencing_token(&mut self) -> Option<i64> {
        self.lock.fencing_token()
    }

    /// Deletes the lock whoever holds it. True when a lock was deleted.
    pub fn force_release(&mut self) -> PhpResult<bool> {
        self.lock
            .force_release()
            .map_err(|e| from_core(&args::FORCE_RELEASE, e))
    }

    /// Adopts a hold made elsewhere (another process, an earlier request)
    /// from its key and token: the hold that token has now (one round trip
    /// reads it), never a later hold of the same token.
    #[php(defaults(options = Options::empty()))]
    pub fn restore(
        key: Bytes,
        token: Bytes,
        ttl: NullableFloat,
        servers: Servers,
        options: Options,
    ) -> PhpResult<Self> {
        let sig = &args::RESTORE;
        let token = token.get(sig, "token")?;
        let mut lock = build(sig, key, Some(ttl), servers, options)?;
        lock.restore(token).map_err(|e| from_core(sig, e))?;
        Ok(Self { lock })
    }

    /// The lock counters of `scope`: `"pool"` (every process forked from
    /// the one that loaded the extension: a PHP-FPM pool, surviving worker
    /// recycling), `"process"` (this process since it started), or null
    /// (php.ini's `redislock.stats`). Totals, then per primitive (`lock`,
    /// `read`, `permit`) under `primitives`, and the hottest names under
    /// `names`.
    pub fn stats(scope: NullableBytes) -> PhpResult<ZBox<ZendHashTable>> {
        let sig = &args::STATS;
        let named = scope.get(sig, "scope")?;
        let scope = crate::stats::scope(named).map_err(|detail| {
            value_error(format!(
                "{}: {} {detail}",
                sig.method,
                sig.describe("scope")
            ))
        })?;
        crate::stats::table(scope)
    }

    /// The statistics of php.ini's `redislock.stats` scope (the pool by
    /// default) in Prometheus's text exposition format.
    pub fn metrics() -> String {
        crate::stats::metrics()
    }

    /// Ends the request scope now, for a worker loop (RoadRunner, a queue
    /// worker between jobs): releases every hold of this request (all
    /// Fibers) and every semaphore permit that request end would release
    /// (`auto_release`), as request end does, and returns how many were
    /// released in Redis. Holds with `auto_release => false` stay with
    /// their objects.
    pub fn release_all() -> i64 {
        i64::try_from(redislock_core::end_request_scope()).unwrap_or(i64::MAX)
    }

    /// What Redis knows of the lock on `$key`, whoever holds it: `held`,
    /// `mode` ("write", "read" or null when free), `owners` (the writer's
    /// token or `owner` string, or up to 64 readers' tokens), `readers`
    /// (live readers), `ttl` (seconds left, null when free), `waiting`
    /// (live waiters), `fence` (the hold's fencing token, or null) and
    /// `semaphore` (the semaphore of that name, or null), and `unsafe` (its
    /// servers that can lose a held lock by themselves). Validated like the
    /// constructor; one read-only round trip (every Redlock master at once,
    /// decided by their quorum), and before the first in a process on a
    /// server, its `INFO`.
    #[php(defaults(options = Options::empty()))]
    pub fn inspect(
        key: Bytes,
        servers: Servers,
        options: Options,
    ) -> PhpResult<ZBox<ZendHashTable>> {
        let sig = &args::INSPECT;
        let lock = build(sig, key, None, servers, options)?;
        let seen = lock.inspect().map_err(|e| from_core(sig, e))?;
        let fail = |e: ext_php_rs::error::Error| {
            exceptions::exception(Class::Lock, format!("inspect failed: {e}"))
        };
        let semaphore = match seen.semaphore {
            None => None,
            Some(sem) => {
                let mut table = ZendHashTable::new();
                table.insert("held", sem.held).map_err(fail)?;
                table
                    .insert("permits", sem.permits.map(int))
                    .map_err(fail)?;
                table.insert("holders", int(sem.holders)).map_err(fail)?;
                table.insert("owners", bytes(sem.owners)).map_err(fail)?;
                table.insert("ttl", sem.ttl).map_err(fail)?;
                table.insert("waiting", int(sem.waiting)).map_err(fail)?;
                Some(table)
            }
        };
        let mut table = ZendHashTable::new();
        table.insert("held", seen.held).map_err(fail)?;
        table
            .insert("mode", seen.mode.map(|m| m.name()))
            .map_err(fail)?;
        table.insert("owners", bytes(seen.owners)).map_err(fail)?;
        table.insert("readers", int(seen.readers)).map_err(fail)?;
        table.insert("ttl", seen.ttl).map_err(fail)?;
        table.insert("waiting", int(seen.waiting)).map_err(fail)?;
        table.insert("fence", seen.fence).map_err(fail)?;
        table.insert("semaphore", semaphore).map_err(fail)?;
        table
            .insert(
                "unsafe",
                crate::diagnose::unsafe_list(&seen.unsafe_servers)?,
            )
            .map_err(fail)?;
        Ok(table)
    }

    /// A checkup of every server under the lock on `$key` (Redlock's
    /// masters, a Sentinel group's master and replicas, every Cluster node,
    /// masters first): per server its
    /// `verdict` (`safe`, `unsafe`, `unknown`), round trip, what `INFO`
    /// says of memory, persistence and replication, `findings` (each with
    /// its consequence and fix) and whether it has what the lock protocol
    /// uses (scripts, `CLIENT UNBLOCK`, a compare-and-delete command, the
    /// ACL's permissions on the lock's keys), and `TIME` in scripts, which
    /// no lock script needs. Validated like the constructor; reads and writes no key.
    /// The command line's `doctor` prints it.
    #[php(defaults(options = Options::empty()))]
    pub fn diagnose(
        key: Bytes,
        servers: Servers,
        options: Options,
    ) -> PhpResult<ZBox<ZendHashTable>> {
        let sig = &args::DIAGNOSE;
        let lock = build(sig, key, None, servers, options)?;
        let nodes = lock.checkup().map_err(|e| from_core(sig, e))?;
        crate::diagnose::checkup(&nodes)
    }

    /// The servers this process found able to lose a held lock by
    /// themselves (option `unsafe_server => "warn"`), once per server and
    /// reason, in the order found: `server`, `reason` (`eviction`,
    /// `no_aof`), `detail` (the consequence and the fix). No round trip.
    pub fn unsafe_servers() -> PhpResult<ZBox<ZendHashTable>> {
        crate::diagnose::unsafe_list(&redislock_core::stats::servers::list())
    }

    /// A hold has one owner: `clone` is refused (and Reflection reports the
    /// class as not cloneable).
    #[php(vis = "private")]
    pub fn __clone(&self) {}

    /// What var_dump() and print_r() show: no passwords, and no owner
    /// token (`***` while held: a token, or an `owner` label, lets whoever
    /// has it release or refresh the hold, as `restore()` and Laravel's
    /// `restoreLock()` show; `token()` gives it to code that asks). `shared`
    /// is true for a read hold (`acquireRead()`).
    #[php(name = "__debugInfo")]
    pub fn debug_info(&mut self) -> PhpResult<ZBox<ZendHashTable>> {
        let info = self.lock.info();
        let mut table = ZendHashTable::new();
        let fail = |e: ext_php_rs::error::Error| {
            exceptions::exception(Class::Lock, format!("__debugInfo failed: {e}"))
        };
        table.insert("key", PhpBytes(info.key)).map_err(fail)?;
        table
            .insert("redisKey", PhpBytes(info.redis_key))
            .map_err(fail)?;
        table.insert("ttl", info.ttl).map_err(fail)?;
        table.insert("servers", info.servers).map_err(fail)?;
        table.insert("acquired", info.acquired).map_err(fail)?;
        table.insert("shared", info.shared).map_err(fail)?;
        table
            .insert("token", info.token.map(|_| "***"))
            .map_err(fail)?;
        table
            .insert("holdCount", i64::from(info.hold_count))
            .map_err(fail)?;
        Ok(table)
    }
}

impl Guarded for RedisLock {
    fn take(&mut self, wait: Duration, _count: i64) -> Result<bool, LockError> {
        self.lock.acquire(wait)
    }

    fn holds(&mut self) -> bool {
        self.lock.holds()
    }

    fn give_back(&mut self) -> Result<bool, LockError> {
        self.lock.release()
    }

    fn interruptible(&mut self) -> Option<u64> {
        (self.lock.options().on_lost == OnLost::Interrupt)
            .then(|| self.lock.hold_id())
            .flatten()
    }

    fn timed_out(&self, wait: Duration) -> PhpException {
        let key = String::from_utf8_lossy(self.lock.key()).into_owned();
        let wait_secs = wait.as_secs_f64();
        from_core(&args::WITH_LOCK, LockError::Timeout { key, wait_secs })
    }

    fn lost(&self) -> PhpException {
        let key = String::from_utf8_lossy(self.lock.key()).into_owned();
        from_core(
            &args::WITH_LOCK,
            LockError::LockLost {
                key,
                detail: "the lease expired or was taken before withLock() released it".into(),
            },
        )
    }
}

/// A count as a PHP int.
fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Tokens as a PHP list of (binary) strings.
fn bytes(tokens: Vec<Vec<u8>>) -> Vec<PhpBytes> {
    tokens.into_iter().map(PhpBytes).collect()
}
