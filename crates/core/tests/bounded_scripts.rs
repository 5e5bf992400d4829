//! No script does more than a constant amount of work per call, however
//! many waiters died in the queue: a release, a waiter's step and a
//! give-up each look at a few queue entries only, so Redis (single
//! threaded) never stalls its other clients for a lock's dead waiters.
//!
//! The work is what is asserted: how many dead entries each script call
//! drops from a queue of 100,000. A SLOWLOG backstop (20 ms) catches a
//! stall of another kind without failing on a loaded machine: a call that
//! takes 0.1 ms has been logged at 1.7 ms beside a second copy of the
//! suite, while the unbounded script took 460 ms.

mod common;

use std::time::{Duration, Instant};

use common::{RedisServer, never, release_as, unique_key, wait_until};
use redislock_core::protocol::call::Attempt;
use redislock_core::protocol::commands::{self, Queued, Successor, Waiter};
use redislock_core::protocol::keys::{self, LockKeys};
use redislock_core::{Lock, LockOptions, OptionValue};

/// Dead waiters put in the queue: entries whose marks are gone.
const DEAD: usize = 100_000;

/// Most dead entries one script call may drop: the entries a call looks at
/// (`SCAN` in `scripts/lib/queue.lua`).
const PER_CALL: i64 = 8;

/// Slowest call the backstop accepts, in microseconds.
const SLOWLOG_BACKSTOP_US: &str = "20000";

#[test]
fn a_hundred_thousand_dead_waiters_stall_no_command() {
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

    // Each script that looks for the first live waiter, called by hand: a
    // release, a waiter's step that finds the lock free, an abandon that
    // frees it. Each drops a few dead entries, never more than PER_CALL.
    let queued = || server.cmd::<i64>(&["ZCARD", &queue]);
    let counter = keys::fence_counter(b"", &key, false).unwrap();
    let lock_keys = LockKeys::new(key.clone(), counter);
    let stepper = Waiter {
        token: b"stepper",
        ttl_ms: 30_000,
        alive_ms: 1_000,
        fencing: false,
        arrival: commands::arrival_now(),
    };
    for round in 0..20 {
        let before = queued();
        assert!(release_as(&server, &key, b"holder", Successor::HandOver));
        let released = before - queued();

        let before = queued();
        let step = commands::wait_step(&lock_keys, &stepper, false, false, Attempt::First)
            .query(&mut con)
            .unwrap();
        assert!(matches!(step, Queued::Acquired { .. }), "{step:?}");
        let stepped = before - queued();

        let before = queued();
        let freed = commands::abandon(&lock_keys, stepper.token, Successor::HandOver)
            .query(&mut con)
            .unwrap();
        assert!(freed);
        let abandoned = before - queued();

        for (call, dropped) in [
            ("release", released),
            ("wait step", stepped),
            ("abandon", abandoned),
        ] {
            assert!(
                (1..=PER_CALL).contains(&dropped),
                "round {round}: a {call} dropped {dropped} dead entries (at most {PER_CALL})"
            );
        }
        let _: () = server.cmd(&["SET", &name, "holder", "PX", "30000"]);
    }

    // A live waiter queues behind them all, then the holder releases: the
    // release looks at 8 dead entries, wakes nobody, and the waiter finds
    // the lock free at its next step (retry_delay 0.2 s).
    let dead_left = queued();
    let url = server.url();
    let k = key.clone();
    let waiter = std::thread::spawn(move || {
        let mut options = LockOptions::default();
        options
            .set("retry_delay", OptionValue::Number(0.2))
            .unwrap();
        let mut l = Lock::new(k, 5.0, &[url], options).unwrap();
        let got = l.acquire(Duration::from_secs(5), &never).unwrap();
        let at = Instant::now();
        assert!(l.release().unwrap());
        (got, at)
    });
    wait_until("the waiter queues", Duration::from_secs(5), || {
        queued() == dead_left + 1
    });
    let released = Instant::now();
    assert!(release_as(&server, &key, b"holder", Successor::HandOver));
    let (got, at) = waiter.join().unwrap();
    assert!(got);
    assert!(
        at - released < Duration::from_secs(2),
        "{:?}",
        at - released
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
    let left: i64 = server.cmd(&["ZCARD", &queue]);
    assert!(
        left < DEAD as i64,
        "some dead entries were dropped ({left} left)"
    );
}
