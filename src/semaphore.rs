//! The `RedisLock\Semaphore` PHP class: argument conversion around
//! [`redislock_core::Semaphore`], nothing more.

use ext_php_rs::boxed::ZBox;
use ext_php_rs::exception::PhpResult;
use ext_php_rs::flags::ClassFlags;
use ext_php_rs::prelude::*;
use ext_php_rs::types::{ZendClassObject, ZendHashTable, Zval};
use redislock_core::config::settings;
use redislock_core::{LockError, Semaphore as CoreSemaphore};

use crate::args::{Bytes, Callback, Float, NullableFloat, Options, PhpBytes, Servers, Signature};
use crate::callback;
use crate::exceptions::{self, Class, from_core};
use crate::{ini, interrupt};

const CONSTRUCT: Signature = Signature {
    method: "RedisLock\\Semaphore::__construct()",
    params: &["name", "permits", "ttl", "servers", "options"],
};
const ACQUIRE: Signature = Signature {
    method: "RedisLock\\Semaphore::acquire()",
    params: &["wait"],
};
const RELEASE: Signature = Signature {
    method: "RedisLock\\Semaphore::release()",
    params: &[],
};
const REFRESH: Signature = Signature {
    method: "RedisLock\\Semaphore::refresh()",
    params: &["ttl"],
};
const WITH_PERMIT: Signature = Signature {
    method: "RedisLock\\Semaphore::withPermit()",
    params: &["callback", "wait"],
};
const IS_ACQUIRED: Signature = Signature {
    method: "RedisLock\\Semaphore::isAcquired()",
    params: &[],
};
const REMAINING_TTL: Signature = Signature {
    method: "RedisLock\\Semaphore::remainingTtl()",
    params: &[],
};

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

/// The core semaphore inside a PHP object reached through a raw pointer.
///
/// # Safety
/// `this` must point at a live, constructed `Semaphore` object and the
/// returned borrow must end before PHP code runs again.
unsafe fn sem_of<'a>(this: *mut ZendClassObject<Semaphore>) -> &'a mut CoreSemaphore {
    unsafe { &mut (&mut *this).sem }
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
        permits: i64,
        ttl: NullableFloat,
        servers: Servers,
        options: Options,
    ) -> PhpResult<Self> {
        let sig = &CONSTRUCT;
        let name = name.get(sig, "name")?;
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

    /// Takes a permit. `$wait` = 0 tries once; > 0 waits up to `$wait`
    /// seconds, in line, woken when a permit is given back.
    #[php(defaults(wait = 0.0))]
    pub fn acquire(&mut self, wait: Float) -> PhpResult<bool> {
        let wait = wait.wait(&ACQUIRE)?;
        match self.sem.acquire(wait, &interrupt::timed_out) {
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
    #[php(defaults(wait = 0.0))]
    pub fn with_permit(
        self_: &mut ZendClassObject<Semaphore>,
        callback: Callback,
        wait: Float,
    ) -> PhpResult<Zval> {
        match with_permit(self_, callback, wait) {
            Ok(result) => result,
            // SAFETY: `with_permit` has returned, so everything it owned is
            // dropped; nothing of this frame needs dropping.
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

/// `withPermit()` up to a fatal error in the callback, which is returned as
/// [`callback::BailedOut`] once this frame's values are dropped.
fn with_permit(
    self_: &mut ZendClassObject<Semaphore>,
    callback: Callback,
    wait: Float,
) -> Result<PhpResult<Zval>, callback::BailedOut> {
    let sig = &WITH_PERMIT;
    let (callback, wait_for) = match (callback.get(sig, "callback"), wait.wait(sig)) {
        (Ok(callback), Ok(wait_for)) => (callback, wait_for),
        (Err(e), _) | (_, Err(e)) => return Ok(Err(e)),
    };
    // The callback may call methods of this very object: no Rust borrow of
    // it is held across the call, only this pointer.
    let this: *mut ZendClassObject<Semaphore> = self_;
    // SAFETY (every use of `sem_of`): `this` is the live object PHP called
    // us on, and each borrow ends before any PHP code runs.
    let name = String::from_utf8_lossy(unsafe { sem_of(this) }.name()).into_owned();
    let acquired = match unsafe { sem_of(this) }.acquire(wait_for, &interrupt::timed_out) {
        Err(LockError::Interrupted) => return Ok(Ok(Zval::new())),
        Ok(acquired) => acquired,
        Err(e) => return Ok(Err(from_core(sig, e))),
    };
    if !acquired {
        let wait_secs = wait_for.as_secs_f64();
        return Ok(Err(exceptions::exception(
            Class::Timeout,
            format!("could not acquire a permit of semaphore \"{name}\" within {wait_secs} s"),
        )));
    }
    // SAFETY: as for `sem_of`; the engine holds its own reference to the
    // object for the call.
    let called = callback::call(callback, unsafe { &mut (*this).std });
    // After a fatal error the permit stays: request shutdown gives it back.
    let value = called?;
    let sem = unsafe { sem_of(this) };
    if !sem.holds() {
        // The callback released the permit itself.
        return Ok(value.ok_or_else(pending));
    }
    let released = sem.release();
    Ok(match (value, released) {
        (None, _) => Err(pending()),
        (Some(value), Ok(true)) => Ok(value),
        (Some(_), Ok(false)) => Err(exceptions::exception(
            Class::LockLost,
            format!(
                "the permit of semaphore \"{name}\" was lost while held: the lease ended \
                 before withPermit() gave it back"
            ),
        )),
        (Some(_), Err(e)) => Err(from_core(sig, e)),
    })
}

/// The error a method returns while PHP has an exception pending: throwing
/// it is a no-op, so the pending exception reaches the caller unchanged.
fn pending() -> PhpException {
    PhpException::from_message("an exception is pending".into())
}
