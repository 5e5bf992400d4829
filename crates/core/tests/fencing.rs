//! Fencing tokens (option `fencing`): every successful acquire gets a number
//! strictly greater than every earlier one for that key, atomically with the
//! acquire, on every path (free lock, handoff to a waiter, lost wake-up),
//! from one counter per prefix and server that never goes below the
//! client's clock in microseconds.

mod common;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::{RedisServer, release_as, unique_key};
use redislock_core::testing::protocol::call::Attempt;
use redislock_core::testing::protocol::step::Step;
use redislock_core::testing::protocol::{keys, lock_calls};
use redislock_core::{Lock, LockOptions, OptionValue};

fn fenced(server: &RedisServer, key: &[u8], host: &str) -> Lock {
    let mut options = LockOptions::default();
    options.set("fencing", OptionValue::Bool(true)).unwrap();
    options
        .set("retry_delay", OptionValue::Number(0.2))
        .unwrap();
    let url = format!("redis://{host}:{}", server.port);
    Lock::new(key.to_vec(), 5.0, &[url], options).unwrap()
}

/// The server's fencing counter (no prefix).
fn counter(server: &RedisServer) -> i64 {
    redis::cmd("GET")
        .arg("~~fence")
        .query::<Option<i64>>(&mut server.client())
        .unwrap()
        .unwrap_or(0)
}

fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_micros() as i64
}

#[test]
fn each_acquire_gets_a_greater_token() {
    let server = RedisServer::start();
    let key = unique_key("fence");
    let mut a = fenced(&server, &key, "127.0.0.1");
    let mut last = 0;
    let before = now_us();
    for _ in 0..20 {
        assert_eq!(a.fencing_token(), None, "no token while not held");
        assert!(a.acquire(Duration::ZERO).unwrap());
        let fence = a.fencing_token().unwrap();
        assert!(fence > last, "{fence} after {last}");
        assert!(fence >= before, "never below the client's clock");
        assert_eq!(fence, counter(&server), "taken from the server's counter");
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
    assert!(a.acquire(Duration::ZERO).unwrap());
    let taken = counter(&server);
    assert!(!b.acquire(Duration::ZERO).unwrap());
    assert!(!b.acquire(Duration::from_millis(50)).unwrap());
    assert_eq!(counter(&server), taken);
    assert!(a.release().unwrap());
}

#[test]
fn a_reentrant_acquire_keeps_the_holds_token() {
    let server = RedisServer::start();
    let key = unique_key("fencereenter");
    let mut a = fenced(&server, &key, "127.0.0.1");
    assert!(a.acquire(Duration::ZERO).unwrap());
    let fence = a.fencing_token();
    assert!(a.acquire(Duration::ZERO).unwrap());
    assert_eq!(a.fencing_token(), fence);
    assert!(a.release().unwrap());
    assert!(a.release().unwrap());
}

#[test]
fn a_waiter_gets_a_greater_token() {
    let server = RedisServer::start();
    let key = unique_key("fencehandoff");
    let mut holder = fenced(&server, &key, "127.0.0.1");
    assert!(holder.acquire(Duration::ZERO).unwrap());
    let first = holder.fencing_token().unwrap();
    let (port, k) = (server.port, key.clone());
    let waiter = std::thread::spawn(move || {
        let mut options = LockOptions::default();
        options.set("fencing", OptionValue::Bool(true)).unwrap();
        let url = format!("redis://localhost:{port}");
        let mut l = Lock::new(k, 5.0, &[url], options).unwrap();
        assert!(l.acquire(Duration::from_secs(5)).unwrap());
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
    let fence = waiter.join().unwrap().unwrap();
    assert!(fence > first, "{fence} after {first}");
}

/// A claim of a hand-over sent as a replay (the waiter's connection
/// dropped under its wait, and its next step went again on a new one)
/// takes the next fencing token, as the first claim would have: a replay
/// keeps the token of its own first try only when no hand-over gave it
/// the lock (with the holder's token, two holders would share one).
#[test]
fn a_replayed_claim_of_a_handoff_takes_a_new_token() {
    let server = RedisServer::start();
    let key = unique_key("fencereplay");
    let lock_keys = keys::LockKeys::new(key.clone(), b"~~fence".to_vec());
    let mut con = server.client();
    // The holder: its lock and its fencing token (7) in the hold's key.
    let _: () = redis::cmd("SET")
        .arg(&key)
        .arg("holder")
        .arg("PX")
        .arg(10_000)
        .query(&mut con)
        .unwrap();
    let _: () = redis::cmd("SET")
        .arg(&lock_keys.fence)
        .arg(7)
        .arg("PX")
        .arg(10_000)
        .query(&mut con)
        .unwrap();
    let w = lock_calls::Waiter {
        token: b"w1",
        nonce: None,
        ttl_ms: 5_000,
        alive_ms: 5_000,
        fencing: true,
        arrival: 1,
    };
    let step = |con: &mut redis::Connection, attempt| {
        lock_calls::wait_step(&lock_keys, &w, true, false, attempt)
            .query(con)
            .unwrap()
    };
    assert!(matches!(
        step(&mut con, Attempt::First),
        Step::Waiting { .. }
    ));
    assert!(release_as(
        &server,
        &key,
        b"holder",
        lock_calls::Successor::HandOver
    ));
    let Step::Won {
        fence: Some(handed),
        ..
    } = step(&mut con, Attempt::Replay)
    else {
        panic!("the replay claims the handed lock with a fencing token");
    };
    assert_ne!(handed, 7, "the holder's token, handed on");
    assert_eq!(handed, counter(&server), "taken from the server's counter");
    // A replay of that claim (its answer lost) keeps the token it took.
    let Step::Won {
        fence: Some(again), ..
    } = step(&mut con, Attempt::Replay)
    else {
        panic!("a second replay finds the lock its own");
    };
    assert_eq!(again, handed);
}

/// The fencing token of a hand-over is taken when the waiter claims the
/// lock, not sent in the wake-up: a waiter whose wake-up is lost (its BLPOP
/// popped it and the reply never arrived) still gets one when its next
/// step claims the lock.
#[test]
fn a_handoff_with_a_lost_wake_up_still_reports_the_token() {
    let server = RedisServer::start();
    let key = unique_key("fencelost");
    let _: () = redis::cmd("SET")
        .arg(&key)
        .arg("holder")
        .arg("PX")
        .arg(10_000)
        .query(&mut server.client())
        .unwrap();
    let w = lock_calls::Waiter {
        token: b"w1",
        nonce: None,
        ttl_ms: 5_000,
        alive_ms: 5_000,
        fencing: true,
        arrival: 1,
    };
    let mut con = server.client();
    let lock_keys = keys::LockKeys::new(key.clone(), b"~~fence".to_vec());
    let step = |con: &mut redis::Connection, starving| {
        lock_calls::wait_step(&lock_keys, &w, starving, false, Attempt::First)
            .query(con)
            .unwrap()
    };
    assert!(matches!(step(&mut con, false), Step::Waiting { .. }));
    // Starving: the next release hands the lock over.
    assert!(matches!(step(&mut con, true), Step::Waiting { .. }));
    assert!(release_as(
        &server,
        &key,
        b"holder",
        lock_calls::Successor::HandOver
    ));
    let before = counter(&server);
    let _: () = redis::cmd("DEL")
        .arg(lock_keys.wake(b"w1"))
        .query(&mut con)
        .unwrap();
    let Step::Won {
        fence: Some(handed),
        ..
    } = step(&mut con, false)
    else {
        panic!("the claim takes the handed lock with a fencing token");
    };
    assert!(handed > before, "{handed} after {before}");
    assert_eq!(handed, counter(&server), "taken from the server's counter");
    assert!(release_as(
        &server,
        &key,
        b"w1",
        lock_calls::Successor::HandOver
    ));
    // And through a Lock: the next token is greater.
    let mut next = fenced(&server, &key, "127.0.0.1");
    assert!(next.acquire(Duration::ZERO).unwrap());
    assert!(next.fencing_token().unwrap() > handed);
    assert!(next.release().unwrap());
}

#[test]
fn without_the_option_no_token_is_handed_out() {
    let server = RedisServer::start();
    let key = unique_key("nofence");
    let mut a = common::lock(&server, &key, 5.0);
    assert!(a.acquire(Duration::ZERO).unwrap());
    assert_eq!(a.fencing_token(), None);
    assert!(a.release().unwrap());
    let exists: i64 = redis::cmd("EXISTS")
        .arg(keys::fence_key(&key))
        .arg("~~fence")
        .query(&mut server.client())
        .unwrap();
    assert_eq!(exists, 0);
}

/// A counter lost with a restart of a server without persistence starts
/// again from the client's clock: above every token given before.
#[test]
fn a_lost_counter_starts_again_above_earlier_tokens() {
    let server = RedisServer::start();
    let key = unique_key("fencerestart");
    let mut a = fenced(&server, &key, "127.0.0.1");
    assert!(a.acquire(Duration::ZERO).unwrap());
    let before = a.fencing_token().unwrap();
    assert!(a.release().unwrap());
    let _: () = server.cmd(&["FLUSHALL"]);
    assert!(a.acquire(Duration::ZERO).unwrap());
    assert!(a.fencing_token().unwrap() > before);
    assert!(a.release().unwrap());
}

/// The hold's fencing token (`K~~f`) and its PTTL, read on the server.
fn hold_fence(server: &RedisServer, key: &[u8]) -> (Option<i64>, i64) {
    let fence_key = keys::fence_key(key);
    let mut conn = server.client();
    let fence: Option<i64> = redis::cmd("GET").arg(&fence_key).query(&mut conn).unwrap();
    let pttl: i64 = redis::cmd("PTTL").arg(&fence_key).query(&mut conn).unwrap();
    (fence, pttl)
}

/// `K~~f` follows the lease: a fenced hold refreshed past its first ttl
/// still has its fencing token in Redis (where `inspect()`, a replayed
/// acquire and a waiter's claim read it), with the refreshed lease.
#[test]
fn a_refreshed_hold_keeps_its_fence_key() {
    let server = RedisServer::start();
    let key = unique_key("fencerefresh");
    let mut options = LockOptions::default();
    options.set("fencing", OptionValue::Bool(true)).unwrap();
    let mut a = Lock::new(key.clone(), 0.4, &[server.url()], options).unwrap();
    assert!(a.acquire(Duration::ZERO).unwrap());
    let fence = a.fencing_token().unwrap();
    // Refreshed every 0.2 s for 1.2 s: three times the first lease.
    let until = Instant::now() + Duration::from_millis(1200);
    while Instant::now() < until {
        std::thread::sleep(Duration::from_millis(200));
        assert!(a.refresh(None).unwrap());
        let (held, pttl) = hold_fence(&server, &key);
        assert_eq!(held, Some(fence), "K~~f lost while the hold goes on");
        assert!(pttl > 300 && pttl <= 400, "K~~f's lease: {pttl} ms");
    }
    // A longer refresh takes K~~f along too.
    assert!(a.refresh(Some(5.0)).unwrap());
    let (held, pttl) = hold_fence(&server, &key);
    assert_eq!(held, Some(fence));
    assert!(pttl > 4000, "{pttl}");
    assert_eq!(a.inspect().unwrap().fence, Some(fence));
    assert!(a.release().unwrap());
    assert_eq!(hold_fence(&server, &key).0, None, "released with the hold");
}

/// The same with `auto_renew`: the renewal thread extends `K~~f` with the
/// lock key, in the same round trip.
#[test]
fn an_auto_renewed_hold_keeps_its_fence_key() {
    let server = RedisServer::start();
    let key = unique_key("fencerenew");
    let mut options = LockOptions::default();
    options.set("fencing", OptionValue::Bool(true)).unwrap();
    options.set("auto_renew", OptionValue::Bool(true)).unwrap();
    let mut a = Lock::new(key.clone(), 0.6, &[server.url()], options).unwrap();
    assert!(a.acquire(Duration::ZERO).unwrap());
    let fence = a.fencing_token().unwrap();
    let until = Instant::now() + Duration::from_millis(1800);
    while Instant::now() < until {
        std::thread::sleep(Duration::from_millis(100));
        let (held, pttl) = hold_fence(&server, &key);
        assert_eq!(held, Some(fence), "K~~f lost while the hold is renewed");
        assert!(pttl > 0, "{pttl}");
    }
    assert!(a.is_acquired().unwrap());
    assert_eq!(a.inspect().unwrap().fence, Some(fence));
    assert!(a.release().unwrap());
    assert_eq!(hold_fence(&server, &key).0, None);
}

/// A reentrant acquire that makes the lease longer takes `K~~f` along.
#[test]
fn a_longer_reentrant_acquire_keeps_the_fence_key() {
    let server = RedisServer::start();
    let key = unique_key("fencereenterlong");
    let fenced_for = |ttl: f64| {
        let mut options = LockOptions::default();
        options.set("fencing", OptionValue::Bool(true)).unwrap();
        Lock::new(key.clone(), ttl, &[server.url()], options).unwrap()
    };
    let mut a = fenced_for(0.3);
    let mut b = fenced_for(5.0);
    assert!(a.acquire(Duration::ZERO).unwrap());
    let fence = a.fencing_token().unwrap();
    let since = Instant::now();
    assert!(b.acquire(Duration::ZERO).unwrap());
    std::thread::sleep(Duration::from_millis(500));
    let (held, pttl) = hold_fence(&server, &key);
    assert_eq!(held, Some(fence), "K~~f ended before the lease");
    // It ends with the 5 s lease from b's acquire, however busy the
    // machine was meanwhile.
    let ends = pttl + since.elapsed().as_millis() as i64;
    assert!(ends > 4_900, "K~~f ends {ends} ms after b's acquire");
    assert!(b.release().unwrap());
    assert!(a.release().unwrap());
    assert_eq!(hold_fence(&server, &key).0, None);
}
