//! Corrects what the macro declares about a few parameters.
//!
//! ext-php-rs derives a parameter's declared type from its Rust type, one
//! type per parameter. Two cases need more: `$servers` accepts
//! `string|array|null` (the macro says `mixed`), and the `float $wait` and
//! `array $options` parameters are nullable on the Rust side only so that a
//! `null` gets PHP's own TypeError message. This rewrites their type masks
//! in the engine's copy of the arginfo, once, when every module has started
//! (or at the first request after a `dl()`), so Reflection and the stub
//! show the contract's types.
//!
//! The macro cannot declare attributes either: the parameters that can carry
//! a password (`$servers`, and `$options` with `sentinel_password`) get
//! `#[\SensitiveParameter]` here, the way PHP's stub generator does it for
//! internal functions (`zend_add_parameter_attribute()`), so exception
//! traces and `debug_backtrace()` show a `SensitiveParameterValue` instead.

use std::ffi::{CStr, c_void};
use std::sync::Once;

use ext_php_rs::class::RegisteredClass;
use ext_php_rs::ffi::{HashTable, zend_function, zend_string};
use ext_php_rs::types::ZendStr;

use ext_php_rs::zend::ClassEntry;

use crate::redis_lock::RedisLock;
use crate::semaphore::Semaphore;

// zend_type_info.h: the type bits of a zend_type mask.
const MAY_BE_NULL: u32 = 1 << 1;
const MAY_BE_LONG: u32 = 1 << 4;
const MAY_BE_DOUBLE: u32 = 1 << 5;
const MAY_BE_STRING: u32 = 1 << 6;
const MAY_BE_ARRAY: u32 = 1 << 7;

/// (method, parameter, declared type mask).
const CORRECTIONS: &[(&str, &str, u32)] = &[
    (
        "__construct",
        "servers",
        MAY_BE_STRING | MAY_BE_ARRAY | MAY_BE_NULL,
    ),
    (
        "restore",
        "servers",
        MAY_BE_STRING | MAY_BE_ARRAY | MAY_BE_NULL,
    ),
    (
        "inspect",
        "servers",
        MAY_BE_STRING | MAY_BE_ARRAY | MAY_BE_NULL,
    ),
    (
        "diagnose",
        "servers",
        MAY_BE_STRING | MAY_BE_ARRAY | MAY_BE_NULL,
    ),
    ("__construct", "options", MAY_BE_ARRAY),
    ("inspect", "options", MAY_BE_ARRAY),
    ("diagnose", "options", MAY_BE_ARRAY),
    ("restore", "options", MAY_BE_ARRAY),
    ("acquire", "wait", MAY_BE_DOUBLE),
    ("acquireread", "wait", MAY_BE_DOUBLE),
    ("withlock", "wait", MAY_BE_DOUBLE),
];

/// (method, parameter) pairs that get `#[\SensitiveParameter]`.
const SENSITIVE: &[(&str, &str)] = &[
    ("__construct", "servers"),
    ("__construct", "options"),
    ("restore", "token"),
    ("restore", "servers"),
    ("restore", "options"),
    ("inspect", "servers"),
    ("inspect", "options"),
    ("diagnose", "servers"),
    ("diagnose", "options"),
];

/// [`CORRECTIONS`] of `RedisLock\Semaphore`.
const SEMAPHORE_CORRECTIONS: &[(&str, &str, u32)] = &[
    (
        "__construct",
        "servers",
        MAY_BE_STRING | MAY_BE_ARRAY | MAY_BE_NULL,
    ),
    ("__construct", "options", MAY_BE_ARRAY),
    ("acquire", "wait", MAY_BE_DOUBLE),
    ("acquire", "count", MAY_BE_LONG),
    ("withpermit", "wait", MAY_BE_DOUBLE),
    ("withpermit", "count", MAY_BE_LONG),
];

/// [`SENSITIVE`] of `RedisLock\Semaphore`.
const SEMAPHORE_SENSITIVE: &[(&str, &str)] =
    &[("__construct", "servers"), ("__construct", "options")];

/// zend_attributes.h: the attribute (and its strings) live in persistent
/// memory, as for every internal function.
const ZEND_ATTRIBUTE_PERSISTENT: u32 = 1 << 0;

unsafe extern "C" {
    /// `zend_add_parameter_attribute()` is a static inline wrapper around
    /// this exported function (`offset` = parameter index + 1); ext-php-rs
    /// has no binding for either.
    fn zend_add_attribute(
        attributes: *mut *mut HashTable,
        name: *mut zend_string,
        argc: u32,
        flags: u32,
        offset: u32,
        lineno: u32,
    ) -> *mut c_void;
}

/// Bits 0..=24 describe the type; higher bits are flags (by-ref, variadic).
const TYPE_BITS: u32 = (1 << 25) - 1;

static ONCE: Once = Once::new();

/// Applies [`CORRECTIONS`] and [`SENSITIVE`] (once per process).
pub fn correct_once() {
    ONCE.call_once(|| {
        let lock = RedisLock::get_metadata().ce();
        let semaphore = Semaphore::get_metadata().ce();
        for (ce, corrections, sensitive) in [
            (lock, CORRECTIONS, SENSITIVE),
            (semaphore, SEMAPHORE_CORRECTIONS, SEMAPHORE_SENSITIVE),
        ] {
            for (method, param, mask) in corrections {
                set_type(ce, method, param, *mask);
            }
            for (method, param) in sensitive {
                mark_sensitive(ce, method, param);
            }
        }
    });
}

/// The engine's function of `method` (the lower-case key of the class's
/// function table) and the index of its parameter `param`.
fn find_param(ce: &ClassEntry, method: &str, param: &str) -> Option<(*mut zend_function, usize)> {
    // SAFETY: the function table of a registered internal class holds
    // IS_PTR zvals to persistent zend_internal_function structures whose
    // arg_info arrays live for the life of the process.
    unsafe {
        let func = ce.function_table.get(method)?.ptr::<zend_function>()?;
        let internal = &(*func).internal_function;
        (0..internal.num_args as usize)
            .find(|&i| {
                let info = &*internal.arg_info.add(i);
                !info.name.is_null() && CStr::from_ptr(info.name).to_bytes() == param.as_bytes()
            })
            .map(|i| (func, i))
    }
}

fn set_type(ce: &ClassEntry, method: &str, param: &str, mask: u32) {
    let Some((func, i)) = find_param(ce, method, param) else {
        return;
    };
    // SAFETY: `find_param` returned a live function and an index below its
    // `num_args`. No request has read the arginfo yet: this runs after
    // module startup, before any request or other thread (after a `dl()`:
    // in that request's startup, single-threaded).
    unsafe {
        let info = &mut *(*func).internal_function.arg_info.add(i);
        info.type_.type_mask = (info.type_.type_mask & !TYPE_BITS) | mask;
    }
}

/// Adds `#[\SensitiveParameter]` to one parameter, as the engine's
/// `zend_add_parameter_attribute(func, i, "SensitiveParameter", 0)`.
fn mark_sensitive(ce: &ClassEntry, method: &str, param: &str) {
    let Some((func, i)) = find_param(ce, method, param) else {
        return;
    };
    let Ok(offset) = u32::try_from(i + 1) else {
        return;
    };
    // A persistent (not request-interned) name: the attribute outlives this
    // request. The engine keeps its own reference; ours is released on drop.
    let mut name = ZendStr::new("SensitiveParameter", true);
    // SAFETY: `func` is a live persistent internal function; the engine
    // allocates the attribute table persistently (and frees it at module
    // shutdown with the class). Before any script (as in `set_type`).
    unsafe {
        zend_add_attribute(
            &raw mut (*func).common.attributes,
            &raw mut *name,
            0,
            ZEND_ATTRIBUTE_PERSISTENT,
            offset,
            0,
        );
    }
}
