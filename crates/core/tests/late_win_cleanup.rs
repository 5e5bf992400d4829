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
//! goes on as any waiter's), and nothing is undone.

mod common;

use std::time::{Duration, Instant};

use common::proxy::Proxy;
use common::{RedisServer, never, unique_key};
use redislock_core::protocol::scripts;
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

#[test]
fn a_late_wins_undo_never_releases_the_hold_its_wait_took() {
    let server = RedisServer::start();
    let proxy = Proxy::start(&server);
    let key = unique_key("late-win");
    let name = String::from_utf8(key.clone()).unwrap();
    let mut options = LockOptions::default();
    for (option, value) in [
        ("auto_renew", OptionValue::Bool(true)),
        ("retry_delay", OptionValue::Number(0.05)),
        ("read_timeout", OptionValue::Number(2.0)),
    ] {
        options.set(option, value).unwrap();
    }
    let mut holder = Lock::new(key.clone(), TTL, &[proxy.url()], options).unwrap();
    // The scripts are checked before the first try: not the request held.
    assert!(holder.acquire(Duration::ZERO, &never).unwrap());
    assert!(holder.release().unwrap());

    proxy.hold_reply_to(b"NX", HELD_UP);
    proxy.refuse_requests_with(&[scripts::ABANDON.hash().as_bytes()], REFUSED);
    let started = Instant::now();
    assert!(
        holder.acquire(Duration::from_secs(3), &never).unwrap(),
        "the wait after the late try takes the lock"
    );
    assert_eq!(proxy.replies_held(), 1, "the try's reply was held up");
    let token = String::from_utf8(holder.token().unwrap()).unwrap();
    let mut observer = server.client();
    let mut violations = Vec::new();
    let watched = Instant::now();
    while watched.elapsed() < WATCHED {
        let believed = holder.is_acquired().unwrap();
        let owner: Option<String> = redis::cmd("GET").arg(&name).query(&mut observer).unwrap();
        if believed && owner.as_deref() != Some(&token[..]) {
            violations.push((started.elapsed(), owner));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        violations.is_empty(),
        "believed held while Redis had {:?} (at {:?} after the acquire began), {} times",
        violations[0].1,
        violations[0].0,
        violations.len()
    );
    assert!(
        holder.is_acquired().unwrap(),
        "the hold is kept (renewed) after the late try's clean-up"
    );
    assert!(holder.release().unwrap());
}
