//! Option `replicas`: an acquire, refresh or hand-over counts only once
//! that many replicas acknowledged it (`WAIT` in the same request); with
//! fewer, the acquire is undone and the error says how many did.

mod common;

use std::time::{Duration, Instant};

use common::{RedisServer, release_as, unique_key};
use redislock_core::testing::protocol::lock_calls::Successor;
use redislock_core::{ConnectionFailure, Lock, LockError, LockOptions, OptionValue};

fn options(replicas: u32, read_timeout: f64) -> LockOptions {
    let mut options = LockOptions::default();
    options
        .set("replicas", OptionValue::Number(f64::from(replicas)))
        .unwrap();
    options
        .set("read_timeout", OptionValue::Number(read_timeout))
        .unwrap();
    options
}

/// A master and one replica in sync.
fn replicated() -> (RedisServer, RedisServer) {
    let master = RedisServer::start_with(&["--repl-diskless-sync-delay", "0"]);
    let port = master.port.to_string();
    let replica = RedisServer::start_with(&["--replicaof", "127.0.0.1", &port]);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        // In sync, and counted as online by the master (WAIT counts only
        // those).
        let info: String = replica.cmd(&["INFO", "replication"]);
        let seen: String = master.cmd(&["INFO", "replication"]);
        if info.contains("master_link_status:up") && seen.contains("state=online") {
            break;
        }
        assert!(Instant::now() < deadline, "the replica never synced");
        std::thread::sleep(Duration::from_millis(20));
    }
    (master, replica)
}

/// The replica's acknowledged offset and the master's own, as the master
/// reports them.
fn replication_offsets(master: &RedisServer) -> (i64, i64) {
    let info: String = master.cmd(&["INFO", "replication"]);
    let field = |line: &str, name: &str| -> i64 {
        line.split([',', ':'])
            .find_map(|part| part.strip_prefix(name))
            .unwrap()
            .parse()
            .unwrap()
    };
    let replica = info.lines().find(|l| l.starts_with("slave0:")).unwrap();
    let own = info
        .lines()
        .find_map(|l| l.strip_prefix("master_repl_offset:"))
        .unwrap();
    (field(replica, "offset="), own.trim().parse().unwrap())
}

fn text(key: &[u8]) -> &str {
    std::str::from_utf8(key).unwrap()
}

#[test]
fn an_acquire_is_on_the_replica_the_moment_it_returns() {
    let (master, replica) = replicated();
    for i in 0..50 {
        let key = unique_key(&format!("replicas-{i}"));
        let mut lock = Lock::new(key.clone(), 10.0, &[master.url()], options(1, 2.0)).unwrap();
        let (_, before) = replication_offsets(&master);
        assert!(lock.acquire(Duration::ZERO).unwrap());
        // The master knows the replica acknowledged the acquire's write
        // (without WAIT, the replica's acknowledgement comes up to a
        // second later).
        let (acked, _) = replication_offsets(&master);
        assert!(
            acked > before,
            "round {i}: replica at {acked}, master was at {before}"
        );
        let token = String::from_utf8(lock.token().unwrap()).unwrap();
        // No wait at all: read the replica at once.
        let on_replica: Option<String> = replica.cmd(&["GET", text(&key)]);
        assert_eq!(on_replica.as_deref(), Some(token.as_str()), "round {i}");
        assert!(lock.refresh(Some(20.0)).unwrap());
        let pttl: i64 = replica.cmd(&["PTTL", text(&key)]);
        assert!(pttl > 10_000, "the refresh reached the replica: {pttl}");
        assert!(lock.release().unwrap());
    }
}

#[test]
fn a_hand_over_is_on_the_replica_when_the_waiter_returns() {
    let (master, replica) = replicated();
    let key = unique_key("replicas-handover");
    let name = text(&key).to_owned();
    let held: Option<String> = master.cmd(&["SET", &name, "holder", "NX", "PX", "30000"]);
    assert!(held.is_some());
    let url = master.url();
    let k = key.clone();
    let waiter = std::thread::spawn(move || {
        let mut l = Lock::new(k, 10.0, &[url], options(1, 2.0)).unwrap();
        assert!(l.acquire(Duration::from_secs(10)).unwrap());
        let token = String::from_utf8(l.token().unwrap()).unwrap();
        (token, l)
    });
    let queue = format!("{name}~~q");
    let deadline = Instant::now() + Duration::from_secs(5);
    while master.cmd::<i64>(&["ZCARD", &queue]) == 0 {
        assert!(Instant::now() < deadline, "the waiter never queued");
        std::thread::sleep(Duration::from_millis(2));
    }
    let (_, before) = replication_offsets(&master);
    assert!(release_as(&master, &key, b"holder", Successor::HandOver));
    let (token, mut l) = waiter.join().unwrap();
    let (acked, _) = replication_offsets(&master);
    assert!(acked > before, "replica at {acked}, master was at {before}");
    let on_replica: Option<String> = replica.cmd(&["GET", &name]);
    assert_eq!(on_replica.as_deref(), Some(token.as_str()));
    assert!(l.release().unwrap());
}

#[test]
fn too_few_replicas_undo_the_acquire_and_say_how_many_acknowledged() {
    let (master, replica) = replicated();
    let key = unique_key("replicas-short");
    // Two asked for, one exists.
    let mut lock = Lock::new(key.clone(), 10.0, &[master.url()], options(2, 2.0)).unwrap();
    let started = Instant::now();
    let err = lock.acquire(Duration::ZERO).unwrap_err();
    let took = started.elapsed();
    println!("acquire with 1 of 2 replicas failed after {took:?}: {err}");
    assert!(
        matches!(
            err,
            LockError::Connection {
                kind: ConnectionFailure::NotReplicated,
                ..
            }
        ),
        "{err:?}"
    );
    // 1 normally; 0 when the machine is so busy that the replica's
    // acknowledgement missed WAIT's 1.5 s. (A 0.4 s read timeout gave WAIT
    // 300 ms and its reply only 100 ms of margin: too little on a busy
    // machine, where the reply then timed out.)
    let message = err.to_string();
    assert!(
        message.contains("only 1 of 2 replicas acknowledged")
            || message.contains("only 0 of 2 replicas acknowledged"),
        "{message}"
    );
    assert!(took < Duration::from_secs(4), "{took:?}");
    assert_eq!(master.cmd::<i64>(&["EXISTS", text(&key)]), 0, "undone");
    assert!(!lock.is_acquired().unwrap());

    // A frozen replica acknowledges nothing.
    replica.pause();
    let mut lock = Lock::new(key.clone(), 10.0, &[master.url()], options(1, 2.0)).unwrap();
    let err = lock.acquire(Duration::ZERO).unwrap_err();
    assert!(err.to_string().contains("only 0 of 1 replicas"), "{err}");
    assert_eq!(master.cmd::<i64>(&["EXISTS", text(&key)]), 0, "undone");
    // A try that did not win needs no acknowledgement.
    let held: Option<String> = master.cmd(&["SET", text(&key), "other", "PX", "30000"]);
    assert!(held.is_some());
    assert!(!lock.acquire(Duration::ZERO).unwrap());
    replica.resume();
}

#[test]
fn replicas_are_refused_over_redlock_and_checked() {
    let urls = vec![
        "redis://127.0.0.1:1".to_owned(),
        "redis://127.0.0.1:2".to_owned(),
    ];
    let err = Lock::new(b"k".to_vec(), 1.0, &urls, options(1, 1.0)).unwrap_err();
    assert!(matches!(err, LockError::Unsupported(_)), "{err:?}");
    assert!(err.to_string().contains("replicas"), "{err}");
    let mut o = LockOptions::default();
    for bad in [-1.0, 1.5, f64::NAN, 1e9] {
        let err = o.set("replicas", OptionValue::Number(bad)).unwrap_err();
        assert!(err.to_string().contains("whole number"), "{err}");
    }
}

#[test]
fn a_refused_wait_undoes_the_acquire() {
    // A server (a managed service, a proxy) that refuses WAIT: the acquire
    // cannot be confirmed on any replica, so it is undone and says why.
    let master = RedisServer::start_with(&["--rename-command", "WAIT", ""]);
    let key = unique_key("replicas-no-wait");
    let mut lock = Lock::new(key.clone(), 10.0, &[master.url()], options(1, 2.0)).unwrap();
    let err = lock.acquire(Duration::ZERO).unwrap_err();
    assert!(
        matches!(
            err,
            LockError::Connection {
                kind: ConnectionFailure::NotReplicated,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("WAIT"), "{err}");
    assert_eq!(master.cmd::<i64>(&["EXISTS", text(&key)]), 0, "undone");
    assert!(!lock.is_acquired().unwrap());
}
