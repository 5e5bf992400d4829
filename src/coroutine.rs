//! Swoole and OpenSwoole coroutines. Their runtime hooks replace PHP's own
//! socket functions, not the extension's: a blocking wait here (`BLPOP`
//! on our socket) stalls every coroutine of the worker, not only the one
//! that waits. So a wait inside a coroutine is refused with a message that
//! says what to do instead (docs/frameworks.md "Swoole").
//!
//! Detected by the coroutine API itself: `Swoole\Coroutine::getCid()` (or
//! `OpenSwoole\Coroutine::getCid()`) is above 0 inside a coroutine and -1
//! outside one. Asked only for a wait (`$wait` > 0), and without
//! autoloading: a PHP without Swoole pays one class-table lookup.

use ext_php_rs::ffi::zend_lookup_class_ex;
use ext_php_rs::types::{ZendCallable, ZendStr};

/// `ZEND_FETCH_CLASS_NO_AUTOLOAD` (Zend/zend_compile.h, PHP 8.0 to 8.4).
const NO_AUTOLOAD: u32 = 0x80;

/// The coroutine classes looked for, Swoole first.
const CLASSES: [&str; 2] = ["Swoole\\Coroutine", "OpenSwoole\\Coroutine"];

/// The class whose current coroutine id is above 0, if any: the caller
/// runs inside a Swoole (or OpenSwoole) coroutine.
pub fn current() -> Option<&'static str> {
    CLASSES
        .into_iter()
        .find(|class| loaded(class) && coroutine_id(class).is_some_and(|cid| cid > 0))
}

/// Whether `class` is declared, without calling any autoloader.
fn loaded(class: &str) -> bool {
    let mut name = ZendStr::new(class, false);
    // SAFETY: a valid, live zend_string; no scope; the lookup only reads
    // the class table.
    unsafe { !zend_lookup_class_ex(&raw mut *name, std::ptr::null_mut(), NO_AUTOLOAD).is_null() }
}

/// `class::getCid()`, or None when it cannot be called or answers no int.
fn coroutine_id(class: &str) -> Option<i64> {
    let get = ZendCallable::try_from_name(&format!("{class}::getCid")).ok()?;
    get.try_call(vec![]).ok()?.long()
}

/// The message of a wait refused inside a coroutine of `class`.
pub fn refusal(class: &str) -> String {
    format!(
        "a wait inside a coroutine ({class}::getCid() > 0) would block every coroutine of this \
         worker: redislock waits on its own socket, which Swoole's hooks do not make \
         cooperative. Call it with $wait = 0 and retry after {class}::sleep(), or take the \
         lock outside coroutines (a task worker, or Octane without coroutines); nothing was \
         acquired"
    )
}
