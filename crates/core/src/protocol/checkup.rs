//! The probes of a server checkup ([`crate::lock::Lock::checkup`]): each
//! one round trip that reads and writes nothing, answered with the
//! server's refusal when it has not what is asked.

use redis::Value;

use crate::protocol::call::Call;
use crate::protocol::command::Command;
use crate::protocol::reply::{one, value};

/// `PING`: a round trip's time.
pub(crate) fn ping() -> Call<()> {
    Call::one(Command::of(&[b"PING"]), |r| {
        value::<String>(one(r)?).map(drop)
    })
}

/// A script that returns 1: whether scripts run at all (`EVAL`).
pub(crate) fn script() -> Call<()> {
    Call::one(Command::of(&[b"EVAL", b"return 1", b"0"]), |r| {
        value::<i64>(one(r)?).map(drop)
    })
}

/// A script that reads the server's clock (`TIME`). No lock script does
/// (services such as ElastiCache Serverless refuse it): reported because
/// scripts of one's own may.
pub(crate) fn time_in_script() -> Call<()> {
    Call::one(
        Command::of(&[b"EVAL", b"return redis.call('TIME')[1]", b"0"]),
        |r| match one(r)?.extract_error()? {
            Value::BulkString(_) | Value::SimpleString(_) | Value::Int(_) => Ok(()),
            other => value::<String>(other).map(drop),
        },
    )
}

/// `CLIENT UNBLOCK 0` (a client id nobody has): whether this user may
/// end another connection's blocking wait, as a release that hands the
/// lock over does.
pub(crate) fn client_unblock() -> Call<()> {
    Call::one(Command::of(&[b"CLIENT", b"UNBLOCK", b"0"]), |r| {
        value::<i64>(one(r)?).map(drop)
    })
}

/// `CONFIG GET name`: the setting's value; `None` when the server has no
/// such setting. Managed services often refuse `CONFIG`: the refusal is
/// the error.
pub(crate) fn config_get(name: &'static [u8]) -> Call<Option<String>> {
    Call::one(Command::of(&[b"CONFIG", b"GET", name]), |r| {
        let pairs: Vec<String> = match one(r)?.extract_error()? {
            Value::Map(map) => map
                .into_iter()
                .flat_map(|(k, v)| [k, v])
                .map(value::<String>)
                .collect::<redis::RedisResult<_>>()?,
            other => value(other)?,
        };
        Ok(pairs.into_iter().nth(1))
    })
}
