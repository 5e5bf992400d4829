//! The `RedisLock\*Exception` classes and the one mapping from core errors
//! onto them.
//!
//! The classes are registered as ordinary internal classes extending PHP's
//! `RuntimeException` (not as `#[php_class]`es), so PHP code can construct,
//! extend and catch them and they carry file, line and trace like any
//! exception.

use std::sync::atomic::{AtomicPtr, Ordering};

use ext_php_rs::args::ArgInfoTables;
use ext_php_rs::builders::ClassBuilder;
use ext_php_rs::class::ClassEntryInfo;
use ext_php_rs::exception::PhpException;
use ext_php_rs::ffi::ext_php_rs_compiler_globals;
use ext_php_rs::zend::{ClassEntry, ce};
use redislock_core::LockError;

use crate::signature::Signature;

/// The exception classes, in registration order (parents first).
#[derive(Debug, Clone, Copy)]
pub enum Class {
    /// `RedisLock\LockException extends RuntimeException`.
    Lock = 0,
    /// `RedisLock\ConnectionException extends RedisLock\LockException`.
    Connection = 1,
    /// `RedisLock\TimeoutException extends RedisLock\LockException`.
    Timeout = 2,
    /// `RedisLock\LockLostException extends RedisLock\LockException`.
    LockLost = 3,
}

static ENTRIES: [AtomicPtr<ClassEntry>; 4] = [
    AtomicPtr::new(std::ptr::null_mut()),
    AtomicPtr::new(std::ptr::null_mut()),
    AtomicPtr::new(std::ptr::null_mut()),
    AtomicPtr::new(std::ptr::null_mut()),
];

/// The registered class entry. Panics if called before module startup
/// registered the classes (a programming error, caught as a PHP `Error`).
pub fn class_entry(class: Class) -> &'static ClassEntry {
    let ptr = ENTRIES[class as usize].load(Ordering::Acquire);
    // SAFETY: set once at startup to an entry of the engine's class table,
    // which lives until module shutdown.
    unsafe { ptr.as_ref() }.expect("redislock exception classes are registered at startup")
}

fn store<const I: usize>(entry: &'static mut ClassEntry, arg_info: ArgInfoTables) {
    ENTRIES[I].store(entry, Ordering::Release);
    // The engine may point into the argument tables for the life of the
    // process (these classes declare no methods, so they are empty).
    std::mem::forget(arg_info);
}

/// `RuntimeException`, looked up in the compiler's class table: it is not
/// among ext-php-rs's known classes, and `ClassEntry::try_find` does not work
/// during module startup.
fn runtime_exception() -> &'static ClassEntry {
    // SAFETY: the compiler globals of the thread running module startup
    // (NTS: the one static); during startup the class table is a live
    // engine hash whose values are IS_PTR zvals pointing at persistent
    // class entries.
    unsafe {
        let table = (*ext_php_rs_compiler_globals())
            .class_table
            .as_ref()
            .expect("the compiler's class table exists at startup");
        let zv = table
            .get("runtimeexception")
            .expect("SPL's RuntimeException is registered before extensions start");
        &*(zv.value.ptr as *const ClassEntry)
    }
}

fn lock_exception() -> &'static ClassEntry {
    class_entry(Class::Lock)
}

/// Registers the four classes. Called from the module startup function.
pub fn register() -> ext_php_rs::error::Result<()> {
    ClassBuilder::new("RedisLock\\LockException")
        .extends((runtime_exception, "RuntimeException"))
        .registration(store::<0>)
        .register()?;
    let parent: ClassEntryInfo = (lock_exception, "RedisLock\\LockException");
    ClassBuilder::new("RedisLock\\ConnectionException")
        .extends(parent)
        .registration(store::<1>)
        .register()?;
    ClassBuilder::new("RedisLock\\TimeoutException")
        .extends(parent)
        .registration(store::<2>)
        .register()?;
    ClassBuilder::new("RedisLock\\LockLostException")
        .extends(parent)
        .registration(store::<3>)
        .register()?;
    Ok(())
}

/// An exception of one of our classes.
pub fn exception(class: Class, message: String) -> PhpException {
    PhpException::new(printable(message), 0, class_entry(class))
}

/// PHP's `ValueError`.
pub fn value_error(message: String) -> PhpException {
    PhpException::new(printable(message), 0, ce::value_error())
}

/// PHP's `TypeError`.
pub fn type_error(message: String) -> PhpException {
    PhpException::new(printable(message), 0, ce::type_error())
}

/// Messages go to PHP as C strings: a NUL byte (from a key, an option name,
/// a URL) is shown as `\0` instead of making the exception unthrowable.
fn printable(message: String) -> String {
    if message.contains('\0') {
        message.replace('\0', "\\0")
    } else {
        message
    }
}

/// Maps a core error onto the PHP exception it stands for. Argument errors
/// become `ValueError`s worded like PHP's own:
/// `RedisLock::__construct(): Argument #2 ($ttl) must be greater than 0`.
pub fn from_core(sig: &Signature, err: LockError) -> PhpException {
    match err {
        LockError::InvalidArgument { param, reason } => {
            value_error(format!("{}: {} {reason}", sig.method, sig.describe(&param)))
        }
        // A cluster node that redirects is a server this lock could not use.
        LockError::Connection { .. } | LockError::Redirected { .. } => {
            exception(Class::Connection, err.to_string())
        }
        LockError::Timeout { .. } => exception(Class::Timeout, err.to_string()),
        LockError::LockLost { .. } => exception(Class::LockLost, err.to_string()),
        LockError::Server { .. }
        | LockError::Unsupported(_)
        | LockError::Unsafe(_)
        | LockError::Internal(_) => exception(Class::Lock, err.to_string()),
        // Callers return without throwing when PHP ended a wait (see
        // `interrupted`); should one get here, it is still a LockException.
        LockError::Interrupted => exception(Class::Lock, err.to_string()),
    }
}
