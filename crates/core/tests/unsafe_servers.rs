//! What the server under a lock can do to it. A server with an evicting
//! `maxmemory` can evict a held lock, one without an append-only file
//! forgets locks when it restarts: option `unsafe_server` records such a
//! server (`warn`, the default), refuses it (`refuse`: nothing is taken)
//! or does not look (`ignore`); `INFO` is read once per server and
//! process, and one refused by the ACL leaves the server unknown, not
//! unsafe. A server out of memory (`maxmemory` with `noeviction`) refuses
//! every write; an acquire there says the server is full, and nothing is
//! held or left behind.

mod common;

use std::time::Duration;

use common::{RedisServer, unique_key};
use redislock_core::{Lock, LockError, LockOptions, OptionValue, Severity, stats};

/// A server of 2 MB that evicts nothing, filled up with cache entries.
fn full_server() -> RedisServer {
    let server =
        RedisServer::start_with(&["--maxmemory", "2mb", "--maxmemory-policy", "noeviction"]);
    let filler = "x".repeat(64 * 1024);
    for i in 0.. {
        let set: redis::RedisResult<()> = redis::cmd("SET")
            .arg(format!("cache:{i}"))
            .arg(&filler)
            .query(&mut server.client());
        if set.is_err() {
            break;
        }
        assert!(i < 1_000, "the server never filled up");
    }
    server
}

#[test]
fn an_acquire_on_a_full_server_says_it_is_full_and_takes_nothing() {
    let server = full_server();
    let key = unique_key("oom");
    for wait in [Duration::ZERO, Duration::from_millis(200)] {
        let mut lock =
            Lock::new(key.clone(), 10.0, &[server.url()], LockOptions::default()).unwrap();
        let err = lock.acquire(wait).unwrap_err();
        let message = err.to_string();
        println!("wait {wait:?}: {message}");
        assert!(matches!(err, LockError::Server { .. }), "{err:?}");
        assert!(message.contains("the server is full"), "{message}");
        assert!(message.contains("no lock was taken"), "{message}");
        assert!(!common::exists(&server, &key), "nothing held");
        let left: Vec<String> =
            server.cmd(&["KEYS", &format!("{}*", String::from_utf8_lossy(&key))]);
        assert!(left.is_empty(), "nothing left behind: {left:?}");
    }
}

/// `INFO` calls the server has run (the fixture asks it once itself).
fn info_calls(server: &RedisServer) -> u64 {
    common::command_stats(server, "info").0
}

/// Options that refuse a server able to lose a held lock by itself.
fn refusing() -> LockOptions {
    let mut options = LockOptions::default();
    options
        .set("unsafe_server", OptionValue::Text(b"refuse".to_vec()))
        .unwrap();
    options
}

/// A server with an append-only file (so a restart forgets nothing) and
/// `extra`.
fn persistent(extra: &[&str]) -> RedisServer {
    let mut args = vec!["--appendonly", "yes", "--appendfsync", "always"];
    args.extend_from_slice(extra);
    RedisServer::start_with(&args)
}

/// Every policy that evicts: a held lock's key has a ttl, so the
/// `volatile-*` ones evict it too.
const EVICTING: [&str; 7] = [
    "allkeys-lru",
    "allkeys-lfu",
    "allkeys-random",
    "volatile-lru",
    "volatile-lfu",
    "volatile-random",
    "volatile-ttl",
];

#[test]
fn an_evicting_server_is_refused_under_refuse_for_every_policy() {
    for policy in EVICTING {
        let server = persistent(&["--maxmemory", "64mb", "--maxmemory-policy", policy]);
        let key = unique_key("evicting");
        let mut lock = Lock::new(key.clone(), 10.0, &[server.url()], refusing()).unwrap();
        let err = lock.acquire(Duration::ZERO).unwrap_err();
        let message = err.to_string();
        assert!(matches!(err, LockError::Unsafe(_)), "{policy}: {err:?}");
        for part in [
            "option \"unsafe_server\" is \"refuse\"",
            &format!("maxmemory-policy {policy}"),
            "no lock was taken",
            "noeviction",
        ] {
            assert!(message.contains(part), "{policy}: {message}");
        }
        assert!(!common::exists(&server, &key), "{policy}: nothing held");
        // A semaphore's permit and a read hold are refused alike.
        let mut reader = Lock::new(key.clone(), 10.0, &[server.url()], refusing()).unwrap();
        assert!(matches!(
            reader.acquire_read(Duration::ZERO),
            Err(LockError::Unsafe(_))
        ));
        let mut sem =
            redislock_core::Semaphore::new(key.clone(), 2, 10.0, &[server.url()], refusing())
                .unwrap();
        assert!(matches!(
            sem.acquire(Duration::ZERO),
            Err(LockError::Unsafe(_))
        ));
    }
}

#[test]
fn warn_takes_the_lock_and_records_the_server_once() {
    let server = persistent(&["--maxmemory", "64mb", "--maxmemory-policy", "volatile-lru"]);
    let before = info_calls(&server);
    for _ in 0..3 {
        let mut lock = Lock::new(
            unique_key("warned"),
            10.0,
            &[server.url()],
            LockOptions::default(),
        )
        .unwrap();
        assert!(lock.acquire(Duration::ZERO).unwrap());
        assert!(lock.release().unwrap());
    }
    let name = format!("127.0.0.1:{}", server.port);
    let found: Vec<_> = stats::servers::list()
        .into_iter()
        .filter(|u| u.server.contains(&name))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].reason, "eviction");
    assert!(
        found[0].detail.contains("volatile-lru"),
        "{}",
        found[0].detail
    );
    // (The look at commandstats is an INFO call of its own.)
    assert_eq!(
        info_calls(&server) - before,
        2,
        "INFO read once per server and process"
    );
}

#[test]
fn a_server_without_an_append_only_file_is_refused_for_its_restarts() {
    let server = RedisServer::start();
    let mut lock = Lock::new(unique_key("no-aof"), 10.0, &[server.url()], refusing()).unwrap();
    let message = lock.acquire(Duration::ZERO).unwrap_err().to_string();
    assert!(message.contains("no append-only file"), "{message}");
    assert!(message.contains("appendonly yes"), "{message}");
}

#[test]
fn a_safe_server_is_used_and_an_unreadable_one_is_not_taken_for_unsafe() {
    let safe = persistent(&["--maxmemory", "64mb", "--maxmemory-policy", "noeviction"]);
    let mut lock = Lock::new(unique_key("safe"), 10.0, &[safe.url()], refusing()).unwrap();
    assert!(lock.acquire(Duration::ZERO).unwrap());
    assert!(lock.release().unwrap());
    // INFO refused by the ACL: unknown, not unsafe (the server has no
    // append-only file, which only INFO would tell).
    let server = RedisServer::start();
    let _: () = server.cmd(&[
        "ACL", "SETUSER", "no-info", "reset", "on", ">pw", "~*", "&*", "+@all", "-info",
    ]);
    let url = server.url().replacen("redis://", "redis://no-info:pw@", 1);
    let mut lock = Lock::new(unique_key("unknown"), 10.0, &[url], refusing()).unwrap();
    assert!(lock.acquire(Duration::ZERO).unwrap());
    assert!(lock.release().unwrap());
}

#[test]
fn ignore_neither_reads_nor_refuses() {
    let server =
        RedisServer::start_with(&["--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru"]);
    let before = info_calls(&server);
    let mut options = LockOptions::default();
    options
        .set("unsafe_server", OptionValue::Text(b"ignore".to_vec()))
        .unwrap();
    let mut lock = Lock::new(unique_key("ignored"), 10.0, &[server.url()], options).unwrap();
    assert!(lock.acquire(Duration::ZERO).unwrap());
    assert!(lock.release().unwrap());
    assert_eq!(
        info_calls(&server) - before,
        1,
        "INFO never sent (but to look)"
    );
}

#[test]
fn inspect_and_a_checkup_name_each_finding_and_what_the_server_has() {
    let evicting = persistent(&["--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lfu"]);
    let lock = Lock::new(
        unique_key("checkup"),
        10.0,
        &[evicting.url()],
        LockOptions::default(),
    )
    .unwrap();
    let seen = lock.inspect().unwrap();
    let reasons: Vec<&str> = seen.unsafe_servers.iter().map(|u| u.reason).collect();
    assert_eq!(reasons, ["eviction"]);
    let nodes = lock.checkup().unwrap();
    let [node] = &nodes[..] else {
        panic!("one server: {nodes:?}")
    };
    assert_eq!(node.verdict(), Severity::Unsafe);
    assert_eq!(node.maxmemory, Some(64 << 20));
    assert_eq!(node.maxmemory_policy.as_deref(), Some("allkeys-lfu"));
    assert_eq!(
        (node.aof, node.role.as_deref()),
        (Some(true), Some("master"))
    );
    assert!(node.round_trip.is_some());
    let found: Vec<(&str, &str)> = node
        .findings
        .iter()
        .map(|f| (f.severity.name(), f.reason))
        .collect();
    assert_eq!(found, [("unsafe", "eviction")]);
    for capability in [
        &node.scripts,
        &node.time_in_scripts,
        &node.client_unblock,
        &node.acl,
    ] {
        assert_eq!(capability.name(), "yes", "{capability:?}");
    }

    // Safe, on every Redlock master.
    let masters: Vec<RedisServer> = (0..3).map(|_| persistent(&[])).collect();
    let urls: Vec<String> = masters.iter().map(RedisServer::url).collect();
    let lock = Lock::new(unique_key("checkup"), 10.0, &urls, LockOptions::default()).unwrap();
    let nodes = lock.checkup().unwrap();
    assert_eq!(nodes.len(), 3);
    assert!(
        nodes
            .iter()
            .all(|n| n.verdict() == Severity::Note && n.findings.is_empty())
    );
    assert!(lock.inspect().unwrap().unsafe_servers.is_empty());
}

#[test]
fn a_checkup_says_unknown_where_it_cannot_read_and_no_where_refused() {
    // INFO refused: unknown, never safe.
    let server = persistent(&[]);
    let _: () = server.cmd(&[
        "ACL", "SETUSER", "no-info", "reset", "on", ">pw", "~*", "&*", "+@all", "-info",
    ]);
    let url = server.url().replacen("redis://", "redis://no-info:pw@", 1);
    let lock = Lock::new(unique_key("checkup"), 10.0, &[url], LockOptions::default()).unwrap();
    let nodes = lock.checkup().unwrap();
    assert_eq!(nodes[0].verdict(), Severity::Unknown);
    assert_eq!(nodes[0].findings[0].reason, "info_refused");
    assert_eq!(nodes[0].maxmemory_policy, None);
    // No scripts: refused, named.
    let scriptless = persistent(&common::NO_SCRIPTS);
    let lock = Lock::new(
        unique_key("checkup"),
        10.0,
        &[scriptless.url()],
        LockOptions::default(),
    )
    .unwrap();
    let nodes = lock.checkup().unwrap();
    assert_eq!(nodes[0].verdict(), Severity::Note);
    assert_eq!(nodes[0].scripts.name(), "no");
    assert_eq!(nodes[0].time_in_scripts.name(), "no");
    // Nobody there (port 1): unknown.
    let lock = Lock::new(
        unique_key("checkup"),
        10.0,
        &["redis://127.0.0.1:1".to_owned()],
        LockOptions::default(),
    )
    .unwrap();
    let nodes = lock.checkup().unwrap();
    assert_eq!(nodes[0].findings[0].reason, "unreachable");
    assert_eq!(nodes[0].round_trip, None);
}

/// A Redlock master that does not answer is not asked for `INFO` again at
/// every acquire (which would add its timeout to each): once per
/// ten seconds at most.
#[test]
fn a_master_that_does_not_answer_costs_no_second_timeout_per_acquire() {
    let masters: Vec<RedisServer> = (0..3).map(|_| persistent(&[])).collect();
    let silent = common::proxy::Proxy::start(&masters[2]);
    silent.black_hole();
    let urls = vec![masters[0].url(), masters[1].url(), silent.url()];
    let mut options = LockOptions::default();
    options
        .set("read_timeout", OptionValue::Number(0.4))
        .unwrap();
    options
        .set("connect_timeout", OptionValue::Number(0.4))
        .unwrap();
    let mut times = Vec::new();
    for _ in 0..3 {
        let mut lock = Lock::new(unique_key("silent"), 10.0, &urls, options.clone()).unwrap();
        let began = std::time::Instant::now();
        let got = lock.acquire(Duration::ZERO);
        times.push(began.elapsed());
        if matches!(got, Ok(true)) {
            let _ = lock.release();
        }
    }
    // The first acquire pays INFO's timeout (0.4 s) besides its own on
    // the silent master; the next ones only their own.
    for later in &times[1..] {
        assert!(
            *later + Duration::from_millis(300) < times[0],
            "an acquire paid INFO's timeout again: {times:?}"
        );
    }
}
