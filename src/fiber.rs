//! Holds belong to the PHP Fiber that took them: the core asks this module
//! which Fiber is running ([`redislock_core::host::Host::context`]) on the
//! calling thread, and pairs it with the thread (on ZTS PHP each thread runs
//! a request of its own, with its own executor and Fibers).

use ext_php_rs::zend::ExecutorGlobals;

/// The running Fiber, by the address of its context (what the engine's
/// Fiber switch observer names); 0 in the main flow. Only called on a PHP
/// thread (lock calls, interrupts), never by the renewal thread, and about
/// that thread's own executor.
pub fn current() -> u64 {
    let globals = ExecutorGlobals::get();
    let context = globals.current_fiber_context;
    if context.is_null() || context == globals.main_fiber_context {
        0
    } else {
        context as usize as u64
    }
}
