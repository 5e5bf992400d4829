//! `stats()` `lost_leases` counts leases this process held and lost. A
//! hold taken over with `restore()` whose token was never ours in Redis
//! (a stale or wrong token) is not one: finding it not ours (`release()`
//! false, `refresh()` false, `isAcquired()` false, the renewal thread)
//! counts nothing and raises no lost-lease hook. Once Redis confirmed a
//! restored hold as ours, losing it counts as for any hold.
//!
//! Nor is a restored token believed before Redis answers (issue 36): with
//! `auto_renew`, `isAcquired()` asks Redis until an extension of the hold
//! was answered; the lease counted from `restore()` is only a guess.
//!
//! The tests of this program run one at a time: they compare the
//! process's counters.

mod common;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use common::{RedisServer, unique_key, wait_until};
use redislock_core::host::{self, Host};
use redislock_core::{Lock, LockOptions, OptionValue, stats};

static LOST_HOOK_CALLS: AtomicU32 = AtomicU32::new(0);

fn one_at_a_time() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    host::install(Host {
        context: || 0,
        wait_should_end: || false,
        time_limit_hit: || false,
        lease_lost: || {
            LOST_HOOK_CALLS.fetch_add(1, Ordering::Relaxed);
        },
    });
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn lost_leases() -> u64 {
    stats::snapshot(stats::Scope::Process).total().lost_leases
}

fn restored(server: &RedisServer, key: &[u8], token: &str, options: LockOptions) -> Lock {
    let mut lock = Lock::new(key.to_vec(), 10.0, &[server.url()], options).unwrap();
    lock.restore(token.as_bytes().to_vec()).unwrap();
    lock
}

fn set(server: &RedisServer, key: &[u8], token: &str) {
    let key = String::from_utf8_lossy(key).into_owned();
    let _: () = server.cmd(&["SET", &key, token, "PX", "10000"]);
}

fn del(server: &RedisServer, key: &[u8]) {
    let key = String::from_utf8_lossy(key).into_owned();
    let _: i64 = server.cmd(&["DEL", &key]);
}

#[test]
fn a_restored_token_that_was_never_ours_counts_no_lost_lease() {
    let _serial = one_at_a_time();
    let server = RedisServer::start();
    let key = unique_key("restored-not-ours");
    set(&server, &key, "the_holder");
    let lost = lost_leases();

    // Each object dropped before the next (a reentrant restore of the same
    // key and token would join its hold); dropping one releases it.
    let check = |what: &str, call: fn(&mut Lock) -> bool| {
        let mut lock = restored(&server, &key, "other_owner", LockOptions::default());
        assert!(!call(&mut lock), "{what}: not ours");
        drop(lock);
        assert_eq!(lost_leases(), lost, "{what}");
    };
    check("release()", |lock| lock.release().unwrap());
    check("refresh()", |lock| lock.refresh(None).unwrap());
    check("isAcquired()", |lock| lock.is_acquired().unwrap());
    check("remainingTtl()", |lock| {
        lock.remaining_ttl().unwrap().is_some()
    });
    check("dropped", |_| false);
    del(&server, &key);
    check("release() of a free lock", |lock| lock.release().unwrap());
    check("refresh() of a free lock", |lock| {
        lock.refresh(None).unwrap()
    });
}

#[test]
fn a_restored_token_that_was_never_ours_is_not_lost_to_the_renewal_thread() {
    let _serial = one_at_a_time();
    let server = RedisServer::start();
    let key = unique_key("restored-not-ours-renewed");
    set(&server, &key, "the_holder");
    let (lost, hooks) = (lost_leases(), LOST_HOOK_CALLS.load(Ordering::Relaxed));
    let mut options = LockOptions::default();
    options.set("auto_renew", OptionValue::Bool(true)).unwrap();
    options
        .set("on_lost", OptionValue::Text(b"interrupt".to_vec()))
        .unwrap();
    let mut lock = restored(&server, &key, "other_owner", options);
    // A restored hold is renewed at once: that round finds it not ours.
    wait_until(
        "the renewal finds it not ours",
        Duration::from_secs(5),
        || !lock.is_acquired().unwrap(),
    );
    assert_eq!(lost_leases(), lost);
    assert_eq!(LOST_HOOK_CALLS.load(Ordering::Relaxed), hooks, "no hook");
    assert!(!lock.release().unwrap());
    assert_eq!(lost_leases(), lost);
}

#[test]
fn a_restored_hold_confirmed_ours_then_lost_counts() {
    let _serial = one_at_a_time();
    let server = RedisServer::start();
    let key = unique_key("restored-ours-lost");
    set(&server, &key, "handed_over");
    let lost = lost_leases();

    // Confirmed by a refresh, then taken by someone else.
    let mut lock = restored(&server, &key, "handed_over", LockOptions::default());
    assert!(lock.refresh(None).unwrap());
    set(&server, &key, "someone_else");
    assert!(!lock.release().unwrap());
    assert_eq!(lost_leases(), lost + 1, "held, then lost");
    drop(lock);

    // Confirmed by isAcquired(), then gone.
    set(&server, &key, "handed_over");
    let mut lock = restored(&server, &key, "handed_over", LockOptions::default());
    assert!(lock.is_acquired().unwrap());
    del(&server, &key);
    assert!(!lock.refresh(None).unwrap());
    assert_eq!(lost_leases(), lost + 2);
    drop(lock);
    assert_eq!(lost_leases(), lost + 2, "counted once");
}

/// Options of a restored hold renewed by the renewal thread.
fn renewed() -> LockOptions {
    let mut options = LockOptions::default();
    options.set("auto_renew", OptionValue::Bool(true)).unwrap();
    options.set("reentrant", OptionValue::Bool(false)).unwrap();
    options
}

/// A token kept after its lease ran out, while another holder has the
/// lock: restored with `auto_renew`, its `is_acquired()` asks Redis
/// before any answer (at da6b638 it said true at once, from the renewal
/// thread's knowledge, though the thread had not been answered yet).
#[test]
fn a_restored_renewed_token_is_not_believed_before_redis_answers() {
    let _serial = one_at_a_time();
    let server = RedisServer::start();
    let key = unique_key("restored-renewed-not-ours");
    set(&server, &key, "the_new_holder");
    let mut lock = restored(&server, &key, "the_old_holder", renewed());
    assert!(
        !lock.is_acquired().unwrap(),
        "a restored token is believed held while Redis names another holder"
    );
    assert!(!lock.release().unwrap());
}

/// A restored token that is ours; the renewal thread's first renewal gets
/// no answer in time (its reply is held back by a proxy). Redis confirms
/// the token on `is_acquired()`, then the hold ends in Redis (deleted here,
/// as an expiry or a `forceRelease()` would) and another holder takes the
/// lock: the next `is_acquired()` must see it (at da6b638 it said true for
/// the whole restored ttl, counted from `restore()`, no extension ever
/// answered).
#[test]
fn a_restored_hold_whose_renewal_is_unanswered_is_asked_again() {
    use redislock_core::testing::protocol::scripts::REFRESH;
    let _serial = one_at_a_time();
    let server = RedisServer::start();
    let proxy = common::proxy::Proxy::start(&server);
    let key = unique_key("restored-renewal-unanswered");
    let name = String::from_utf8_lossy(&key).into_owned();
    let _: () = server.cmd(&["SET", &name, "the_holder", "PX", "10000"]);
    proxy.hold_reply_to(REFRESH.hash().as_bytes(), Duration::from_secs(3));
    let mut lock = Lock::new(key.clone(), 10.0, &[proxy.url()], renewed()).unwrap();
    lock.restore(b"the_holder".to_vec()).unwrap();
    assert!(lock.is_acquired().unwrap(), "ours while Redis says so");
    wait_until(
        "the renewal's reply is held",
        Duration::from_secs(5),
        || proxy.holding_reply(),
    );
    // The hold ends in Redis while the renewal's reply is held back.
    del(&server, &key);
    set(&server, &key, "someone_else");
    assert!(
        !lock.is_acquired().unwrap(),
        "a restored hold believed from no answered extension while Redis names another holder"
    );
    assert!(!lock.release().unwrap());
}
