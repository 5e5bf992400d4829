//! Blocked acquires: they get the lock once it is free, honour their
//! deadline, and stop early only when asked to.

mod common;

use std::time::{Duration, Instant};

use common::{RedisServer, lock, never, unique_key};

#[test]
fn a_waiter_gets_the_lock_after_the_holder_releases() {
    let server = RedisServer::start();
    let key = unique_key("handoff");
    let key_str = String::from_utf8(key.clone()).unwrap();
    let _: () = server.cmd(&["SET", &key_str, "holder", "PX", "10000"]);
    let url = server.url();
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        let mut c = redis::Client::open(url).unwrap().get_connection().unwrap();
        let _: () = redis::cmd("DEL").arg(&key_str).query(&mut c).unwrap();
    });
    let mut waiter = lock(&server, &key, 5.0);
    let start = Instant::now();
    assert!(waiter.acquire(Duration::from_secs(5), &never).unwrap());
    let waited = start.elapsed();
    assert!(waited >= Duration::from_millis(190), "{waited:?}");
    assert!(waited < Duration::from_secs(2), "{waited:?}");
    releaser.join().unwrap();
    assert!(waiter.release().unwrap());
}

#[test]
fn a_waiter_gets_the_lock_when_the_lease_expires() {
    let server = RedisServer::start();
    let key = unique_key("expiry");
    let key_str = String::from_utf8(key.clone()).unwrap();
    let _: () = server.cmd(&["SET", &key_str, "crashed-holder", "PX", "300"]);
    let mut waiter = lock(&server, &key, 5.0);
    let start = Instant::now();
    assert!(waiter.acquire(Duration::from_secs(5), &never).unwrap());
    assert!(start.elapsed() < Duration::from_secs(2));
    assert!(waiter.release().unwrap());
}

#[test]
fn the_wait_deadline_is_honoured() {
    let server = RedisServer::start();
    let key = unique_key("deadline");
    let key_str = String::from_utf8(key.clone()).unwrap();
    let _: () = server.cmd(&["SET", &key_str, "holder", "PX", "10000"]);
    let mut waiter = lock(&server, &key, 5.0);
    for wait in [
        Duration::ZERO,
        Duration::from_millis(100),
        Duration::from_millis(350),
    ] {
        let start = Instant::now();
        assert!(!waiter.acquire(wait, &never).unwrap());
        let took = start.elapsed();
        assert!(took >= wait, "returned early: {took:?} < {wait:?}");
        assert!(
            took < wait + Duration::from_millis(150),
            "returned late: {took:?} for {wait:?}"
        );
    }
}

#[test]
fn stop_ends_the_wait_early() {
    let server = RedisServer::start();
    let key = unique_key("stop");
    let key_str = String::from_utf8(key.clone()).unwrap();
    let _: () = server.cmd(&["SET", &key_str, "holder", "PX", "10000"]);
    let mut waiter = lock(&server, &key, 5.0);
    let start = Instant::now();
    assert!(!waiter.acquire(Duration::from_secs(10), &|| true).unwrap());
    assert!(start.elapsed() < Duration::from_secs(1));
}

#[test]
fn waiting_does_not_hammer_redis() {
    let server = RedisServer::start();
    let key = unique_key("load");
    let key_str = String::from_utf8(key.clone()).unwrap();
    let _: () = server.cmd(&["SET", &key_str, "holder", "PX", "10000"]);
    let mut waiter = lock(&server, &key, 5.0);
    let before = server.calls("set");
    assert!(!waiter.acquire(Duration::from_secs(1), &never).unwrap());
    let attempts = server.calls("set") - before;
    // 2, 4, 8, 16, 32 ms steps then the 50 ms cap: about 25 attempts a second.
    assert!(attempts <= 60, "{attempts} SETs in one second of waiting");
    assert!(attempts >= 5, "{attempts}");
}
