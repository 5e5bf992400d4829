//! `release_all` (called at PHP request end) frees what is still held.
//! Alone in its binary: it drains the whole process's table.

mod common;

use std::time::Duration;

use common::{RedisServer, lock, never, unique_key};
use redislock_core::release_all;

#[test]
fn release_all_frees_what_is_still_held() {
    let server = RedisServer::start();
    let key = unique_key("end");
    let mut a = lock(&server, &key, 10.0);
    assert!(a.acquire(Duration::ZERO, &never).unwrap());
    assert!(a.acquire(Duration::ZERO, &never).unwrap());
    assert_eq!(release_all(), 1);
    let n: i64 = redis::cmd("EXISTS")
        .arg(&key)
        .query(&mut server.client())
        .unwrap();
    assert_eq!(n, 0);
    assert_eq!(a.token(), None);
    assert!(!a.release().unwrap(), "nothing is held after request end");
}
