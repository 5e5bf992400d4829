//! The `redislock` PHP extension: a thin binding over `redislock-core`.
//!
//! - [`redis_lock`]: the `RedisLock` class
//! - [`semaphore`]: the `RedisLock\Semaphore` class
//! - [`args`] / [`coerce`]: PHP arguments to Rust values, with PHP's rules
//! - [`exceptions`]: the `RedisLock\*Exception` classes and the error mapping
//! - [`ini`] / [`info`]: php.ini entries and the phpinfo() section
//! - [`arginfo`]: declared parameter types and attributes the macro cannot
//!   express
//! - [`compare`]: `==` between two locks is identity
//! - [`interrupt`]: PHP's time limit, and `on_lost => "interrupt"`
//! - [`fiber`]: holds belong to the Fiber that took them
//! - [`sapi_hook`]: request end in FrankenPHP's worker mode
//! - [`stats`]: `RedisLock::stats()` and its phpinfo() table

#![cfg_attr(windows, feature(abi_vectorcall))]

mod arginfo;
mod args;
mod callback;
mod coerce;
mod compare;
mod coroutine;
mod diagnose;
mod exceptions;
mod fiber;
mod guarded;
mod info;
mod ini;
mod interrupt;
mod redis_lock;
mod sapi_hook;
mod semaphore;
mod signature;
mod stats;

use std::ffi::c_int;
use std::panic::catch_unwind;
use std::sync::OnceLock;

use ext_php_rs::prelude::*;

const SUCCESS: i32 = 0;
const FAILURE: i32 = -1;

/// Module startup: ini entries, exception classes, and the SAPI hook where
/// the SAPI's requests need one. (The macro registers the `RedisLock` class
/// after this.)
pub fn startup(ty: i32, module_number: i32) -> i32 {
    let registered = catch_unwind(|| {
        ini::register(module_number);
        // Before any worker is forked: the pool's counters are shared.
        redislock_core::stats::init(ini::stats_mode_setting());
        interrupt::install();
        chain_post_startup();
        redislock_core::host::install(redislock_core::host::Host {
            context: fiber::current,
            wait_should_end: interrupt::wait_should_end,
            time_limit_hit: interrupt::timed_out,
            lease_lost: interrupt::lease_lost,
        });
        exceptions::register()
    });
    match registered {
        Ok(Ok(())) => {
            // Last: a module whose startup failed is unloaded, and the SAPI
            // must not keep a pointer into it.
            let _ = catch_unwind(|| sapi_hook::install(ty));
            SUCCESS
        }
        _ => FAILURE,
    }
}

type PostStartup = unsafe extern "C" fn() -> c_int;

unsafe extern "C" {
    /// The engine's hook run once when every module has started, before
    /// any request and (ZTS) before any other thread exists (zend.c; not in
    /// ext-php-rs's bindings). Opcache chains it the same way.
    static mut zend_post_startup_cb: Option<PostStartup>;
}

/// The hook that was installed before ours.
static PREVIOUS_POST_STARTUP: OnceLock<Option<PostStartup>> = OnceLock::new();

fn chain_post_startup() {
    // SAFETY: module startup runs on one thread, before the engine reads
    // the hook.
    unsafe {
        let previous = zend_post_startup_cb;
        if PREVIOUS_POST_STARTUP.set(previous).is_ok() {
            zend_post_startup_cb = Some(post_startup);
        }
    }
}

/// Finishes the arginfo and the object handlers (once per process) when
/// the classes exist and nothing runs yet: on ZTS PHP no other thread reads
/// them while they change.
unsafe extern "C" fn post_startup() -> c_int {
    finish_classes();
    match PREVIOUS_POST_STARTUP.get() {
        // SAFETY: the engine's hook, called as the engine would.
        Some(Some(previous)) => unsafe { previous() },
        _ => SUCCESS,
    }
}

fn finish_classes() {
    let _ = catch_unwind(arginfo::correct_once);
    let _ = catch_unwind(compare::install_once);
    // ext-php-rs builds a class's handler table at its first object; built
    // here, no thread builds it while another reads it.
    let _ = catch_unwind(|| {
        use ext_php_rs::class::RegisteredClass;
        semaphore::Semaphore::get_metadata().handlers();
    });
}

/// Request startup: finish the classes if the post-startup hook did not
/// (an extension loaded by `dl()` starts after it ran); a no-op otherwise.
extern "C" fn request_startup(_ty: i32, _module_number: i32) -> i32 {
    finish_classes();
    SUCCESS
}

/// Request end: release every hold still open (this also runs after a fatal
/// error or a timeout, which skip destructors).
extern "C" fn request_shutdown(_ty: i32, _module_number: i32) -> i32 {
    let _ = catch_unwind(redislock_core::release_all);
    let _ = catch_unwind(interrupt::reset);
    SUCCESS
}

/// The end of one HTTP request of a FrankenPHP worker (through
/// `sapi_module.deactivate`, [`sapi_hook`]): the request scope ends as with
/// `RedisLock::releaseAll()`, since the worker's objects live on, and the
/// interrupt state is reset as at request end.
fn end_http_request() {
    let _ = catch_unwind(redislock_core::end_request_scope);
    let _ = catch_unwind(interrupt::reset);
}

/// Module shutdown: put the SAPI's hook back, stop the renewal thread,
/// close pooled connections.
extern "C" fn module_shutdown(_ty: i32, _module_number: i32) -> i32 {
    let _ = catch_unwind(sapi_hook::uninstall);
    let _ = catch_unwind(redislock_core::shutdown);
    SUCCESS
}

/// The module entry PHP loads.
#[php_module]
#[php(startup = "startup")]
pub fn get_module(module: ModuleBuilder) -> ModuleBuilder {
    module
        .class::<redis_lock::RedisLock>()
        .class::<semaphore::Semaphore>()
        .request_startup_function(request_startup)
        .request_shutdown_function(request_shutdown)
        .shutdown_function(module_shutdown)
        .info_function(info::php_info)
}
