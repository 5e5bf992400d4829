//! Calls a `withLock()` callback so that a fatal error inside it loses
//! nothing of ours.
//!
//! A fatal error, `max_execution_time` or `memory_limit` in PHP code is a
//! bailout: a `longjmp` to the engine's last `zend_try`, which skips every
//! Rust frame in between without running its destructors. ext-php-rs's
//! `try_call` builds its argument array on the heap inside its own frame,
//! so a bailout in the callback leaked that array and the reference it held
//! on the lock object. Here the argument lives in the caller's frame and the
//! call runs under [`try_catch`], so the frame survives the jump: the caller
//! drops what it owns and only then lets the bailout go on ([`resume`]).

use std::panic::AssertUnwindSafe;
use std::ptr;

use ext_php_rs::ffi::_call_user_function_impl;
use ext_php_rs::types::{ZendObject, Zval};
use ext_php_rs::zend::{CatchError, ExecutorGlobals, try_catch};

/// A fatal error ended the callback: carried out of the frames that own
/// values, up to the method, which calls [`resume`].
pub struct BailedOut;

/// Calls `callable` (a zval that passed `is_callable()`) with `arg` as its
/// only argument. `Ok(Some(value))`: it returned; `Ok(None)`: it threw (or
/// called `exit()`), and the exception is pending in the engine until the
/// method returns; `Err`: it ended in a fatal error, and the caller must
/// drop what it owns, then call [`resume`].
pub fn call(callable: &Zval, arg: &mut ZendObject) -> Result<Option<Zval>, BailedOut> {
    let mut args = [Zval::new()];
    args[0].set_object(arg);
    let mut retval = Zval::new();
    let status = try_catch(AssertUnwindSafe(|| {
        // SAFETY: PHP's thread, during a call from PHP; `args` and `retval`
        // outlive the call, and the engine only reads `callable`.
        unsafe {
            _call_user_function_impl(
                ptr::null_mut(),
                ptr::from_ref(callable).cast_mut(),
                &raw mut retval,
                1,
                args.as_mut_ptr(),
                ptr::null_mut(),
            )
        }
    }));
    match status {
        Err(CatchError::Bailout) => Err(BailedOut),
        _ if ExecutorGlobals::has_exception() => Ok(None),
        // Neither a panic nor a lost result can come from the closure above
        // (an FFI call alone), and the engine refuses no checked callable
        // without an exception; either would leave `retval` null.
        _ => Ok(Some(retval)),
    }
}

/// Lets a bailout caught by [`call`] go on to the engine's `zend_try`.
///
/// # Safety
///
/// Every value of the calling frames up to the method's handler must have
/// been dropped: this frame and theirs are skipped.
pub unsafe fn resume() -> ! {
    // SAFETY: the caller's contract above.
    unsafe { ext_php_rs::zend::bailout() }
}
