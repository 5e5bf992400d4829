//! The `RedisLock\Semaphore` PHP class: argument conversion around
//! [`redislock_core::Semaphore`], nothing more.

use std::time::Duration;

use ext_php_rs::boxed::ZBox;
use ext_php_rs::exception::{PhpException, PhpResult};
use ext_php_rs::flags::ClassFlags;
use ext_php_rs::prelude::*;
use ext_php_rs::types::{ZendClassObject, ZendHashTable, Zval};
use redislock_core::config::settings;
use redislock_core::{LockError, Semaphore as CoreSemaphore};

use crate::args::{
    Bytes, Callback, DefaultInt, Float, Int, NullableFloat, Options, PhpBytes, Servers,
};
use crate::callback;
use crate::exceptions::{self, Class, from_core};
use crate::guarded::{self, Guarded};
use crate::ini;
use crate::signature::semaphore::*;

/// N permits under one name in Redis, each holder with a lease of its own.
///
/// `acquire()` takes a permit (one round trip when one is free) or waits in
/// line, woken when a permit is given back; `release()` gives it back.
/// Permits still held when the object is destroyed or the request ends are
/// given back (option `auto_release`).
#[php_class]
#[php(name = "RedisLock\\Semaphore")]
#[php(flags = ClassFlags::Final)]
pub struct Semaphore {
    sem: CoreSemaphore,
}

#[php_impl]
impl Semaphore {
    /// Describes a semaphore; connects to nothing until it is used.
    ///
    /// @param string $name Semaphore name (`prefix . $name`, its keys `prefix . $name . "~~s…"`).
    /// @param int $permits How many holders at once (1 to 1,000,000); every user must pass the same.
    /// @param ?float $ttl Lease of each permit in seconds; null: `redislock.default_ttl`.
    /// @param string|array|null $servers One URL (a list for Sentinel or Cluster); null: `redislock.servers`.
    /// @param array $options As for RedisLock; an unknown key is a ValueError.
    #[php(defaults(options = Options::empty()))]
    pub fn __construct(
        name: Bytes,
        permits: Int,
        ttl: NullableFloat,
        servers: Servers,
        options: Options,
    ) -> PhpResult<Self> {
        let sig = &CONSTRUCT;
        let name = name.get(sig, "name")?;
        let permits = permits.get(sig, "permits")?;
        let ttl = ttl.get(sig, "ttl")?;
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
        let sem = CoreSemaphore::new(
            name,
            permits,
            ttl.unwrap_or(defaults.ttl),
            &servers,
            defaults.options,
        )
        .map_err(|e| from_core(sig, e))?;
        Ok(Self { sem })
    }

    /// Takes `$count` permits at once. `$wait` = 0 tries once; > 0 waits up
    /// to `$wait` seconds, in line, woken when permits are given back.
    #[php(defaults(wait = 0.0, count = 1))]
    pub fn acquire(&mut self, wait: Float, count: DefaultInt) -> PhpResult<bool> {
        let wait = wait.wait(&ACQUIRE)?;
        let count = count.get(&ACQUIRE, "count")?;
        match self.sem.acquire_permits(wait, count) {
            // PHP ended the wait: its exception is pending and wins.
            Err(LockError::Interrupted) => Ok(false),
            other => other.map_err(|e| from_core(&ACQUIRE, e)),
        }
    }

    /// Gives the permit back. True when this object held one and it was
    /// still its own.
    pub fn release(&mut self) -> PhpResult<bool> {
        self.sem.release().map_err(|e| from_core(&RELEASE, e))
    }

    /// Extends our lease to `$ttl` seconds (null: the semaphore's ttl).
    /// False when the permit is no longer ours.
    pub fn refresh(&mut self, ttl: NullableFloat) -> PhpResult<bool> {
        let ttl = ttl.get(&REFRESH, "ttl")?;
        self.sem.refresh(ttl).map_err(|e| from_core(&REFRESH, e))
    }

    /// Acquires (waiting up to `$wait` seconds, else TimeoutException),
    /// calls `$callback($this)`, gives the permit back in every case and
    /// returns the callback's value. Throws LockLostException when the
    /// lease ended meanwhile.
    #[php(defaults(wait = 0.0, count = 1))]
    pub fn with_permit(
        self_: &mut ZendClassObject<Semaphore>,
        callback: Callback,
        wait: Float,
        count: DefaultInt,
    ) -> PhpResult<Zval> {
        let sig = &WITH_PERMIT;
        let (callback, wait) = match (callback.get(sig, "callback"), wait.wait(sig)) {
            (Ok(callback), Ok(wait)) => (callback, wait),
            (Err(e), _) | (_, Err(e)) => return Err(e),
        };
        let count = count.get(sig, "count")?;
        match guarded::call(self_, callback, wait, count, sig) {
            Ok(result) => result,
            // SAFETY: `guarded::call` has returned, so everything it owned
            // is dropped; nothing of this frame needs dropping.
            Err(callback::BailedOut) => unsafe { callback::resume() },
        }
    }

    /// Whether the permit is still ours (asks Redis: one round trip).
    pub fn is_acquired(&mut self) -> PhpResult<bool> {
        self.sem
            .is_acquired()
            .map_err(|e| from_core(&IS_ACQUIRED, e))
    }

    /// Seconds left on our lease, or null when the permit is not ours.
    pub fn remaining_ttl(&mut self) -> PhpResult<Option<f64>> {
        self.sem
            .remaining_ttl()
            .map_err(|e| from_core(&REMAINING_TTL, e))
    }

    /// A permit has one owner: `clone` is refused.
    #[php(vis = "private")]
    pub fn __clone(&self) {}

    /// What var_dump() and print_r() show: no passwords, no tokens.
    #[php(name = "__debugInfo")]
    pub fn debug_info(&mut self) -> PhpResult<ZBox<ZendHashTable>> {
        let info = self.sem.info();
        let mut table = ZendHashTable::new();
        let fail = |e: ext_php_rs::error::Error| {
            exceptions::exception(Class::Lock, format!("__debugInfo failed: {e}"))
        };
        table.insert("name", PhpBytes(info.name)).map_err(fail)?;
        table
            .insert("redisKey", PhpBytes(info.redis_key))
            .map_err(fail)?;
        table
            .insert("permits", i64::from(info.permits))
            .map_err(fail)?;
        table.insert("ttl", info.ttl).map_err(fail)?;
        table.insert("servers", info.servers).map_err(fail)?;
        table.insert("acquired", info.acquired).map_err(fail)?;
        Ok(table)
    }
}

impl Guarded for Semaphore {
    fn take(&mut self, wait: Duration, count: i64) -> Result<bool, LockError> {
        self.sem.acquire_permits(wait, count)
    }

    fn holds(&mut self) -> bool {
        self.sem.holds()
    }

    fn give_back(&mut self) -> Result<bool, LockError> {
        self.sem.release()
    }

    fn timed_out(&self, wait: Duration) -> PhpException {
        exceptions::exception(
            Class::Timeout,
            format!(
                "could not acquire a permit of semaphore \"{}\" within {} s",
                String::from_utf8_lossy(self.sem.name()),
                wait.as_secs_f64()
            ),
        )
    }

    fn lost(&self) -> PhpException {
        exceptions::exception(
            Class::LockLost,
            format!(
                "the permit of semaphore \"{}\" was lost while held: the lease ended before \
                 withPermit() gave it back",
                String::from_utf8_lossy(self.sem.name())
            ),
        )
    }
}
