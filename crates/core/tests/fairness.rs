//! Eventual fairness (option `starve_after`): a queued writer lets a free
//! lock go to whoever asks first (barging) until it has waited
//! `starve_after`: a release neither hands it the lock nor wakes it (no
//! process is woken per section), and it steps by itself when it starves
//! (or the holder's lease ends); from then on a release hands it the lock
//! in arrival order, even past waiters that still barge. `starve_after` 0
//! (the default) hands over from the first step (strict FIFO).
//!
//! The "other process" is a lock on `localhost` instead of `127.0.0.1`:
//! another keyspace as far as this process's hold table can tell.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::proxy::Proxy;
use common::{RedisServer, lock, queue_len, unique_key, wait_until};
use redislock_core::{Lock, LockOptions, OptionValue};

fn starving_after(seconds: f64) -> LockOptions {
    let mut options = LockOptions::default();
    options
        .set("starve_after", OptionValue::Number(seconds))
        .unwrap();
    options
}

/// A waiter (another process) of up to 5 s on `url` with `options`:
/// whether it got the lock, after how long, and its token. It keeps the
/// lock 200 ms (a newcomer that asks at once finds it held).
fn spawn_waiter(
    url: String,
    key: &[u8],
    options: LockOptions,
) -> std::thread::JoinHandle<(bool, Duration, Option<Vec<u8>>)> {
    let key = key.to_vec();
    std::thread::spawn(move || {
        let mut l = Lock::new(key, 5.0, &[url], options).unwrap();
        let began = Instant::now();
        let got = l.acquire(Duration::from_secs(5)).unwrap();
        let took = began.elapsed();
        let token = l.token();
        if got {
            std::thread::sleep(Duration::from_millis(200));
            assert!(l.release().unwrap());
        }
        (got, took, token)
    })
}

/// Wake-ups pushed so far (`RPUSH` calls the server ran).
fn wakes(server: &RedisServer) -> u64 {
    common::command_stats(server, "rpush").0
}

/// While the waiter has waited less than `starve_after`, a release frees
/// the lock without waking it, and whoever asks first takes it: here a
/// newcomer. The waiter steps by itself once it starves and gets the lock
/// then. With `starve_after` 0 the release hands the lock to the waiter
/// and the newcomer finds it held.
#[test]
fn a_free_lock_goes_to_whoever_asks_first_while_nobody_starves() {
    let server = RedisServer::start();
    for (starve_after, barging) in [(0.6, true), (0.0, false)] {
        let key = unique_key("barging");
        let mut holder = lock(&server, &key, 10.0);
        assert!(holder.acquire(Duration::ZERO).unwrap());
        let url = server.url().replace("127.0.0.1", "localhost");
        let waiter = spawn_waiter(url, &key, starving_after(starve_after));
        wait_until("the waiter is queued", Duration::from_secs(5), || {
            queue_len(&server, &key) == 1
        });
        let mut competing = LockOptions::default();
        competing
            .set("reentrant", OptionValue::Bool(false))
            .unwrap();
        let mut newcomer = Lock::new(key.clone(), 10.0, &[server.url()], competing).unwrap();
        let before = wakes(&server);
        assert!(holder.release().unwrap());
        let took = newcomer.acquire(Duration::ZERO).unwrap();
        assert_eq!(took, barging, "starve_after {starve_after}");
        if barging {
            assert_eq!(wakes(&server), before, "a waiter that barges is not woken");
            assert!(newcomer.release().unwrap());
            assert_eq!(wakes(&server), before, "nor by the next release");
            assert!(
                !common::exists(&server, &key),
                "the lock is free, not handed"
            );
        }
        let (got, waited, _) = waiter.join().unwrap();
        assert!(got, "the waiter gets the lock in the end");
        assert!(
            waited < Duration::from_secs_f64(starve_after + 0.8),
            "within its bound: {waited:?}"
        );
    }
}

/// A release hands the lock to the first starving waiter even when
/// waiters that still barge are ahead of it in the queue: they do not keep
/// it waiting (a release that looked at the head only would free the lock
/// and leave the starving waiter blocked until its `retry_delay`).
#[test]
fn a_starving_waiter_behind_barging_ones_is_handed_the_lock() {
    let server = RedisServer::start();
    let key = unique_key("starving-behind");
    let mut holder = lock(&server, &key, 10.0);
    assert!(holder.acquire(Duration::ZERO).unwrap());
    let url = server.url().replace("127.0.0.1", "localhost");
    let mut slow = starving_after(30.0);
    slow.set("retry_delay", OptionValue::Number(1.0)).unwrap();
    let ahead = spawn_waiter(url.clone(), &key, slow);
    wait_until(
        "the barging waiter is queued",
        Duration::from_secs(5),
        || queue_len(&server, &key) == 1,
    );
    let mut strict = starving_after(0.0);
    strict.set("retry_delay", OptionValue::Number(5.0)).unwrap();
    let behind = spawn_waiter(url, &key, strict);
    wait_until(
        "the starving waiter is queued",
        Duration::from_secs(5),
        || queue_len(&server, &key) == 2,
    );
    // Past its first block (100 ms at most): it blocks for its
    // retry_delay now, and only a hand-over ends that early.
    std::thread::sleep(Duration::from_millis(300));
    let released = Instant::now();
    assert!(holder.release().unwrap());
    let (got, _, token) = behind.join().unwrap();
    let took = released.elapsed();
    assert!(got, "the starving waiter got the lock");
    assert!(
        took < Duration::from_secs(1),
        "handed at the release, not after its retry_delay: {took:?}"
    );
    let (got_ahead, _, token_ahead) = ahead.join().unwrap();
    assert!(got_ahead, "the barging waiter gets it later");
    assert_ne!(token, token_ahead);
}

/// Sections back to back (release, take again at once) never keep a
/// waiter out for long: once it has waited `starve_after` it is handed the
/// lock at the next release. The bound checked is generous.
#[test]
fn a_waiter_is_handed_the_lock_once_it_has_waited_starve_after() {
    let server = RedisServer::start();
    for starve_after in [0.2, 0.001] {
        let key = unique_key("starving");
        let stop = Arc::new(AtomicBool::new(false));
        let mut barger = lock(&server, &key, 10.0);
        assert!(barger.acquire(Duration::ZERO).unwrap());
        let barging = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut sections = 0;
                while !stop.load(Ordering::Relaxed) {
                    assert!(barger.release().unwrap());
                    // Straight back in: no pause between sections.
                    while !barger.acquire(Duration::ZERO).unwrap() {
                        if stop.load(Ordering::Relaxed) {
                            return sections;
                        }
                    }
                    sections += 1;
                }
                let _ = barger.release();
                sections
            })
        };
        let url = server.url().replace("127.0.0.1", "localhost");
        let waiter = spawn_waiter(url, &key, starving_after(starve_after));
        let (got, took, _) = waiter.join().unwrap();
        stop.store(true, Ordering::Relaxed);
        let sections = barging.join().unwrap();
        assert!(got, "the waiter got the lock");
        assert!(
            took < Duration::from_secs_f64(starve_after + 0.8),
            "handed over soon after starve_after {starve_after}: {took:?} ({sections} sections)"
        );
    }
}

/// A waiter that starves after a step that said it barges (here its
/// first step: each request of it takes 20 ms in the network, longer
/// than its 1 ms `starve_after`) steps again to say so before it blocks:
/// blocked with a mark that says it barges, no release would hand it the
/// lock or wake it before its `retry_delay` (3 s) ran out.
#[test]
fn a_waiter_that_starves_between_steps_says_so_before_it_blocks() {
    let server = RedisServer::start();
    let proxy = Proxy::start(&server);
    let key = unique_key("starves-between");
    let mut holder = lock(&server, &key, 10.0);
    assert!(holder.acquire(Duration::ZERO).unwrap());
    proxy.delay_requests(Duration::from_millis(20));
    let mut options = starving_after(0.001);
    options
        .set("retry_delay", OptionValue::Number(3.0))
        .unwrap();
    let waiter = spawn_waiter(proxy.url(), &key, options);
    wait_until("the waiter is queued", Duration::from_secs(5), || {
        queue_len(&server, &key) == 1
    });
    std::thread::sleep(Duration::from_millis(300));
    let released = Instant::now();
    assert!(holder.release().unwrap());
    let (got, waited, _) = waiter.join().unwrap();
    assert!(got, "the waiter got the lock");
    // (It keeps the lock 200 ms before the join.)
    assert!(
        released.elapsed() < Duration::from_millis(1700),
        "handed at the release, not after its retry_delay: joined {:?} after it (waited {waited:?})",
        released.elapsed()
    );
}

/// A waiter that departed (killed) while it barged leaves its mark (`0`)
/// for up to its mark's life; the waiters behind it are not delayed by
/// it: a release hands the lock past it to the first starving one.
#[test]
fn a_departed_barging_waiter_delays_nobody() {
    let server = RedisServer::start();
    let key = unique_key("departed-barging");
    let name = String::from_utf8(key.clone()).unwrap();
    let queue = format!("{name}~~q");
    let mut holder = lock(&server, &key, 10.0);
    assert!(holder.acquire(Duration::ZERO).unwrap());
    // What a barging waiter leaves when it is killed: its queue entry,
    // first in line, and its mark, live for 5 s more.
    let _: i64 = server.cmd(&["ZADD", &queue, "1", "gone"]);
    let _: () = server.cmd(&["SET", &format!("{name}~~a~gone"), "10000:0:0", "PX", "5000"]);
    let mut strict = starving_after(0.0);
    strict.set("retry_delay", OptionValue::Number(5.0)).unwrap();
    let url = server.url().replace("127.0.0.1", "localhost");
    let waiter = spawn_waiter(url, &key, strict);
    wait_until("the live waiter is queued", Duration::from_secs(5), || {
        queue_len(&server, &key) == 2
    });
    std::thread::sleep(Duration::from_millis(300));
    let released = Instant::now();
    assert!(holder.release().unwrap());
    let (got, _, _) = waiter.join().unwrap();
    assert!(got, "the live waiter got the lock");
    assert!(
        released.elapsed() < Duration::from_millis(1500),
        "at the release, not after the departed waiter's mark: {:?}",
        released.elapsed()
    );
}

/// `starve_after` is validated like a wait: 0 or more seconds, finite.
#[test]
fn starve_after_takes_zero_or_more_seconds() {
    for bad in [-0.1, f64::NAN, f64::INFINITY] {
        let err = LockOptions::default()
            .set("starve_after", OptionValue::Number(bad))
            .unwrap_err()
            .to_string();
        assert!(err.contains("starve_after"), "{err}");
    }
    for good in [0.0, 0.0005, 1.0] {
        LockOptions::default()
            .set("starve_after", OptionValue::Number(good))
            .unwrap();
    }
}

/// Options of a barging waiter: `starve_after` 30 s, `retry_delay` 5 s (it
/// sleeps until the holder's lease ends), and `extra`.
fn barging_waiter(extra: &[(&str, OptionValue)]) -> LockOptions {
    let mut options = starving_after(30.0);
    options
        .set("retry_delay", OptionValue::Number(5.0))
        .unwrap();
    for (name, value) in extra {
        options.set(name, value.clone()).unwrap();
    }
    options
}

/// A barging waiter's step after its sleep counts a win from that step's
/// send, not from before the wait. W (ttl 1 s) waits 1.3 s, longer than
/// its ttl, for the holder's lease to end, and takes the lock in its one
/// step, with its whole lease; counted from before the wait, the win
/// would look late and be given back (an abandon and a second step).
#[test]
fn a_barging_win_after_a_long_wait_counts_from_its_step() {
    let server = RedisServer::start();
    let key = unique_key("barging-long-wait");
    // Never released: its lease ends after 1.3 s.
    let mut holder = lock(&server, &key, 1.3);
    assert!(holder.acquire(Duration::ZERO).unwrap());
    let (url, k) = (server.url().replace("127.0.0.1", "localhost"), key.clone());
    let waiter = std::thread::spawn(move || {
        let mut w = Lock::new(k, 1.0, &[url], barging_waiter(&[])).unwrap();
        let got = w.acquire(Duration::from_secs(4)).unwrap();
        (got, w)
    });
    wait_until("the waiter is queued", Duration::from_secs(5), || {
        queue_len(&server, &key) == 1
    });
    let before = common::command_stats(&server, "evalsha").0;
    let (got, mut w) = waiter.join().unwrap();
    let scripts = common::command_stats(&server, "evalsha").0 - before;
    let left = w.remaining_ttl().unwrap();
    assert!(got, "the waiter took the lock");
    assert!(left.is_some_and(|l| l >= 0.5), "with its lease: {left:?}");
    assert_eq!(scripts, 1, "the waiter's one step, nothing given back");
    assert!(w.release().unwrap());
    drop(holder);
}

/// A barging waiter whose step after its sleep took the lock, but whose
/// reply comes after the lease that step set, never counts that win: a
/// competitor C gets the lock when W's lease ends, and W's acquire does
/// not return true while C holds it (the rule of pause_tolerance.rs's
/// late top-ups, for the step a barging waiter sends on its own).
#[test]
fn a_barging_win_whose_reply_comes_late_never_counts() {
    a_late_barging_win_never_counts(3.0);
}

/// The same with a `read_timeout` (0.5 s) that ends W's wait for that
/// reply: unanswered, the win is given back, never believed.
#[test]
fn an_unanswered_barging_win_never_counts() {
    a_late_barging_win_never_counts(0.5);
}

fn a_late_barging_win_never_counts(read_timeout: f64) {
    use redislock_core::testing::protocol::scripts::WAIT;
    let server = RedisServer::start();
    let proxy = Proxy::start(&server);
    let key = unique_key("barging-late-reply");
    // Never released: its lease ends after 0.6 s, and W's step then takes
    // the lock.
    let mut holder = lock(&server, &key, 0.6);
    assert!(holder.acquire(Duration::ZERO).unwrap());
    let held = holder.token().unwrap();
    let began = Instant::now();
    let (url, k) = (proxy.url(), key.clone());
    let waiter = std::thread::spawn(move || {
        let options = barging_waiter(&[("read_timeout", OptionValue::Number(read_timeout))]);
        let mut w = Lock::new(k, 1.0, &[url], options).unwrap();
        let got = w.acquire(Duration::from_secs(3));
        (got, began.elapsed(), w)
    });
    wait_until("the waiter is queued", Duration::from_secs(5), || {
        queue_len(&server, &key) == 1
    });
    // The reply to W's next step (wait.lua, after its sleep) is held
    // 1.5 s: past the 1 s lease that step sets.
    proxy.hold_reply_to(WAIT.hash().as_bytes(), Duration::from_millis(1500));
    wait_until("W's step took the lock", Duration::from_secs(3), || {
        common::get(&server, &key).is_some_and(|t| t != held)
    });
    let mut competing = LockOptions::default();
    competing
        .set("reentrant", OptionValue::Bool(false))
        .unwrap();
    let mut c = Lock::new(key.clone(), 10.0, &[server.url()], competing).unwrap();
    let c_got = c.acquire(Duration::from_secs(4)).unwrap();
    let c_at = began.elapsed();
    let (w_got, w_at, mut w) = waiter.join().unwrap();
    assert_eq!(proxy.holds().len(), 1, "W's step reply was held back");
    assert!(c_got, "C got the lock once W's lease ended");
    if matches!(w_got, Ok(true)) {
        assert!(
            w_at < c_at,
            "W's acquire returned true at {w_at:?}, after C got the lock at {c_at:?}: its only \
             proof a reply read after its lease ended"
        );
    }
    assert!(c.release().unwrap());
    let _ = w.release();
    drop(holder);
}
