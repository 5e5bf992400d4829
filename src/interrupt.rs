//! PHP's interruptions, seen from Rust: the execution time limit (for
//! blocked waits) and `on_lost => "interrupt"`, which throws
//! `LockLostException` into a running `withLock()` callback at its next
//! opcode when the renewal thread finds the lease lost.
//!
//! The renewal thread never touches the engine beyond one atomic store: it
//! marks every PHP thread that runs such a callback as owed an interrupt
//! and sets that thread's `vm_interrupt` flag (NTS PHP has one PHP thread;
//! ZTS PHP one executor, with its own flag, per thread). The engine then
//! calls [`on_interrupt`] on that PHP thread, between two opcodes, where
//! throwing is safe; the handler throws only if a `withLock()` of a lost
//! hold of that thread is running, and always chains to the handler
//! installed before it (pcntl's async signals use the same hook).

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use ext_php_rs::ffi::{
    ext_php_rs_executor_globals, zend_atomic_bool, zend_atomic_bool_store, zend_execute_data,
    zend_executor_globals, zend_interrupt_function,
};
use ext_php_rs::zend::ExecutorGlobals;
use redislock_core::host;

use crate::exceptions::{Class, exception};

type Handler = unsafe extern "C" fn(*mut zend_execute_data);

/// The interrupt handler that was installed before ours.
static PREVIOUS: OnceLock<Option<Handler>> = OnceLock::new();

/// A `withLock()` callback running with interrupts enabled.
#[derive(Debug, Clone, Copy)]
struct Running {
    /// The hold it runs under.
    hold: u64,
    /// The Fiber running it ([`redislock_core::host::context`]) on its
    /// thread: the interrupt is thrown there and nowhere else.
    context: u64,
    /// Whether the interrupt was thrown already.
    thrown: bool,
}

/// The engine's interrupt flag (`EG(vm_interrupt)`) of one PHP thread.
#[derive(Debug, Clone, Copy)]
struct Flag(*mut zend_atomic_bool);

// SAFETY: the flag is a C11 atomic in that thread's executor globals, meant
// to be set from other threads and signal handlers. A `Flag` is only kept
// (in [`THREADS`]) while its thread runs a callback, inside a request, so
// the globals outlive every use; all uses happen under the [`THREADS`]
// mutex, which that thread takes to remove it.
unsafe impl Send for Flag {}

/// A PHP thread that runs interrupt-enabled callbacks (on NTS PHP there is
/// one PHP thread; on ZTS PHP each thread runs a request of its own).
#[derive(Debug)]
struct Thread {
    /// [`redislock_core::host::thread`].
    thread: u64,
    /// Its interrupt flag.
    flag: Flag,
    /// An interrupt is owed to one of its callbacks.
    pending: bool,
    /// Its running callbacks, innermost last.
    running: Vec<Running>,
}

/// The threads with running callbacks; a thread leaves when its last
/// callback ends or its request ends.
static THREADS: Mutex<Vec<Thread>> = Mutex::new(Vec::new());

fn threads() -> MutexGuard<'static, Vec<Thread>> {
    THREADS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The calling thread's executor globals (NTS: the one static; ZTS: this
/// thread's, through TSRM).
fn globals() -> *mut zend_executor_globals {
    // SAFETY: called on a PHP thread, where the engine has set them up.
    unsafe { ext_php_rs_executor_globals() }
}

/// Asks the engine to interrupt the calling thread at its next opcode.
fn interrupt_here() {
    // SAFETY: this thread's globals; `vm_interrupt` is an atomic.
    unsafe { zend_atomic_bool_store(&raw mut (*globals()).vm_interrupt, true) };
}

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
    // SAFETY: PHP's thread (the core asks only during a call from PHP),
    // its own executor globals. The flag is cleared first, as the engine
    // does before calling the interrupt function.
    unsafe {
        let globals = globals();
        // `vm_interrupt` is a C11 atomic bool, laid out like AtomicBool.
        let flag = (&raw mut (*globals).vm_interrupt.value).cast::<AtomicBool>();
        if !(*flag).swap(false, Ordering::AcqRel) {
            return false;
        }
        if let Some(handler) = zend_interrupt_function {
            handler((*globals).current_execute_data);
        }
        if timed_out() {
            interrupt_here();
            return true;
        }
        !(*globals).exception.is_null()
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
/// owed to a callback of this thread, asks the engine to interrupt again,
/// so it is thrown in the callback's Fiber at its next opcode there.
unsafe extern "C" fn on_fiber_switch(_from: *mut c_void, _to: *mut c_void) {
    let thread = host::thread();
    let owed = threads().iter().any(|t| t.thread == thread && t.pending);
    if owed {
        interrupt_here();
    }
}

/// Called on the renewal thread: every PHP thread running a callback is
/// owed an interrupt and asked for it (the handler, on that thread, throws
/// only into a callback whose hold is lost).
pub fn lease_lost() {
    for thread in threads().iter_mut() {
        thread.pending = true;
        // SAFETY: see `Flag`: that thread is inside a request, and the
        // mutex held keeps it from leaving.
        unsafe { zend_atomic_bool_store(thread.flag.0, true) };
    }
}

/// Marks a `withLock()` callback of hold `id` as running (in the current
/// Fiber). A lease already found lost is owed its interrupt at once.
pub fn enter(id: u64) {
    let (here, context) = (host::thread(), host::context());
    let lost = redislock_core::hold_lost(id);
    let mut threads = threads();
    let pos = match threads.iter().position(|t| t.thread == here) {
        Some(pos) => pos,
        None => {
            threads.push(Thread {
                thread: here,
                // SAFETY: this thread's globals.
                flag: Flag(unsafe { &raw mut (*globals()).vm_interrupt }),
                pending: false,
                running: Vec::new(),
            });
            threads.len() - 1
        }
    };
    let thread = &mut threads[pos];
    thread.running.push(Running {
        hold: id,
        context,
        thrown: false,
    });
    if lost {
        thread.pending = true;
        interrupt_here();
    }
}

/// Marks the innermost running callback of hold `id` as finished.
pub fn leave(id: u64) {
    let here = host::thread();
    let mut threads = threads();
    if let Some(t) = threads.iter().position(|t| t.thread == here) {
        let running = &mut threads[t].running;
        if let Some(pos) = running.iter().rposition(|r| r.hold == id) {
            running.remove(pos);
        }
        if running.is_empty() {
            threads.swap_remove(t);
        }
    }
}

/// Forgets this thread's running callbacks (request end: a fatal error or
/// exit() inside a callback skips [`leave`]).
pub fn reset() {
    let here = host::thread();
    threads().retain(|t| t.thread != here);
}

unsafe extern "C" fn on_interrupt(execute_data: *mut zend_execute_data) {
    // Only a callback running in this Fiber is interrupted; one whose Fiber
    // is suspended is owed the interrupt until it runs again
    // (`on_fiber_switch`), so it never lands in other code.
    let (here, context) = (host::thread(), host::context());
    let thrown = {
        let mut threads = threads();
        let mut thrown = false;
        if let Some(thread) = threads.iter_mut().find(|t| t.thread == here && t.pending) {
            let mut owed = false;
            for running in thread.running.iter_mut().rev() {
                if running.thrown || !redislock_core::hold_lost(running.hold) {
                    continue;
                }
                if running.context == context && !thrown {
                    running.thrown = true;
                    thrown = true;
                } else {
                    owed = true;
                }
            }
            thread.pending = owed;
        }
        thrown
    };
    if thrown {
        exception(
            Class::LockLost,
            "the lock's lease was lost while withLock() ran (on_lost: interrupt)".into(),
        )
        .throw();
    }
    if let Some(Some(previous)) = PREVIOUS.get() {
        // SAFETY: the engine's own handler, called as the engine would.
        unsafe { previous(execute_data) };
    }
}
