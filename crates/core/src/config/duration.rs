//! Validation of the durations that PHP passes as float seconds.

use std::time::Duration;

use crate::error::{LockError, Result};

/// Longest lease, wait or timeout accepted: one year, in seconds.
pub const MAX_SECONDS: f64 = 31_536_000.0;

/// Converts a lease length in seconds into whole milliseconds.
///
/// Rejects NaN, infinities, values that round to less than 1 ms and values
/// above [`MAX_SECONDS`].
pub fn ttl_ms(param: &str, seconds: f64) -> Result<u64> {
    check_finite(param, seconds)?;
    if seconds <= 0.0 {
        return Err(LockError::invalid(param, "must be greater than 0"));
    }
    check_max(param, seconds)?;
    let ms = (seconds * 1000.0).round();
    if ms < 1.0 {
        return Err(LockError::invalid(param, "must be at least 0.001 (1 ms)"));
    }
    Ok(ms as u64)
}

/// Converts a wait in seconds (0 allowed) into a [`Duration`].
pub fn wait(param: &str, seconds: f64) -> Result<Duration> {
    check_finite(param, seconds)?;
    if seconds < 0.0 {
        return Err(LockError::invalid(
            param,
            "must be greater than or equal to 0",
        ));
    }
    check_max(param, seconds)?;
    Ok(Duration::from_secs_f64(seconds))
}

/// Converts a strictly positive timeout in seconds into a [`Duration`]
/// of at least one millisecond.
pub fn positive(param: &str, seconds: f64) -> Result<Duration> {
    Ok(Duration::from_millis(ttl_ms(param, seconds)?))
}

fn check_finite(param: &str, seconds: f64) -> Result<()> {
    if seconds.is_nan() {
        return Err(LockError::invalid(param, "must be a number, NaN given"));
    }
    if seconds.is_infinite() {
        return Err(LockError::invalid(param, "must be finite"));
    }
    Ok(())
}

fn check_max(param: &str, seconds: f64) -> Result<()> {
    if seconds > MAX_SECONDS {
        return Err(LockError::invalid(
            param,
            format!("must be at most {MAX_SECONDS:.0} seconds (one year)"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_rounds_to_milliseconds() {
        assert_eq!(ttl_ms("ttl", 1.5).unwrap(), 1500);
        assert_eq!(ttl_ms("ttl", 0.0014).unwrap(), 1);
        assert_eq!(ttl_ms("ttl", 30.0).unwrap(), 30_000);
    }

    #[test]
    fn ttl_rejects_bad_values() {
        for bad in [
            0.0,
            -1.0,
            f64::NAN,
            f64::INFINITY,
            0.0004,
            MAX_SECONDS + 1.0,
        ] {
            let err = ttl_ms("ttl", bad).unwrap_err().to_string();
            assert!(err.starts_with("ttl "), "{bad}: {err}");
        }
    }

    #[test]
    fn wait_allows_zero_but_not_negative() {
        assert_eq!(wait("wait", 0.0).unwrap(), Duration::ZERO);
        assert_eq!(wait("wait", 0.25).unwrap(), Duration::from_millis(250));
        assert!(wait("wait", -0.001).is_err());
        assert!(wait("wait", f64::NAN).is_err());
        assert!(wait("wait", f64::INFINITY).is_err());
    }
}
