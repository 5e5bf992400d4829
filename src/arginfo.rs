//! Widens the declared type of `$servers` to `string|array|null`.
//!
//! ext-php-rs declares one type per parameter, and the parameter accepts
//! several, so the macro's arginfo says `mixed`. Reflection, IDE stubs and
//! the contract say `string|array|null`: this rewrites the type mask of that
//! parameter in the engine's copy of the arginfo, once, at the first request.

use std::ffi::CStr;
use std::sync::Once;

use ext_php_rs::class::RegisteredClass;
use ext_php_rs::ffi::zend_function;

use crate::redis_lock::RedisLock;

// zend_type_info.h: the type bits of a zend_type mask.
const MAY_BE_NULL: u32 = 1 << 1;
const MAY_BE_STRING: u32 = 1 << 6;
const MAY_BE_ARRAY: u32 = 1 << 7;
/// Bits 0..=24 describe the type; higher bits are flags (by-ref, variadic).
const TYPE_BITS: u32 = (1 << 25) - 1;

static ONCE: Once = Once::new();

/// Rewrites the arginfo of `RedisLock::__construct()` and `::restore()`.
pub fn widen_servers_once() {
    ONCE.call_once(|| {
        for method in ["__construct", "restore"] {
            widen(
                method,
                "servers",
                MAY_BE_STRING | MAY_BE_ARRAY | MAY_BE_NULL,
            );
        }
    });
}

fn widen(method: &str, param: &str, mask: u32) {
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
