//! PHP's interruptions, seen from Rust: the execution time limit (for
//! blocked waits) and `on_lost => "interrupt"`, which throws
//! `LockLostException` into a running `withLock()` callback at its next
//! opcode when the renewal thread finds the lease lost.
//!
//! The renewal thread never touches the engine beyond one atomic store:
//! it sets [`PENDING`] and PHP's `vm_interrupt` flag. The engine then calls
//! [`on_interrupt`] on PHP's own thread, between two opcodes, where throwing
//! is safe; the handler throws only if a `withLock()` of a lost hold is
//! running, and always chains to the handler installed before it (pcntl's
//! async signals use the same hook).

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use ext_php_rs::ffi::{
    executor_globals, zend_atomic_bool_store, zend_execute_data, zend_interrupt_function,
};
use ext_php_rs::zend::ExecutorGlobals;

use crate::exceptions::{Class, exception};

type Handler = unsafe extern "C" fn(*mut zend_execute_data);

/// Set by the renewal thread when an interrupt-enabled lease is lost.
static PENDING: AtomicBool = AtomicBool::new(false);

/// The interrupt handler that was installed before ours.
static PREVIOUS: OnceLock<Option<Handler>> = OnceLock::new();

/// A `withLock()` callback running with interrupts enabled.
#[derive(Debug, Clone, Copy)]
struct Running {
    /// The hold it runs under.
    hold: u64,
    /// The Fiber running it ([`redislock_core::host::context`]): the interrupt
    /// is thrown there and nowhere else.
    context: u64,
    /// Whether the interrupt was thrown already.
    thrown: bool,
}

/// The running callbacks, innermost last.
static ACTIVE: Mutex<Vec<Running>> = Mutex::new(Vec::new());

/// True once PHP's execution time limit has been hit (`EG(timed_out)`).
/// A blocked acquire checks it between waits and gives up, so the engine
/// can raise its "Maximum execution time exceeded" error.
pub fn timed_out() -> bool {
    let globals = ExecutorGlobals::get();
    let flag: *const bool = &globals.timed_out.value;
    // SAFETY: `timed_out` is a C11 atomic bool, laid out like AtomicBool,
    // written by the engine's signal handler on this thread.
    unsafe { (*flag.cast::<AtomicBool>()).load(Ordering::Relaxed) }
}

/// Asked by the core while `acquire()` blocks, after a signal and every
/// 100 ms: runs what the engine would run at the next opcode when something
/// asked it to (PHP's async signal handlers, through the interrupt hook
/// chain) and answers whether the wait must end: a handler threw or called
/// `exit()` (an exception is pending), or the time limit was hit (then
/// `vm_interrupt` stays set, so the engine raises its fatal error as soon as
/// `acquire()` returns).
pub fn wait_should_end() -> bool {
    if timed_out() {
        return true;
    }
    // SAFETY: PHP's thread (the core asks only during a call from PHP);
    // NTS executor globals are one static. The flag is cleared first, as
    // the engine does before calling the interrupt function.
    unsafe {
        // `vm_interrupt` is a C11 atomic bool, laid out like AtomicBool.
        let flag = (&raw mut executor_globals.vm_interrupt.value).cast::<AtomicBool>();
        if !(*flag).swap(false, Ordering::AcqRel) {
            return false;
        }
        if let Some(handler) = zend_interrupt_function {
            handler(executor_globals.current_execute_data);
        }
        if timed_out() {
            zend_atomic_bool_store(&raw mut executor_globals.vm_interrupt, true);
            return true;
        }
        !executor_globals.exception.is_null()
    }
}

/// Installs [`on_interrupt`] and the Fiber switch observer (module
/// startup). The core's hooks ([`wait_should_end`], [`lease_lost`]) are
/// installed with the others in `lib.rs`.
pub fn install() {
    // SAFETY: module startup runs on PHP's thread before any request.
    unsafe {
        let previous = zend_interrupt_function;
        if PREVIOUS.set(previous).is_ok() {
            zend_interrupt_function = Some(on_interrupt);
        }
    }
    // SAFETY: module startup, PHP's thread; the engine calls the observer
    // on every Fiber switch, on this thread.
    unsafe { zend_observer_fiber_switch_register(Some(on_fiber_switch)) };
}

unsafe extern "C" {
    /// The engine's Fiber switch observer registry (PHP 8.1+; not in
    /// ext-php-rs's bindings).
    fn zend_observer_fiber_switch_register(
        handler: Option<unsafe extern "C" fn(*mut c_void, *mut c_void)>,
    );
}

/// Called by the engine before it switches Fibers: when an interrupt is
/// owed to a callback that runs in the Fiber being switched to, asks the
/// engine to interrupt again, so it is thrown there at its next opcode.
unsafe extern "C" fn on_fiber_switch(_from: *mut c_void, _to: *mut c_void) {
    if PENDING.load(Ordering::Acquire) {
        // SAFETY: as in `lease_lost`.
        unsafe { zend_atomic_bool_store(&raw mut executor_globals.vm_interrupt, true) };
    }
}

/// Called on the renewal thread: flag it and ask the engine to interrupt.
pub fn lease_lost() {
    PENDING.store(true, Ordering::Release);
    // SAFETY: NTS executor globals are one static; `vm_interrupt` is an
    // atomic the engine reads at every opcode boundary, meant to be set
    // from signal handlers and other threads.
    unsafe { zend_atomic_bool_store(&raw mut executor_globals.vm_interrupt, true) };
}

/// Marks a `withLock()` callback of hold `id` as running (in the current
/// Fiber).
pub fn enter(id: u64) {
    active().push(Running {
        hold: id,
        context: redislock_core::host::context(),
        thrown: false,
    });
}

/// Marks the innermost running callback of hold `id` as finished.
pub fn leave(id: u64) {
    let mut active = active();
    if let Some(pos) = active.iter().rposition(|r| r.hold == id) {
        active.remove(pos);
    }
}

/// Forgets every running callback (request end: a fatal error or exit()
/// inside a callback skips [`leave`]).
pub fn reset() {
    active().clear();
    PENDING.store(false, Ordering::Release);
}

fn active() -> std::sync::MutexGuard<'static, Vec<Running>> {
    ACTIVE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

unsafe extern "C" fn on_interrupt(execute_data: *mut zend_execute_data) {
    if PENDING.load(Ordering::Acquire) {
        // Only a callback running in this Fiber is interrupted; one whose
        // Fiber is suspended is owed the interrupt until it runs again
        // (`on_fiber_switch`), so it never lands in other code.
        let here = redislock_core::host::context();
        let (thrown, owed) = {
            let mut active = active();
            let mut owed = false;
            let mut thrown = false;
            for running in active.iter_mut().rev() {
                if running.thrown || !redislock_core::hold_lost(running.hold) {
                    continue;
                }
                if running.context == here && !thrown {
                    running.thrown = true;
                    thrown = true;
                } else {
                    owed = true;
                }
            }
            (thrown, owed)
        };
        PENDING.store(owed, Ordering::Release);
        if thrown {
            exception(
                Class::LockLost,
                "the lock's lease was lost while withLock() ran (on_lost: interrupt)".into(),
            )
            .throw();
        }
    }
    if let Some(Some(previous)) = PREVIOUS.get() {
        // SAFETY: the engine's own handler, called as the engine would.
        unsafe { previous(execute_data) };
    }
}
