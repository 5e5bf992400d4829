//! The numeric-string grammar of PHP's weak typing mode, as pure functions,
//! so that the binding converts `"1.5"` exactly like PHP's own functions and
//! the rules are unit-tested here.

/// PHP's rendering of a float as a string with the `precision` setting
/// (default 14; -1 = the shortest form that reads back the same), like
/// `(string) $float`: `0.1 + 0.2` is `"0.3"`, `1e20` is `"1.0E+20"`.
pub fn float_to_string(d: f64, precision: i64) -> String {
    if d.is_nan() {
        return "NAN".into();
    }
    if d.is_infinite() {
        return if d > 0.0 { "INF".into() } else { "-INF".into() };
    }
    if d == 0.0 {
        return if d.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let (digits_shown, sci) = if precision < 0 {
        (17, format!("{:e}", d.abs()))
    } else {
        let p = precision.clamp(1, 40) as usize;
        (p, format!("{:.*e}", p - 1, d.abs()))
    };
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i64 = exponent.parse().unwrap_or(0);
    let mut digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
    }
    let sign = if d < 0.0 { "-" } else { "" };
    // zend_gcvt: the decimal point sits after `decpt` digits.
    let decpt = exponent + 1;
    if decpt < -3 || decpt > digits_shown as i64 {
        let (first, rest) = digits.split_at(1);
        let rest = if rest.is_empty() { "0" } else { rest };
        let exp_sign = if exponent < 0 { '-' } else { '+' };
        return format!("{sign}{first}.{rest}E{exp_sign}{}", exponent.abs());
    }
    if decpt <= 0 {
        return format!("{sign}0.{}{digits}", "0".repeat((-decpt) as usize));
    }
    let decpt = decpt as usize;
    if digits.len() <= decpt {
        format!("{sign}{digits}{}", "0".repeat(decpt - digits.len()))
    } else {
        format!("{sign}{}.{}", &digits[..decpt], &digits[decpt..])
    }
}

/// PHP's numeric strings: optional surrounding whitespace, a sign, digits
/// with an optional fraction, an optional exponent. Leading-numeric strings
/// such as `"5 apples"` are rejected.
pub fn parse_numeric(bytes: &[u8]) -> Option<f64> {
    let is_ws = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c);
    let start = bytes.iter().position(|b| !is_ws(b))?;
    let end = bytes.iter().rposition(|b| !is_ws(b))? + 1;
    let text = std::str::from_utf8(&bytes[start..end]).ok()?;
    let body = text.strip_prefix(['+', '-']).unwrap_or(text);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (int_part, frac_part) = match mantissa.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (mantissa, None),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let has_digits = !int_part.is_empty() || frac_part.is_some_and(|f| !f.is_empty());
    if !has_digits || !digits(int_part) || !frac_part.is_none_or(digits) {
        return None;
    }
    if let Some(exp) = exponent {
        let exp = exp.strip_prefix(['+', '-']).unwrap_or(exp);
        if exp.is_empty() || !digits(exp) {
            return None;
        }
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_strings_like_php() {
        for (text, value) in [
            ("1", 1.0),
            ("1.5", 1.5),
            (" 2.5 ", 2.5),
            ("\t\n3", 3.0),
            ("-0.25", -0.25),
            ("+4", 4.0),
            (".5", 0.5),
            ("5.", 5.0),
            ("1e3", 1000.0),
            ("1.5E-3", 0.0015),
        ] {
            assert_eq!(parse_numeric(text.as_bytes()), Some(value), "{text:?}");
        }
        for text in [
            "", " ", "abc", "5 apples", "1e", "0x1A", ".", "inf", "NAN", "1.2.3", "--1", "1e+",
        ] {
            assert_eq!(parse_numeric(text.as_bytes()), None, "{text:?}");
        }
    }

    #[test]
    fn floats_render_like_php() {
        // Checked against `php -r 'echo ...;'` (precision=14).
        for (value, text) in [
            (1.0, "1"),
            (1.5, "1.5"),
            (-3.0, "-3"),
            (0.1 + 0.2, "0.3"),
            (1e20, "1.0E+20"),
            (1e15, "1.0E+15"),
            (1e14, "1.0E+14"),
            (123456789012345.0, "1.2345678901234E+14"),
            (0.0001, "0.0001"),
            (0.00001, "1.0E-5"),
            (-1.25e-7, "-1.25E-7"),
            (100.0, "100"),
            (2.5e3, "2500"),
            (1.0 / 3.0, "0.33333333333333"),
            (f64::INFINITY, "INF"),
            (f64::NEG_INFINITY, "-INF"),
            (0.0, "0"),
            (-0.0, "-0"),
        ] {
            assert_eq!(float_to_string(value, 14), text, "{value:e}");
        }
        assert_eq!(float_to_string(0.1 + 0.2, -1), "0.30000000000000004");
        assert_eq!(float_to_string(0.1, -1), "0.1");
        assert_eq!(float_to_string(1e20, -1), "1.0E+20");
    }
}
