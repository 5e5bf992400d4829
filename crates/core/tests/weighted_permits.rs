//! Weighted permits: `Semaphore::acquire_permits($wait, $count)` takes
//! `count` permits at once, first come, first served as Go's
//! `semaphore.Weighted`: a waiter asking more than is free holds the ones
//! behind it (newcomers too), `release()` gives them all back, `refresh()`
//! and renewal extend them all.

mod common;

use std::time::{Duration, Instant};

use common::{RedisServer, unique_key, wait_until};
use redislock_core::testing::semaphore_calls::SemKeys;
use redislock_core::{LockError, LockOptions, OptionValue, Semaphore};

fn semaphore(server: &RedisServer, name: &[u8], permits: i64) -> Semaphore {
    Semaphore::new(
        name.to_vec(),
        permits,
        10.0,
        &[server.url()],
        LockOptions::default(),
    )
    .unwrap()
}

/// Permits held now, as Redis counts them (live members of `S~~s`).
fn held(server: &RedisServer, name: &[u8]) -> i64 {
    let holders = String::from_utf8(SemKeys::new(name).holders).unwrap();
    server.cmd(&["ZCOUNT", &holders, "(0", "+inf"])
}

fn queued(server: &RedisServer, name: &[u8]) -> i64 {
    let queue = String::from_utf8(SemKeys::new(name).queue).unwrap();
    server.cmd(&["ZCARD", &queue])
}

#[test]
fn a_waiter_asking_more_than_is_free_holds_the_ones_behind_it() {
    let server = RedisServer::start();
    let name = unique_key("weighted-fifo");
    let mut a = semaphore(&server, &name, 3);
    assert!(a.acquire_permits(Duration::ZERO, 2).unwrap());
    assert_eq!(held(&server, &name), 2);
    // B asks for 2 with 1 free: it waits.
    let (url, n) = (server.url(), name.clone());
    let b = std::thread::spawn(move || {
        let mut b = Semaphore::new(n, 3, 10.0, &[url], LockOptions::default()).unwrap();
        let got = b.acquire_permits(Duration::from_secs(5), 2).unwrap();
        (b, got, Instant::now())
    });
    wait_until("B queues", Duration::from_secs(5), || {
        queued(&server, &name) == 1
    });
    // A newcomer asking for the 1 free permit does not pass B.
    let mut c = semaphore(&server, &name, 3);
    assert!(!c.acquire_permits(Duration::ZERO, 1).unwrap());
    // Nor does a newcomer that waits: it queues behind B.
    let (url, n) = (server.url(), name.clone());
    let d = std::thread::spawn(move || {
        let mut d = Semaphore::new(n, 3, 10.0, &[url], LockOptions::default()).unwrap();
        let got = d.acquire_permits(Duration::from_secs(5), 1).unwrap();
        (d, got, Instant::now())
    });
    wait_until("D queues behind B", Duration::from_secs(5), || {
        queued(&server, &name) == 2
    });
    assert_eq!(held(&server, &name), 2, "nobody took the free permit");
    // A gives both back: B gets 2, then D the last one.
    let released = Instant::now();
    assert!(a.release().unwrap());
    let (mut b, got_b, b_at) = b.join().unwrap();
    let (mut d, got_d, d_at) = d.join().unwrap();
    assert!(got_b && got_d);
    assert!(b_at - released < Duration::from_secs(1) && d_at - released < Duration::from_secs(1));
    assert_eq!(held(&server, &name), 3);
    assert!(!c.acquire(Duration::ZERO).unwrap(), "all 3 taken");
    // release() gives all of a holder's permits back.
    assert!(b.release().unwrap());
    assert_eq!(held(&server, &name), 1);
    assert!(c.acquire_permits(Duration::ZERO, 2).unwrap());
    assert!(c.release().unwrap() && d.release().unwrap());
    assert_eq!(held(&server, &name), 0);
}

#[test]
fn refresh_and_renewal_extend_every_permit_of_a_holder() {
    let server = RedisServer::start();
    let name = unique_key("weighted-refresh");
    let holders = String::from_utf8(SemKeys::new(&name).holders).unwrap();
    let mut options = LockOptions::default();
    options.set("auto_renew", OptionValue::Bool(true)).unwrap();
    let mut s = Semaphore::new(name.clone(), 5, 0.6, &[server.url()], options).unwrap();
    assert!(s.acquire_permits(Duration::ZERO, 3).unwrap());
    let scores = || -> Vec<f64> {
        let members: Vec<(String, f64)> =
            server.cmd(&["ZRANGEBYSCORE", &holders, "(0", "+inf", "WITHSCORES"]);
        members.into_iter().map(|(_, score)| score).collect()
    };
    let first = scores();
    assert_eq!(first.len(), 3);
    // Renewed past the first lease (0.6 s + grace), all three together.
    std::thread::sleep(Duration::from_millis(1_300));
    let later = scores();
    assert_eq!(later.len(), 3, "{later:?}");
    assert!(later.iter().all(|&s| s == later[0] && s > first[0]));
    assert!(s.refresh(Some(5.0)).unwrap());
    let refreshed = scores();
    assert!(
        refreshed
            .iter()
            .all(|&s| s == refreshed[0] && s > later[0] + 3_000.0)
    );
    assert!(s.release().unwrap());
    assert!(scores().is_empty());
}

#[test]
fn a_count_outside_the_semaphore_is_refused_before_anything_is_sent() {
    let server = RedisServer::start();
    let name = unique_key("weighted-bad");
    let mut s = semaphore(&server, &name, 3);
    for count in [0, -1, 4] {
        match s.acquire_permits(Duration::ZERO, count) {
            Err(LockError::InvalidArgument {
                param,
                reason: message,
            }) => {
                assert_eq!(param, "count");
                assert!(message.contains("between 1 and 3"), "{message}");
            }
            other => panic!("count {count}: {other:?}"),
        }
    }
    let mut big = semaphore(&server, &name, 1_000_000);
    assert!(matches!(
        big.acquire_permits(Duration::ZERO, 1_001),
        Err(LockError::InvalidArgument { .. })
    ));
    assert_eq!(server.calls("evalsha"), 0, "nothing sent");
}
