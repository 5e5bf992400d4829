//! Parameter types of the PHP methods.
//!
//! Each type declares the PHP type that reflection shows (`float`, `?float`,
//! `string`, `array`, ...) but accepts any value, converting it with PHP's
//! rules ([`crate::coerce`]) and keeping the failure, so the method can raise
//! a `TypeError` worded like PHP's own, naming the argument:
//! `RedisLock::acquire(): Argument #1 ($wait) must be of type float, array given`.

use ext_php_rs::convert::{FromZval, IntoZval, StubLiteral};
use ext_php_rs::exception::PhpResult;
use ext_php_rs::flags::DataType;
use ext_php_rs::types::array::Iter;
use ext_php_rs::types::{ZendStr, Zval};
use redislock_core::config::options::{self, OptionKind};
use redislock_core::{LockOptions, OptionValue};

use crate::coerce;
use crate::exceptions::{from_core, type_error, value_error};
pub use crate::signature::*;

/// A `float` parameter with a default.
///
/// Declared nullable so that an explicit `null` reaches [`Float::get`] and
/// gets PHP's own message ("must be of type float, null given") instead of
/// the macro's; [`crate::arginfo`] declares the parameter as plain `float`.
pub struct Float(Result<f64, String>);

impl FromZval<'_> for Float {
    const TYPE: DataType = DataType::Double;
    const NULLABLE: bool = true;

    fn from_zval(zv: &Zval) -> Option<Self> {
        Some(Self(coerce::to_float(zv, coerce::caller_is_strict())))
    }

    fn from_missing() -> Option<Self> {
        None
    }
}

impl From<f64> for Float {
    fn from(value: f64) -> Self {
        Self(Ok(value))
    }
}

impl StubLiteral for Float {
    fn stub_literal(&self) -> String {
        self.0
            .as_ref()
            .map_or_else(|_| "null".into(), |v| v.stub_literal())
    }
}

impl Float {
    /// The value, or the `TypeError` for `param` of `sig`.
    pub fn get(self, sig: &Signature, param: &str) -> PhpResult<f64> {
        self.0
            .map_err(|given| type_error(sig.type_message(param, "float", &given)))
    }

    /// A `$wait` argument as a duration: its `TypeError`, or the
    /// `ValueError` of a negative, NaN or too long wait, or the
    /// `LockException` of a wait inside a Swoole coroutine
    /// ([`crate::coroutine`]).
    pub fn wait(self, sig: &Signature) -> PhpResult<std::time::Duration> {
        let seconds = self.get(sig, "wait")?;
        let wait = redislock_core::config::duration::wait("wait", seconds)
            .map_err(|e| from_core(sig, e))?;
        if !wait.is_zero()
            && let Some(class) = crate::coroutine::current()
        {
            let refused = redislock_core::LockError::Unsupported(crate::coroutine::refusal(class));
            return Err(from_core(sig, refused));
        }
        Ok(wait)
    }
}

/// An `int` parameter (with or without a default), converted by PHP's
/// rules ([`coerce::to_int`]).
pub struct Int(Result<i64, String>);

impl FromZval<'_> for Int {
    const TYPE: DataType = DataType::Long;

    fn from_zval(zv: &Zval) -> Option<Self> {
        Some(Self(coerce::to_int(zv, coerce::caller_is_strict())))
    }

    fn from_missing() -> Option<Self> {
        None
    }
}

impl From<i64> for Int {
    fn from(value: i64) -> Self {
        Self(Ok(value))
    }
}

impl StubLiteral for Int {
    fn stub_literal(&self) -> String {
        self.0
            .as_ref()
            .map_or_else(|_| "null".into(), |v| v.stub_literal())
    }
}

impl Int {
    /// The value, or the `TypeError` for `param` of `sig`.
    pub fn get(self, sig: &Signature, param: &str) -> PhpResult<i64> {
        self.0
            .map_err(|given| type_error(sig.type_message(param, "int", &given)))
    }
}

/// An `int` parameter with a default: as [`Int`], declared nullable so
/// that an explicit `null` reaches [`DefaultInt::get`] and gets PHP's own
/// message; [`crate::arginfo`] declares the parameter as plain `int`.
pub struct DefaultInt(Int);

impl FromZval<'_> for DefaultInt {
    const TYPE: DataType = DataType::Long;
    const NULLABLE: bool = true;

    fn from_zval(zv: &Zval) -> Option<Self> {
        Int::from_zval(zv).map(Self)
    }

    fn from_missing() -> Option<Self> {
        None
    }
}

impl From<i64> for DefaultInt {
    fn from(value: i64) -> Self {
        Self(Int::from(value))
    }
}

impl StubLiteral for DefaultInt {
    fn stub_literal(&self) -> String {
        self.0.stub_literal()
    }
}

impl DefaultInt {
    /// The value, or the `TypeError` for `param` of `sig`.
    pub fn get(self, sig: &Signature, param: &str) -> PhpResult<i64> {
        self.0.get(sig, param)
    }
}

/// A `?float` parameter.
pub struct NullableFloat(Result<Option<f64>, String>);

impl FromZval<'_> for NullableFloat {
    const TYPE: DataType = DataType::Double;
    const NULLABLE: bool = true;

    fn from_zval(zv: &Zval) -> Option<Self> {
        if zv.is_null() {
            return Some(Self(Ok(None)));
        }
        Some(Self(
            coerce::to_float(zv, coerce::caller_is_strict()).map(Some),
        ))
    }

    fn from_missing() -> Option<Self> {
        Some(Self(Ok(None)))
    }
}

impl NullableFloat {
    /// The value, or the `TypeError` for `param` of `sig`.
    pub fn get(self, sig: &Signature, param: &str) -> PhpResult<Option<f64>> {
        self.0
            .map_err(|given| type_error(sig.type_message(param, "?float", &given)))
    }
}

/// A `string` parameter, as bytes (PHP strings need not be UTF-8).
pub struct Bytes(Result<Vec<u8>, String>);

impl FromZval<'_> for Bytes {
    const TYPE: DataType = DataType::String;

    fn from_zval(zv: &Zval) -> Option<Self> {
        Some(Self(coerce::to_bytes(zv, coerce::caller_is_strict())))
    }
}

impl Bytes {
    /// The value, or the `TypeError` for `param` of `sig`.
    pub fn get(self, sig: &Signature, param: &str) -> PhpResult<Vec<u8>> {
        self.0
            .map_err(|given| type_error(sig.type_message(param, "string", &given)))
    }
}

/// A `?string` parameter, as bytes; null and missing are `None`.
pub struct NullableBytes(Result<Option<Vec<u8>>, String>);

impl FromZval<'_> for NullableBytes {
    const TYPE: DataType = DataType::String;
    const NULLABLE: bool = true;

    fn from_zval(zv: &Zval) -> Option<Self> {
        if zv.is_null() {
            return Some(Self(Ok(None)));
        }
        Some(Self(
            coerce::to_bytes(zv, coerce::caller_is_strict()).map(Some),
        ))
    }

    fn from_missing() -> Option<Self> {
        Some(Self(Ok(None)))
    }
}

impl NullableBytes {
    /// The value, or the `TypeError` for `param` of `sig`.
    pub fn get(self, sig: &Signature, param: &str) -> PhpResult<Option<Vec<u8>>> {
        self.0
            .map_err(|given| type_error(sig.type_message(param, "?string", &given)))
    }
}

/// The `callable $callback` parameter.
pub struct Callback<'a>(Result<&'a Zval, String>);

impl<'a> FromZval<'a> for Callback<'a> {
    const TYPE: DataType = DataType::Callable;

    fn from_zval(zv: &'a Zval) -> Option<Self> {
        Some(Self(if zv.is_callable() {
            Ok(zv)
        } else {
            Err(coerce::given(zv))
        }))
    }
}

impl<'a> Callback<'a> {
    /// The callable (a zval that passed `is_callable()`), or the
    /// `TypeError` for `param` of `sig`.
    pub fn get(self, sig: &Signature, param: &str) -> PhpResult<&'a Zval> {
        self.0.map_err(|given| {
            type_error(format!(
                "{}: {} must be a valid callback, {given} given",
                sig.method,
                sig.describe(param)
            ))
        })
    }
}

/// What was wrong with the `$servers` argument.
enum ServersProblem {
    /// Neither string, array nor null.
    Type(String),
    /// An array element that is not a string.
    Element(String),
    /// A URL that is not UTF-8.
    NotUtf8,
}

/// The `string|array|null $servers` parameter (the arginfo is widened to
/// that union at startup, see [`crate::arginfo`]). In weak mode a
/// `Stringable` object counts as its string, as for PHP's own functions.
pub struct Servers(Result<Option<Vec<String>>, ServersProblem>);

impl FromZval<'_> for Servers {
    const TYPE: DataType = DataType::Mixed;
    const NULLABLE: bool = true;

    fn from_zval(zv: &Zval) -> Option<Self> {
        let utf8 =
            |bytes: &[u8]| String::from_utf8(bytes.to_vec()).map_err(|_| ServersProblem::NotUtf8);
        let result = if zv.is_null() {
            Ok(None)
        } else if let Some(s) = zv.zend_str() {
            utf8(s.as_bytes()).map(|url| Some(vec![url]))
        } else if zv.is_object() && !coerce::caller_is_strict() {
            // Weak mode takes a Stringable for the `string` of the union.
            match coerce::stringable(zv) {
                Some(url) => utf8(&url).map(|url| Some(vec![url])),
                None => Err(ServersProblem::Type(coerce::given(zv))),
            }
        } else if let Some(array) = zv.array() {
            array
                .values()
                .map(|v| match v.zend_str() {
                    Some(s) => utf8(s.as_bytes()),
                    None => Err(ServersProblem::Element(coerce::given(v))),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some)
        } else {
            Err(ServersProblem::Type(coerce::given(zv)))
        };
        Some(Self(result))
    }

    fn from_missing() -> Option<Self> {
        Some(Self(Ok(None)))
    }
}

impl Servers {
    /// The URLs (`None` when the caller passed null), or the error.
    pub fn get(self, sig: &Signature) -> PhpResult<Option<Vec<String>>> {
        self.0.map_err(|problem| match problem {
            ServersProblem::Type(given) => {
                type_error(sig.type_message("servers", "array|string|null", &given))
            }
            ServersProblem::Element(given) => value_error(format!(
                "{}: {} must contain only URL strings, {given} found",
                sig.method,
                sig.describe("servers")
            )),
            ServersProblem::NotUtf8 => value_error(format!(
                "{}: {} must be valid UTF-8",
                sig.method,
                sig.describe("servers")
            )),
        })
    }
}

/// One entry of the `$options` array, converted to its option's kind.
enum OptionEntry {
    Value(String, OptionValue),
    /// The value has the wrong type: (name, expected, given).
    Mistyped(String, &'static str, String),
    /// An integer key.
    IntKey(i64),
}

/// The `array $options` parameter. Nullable for the same reason as
/// [`Float`]; declared as plain `array` by [`crate::arginfo`].
pub struct Options(Result<Vec<OptionEntry>, String>);

impl FromZval<'_> for Options {
    const TYPE: DataType = DataType::Array;
    const NULLABLE: bool = true;

    fn from_missing() -> Option<Self> {
        None
    }

    fn from_zval(zv: &Zval) -> Option<Self> {
        let Some(array) = zv.array() else {
            return Some(Self(Err(coerce::given(zv))));
        };
        let strict = coerce::caller_is_strict();
        // Not `array.iter()`: it panics on keys that are not UTF-8.
        let mut iter = Iter::new(array);
        let mut entries = Vec::new();
        while let Some((key, value)) = iter.next_zval() {
            entries.push(match (key.long(), key.zend_str()) {
                (Some(i), _) => OptionEntry::IntKey(i),
                (None, Some(name)) => {
                    let name = String::from_utf8_lossy(name.as_bytes()).into_owned();
                    convert_option(name, value, strict)
                }
                (None, None) => OptionEntry::IntKey(0),
            });
        }
        Some(Self(Ok(entries)))
    }
}

impl StubLiteral for Options {
    fn stub_literal(&self) -> String {
        "[]".into()
    }
}

fn convert_option(name: String, value: &Zval, strict: bool) -> OptionEntry {
    let Some(kind) = options::kind_of(&name) else {
        // Unknown: the core reports it, with the list of known options.
        return OptionEntry::Value(name, OptionValue::Null);
    };
    let nullable = matches!(kind, OptionKind::NullableSeconds | OptionKind::NullableText);
    if nullable && value.is_null() {
        return OptionEntry::Value(name, OptionValue::Null);
    }
    let converted = match kind {
        // A bool, 0/1 or an ini word ("off", "yes", ...); the core rejects
        // anything else with a ValueError (never PHP's truthiness).
        OptionKind::Bool => coerce::to_flag(value),
        OptionKind::Seconds
        | OptionKind::NullableSeconds
        | OptionKind::Wait
        | OptionKind::Fraction
        | OptionKind::Count => coerce::to_float(value, strict).map(OptionValue::Number),
        OptionKind::Text | OptionKind::NullableText => {
            coerce::to_bytes(value, strict).map(OptionValue::Text)
        }
    };
    match converted {
        Ok(v) => OptionEntry::Value(name, v),
        Err(given) => OptionEntry::Mistyped(name, kind.php_type(), given),
    }
}

impl Options {
    /// No options (the default).
    pub fn empty() -> Self {
        Self(Ok(Vec::new()))
    }

    /// Applies the options over `base`, raising `TypeError` / `ValueError`
    /// for the first bad entry.
    pub fn apply(self, sig: &Signature, base: &mut LockOptions) -> PhpResult<()> {
        let entries = self
            .0
            .map_err(|given| type_error(sig.type_message("options", "array", &given)))?;
        for entry in entries {
            match entry {
                OptionEntry::Value(name, value) => {
                    base.set(&name, value).map_err(|e| from_core(sig, e))?
                }
                OptionEntry::Mistyped(name, expected, given) => {
                    return Err(type_error(sig.type_message(
                        &format!("option \"{name}\""),
                        expected,
                        &given,
                    )));
                }
                OptionEntry::IntKey(i) => {
                    return Err(value_error(format!(
                        "{}: {} must have option names as keys, found integer key {i}",
                        sig.method,
                        sig.describe("options")
                    )));
                }
            }
        }
        base.validate().map_err(|e| from_core(sig, e))
    }
}

/// A byte string returned to PHP as a `string`.
pub struct PhpBytes(pub Vec<u8>);

impl IntoZval for PhpBytes {
    const TYPE: DataType = DataType::String;
    const NULLABLE: bool = false;

    fn set_zval(self, zv: &mut Zval, persistent: bool) -> ext_php_rs::error::Result<()> {
        zv.set_zend_string(ZendStr::new(&self.0, persistent));
        Ok(())
    }
}
