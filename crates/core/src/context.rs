//! The execution context a call runs in: on PHP, the Fiber running it (0
//! outside any Fiber). Holds belong to the context that took them, so code
//! in another Fiber competes for a lock like another process would.
//!
//! The core knows nothing of PHP: the binding registers, once, a function
//! that names the current context ([`set_source`]). Without one, every call
//! runs in context 0.

use std::sync::OnceLock;

static SOURCE: OnceLock<fn() -> u64> = OnceLock::new();

/// Registers the function that names the current context (first call wins).
pub fn set_source(source: fn() -> u64) {
    let _ = SOURCE.set(source);
}

/// The current context (0: the main flow, or no source registered).
pub fn current() -> u64 {
    SOURCE.get().map_or(0, |source| source())
}
