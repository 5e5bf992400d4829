//! The numeric-string grammar of PHP's weak typing mode, as pure functions,
//! so that the binding converts `"1.5"` exactly like PHP's own functions and
//! the rules are unit-tested here.

/// PHP's rendering of a float as a string (`precision=-1`: shortest form
/// that reads back the same).
pub fn float_to_string(d: f64) -> String {
    if d.is_nan() {
        "NAN".into()
    } else if d.is_infinite() {
        if d > 0.0 { "INF".into() } else { "-INF".into() }
    } else if d == d.trunc() && d.abs() < 1e15 {
        format!("{d:.0}")
    } else {
        format!("{d}")
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
        assert_eq!(float_to_string(1.0), "1");
        assert_eq!(float_to_string(1.5), "1.5");
        assert_eq!(float_to_string(-3.0), "-3");
        assert_eq!(float_to_string(f64::INFINITY), "INF");
    }
}
