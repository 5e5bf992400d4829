//! `release_all` (called at PHP request end) frees what is still held.
//! Alone in its binary: it drains the whole process's table (the
//! semaphore test drains the semaphores' table, which the lock test does
//! not use).

mod common;

use std::time::{Duration, Instant};

use common::{RedisServer, lock, unique_key};
use redislock_core::{LockOptions, OptionValue, Semaphore, release_all};

#[test]
fn release_all_frees_what_is_still_held() {
    let server = RedisServer::start();
    let key = unique_key("end");
    let mut a = lock(&server, &key, 10.0);
    assert!(a.acquire(Duration::ZERO).unwrap());
    assert!(a.acquire(Duration::ZERO).unwrap());
    assert_eq!(release_all(), 1);
    let n: i64 = redis::cmd("EXISTS")
        .arg(&key)
        .query(&mut server.client())
        .unwrap();
    assert_eq!(n, 0);
    assert_eq!(a.token(), None);
    assert!(!a.release().unwrap(), "nothing is held after request end");
}

/// A semaphore of one permit with a 0.3 s lease, `auto_renew` (and more
/// options).
fn renewed(server: &RedisServer, name: &[u8], extra: &[(&str, OptionValue)]) -> Semaphore {
    let mut options = LockOptions::default();
    options.set("auto_renew", OptionValue::Bool(true)).unwrap();
    for (option, value) in extra {
        options.set(option, value.clone()).unwrap();
    }
    Semaphore::new(name.to_vec(), 1, 0.3, &[server.url()], options).unwrap()
}

/// The request end gives an auto-renewed permit back and stops its
/// renewal; with `auto_release` off the permit is forgotten, no longer
/// renewed, and comes back after its lease (plus the clock grace).
#[test]
fn request_end_stops_a_permits_renewal() {
    let server = RedisServer::start();
    let name = unique_key("sem-renew-end");
    let mut holder = renewed(&server, &name, &[]);
    assert!(holder.acquire(Duration::ZERO).unwrap());
    redislock_core::release_all();
    assert!(!holder.is_acquired().unwrap());
    let mut other = renewed(&server, &name, &[("auto_renew", OptionValue::Bool(false))]);
    assert!(other.acquire(Duration::ZERO).unwrap(), "given back");
    assert!(other.release().unwrap());

    let mut kept = renewed(
        &server,
        &name,
        &[("auto_release", OptionValue::Bool(false))],
    );
    assert!(kept.acquire(Duration::ZERO).unwrap());
    let started = Instant::now();
    redislock_core::release_all();
    assert!(other.acquire(Duration::from_secs(3)).unwrap());
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(600), "{took:?}");
    assert!(
        took < Duration::from_millis(2000),
        "not renewed on: {took:?}"
    );
    assert!(other.release().unwrap());
}
