//! The end of every HTTP request in SAPIs whose request hooks do not line
//! up with HTTP requests: FrankenPHP's worker mode.
//!
//! A FrankenPHP worker is one PHP request (RINIT .. RSHUTDOWN) that serves
//! many HTTP requests: `frankenphp_handle_request()` runs the SAPI's own
//! request start and end around each one, `sapi_activate()` before and
//! `sapi_deactivate()` after, but the modules' RINIT and RSHUTDOWN only for
//! a fixed list of PHP's own extensions. FrankenPHP's source tells other
//! extensions to wrap `sapi_module.activate` / `deactivate` for per-request
//! work (dd-trace-php does). Here `deactivate` is wrapped, in that SAPI
//! only, and ends the request scope there: what `RedisLock::releaseAll()`
//! does (holds and permits with `auto_release` on are released; those with
//! it off stay with their objects, which outlive the HTTP request in a
//! worker), and the interrupt state that RSHUTDOWN resets.
//!
//! Once per request: where RSHUTDOWN runs too (FrankenPHP without a worker,
//! and a worker's own end), `php_request_shutdown()` runs RSHUTDOWN first,
//! which empties the tables of holds and permits; `sapi_deactivate()` comes
//! later in it, finds nothing, and sends nothing to Redis. `sapi_deactivate()`
//! also runs once at the end of PHP's start-up, before any request: nothing
//! to do then either. Every other SAPI (CLI, FPM, Apache) keeps its
//! `sapi_module` untouched.

use std::ffi::{CStr, c_int};
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

use ext_php_rs::ffi::{MODULE_PERSISTENT, sapi_module};

type Deactivate = unsafe extern "C" fn() -> c_int;

/// SAPIs that call `sapi_deactivate()` at the end of every HTTP request
/// but RSHUTDOWN only at the end of a worker.
const WORKER_SAPIS: &[&CStr] = &[c"frankenphp"];

/// The `deactivate` handler that ours replaced (null: none), called after
/// ours.
static PREVIOUS: AtomicPtr<()> = AtomicPtr::new(ptr::null_mut());

const SUCCESS: c_int = 0;

/// Puts [`deactivate`] in `sapi_module.deactivate` when the SAPI is one of
/// [`WORKER_SAPIS`] and the module was loaded at start-up (`ty` is
/// `MODULE_PERSISTENT`; a module loaded by `dl()` is unloaded at request
/// end, and the hook would outlive it). Returns whether it is installed.
/// Module startup only, on PHP's thread, before any request.
pub fn install(ty: i32) -> bool {
    if u32::try_from(ty).ok() != Some(MODULE_PERSISTENT) {
        return false;
    }
    // SAFETY: module startup runs on PHP's thread before any request, so
    // nothing reads `sapi_module` meanwhile; its name is a C string the SAPI
    // keeps for the life of the process.
    let name = unsafe { sapi_module.name };
    if name.is_null() || !WORKER_SAPIS.contains(&unsafe { CStr::from_ptr(name) }) {
        return false;
    }
    if installed() {
        return true;
    }
    let previous = current().map_or(ptr::null_mut(), |p| p as *mut ());
    PREVIOUS.store(previous, Ordering::Release);
    // SAFETY: as above.
    unsafe { sapi_module.deactivate = Some(deactivate) };
    true
}

/// The SAPI's `deactivate` handler now.
fn current() -> Option<Deactivate> {
    // SAFETY: a copy of one pointer, on PHP's thread.
    unsafe { sapi_module.deactivate }
}

/// Whether the hook is in place (phpinfo).
pub fn installed() -> bool {
    let ours: Deactivate = deactivate;
    current().is_some_and(|current| ptr::fn_addr_eq(current, ours))
}

/// Puts back the handler that [`install`] replaced (module shutdown, after
/// the last request: the library may be unloaded next). When another
/// extension wrapped ours meanwhile, its chain still calls ours: both stay.
pub fn uninstall() {
    if !installed() {
        return;
    }
    // SAFETY: module shutdown, PHP's thread, no request running.
    unsafe { sapi_module.deactivate = previous() };
    PREVIOUS.store(ptr::null_mut(), Ordering::Release);
}

fn previous() -> Option<Deactivate> {
    let previous = PREVIOUS.load(Ordering::Acquire);
    // SAFETY: `PREVIOUS` holds null or a `Deactivate` stored by `install`;
    // function pointers are pointer-sized.
    (!previous.is_null()).then(|| unsafe { std::mem::transmute::<*mut (), Deactivate>(previous) })
}

/// `sapi_module.deactivate`: the request scope ends, then the handler it
/// replaced runs (the SAPI's own, or another extension's wrapper). Ours
/// runs first and calls nothing of the engine, so a handler after it that
/// bails out cannot skip it, and nothing jumps over Rust frames.
unsafe extern "C" fn deactivate() -> c_int {
    crate::end_http_request();
    // SAFETY: called as `sapi_deactivate()` would have called it.
    previous().map_or(SUCCESS, |previous| unsafe { previous() })
}
