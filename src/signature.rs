//! The PHP methods' names and parameter names, for messages that say which
//! argument is at fault as PHP's own do (`Argument #2 ($ttl)`).

/// A method's name and parameter names, for error messages.
#[derive(Debug)]
pub struct Signature {
    /// `Class::method()`, as PHP prefixes its messages.
    pub method: &'static str,
    /// Parameter names in order.
    pub params: &'static [&'static str],
}

impl Signature {
    /// `Argument #N ($name)` for a parameter; an option error (`option "x"`)
    /// is placed under the `$options` parameter; anything else (an ini
    /// setting) keeps its own name.
    pub fn describe(&self, param: &str) -> String {
        let (name, detail) = match param.strip_prefix("option ") {
            Some(_) => ("options", Some(param)),
            None => (param, None),
        };
        match (self.params.iter().position(|p| *p == name), detail) {
            (Some(i), None) => format!("Argument #{} (${name})", i + 1),
            (Some(i), Some(detail)) => format!("Argument #{} (${name}) {detail}", i + 1),
            (None, _) => param.to_owned(),
        }
    }

    /// `M(): Argument #N ($p) must be of type T, G given`, the message of
    /// PHP's `TypeError`.
    pub fn type_message(&self, param: &str, expected: &str, given: &str) -> String {
        format!(
            "{}: {} must be of type {expected}, {given} given",
            self.method,
            self.describe(param)
        )
    }
}

/// `RedisLock::__construct()`.
pub const CONSTRUCT: Signature = Signature {
    method: "RedisLock::__construct()",
    params: &["key", "ttl", "servers", "options"],
};
/// `RedisLock::restore()`.
pub const RESTORE: Signature = Signature {
    method: "RedisLock::restore()",
    params: &["key", "token", "ttl", "servers", "options"],
};
/// `RedisLock::inspect()`.
pub const INSPECT: Signature = Signature {
    method: "RedisLock::inspect()",
    params: &["key", "servers", "options"],
};
/// `RedisLock::diagnose()`.
pub const DIAGNOSE: Signature = Signature {
    method: "RedisLock::diagnose()",
    params: &["key", "servers", "options"],
};
/// `RedisLock::stats()`.
pub const STATS: Signature = Signature {
    method: "RedisLock::stats()",
    params: &["scope"],
};
/// `RedisLock::acquire()`.
pub const ACQUIRE: Signature = Signature {
    method: "RedisLock::acquire()",
    params: &["wait"],
};
/// `RedisLock::acquireRead()`.
pub const ACQUIRE_READ: Signature = Signature {
    method: "RedisLock::acquireRead()",
    params: &["wait"],
};
/// `RedisLock::withLock()`.
pub const WITH_LOCK: Signature = Signature {
    method: "RedisLock::withLock()",
    params: &["callback", "wait"],
};
/// `RedisLock::refresh()`.
pub const REFRESH: Signature = Signature {
    method: "RedisLock::refresh()",
    params: &["ttl"],
};
/// `RedisLock::release()`.
pub const RELEASE: Signature = Signature {
    method: "RedisLock::release()",
    params: &[],
};
/// `RedisLock::isAcquired()`.
pub const IS_ACQUIRED: Signature = Signature {
    method: "RedisLock::isAcquired()",
    params: &[],
};
/// `RedisLock::isLocked()`.
pub const IS_LOCKED: Signature = Signature {
    method: "RedisLock::isLocked()",
    params: &[],
};
/// `RedisLock::remainingTtl()`.
pub const REMAINING_TTL: Signature = Signature {
    method: "RedisLock::remainingTtl()",
    params: &[],
};
/// `RedisLock::forceRelease()`.
pub const FORCE_RELEASE: Signature = Signature {
    method: "RedisLock::forceRelease()",
    params: &[],
};

/// The methods of `RedisLock\Semaphore`.
pub mod semaphore {
    use super::Signature;

    /// `RedisLock\Semaphore::__construct()`.
    pub const CONSTRUCT: Signature = Signature {
        method: "RedisLock\\Semaphore::__construct()",
        params: &["name", "permits", "ttl", "servers", "options"],
    };

    /// `RedisLock\Semaphore::acquire()`.
    pub const ACQUIRE: Signature = Signature {
        method: "RedisLock\\Semaphore::acquire()",
        params: &["wait", "count"],
    };

    /// `RedisLock\Semaphore::release()`.
    pub const RELEASE: Signature = Signature {
        method: "RedisLock\\Semaphore::release()",
        params: &[],
    };

    /// `RedisLock\Semaphore::refresh()`.
    pub const REFRESH: Signature = Signature {
        method: "RedisLock\\Semaphore::refresh()",
        params: &["ttl"],
    };

    /// `RedisLock\Semaphore::withPermit()`.
    pub const WITH_PERMIT: Signature = Signature {
        method: "RedisLock\\Semaphore::withPermit()",
        params: &["callback", "wait", "count"],
    };

    /// `RedisLock\Semaphore::isAcquired()`.
    pub const IS_ACQUIRED: Signature = Signature {
        method: "RedisLock\\Semaphore::isAcquired()",
        params: &[],
    };

    /// `RedisLock\Semaphore::remainingTtl()`.
    pub const REMAINING_TTL: Signature = Signature {
        method: "RedisLock\\Semaphore::remainingTtl()",
        params: &[],
    };
}
