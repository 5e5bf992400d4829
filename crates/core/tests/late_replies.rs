//! Beliefs follow the last command sent (issue 28): a reply changes what
//! the process believes of a hold only if no later command for that hold
//! was sent, and `refresh($ttl)` sets the lease length that later renewals
//! keep.
//!
//! The renewal thread's reply held back in flight (a proxy holds back the
//! reply of the renewal's request) came after a shorter `refresh()`: it
//! raised the believed lease back to the renewal's (the longer of the two),
//! and the next renewal was still scheduled by the old lease, so Redis let
//! the hold expire while `is_acquired()` said true and a competitor took it.
//!
//! With a ttl of 3 s and `refresh(1.0)` the next renewal, due a third of
//! the old lease after the late one was sent, reaches Redis about when the
//! refreshed lease ends (here about 0.5 ms before it, so the hold lives on
//! at e6359a3); `refresh(0.5)` ends the lease half a second before it, every
//! time. Both are checked, for a lock and for a semaphore permit; and,
//! without any fault, that a `refresh(0.5)` is renewed before its half
//! second runs out (at e6359a3 the next renewal came by the old schedule,
//! a second later, and found the hold gone).

mod common;

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use common::proxy::Proxy;
use common::{RedisServer, unique_key};
use redislock_core::testing::semaphore_calls::{SemKeys, now_ms};
use redislock_core::{Lock, LockOptions, OptionValue, Semaphore};

/// The holder's ttl, in seconds: a renewal about every second.
const TTL: f64 = 3.0;
/// How long the renewal's reply is held back.
const HELD_BACK: Duration = Duration::from_millis(300);
/// How long the holder's beliefs are checked after its refresh.
const WATCHED: Duration = Duration::from_millis(2_500);
/// How often.
const EVERY: Duration = Duration::from_millis(50);

/// One test at a time: the renewal thread is the process's, and a reply
/// held back in one test's round holds up the renewals of every other
/// test's holds too (the rounds of several servers end together).
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static ONE: Mutex<()> = Mutex::new(());
    ONE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Options of an object that competes like another process.
fn options(auto_renew: bool) -> LockOptions {
    let mut options = LockOptions::default();
    options.set("reentrant", OptionValue::Bool(false)).unwrap();
    options
        .set("auto_renew", OptionValue::Bool(auto_renew))
        .unwrap();
    options
}

/// Holds back the reply of the next request that names `key` (the hold's
/// key): the renewal's, the only request sent for the hold until then (the
/// test sends none while it waits; matching the key, not a script's SHA,
/// keeps this whatever script renews). Waits until the proxy holds that
/// reply, then runs `refresh` (which must return true). The time of the
/// refresh.
fn refresh_under_a_late_reply(
    proxy: &Proxy,
    key: &[u8],
    refresh: impl FnOnce() -> bool,
) -> Instant {
    proxy.hold_reply_to(key, HELD_BACK);
    // A renewal comes within a third of the ttl.
    let deadline = Instant::now() + Duration::from_secs_f64(TTL);
    while !proxy.holding_reply() {
        assert!(
            Instant::now() < deadline,
            "no renewal's reply came to be held back"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let at = Instant::now();
    assert!(refresh(), "the refresh during the held-back reply");
    at
}

/// What went wrong in one check: when (after the refresh), and what.
type Violation = (Duration, String);

fn report(
    what: &str,
    shorter: f64,
    proxy: &Proxy,
    violations: &[Violation],
    competitor: Option<Duration>,
) {
    println!(
        "{what}, refresh({shorter}): {} replies held back; {} violations, the first {:?}; the competitor got it \
         {competitor:?} after the refresh",
        proxy.replies_held(),
        violations.len(),
        violations.first()
    );
    assert_eq!(proxy.replies_held(), 1, "one renewal's reply held back");
    assert!(
        violations.is_empty(),
        "{what}: the holder believed it held what Redis did not give it, in {} of the \
         checks, from {:?} after its refresh({shorter}) on: {:?}",
        violations.len(),
        violations[0].0,
        violations.iter().take(5).collect::<Vec<_>>()
    );
}

/// A lock renewed every second; a renewal's reply held back while it
/// refreshes to `shorter` seconds; its beliefs checked against Redis and
/// a competitor for [`WATCHED`].
fn lock_case(shorter: f64) {
    let _one = one_at_a_time();
    let server = RedisServer::start();
    let proxy = Proxy::start(&server);
    let key = unique_key("late-renewal");
    let mut holder = Lock::new(key.clone(), TTL, &[proxy.url()], options(true)).unwrap();
    assert!(holder.acquire(Duration::ZERO).unwrap());
    let token = holder.token().expect("held");
    let refreshed =
        refresh_under_a_late_reply(&proxy, &key, || holder.refresh(Some(shorter)).unwrap());
    let mut competitor = Lock::new(key.clone(), 10.0, &[server.url()], options(false)).unwrap();
    let mut competitor_got = None;
    let mut observer = server.client();
    let mut violations: Vec<Violation> = Vec::new();
    while refreshed.elapsed() < WATCHED {
        let at = refreshed.elapsed();
        let believed = holder.is_acquired().unwrap();
        let owner: Option<Vec<u8>> = redis::cmd("GET").arg(&key).query(&mut observer).unwrap();
        if believed && owner.as_deref() != Some(&token[..]) {
            let owner = owner.map(|o| String::from_utf8_lossy(&o).into_owned());
            violations.push((at, format!("believed held, Redis's owner {owner:?}")));
        }
        if competitor_got.is_none() && competitor.acquire(Duration::ZERO).unwrap() {
            competitor_got = Some(at);
            if holder.is_acquired().unwrap() {
                violations.push((at, "the competitor got it, believed held".into()));
            }
        }
        std::thread::sleep(EVERY);
    }
    report("lock", shorter, &proxy, &violations, competitor_got);
    assert!(holder.release().unwrap());
}

/// [`lock_case`] for a permit of a semaphore of 1: Redis holds it while
/// the holder's token is in `S~~s` with a lease end (its score) to come.
fn permit_case(shorter: f64) {
    let _one = one_at_a_time();
    let server = RedisServer::start();
    let proxy = Proxy::start(&server);
    let name = unique_key("late-permit-renewal");
    let holders = SemKeys::new(&name).holders;
    let semaphore = |url: String, auto_renew| {
        Semaphore::new(name.clone(), 1, TTL, &[url], options(auto_renew)).unwrap()
    };
    let mut holder = semaphore(proxy.url(), true);
    assert!(holder.acquire(Duration::ZERO).unwrap());
    let mut observer = server.client();
    // Its live permits (the member ~~n, scored -N, keeps the number).
    let tokens: Vec<String> = redis::cmd("ZRANGEBYSCORE")
        .arg(&holders)
        .arg("(0")
        .arg("+inf")
        .query(&mut observer)
        .unwrap();
    assert_eq!(tokens.len(), 1, "the holder's permit: {tokens:?}");
    let token = tokens[0].clone();
    let refreshed =
        refresh_under_a_late_reply(&proxy, &holders, || holder.refresh(Some(shorter)).unwrap());
    let mut competitor = semaphore(server.url(), false);
    let mut competitor_got = None;
    let mut violations: Vec<Violation> = Vec::new();
    while refreshed.elapsed() < WATCHED {
        let at = refreshed.elapsed();
        let believed = holder.is_acquired().unwrap();
        let score: Option<f64> = redis::cmd("ZSCORE")
            .arg(&holders)
            .arg(&token)
            .query(&mut observer)
            .unwrap();
        let now = now_ms() as f64;
        if believed && score.is_none_or(|end| end <= now) {
            let left = score.map(|end| end - now);
            violations.push((
                at,
                format!("believed held, lease left in Redis {left:?} ms"),
            ));
        }
        if competitor_got.is_none() && competitor.acquire(Duration::ZERO).unwrap() {
            competitor_got = Some(at);
            if holder.is_acquired().unwrap() {
                violations.push((at, "the competitor got it, believed held".into()));
            }
        }
        std::thread::sleep(EVERY);
    }
    report("permit", shorter, &proxy, &violations, competitor_got);
    assert!(holder.release().unwrap());
}

/// The case; passes at e6359a3 on a quiet machine (see the module
/// documentation): a guard.
#[test]
fn a_late_renewal_reply_never_undoes_a_shorter_refresh() {
    lock_case(1.0);
}

/// The case for a permit; passes at e6359a3 on a quiet machine.
#[test]
fn a_late_renewal_reply_never_undoes_a_shorter_refresh_of_a_permit() {
    permit_case(1.0);
}

#[test]
fn a_late_renewal_reply_never_undoes_a_half_second_refresh() {
    lock_case(0.5);
}

#[test]
fn a_late_renewal_reply_never_undoes_a_half_second_refresh_of_a_permit() {
    permit_case(0.5);
}

/// Without any fault: a `refresh(0.5)` right after a renewal of a 3 s lease
/// is renewed before its half second runs out (renewals keep the lease
/// length it set, at their pace for it), not by the old lease's schedule.
#[test]
fn a_shorter_refresh_is_renewed_in_time() {
    let _one = one_at_a_time();
    let server = RedisServer::start();
    let key = unique_key("short-refresh");
    let mut holder = Lock::new(key.clone(), TTL, &[server.url()], options(true)).unwrap();
    assert!(holder.acquire(Duration::ZERO).unwrap());
    let token = holder.token().expect("held");
    // Just after the first renewal (due a third of the ttl after the
    // acquire): the next one, by the old lease, is a second away.
    std::thread::sleep(Duration::from_secs_f64(TTL / 3.0 + 0.05));
    assert!(holder.refresh(Some(0.5)).unwrap());
    let refreshed = Instant::now();
    let mut observer = server.client();
    let mut gone = Vec::new();
    while refreshed.elapsed() < WATCHED {
        let owner: Option<Vec<u8>> = redis::cmd("GET").arg(&key).query(&mut observer).unwrap();
        if owner.as_deref() != Some(&token[..]) {
            gone.push(refreshed.elapsed());
        }
        std::thread::sleep(EVERY);
    }
    let held = holder.is_acquired().unwrap();
    println!(
        "refresh(0.5) of an auto-renewed 3 s lease: the key not the holder's in {} samples, \
         from {:?}; is_acquired at the end {held}",
        gone.len(),
        gone.first()
    );
    assert!(
        gone.is_empty(),
        "the refreshed hold was not renewed in time: gone from Redis from {:?} after the \
         refresh on",
        gone[0]
    );
    assert!(held, "the auto-renewed hold is still held");
    assert!(holder.release().unwrap());
}
