//! auto_renew: a background thread keeps auto-renewed leases alive,
//! pipelined per server, marks a lease lost as soon as a renewal finds it
//! gone, and stops at release or after max_hold.

mod common;

use std::time::{Duration, Instant};

use common::{RedisServer, unique_key};
use redislock_core::{Lock, LockOptions, OptionValue};

fn renewed(server: &RedisServer, key: &[u8], ttl: f64, extra: &[(&str, OptionValue)]) -> Lock {
    let mut options = LockOptions::default();
    options.set("auto_renew", OptionValue::Bool(true)).unwrap();
    for (name, value) in extra {
        options.set(name, value.clone()).unwrap();
    }
    Lock::new(key.to_vec(), ttl, &[server.url()], options).unwrap()
}

fn pttl(server: &RedisServer, key: &[u8]) -> i64 {
    redis::cmd("PTTL")
        .arg(key)
        .query(&mut server.client())
        .unwrap()
}

fn stat(server: &RedisServer, name: &str) -> u64 {
    let info: String = server.cmd(&["INFO", "stats"]);
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn a_renewed_lease_outlives_its_ttl_and_stays_exclusive() {
    let server = RedisServer::start();
    let key = unique_key("renew");
    // Renewed every 0.3 s: a busy machine may delay the renewal thread by
    // a few hundred ms without the lease (0.9 s) running out.
    let mut a = renewed(&server, &key, 0.9, &[]);
    assert!(a.acquire(Duration::ZERO).unwrap());
    let until = Instant::now() + Duration::from_millis(2500);
    while Instant::now() < until {
        assert!(pttl(&server, &key) > 0, "the lease ran out while renewed");
        let taken: Option<String> = redis::cmd("SET")
            .arg(&key)
            .arg("intruder")
            .arg("NX")
            .arg("PX")
            .arg(1000)
            .query(&mut server.client())
            .unwrap();
        assert_eq!(taken, None);
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(a.is_acquired().unwrap());
    assert!(a.release().unwrap());
    let n: i64 = server.cmd(&["EXISTS", std::str::from_utf8(&key).unwrap()]);
    assert_eq!(n, 0);
}

#[test]
fn max_hold_ends_renewal() {
    let server = RedisServer::start();
    let key = unique_key("maxhold");
    let mut a = renewed(
        &server,
        &key,
        0.3,
        &[("max_hold", OptionValue::Number(0.5))],
    );
    assert!(a.acquire(Duration::ZERO).unwrap());
    let start = Instant::now();
    while pttl(&server, &key) != -2 {
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "still renewed after max_hold"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let gone_after = start.elapsed();
    // Renewed until max_hold (0.5 s), then the last lease (0.3 s) ran out.
    assert!(gone_after >= Duration::from_millis(500), "{gone_after:?}");
    assert!(gone_after < Duration::from_millis(1200), "{gone_after:?}");
    assert!(!a.is_acquired().unwrap());
    assert!(!a.release().unwrap());
}

#[test]
fn a_lease_deleted_behind_its_back_is_reported_lost() {
    let server = RedisServer::start();
    let key = unique_key("lost");
    let mut a = renewed(&server, &key, 0.6, &[]);
    assert!(a.acquire(Duration::ZERO).unwrap());
    // Load the refresh script, so no EVALSHA fails with NOSCRIPT below.
    assert!(a.refresh(None).unwrap());
    let _: i64 = server.cmd(&["DEL", std::str::from_utf8(&key).unwrap()]);
    let lost_at = Instant::now();
    // Renewals run GET inside their script: top-level GETs are the rest.
    // (One INFO call, so a renewal cannot fall between the two counters.)
    let gets = || {
        let info: String = server.cmd(&["INFO", "commandstats"]);
        let calls = |cmd: &str| -> i64 {
            info.lines()
                .find_map(|l| l.strip_prefix(&format!("cmdstat_{cmd}:calls=")))
                .map_or(0, |rest| rest.split(',').next().unwrap().parse().unwrap())
        };
        calls("get") - calls("evalsha")
    };
    let before = gets();
    let id = a.hold_id().unwrap();
    while a.is_acquired().unwrap() {
        assert!(lost_at.elapsed() < Duration::from_secs(2));
        std::thread::sleep(Duration::from_millis(1));
    }
    let noticed = lost_at.elapsed();
    println!("lease loss noticed after {noticed:?} (ttl 0.6 s, renewal every 0.2 s)");
    assert!(noticed <= Duration::from_millis(300), "{noticed:?}");
    assert_eq!(
        gets(),
        before,
        "isAcquired() asked the renewal thread, not Redis"
    );
    assert!(redislock_core::hold_lost(id));
    assert!(!a.release().unwrap());
}

#[test]
fn release_and_drop_stop_renewal() {
    let server = RedisServer::start();
    let key = unique_key("stop");
    let mut a = renewed(&server, &key, 0.3, &[]);
    assert!(a.acquire(Duration::ZERO).unwrap());
    assert!(a.release().unwrap());
    let before = server.calls("evalsha");
    std::thread::sleep(Duration::from_millis(350));
    assert_eq!(server.calls("evalsha"), before, "no renewal after release");
    {
        let mut b = renewed(&server, &key, 0.3, &[]);
        assert!(b.acquire(Duration::ZERO).unwrap());
    }
    let before = server.calls("evalsha");
    std::thread::sleep(Duration::from_millis(350));
    assert_eq!(
        server.calls("evalsha"),
        before,
        "no renewal after the object is gone"
    );
}

#[test]
fn a_restored_hold_is_renewed_at_once() {
    let server = RedisServer::start();
    let key = unique_key("restorerenew");
    let _: () = redis::cmd("SET")
        .arg(&key)
        .arg("handed-over")
        .arg("PX")
        .arg(200)
        .query(&mut server.client())
        .unwrap();
    let mut a = renewed(&server, &key, 1.0, &[]);
    a.restore(b"handed-over".to_vec()).unwrap();
    std::thread::sleep(Duration::from_millis(400));
    assert!(pttl(&server, &key) > 0, "renewed before its 200 ms ran out");
    assert!(a.is_acquired().unwrap());
    assert!(a.release().unwrap());
}

#[test]
fn a_hundred_holds_are_renewed_in_few_round_trips() {
    let server = RedisServer::start();
    let mut locks: Vec<Lock> = (0..100)
        .map(|i| renewed(&server, &unique_key(&format!("many{i}")), 1.5, &[]))
        .collect();
    for l in &mut locks {
        assert!(l.acquire(Duration::ZERO).unwrap());
    }
    let reads = stat(&server, "total_reads_processed");
    let renewals = server.calls("evalsha");
    std::thread::sleep(Duration::from_secs(2));
    let round_trips = stat(&server, "total_reads_processed") - reads - 1;
    let renewed = server.calls("evalsha") - renewals;
    println!(
        "100 holds, ttl 1.5 s, 2 s: {renewed} renewals in {round_trips} round trips ({:.1} round trips/s)",
        round_trips as f64 / 2.0
    );
    // Each hold is renewed every 0.5 s: ~400 renewals in 2 s, pipelined.
    assert!(renewed >= 300, "{renewed}");
    assert!(
        round_trips <= 40,
        "{round_trips} round trips for {renewed} renewals"
    );
    for l in &mut locks {
        assert!(l.release().unwrap());
    }
}
