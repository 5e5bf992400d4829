//! The RESP2 replies our commands get, parsed from a buffer the
//! connection keeps: no allocation or buffer zeroing per reply (redis-rs's
//! streaming parser zeroes an 8 KiB buffer for every reply it reads, which
//! cost more than the rest of a lock cycle's client work). Error replies
//! are handed to redis-rs's own parser, so they classify themselves
//! exactly as redis-rs would (`NOSCRIPT`, `MOVED`, ...).

use redis::{RedisError, RedisResult, Value};

/// Nesting allowed in an array reply (ours are at most two deep).
const MAX_DEPTH: usize = 8;

/// One reply at the start of `buf`: the value and the bytes it took, or
/// `None` when `buf` holds only part of it.
pub fn parse(buf: &[u8]) -> RedisResult<Option<(Value, usize)>> {
    parse_at(buf, 0, 0)
}

fn parse_at(buf: &[u8], at: usize, depth: usize) -> RedisResult<Option<(Value, usize)>> {
    let Some(&kind) = buf.get(at) else {
        return Ok(None);
    };
    let Some((line, after)) = line(buf, at + 1) else {
        return Ok(None);
    };
    match kind {
        b'+' if line == b"OK" => Ok(Some((Value::Okay, after))),
        b'+' => Ok(Some((Value::SimpleString(text(line)?), after))),
        b'-' => redis::parse_redis_value(&buf[at..after]).map(|v| Some((v, after))),
        b':' => Ok(Some((Value::Int(number(line)?), after))),
        b'$' => {
            let Ok(len) = usize::try_from(number(line)?) else {
                return Ok(Some((Value::Nil, after)));
            };
            let end = after + len;
            if buf.len() < end + 2 {
                return Ok(None);
            }
            if &buf[end..end + 2] != b"\r\n" {
                return Err(malformed("a bulk string without its CRLF"));
            }
            Ok(Some((Value::BulkString(buf[after..end].to_vec()), end + 2)))
        }
        b'*' => {
            let Ok(len) = usize::try_from(number(line)?) else {
                return Ok(Some((Value::Nil, after)));
            };
            if depth >= MAX_DEPTH {
                return Err(malformed("arrays nested too deep"));
            }
            let mut items = Vec::with_capacity(len.min(1024));
            let mut next = after;
            for _ in 0..len {
                match parse_at(buf, next, depth + 1)? {
                    Some((item, end)) => {
                        items.push(item);
                        next = end;
                    }
                    None => return Ok(None),
                }
            }
            Ok(Some((Value::Array(items), next)))
        }
        _ => Err(malformed("an unknown reply type")),
    }
}

/// The line starting at `from` (without its CRLF) and where the next one
/// starts.
fn line(buf: &[u8], from: usize) -> Option<(&[u8], usize)> {
    let rest = buf.get(from..)?;
    let end = rest.windows(2).position(|w| w == b"\r\n")?;
    Some((&rest[..end], from + end + 2))
}

fn number(line: &[u8]) -> RedisResult<i64> {
    std::str::from_utf8(line)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| malformed("a number that is not one"))
}

fn text(line: &[u8]) -> RedisResult<String> {
    String::from_utf8(line.to_vec()).map_err(|_| malformed("a status line that is not UTF-8"))
}

fn malformed(what: &str) -> RedisError {
    RedisError::from((
        redis::ErrorKind::Parse,
        "malformed reply",
        format!("the server sent {what}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(bytes: &[u8]) -> Value {
        let (value, used) = parse(bytes).unwrap().unwrap();
        assert_eq!(used, bytes.len(), "{bytes:?}");
        value
    }

    #[test]
    fn every_reply_kind_reads_as_redis_rs_reads_it() {
        for reply in [
            &b"+OK\r\n"[..],
            b"+PONG\r\n",
            b":-42\r\n",
            b"$5\r\nhe\r\no\r\n",
            b"$0\r\n\r\n",
            b"$-1\r\n",
            b"*-1\r\n",
            b"*0\r\n",
            b"*2\r\n$1\r\na\r\n*2\r\n:1\r\n$-1\r\n",
            b"-NOSCRIPT No matching script.\r\n",
            b"-MOVED 3999 127.0.0.1:6381\r\n",
            b"-ERR unknown command 'x'\r\n",
        ] {
            assert_eq!(
                format!("{:?}", one(reply)),
                format!("{:?}", redis::parse_redis_value(reply).unwrap()),
                "{reply:?}"
            );
        }
    }

    #[test]
    fn a_partial_reply_asks_for_more_and_garbage_is_an_error() {
        let full = b"*2\r\n$3\r\nabc\r\n:7\r\n";
        for cut in 0..full.len() {
            assert!(parse(&full[..cut]).unwrap().is_none(), "{cut}");
        }
        let (_, used) = parse(b":1\r\n:2\r\n").unwrap().unwrap();
        assert_eq!(used, 4, "one reply at a time");
        for bad in [&b"?x\r\n"[..], b":x\r\n", b"$3\r\nabcd\r\n"] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        let deep = [b"*1\r\n".repeat(20), b":1\r\n".to_vec()].concat();
        assert!(parse(&deep).is_err());
    }
}
