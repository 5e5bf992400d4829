//! Connections: credentials, unix sockets, TLS, timeouts, and recovery after
//! the server drops the pooled connection.

mod common;

use std::time::{Duration, Instant};

use common::{RedisServer, lock, unique_key};
use redislock_core::{ConnectionFailure, Lock, LockError, LockOptions, OptionValue};

fn lock_at(url: &str, key: &[u8], options: LockOptions) -> Lock {
    Lock::new(key.to_vec(), 5.0, &[url.to_owned()], options).unwrap()
}

fn failure(err: LockError) -> ConnectionFailure {
    match err {
        LockError::Connection { kind, .. } => kind,
        other => panic!("expected a connection error, got {other:?}"),
    }
}

#[test]
fn password_and_db_from_the_url_are_used() {
    let server = RedisServer::start_with(&["--requirepass", "s3cr:t@pw"]);
    let key = unique_key("auth");
    let url = format!("redis://:s3cr%3At%40pw@127.0.0.1:{}/5", server.port);
    let mut a = lock_at(&url, &key, LockOptions::default());
    assert!(a.acquire(Duration::ZERO).unwrap());
    let mut c = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    let n: i64 = redis::cmd("EXISTS").arg(&key).query(&mut c).unwrap();
    assert_eq!(n, 1, "the key lives in db 5");
    assert!(a.release().unwrap());
}

#[test]
fn acl_user_is_used() {
    let server = RedisServer::start();
    let _: () = server.cmd(&["ACL", "SETUSER", "locker", "on", ">pw1", "~*", "+@all"]);
    let key = unique_key("acl");
    let url = format!("redis://locker:pw1@127.0.0.1:{}", server.port);
    let mut a = lock_at(&url, &key, LockOptions::default());
    assert!(a.acquire(Duration::ZERO).unwrap());
    assert!(a.release().unwrap());
}

#[test]
fn wrong_password_is_an_auth_failure_without_the_password() {
    let server = RedisServer::start_with(&["--requirepass", "right"]);
    let key = unique_key("wrongpw");
    let url = format!("redis://:hunter2@127.0.0.1:{}", server.port);
    let mut a = lock_at(&url, &key, LockOptions::default());
    let err = a.acquire(Duration::ZERO).unwrap_err();
    let message = err.to_string();
    assert!(!message.contains("hunter2"), "{message}");
    assert!(message.contains(":***@"), "{message}");
    assert_eq!(failure(err), ConnectionFailure::AuthFailed);
}

#[test]
fn unreachable_server_fails_fast() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut a = lock_at(
        &format!("redis://127.0.0.1:{port}"),
        b"k",
        LockOptions::default(),
    );
    // A refused connection ends the acquire at once, not after its wait
    // (10 s). The bound leaves room for a busy machine: a flake proof saw
    // more than 1 s once, with about a dozen tests running on 2 cores.
    let start = Instant::now();
    let err = a.acquire(Duration::from_secs(10)).unwrap_err();
    assert_eq!(failure(err), ConnectionFailure::Unreachable);
    let took = start.elapsed();
    assert!(took < Duration::from_secs(3), "took {took:?}");
}

#[test]
fn unix_socket() {
    let dir = common::fresh_dir("unix");
    let socket = dir.join("redis.sock");
    let socket_str = socket.to_str().unwrap().to_owned();
    let server = RedisServer::start_with(&["--unixsocket", &socket_str]);
    let key = unique_key("unix");
    let mut a = lock_at(
        &format!("unix://{socket_str}?db=2"),
        &key,
        LockOptions::default(),
    );
    assert!(a.acquire(Duration::ZERO).unwrap());
    let mut c = redis::Client::open(format!("{}/2", server.url()))
        .unwrap()
        .get_connection()
        .unwrap();
    let n: i64 = redis::cmd("EXISTS").arg(&key).query(&mut c).unwrap();
    assert_eq!(n, 1);
    assert!(a.release().unwrap());
    drop(server);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_pooled_connection_is_replaced_after_a_server_restart() {
    let mut server = RedisServer::start();
    let key = unique_key("restart");
    let mut a = lock(&server, &key, 5.0);
    assert!(a.acquire(Duration::ZERO).unwrap());
    assert!(a.release().unwrap());
    server.restart();
    assert!(
        a.acquire(Duration::ZERO).unwrap(),
        "reconnected transparently"
    );
    assert!(a.release().unwrap());
}

#[test]
fn a_killed_client_connection_is_replaced() {
    let server = RedisServer::start();
    let key = unique_key("clientkill");
    let mut a = lock(&server, &key, 5.0);
    assert!(a.acquire(Duration::ZERO).unwrap());
    let _: i64 = server.cmd(&["CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"]);
    assert!(
        a.is_acquired().unwrap(),
        "GET is replayed on a new connection"
    );
    let _: i64 = server.cmd(&["CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"]);
    assert!(a.release().unwrap(), "the release script is replayed");
    let _: i64 = server.cmd(&["CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"]);
    assert!(
        a.acquire(Duration::ZERO).unwrap(),
        "SET NX is replayed safely"
    );
    assert!(a.release().unwrap());
}

#[test]
fn a_stalled_server_times_out_and_the_connection_is_not_reused() {
    let server = RedisServer::start();
    let key = unique_key("stall");
    let mut options = LockOptions::default();
    options
        .set("read_timeout", OptionValue::Number(0.2))
        .unwrap();
    let mut a = lock_at(&server.url(), &key, options);
    assert!(a.acquire(Duration::ZERO).unwrap());
    server.pause();
    let start = Instant::now();
    let err = a.is_acquired().unwrap_err();
    let took = start.elapsed();
    server.resume();
    assert_eq!(failure(err), ConnectionFailure::TimedOut);
    assert!(
        took >= Duration::from_millis(190) && took < Duration::from_secs(2),
        "{took:?}"
    );
    // The late reply to the timed-out GET must not be read as the answer to
    // the next command: a new connection is used.
    assert!(a.is_acquired().unwrap());
    assert!(a.release().unwrap());
}

#[test]
fn tls_with_a_private_ca() {
    let server = RedisServer::start_tls();
    let key = unique_key("tls");
    let url = format!("rediss://localhost:{}", server.port);
    let mut options = LockOptions::default();
    let ca = server
        .dir
        .join("ca.crt")
        .to_str()
        .unwrap()
        .as_bytes()
        .to_vec();
    options.set("tls_ca", OptionValue::Text(ca)).unwrap();
    // Generous: a handshake took over 2 s on a very busy machine.
    options
        .set("connect_timeout", OptionValue::Number(10.0))
        .unwrap();
    let mut a = lock_at(&url, &key, options);
    assert!(a.acquire(Duration::ZERO).unwrap());
    assert!(a.is_acquired().unwrap());
    assert!(a.release().unwrap());
}

#[test]
fn tls_verifies_by_default() {
    let server = RedisServer::start_tls();
    let url = format!("rediss://localhost:{}", server.port);
    let mut a = lock_at(&url, &unique_key("tlsverify"), LockOptions::default());
    let err = a.acquire(Duration::ZERO).unwrap_err();
    assert!(err.is_connection_error(), "{err}");
    assert!(err.to_string().contains("rediss://localhost"), "{err}");

    let mut insecure = LockOptions::default();
    insecure
        .set("tls_verify", OptionValue::Bool(false))
        .unwrap();
    // A handshake took over the default 2 s on a very busy machine (load
    // 12 on 2 cores).
    insecure
        .set("connect_timeout", OptionValue::Number(10.0))
        .unwrap();
    let mut b = lock_at(&url, &unique_key("tlsinsecure"), insecure);
    assert!(b.acquire(Duration::ZERO).unwrap());
    assert!(b.release().unwrap());
}

#[test]
fn a_tls_handshake_that_never_completes_is_bounded_by_the_connect_timeout() {
    // A plain TCP listener that accepts and never answers the ClientHello.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let _hold = std::thread::spawn(move || {
        let conns: Vec<_> = listener.incoming().take(1).collect();
        std::thread::sleep(Duration::from_secs(10));
        drop(conns);
    });
    let mut options = LockOptions::default();
    options
        .set("connect_timeout", OptionValue::Number(0.3))
        .unwrap();
    let mut a = lock_at(&format!("rediss://127.0.0.1:{port}"), b"k", options);
    let start = Instant::now();
    let err = a.acquire(Duration::ZERO).unwrap_err();
    let took = start.elapsed();
    assert_eq!(failure(err), ConnectionFailure::TimedOut);
    // Generous for a busy machine; unbounded, it would last the listener's
    // 10 s.
    assert!(took < Duration::from_secs(3), "{took:?}");
}

#[test]
fn a_frozen_server_costs_at_most_one_connect_plus_one_read_timeout() {
    let server = RedisServer::start();
    server.pause();
    let mut options = LockOptions::default();
    options
        .set("connect_timeout", OptionValue::Number(0.3))
        .unwrap();
    options
        .set("read_timeout", OptionValue::Number(0.2))
        .unwrap();
    let mut a = lock_at(&server.url(), &unique_key("frozen"), options);
    let start = Instant::now();
    let err = a.acquire(Duration::ZERO).unwrap_err();
    let took = start.elapsed();
    server.resume();
    assert_eq!(failure(err), ConnectionFailure::TimedOut);
    // The kernel accepts the connection at once; the command then waits
    // one read timeout (0.2 s), never each timeout twice.
    assert!(
        took >= Duration::from_millis(190) && took < Duration::from_millis(550),
        "{took:?}"
    );
}

#[test]
fn an_acquire_that_timed_out_is_cleaned_up_by_the_next_one() {
    let server = RedisServer::start();
    let key = unique_key("ghost");
    let mut options = LockOptions::default();
    options
        .set("read_timeout", OptionValue::Number(0.2))
        .unwrap();
    let mut a = lock_at(&server.url(), &key, options);
    assert!(a.acquire(Duration::ZERO).unwrap());
    assert!(a.release().unwrap());
    server.pause();
    let err = a.acquire(Duration::ZERO).unwrap_err();
    assert!(err.is_timeout(), "{err}");
    server.resume();
    // The frozen server ran the SET when it woke up: a lock nobody knows of.
    let deadline = Instant::now() + Duration::from_secs(2);
    while server.cmd::<i64>(&["EXISTS", std::str::from_utf8(&key).unwrap()]) == 0 {
        assert!(Instant::now() < deadline, "the buffered SET never ran");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(
        a.acquire(Duration::ZERO).unwrap(),
        "the ghost was released first"
    );
    assert!(a.release().unwrap());
}
