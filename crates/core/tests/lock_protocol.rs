//! The lock protocol against a real redis-server: what acquire, release,
//! refresh, remaining_ttl, is_acquired, force_release and restore do in Redis.

mod common;

use std::time::Duration;

use common::{RedisServer, lock, unique_key};
use redislock_core::testing::protocol::call::Attempt;
use redislock_core::testing::protocol::keys::LockKeys;
use redislock_core::testing::protocol::lock_calls::{self, Released, Successor};
use redislock_core::{Lock, LockOptions, OptionValue};

#[test]
fn acquire_writes_token_with_ttl_and_release_deletes_it() {
    let server = RedisServer::start();
    let key = unique_key("basic");
    let mut a = lock(&server, &key, 10.0);
    assert!(a.acquire(Duration::ZERO).unwrap());
    let token = a.token().expect("held lock has a token");
    assert_eq!(token.len(), 32);
    let key_str = String::from_utf8(key.clone()).unwrap();
    let stored: String = server.cmd(&["GET", &key_str]);
    assert_eq!(
        stored.as_bytes(),
        &token[..],
        "the key's value is the plain token"
    );
    let pttl: i64 = server.cmd(&["PTTL", &key_str]);
    assert!((9_000..=10_000).contains(&pttl), "pttl {pttl}");

    assert!(a.release().unwrap());
    let exists: i64 = server.cmd(&["EXISTS", &key_str]);
    assert_eq!(exists, 0);
    assert_eq!(a.token(), None);
    assert!(
        !a.release().unwrap(),
        "second release has nothing to release"
    );
}

#[test]
fn a_held_lock_cannot_be_taken_by_another_process_token() {
    let server = RedisServer::start();
    let key = unique_key("contended");
    let key_str = String::from_utf8(key.clone()).unwrap();
    let _: () = server.cmd(&["SET", &key_str, "someone-else", "PX", "10000"]);
    let mut a = lock(&server, &key, 10.0);
    assert!(!a.acquire(Duration::ZERO).unwrap());
    assert_eq!(a.token(), None);
    assert!(!a.release().unwrap());
    let stored: String = server.cmd(&["GET", &key_str]);
    assert_eq!(stored, "someone-else", "a failed acquire changes nothing");
}

#[test]
fn tokens_are_fresh_per_hold() {
    let server = RedisServer::start();
    let key = unique_key("fresh");
    let mut a = lock(&server, &key, 10.0);
    assert!(a.acquire(Duration::ZERO).unwrap());
    let first = a.token().unwrap();
    assert!(a.release().unwrap());
    assert!(a.acquire(Duration::ZERO).unwrap());
    assert_ne!(first, a.token().unwrap());
    assert!(a.release().unwrap());
}

#[test]
fn release_of_a_lock_taken_over_returns_false_and_deletes_nothing() {
    let server = RedisServer::start();
    let key = unique_key("stolen");
    let key_str = String::from_utf8(key.clone()).unwrap();
    let mut a = lock(&server, &key, 10.0);
    assert!(a.acquire(Duration::ZERO).unwrap());
    let _: () = server.cmd(&["SET", &key_str, "intruder", "PX", "10000"]);
    assert!(!a.is_acquired().unwrap());
    assert_eq!(a.remaining_ttl().unwrap(), None);
    assert!(!a.refresh(None).unwrap());
    assert!(!a.release().unwrap());
    let stored: String = server.cmd(&["GET", &key_str]);
    assert_eq!(stored, "intruder");
}

#[test]
fn refresh_extends_and_remaining_ttl_reports_it() {
    let server = RedisServer::start();
    let key = unique_key("refresh");
    let mut a = lock(&server, &key, 1.0);
    assert!(a.acquire(Duration::ZERO).unwrap());
    let left = a.remaining_ttl().unwrap().unwrap();
    assert!(left > 0.5 && left <= 1.0, "{left}");
    assert!(a.refresh(Some(20.0)).unwrap());
    let left = a.remaining_ttl().unwrap().unwrap();
    assert!(left > 19.0 && left <= 20.0, "{left}");
    assert!(
        a.refresh(None).unwrap(),
        "refresh without ttl uses the lock's ttl"
    );
    let left = a.remaining_ttl().unwrap().unwrap();
    assert!(left <= 1.0, "{left}");
    assert!(a.is_acquired().unwrap());
    assert!(a.release().unwrap());
}

#[test]
fn an_expired_lease_is_not_ours_any_more() {
    let server = RedisServer::start();
    let key = unique_key("expire");
    let mut a = lock(&server, &key, 0.05);
    assert!(a.acquire(Duration::ZERO).unwrap());
    std::thread::sleep(Duration::from_millis(120));
    assert!(!a.is_acquired().unwrap());
    let mut b = lock(&server, &key, 5.0);
    assert!(b.acquire(Duration::ZERO).unwrap());
    assert!(
        !a.release().unwrap(),
        "the expired holder must not delete b's lock"
    );
    assert!(b.is_acquired().unwrap());
    assert!(b.release().unwrap());
}

#[test]
fn force_release_deletes_whoever_holds_it() {
    let server = RedisServer::start();
    let key = unique_key("force");
    let key_str = String::from_utf8(key.clone()).unwrap();
    let _: () = server.cmd(&["SET", &key_str, "other", "PX", "10000"]);
    let mut a = lock(&server, &key, 10.0);
    assert!(a.force_release().unwrap());
    assert!(!a.force_release().unwrap(), "nothing left to delete");
    assert!(a.acquire(Duration::ZERO).unwrap());
    assert!(a.force_release().unwrap());
    assert_eq!(a.token(), None, "a force-released hold is gone");
}

#[test]
fn prefix_is_prepended_to_the_key() {
    let server = RedisServer::start();
    let mut options = LockOptions::default();
    options
        .set("prefix", OptionValue::Text(b"app1:".to_vec()))
        .unwrap();
    let mut a = Lock::new(b"jobs".to_vec(), 5.0, &[server.url()], options).unwrap();
    assert!(a.acquire(Duration::ZERO).unwrap());
    let exists: i64 = server.cmd(&["EXISTS", "app1:jobs"]);
    assert_eq!(exists, 1);
    assert_eq!(a.key(), b"jobs");
    assert!(a.release().unwrap());
}

#[test]
fn restore_adopts_a_hold_made_elsewhere() {
    let server = RedisServer::start();
    let key = unique_key("restore");
    let key_str = String::from_utf8(key.clone()).unwrap();
    let _: () = server.cmd(&["SET", &key_str, "handed-over-token", "PX", "10000"]);
    let mut taker = lock(&server, &key, 10.0);
    taker.restore(b"handed-over-token".to_vec()).unwrap();
    assert_eq!(taker.token().unwrap(), b"handed-over-token");
    assert!(taker.is_acquired().unwrap());
    assert!(taker.refresh(Some(30.0)).unwrap());
    assert!(taker.release().unwrap());
    let exists: i64 = server.cmd(&["EXISTS", &key_str]);
    assert_eq!(exists, 0);
}

#[test]
fn binary_keys_and_tokens_are_kept_as_bytes() {
    let server = RedisServer::start();
    let mut key = unique_key("bin");
    key.extend_from_slice(&[0, 0xff, b'\n']);
    let mut a = lock(&server, &key, 5.0);
    assert!(a.acquire(Duration::ZERO).unwrap());
    let mut other = lock(&server, &key, 5.0);
    drop(other.token());
    let stored: Option<Vec<u8>> = redis::cmd("GET")
        .arg(&key)
        .query(&mut server.client())
        .unwrap();
    assert_eq!(stored, a.token());
    assert!(a.release().unwrap());
    other.abandon();
}

/// A release whose connection was killed is sent again; when that replay
/// finds the lock no longer ours, the first try's send time decides: here
/// the lease (1 s) was over before the release was sent, another holder
/// has the lock, and the release must not claim the earlier hold ended by
/// it, even with an `owner` that the same object used before (a log of
/// released tokens in Redis once answered true here).
#[test]
fn a_replayed_release_after_the_lease_ended_is_not_released() {
    let server = RedisServer::start();
    let key = unique_key("replaylost");
    let mut options = LockOptions::default();
    options
        .set("owner", OptionValue::Text(b"worker-1".to_vec()))
        .unwrap();
    let mut a = Lock::new(key.clone(), 1.0, &[server.url()], options).unwrap();
    assert!(a.acquire(Duration::ZERO).unwrap());
    assert!(a.release().unwrap());
    assert!(a.acquire(Duration::ZERO).unwrap());
    std::thread::sleep(Duration::from_millis(1_200));
    let mut b = lock(&server, &key, 10.0);
    assert!(b.acquire(Duration::ZERO).unwrap());
    let killed: i64 = server.cmd(&["CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"]);
    assert!(killed >= 1, "a's pooled connection was killed");
    assert!(!a.release().unwrap(), "the lease was lost, not released");
    assert_eq!(b.token(), server_owner(&server, &key), "b still holds it");
    assert!(b.release().unwrap());
}

fn server_owner(server: &RedisServer, key: &[u8]) -> Option<Vec<u8>> {
    redis::cmd("GET")
        .arg(key)
        .query(&mut server.client())
        .unwrap()
}

/// At the command level: a replay of a release that finds the lock no
/// longer ours says so apart from a first try that does.
#[test]
fn a_release_replay_that_finds_the_lock_gone_says_so() {
    let server = RedisServer::start();
    let key = unique_key("released");
    let keys = LockKeys::new(key.clone(), b"~~fence".to_vec());
    let release = |token: &[u8], attempt| {
        lock_calls::release(&keys, token, None, Successor::HandOver, false, attempt)
            .query(&mut server.client())
            .unwrap()
    };
    let mut a = lock(&server, &key, 10.0);
    assert!(a.acquire(Duration::ZERO).unwrap());
    let token = a.token().unwrap();
    assert_eq!(release(&token, Attempt::First), Released::Yes);
    assert_eq!(release(&token, Attempt::First), Released::NotOurs);
    assert_eq!(release(&token, Attempt::Replay), Released::GoneOnReplay);
    let left: Vec<Vec<u8>> = redis::cmd("KEYS")
        .arg(format!("{}*", String::from_utf8_lossy(&key)))
        .query(&mut server.client())
        .unwrap();
    assert!(left.is_empty(), "a release leaves no key behind: {left:?}");
}
