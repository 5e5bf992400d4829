//! An auto-renewed hold with `auto_release => false` outlives its last
//! object: it stays in the process's table and is renewed until a release
//! or refresh of its key and token from any object (one made by
//! `restore()`, say), a force-release, its loss, or the request end.
//!
//! Leases of 0.3 s (renewed every 0.1 s). The tests of this program run
//! one at a time: they compare the process's `lost_leases` counter.

mod common;

use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use common::{RedisServer, unique_key, wait_until};
use redislock_core::{Lock, LockOptions, OptionValue, release_all, stats};

const TTL: f64 = 0.3;

fn one_at_a_time() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn options(reentrant: bool, auto_renew: bool) -> LockOptions {
    let mut options = LockOptions::default();
    options
        .set("auto_renew", OptionValue::Bool(auto_renew))
        .unwrap();
    options
        .set("auto_release", OptionValue::Bool(false))
        .unwrap();
    options
        .set("reentrant", OptionValue::Bool(reentrant))
        .unwrap();
    options
}

fn lock(server: &RedisServer, key: &[u8], options: LockOptions) -> Lock {
    Lock::new(key.to_vec(), TTL, &[server.url()], options).unwrap()
}

/// Takes `key` with a lock object that is then dropped; returns the token.
fn take_and_leave(server: &RedisServer, key: &[u8], options: LockOptions) -> Vec<u8> {
    let mut first = lock(server, key, options);
    assert!(first.acquire(Duration::ZERO).unwrap());
    first.token().unwrap()
}

fn value(server: &RedisServer, key: &[u8]) -> Option<Vec<u8>> {
    redis::cmd("GET")
        .arg(key)
        .query(&mut server.client())
        .unwrap()
}

fn pttl(server: &RedisServer, key: &[u8]) -> i64 {
    redis::cmd("PTTL")
        .arg(key)
        .query(&mut server.client())
        .unwrap()
}

/// Renewals (EVALSHA) this server sees in 0.4 s: four rounds would run.
fn renewals_in_400ms(server: &RedisServer) -> u64 {
    let before = server.calls("evalsha");
    std::thread::sleep(Duration::from_millis(400));
    server.calls("evalsha") - before
}

/// A 0.3 s lease still held 0.9 s after its object is gone; released by a
/// restored object: not renewed after, and not counted lost.
fn left_hold_renewed_until_a_restored_release(reentrant: bool) {
    let _serial = one_at_a_time();
    let server = RedisServer::start();
    let key = unique_key("left-hold");
    let token = take_and_leave(&server, &key, options(reentrant, true));
    std::thread::sleep(Duration::from_millis(900));
    assert_eq!(value(&server, &key), Some(token.clone()), "renewed on");
    assert!(pttl(&server, &key) > 0);

    let lost = stats::snapshot(stats::Scope::Process).total().lost_leases;
    let mut restored = lock(&server, &key, options(reentrant, false));
    restored.restore(token).unwrap();
    assert!(restored.release().unwrap());
    assert_eq!(value(&server, &key), None);
    assert_eq!(
        renewals_in_400ms(&server),
        0,
        "no renewal after the release"
    );
    assert_eq!(
        stats::snapshot(stats::Scope::Process).total().lost_leases,
        lost,
        "released, not lost"
    );
}

#[test]
fn a_left_hold_is_renewed_until_a_restored_object_releases_it() {
    left_hold_renewed_until_a_restored_release(false);
}

#[test]
fn a_left_reentrant_hold_is_renewed_until_a_restored_object_releases_it() {
    left_hold_renewed_until_a_restored_release(true);
}

/// A refresh of that key and token from another object ends the renewal:
/// the lease it set stays.
#[test]
fn a_refresh_from_another_object_ends_the_renewal() {
    let _serial = one_at_a_time();
    let server = RedisServer::start();
    let key = unique_key("left-hold-refresh");
    let token = take_and_leave(&server, &key, options(false, true));
    let mut restored = lock(&server, &key, options(false, false));
    restored.restore(token).unwrap();
    assert!(restored.refresh(Some(5.0)).unwrap());
    assert_eq!(
        renewals_in_400ms(&server),
        0,
        "no renewal after the refresh"
    );
    assert!(pttl(&server, &key) > 4_000, "the refreshed lease stays");
    assert!(restored.release().unwrap());
}

/// The request end forgets it: it is no longer renewed and expires.
#[test]
fn at_the_request_end_a_left_hold_expires() {
    let _serial = one_at_a_time();
    let server = RedisServer::start();
    let key = unique_key("left-hold-request-end");
    let lost = stats::snapshot(stats::Scope::Process).total().lost_leases;
    take_and_leave(&server, &key, options(false, true));
    std::thread::sleep(Duration::from_millis(400));
    assert!(value(&server, &key).is_some(), "renewed past its lease");
    assert_eq!(release_all(), 0, "auto_release is off: nothing released");
    wait_until("the lease expires", Duration::from_secs(2), || {
        value(&server, &key).is_none()
    });
    assert_eq!(renewals_in_400ms(&server), 0);
    assert_eq!(
        stats::snapshot(stats::Scope::Process).total().lost_leases,
        lost
    );
}

/// A force-release ends it too.
#[test]
fn a_force_release_ends_a_left_hold() {
    let _serial = one_at_a_time();
    let server = RedisServer::start();
    let key = unique_key("left-hold-force");
    let lost = stats::snapshot(stats::Scope::Process).total().lost_leases;
    take_and_leave(&server, &key, options(false, true));
    let mut other = lock(&server, &key, options(false, false));
    assert!(other.force_release().unwrap());
    assert_eq!(renewals_in_400ms(&server), 0);
    assert_eq!(
        stats::snapshot(stats::Scope::Process).total().lost_leases,
        lost
    );
}

/// Deleted behind its back: found lost at the next renewal, which is the
/// last one.
#[test]
fn a_lost_left_hold_is_no_longer_renewed() {
    let _serial = one_at_a_time();
    let server = RedisServer::start();
    let key = unique_key("left-hold-lost");
    let lost = stats::snapshot(stats::Scope::Process).total().lost_leases;
    take_and_leave(&server, &key, options(false, true));
    let _: i64 = server.cmd(&["DEL", std::str::from_utf8(&key).unwrap()]);
    wait_until("the loss is counted", Duration::from_secs(2), || {
        stats::snapshot(stats::Scope::Process).total().lost_leases == lost + 1
    });
    assert_eq!(renewals_in_400ms(&server), 0);
}

/// Without auto_renew nothing outlives the object: the lease runs out.
#[test]
fn a_hold_without_renewal_is_not_kept() {
    let _serial = one_at_a_time();
    let server = RedisServer::start();
    let key = unique_key("left-hold-plain");
    take_and_leave(&server, &key, options(false, false));
    assert!(value(&server, &key).is_some(), "auto_release is off");
    wait_until("the lease expires", Duration::from_secs(2), || {
        value(&server, &key).is_none()
    });
    assert_eq!(renewals_in_400ms(&server), 0);
}
