//! Fencing tokens (option `fencing`): every successful acquire gets a number
//! strictly greater than every earlier one for that key, atomically with the
//! acquire, on every path (free lock, handoff to a waiter, lost wake-up).

mod common;

use std::time::{Duration, Instant};

use common::{RedisServer, never, release_as, unique_key};
use redislock_core::{Lock, LockOptions, OptionValue, commands, keys};

fn fenced(server: &RedisServer, key: &[u8], host: &str) -> Lock {
    let mut options = LockOptions::default();
    options.set("fencing", OptionValue::Bool(true)).unwrap();
    options
        .set("retry_delay", OptionValue::Number(0.2))
        .unwrap();
    let url = format!("redis://{host}:{}", server.port);
    Lock::new(key.to_vec(), 5.0, &[url], options).unwrap()
}

fn counter(server: &RedisServer, key: &[u8]) -> i64 {
    redis::cmd("GET")
        .arg(keys::fence_key(key))
        .query(&mut server.client())
        .unwrap()
}

#[test]
fn each_acquire_gets_a_greater_token() {
    let server = RedisServer::start();
    let key = unique_key("fence");
    let mut a = fenced(&server, &key, "127.0.0.1");
    let mut last = 0;
    for _ in 0..20 {
        assert_eq!(a.fencing_token(), None, "no token while not held");
        assert!(a.acquire(Duration::ZERO, &never).unwrap());
        let fence = a.fencing_token().unwrap();
        assert!(fence > last, "{fence} after {last}");
        assert_eq!(
            fence,
            counter(&server, &key),
            "kept in the {{key}}:f counter"
        );
        last = fence;
        assert!(a.release().unwrap());
    }
}

#[test]
fn a_failed_acquire_does_not_consume_a_token() {
    let server = RedisServer::start();
    let key = unique_key("fencebusy");
    let mut a = fenced(&server, &key, "127.0.0.1");
    let mut b = fenced(&server, &key, "localhost");
    assert!(a.acquire(Duration::ZERO, &never).unwrap());
    assert!(!b.acquire(Duration::ZERO, &never).unwrap());
    assert!(!b.acquire(Duration::from_millis(50), &never).unwrap());
    assert_eq!(counter(&server, &key), 1);
    assert!(a.release().unwrap());
}

#[test]
fn a_reentrant_acquire_keeps_the_holds_token() {
    let server = RedisServer::start();
    let key = unique_key("fencereenter");
    let mut a = fenced(&server, &key, "127.0.0.1");
    assert!(a.acquire(Duration::ZERO, &never).unwrap());
    let fence = a.fencing_token();
    assert!(a.acquire(Duration::ZERO, &never).unwrap());
    assert_eq!(a.fencing_token(), fence);
    assert!(a.release().unwrap());
    assert!(a.release().unwrap());
}

#[test]
fn a_handoff_to_a_waiter_carries_a_greater_token() {
    let server = RedisServer::start();
    let key = unique_key("fencehandoff");
    let mut holder = fenced(&server, &key, "127.0.0.1");
    assert!(holder.acquire(Duration::ZERO, &never).unwrap());
    let first = holder.fencing_token().unwrap();
    let (port, k) = (server.port, key.clone());
    let waiter = std::thread::spawn(move || {
        let mut options = LockOptions::default();
        options.set("fencing", OptionValue::Bool(true)).unwrap();
        let url = format!("redis://localhost:{port}");
        let mut l = Lock::new(k, 5.0, &[url], options).unwrap();
        assert!(l.acquire(Duration::from_secs(5), &never).unwrap());
        let fence = l.fencing_token();
        assert!(l.release().unwrap());
        fence
    });
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let queued: i64 = redis::cmd("ZCARD")
            .arg(keys::queue_key(&key))
            .query(&mut server.client())
            .unwrap();
        if queued == 1 {
            break;
        }
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(2));
    }
    assert!(holder.release().unwrap());
    assert_eq!(waiter.join().unwrap(), Some(first + 1));
}

#[test]
fn a_handoff_with_a_lost_wake_up_still_reports_the_token() {
    let server = RedisServer::start();
    let key = unique_key("fencelost");
    let mut waiter = fenced(&server, &key, "127.0.0.1");
    // Queue a waiter behind a holder, then hand over with the real release
    // script but remove the wake-up before the waiter reads it: the fencing
    // token travels in the wake list, the check must still find it.
    let _: () = redis::cmd("SET")
        .arg(&key)
        .arg("holder")
        .arg("PX")
        .arg(10_000)
        .query(&mut server.client())
        .unwrap();
    let w = commands::Waiter {
        token: b"w1",
        ttl_ms: 5_000,
        alive_ms: 5_000,
        fencing: true,
    };
    let mut con = server.client();
    let lock_keys = keys::LockKeys::new(key.clone());
    assert!(matches!(
        commands::enqueue(&lock_keys, &w).query(&mut con).unwrap(),
        commands::Queued::Waiting { .. }
    ));
    assert!(release_as(
        &server,
        &key,
        b"holder",
        commands::Successor::HandOver
    ));
    let checked = commands::check(&lock_keys, &w, false)
        .query(&mut con)
        .unwrap();
    assert_eq!(checked, commands::Queued::Acquired { fence: Some(1) });
    // And through a Lock: the fence of a normal acquire continues from there.
    assert!(release_as(
        &server,
        &key,
        b"w1",
        commands::Successor::HandOver
    ));
    assert!(waiter.acquire(Duration::ZERO, &never).unwrap());
    assert_eq!(waiter.fencing_token(), Some(2));
    assert!(waiter.release().unwrap());
}

#[test]
fn without_the_option_no_token_is_handed_out() {
    let server = RedisServer::start();
    let key = unique_key("nofence");
    let mut a = common::lock(&server, &key, 5.0);
    assert!(a.acquire(Duration::ZERO, &never).unwrap());
    assert_eq!(a.fencing_token(), None);
    assert!(a.release().unwrap());
    let exists: i64 = redis::cmd("EXISTS")
        .arg(keys::fence_key(&key))
        .query(&mut server.client())
        .unwrap();
    assert_eq!(exists, 0);
}
