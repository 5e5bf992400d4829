//! The names of locks and semaphores as callers pass them: what makes one
//! valid, the same for every primitive.

use crate::error::{LockError, Result};
use crate::protocol::keys;

/// Longest name accepted, in bytes (prefix excluded).
pub const MAX_NAME_LEN: usize = 64 * 1024;

/// Checks the name passed as argument `what` (`"key"` of a lock, `"name"`
/// of a semaphore) under `prefix`: not empty, not too long, and no
/// `"~~"` in it, also not across the prefix and the name (redislock's
/// helper keys use it, so no name can be another's helper key).
pub fn validate(what: &str, name: &[u8], prefix: &[u8]) -> Result<()> {
    if name.is_empty() {
        return Err(LockError::invalid(what, "must not be empty"));
    }
    if name.len() > MAX_NAME_LEN {
        return Err(LockError::invalid(
            what,
            format!("must be at most {MAX_NAME_LEN} bytes long"),
        ));
    }
    if keys::has_separator(name) {
        return Err(LockError::invalid(
            what,
            "must not contain \"~~\": redislock's helper keys use it",
        ));
    }
    if keys::has_separator(&[prefix, name].concat()) {
        return Err(LockError::invalid(
            what,
            format!(
                "must not start with \"~\" when the prefix ends with \"~\": the name \
                 (prefix + {what}) would contain \"~~\", which redislock's helper keys use"
            ),
        ));
    }
    Ok(())
}
