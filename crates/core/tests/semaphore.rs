//! `RedisLock\Semaphore` in the core: never more than N holders, a crashed
//! holder's permit back after its lease, a blocked acquire woken by a
//! release (not by polling), FIFO among waiters, the permits check, bounded
//! scripts, Redlock refused and keys on one Cluster slot.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::{RedisServer, semaphore, unique_key};
use redislock_core::testing::protocol::keys;
use redislock_core::testing::protocol::step::{Mode, Step};
use redislock_core::testing::semaphore_calls::{self as calls, SemKeys};
use redislock_core::{LockError, LockOptions, OptionValue, Semaphore};

fn with_retry_delay(server: &RedisServer, name: &[u8], permits: i64, delay: f64) -> Semaphore {
    let mut options = LockOptions::default();
    options
        .set("retry_delay", OptionValue::Number(delay))
        .unwrap();
    Semaphore::new(name.to_vec(), permits, 30.0, &[server.url()], options).unwrap()
}

#[test]
fn never_more_than_n_holders_among_many_threads() {
    const N: i64 = 3;
    let server = Arc::new(RedisServer::start());
    let name = unique_key("sem-max");
    let counter = format!("{}:inside", String::from_utf8_lossy(&name));
    let max = Arc::new(AtomicU64::new(0));
    let acquired = Arc::new(AtomicU64::new(0));
    let threads: Vec<_> = (0..12)
        .map(|_| {
            let (server, name, counter) = (server.clone(), name.clone(), counter.clone());
            let (max, acquired) = (max.clone(), acquired.clone());
            std::thread::spawn(move || {
                let mut s = semaphore(&server, &name, N, 10.0);
                let mut con = server.client();
                for _ in 0..15 {
                    assert!(s.acquire(Duration::from_secs(20)).unwrap());
                    let inside: u64 = redis::cmd("INCR").arg(&counter).query(&mut con).unwrap();
                    max.fetch_max(inside, Ordering::SeqCst);
                    acquired.fetch_add(1, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(2));
                    let _: i64 = redis::cmd("DECR").arg(&counter).query(&mut con).unwrap();
                    assert!(s.release().unwrap());
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(acquired.load(Ordering::SeqCst), 12 * 15);
    let max = max.load(Ordering::SeqCst);
    assert!(max <= N as u64, "{max} holders at once, permits {N}");
    assert_eq!(max, N as u64, "12 threads never filled the {N} permits");
    // Nothing is left behind once every permit is back but the number of
    // permits (the member ~~n of the holders' set), until the last lease
    // set would have ended (+ grace + 1 s).
    let holders = String::from_utf8(SemKeys::new(&name).holders).unwrap();
    let _: () = server.cmd(&["DEL", &counter]);
    let left: Vec<String> = server.cmd(&["KEYS", &format!("{}*", holders)]);
    assert_eq!(left, std::slice::from_ref(&holders));
    let members: Vec<String> = server.cmd(&["ZRANGE", &holders, "0", "-1"]);
    assert_eq!(members, ["~~n"]);
    let pttl: i64 = server.cmd(&["PTTL", &holders]);
    assert!(pttl > 0 && pttl <= 10_000 + 500 + 1_000, "{pttl}");
}

#[test]
fn a_crashed_holders_permit_comes_back_after_its_lease() {
    let server = RedisServer::start();
    let name = unique_key("sem-crash");
    let mut crashed = semaphore(&server, &name, 1, 0.3);
    let started = Instant::now();
    assert!(crashed.acquire(Duration::ZERO).unwrap());
    // The process dies: nothing is released.
    std::mem::forget(crashed);
    let mut other = semaphore(&server, &name, 1, 5.0);
    assert!(!other.acquire(Duration::ZERO).unwrap());
    assert!(other.acquire(Duration::from_secs(5)).unwrap());
    let took = started.elapsed();
    // The lease (0.3 s) plus the clock grace (0.5 s), with slack.
    assert!(took >= Duration::from_millis(750), "{took:?}");
    assert!(took < Duration::from_millis(2_000), "{took:?}");
    assert!(other.release().unwrap());
}

#[test]
fn a_release_wakes_a_blocked_acquire_promptly_without_polling() {
    let server = Arc::new(RedisServer::start());
    let name = unique_key("sem-wake");
    // retry_delay 10 s: only the release can wake the waiter in time.
    let mut holder = with_retry_delay(&server, &name, 1, 10.0);
    assert!(holder.acquire(Duration::ZERO).unwrap());
    let before = server.calls("evalsha") + server.calls("blpop");
    let waiter = {
        let (server, name) = (server.clone(), name.clone());
        std::thread::spawn(move || {
            let mut s = with_retry_delay(&server, &name, 1, 10.0);
            let got = s.acquire(Duration::from_secs(8)).unwrap();
            (got, Instant::now(), s)
        })
    };
    std::thread::sleep(Duration::from_millis(1_500));
    let released_at = Instant::now();
    assert!(holder.release().unwrap());
    let (got, woke_at, mut s) = waiter.join().unwrap();
    assert!(got);
    assert!(
        woke_at > released_at,
        "the waiter got a permit before the release"
    );
    let delay = woke_at - released_at;
    assert!(
        delay < Duration::from_millis(200),
        "woken {delay:?} after the release"
    );
    // The waiter's try, its step, one BLPOP, its winning step; the release.
    let commands = server.calls("evalsha") + server.calls("blpop") - before;
    assert!(commands <= 6, "{commands} commands for one 1.5 s wait");
    assert!(s.release().unwrap());
}

#[test]
fn waiters_get_permits_in_arrival_order() {
    let server = Arc::new(RedisServer::start());
    let name = unique_key("sem-fifo");
    let mut holder = with_retry_delay(&server, &name, 1, 10.0);
    assert!(holder.acquire(Duration::ZERO).unwrap());
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let waiters: Vec<_> = (0..4)
        .map(|i| {
            let (server, name, order) = (server.clone(), name.clone(), order.clone());
            let w = std::thread::spawn(move || {
                let mut s = with_retry_delay(&server, &name, 1, 10.0);
                assert!(s.acquire(Duration::from_secs(10)).unwrap());
                order.lock().unwrap().push(i);
                std::thread::sleep(Duration::from_millis(20));
                assert!(s.release().unwrap());
            });
            // Each joins the queue before the next one starts.
            std::thread::sleep(Duration::from_millis(150));
            w
        })
        .collect();
    assert!(holder.release().unwrap());
    for w in waiters {
        w.join().unwrap();
    }
    assert_eq!(*order.lock().unwrap(), vec![0, 1, 2, 3]);
}

#[test]
fn callers_that_disagree_about_permits_get_an_error() {
    let server = RedisServer::start();
    let name = unique_key("sem-permits");
    let mut three = semaphore(&server, &name, 3, 5.0);
    assert!(three.acquire(Duration::ZERO).unwrap());
    let mut five = semaphore(&server, &name, 5, 5.0);
    for wait in [Duration::ZERO, Duration::from_millis(300)] {
        match five.acquire(wait) {
            Err(LockError::Unsupported(msg)) => {
                assert!(msg.contains("has 3 permits in Redis"), "{msg}");
                assert!(msg.contains("built with 5"), "{msg}");
            }
            other => panic!("expected the permits error, got {other:?}"),
        }
    }
    // The caller that agrees still gets its permits.
    assert!(
        semaphore(&server, &name, 3, 5.0)
            .acquire(Duration::ZERO)
            .unwrap()
    );
    assert!(three.release().unwrap());
}

#[test]
fn refresh_is_acquired_and_remaining_ttl_follow_the_lease() {
    let server = RedisServer::start();
    let name = unique_key("sem-lease");
    let mut s = semaphore(&server, &name, 2, 0.4);
    assert!(!s.is_acquired().unwrap());
    assert_eq!(s.remaining_ttl().unwrap(), None);
    assert!(!s.refresh(None).unwrap());
    assert!(s.acquire(Duration::ZERO).unwrap());
    assert!(s.is_acquired().unwrap());
    let left = s.remaining_ttl().unwrap().unwrap();
    assert!(left > 0.2 && left <= 0.4, "{left}");
    assert!(s.refresh(Some(5.0)).unwrap());
    let left = s.remaining_ttl().unwrap().unwrap();
    assert!(left > 4.5 && left <= 5.0, "{left}");
    // A second acquire on one object is refused, not a second permit.
    assert!(matches!(
        s.acquire(Duration::ZERO),
        Err(LockError::Unsupported(_))
    ));
    assert!(s.release().unwrap());
    assert!(!s.release().unwrap());
    // A lease that ran out is not ours any more.
    let mut short = semaphore(&server, &name, 2, 0.1);
    assert!(short.acquire(Duration::ZERO).unwrap());
    std::thread::sleep(Duration::from_millis(150));
    assert!(!short.is_acquired().unwrap());
    assert!(!short.refresh(None).unwrap());
}

#[test]
fn scripts_drop_a_bounded_number_of_dead_waiters_and_holders() {
    const DEAD: usize = 100_000;
    let server = RedisServer::start();
    let name = unique_key("sem-dead");
    let k = SemKeys::new(&name);
    let (holders, queue) = (
        String::from_utf8(k.holders.clone()).unwrap(),
        String::from_utf8(k.queue.clone()).unwrap(),
    );
    let mut con = server.client();
    // 100,000 dead waiters (no marks) and 100,000 holders whose lease
    // ended long ago (score 1 ms after the epoch).
    for batch in 0..DEAD / 10_000 {
        let mut q = redis::cmd("ZADD");
        q.arg(&queue);
        let mut h = redis::cmd("ZADD");
        h.arg(&holders);
        for i in batch * 10_000..(batch + 1) * 10_000 {
            q.arg(i).arg(format!("dead-{i}"));
            h.arg(1).arg(format!("gone-{i}"));
        }
        let _: i64 = q.query(&mut con).unwrap();
        let _: i64 = h.query(&mut con).unwrap();
    }
    let _: () = server.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "100000"]);
    let _: () = server.cmd(&["SLOWLOG", "RESET"]);
    let card = |key: &str| server.cmd::<usize>(&["ZCARD", key]);
    let mut s = semaphore(&server, &name, 2, 5.0);
    let _: () = server.cmd(&["CONFIG", "RESETSTAT"]);
    // The try hands the free permits to the queue first: every waiter it
    // looks at departed, 64 a call (each call also drops at most 8 ended
    // holders), so it calls again until none is left and takes one itself.
    assert!(s.acquire(Duration::ZERO).unwrap());
    let calls = server.calls("evalsha") as usize;
    assert_eq!(card(&queue), 0, "every departed waiter dropped");
    assert!(calls <= DEAD / 64 + 3, "{calls} calls");
    assert!(
        card(&holders) + 8 * calls > DEAD,
        "dropped more than 8 holders a call"
    );
    let h = card(&holders);
    assert!(s.release().unwrap());
    assert!(card(&holders) >= h - 1 - 8);
    let slow: Vec<redis::Value> = server.cmd(&["SLOWLOG", "GET"]);
    assert!(slow.is_empty(), "{slow:?}");
}

/// Holders that died without a release leave their ended leases in `S~~s`;
/// a semaphore that is never full never takes the path that drops them
/// with the waiters, so its uncontended acquires drop them (one in 16, up
/// to 8 each): they do not pile up.
#[test]
fn ended_leases_do_not_pile_up_while_the_semaphore_is_never_full() {
    const DEAD: usize = 100;
    let server = RedisServer::start();
    let name = unique_key("sem-pile");
    let holders = String::from_utf8(SemKeys::new(&name).holders).unwrap();
    let mut con = server.client();
    let mut s = semaphore(&server, &name, 5, 5.0);
    assert!(s.acquire(Duration::ZERO).unwrap());
    let mut add = redis::cmd("ZADD");
    add.arg(&holders);
    for i in 0..DEAD {
        add.arg(1).arg(format!("gone-{i}"));
    }
    let _: i64 = add.query(&mut con).unwrap();
    assert!(s.release().unwrap());
    // 1,000 cycles: about 62 acquires drop up to 8 each (13 suffice).
    for _ in 0..1_000 {
        assert!(s.acquire(Duration::ZERO).unwrap());
        assert!(s.release().unwrap());
    }
    let left: usize = server.cmd(&["ZCOUNT", &holders, "(0", "+inf"]);
    assert_eq!(left, 0, "{left} ended leases left of {DEAD}");
    let n: Option<f64> = server.cmd(&["ZSCORE", &holders, "~~n"]);
    assert_eq!(n, Some(-5.0), "the number of permits stays");
}

#[test]
fn the_scripts_answer_a_replayed_try_and_a_give_up() {
    let server = RedisServer::start();
    let name = unique_key("sem-replay");
    let k = SemKeys::new(&name);
    let mut con = server.client();
    let ask = calls::Ask {
        permits: 1,
        count: 1,
        ttl_ms: 5_000,
    };
    let try_once =
        |token: &[u8], mode, replay| calls::acquire(&k, token, ask, mode, 1_500, 1, replay, false);
    let q = |call: redislock_core::testing::protocol::call::Call<Step>,
             con: &mut redis::Connection| { call.query(con).unwrap() };
    assert_eq!(q(try_once(b"a", Mode::Try, false), &mut con), Step::WON);
    // The same try again (its reply was lost): still ours, not a second,
    // with what its lease had left.
    assert!(
        matches!(q(try_once(b"a", Mode::Try, true), &mut con), Step::Won { left_ms: Some(ms), .. } if ms > 4_000)
    );
    assert_eq!(
        server.cmd::<usize>(&[
            "ZCOUNT",
            std::str::from_utf8(&k.holders).unwrap(),
            "(0",
            "+inf"
        ]),
        1
    );
    assert!(
        matches!(q(try_once(b"b", Mode::Wait, false), &mut con), Step::Waiting { hint_ms: Some(ms) } if ms > 4_000)
    );
    assert_eq!(
        q(try_once(b"b", Mode::GiveUp, false), &mut con),
        Step::GaveUp
    );
    assert_eq!(
        server.cmd::<usize>(&["EXISTS", std::str::from_utf8(&k.queue).unwrap()]),
        0
    );
}

#[test]
fn redlock_and_bad_arguments_are_refused_before_anything_is_sent() {
    let urls = [
        "redis://127.0.0.1:1".to_owned(),
        "redis://127.0.0.1:2".to_owned(),
    ];
    match Semaphore::new(b"x".to_vec(), 2, 5.0, &urls, LockOptions::default()) {
        Err(LockError::Unsupported(msg)) => assert!(msg.contains("Redlock"), "{msg}"),
        other => panic!("{other:?}"),
    }
    let one = ["redis://127.0.0.1:1".to_owned()];
    let invalid = |name: &[u8], permits, options: LockOptions| match Semaphore::new(
        name.to_vec(),
        permits,
        5.0,
        &one,
        options,
    ) {
        Err(LockError::InvalidArgument { param, .. }) => param,
        other => panic!("{other:?}"),
    };
    assert_eq!(invalid(b"", 1, LockOptions::default()), "name");
    assert_eq!(invalid(b"a~~b", 1, LockOptions::default()), "name");
    assert_eq!(invalid(b"a", 0, LockOptions::default()), "permits");
    assert_eq!(invalid(b"a", 1_000_001, LockOptions::default()), "permits");
    let mut interrupt = LockOptions::default();
    interrupt
        .set("auto_renew", OptionValue::Bool(true))
        .unwrap();
    interrupt
        .set("on_lost", OptionValue::Text(b"interrupt".to_vec()))
        .unwrap();
    assert_eq!(invalid(b"a", 1, interrupt), "option \"on_lost\"");
}

#[test]
fn cluster_keys_of_one_semaphore_share_a_slot() {
    let cluster = common::cluster::RedisCluster::start(3, 0);
    let mut options = LockOptions::default();
    options.set("cluster", OptionValue::Bool(true)).unwrap();
    let names: Vec<Vec<u8>> = (0..6).map(|i| unique_key(&format!("sem-cl{i}"))).collect();
    for name in &names {
        let mut a =
            Semaphore::new(name.clone(), 1, 5.0, &[cluster.seed()], options.clone()).unwrap();
        let mut b =
            Semaphore::new(name.clone(), 1, 5.0, &[cluster.seed()], options.clone()).unwrap();
        assert!(a.acquire(Duration::ZERO).unwrap());
        let started = Instant::now();
        let waiter = std::thread::spawn(move || b.acquire(Duration::from_secs(5)).unwrap());
        std::thread::sleep(Duration::from_millis(100));
        assert!(a.release().unwrap());
        assert!(waiter.join().unwrap());
        assert!(started.elapsed() < Duration::from_secs(2));
        // The name wrapped in a hash tag: every key in its slot.
        let tagged = [b"{", &name[..], b"}"].concat();
        let k = SemKeys::new(&tagged);
        let wake = k.wake(b"t");
        for key in [&k.holders[..], &k.queue, &wake] {
            assert_eq!(keys::hash_slot(key), keys::hash_slot(name));
        }
    }
}

#[test]
fn a_departed_waiter_delays_the_next_by_at_most_its_marks_life() {
    let server = Arc::new(RedisServer::start());
    let name = unique_key("sem-ghost");
    let k = SemKeys::new(&name);
    let mut holder = semaphore(&server, &name, 1, 30.0);
    assert!(holder.acquire(Duration::ZERO).unwrap());
    // A waiter that joined the queue and died: its mark lives 600 ms.
    let ask = calls::Ask {
        permits: 1,
        count: 1,
        ttl_ms: 5_000,
    };
    let step = calls::acquire(&k, b"ghost", ask, Mode::Wait, 600, 1, false, false);
    assert!(matches!(
        step.query(&mut server.client()).unwrap(),
        Step::Waiting { .. }
    ));
    let live = {
        let (server, name) = (server.clone(), name.clone());
        std::thread::spawn(move || {
            let mut s = with_retry_delay(&server, &name, 1, 0.2);
            let got = s.acquire(Duration::from_secs(10)).unwrap();
            (got, Instant::now(), s)
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    let released = Instant::now();
    // The release hands the permit to the ghost, first in line.
    assert!(holder.release().unwrap());
    let score: Option<f64> =
        server.cmd(&["ZSCORE", std::str::from_utf8(&k.holders).unwrap(), "ghost"]);
    assert!(score.is_some(), "the permit went to the first waiter");
    let wake = format!("{}~~w~ghost", String::from_utf8_lossy(&k.holders));
    let woken: i64 = server.cmd(&["EXISTS", &wake]);
    assert_eq!(woken, 1, "the ghost was woken");
    let (got, at, mut s) = live.join().unwrap();
    assert!(got);
    // The ghost's mark (0.6 s) and the clock grace (0.5 s), then the live
    // waiter's next step (retry_delay 0.2 s).
    let delay = at - released;
    assert!(delay < Duration::from_millis(1_800), "{delay:?}");
    assert!(delay > Duration::from_millis(300), "{delay:?}");
    assert!(s.release().unwrap());
    // The ghost never came to drop its mark and wake-up list (a grant
    // leaves them to the waiter's claim): they expire by themselves, the
    // wake-up a second after the grant's short lease.
    std::thread::sleep(Duration::from_millis(1_700).saturating_sub(released.elapsed()));
    let pattern = format!("{}*ghost*", String::from_utf8_lossy(&k.holders));
    let left: Vec<String> = server.cmd(&["KEYS", &pattern]);
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn a_lost_reply_is_replayed_without_taking_a_second_permit() {
    let server = RedisServer::start();
    let proxy = common::proxy::Proxy::start(&server);
    let name = unique_key("sem-cut");
    let holders = String::from_utf8(SemKeys::new(&name).holders).unwrap();
    let mut s =
        Semaphore::new(name.clone(), 2, 5.0, &[proxy.url()], LockOptions::default()).unwrap();
    assert!(s.acquire(Duration::ZERO).unwrap());
    assert!(s.release().unwrap());

    // The try's reply is cut: replayed on a new connection, the script
    // finds its first try's entry and it stays one permit.
    proxy.cut_mid_reply();
    assert!(s.acquire(Duration::ZERO).unwrap());
    assert_eq!(proxy.cuts(), 1);
    assert_eq!(server.cmd::<usize>(&["ZCOUNT", &holders, "(0", "+inf"]), 1);
    // The release's reply is cut: the replay finds the permit gone, which
    // within the lease means the first try gave it back.
    proxy.cut_mid_reply();
    assert!(s.release().unwrap());
    assert_eq!(proxy.cuts(), 2);
    assert_eq!(server.cmd::<usize>(&["ZCOUNT", &holders, "(0", "+inf"]), 0);
}

/// A semaphore with `auto_renew` (and more options).
fn renewed(
    server: &RedisServer,
    name: &[u8],
    ttl: f64,
    extra: &[(&str, OptionValue)],
) -> Semaphore {
    let mut options = LockOptions::default();
    options.set("auto_renew", OptionValue::Bool(true)).unwrap();
    for (option, value) in extra {
        options.set(option, value.clone()).unwrap();
    }
    Semaphore::new(name.to_vec(), 1, ttl, &[server.url()], options).unwrap()
}

/// The lease end of the one holder in `S~~s` (ms since the Unix epoch),
/// if any.
fn lease_end(server: &RedisServer, name: &[u8]) -> Option<f64> {
    let holders = String::from_utf8(SemKeys::new(name).holders).unwrap();
    // (The member ~~n, scored -N, keeps the number of permits.)
    let ends: Vec<String> = server.cmd(&["ZRANGEBYSCORE", &holders, "(0", "+inf", "WITHSCORES"]);
    ends.get(1).map(|score| score.parse().unwrap())
}

fn now_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as f64
}

/// `auto_renew`: the renewal thread keeps a 0.6 s permit for well over its
/// lease plus the clock grace (a permit left alone comes back after
/// 1.1 s), nobody else gets it meanwhile, and `release()` ends it. (0.3 s
/// leases missed a renewal on a loaded machine beside a second copy.)
#[test]
fn auto_renew_keeps_a_permit_until_its_release() {
    let server = RedisServer::start();
    let name = unique_key("sem-renew");
    let mut holder = renewed(&server, &name, 0.6, &[]);
    let mut other = semaphore(&server, &name, 1, 5.0);
    assert!(holder.acquire(Duration::ZERO).unwrap());
    let until = Instant::now() + Duration::from_millis(1800);
    while Instant::now() < until {
        let end = lease_end(&server, &name).expect("the permit is gone");
        assert!(end > now_ms(), "the lease ran out while renewed");
        assert!(!other.acquire(Duration::ZERO).unwrap());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(holder.is_acquired().unwrap());
    assert!(holder.remaining_ttl().unwrap().is_some_and(|s| s > 0.0));
    assert!(holder.release().unwrap());
    assert!(other.acquire(Duration::ZERO).unwrap());
    assert!(other.release().unwrap());
    // No renewal after the release: nothing is sent for three of the
    // renewal's periods (0.2 s each).
    let after_release = server.calls("evalsha");
    std::thread::sleep(Duration::from_millis(700));
    assert_eq!(
        server.calls("evalsha"),
        after_release,
        "a renewal after the release"
    );
}

/// A permit renewed alongside a lock on the same server: both in one
/// pipelined round trip per renewal round.
#[test]
fn permits_and_locks_are_renewed_in_one_batch() {
    let server = RedisServer::start();
    let name = unique_key("sem-renew-batch");
    let mut permit = renewed(&server, &name, 0.3, &[]);
    let mut options = LockOptions::default();
    options.set("auto_renew", OptionValue::Bool(true)).unwrap();
    let mut lock = redislock_core::Lock::new(
        unique_key("sem-renew-batch-lock"),
        0.3,
        &[server.url()],
        options,
    )
    .unwrap();
    assert!(permit.acquire(Duration::ZERO).unwrap());
    assert!(lock.acquire(Duration::ZERO).unwrap());
    // One connection for the counts: each INFO is one read.
    let mut con = server.client();
    let mut info = |section: &str, field: &str| -> u64 {
        let text: String = redis::cmd("INFO").arg(section).query(&mut con).unwrap();
        text.lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|rest| rest.trim().split(',').next().map(str::to_owned))
            .unwrap_or_default()
            .parse()
            .unwrap_or(0)
    };
    let reads_before = info("stats", "total_reads_processed:");
    let renewals_before = info("commandstats", "cmdstat_evalsha:calls=");
    std::thread::sleep(Duration::from_millis(1000));
    // Reads: the renewal rounds, plus the commandstats and stats here.
    let round_trips = info("stats", "total_reads_processed:") - reads_before - 2;
    let renewals = info("commandstats", "cmdstat_evalsha:calls=") - renewals_before;
    println!("{renewals} renewals in {round_trips} round trips");
    assert!(renewals >= 10, "{renewals}");
    assert!(
        renewals as f64 >= 1.6 * round_trips as f64,
        "{renewals} renewals in {round_trips} round trips: not batched"
    );
    assert!(permit.is_acquired().unwrap(), "permit");
    assert!(lock.is_acquired().unwrap(), "lock");
    assert!(permit.remaining_ttl().unwrap().is_some());
    assert!(lock.remaining_ttl().unwrap().is_some());
    assert!(permit.release().unwrap() && lock.release().unwrap());
}

/// `max_hold` ends a permit's renewal: it is then lost when its lease
/// runs out (`isAcquired()` false, counted in `lost_leases`), and the
/// permit comes back.
#[test]
fn max_hold_ends_a_permits_renewal() {
    let server = RedisServer::start();
    let name = unique_key("sem-max-hold");
    let lost = redislock_core::stats::snapshot(redislock_core::stats::Scope::Process)
        .total()
        .lost_leases;
    let mut holder = renewed(
        &server,
        &name,
        0.3,
        &[("max_hold", OptionValue::Number(0.5))],
    );
    assert!(holder.acquire(Duration::ZERO).unwrap());
    std::thread::sleep(Duration::from_millis(450));
    assert!(holder.is_acquired().unwrap(), "renewed within max_hold");
    std::thread::sleep(Duration::from_millis(600));
    assert!(!holder.is_acquired().unwrap(), "not renewed past max_hold");
    assert!(
        redislock_core::stats::snapshot(redislock_core::stats::Scope::Process)
            .total()
            .lost_leases
            > lost
    );
    let mut other = semaphore(&server, &name, 1, 5.0);
    assert!(other.acquire(Duration::from_secs(2)).unwrap());
    assert!(!holder.release().unwrap());
    assert!(other.release().unwrap());
}

/// A permit taken away behind the holder's back is found lost by the next
/// renewal: `isAcquired()` false without a round trip, `lost_leases`
/// counted, `release()` false.
#[test]
fn a_renewal_finds_a_permit_taken_away() {
    let server = RedisServer::start();
    let name = unique_key("sem-renew-lost");
    let holders = String::from_utf8(SemKeys::new(&name).holders).unwrap();
    let mut holder = renewed(&server, &name, 0.6, &[]);
    assert!(holder.acquire(Duration::ZERO).unwrap());
    let lost = redislock_core::stats::snapshot(redislock_core::stats::Scope::Process)
        .total()
        .lost_leases;
    let _: () = server.cmd(&["DEL", &holders]);
    std::thread::sleep(Duration::from_millis(450));
    let before = server.calls("evalsha");
    assert!(!holder.is_acquired().unwrap());
    assert_eq!(server.calls("evalsha"), before, "no round trip");
    assert!(
        redislock_core::stats::snapshot(redislock_core::stats::Scope::Process)
            .total()
            .lost_leases
            > lost
    );
    assert!(!holder.release().unwrap());
}

/// A waiter that comes for a permit handed to it only after that permit's
/// claim ran out (and the clock grace after it: a paused or slow waiter)
/// must not take it: others counted it ended and one of them may have its
/// permit. An ended holder can still be in the holders' set then, behind
/// more than 8 other ended ones (a call drops at most 8).
#[test]
fn a_handed_permit_claimed_after_it_ended_is_not_taken() {
    let server = RedisServer::start();
    let name = unique_key("sem-late-claim");
    let k = SemKeys::new(&name);
    let holders = String::from_utf8(k.holders.clone()).unwrap();
    let mut con = server.client();
    let mut step = |token: &[u8], ttl_ms, mode| {
        let ask = calls::Ask {
            permits: 1,
            count: 1,
            ttl_ms,
        };
        calls::acquire(&k, token, ask, mode, 300, 1, false, false)
            .query(&mut con)
            .unwrap()
    };
    assert_eq!(step(b"a", 5_000, Mode::Try), Step::WON);
    assert!(matches!(step(b"w", 200, Mode::Wait), Step::Waiting { .. }));
    // a gives its permit back: it is handed to w, for w's 0.2 s lease.
    let released = calls::release(&k, b"a", false, 1)
        .query(&mut server.client())
        .unwrap();
    assert!(released);
    // Eight holders whose leases ended long ago, before w's.
    let mut zadd = redis::cmd("ZADD");
    zadd.arg(&holders);
    for i in 0..8 {
        zadd.arg(1).arg(format!("gone-{i}"));
    }
    let _: i64 = zadd.query(&mut server.client()).unwrap();
    // w sleeps through its claim and the grace.
    std::thread::sleep(Duration::from_millis(200) + calls::GRACE + Duration::from_millis(100));
    // x finds the one permit free: w's ended claim does not count.
    assert_eq!(step(b"x", 5_000, Mode::Try), Step::WON);
    // w wakes at last: the permit is x's now.
    assert!(
        matches!(step(b"w", 200, Mode::Wait), Step::Waiting { .. }),
        "a permit claimed after it ended was taken beside its new holder"
    );
    let live: usize = server.cmd(&["ZCOUNT", &holders, &format!("({}", now_ms() as u64), "+inf"]);
    assert_eq!(live, 1);
}

/// The same for a waiter whose claim of a handed permit is held up in
/// flight: its next step, sent behind its wake-up wait while the permit
/// was not yet handed, reaches Redis after the permit was handed to it and
/// its hand-over's lease ended (others counted it ended and gave it
/// away). The request carries the waiter's clock from before, so the
/// script finds the permit still in force; the script answers how long
/// the permit had left by that clock, and the waiter counts it only if
/// the reply comes within that.
#[test]
fn a_handed_permit_claimed_late_in_flight_is_not_taken() {
    let server = RedisServer::start();
    let proxy = common::proxy::Proxy::start(&server);
    let name = unique_key("sem-late-flight");
    let holders = String::from_utf8(SemKeys::new(&name).holders).unwrap();
    let mut a = semaphore(&server, &name, 1, 30.0);
    assert!(a.acquire(Duration::ZERO).unwrap());
    // w waits through the proxy with a 5 s lease, waking every second: its
    // mark lives 2.5 s, so a permit handed to it is its for at most 2.5 s
    // (and counted for 0.5 s more).
    let waiter = {
        let (url, name) = (proxy.url(), name.clone());
        std::thread::spawn(move || {
            let mut options = LockOptions::default();
            for (option, seconds) in [("retry_delay", 1.0), ("read_timeout", 10.0)] {
                options.set(option, OptionValue::Number(seconds)).unwrap();
            }
            let mut w = Semaphore::new(name, 1, 5.0, &[url], options).unwrap();
            w.acquire(Duration::from_secs(6)).unwrap()
        })
    };
    let blocked = |on: bool| {
        let server = &server;
        move || {
            let info: String = server.cmd(&["INFO", "clients"]);
            info.contains("blocked_clients:0") != on
        }
    };
    assert!(common::poll_until(Duration::from_secs(5), blocked(true)));
    // w sleeps on its wake-up list; once that wait ends, its next request
    // (a wait with the step behind it) reaches Redis 4 s after w sent it.
    proxy.delay_requests(Duration::from_secs(4));
    assert!(common::poll_until(Duration::from_secs(3), blocked(false)));
    std::thread::sleep(Duration::from_millis(20));
    let released = Instant::now();
    assert!(a.release().unwrap());
    // Eight holders whose leases ended long ago, before w's.
    let mut zadd = redis::cmd("ZADD");
    zadd.arg(&holders);
    for i in 0..8 {
        zadd.arg(1).arg(format!("gone-{i}"));
    }
    let _: i64 = zadd.query(&mut server.client()).unwrap();
    // After w's claim and the grace, x finds the permit free.
    std::thread::sleep(Duration::from_millis(3_200).saturating_sub(released.elapsed()));
    let mut x = semaphore(&server, &name, 1, 30.0);
    assert!(
        x.acquire(Duration::ZERO).unwrap(),
        "w's ended claim kept x out"
    );
    std::thread::sleep(Duration::from_millis(4_500).saturating_sub(released.elapsed()));
    proxy.pass();
    assert!(
        !waiter.join().unwrap(),
        "a permit claimed after it ended was taken beside its new holder"
    );
    assert!(x.is_acquired().unwrap());
}
