//! Whether PHP wants the running code to stop (for blocked waits).

use std::sync::atomic::{AtomicBool, Ordering};

use ext_php_rs::zend::ExecutorGlobals;

/// True once PHP's execution time limit has been hit (`EG(timed_out)`).
/// A blocked acquire checks it between attempts and gives up, so the engine
/// can raise its "Maximum execution time exceeded" error.
pub fn timed_out() -> bool {
    let globals = ExecutorGlobals::get();
    let flag: *const bool = &globals.timed_out.value;
    // SAFETY: `timed_out` is a C11 atomic bool, laid out like AtomicBool,
    // written by the engine's signal handler on this thread.
    unsafe { (*flag.cast::<AtomicBool>()).load(Ordering::Relaxed) }
}
