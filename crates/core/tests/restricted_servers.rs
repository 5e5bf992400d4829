//! Servers that restrict scripts: `TIME` refused inside scripts (as on
//! ElastiCache Serverless), and scripts refused altogether.

mod common;

use std::time::{Duration, Instant};

use common::{RedisServer, lock, unique_key};
use redislock_core::LockError;

#[test]
fn blocking_waits_work_where_scripts_may_not_call_time() {
    let server = RedisServer::start_with(&["--rename-command", "TIME", ""]);
    let key = unique_key("no-time");
    let mut holder = lock(&server, &key, 5.0);
    assert!(holder.acquire(Duration::ZERO).unwrap());
    let url = server.url();
    let k = key.clone();
    let waiter = std::thread::spawn(move || {
        let mut options = redislock_core::LockOptions::default();
        options
            .set("retry_delay", redislock_core::OptionValue::Number(0.1))
            .unwrap();
        let mut l = redislock_core::Lock::new(k, 5.0, &[url], options).unwrap();
        let started = Instant::now();
        let got = l.acquire(Duration::from_secs(5)).unwrap();
        assert!(l.release().unwrap());
        (got, started.elapsed())
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(holder.release().unwrap());
    let (got, waited) = waiter.join().unwrap();
    assert!(got, "the waiter got the lock");
    assert!(waited < Duration::from_secs(2), "{waited:?}");
    // A wait that runs out leaves the queue on such a server too (another
    // host name: a different scope, so no reentrancy with `holder`).
    assert!(holder.acquire(Duration::ZERO).unwrap());
    let other_url = server.url().replace("127.0.0.1", "localhost");
    let mut other = redislock_core::Lock::new(
        key.clone(),
        5.0,
        &[other_url],
        redislock_core::LockOptions::default(),
    )
    .unwrap();
    assert!(!other.acquire(Duration::from_millis(300)).unwrap());
    let queue: i64 = server.cmd(&["ZCARD", &format!("{}~~q", String::from_utf8_lossy(&key))]);
    assert_eq!(queue, 0);
    assert!(holder.release().unwrap());
}

#[test]
fn no_lock_is_taken_where_scripts_are_refused() {
    let server = RedisServer::start_with(&common::NO_SCRIPTS);
    let key = unique_key("no-scripts");
    for wait in [Duration::ZERO, Duration::from_millis(200)] {
        let mut l = lock(&server, &key, 5.0);
        let err = l.acquire(wait).unwrap_err();
        let message = err.to_string();
        assert!(matches!(err, LockError::Server { .. }), "{err:?}");
        assert!(message.contains("refuses EVALSHA"), "{message}");
        assert!(message.contains("needs EVAL/EVALSHA"), "{message}");
        let exists: i64 = server.cmd(&["EXISTS", &String::from_utf8_lossy(&key)]);
        assert_eq!(exists, 0, "no lock was taken (wait {wait:?})");
    }
}
