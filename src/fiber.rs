//! Holds belong to the PHP Fiber that took them: the core asks this module
//! which Fiber is running ([`redislock_core::context`]).

use ext_php_rs::zend::ExecutorGlobals;

/// Tells the core how to name the running Fiber (at module startup).
pub fn install() {
    redislock_core::context::set_source(current);
}

/// The running Fiber, by address; 0 outside any Fiber. Only called on the
/// PHP thread (lock calls), never by the renewal thread.
fn current() -> u64 {
    ExecutorGlobals::get().active_fiber as usize as u64
}
