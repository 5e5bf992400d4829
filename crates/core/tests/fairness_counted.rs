//! Eventual fairness (option `starve_after`) for a semaphore's permits and
//! a lock's read holds: until it has waited `starve_after`, a waiter is not
//! queued at all; it tries, sleeps in its process and tries again, so a
//! free permit (a free lock) goes to whoever asks first and no release
//! hands it anything or wakes it. Once it starves it joins the queue at its
//! arrival, and from then on releases hand it what it waits for in arrival
//! order. `starve_after` 0 (the default) queues from the first step (strict
//! FIFO), as `semaphore.rs` and `read_write.rs` test.
//!
//! The "other process" is an object on `localhost` instead of `127.0.0.1`:
//! another keyspace as far as this process's hold table can tell.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::{RedisServer, lock, queue_len, unique_key};
use redislock_core::testing::semaphore_calls::SemKeys;
use redislock_core::{Lock, LockOptions, OptionValue, Semaphore};

fn starving_after(seconds: f64) -> LockOptions {
    let mut options = LockOptions::default();
    options
        .set("starve_after", OptionValue::Number(seconds))
        .unwrap();
    options
}

/// A one-permit semaphore `name` on `url`.
fn one_permit(url: &str, name: &[u8], options: LockOptions) -> Semaphore {
    Semaphore::new(name.to_vec(), 1, 10.0, &[url.to_string()], options).unwrap()
}

/// Waiters in the queue of the semaphore `name` (`S~~s~~q`).
fn permit_queue_len(server: &RedisServer, name: &[u8]) -> i64 {
    let queue = SemKeys::new(name).queue;
    server.cmd(&["ZCARD", std::str::from_utf8(&queue).unwrap()])
}

/// Wake-ups pushed so far (`RPUSH` calls the server ran).
fn wakes(server: &RedisServer) -> u64 {
    common::command_stats(server, "rpush").0
}

/// Scripts the server ran so far (`EVALSHA` calls).
fn scripts(server: &RedisServer) -> u64 {
    common::command_stats(server, "evalsha").0
}

/// A waiter (another process) of up to 5 s: `take` takes the hold,
/// `give` gives it back after 100 ms. Whether it got it, and after how long.
fn spawn_waiter<T: Send + 'static>(
    mut holder: T,
    take: fn(&mut T) -> bool,
    give: fn(&mut T) -> bool,
) -> JoinHandle<(bool, Duration)> {
    std::thread::spawn(move || {
        let began = Instant::now();
        let got = take(&mut holder);
        let took = began.elapsed();
        if got {
            std::thread::sleep(Duration::from_millis(100));
            assert!(give(&mut holder));
        }
        (got, took)
    })
}

fn take_permit(s: &mut Semaphore) -> bool {
    s.acquire(Duration::from_secs(5)).unwrap()
}

fn give_permit(s: &mut Semaphore) -> bool {
    s.release().unwrap()
}

fn take_read(l: &mut Lock) -> bool {
    l.acquire_read(Duration::from_secs(5)).unwrap()
}

fn give_read(l: &mut Lock) -> bool {
    l.release().unwrap()
}

/// Waits until the server has run `n` more scripts than `before` (the
/// waiter's first steps went out), then a little longer.
fn until_scripts(server: &RedisServer, before: u64, n: u64) {
    common::wait_until("the waiter stepped", Duration::from_secs(5), || {
        scripts(server) >= before + n
    });
    std::thread::sleep(Duration::from_millis(100));
}

/// While the waiter has waited less than `starve_after`, it is not queued,
/// and a release frees the permit without waking it: a newcomer that asks
/// first takes it. The waiter gets it once it starves. With `starve_after`
/// 0 the waiter is queued and the release hands it the permit.
#[test]
fn a_free_permit_goes_to_whoever_asks_first_while_nobody_starves() {
    let server = RedisServer::start();
    for (starve_after, barging) in [(0.6, true), (0.0, false)] {
        let name = unique_key("sem-barging");
        let mut holder = one_permit(&server.url(), &name, LockOptions::default());
        assert!(holder.acquire(Duration::ZERO).unwrap());
        let url = server.url().replace("127.0.0.1", "localhost");
        let before = scripts(&server);
        let waiter = spawn_waiter(
            one_permit(&url, &name, starving_after(starve_after)),
            take_permit,
            give_permit,
        );
        until_scripts(&server, before, 1);
        let queued = permit_queue_len(&server, &name);
        assert_eq!(queued, i64::from(!barging), "starve_after {starve_after}");
        let mut newcomer = one_permit(&server.url(), &name, LockOptions::default());
        let pushed = wakes(&server);
        assert!(holder.release().unwrap());
        let took = newcomer.acquire(Duration::ZERO).unwrap();
        assert_eq!(took, barging, "starve_after {starve_after}");
        if barging {
            assert_eq!(wakes(&server), pushed, "a waiter that barges is not woken");
            assert!(newcomer.release().unwrap());
            assert_eq!(wakes(&server), pushed, "nor by the next release");
        }
        let (got, waited) = waiter.join().unwrap();
        assert!(got, "the waiter gets the permit in the end");
        assert!(
            waited < Duration::from_secs_f64(starve_after + 0.8),
            "within its bound: {waited:?}"
        );
    }
}

/// The same for a read hold: a barging reader is not queued, so a writer
/// released with a reader waiting frees the lock for a newcomer writer;
/// with `starve_after` 0 the release hands the lock to the queued reader
/// and the newcomer finds it held.
#[test]
fn a_free_lock_goes_to_whoever_asks_first_while_no_reader_starves() {
    let server = RedisServer::start();
    for (starve_after, barging) in [(0.6, true), (0.0, false)] {
        let key = unique_key("read-barging");
        let mut writer = lock(&server, &key, 10.0);
        assert!(writer.acquire(Duration::ZERO).unwrap());
        let url = server.url().replace("127.0.0.1", "localhost");
        let before = scripts(&server);
        let reader = Lock::new(key.clone(), 10.0, &[url], starving_after(starve_after)).unwrap();
        let waiter = spawn_waiter(reader, take_read, give_read);
        until_scripts(&server, before, 1);
        assert_eq!(queue_len(&server, &key), i64::from(!barging));
        let mut newcomer = lock(&server, &key, 10.0);
        let pushed = wakes(&server);
        assert!(writer.release().unwrap());
        let took = newcomer.acquire(Duration::ZERO).unwrap();
        assert_eq!(took, barging, "starve_after {starve_after}");
        if barging {
            assert_eq!(wakes(&server), pushed, "a reader that barges is not woken");
            assert!(newcomer.release().unwrap());
        }
        let (got, waited) = waiter.join().unwrap();
        assert!(got, "the reader gets its read hold in the end");
        assert!(
            waited < Duration::from_secs_f64(starve_after + 0.8),
            "within its bound: {waited:?}"
        );
    }
}

/// Sections back to back (release, take again at once) never keep a
/// waiter out for long: once it has waited `starve_after` it joins the
/// queue and is handed the permit (the lock, for a reader) at the next
/// release. The bound checked is generous.
#[test]
fn a_waiter_is_handed_its_hold_once_it_has_waited_starve_after() {
    let server = RedisServer::start();
    for starve_after in [0.2, 0.001] {
        let name = unique_key("sem-starving");
        let barger = one_permit(&server.url(), &name, LockOptions::default());
        let url = server.url().replace("127.0.0.1", "localhost");
        let waiter = one_permit(&url, &name, starving_after(starve_after));
        let (took, sections) = back_to_back(
            barger,
            |s| s.acquire(Duration::ZERO).unwrap(),
            |s| assert!(s.release().unwrap()),
            || spawn_waiter(waiter, take_permit, give_permit),
        );
        assert!(
            took < Duration::from_secs_f64(starve_after + 0.8),
            "a permit soon after starve_after {starve_after}: {took:?} ({sections} sections)"
        );

        let key = unique_key("read-starving");
        let barger = lock(&server, &key, 10.0);
        let url = server.url().replace("127.0.0.1", "localhost");
        let reader = Lock::new(key.clone(), 10.0, &[url], starving_after(starve_after)).unwrap();
        let (took, sections) = back_to_back(
            barger,
            |l| l.acquire(Duration::ZERO).unwrap(),
            |l| assert!(l.release().unwrap()),
            || spawn_waiter(reader, take_read, give_read),
        );
        assert!(
            took < Duration::from_secs_f64(starve_after + 0.8),
            "a read hold soon after starve_after {starve_after}: {took:?} ({sections} sections)"
        );
    }
}

/// Runs sections of `barger` back to back on a thread while the waiter
/// that `spawn` starts waits; says how long the waiter took, and how many
/// sections ran meanwhile.
fn back_to_back<T: Send + 'static>(
    mut barger: T,
    take: fn(&mut T) -> bool,
    give: fn(&mut T),
    spawn: impl FnOnce() -> JoinHandle<(bool, Duration)>,
) -> (Duration, u64) {
    assert!(take(&mut barger));
    let stop = Arc::new(AtomicBool::new(false));
    let sections = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut sections = 0;
            while !stop.load(Ordering::Relaxed) {
                give(&mut barger);
                // Straight back in: no pause between sections.
                while !take(&mut barger) {
                    if stop.load(Ordering::Relaxed) {
                        return sections;
                    }
                }
                sections += 1;
            }
            give(&mut barger);
            sections
        })
    };
    let (got, took) = spawn().join().unwrap();
    stop.store(true, Ordering::Relaxed);
    let sections = sections.join().unwrap();
    assert!(got, "the waiter got its hold");
    (took, sections)
}

/// A waiter that starves joins the queue at its arrival: ahead of a
/// strict waiter that came after it and has been queued all along, so the
/// next release hands the permit to it first.
#[test]
fn a_waiter_that_starves_joins_the_queue_at_its_arrival() {
    let server = RedisServer::start();
    let name = unique_key("sem-arrival");
    let mut holder = one_permit(&server.url(), &name, LockOptions::default());
    assert!(holder.acquire(Duration::ZERO).unwrap());
    let url = server.url().replace("127.0.0.1", "localhost");
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let spawn = |options: LockOptions, who: &'static str| {
        let (url, name, order) = (url.clone(), name.clone(), order.clone());
        std::thread::spawn(move || {
            let mut s = one_permit(&url, &name, options);
            assert!(s.acquire(Duration::from_secs(5)).unwrap());
            order.lock().unwrap().push(who);
            std::thread::sleep(Duration::from_millis(50));
            assert!(s.release().unwrap());
        })
    };
    let first = spawn(starving_after(0.4), "barged first");
    std::thread::sleep(Duration::from_millis(100));
    let second = spawn(LockOptions::default(), "queued second");
    common::wait_until("both are queued", Duration::from_secs(5), || {
        permit_queue_len(&server, &name) == 2
    });
    assert!(holder.release().unwrap());
    first.join().unwrap();
    second.join().unwrap();
    assert_eq!(*order.lock().unwrap(), ["barged first", "queued second"]);
}

/// A wait shorter than `starve_after` still ends with a try: a waiter that
/// never starves is never queued, so its last step (at the wait's end) is
/// a try, not a give-up, and takes a permit freed meanwhile. Its
/// `retry_delay` (1 s) is longer than its wait (0.6 s): the last step is
/// its only step after the release.
#[test]
fn a_wait_shorter_than_starve_after_ends_with_a_try() {
    let server = RedisServer::start();
    let name = unique_key("sem-short-wait");
    let mut holder = one_permit(&server.url(), &name, LockOptions::default());
    assert!(holder.acquire(Duration::ZERO).unwrap());
    let url = server.url().replace("127.0.0.1", "localhost");
    let mut options = starving_after(30.0);
    options
        .set("retry_delay", OptionValue::Number(1.0))
        .unwrap();
    let mut waiter = one_permit(&url, &name, options);
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        assert!(holder.release().unwrap());
    });
    let began = Instant::now();
    assert!(waiter.acquire(Duration::from_millis(600)).unwrap());
    assert!(
        began.elapsed() < Duration::from_millis(900),
        "at the wait's end: {:?}",
        began.elapsed()
    );
    release.join().unwrap();
    assert!(waiter.release().unwrap());
}

/// Which hold a barging waiter waits for in [`a_late_barging_win_never_counts`].
#[derive(Clone, Copy, Debug)]
enum Kind {
    Permit,
    ReadHold,
}

/// A barging permit waiter whose try after its sleep took the permit, but
/// whose reply comes after the lease that try set, never counts that win: a
/// competitor C gets the permit when W's lease ends, and W's acquire does
/// not return true while C holds it (fairness.rs's rule for a barging
/// writer, for a waiter that is not queued at all while it barges).
#[test]
fn a_barging_permits_win_whose_reply_comes_late_never_counts() {
    a_late_barging_win_never_counts(Kind::Permit, 3.0);
}

/// The same with a `read_timeout` (0.5 s) that ends W's wait for that
/// reply: unanswered, the win is given back or replayed, never believed.
#[test]
fn an_unanswered_barging_permits_win_never_counts() {
    a_late_barging_win_never_counts(Kind::Permit, 0.5);
}

/// [`a_barging_permits_win_whose_reply_comes_late_never_counts`] for a read
/// hold, against a writer that holds the lock and one that comes after.
#[test]
fn a_barging_read_holds_win_whose_reply_comes_late_never_counts() {
    a_late_barging_win_never_counts(Kind::ReadHold, 3.0);
}

/// [`an_unanswered_barging_permits_win_never_counts`] for a read hold.
#[test]
fn an_unanswered_barging_read_holds_win_never_counts() {
    a_late_barging_win_never_counts(Kind::ReadHold, 0.5);
}

fn a_late_barging_win_never_counts(kind: Kind, read_timeout: f64) {
    use common::proxy::Proxy;
    use redislock_core::testing::protocol::scripts::{READ_ACQUIRE, SEM_ACQUIRE};
    let server = RedisServer::start();
    let proxy = Proxy::start(&server);
    let name = unique_key("barging-counted-late");
    // Never released: the holder's lease ends after 0.6 s, and W's try
    // after its sleep takes the hold.
    let mut permit_holder = None;
    let mut writer = None;
    match kind {
        Kind::Permit => {
            let mut h = Semaphore::new(
                name.clone(),
                1,
                0.6,
                &[server.url()],
                LockOptions::default(),
            )
            .unwrap();
            assert!(h.acquire(Duration::ZERO).unwrap());
            permit_holder = Some(h);
        }
        Kind::ReadHold => {
            let mut h = lock(&server, &name, 0.6);
            assert!(h.acquire(Duration::ZERO).unwrap());
            writer = Some(h);
        }
    }
    let mut options = starving_after(30.0);
    for (option, value) in [("retry_delay", 5.0), ("read_timeout", read_timeout)] {
        options.set(option, OptionValue::Number(value)).unwrap();
    }
    let began = Instant::now();
    let (url, n) = (proxy.url(), name.clone());
    let before = scripts(&server);
    let waiter = std::thread::spawn(move || match kind {
        Kind::Permit => {
            let mut w = Semaphore::new(n, 1, 1.0, &[url], options).unwrap();
            let got = w.acquire(Duration::from_secs(3));
            let _ = (got.as_ref().is_ok_and(|g| *g)).then(|| w.release());
            (got, began.elapsed())
        }
        Kind::ReadHold => {
            let mut w = Lock::new(n, 1.0, &[url], options).unwrap();
            let got = w.acquire_read(Duration::from_secs(3));
            let _ = (got.as_ref().is_ok_and(|g| *g)).then(|| w.release());
            (got, began.elapsed())
        }
    });
    // W's first try went out (and found the hold taken); the reply to its
    // next try (after its sleep) is held 1.5 s: past the 1 s lease it sets.
    until_scripts(&server, before, 1);
    let script = match kind {
        Kind::Permit => SEM_ACQUIRE.hash(),
        Kind::ReadHold => READ_ACQUIRE.hash(),
    };
    proxy.hold_reply_to(script.as_bytes(), Duration::from_millis(1500));
    common::wait_until("W's try took the hold", Duration::from_secs(3), || {
        proxy.holding_reply()
    });
    // C, a strict competitor on the server itself, gets the hold when W's
    // lease ends: a permit, or (for a read hold) the write lock.
    let (c_got, c_at) = match kind {
        Kind::Permit => {
            let mut c = one_permit(&server.url(), &name, LockOptions::default());
            let got = c.acquire(Duration::from_secs(4)).unwrap();
            let at = began.elapsed();
            std::thread::sleep(Duration::from_millis(1500));
            assert!(c.release().unwrap());
            (got, at)
        }
        Kind::ReadHold => {
            let mut competing = LockOptions::default();
            competing
                .set("reentrant", OptionValue::Bool(false))
                .unwrap();
            let mut c = Lock::new(name.clone(), 10.0, &[server.url()], competing).unwrap();
            let got = c.acquire(Duration::from_secs(4)).unwrap();
            let at = began.elapsed();
            std::thread::sleep(Duration::from_millis(1500));
            assert!(c.release().unwrap());
            (got, at)
        }
    };
    let (w_got, w_at) = waiter.join().unwrap();
    assert_eq!(proxy.holds().len(), 1, "W's try reply was held back");
    assert!(c_got, "C got the hold once W's lease ended");
    if matches!(w_got, Ok(true)) {
        assert!(
            w_at < c_at,
            "{kind:?}: W's acquire returned true at {w_at:?}, after C got the hold at \
             {c_at:?}: its only proof a reply read after its lease ended"
        );
    }
    drop((permit_holder, writer));
}
