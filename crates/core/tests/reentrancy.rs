//! Holds are per process: a second acquire of a held key joins the hold and
//! Redis is released at the last release.

mod common;

use std::time::Duration;

use common::{RedisServer, exists, lock, unique_key};
use redislock_core::{Lock, LockOptions, OptionValue};

#[test]
fn nested_acquire_on_one_object_is_counted() {
    let server = RedisServer::start();
    let key = unique_key("nested");
    let mut a = lock(&server, &key, 10.0);
    assert!(a.acquire(Duration::ZERO).unwrap());
    assert!(a.acquire(Duration::ZERO).unwrap());
    assert_eq!(a.info().hold_count, 2);
    assert!(a.release().unwrap());
    assert!(exists(&server, &key), "still held after the inner release");
    assert!(a.release().unwrap());
    assert!(
        !exists(&server, &key),
        "released in Redis at the last release"
    );
    assert!(!a.release().unwrap(), "one release too many returns false");
}

#[test]
fn two_objects_share_one_hold() {
    let server = RedisServer::start();
    let key = unique_key("shared");
    let mut a = lock(&server, &key, 10.0);
    let mut b = lock(&server, &key, 10.0);
    assert!(a.acquire(Duration::ZERO).unwrap());
    assert!(b.acquire(Duration::ZERO).unwrap());
    assert_eq!(a.token(), b.token());
    assert!(a.release().unwrap());
    assert!(!a.release().unwrap(), "a has nothing left to release");
    assert!(exists(&server, &key));
    assert!(b.is_acquired().unwrap());
    assert!(b.release().unwrap());
    assert!(!exists(&server, &key));
}

#[test]
fn reentrant_acquire_never_shortens_the_lease() {
    let server = RedisServer::start();
    let key = unique_key("lease");
    let mut long = lock(&server, &key, 30.0);
    let mut short = lock(&server, &key, 1.0);
    assert!(long.acquire(Duration::ZERO).unwrap());
    assert!(short.acquire(Duration::ZERO).unwrap());
    assert!(short.remaining_ttl().unwrap().unwrap() > 29.0);
    let mut longer = lock(&server, &key, 60.0);
    assert!(longer.acquire(Duration::ZERO).unwrap());
    assert!(short.remaining_ttl().unwrap().unwrap() > 59.0);
    for l in [&mut long, &mut short, &mut longer] {
        assert!(l.release().unwrap());
    }
    assert!(!exists(&server, &key));
}

#[test]
fn a_lost_hold_is_not_joined() {
    let server = RedisServer::start();
    let key = unique_key("lost");
    let mut a = lock(&server, &key, 10.0);
    assert!(a.acquire(Duration::ZERO).unwrap());
    let _: () = redis::cmd("SET")
        .arg(&key)
        .arg("thief")
        .query(&mut server.client())
        .unwrap();
    let mut b = lock(&server, &key, 10.0);
    assert!(!b.acquire(Duration::ZERO).unwrap(), "the thief holds it");
    assert_eq!(a.token(), None, "a's lost hold is dropped");
    assert!(!a.release().unwrap());
}

#[test]
fn dropping_the_last_holder_releases_unless_auto_release_is_off() {
    let server = RedisServer::start();
    let key = unique_key("drop");
    {
        let mut a = lock(&server, &key, 10.0);
        assert!(a.acquire(Duration::ZERO).unwrap());
    }
    assert!(!exists(&server, &key), "auto_release frees on drop");

    let mut keep = LockOptions::default();
    keep.set("auto_release", OptionValue::Bool(false)).unwrap();
    let token = {
        let mut a = Lock::new(key.clone(), 10.0, &[server.url()], keep.clone()).unwrap();
        assert!(a.acquire(Duration::ZERO).unwrap());
        a.token().unwrap()
    };
    assert!(
        exists(&server, &key),
        "auto_release off keeps the lock for a handover"
    );
    let mut taker = lock(&server, &key, 10.0);
    taker.restore(token).unwrap();
    assert!(taker.release().unwrap());
}

#[test]
fn restore_with_a_different_token_while_holding_is_refused() {
    let server = RedisServer::start();
    let key = unique_key("conflict");
    let mut a = lock(&server, &key, 10.0);
    assert!(a.acquire(Duration::ZERO).unwrap());
    let mut b = lock(&server, &key, 10.0);
    assert!(b.restore(b"other".to_vec()).is_err());
    b.restore(a.token().unwrap()).unwrap();
    assert!(b.release().unwrap());
    assert!(a.release().unwrap());
    assert!(!exists(&server, &key));
}
