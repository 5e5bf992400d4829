//! What the core's tests share about the lock: keys, locks on a fixture
//! server, the release script as another holder, forks while renewing,
//! child processes to pause or kill, the server's command statistics, and
//! the fault proxy. Servers, Sentinels and Clusters come from the one
//! fixture, `redislock-fixture` (re-exported here).

#![allow(dead_code, unused_imports)]

pub mod child;
pub mod php_host;
pub mod proxy;

pub use redislock_fixture::{
    PORTS, RedisServer, cluster, fresh_dir, make_ca, make_certificates, openssl, poll_until,
    sentinel, wait_until,
};

use std::time::{Duration, Instant};

use redislock_core::testing::protocol::call::Attempt;
use redislock_core::testing::protocol::keys::{self, LockKeys};
use redislock_core::testing::protocol::lock_calls::{self, Released, Successor};
use redislock_core::{Lock, LockOptions, Semaphore};

/// A unique key per call, so tests never share state.
pub fn unique_key(name: &str) -> Vec<u8> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "test:{name}:{}:{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
    .into_bytes()
}

/// A lock on `server` with default options.
pub fn lock(server: &RedisServer, key: &[u8], ttl: f64) -> Lock {
    Lock::new(key.to_vec(), ttl, &[server.url()], LockOptions::default()).unwrap()
}

/// A semaphore on `server` with default options.
pub fn semaphore(server: &RedisServer, name: &[u8], permits: i64, ttl: f64) -> Semaphore {
    Semaphore::new(
        name.to_vec(),
        permits,
        ttl,
        &[server.url()],
        LockOptions::default(),
    )
    .unwrap()
}

/// The tokens of the readers of lock `key` in Redis: a lone reader's from
/// the lock key (`~~read:<token>:<lease end>`), else the members of
/// `key~~r`.
pub fn reader_tokens(con: &mut redis::Connection, key: &[u8]) -> Vec<Vec<u8>> {
    let value: Option<Vec<u8>> = redis::cmd("GET").arg(key).query(con).unwrap();
    if let Some(lone) = value.as_deref().and_then(|v| v.strip_prefix(b"~~read:")) {
        let token = lone.split(|&b| b == b':').next().unwrap_or_default();
        return vec![token.to_vec()];
    }
    redis::cmd("ZRANGE")
        .arg(keys::readers_key(key))
        .arg(0)
        .arg(-1)
        .query(con)
        .unwrap()
}

/// Waiters in the queue of the lock `key` on `server` (`K~~q`).
pub fn queue_len(server: &RedisServer, key: &[u8]) -> i64 {
    redis::cmd("ZCARD")
        .arg(keys::queue_key(key))
        .query(&mut server.client())
        .unwrap()
}

/// redis-server arguments that take scripts away (`EVAL` and `EVALSHA`
/// renamed to nothing).
pub const NO_SCRIPTS: [&str; 6] = [
    "--rename-command",
    "EVAL",
    "",
    "--rename-command",
    "EVALSHA",
    "",
];

/// The value of `key` on `server`, if any.
pub fn get(server: &RedisServer, key: &[u8]) -> Option<Vec<u8>> {
    redis::cmd("GET")
        .arg(key)
        .query(&mut server.client())
        .unwrap()
}

/// Whether `key` exists on `server`.
pub fn exists(server: &RedisServer, key: &[u8]) -> bool {
    let n: i64 = redis::cmd("EXISTS")
        .arg(key)
        .query(&mut server.client())
        .unwrap();
    n == 1
}

/// Releases `key` held by `token` with the real release script, as that
/// holder's first try (what its `release()` sends to one server). True
/// when `token` held it.
pub fn release_as(server: &RedisServer, key: &[u8], token: &[u8], successor: Successor) -> bool {
    // A key with a hash tag is a Cluster lock: its counter needs that slot.
    let cluster = keys::hash_tag(key) != key;
    let counter = keys::fence_counter(b"", key, cluster).unwrap();
    let keys = LockKeys::new(key.to_vec(), counter);
    lock_calls::release(&keys, token, None, successor, false, Attempt::First)
        .query(&mut server.client())
        .unwrap()
        == Released::Yes
}

/// Forks `forks` children, one every few milliseconds, while this process's
/// renewal thread renews a hold on `urls` (ttl 1 s: a renewal about every
/// 330 ms, which asks a Sentinel for its master or a Cluster for its map
/// when its cache is stale; 0.3 s leases lost a renewal on a loaded
/// machine beside a second copy of the suite, and 0.6 s ones beside two,
/// in the test command's flake check). Each child builds a lock of its own on the
/// same servers, takes and releases it, and exits; a child that has not
/// exited 10 s later is hung (a lock the renewal thread held at fork time,
/// never released in the child) and is killed. Returns how many hung.
pub fn forks_hung_while_renewing(urls: &[String], options: &LockOptions, forks: usize) -> usize {
    let mut renewed = options.clone();
    renewed
        .set("auto_renew", redislock_core::OptionValue::Bool(true))
        .unwrap();
    let mut held = Lock::new(unique_key("fork-renewed"), 1.0, urls, renewed).unwrap();
    assert!(held.acquire(Duration::ZERO).unwrap());
    let mut children = Vec::new();
    for i in 0..forks {
        let key = unique_key(&format!("fork-child-{i}"));
        // SAFETY: the child only runs the lock code (fork-safe by design:
        // per-process state) and leaves with _exit, running no destructor.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let ok = Lock::new(key, 5.0, urls, options.clone())
                .and_then(|mut l| Ok(l.acquire(Duration::ZERO)? && l.release()?))
                .unwrap_or(false);
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        children.push(pid);
        std::thread::sleep(Duration::from_millis(5));
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut hung = 0;
    let mut failed = 0;
    for pid in children {
        let mut status = 0;
        loop {
            // SAFETY: waiting for our own child.
            let done = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            if done == pid {
                failed += usize::from(!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0));
                break;
            }
            if Instant::now() >= deadline {
                hung += 1;
                assert!(pid > 1);
                // SAFETY: our own child, read from fork() above.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    libc::waitpid(pid, &mut status, 0);
                }
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    assert!(
        held.is_acquired().unwrap(),
        "the parent's hold stayed renewed"
    );
    assert!(held.release().unwrap());
    assert_eq!(failed, 0, "children whose lock failed");
    hung
}

/// `INFO commandstats`' calls and average microseconds of `command`.
pub fn command_stats(server: &RedisServer, command: &str) -> (u64, f64) {
    let info: String = server.cmd(&["INFO", "commandstats"]);
    let prefix = format!("cmdstat_{command}:");
    let line = info
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or("");
    let field = |name: &str| {
        line.split(',')
            .find_map(|f| f.strip_prefix(name))
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (field("calls=") as u64, field("usec_per_call="))
}

/// A competitor's turn: `c` takes the lock (waiting up to 4 s: it must get
/// it), holds it 1.5 s and releases it. When it got it and when it let go,
/// counted from `began`.
pub fn competitor_turn(c: &mut Lock, began: Instant) -> (Duration, Duration) {
    assert!(
        c.acquire(Duration::from_secs(4)).unwrap(),
        "the competitor got the lock once the waiter's lease ended"
    );
    let got = began.elapsed();
    std::thread::sleep(Duration::from_millis(1_500));
    let released = began.elapsed();
    assert!(c.release().unwrap());
    (got, released)
}

/// Asserts that a waiter whose acquire returned `believed` (true: it holds)
/// at `at` did not believe so while a competitor held the same lock
/// (`held`: from when it got it to when it let go, on the same clock).
/// A late win's only proof is a reply read after its lease ended.
pub fn never_believed_while_held(believed: bool, at: Duration, held: (Duration, Duration)) {
    let (from, to) = held;
    assert!(
        !believed || at < from || at > to,
        "the waiter's acquire returned true at {at:?}, while the competitor held the lock \
         ({from:?} to {to:?}): its only proof a reply read after its lease ended"
    );
}
