//! No script does more than a constant amount of work per call, however
//! many waiters departed from the queue: a call looks at 64 queue entries
//! at most (their marks in one `MGET`) and drops the departed ones; a call
//! that found only departed waiters there, with more behind them, says so
//! and its caller sends it again at once. So departed waiters cost their
//! own removal, once each, in calls that never stall Redis (single
//! threaded) for its other clients, and never a live waiter's turn.
//!
//! The work is what is asserted: how many departed entries each call
//! drops from a queue of 100,000. A SLOWLOG backstop (100 ms) catches a
//! stall of another kind without failing on a loaded machine: a call that
//! takes 0.1 ms has been logged at 1.7 ms beside a second copy of the
//! suite, while the unbounded script took 460 ms. (The 1 ms bound on an
//! ordinary machine: `tests/dead_waiters.rs`.)

mod common;

use std::time::{Duration, Instant};

use common::{RedisServer, release_as, unique_key, wait_until};
use redislock_core::testing::protocol::call::Attempt;
use redislock_core::testing::protocol::keys::{self, LockKeys};
use redislock_core::testing::protocol::lock_calls::{self, Successor, Waiter};
use redislock_core::testing::protocol::step::Step;
use redislock_core::{Lock, LockOptions, OptionValue};

/// Departed waiters put in the queue: entries whose marks are gone.
const DEAD: usize = 100_000;

/// Most departed entries one script call may drop: the entries a call
/// looks at (`DEPARTED` in `scripts/lib/queue.lua`).
const PER_CALL: i64 = 64;

/// Slowest call the backstop accepts, in microseconds.
const SLOWLOG_BACKSTOP_US: &str = "100000";

#[test]
fn a_hundred_thousand_departed_waiters_cost_their_own_removal() {
    let server = RedisServer::start();
    let key = unique_key("dead-waiters");
    let name = String::from_utf8(key.clone()).unwrap();
    let queue = String::from_utf8(keys::queue_key(&key)).unwrap();
    let _: () = server.cmd(&["SET", &name, "holder", "PX", "30000"]);
    let mut con = server.client();
    for batch in 0..DEAD / 10_000 {
        let mut zadd = redis::cmd("ZADD");
        zadd.arg(&queue);
        for i in batch * 10_000..(batch + 1) * 10_000 {
            zadd.arg(i).arg(format!("dead-{i}"));
        }
        let _: i64 = zadd.query(&mut con).unwrap();
    }
    let _: () = server.cmd(&["PEXPIRE", &queue, "60000"]);
    let _: () = server.cmd(&[
        "CONFIG",
        "SET",
        "slowlog-log-slower-than",
        SLOWLOG_BACKSTOP_US,
    ]);
    let _: () = server.cmd(&["SLOWLOG", "RESET"]);
    let queued = || server.cmd::<i64>(&["ZCARD", &queue]);

    // One call of a waiter's step that finds the lock free, by hand: it
    // drops the departed waiters it looks at, and says "again".
    let counter = keys::fence_counter(b"", &key, false).unwrap();
    let lock_keys = LockKeys::new(key.clone(), counter);
    let stepper = Waiter {
        token: b"stepper",
        nonce: None,
        ttl_ms: 30_000,
        alive_ms: 1_000,
        fencing: false,
        arrival: lock_calls::arrival_now(),
    };
    let _: () = server.cmd(&["DEL", &name]);
    let before = queued();
    let step = lock_calls::wait_step(&lock_keys, &stepper, false, false, Attempt::First)
        .query(&mut con)
        .unwrap();
    assert_eq!(step, Step::Again);
    assert_eq!(before - queued(), PER_CALL, "a step dropped");
    let _: () = server.cmd(&["SET", &name, "holder", "PX", "30000"]);

    // A live waiter queues behind them all (retry_delay 5 s: only a
    // hand-over lets it in soon), then the holder releases: the release is
    // sent again until it has dropped every departed waiter, and hands the
    // lock to the live one.
    let dead_left = queued();
    let url = server.url();
    let k = key.clone();
    let waiter = std::thread::spawn(move || {
        let mut options = LockOptions::default();
        options
            .set("retry_delay", OptionValue::Number(5.0))
            .unwrap();
        let mut l = Lock::new(k, 5.0, &[url], options).unwrap();
        let got = l.acquire(Duration::from_secs(8)).unwrap();
        let at = Instant::now();
        assert!(l.release().unwrap());
        (got, at)
    });
    wait_until("the waiter queues", Duration::from_secs(5), || {
        queued() == dead_left + 1
    });
    let _: () = server.cmd(&["CONFIG", "RESETSTAT"]);
    let released = Instant::now();
    assert!(release_as(&server, &key, b"holder", Successor::HandOver));
    let calls = server.calls("evalsha") as i64;
    let (got, at) = waiter.join().unwrap();
    assert!(got);
    assert!(
        at - released < Duration::from_secs(3),
        "the live waiter entered {:?} after the release",
        at - released
    );
    assert!(
        calls >= dead_left / PER_CALL && calls <= dead_left / PER_CALL + 4,
        "{calls} calls for {dead_left} departed waiters"
    );
    // Every call since the reset: none slower than the backstop.
    let slow: Vec<redis::Value> = redis::cmd("SLOWLOG")
        .arg("GET")
        .arg(100)
        .query(&mut con)
        .unwrap();
    assert!(
        slow.is_empty(),
        "commands over {SLOWLOG_BACKSTOP_US} us: {slow:?}"
    );
    assert_eq!(queued(), 0, "every departed waiter dropped");
}
