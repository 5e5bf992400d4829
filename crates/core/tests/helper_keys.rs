//! The keys a lock leaves in Redis: no lock name can meet another lock's
//! helper keys, every helper key is gone within a bounded time after its
//! last use, and fencing needs one counter per prefix and server, not one
//! per lock name.

mod common;

use std::time::Duration;

use common::{RedisServer, release_as, unique_key};
use redislock_core::testing::protocol::call::Attempt;
use redislock_core::testing::protocol::keys::LockKeys;
use redislock_core::testing::protocol::lock_calls::{self, Successor, Waiter};
use redislock_core::testing::protocol::step::Step;
use redislock_core::{Lock, LockError, LockOptions, OptionValue};

fn keys(server: &RedisServer, pattern: &str) -> Vec<String> {
    let mut keys: Vec<String> = server.cmd(&["KEYS", pattern]);
    keys.sort();
    keys
}

fn fenced(server: &RedisServer, key: &[u8]) -> Lock {
    let mut options = LockOptions::default();
    options.set("fencing", OptionValue::Bool(true)).unwrap();
    options
        .set("prefix", OptionValue::Text(b"fk:".to_vec()))
        .unwrap();
    // Each object competes like another process would.
    options.set("reentrant", OptionValue::Bool(false)).unwrap();
    Lock::new(key.to_vec(), 5.0, &[server.url()], options).unwrap()
}

/// Names that once shared keys with another lock's helpers (`job~r` was
/// the released-token log of `job`, `job~f` its fence counter, `job~q` its
/// queue) are plain, independent locks; the separator of helper keys,
/// `~~`, is refused in names with a ValueError that says why.
#[test]
fn no_lock_name_meets_another_locks_helper_keys() {
    let server = RedisServer::start();
    let base = unique_key("collide");
    let name = |suffix: &str| [&base[..], suffix.as_bytes()].concat();
    let mut job = fenced(&server, &base);
    let mut others: Vec<Lock> = ["~r", "~f", "~q", "~a~x", "~w~x"]
        .iter()
        .map(|s| fenced(&server, &name(s)))
        .collect();
    for other in &mut others {
        assert!(other.acquire(Duration::ZERO).unwrap());
    }
    // `job` is taken, waited for, handed over and released while they hold.
    assert!(job.acquire(Duration::ZERO).unwrap());
    let mut waiter = fenced(&server, &base);
    assert!(!waiter.acquire(Duration::from_millis(100)).unwrap());
    assert!(job.release().unwrap(), "no WRONGTYPE from a neighbour");
    assert!(job.acquire(Duration::from_millis(500)).unwrap());
    assert!(job.release().unwrap());
    for other in &mut others {
        assert!(other.is_acquired().unwrap() && other.release().unwrap());
    }
    for bad in ["a~~b", "~~", "x~~"] {
        let err = Lock::new(bad.into(), 5.0, &[server.url()], LockOptions::default()).unwrap_err();
        assert!(
            matches!(&err, LockError::InvalidArgument { param, reason }
                if param == "key" && reason.contains("~~")),
            "{bad}: {err:?}"
        );
    }
    let mut options = LockOptions::default();
    options
        .set("prefix", OptionValue::Text(b"app~".to_vec()))
        .unwrap();
    let err = Lock::new(b"~job".to_vec(), 5.0, &[server.url()], options).unwrap_err();
    assert!(err.to_string().contains("prefix + key"), "{err}");
}

/// 1,000 lock names used with fencing leave one key: the prefix's counter.
/// Every other helper key of a lock (queue, marks, wake-ups, the hold's
/// fencing token) is gone once it is released.
#[test]
fn fencing_many_names_leaves_one_counter() {
    let server = RedisServer::start();
    let base = unique_key("many");
    let mut last = 0;
    for i in 0..1000 {
        let mut l = fenced(
            &server,
            format!("{}:{i}", String::from_utf8_lossy(&base)).as_bytes(),
        );
        assert!(l.acquire(Duration::ZERO).unwrap());
        let fence = l.fencing_token().unwrap();
        assert!(fence > last);
        last = fence;
        assert!(l.release().unwrap());
    }
    assert_eq!(keys(&server, "fk:*"), vec!["fk:~~fence".to_owned()]);
}

/// The helper keys of a contended lock expire by themselves when their
/// owners vanish without a word: a waiter's queue entry and mark within its
/// alive window, a wake-up a second after its push, the lock with the
/// lease it was handed (the fencing token comes with the waiter's claim,
/// which never came).
#[test]
fn helper_keys_of_vanished_owners_expire() {
    let server = RedisServer::start();
    let key = unique_key("vanish");
    let _: () = server.cmd(&[
        "SET",
        &String::from_utf8_lossy(&key),
        "holder",
        "PX",
        "5000",
    ]);
    let keys_of_lock = LockKeys::new(key.clone(), b"~~fence".to_vec());
    let waiter = Waiter {
        token: b"w1",
        nonce: None,
        ttl_ms: 5_000,
        alive_ms: 300,
        fencing: true,
        arrival: 1,
    };
    let step = lock_calls::wait_step(&keys_of_lock, &waiter, true, false, Attempt::First);
    let queued = step.query(&mut server.client()).unwrap();
    assert!(matches!(queued, Step::Waiting { .. }), "{queued:?}");
    // The holder releases: the lock is handed to the starving waiter, which
    // is woken... and has vanished before it claimed it (and its token).
    assert!(release_as(&server, &key, b"holder", Successor::HandOver));
    let pattern = format!("{}*", String::from_utf8_lossy(&key));
    let left = keys(&server, &pattern);
    assert_eq!(left.len(), 3, "lock, the mark, the wake-up: {left:?}");
    std::thread::sleep(Duration::from_millis(2_500));
    assert_eq!(keys(&server, &pattern), Vec::<String>::new());
}

/// A prefix is bounded (a 200 MB prefix once took 10 s to send), may not
/// contain `~~`, and on Cluster a brace in it that spoils the hash tag is
/// blamed on the prefix, not on the key.
#[test]
fn prefixes_are_bounded_and_blamed_for_their_own_faults() {
    let set = |options: &mut LockOptions, prefix: &[u8]| {
        options.set("prefix", OptionValue::Text(prefix.to_vec()))
    };
    let mut options = LockOptions::default();
    for bad in [vec![b'p'; 1025], b"a~~b".to_vec()] {
        let err = set(&mut options, &bad).unwrap_err();
        assert!(
            matches!(&err, LockError::InvalidArgument { param, .. } if param.contains("prefix")),
            "{err:?}"
        );
    }
    set(&mut options, &[b'p'; 1024]).unwrap();
    let mut cluster = LockOptions::default();
    cluster.set("cluster", OptionValue::Bool(true)).unwrap();
    set(&mut cluster, b"app{}:").unwrap();
    let err = Lock::new(
        b"job".to_vec(),
        5.0,
        &["redis://127.0.0.1:1".into()],
        cluster,
    )
    .unwrap_err();
    assert!(
        matches!(&err, LockError::InvalidArgument { param, .. } if param.contains("prefix")),
        "{err}"
    );
}
