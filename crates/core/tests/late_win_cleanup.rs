//! A try that won too late never costs the hold that the same acquire
//! then takes.
//!
//! A plain try (`SET NX PX`) whose reply is read after its lease ended
//! (the reply held up in flight) may have taken the lock or not, as far as
//! this process can count on. Its acquire then waited in the queue with
//! the same token; but first the try was undone (`abandon.lua`), and an
//! undo that got no answer stayed pending and was sent again later: when
//! the wait had taken the lock meanwhile (same token), that resend
//! released it in Redis while the holder believed it held. Now a late win
//! is an outcome the wait's first step settles by replaying (a lock that
//! still holds our token is claimed for its whole lease; else the step
//! goes on as any waiter's), and nothing is undone. The same for a step of
//! the wait that won too late: its give-back, unanswered, ends the wait.

mod common;

use std::time::{Duration, Instant};

use common::proxy::Proxy;
use common::{RedisServer, unique_key};
use redislock_core::testing::protocol::scripts;
use redislock_core::{Lock, LockOptions, OptionValue};

/// The lease, in seconds: shorter than the try's reply is held up.
const TTL: f64 = 0.4;
/// How long the try's reply is held up.
const HELD_UP: Duration = Duration::from_millis(500);
/// How long undos are refused (their connection closed) from the start:
/// the try's undo and its first resend, not the one after.
const REFUSED: Duration = Duration::from_millis(600);
/// How long the holder is watched after its acquire.
const WATCHED: Duration = Duration::from_millis(1_200);

/// Options with `auto_renew` (so `is_acquired()` answers from the
/// belief) and `more`.
fn options(more: &[(&str, OptionValue)]) -> LockOptions {
    let mut options = LockOptions::default();
    options.set("auto_renew", OptionValue::Bool(true)).unwrap();
    for (option, value) in more {
        options.set(option, value.clone()).unwrap();
    }
    options
}

/// Watches `lock` for [`WATCHED`]: each time it believes it holds the key
/// while Redis has another value there (or none), when (counted from
/// `since`) and what Redis had.
fn believed_not_held(
    server: &RedisServer,
    lock: &mut Lock,
    token: &[u8],
    since: Instant,
) -> Vec<(Duration, Option<Vec<u8>>)> {
    let name = lock.key().to_vec();
    let mut observer = server.client();
    let mut violations = Vec::new();
    let watched = Instant::now();
    while watched.elapsed() < WATCHED {
        let believed = lock.is_acquired().unwrap();
        let owner: Option<Vec<u8>> = redis::cmd("GET").arg(&name).query(&mut observer).unwrap();
        if believed && owner.as_deref() != Some(token) {
            violations.push((since.elapsed(), owner));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    violations
}

#[test]
fn a_late_wins_undo_never_releases_the_hold_its_wait_took() {
    let server = RedisServer::start();
    let proxy = Proxy::start(&server);
    let key = unique_key("late-win");
    let options = options(&[
        ("retry_delay", OptionValue::Number(0.05)),
        ("read_timeout", OptionValue::Number(2.0)),
    ]);
    let mut holder = Lock::new(key.clone(), TTL, &[proxy.url()], options).unwrap();
    // The scripts are checked before the first try: not the request held.
    assert!(holder.acquire(Duration::ZERO).unwrap());
    assert!(holder.release().unwrap());

    proxy.hold_reply_to(b"NX", HELD_UP);
    proxy.refuse_requests_with(&[scripts::ABANDON.hash().as_bytes()], REFUSED);
    let started = Instant::now();
    assert!(
        holder.acquire(Duration::from_secs(3)).unwrap(),
        "the wait after the late try takes the lock"
    );
    assert_eq!(proxy.replies_held(), 1, "the try's reply was held up");
    let token = String::from_utf8(holder.token().unwrap()).unwrap();
    let violations = believed_not_held(&server, &mut holder, token.as_bytes(), started);
    assert!(
        violations.is_empty(),
        "believed held while Redis had {:?} (at {:?} after the acquire began), {} times",
        violations[0].1.as_deref().map(String::from_utf8_lossy),
        violations[0].0,
        violations.len()
    );
    assert!(
        holder.is_acquired().unwrap(),
        "the hold is kept (renewed) after the late try's clean-up"
    );
    assert!(holder.release().unwrap());
}

#[test]
fn a_late_steps_give_back_never_releases_what_the_wait_wins_next() {
    // A waiter's step that claimed a handed-over hold is answered too late
    // (every reply held up 0.6 s, the lease 0.4 s): the hold is given back,
    // and that give-back is held up in flight past the read timeout (it
    // runs 1.2 s later). The wait used to go on with the same token, win
    // the free lock, and lose it to the late give-back while it believed
    // it held (3 of 3 runs). Now the wait ends with the give-back's
    // failure, and the clean-up is left pending.
    let server = RedisServer::start();
    let proxy = Proxy::start(&server);
    let key = unique_key("late-step");
    let name = String::from_utf8(key.clone()).unwrap();
    let owner = b"late-step-owner".to_vec();
    let options = options(&[
        // The waiter's wake-up wait blocks when the release comes.
        ("retry_delay", OptionValue::Number(1.0)),
        ("read_timeout", OptionValue::Number(1.0)),
        ("reentrant", OptionValue::Bool(false)),
        ("owner", OptionValue::Text(owner.clone())),
    ]);
    let mut waiter = Lock::new(key.clone(), TTL, &[proxy.url()], options).unwrap();
    assert!(waiter.acquire(Duration::ZERO).unwrap());
    assert!(waiter.release().unwrap());
    let mut holder = common::lock(&server, &key, 10.0);
    assert!(holder.acquire(Duration::ZERO).unwrap());
    proxy.delay_request_to_all(
        &[scripts::ABANDON.hash().as_bytes(), &owner],
        Duration::from_millis(1_200),
    );
    let got = std::thread::scope(|scope| {
        let proxy = &proxy;
        scope.spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            proxy.delay(Duration::from_millis(600));
            std::thread::sleep(Duration::from_millis(10));
            assert!(holder.release().unwrap());
            // Over before the wait's next step, after the give-back.
            std::thread::sleep(Duration::from_millis(1_200));
            proxy.pass();
        });
        waiter.acquire(Duration::from_secs(3))
    });
    assert!(!proxy.delay_armed(), "the give-back was held up in flight");
    if let Err(error) = &got {
        assert!(error.is_connection_error(), "{error:?}");
        // The give-back runs, late, and nothing is believed held.
        std::thread::sleep(Duration::from_millis(1_500));
        let holder: Option<Vec<u8>> = server.cmd(&["GET", &name]);
        assert_ne!(holder.as_deref(), Some(&owner[..]), "given back");
        assert!(!waiter.is_acquired().unwrap());
        return;
    }
    assert!(got.unwrap(), "a 3 s wait either wins or fails");
    let violations: Vec<Duration> = believed_not_held(&server, &mut waiter, &owner, Instant::now())
        .into_iter()
        .map(|(at, _)| at)
        .collect();
    assert!(
        violations.is_empty(),
        "believed held while Redis had it no more, at {violations:?} after the acquire"
    );
}

#[test]
fn a_late_read_try_with_wait_left_goes_on_waiting() {
    // A reader's plain try on the free lock (SET NX of the lone read mark)
    // is answered after its lease ended. With wait left, the acquire used
    // to give the try back and return false at once; now the wait's first
    // step settles it (its own lone mark, if still there, is claimed for a
    // whole lease) and the reader holds the lock when acquireRead returns.
    let server = RedisServer::start();
    let proxy = Proxy::start(&server);
    let key = unique_key("late-read");
    let name = String::from_utf8(key.clone()).unwrap();
    let options = options(&[
        ("retry_delay", OptionValue::Number(0.05)),
        ("read_timeout", OptionValue::Number(2.0)),
    ]);
    let mut reader = Lock::new(key.clone(), TTL, &[proxy.url()], options).unwrap();
    // The scripts are checked before the first try: not the request held.
    assert!(reader.acquire_read(Duration::ZERO).unwrap());
    assert!(reader.release().unwrap());

    proxy.hold_reply_to(b"~~read:", HELD_UP);
    let started = Instant::now();
    assert!(
        reader.acquire_read(Duration::from_secs(3)).unwrap(),
        "the wait after the late try takes a read hold"
    );
    assert_eq!(proxy.replies_held(), 1, "the try's reply was held up");
    assert!(started.elapsed() < Duration::from_secs(3), "not a timeout");
    assert!(reader.is_acquired().unwrap());
    let held: Option<Vec<u8>> = server.cmd(&["GET", &name]);
    assert!(
        held.as_deref().is_some_and(|h| h.starts_with(b"~~read")),
        "Redis holds the lock for reading: {:?}",
        held.as_deref().map(String::from_utf8_lossy)
    );
    // A writer is kept out while the read hold lasts.
    let mut writer = common::lock(&server, &key, 10.0);
    assert!(!writer.acquire(Duration::ZERO).unwrap());
    assert!(reader.release().unwrap());
    assert!(writer.acquire(Duration::ZERO).unwrap());
}
