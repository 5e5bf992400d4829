//! PHP's scalar parameter rules, applied to `Zval`s by hand.
//!
//! ext-php-rs only accepts the exact type (an `int` is not a `float`), while
//! PHP's own functions coerce in weak mode: `1`, `"1.5"` and `true` are all
//! valid floats unless the caller declared `strict_types=1`. These helpers
//! follow the engine's rules, and report what was given for the `TypeError`.

use std::ffi::c_int;
use std::ptr;

use ext_php_rs::ffi::{IS_STRING, ZEND_ACC_STRICT_TYPES, ZEND_RESULT_CODE_SUCCESS};
use ext_php_rs::flags::DataType;
use ext_php_rs::types::Zval;
use ext_php_rs::zend::ExecutorGlobals;
use redislock_core::OptionValue;
use redislock_core::config::php_numeric::{float_to_string, parse_numeric};

/// What PHP calls the type of `zv` in "X given" messages.
pub fn given(zv: &Zval) -> String {
    match zv.get_type() {
        DataType::Null | DataType::Undef => "null".into(),
        DataType::False | DataType::True | DataType::Bool => "bool".into(),
        DataType::Long => "int".into(),
        DataType::Double => "float".into(),
        DataType::String => "string".into(),
        DataType::Array => "array".into(),
        // An anonymous class is named "class@anonymous\0<file>...": PHP
        // shows the part before the NUL.
        DataType::Object(_) => zv
            .object()
            .and_then(|o| o.get_class_name().ok())
            .map(|name| name.split('\0').next().unwrap_or_default().to_owned())
            .unwrap_or_else(|| "object".into()),
        DataType::Resource => "resource".into(),
        _ => "mixed".into(),
    }
}

/// True when the PHP code calling the current internal function declared
/// `strict_types=1` (the engine's `ZEND_ARG_USES_STRICT_TYPES()`).
pub fn caller_is_strict() -> bool {
    let globals = ExecutorGlobals::get();
    // SAFETY: execute data and functions are live engine structures while
    // the internal function that asks is running.
    unsafe {
        let current = globals.current_execute_data;
        if current.is_null() {
            return false;
        }
        let prev = (*current).prev_execute_data;
        if prev.is_null() || (*prev).func.is_null() {
            return false;
        }
        (*(*prev).func).common.fn_flags & ZEND_ACC_STRICT_TYPES != 0
    }
}

/// A float parameter: int and float always, numeric strings and bools in
/// weak mode. `Err` carries the given type.
pub fn to_float(zv: &Zval, strict: bool) -> Result<f64, String> {
    if let Some(d) = zv.double() {
        return Ok(d);
    }
    if let Some(l) = zv.long() {
        return Ok(l as f64);
    }
    if !strict {
        if let Some(b) = zv.bool() {
            return Ok(if b { 1.0 } else { 0.0 });
        }
        if let Some(s) = zv.zend_str()
            && let Some(d) = parse_numeric(s.as_bytes())
        {
            return Ok(d);
        }
    }
    Err(given(zv))
}

/// An int parameter: an int always; in weak mode also a float, numeric
/// string or bool that is a whole number (a fraction is refused rather
/// than cut, where PHP would cut it with a deprecation). `Err` carries the
/// given type.
pub fn to_int(zv: &Zval, strict: bool) -> Result<i64, String> {
    if let Some(l) = zv.long() {
        return Ok(l);
    }
    if !strict {
        let whole = |d: f64| (d.fract() == 0.0 && d.abs() < 9.0e15).then_some(d as i64);
        if let Some(d) = zv.double()
            && let Some(n) = whole(d)
        {
            return Ok(n);
        }
        if let Some(b) = zv.bool() {
            return Ok(i64::from(b));
        }
        if let Some(s) = zv.zend_str()
            && let Some(n) = parse_numeric(s.as_bytes()).and_then(whole)
        {
            return Ok(n);
        }
    }
    Err(given(zv))
}

/// A bool option's value as given: a bool, an int or float (the core
/// accepts 0 and 1), or a string (an ini word). Other types are `Err` with
/// the type given.
pub fn to_flag(zv: &Zval) -> Result<OptionValue, String> {
    if let Some(b) = zv.bool() {
        return Ok(OptionValue::Bool(b));
    }
    if let Some(l) = zv.long() {
        return Ok(OptionValue::Number(l as f64));
    }
    if let Some(d) = zv.double() {
        return Ok(OptionValue::Number(d));
    }
    if let Some(s) = zv.zend_str() {
        return Ok(OptionValue::Text(s.as_bytes().to_vec()));
    }
    Err(given(zv))
}

/// A string parameter, as bytes: string always; int, float, bool and a
/// `Stringable` object in weak mode (as PHP's own functions take them).
///
/// When `__toString()` throws, its exception stays pending and the `Err`
/// (whose `TypeError` is then not thrown) only stops the call.
pub fn to_bytes(zv: &Zval, strict: bool) -> Result<Vec<u8>, String> {
    if let Some(s) = zv.zend_str() {
        return Ok(s.as_bytes().to_vec());
    }
    if !strict {
        if zv.is_object() {
            return stringable(zv).ok_or_else(|| given(zv));
        }
        if let Some(l) = zv.long() {
            return Ok(l.to_string().into_bytes());
        }
        if let Some(d) = zv.double() {
            let precision = crate::ini::get("precision")
                .and_then(|p| p.trim().parse().ok())
                .unwrap_or(14);
            return Ok(float_to_string(d, precision).into_bytes());
        }
        if let Some(b) = zv.bool() {
            return Ok(if b { b"1".to_vec() } else { Vec::new() });
        }
    }
    Err(given(zv))
}

/// The string value of an object through the engine's `cast_object`
/// handler (what weak mode uses: it calls `__toString()`). `None` when the
/// object has no `__toString()`, when it threw (the exception stays
/// pending), or when an exception is already pending.
pub fn stringable(zv: &Zval) -> Option<Vec<u8>> {
    if ExecutorGlobals::has_exception() {
        return None;
    }
    let obj = ptr::from_ref(zv.object()?).cast_mut();
    let mut out = Zval::new();
    // SAFETY: `obj` is a live object of a zval PHP passed in, its handlers
    // table lives as long as the object, and `out` is a fresh zval that the
    // handler fills only on success (and that `Zval`'s drop releases).
    let converted = unsafe {
        let cast = (*obj).handlers.as_ref()?.cast_object?;
        cast(obj, &raw mut out, IS_STRING as c_int) == ZEND_RESULT_CODE_SUCCESS
    };
    if !converted || ExecutorGlobals::has_exception() {
        return None;
    }
    out.zend_str().map(|s| s.as_bytes().to_vec())
}
