//! Reading replies: the helpers every protocol step's parser shares.

use redis::{RedisResult, Value};

/// A reply as `T`; a server error reply becomes the error.
pub(crate) fn value<T: redis::FromRedisValue>(v: Value) -> RedisResult<T> {
    Ok(redis::from_redis_value(v.extract_error()?)?)
}

/// The one reply of a one-command call.
pub(crate) fn one(replies: Vec<Value>) -> RedisResult<Value> {
    <[Value; 1]>::try_from(replies)
        .map(|[v]| v)
        .map_err(|_| unexpected("one reply"))
}

/// The two replies of a two-command call.
pub(crate) fn two(replies: Vec<Value>) -> RedisResult<[Value; 2]> {
    <[Value; 2]>::try_from(replies).map_err(|_| unexpected("two replies"))
}

/// The error of a reply that is not of the shape `what` says.
pub(crate) fn unexpected(what: &str) -> redis::RedisError {
    redis::RedisError::from((
        redis::ErrorKind::UnexpectedReturnType,
        "unexpected reply",
        what.to_owned(),
    ))
}
