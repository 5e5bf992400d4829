//! `withLock()` and `withPermit()`: one guarded call. Take the hold (or
//! throw `TimeoutException`), call the callback with the object, then end
//! whatever hold the object has left in the calling Fiber, whatever kind
//! (the callback may have released it, turned a write hold into a read
//! hold, or taken another), and check it: a hold lost while the callback
//! ran throws `LockLostException` after it returns. An exception the
//! callback throws reaches the caller unchanged, after the release; a
//! fatal error in it leaves the hold to request end ([`callback`]).

use std::time::Duration;

use ext_php_rs::exception::{PhpException, PhpResult};
use ext_php_rs::types::{ZendClassObject, ZendObject, Zval};
use redislock_core::LockError;

use crate::args::Signature;
use crate::callback;
use crate::exceptions::from_core;
use crate::interrupt;

/// What a guarded call needs of the object it guards.
pub trait Guarded {
    /// Takes the hold (of `count` permits: a lock takes 1), waiting up to
    /// `wait` (PHP's time limit ends the wait early).
    fn take(&mut self, wait: Duration, count: i64) -> Result<bool, LockError>;
    /// True while the object holds something in the calling Fiber.
    fn holds(&mut self) -> bool;
    /// Gives back what it holds: true when it was still ours.
    fn give_back(&mut self) -> Result<bool, LockError>;
    /// The hold to interrupt the callback for when it is lost (option
    /// `on_lost => "interrupt"`), if any.
    fn interruptible(&mut self) -> Option<u64> {
        None
    }
    /// The exception when the wait ran out.
    fn timed_out(&self, wait: Duration) -> PhpException;
    /// The exception when the hold was lost while the callback ran.
    fn lost(&self) -> PhpException;
}

/// The guarded call on `this` (see the module documentation), up to a fatal
/// error in the callback, which is returned as [`callback::BailedOut`] once
/// this frame's values are dropped, for the method to resume it.
pub fn call<T: Guarded>(
    this: *mut ZendClassObject<T>,
    callable: &Zval,
    wait: Duration,
    count: i64,
    sig: &Signature,
) -> Result<PhpResult<Zval>, callback::BailedOut> {
    // SAFETY (every use of `of`): `this` is the live object PHP called us
    // on, and each borrow ends before any PHP code runs; the callback may
    // call methods of this very object, so no Rust borrow of it is held
    // across the call.
    let of = move || unsafe { of(this) };
    let taken = match of().take(wait, count) {
        // PHP's pending exception or fatal error wins.
        Err(LockError::Interrupted) => return Ok(Ok(Zval::new())),
        Ok(taken) => taken,
        Err(e) => return Ok(Err(from_core(sig, e))),
    };
    if !taken {
        return Ok(Err(of().timed_out(wait)));
    }
    let interruptible = of().interruptible();
    if let Some(id) = interruptible {
        interrupt::enter(id);
    }
    // SAFETY: as for `of`; the engine holds its own reference to the object
    // for the call.
    let object: &mut ZendObject = unsafe { &mut (*this).std };
    let called = callback::call(callable, object);
    if let Some(id) = interruptible {
        interrupt::leave(id);
    }
    // After a fatal error the hold stays: request shutdown releases it
    // (auto_release).
    let value = called?;
    let guarded = of();
    if !guarded.holds() {
        // The callback gave the hold back itself (release(),
        // forceRelease()): nothing left to release, nothing was lost.
        return Ok(value.ok_or_else(pending));
    }
    let released = guarded.give_back();
    Ok(match (value, released) {
        // The callback threw (or called exit()): its exception is pending
        // and reaches the caller unchanged.
        (None, _) => Err(pending()),
        (Some(value), Ok(true)) => Ok(value),
        (Some(_), Ok(false)) => Err(guarded.lost()),
        (Some(_), Err(e)) => Err(from_core(sig, e)),
    })
}

/// The guarded object behind `this`.
///
/// # Safety
///
/// `this` must point to a live object, and the borrow must end before PHP
/// code runs (which may reach the object).
unsafe fn of<'a, T>(this: *mut ZendClassObject<T>) -> &'a mut T {
    unsafe { &mut *this }
}

/// The error a method returns while PHP has an exception pending: throwing
/// it is a no-op, so the pending exception reaches the caller unchanged.
pub fn pending() -> PhpException {
    PhpException::from_message("an exception is pending".into())
}
