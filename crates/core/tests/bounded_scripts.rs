//! No script does more than a constant amount of work per call, however
//! many waiters died in the queue: a release, a waiter's step and a
//! give-up each look at a few queue entries only, so Redis (single
//! threaded) never stalls its other clients for a lock's dead waiters.

mod common;

use std::time::{Duration, Instant};

use common::{RedisServer, never, release_as, unique_key, wait_until};
use redislock_core::protocol::commands::Successor;
use redislock_core::protocol::keys;
use redislock_core::{Lock, LockOptions, OptionValue};

/// Dead waiters put in the queue: entries whose marks are gone.
const DEAD: usize = 100_000;

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
    let _: () = server.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "1000"]);
    let _: () = server.cmd(&["SLOWLOG", "RESET"]);

    // A live waiter queues behind them all, then the holder releases: the
    // release looks at 8 dead entries, wakes nobody, and the waiter finds
    // the lock free at its next step (retry_delay 0.2 s).
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
        let n: i64 = server.cmd(&["ZCARD", &queue]);
        n == DEAD as i64 + 1
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
    // Every call since the reset: none slower than 1 ms.
    let slow: Vec<redis::Value> = redis::cmd("SLOWLOG")
        .arg("GET")
        .arg(100)
        .query(&mut con)
        .unwrap();
    assert!(slow.is_empty(), "commands over 1 ms: {slow:?}");
    let left: i64 = server.cmd(&["ZCARD", &queue]);
    assert!(
        left < DEAD as i64,
        "some dead entries were dropped ({left} left)"
    );
}
