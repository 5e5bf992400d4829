//! Owner tokens: 128 random bits from the operating system's CSPRNG,
//! hex-encoded, fresh for every hold.

use crate::error::{LockError, Result};

/// Number of random bytes in a token (128 bits).
pub const TOKEN_BYTES: usize = 16;

/// Longest token accepted from outside (e.g. by `restore`), in bytes.
pub const MAX_TOKEN_LEN: usize = 1024;

/// Returns a new random token: 32 lowercase hex characters.
pub fn new_token() -> Result<String> {
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes)
        .map_err(|e| LockError::Internal(format!("the OS random number generator failed: {e}")))?;
    Ok(hex(&bytes))
}

/// Checks a token that came from outside (a handover).
pub fn validate_token(token: &[u8]) -> Result<()> {
    if token.is_empty() {
        return Err(LockError::invalid("token", "must not be empty"));
    }
    if token.len() > MAX_TOKEN_LEN {
        return Err(LockError::invalid(
            "token",
            format!("must be at most {MAX_TOKEN_LEN} bytes long"),
        ));
    }
    if token.starts_with(crate::protocol::readers::READ_MARK) {
        return Err(LockError::invalid(
            "token",
            "must not start with \"~~read\": the lock key holds that while readers hold the lock",
        ));
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 0xf) as usize] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn tokens_are_32_hex_chars() {
        let t = new_token().unwrap();
        assert_eq!(t.len(), 32);
        assert!(
            t.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
    }

    #[test]
    fn tokens_do_not_repeat() {
        let set: HashSet<String> = (0..10_000).map(|_| new_token().unwrap()).collect();
        assert_eq!(set.len(), 10_000);
    }

    #[test]
    fn external_tokens_are_bounded() {
        assert!(validate_token(b"").is_err());
        assert!(validate_token(&[b'a'; MAX_TOKEN_LEN + 1]).is_err());
        assert!(validate_token(b"abc").is_ok());
        assert!(validate_token(crate::protocol::readers::READ_MARK).is_err());
        assert!(validate_token(b"~~read:abc").is_err());
    }
}
