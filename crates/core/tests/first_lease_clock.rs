//! A process's first lease counts from the send of the request that won
//! it, however late its reply is read.
//!
//! The lease clock (`lease::belief::clock_us`) started a second before its
//! first use in the process, and an instant before that start counted as
//! the start itself. A process's first hold is its first use: when the
//! reply that won it was read more than a second after its request was
//! sent (the process paused during its first wait, or the reply held up),
//! the lease was counted from a second before the reply instead of from
//! the send, up to a ttl longer than Redis keeps it. With `auto_renew` and
//! renewals that cannot reach Redis, `is_acquired()` said true after the
//! key had expired and a rival had taken it (the history checker's truth
//! violation in its `long` scenario: a fresh worker paused 2.4 s in its
//! first wait believed its hold 1.4 s past what Redis gave it).
//!
//! Each case runs in a forked child that has never used the lease clock
//! (this file's tests take no hold in the test process itself); the
//! replies of its requests are held up in a proxy while its acquire waits,
//! and its renewals are refused, so that only its belief decides.

mod common;

use std::time::{Duration, Instant};

use common::child::{Channel, Child};
use common::proxy::Proxy;
use common::{RedisServer, unique_key};
use redislock_core::testing::protocol::scripts;
use redislock_core::{Lock, LockOptions, OptionValue};

/// The holder's ttl, in seconds.
const TTL: f64 = 3.0;
/// The ttl of a hold won in the queue: long enough that a step answered
/// [`HELD_UP`] late is still within a quarter of it, so its win counts
/// from the step's own send (a later win is topped up, and counted from
/// that top-up's send; one whose top-up gets no answer is given back).
const QUEUE_TTL: f64 = 9.0;
/// How long every reply is held up while the acquire waits for its own:
/// well over the lease clock's head start of a second.
const HELD_UP: Duration = Duration::from_millis(2_000);

fn options() -> LockOptions {
    let mut options = LockOptions::default();
    for (name, value) in [
        ("fencing", OptionValue::Bool(true)),
        ("reentrant", OptionValue::Bool(false)),
        ("auto_renew", OptionValue::Bool(true)),
        ("retry_delay", OptionValue::Number(0.1)),
        // Replies held up by HELD_UP end no call.
        ("read_timeout", OptionValue::Number(5.0)),
    ] {
        options.set(name, value).unwrap();
    }
    options
}

/// The child: takes the lock through `url` (waiting `wait`) when told to,
/// says whether it got it, then answers every "is" with its
/// `is_acquired()`, until "end".
fn holder(url: String, key: Vec<u8>, ttl: f64, wait: Duration) -> impl FnOnce(&Channel) -> i32 {
    move |parent| {
        let mut lock = Lock::new(key, ttl, &[url], options()).unwrap();
        parent.send(b"ready");
        assert_eq!(parent.recv(Duration::from_secs(30)).unwrap(), b"go");
        let got = lock.acquire(wait).unwrap();
        parent.send(if got { b"won" } else { b"lost" });
        while let Some(message) = parent.recv(Duration::from_secs(30)) {
            if message == b"end" {
                break;
            }
            let ours = lock.is_acquired().unwrap_or(false);
            parent.send(if ours { b"1" } else { b"0" });
        }
        0
    }
}

/// After the child won (at `won`): a rival takes the key the moment Redis
/// lets it go (the child's renewals are refused), and the child is asked
/// at once whether the hold is still its own. Returns what it said and how
/// long after `won` the rival got in.
fn rival_takes_it(
    server: &RedisServer,
    key: &[u8],
    child: &Child,
    won: Instant,
) -> (bool, Duration) {
    let mut con = server.client();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        assert!(
            Instant::now() < deadline,
            "the child's hold never expired in Redis"
        );
        let taken: Option<String> = redis::cmd("SET")
            .arg(key)
            .arg("rival")
            .arg("NX")
            .arg("PX")
            .arg(10_000)
            .query(&mut con)
            .unwrap();
        if taken.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let after = won.elapsed();
    child.send(b"is");
    let said = child.recv(Duration::from_secs(5)).unwrap();
    (said == b"1", after)
}

/// Once the child says it won: the replies pass again, a rival takes the
/// key as soon as Redis lets it go ([`rival_takes_it`]), and the child
/// ends. What the child said then, and how long after its win.
fn after_the_win(
    server: &RedisServer,
    proxy: &Proxy,
    key: &[u8],
    mut child: Child,
) -> (bool, Duration) {
    assert_eq!(child.recv(Duration::from_secs(20)).unwrap(), b"won");
    let won = Instant::now();
    proxy.pass();
    let seen = rival_takes_it(server, key, &child, won);
    child.send(b"end");
    child.wait(Duration::from_secs(10));
    seen
}

/// The renewals (and a queue wait's top-up, the same script) refused by
/// the proxy: Redis keeps the hold only as long as the request that won it
/// set.
fn refuse_renewals(proxy: &Proxy) {
    proxy.refuse_requests_with(
        &[scripts::REFRESH.hash().as_bytes()],
        Duration::from_secs(30),
    );
}

/// A free lock taken with the plain try, whose reply comes `HELD_UP` after
/// its request: the first lease of the process.
#[test]
fn a_first_lease_won_by_a_late_try_counts_from_its_send() {
    let server = RedisServer::start();
    let proxy = Proxy::start(&server);
    let key = unique_key("first-lease-try");
    let child = Child::fork(holder(proxy.url(), key.clone(), TTL, Duration::ZERO));
    assert_eq!(child.recv(Duration::from_secs(10)).unwrap(), b"ready");
    refuse_renewals(&proxy);
    // Every reply held up: the script check's, then the try's.
    proxy.delay(HELD_UP);
    child.send(b"go");
    let (ours, after) = after_the_win(&server, &proxy, &key, child);
    assert!(
        !ours,
        "is_acquired() said true after the lease had run out in Redis and a rival took the \
         key, {after:?} after the acquire returned (its try was answered {HELD_UP:?} late, \
         ttl {TTL} s): the first lease was counted from the lease clock's start, not from \
         the try's send"
    );
}

/// A lock taken in the queue by a step whose reply comes `HELD_UP` after
/// its request, within a quarter of its ttl: the lease is the step's (the
/// history's `long` scenario: a fresh worker's first wait, paused).
#[test]
fn a_first_lease_won_by_a_late_queue_step_counts_from_its_send() {
    let server = RedisServer::start();
    let proxy = Proxy::start(&server);
    let key = unique_key("first-lease-queue");
    let wait = Duration::from_secs(10);
    let child = Child::fork(holder(proxy.url(), key.clone(), QUEUE_TTL, wait));
    assert_eq!(child.recv(Duration::from_secs(10)).unwrap(), b"ready");
    refuse_renewals(&proxy);
    // Someone else's hold, 1 s left: the child queues behind it.
    let mut con = server.client();
    let _: () = redis::cmd("SET")
        .arg(&key)
        .arg("other")
        .arg("PX")
        .arg(1_000)
        .query(&mut con)
        .unwrap();
    let expires = Instant::now() + Duration::from_millis(1_000);
    child.send(b"go");
    // The replies held up from just before the other hold expires: the
    // step that takes the lock (sent at most a retry_delay before the
    // expiry) is answered HELD_UP later.
    std::thread::sleep(
        expires.saturating_duration_since(Instant::now()) - Duration::from_millis(30),
    );
    proxy.delay(HELD_UP);
    let (ours, after) = after_the_win(&server, &proxy, &key, child);
    assert!(
        !ours,
        "is_acquired() said true after the lease had run out in Redis and a rival took the \
         key, {after:?} after the acquire returned (its winning step was answered \
         {HELD_UP:?} late, ttl {QUEUE_TTL} s): the first lease was counted from the lease clock's \
         start, not from the step's send"
    );
}
