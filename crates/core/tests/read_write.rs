//! Read holds of a lock (`acquireRead()`) in the core: readers share, a
//! writer excludes them all, a waiting writer keeps new readers out and is
//! woken by the last reader (not by polling), readers queued behind a
//! writer all enter at its release, promotion and demotion, leases (a
//! crashed reader's hold ends, a renewed one lasts), and what read holds
//! refuse.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::{RedisServer, unique_key};
use redislock_core::{Lock, LockError, LockOptions, OptionValue};

/// A lock object of its own (not reentrant: threads of one test process
/// stand for processes).
fn rw(server: &RedisServer, key: &[u8], ttl: f64) -> Lock {
    with(server, key, ttl, &[])
}

fn with(server: &RedisServer, key: &[u8], ttl: f64, set: &[(&str, OptionValue)]) -> Lock {
    let mut options = LockOptions::default();
    options.set("reentrant", OptionValue::Bool(false)).unwrap();
    for (name, value) in set {
        options.set(name, value.clone()).unwrap();
    }
    Lock::new(key.to_vec(), ttl, &[server.url()], options).unwrap()
}

const NOW: Duration = Duration::ZERO;

#[test]
fn readers_share_and_a_writer_excludes_them() {
    let server = RedisServer::start();
    let key = unique_key("rw-share");
    let (mut r1, mut r2, mut w) = (
        rw(&server, &key, 10.0),
        rw(&server, &key, 10.0),
        rw(&server, &key, 10.0),
    );
    assert!(r1.acquire_read(NOW).unwrap());
    assert!(r2.acquire_read(NOW).unwrap());
    assert!(r1.is_acquired().unwrap() && r2.is_acquired().unwrap());
    assert!(
        !w.acquire(NOW).unwrap(),
        "a writer got in beside two readers"
    );
    assert!(w.is_locked().unwrap());
    assert!(r1.release().unwrap());
    assert!(!w.acquire(NOW).unwrap(), "a writer got in beside a reader");
    assert!(r2.release().unwrap());
    assert!(w.acquire(NOW).unwrap());
    let mut r3 = rw(&server, &key, 10.0);
    assert!(
        !r3.acquire_read(NOW).unwrap(),
        "a reader got in beside the writer"
    );
    assert!(w.release().unwrap());
    assert!(r3.acquire_read(NOW).unwrap());
    assert!(r3.release().unwrap());
    assert!(!r3.release().unwrap(), "released twice");
    let left: Vec<String> = server.cmd(&["KEYS", &format!("{}*", String::from_utf8_lossy(&key))]);
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn a_waiting_writer_keeps_new_readers_out_and_is_woken_by_the_last_reader() {
    let server = Arc::new(RedisServer::start());
    let key = unique_key("rw-writer-waits");
    let mut r1 = rw(&server, &key, 10.0);
    assert!(r1.acquire_read(NOW).unwrap());
    // retry_delay 5 s: a writer that polled would come 5 s late.
    let writer = {
        let (server, key) = (server.clone(), key.clone());
        std::thread::spawn(move || {
            let mut w = with(
                &server,
                &key,
                10.0,
                &[("retry_delay", OptionValue::Number(5.0))],
            );
            assert!(w.acquire(Duration::from_secs(8)).unwrap());
            let got = Instant::now();
            std::thread::sleep(Duration::from_millis(300));
            assert!(w.release().unwrap());
            got
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    let mut r2 = rw(&server, &key, 10.0);
    assert!(
        !r2.acquire_read(NOW).unwrap(),
        "a new reader got in while a writer waited"
    );
    let released = Instant::now();
    assert!(r1.release().unwrap());
    let got = writer.join().unwrap();
    let late = got.saturating_duration_since(released);
    assert!(
        late < Duration::from_secs(2),
        "the writer came {late:?} after the last reader left"
    );
    // The writer is gone: the reader waits for its release and gets in.
    assert!(r2.acquire_read(Duration::from_secs(5)).unwrap());
    assert!(r2.release().unwrap());
}

#[test]
fn readers_queued_behind_a_writer_all_enter_at_its_release() {
    const READERS: u64 = 4;
    let server = Arc::new(RedisServer::start());
    let key = unique_key("rw-batch");
    let counter = format!("{}:inside", String::from_utf8_lossy(&key));
    let mut w = rw(&server, &key, 10.0);
    assert!(w.acquire(NOW).unwrap());
    let max = Arc::new(AtomicU64::new(0));
    let readers: Vec<_> = (0..READERS)
        .map(|_| {
            let (server, key, counter, max) =
                (server.clone(), key.clone(), counter.clone(), max.clone());
            std::thread::spawn(move || {
                let mut r = with(
                    &server,
                    &key,
                    10.0,
                    &[("retry_delay", OptionValue::Number(5.0))],
                );
                assert!(r.acquire_read(Duration::from_secs(8)).unwrap());
                let got = Instant::now();
                let mut con = server.client();
                let inside: u64 = redis::cmd("INCR").arg(&counter).query(&mut con).unwrap();
                max.fetch_max(inside, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(400));
                let _: i64 = redis::cmd("DECR").arg(&counter).query(&mut con).unwrap();
                assert!(r.release().unwrap());
                got
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let released = Instant::now();
    assert!(w.release().unwrap());
    for reader in readers {
        let late = reader.join().unwrap().saturating_duration_since(released);
        assert!(
            late < Duration::from_secs(2),
            "a reader came {late:?} after the writer left"
        );
    }
    assert_eq!(
        max.load(Ordering::SeqCst),
        READERS,
        "the readers did not read together"
    );
}

#[test]
fn a_single_reader_promotes_and_a_writer_demotes() {
    let server = RedisServer::start();
    let key = unique_key("rw-promote");
    let mut a = rw(&server, &key, 10.0);
    let mut b = rw(&server, &key, 10.0);
    // Promotion of the only reader: the lock is then a's to write.
    assert!(a.acquire_read(NOW).unwrap());
    assert!(a.acquire(NOW).unwrap());
    let owner: Option<Vec<u8>> = server.cmd(&["GET", &String::from_utf8_lossy(&key)]);
    assert_eq!(owner, a.token(), "the promoted hold is not in the lock key");
    assert!(
        !b.acquire_read(NOW).unwrap(),
        "a reader beside the promoted writer"
    );
    // Demotion: a reads again, and another reader may join.
    assert!(a.acquire_read(NOW).unwrap());
    assert!(a.is_acquired().unwrap());
    assert_eq!(a.token(), None, "a read hold has no token to restore");
    assert!(b.acquire_read(NOW).unwrap());
    // Two readers: no promotion without waiting for the other.
    assert!(!a.acquire(NOW).unwrap());
    assert!(
        a.is_acquired().unwrap(),
        "a failed promotion lost the read hold"
    );
    assert!(b.release().unwrap());
    assert!(a.acquire(NOW).unwrap());
    assert!(a.release().unwrap());
    assert!(!a.is_locked().unwrap());
}

/// Regression: acquire() on an object whose read lease had run out
/// returned false at once (nothing left to promote), even on a free lock
/// and with a wait; it now acquires as an object holding nothing does.
#[test]
fn acquire_after_the_read_lease_ran_out_is_a_plain_acquire() {
    let server = RedisServer::start();
    let key = unique_key("rw-promote-expired");
    let mut a = rw(&server, &key, 0.3);
    assert!(a.acquire_read(NOW).unwrap());
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        a.acquire(NOW).unwrap(),
        "a free lock was refused to an object whose read lease ran out"
    );
    let owner: Option<Vec<u8>> = server.cmd(&["GET", &String::from_utf8_lossy(&key)]);
    assert_eq!(owner, a.token());
    assert!(a.release().unwrap());
    // With a wait: the lock is another writer's until its lease ends.
    assert!(a.acquire_read(NOW).unwrap());
    std::thread::sleep(Duration::from_millis(500));
    let mut w = rw(&server, &key, 0.6);
    assert!(w.acquire(NOW).unwrap());
    let started = Instant::now();
    assert!(
        a.acquire(Duration::from_secs(5)).unwrap(),
        "gave up at once instead of waiting"
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(a.release().unwrap());
}

#[test]
fn a_waiting_promotion_gets_the_lock_when_the_other_readers_leave() {
    let server = Arc::new(RedisServer::start());
    let key = unique_key("rw-promote-wait");
    let mut other = rw(&server, &key, 10.0);
    assert!(other.acquire_read(NOW).unwrap());
    let promoter = {
        let (server, key) = (server.clone(), key.clone());
        std::thread::spawn(move || {
            let mut a = with(
                &server,
                &key,
                10.0,
                &[("retry_delay", OptionValue::Number(5.0))],
            );
            assert!(a.acquire_read(NOW).unwrap());
            assert!(a.acquire(Duration::from_secs(8)).unwrap());
            let got = Instant::now();
            assert!(a.release().unwrap());
            got
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    // The promoter waits as a writer: new readers wait behind it.
    let mut late_reader = rw(&server, &key, 10.0);
    assert!(!late_reader.acquire_read(NOW).unwrap());
    let released = Instant::now();
    assert!(other.release().unwrap());
    let late = promoter.join().unwrap().saturating_duration_since(released);
    assert!(
        late < Duration::from_secs(2),
        "promoted {late:?} after the other reader left"
    );
}

#[test]
fn a_crashed_readers_hold_ends_with_its_lease_and_a_renewed_one_lasts() {
    let server = RedisServer::start();
    let key = unique_key("rw-lease");
    // "Crashed": gone without a release (auto_release off, object dropped).
    let mut gone = with(
        &server,
        &key,
        0.4,
        &[("auto_release", OptionValue::Bool(false))],
    );
    assert!(gone.acquire_read(NOW).unwrap());
    drop(gone);
    let mut w = rw(&server, &key, 10.0);
    let started = Instant::now();
    assert!(w.acquire(Duration::from_secs(5)).unwrap());
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(w.release().unwrap());
    // A lease that ran out is no hold, and its release is no release.
    let mut short = rw(&server, &key, 0.3);
    assert!(short.acquire_read(NOW).unwrap());
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        w.acquire(NOW).unwrap(),
        "an expired reader kept the writer out"
    );
    assert!(!short.is_acquired().unwrap());
    assert!(!short.release().unwrap());
    assert!(w.release().unwrap());
    // auto_renew keeps a reader's lease for as long as it reads.
    let mut renewed = with(
        &server,
        &key,
        0.3,
        &[("auto_renew", OptionValue::Bool(true))],
    );
    assert!(renewed.acquire_read(NOW).unwrap());
    std::thread::sleep(Duration::from_millis(1000));
    assert!(renewed.is_acquired().unwrap());
    assert!(!w.acquire(NOW).unwrap(), "a renewed reader lost its hold");
    assert!(renewed.release().unwrap());
    assert!(w.acquire(NOW).unwrap());
}

#[test]
fn the_lock_lives_no_longer_than_the_longest_live_read_lease() {
    let server = RedisServer::start();
    let key = unique_key("rw-shorten");
    let name = String::from_utf8(key.clone()).unwrap();
    let pttl = || server.cmd::<i64>(&["PTTL", &name]);
    let crashed = [("auto_release", OptionValue::Bool(false))];
    let mut w = rw(&server, &key, 10.0);
    // A 30 s reader leaves while a 1 s reader reads; the short one then
    // crashes (gone without a release): the writer waits for its lease,
    // not for the 30 s one that was given back.
    let mut long = rw(&server, &key, 30.0);
    let mut short = with(&server, &key, 1.0, &crashed);
    assert!(long.acquire_read(NOW).unwrap());
    assert!(short.acquire_read(NOW).unwrap());
    assert!(long.release().unwrap());
    assert!(pttl() <= 1_500, "the lock kept {} ms", pttl());
    drop(short);
    let started = Instant::now();
    assert!(w.acquire(Duration::from_secs(5)).unwrap());
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the writer waited {:?}",
        started.elapsed()
    );
    assert!(w.release().unwrap());
    // A reader whose lease ran out still counts within the clock grace;
    // a reader that comes and goes then must not leave the lock to its
    // own 10 s lease.
    let mut gone = with(&server, &key, 0.3, &crashed);
    assert!(gone.acquire_read(NOW).unwrap());
    drop(gone);
    std::thread::sleep(Duration::from_millis(400));
    let mut r = rw(&server, &key, 10.0);
    assert!(r.acquire_read(NOW).unwrap());
    assert!(r.release().unwrap());
    assert!(pttl() <= 500, "the lock kept {} ms", pttl());
    let started = Instant::now();
    assert!(w.acquire(Duration::from_secs(5)).unwrap());
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the writer waited {:?}",
        started.elapsed()
    );
    assert!(w.release().unwrap());
    // refresh() to a shorter lease shortens the lock with it.
    let mut r = rw(&server, &key, 30.0);
    assert!(r.acquire_read(NOW).unwrap());
    assert!(r.refresh(Some(1.0)).unwrap());
    assert!(pttl() <= 1_500, "the lock kept {} ms", pttl());
    assert!(r.release().unwrap());
}

#[test]
fn read_holds_refuse_what_they_cannot_do() {
    let server = RedisServer::start();
    let key = unique_key("rw-refused");
    let renew = ("auto_renew", OptionValue::Bool(true));
    for (option, value, says) in [
        ("fencing", OptionValue::Bool(true), "fencing"),
        ("owner", OptionValue::Text("w1".into()), "owner"),
        ("on_lost", OptionValue::Text("interrupt".into()), "on_lost"),
    ] {
        let mut lock = with(&server, &key, 10.0, &[renew.clone(), (option, value)]);
        match lock.acquire_read(NOW) {
            Err(LockError::Unsupported(msg)) => assert!(msg.contains(says), "{msg}"),
            other => panic!("{option}: {other:?}"),
        }
    }
    let others = [RedisServer::start(), RedisServer::start()];
    let urls = vec![server.url(), others[0].url(), others[1].url()];
    let mut redlock = Lock::new(key.clone(), 10.0, &urls, LockOptions::default()).unwrap();
    match redlock.acquire_read(NOW) {
        Err(LockError::Unsupported(msg)) => assert!(msg.contains("Redlock"), "{msg}"),
        other => panic!("Redlock: {other:?}"),
    }
    let left: Vec<String> = server.cmd(&["KEYS", "*"]);
    assert!(left.is_empty(), "a refused read hold wrote {left:?}");
}

#[test]
fn force_release_ends_readers_too() {
    let server = RedisServer::start();
    let key = unique_key("rw-force");
    let mut r = rw(&server, &key, 10.0);
    assert!(r.acquire_read(NOW).unwrap());
    let mut admin = rw(&server, &key, 10.0);
    assert!(admin.force_release().unwrap());
    assert!(!r.is_acquired().unwrap());
    let mut w = rw(&server, &key, 10.0);
    assert!(w.acquire(NOW).unwrap());
}

#[test]
fn read_scripts_drop_a_bounded_number_of_dead_waiters_and_readers() {
    const DEAD: usize = 100_000;
    let server = RedisServer::start();
    let key = unique_key("rw-dead");
    let name = String::from_utf8(key.clone()).unwrap();
    let (readers, queue) = (format!("{name}~~r"), format!("{name}~~q"));
    let mut con = server.client();
    // 100,000 dead waiters (no marks) and 100,000 readers whose lease
    // ended long ago (score 1 ms after the epoch).
    for batch in 0..DEAD / 10_000 {
        let mut q = redis::cmd("ZADD");
        q.arg(&queue);
        let mut r = redis::cmd("ZADD");
        r.arg(&readers);
        for i in batch * 10_000..(batch + 1) * 10_000 {
            q.arg(i).arg(format!("dead-{i}"));
            r.arg(1).arg(format!("gone-{i}"));
        }
        let _: i64 = q.query(&mut con).unwrap();
        let _: i64 = r.query(&mut con).unwrap();
    }
    let _: () = server.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "100000"]);
    let _: () = server.cmd(&["SLOWLOG", "RESET"]);
    let card = |key: &str| server.cmd::<usize>(&["ZCARD", key]);
    let (mut a, mut b, mut w) = (
        rw(&server, &key, 5.0),
        rw(&server, &key, 5.0),
        rw(&server, &key, 5.0),
    );
    // Every call looks at 64 waiters and 8 ended readers at most, and is
    // sent again while departed waiters stand in the way of deciding: the
    // first read acquire drops them all, 64 a call.
    let _: () = server.cmd(&["CONFIG", "RESETSTAT"]);
    assert!(a.acquire_read(NOW).unwrap());
    assert!(b.acquire_read(NOW).unwrap());
    assert!(!w.acquire(NOW).unwrap());
    assert!(a.release().unwrap());
    // b is the last live reader among 100,000 dead ones.
    assert!(b.release().unwrap());
    let calls = server.calls("evalsha") as usize;
    assert_eq!(card(&queue), 0, "every departed waiter dropped");
    assert!(calls <= DEAD / 64 + 8, "{calls} calls");
    assert!(
        card(&readers) + 8 * calls > DEAD,
        "dropped more than 8 readers a call"
    );
    assert!(w.acquire(NOW).unwrap(), "dead readers kept the writer out");
    assert!(w.release().unwrap());
    let slow: Vec<redis::Value> = server.cmd(&["SLOWLOG", "GET"]);
    assert!(slow.is_empty(), "{slow:?}");
}

/// A refresh of a read hold that reaches Redis after the hold's lease
/// ended (sent in time, held up in flight: a pause between building the
/// request and sending it, a slow network) must not bring the hold back:
/// the lock key held a writer's token meanwhile, and holds the read mark
/// again only because another reader came. The script cannot tell (the
/// caller's clock in the request is as old as the request, and the mark is
/// the same for every reader), so the caller counts the refresh only when
/// its reply comes before the lease it extends ran out.
#[test]
fn a_read_refresh_that_arrives_after_the_lease_does_not_revive_it() {
    let server = Arc::new(RedisServer::start());
    let proxy = common::proxy::Proxy::start(&server);
    let key = unique_key("rw-late-refresh");
    let late = Duration::from_millis(700);
    let mut options = LockOptions::default();
    options.set("reentrant", OptionValue::Bool(false)).unwrap();
    options
        .set("read_timeout", OptionValue::Number(3.0))
        .unwrap();
    let mut reader = Lock::new(key.clone(), 1.0, &[proxy.url()], options).unwrap();
    assert!(reader.acquire_read(NOW).unwrap());
    let won = Instant::now();
    // 0.85 s into a 1 s lease, the refresh is sent; it reaches Redis 0.7 s
    // later, after the lease, and its reply comes within the 1 s it asks. Meanwhile a writer takes the lock (its key
    // ran out with the lease), gives it back, and another reader comes.
    std::thread::sleep(Duration::from_millis(850).saturating_sub(won.elapsed()));
    let others = {
        let (server, key) = (server.clone(), key.clone());
        std::thread::spawn(move || {
            let fast = [("retry_delay", OptionValue::Number(0.02))];
            let mut writer = with(&server, &key, 10.0, &fast);
            let mut other = rw(&server, &key, 10.0);
            let wrote = writer.acquire(Duration::from_secs(1)).unwrap();
            let released = writer.release().unwrap();
            assert!(other.acquire_read(NOW).unwrap());
            (wrote && released, other)
        })
    };
    proxy.delay_requests(late);
    let refreshed = reader.refresh(None).unwrap();
    proxy.pass();
    let (wrote, _other) = others.join().unwrap();
    assert!(
        wrote,
        "the writer never got the lock after the reader's lease"
    );
    assert!(
        !refreshed,
        "a read hold was refreshed after a writer held the lock"
    );
    assert!(!reader.is_acquired().unwrap());
    assert!(!reader.release().unwrap());
}
