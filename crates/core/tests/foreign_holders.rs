//! A lock key of another type: another client's lock on the same name
//! (Symfony 5.4's `RedisStore` keeps a sorted set there, `__write__` and
//! the holders' tokens). It is held, by someone who is not us: a plain
//! try, a wait and a read acquire find it held (a wait waits for it to
//! go, and enters then), our release and refresh find it not ours, and
//! `inspect()` says it is held. At 427553e every wait, read acquire and
//! inspect on it failed with WRONGTYPE (a script read the key with
//! `GET`), so a live app could not switch from Symfony's store worker by
//! worker.

mod common;

use std::time::{Duration, Instant};

use common::{RedisServer, lock, unique_key};

/// Holds `key` as Symfony's RedisStore does: a sorted set of the holder's
/// token and `__write__`, expiring in `ms`.
fn held_by_another_client(server: &RedisServer, key: &[u8], ms: u64) {
    let key = String::from_utf8_lossy(key).into_owned();
    let _: i64 = server.cmd(&["ZADD", &key, "1", "__write__", "1", "their-token"]);
    let _: i64 = server.cmd(&["PEXPIRE", &key, &ms.to_string()]);
}

#[test]
fn a_plain_try_and_a_read_try_find_it_held() {
    let server = RedisServer::start();
    let key = unique_key("foreign-try");
    held_by_another_client(&server, &key, 10_000);
    let mut a = lock(&server, &key, 10.0);
    assert!(!a.acquire(Duration::ZERO).unwrap());
    assert!(!a.acquire_read(Duration::ZERO).unwrap());
    assert!(!a.acquire_read(Duration::from_millis(200)).unwrap());
    let seen = a.inspect().unwrap();
    assert!(seen.held, "{seen:?}");
    let kind: String = server.cmd(&["TYPE", &String::from_utf8_lossy(&key)]);
    assert_eq!(kind, "zset", "nothing of theirs was touched");
}

#[test]
fn a_wait_waits_for_it_and_enters_when_it_goes() {
    let server = RedisServer::start();
    for read in [false, true] {
        let key = unique_key("foreign-wait");
        held_by_another_client(&server, &key, 400);
        let mut a = lock(&server, &key, 10.0);
        let began = Instant::now();
        let got = if read {
            a.acquire_read(Duration::from_secs(5))
        } else {
            a.acquire(Duration::from_secs(5))
        }
        .unwrap();
        let took = began.elapsed();
        assert!(got, "read {read}: the wait entered once their lock expired");
        assert!(
            took >= Duration::from_millis(350),
            "read {read}: entered after {took:?}, while their lock was held"
        );
        assert!(a.release().unwrap());
    }
}

#[test]
fn our_release_and_refresh_find_it_not_ours() {
    let server = RedisServer::start();
    let key = unique_key("foreign-release");
    let mut a = lock(&server, &key, 10.0);
    assert!(a.acquire(Duration::ZERO).unwrap());
    // Our lease is gone and another client's lock took the name.
    let _: i64 = server.cmd(&["DEL", &String::from_utf8_lossy(&key)]);
    held_by_another_client(&server, &key, 10_000);
    assert!(!a.refresh(None).unwrap());
    assert!(!a.release().unwrap());
    let kind: String = server.cmd(&["TYPE", &String::from_utf8_lossy(&key)]);
    assert_eq!(kind, "zset", "their lock is left alone");
}
