//! `end_request_scope` (`RedisLock::releaseAll()`): ends what request end
//! would, between the "requests" of a worker loop. Alone in its binary: it
//! ends the whole process's scope.

mod common;

use std::time::Duration;

use common::{RedisServer, unique_key};
use redislock_core::{Lock, LockOptions, OptionValue, end_request_scope, stats};

fn options(pairs: &[(&str, bool)]) -> LockOptions {
    let mut options = LockOptions::default();
    for (name, on) in pairs {
        options.set(name, OptionValue::Bool(*on)).unwrap();
    }
    options
}

fn lock(server: &RedisServer, key: &[u8], ttl: f64, options: LockOptions) -> Lock {
    Lock::new(key.to_vec(), ttl, &[server.url()], options).unwrap()
}

fn value(server: &RedisServer, key: &[u8]) -> Option<Vec<u8>> {
    redis::cmd("GET")
        .arg(key)
        .query(&mut server.client())
        .unwrap()
}

fn lost_leases() -> u64 {
    stats::snapshot(stats::Scope::Process).total().lost_leases
}

#[test]
fn the_scope_ends_what_request_end_would_and_counts_distinct_keys() {
    let server = RedisServer::start();
    let (a, b, kept, left) = (
        unique_key("scope-a"),
        unique_key("scope-b"),
        unique_key("scope-kept"),
        unique_key("scope-left"),
    );
    let lost_before = lost_leases();

    // Two holds of `a` (reentrant, two objects) and one of it restored
    // beside them (not reentrant: an entry of its own, same token).
    let mut a1 = lock(&server, &a, 10.0, LockOptions::default());
    let mut a2 = lock(&server, &a, 10.0, LockOptions::default());
    assert!(a1.acquire(Duration::ZERO).unwrap());
    assert!(a2.acquire(Duration::ZERO).unwrap());
    let mut a3 = lock(&server, &a, 10.0, options(&[("reentrant", false)]));
    let a_token = a1.token().unwrap();
    a3.restore(a_token.clone()).unwrap();
    let mut b1 = lock(&server, &b, 10.0, LockOptions::default());
    assert!(b1.acquire(Duration::ZERO).unwrap());

    // auto_release off: one kept by its live object, one left renewing by
    // its gone object.
    let renewed_kept = options(&[("auto_release", false), ("auto_renew", true)]);
    // 0.6 s leases: a renewal every 200 ms (0.3 s ones missed a renewal
    // on a loaded machine, beside a second copy of the suite).
    let mut k = lock(&server, &kept, 0.6, renewed_kept.clone());
    assert!(k.acquire(Duration::ZERO).unwrap());
    let kept_token = k.token().unwrap();
    {
        let mut gone = lock(&server, &left, 0.6, renewed_kept);
        assert!(gone.acquire(Duration::ZERO).unwrap());
    }

    assert_eq!(end_request_scope(), 2, "a and b, each once");
    assert_eq!(value(&server, &a), None);
    assert_eq!(value(&server, &b), None);
    for l in [&mut a1, &mut a2, &mut a3, &mut b1] {
        assert!(!l.is_acquired().unwrap());
        assert!(!l.release().unwrap());
    }
    assert_eq!(end_request_scope(), 0, "nothing left to end");

    // The kept hold: still its object's and renewed; joined by nobody.
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(value(&server, &kept), Some(kept_token.clone()));
    assert!(k.is_acquired().unwrap());
    let mut other = lock(&server, &kept, 0.3, LockOptions::default());
    assert!(!other.acquire(Duration::ZERO).unwrap(), "not joined");
    // The left hold: no longer renewed, its lease ran out.
    assert_eq!(value(&server, &left), None);

    // Reentrancy starts afresh: a released key is taken with a new token.
    assert!(a1.acquire(Duration::ZERO).unwrap());
    assert_ne!(a1.token().unwrap(), a_token);
    assert!(a1.release().unwrap());

    assert!(k.release().unwrap());
    assert_eq!(value(&server, &kept), None);
    assert_eq!(lost_leases(), lost_before, "nothing ended here was lost");
}
