//! `==` on `RedisLock` objects is identity.
//!
//! ext-php-rs compares two objects of a `#[php_class]` by their properties.
//! `RedisLock` has none, so any two locks compared equal and
//! `in_array($lock, $locks)` or `array_search()` found the wrong one. Like
//! PHP's closures, two distinct locks are *uncomparable*
//! (`ZEND_UNCOMPARABLE`): `==` is true only for the same object, `!=` is
//! true otherwise, and `<`, `<=`, `>`, `>=` are false.
//!
//! ext-php-rs has no option for a class's `compare` handler: it keeps the
//! handler table of each class in the class's static metadata and hands it
//! out by shared reference. [`install_once`] changes that one entry of the
//! table in place, when every module has started (or at the first request
//! after a `dl()`), before any `RedisLock` object exists. It writes through a pointer derived from the metadata (whose
//! table sits in interior-mutable storage), and only after checking that the
//! table really lies inside the metadata; if a future ext-php-rs keeps it
//! elsewhere, nothing is changed and `==` falls back to the library's
//! comparison (`===` and `in_array(..., true)` always compare identity).

use std::ffi::c_int;
use std::mem::size_of;
use std::ptr;
use std::sync::Once;

use ext_php_rs::class::{ClassMetadata, RegisteredClass};
use ext_php_rs::ffi::{zend_std_compare_objects, zval};
use ext_php_rs::zend::ZendObjectHandlers;

use crate::redis_lock::RedisLock;

/// `ZEND_UNCOMPARABLE`: neither equal, smaller nor greater.
const UNCOMPARABLE: c_int = 1;

static ONCE: Once = Once::new();

/// The `compare` handler: identity between two locks; anything else (a lock
/// against a scalar or another class) is left to the engine's standard
/// comparison, as `ZEND_COMPARE_OBJECTS_FALLBACK` does for closures.
unsafe extern "C" fn compare(o1: *mut zval, o2: *mut zval) -> c_int {
    // SAFETY: the engine passes two live zvals, at least one of them an
    // object whose handler table is ours; an object's handler table lives as
    // long as the object.
    unsafe {
        let (Some(a), Some(b)) = (o1.as_ref(), o2.as_ref()) else {
            return UNCOMPARABLE;
        };
        if a.is_object() && b.is_object() {
            let (x, y) = (a.value.obj, b.value.obj);
            if x == y {
                return 0;
            }
            let ours = |obj: *mut ext_php_rs::ffi::zend_object| {
                (*obj)
                    .handlers
                    .as_ref()
                    .and_then(|h| h.compare)
                    .is_some_and(|f| ptr::fn_addr_eq(f, compare as unsafe extern "C" fn(_, _) -> _))
            };
            if ours(x) && ours(y) {
                return UNCOMPARABLE;
            }
        }
        zend_std_compare_objects(o1, o2)
    }
}

/// Installs [`compare`] in `RedisLock`'s handler table (once per process,
/// before the first `RedisLock` object is created).
pub fn install_once() {
    ONCE.call_once(|| {
        let meta: &'static ClassMetadata<RedisLock> = RedisLock::get_metadata();
        // Creates the table if this is its first use.
        let table = ptr::from_ref(meta.handlers()).cast::<u8>();
        let base = ptr::from_ref(meta).cast::<u8>();
        let offset = (table as usize).wrapping_sub(base as usize);
        let inside = offset
            .checked_add(size_of::<ZendObjectHandlers>())
            .is_some_and(|end| end <= size_of::<ClassMetadata<RedisLock>>());
        if !inside {
            return;
        }
        // SAFETY: the table lies inside the metadata static, in the
        // `UnsafeCell` of its `OnceCell`, so a pointer derived from the
        // metadata reference may write it. No object (hence no engine
        // reader of the table) exists yet, and no other thread runs (module
        // startup). Only the `compare` slot changes.
        unsafe {
            let table = base.cast_mut().add(offset).cast::<ZendObjectHandlers>();
            (*table).compare = Some(compare);
        }
    });
}
