//! Corrects the declared types of a few parameters.
//!
//! ext-php-rs derives a parameter's declared type from its Rust type, one
//! type per parameter. Two cases need more: `$servers` accepts
//! `string|array|null` (the macro says `mixed`), and the `float $wait` and
//! `array $options` parameters are nullable on the Rust side only so that a
//! `null` gets PHP's own TypeError message. This rewrites their type masks
//! in the engine's copy of the arginfo, once, at the first request, so
//! Reflection and the stub show the contract's types.

use std::ffi::CStr;
use std::sync::Once;

use ext_php_rs::class::RegisteredClass;
use ext_php_rs::ffi::zend_function;

use crate::redis_lock::RedisLock;

// zend_type_info.h: the type bits of a zend_type mask.
const MAY_BE_NULL: u32 = 1 << 1;
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
    ("__construct", "options", MAY_BE_ARRAY),
    ("restore", "options", MAY_BE_ARRAY),
    ("acquire", "wait", MAY_BE_DOUBLE),
    ("withlock", "wait", MAY_BE_DOUBLE),
];

/// Bits 0..=24 describe the type; higher bits are flags (by-ref, variadic).
const TYPE_BITS: u32 = (1 << 25) - 1;

static ONCE: Once = Once::new();

/// Applies [`CORRECTIONS`] (once per process).
pub fn correct_once() {
    ONCE.call_once(|| {
        for (method, param, mask) in CORRECTIONS {
            set_type(method, param, *mask);
        }
    });
}

/// `method` is the lower-case key of the class's function table.
fn set_type(method: &str, param: &str, mask: u32) {
    let ce = RedisLock::get_metadata().ce();
    // SAFETY: the function table of a registered internal class holds
    // IS_PTR zvals to persistent zend_internal_function structures whose
    // arg_info arrays are heap memory owned for the life of the process. PHP
    // is single-threaded here (NTS) and no request has read them yet.
    unsafe {
        let Some(func) = ce
            .function_table
            .get(method)
            .and_then(|zv| zv.ptr::<zend_function>())
        else {
            return;
        };
        let internal = &mut (*func).internal_function;
        for i in 0..internal.num_args as usize {
            let info = &mut *internal.arg_info.add(i);
            if !info.name.is_null() && CStr::from_ptr(info.name).to_bytes() == param.as_bytes() {
                info.type_.type_mask = (info.type_.type_mask & !TYPE_BITS) | mask;
            }
        }
    }
}
