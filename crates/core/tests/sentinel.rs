//! Sentinel: a master, a replica and three Sentinels started here; locks
//! through the Sentinels, credentials for both, a `SENTINEL FAILOVER`
//! followed by locks built before and after it, and renewals that follow
//! a new master.

mod common;

use std::time::{Duration, Instant};

use common::{RedisServer, unique_key};
use redislock_core::testing::topology::sentinel;
use redislock_core::{Lock, LockError, LockOptions, OptionValue};

const NAME: &str = common::sentinel::MASTER_NAME;

type Group = common::sentinel::SentinelGroup;

fn sentinel_options(extra: &[(&str, &str)]) -> LockOptions {
    let mut options = LockOptions::default();
    options
        .set("sentinel", OptionValue::Text(NAME.into()))
        .unwrap();
    for (name, value) in extra {
        options
            .set(name, OptionValue::Text(value.as_bytes().to_vec()))
            .unwrap();
    }
    options
}

fn exists(group: &Group, server: &RedisServer, key: &[u8]) -> bool {
    let n: i64 = redis::cmd("EXISTS")
        .arg(key)
        .query(&mut group.client(server).unwrap())
        .unwrap();
    n == 1
}

#[test]
fn locks_go_to_the_master_the_sentinels_name_and_follow_a_failover() {
    let group = Group::start(None);
    let key = unique_key("sentinel");
    let mut before =
        Lock::new(key.clone(), 10.0, &group.urls(None), sentinel_options(&[])).unwrap();
    assert!(before.acquire(Duration::ZERO).unwrap());
    assert!(
        exists(&group, &group.master, &key),
        "the key is on the master"
    );
    assert!(before.is_acquired().unwrap());
    assert!(before.release().unwrap());

    let started = Instant::now();
    // A Sentinel that has not yet seen the replica's state refuses with
    // NOGOODSLAVE (seen at load 20+): ask again until it accepts.
    group.wait_until("a Sentinel accepts SENTINEL FAILOVER", || {
        redis::cmd("SENTINEL")
            .arg("FAILOVER")
            .arg(NAME)
            .query::<()>(&mut group.sentinel(0, None))
            .is_ok()
    });
    group.wait_until("the Sentinels name the replica", || {
        group.master_port(None) == group.replica.port
    });
    let announced = started.elapsed();
    // Within about a second of the announcement, the lock built before the
    // failover takes the key on the new master.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match before.acquire(Duration::ZERO) {
            Ok(true) if exists(&group, &group.replica, &key) => break,
            Ok(true) => {
                assert!(before.release().unwrap());
            }
            Ok(false) | Err(_) => {}
        }
        assert!(
            Instant::now() < deadline,
            "the old lock never reached the new master"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let followed = started.elapsed();
    println!(
        "failover announced after {announced:?}; the lock built before it used the new master after {followed:?}"
    );
    assert!(
        followed - announced < Duration::from_millis(1500),
        "{:?}",
        followed - announced
    );
    assert!(before.release().unwrap());
    let mut after = Lock::new(key.clone(), 10.0, &group.urls(None), sentinel_options(&[])).unwrap();
    assert!(after.acquire(Duration::ZERO).unwrap());
    assert!(exists(&group, &group.replica, &key));
    assert!(after.release().unwrap());
}

#[test]
fn master_and_sentinel_credentials_are_separate() {
    let group = Group::start(Some(("masterpw", "sentinelpw")));
    let key = unique_key("sentinel-auth");
    let urls = group.urls(Some("masterpw"));
    let mut ok = Lock::new(
        key.clone(),
        10.0,
        &urls,
        sentinel_options(&[("sentinel_password", "sentinelpw")]),
    )
    .unwrap();
    assert!(ok.acquire(Duration::ZERO).unwrap());
    assert!(exists(&group, &group.master, &key));
    assert!(ok.release().unwrap());
    // Without the Sentinels' password nobody names the master.
    let mut no_sentinel_pw = Lock::new(key.clone(), 10.0, &urls, sentinel_options(&[])).unwrap();
    let err = no_sentinel_pw.acquire(Duration::ZERO).unwrap_err();
    let message = err.to_string();
    assert!(matches!(err, LockError::Connection { .. }), "{err:?}");
    assert!(
        message.contains("no Sentinel named the master"),
        "{message}"
    );
    assert!(
        !message.contains("masterpw") && !message.contains("sentinelpw"),
        "{message}"
    );
}

#[test]
fn an_unknown_master_name_is_a_connection_error() {
    let master = RedisServer::start();
    let sentinel = RedisServer::start_sentinel(master.port, NAME, 1, "", &[]);
    let mut options = LockOptions::default();
    options
        .set("sentinel", OptionValue::Text(b"nosuch".to_vec()))
        .unwrap();
    let mut l = Lock::new(b"k".to_vec(), 10.0, &[sentinel.url()], options).unwrap();
    let err = l.acquire(Duration::ZERO).unwrap_err();
    assert!(
        err.to_string().contains("does not know master \"nosuch\""),
        "{err}"
    );
}

/// Calls of `READONLY` errors `server` answered (`INFO errorstats`).
fn readonly_errors(group: &Group, server: &RedisServer) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("errorstats")
        .query(&mut group.client(server).unwrap())
        .unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("errorstat_READONLY:count="))
        .map_or(0, |n| n.trim().parse().unwrap())
}

#[test]
fn a_readonly_reply_makes_it_ask_the_sentinels_at_once_and_replay() {
    let group = Group::start(None);
    let key = unique_key("sentinel-readonly");
    let mut lock = Lock::new(key.clone(), 10.0, &group.urls(None), sentinel_options(&[])).unwrap();
    assert!(lock.acquire(Duration::ZERO).unwrap());
    assert!(lock.release().unwrap());
    // The lock now knows the master for up to a second. Swap the roles and
    // point every Sentinel at the new master well within that second.
    let swapped = Instant::now();
    swap_roles(&group);
    let before = readonly_errors(&group, &group.master);
    assert!(lock.acquire(Duration::ZERO).unwrap());
    let took = swapped.elapsed();
    assert!(
        took < sentinel::RECHECK,
        "the swap took {took:?}: the cached master expired, READONLY was not tested"
    );
    assert_eq!(
        readonly_errors(&group, &group.master),
        before + 1,
        "the cached (demoted) master answered READONLY once"
    );
    assert!(
        exists(&group, &group.replica, &key),
        "taken on the new master"
    );
    println!("acquired on the new master {took:?} after the swap, through one READONLY");
    assert!(lock.release().unwrap());
}

/// Makes the replica the master (the old master its replica) and points
/// every Sentinel at it, at once (a failover without the Sentinels' delay).
fn swap_roles(group: &Group) {
    let replica_port = group.replica.port.to_string();
    let _: () = redis::cmd("REPLICAOF")
        .arg("NO")
        .arg("ONE")
        .query(&mut group.client(&group.replica).unwrap())
        .unwrap();
    let _: () = redis::cmd("REPLICAOF")
        .arg("127.0.0.1")
        .arg(&replica_port)
        .query(&mut group.client(&group.master).unwrap())
        .unwrap();
    for i in 0..group.sentinels.len() {
        let mut s = group.sentinel(i, None);
        let _: () = redis::cmd("SENTINEL")
            .arg("REMOVE")
            .arg(NAME)
            .query(&mut s)
            .unwrap();
        let _: () = redis::cmd("SENTINEL")
            .arg("MONITOR")
            .arg(NAME)
            .arg("127.0.0.1")
            .arg(&replica_port)
            .arg(2)
            .query(&mut s)
            .unwrap();
    }
}

#[test]
fn auto_renew_follows_the_master_after_a_swap() {
    let group = Group::start(None);
    let mut options = sentinel_options(&[]);
    options.set("auto_renew", OptionValue::Bool(true)).unwrap();
    // 2 s leases renewed about every 0.7 s.
    let mut locks: Vec<Lock> = (0..6)
        .map(|i| {
            let key = unique_key(&format!("sentinel-renew-{i}"));
            Lock::new(key, 2.0, &group.urls(None), options.clone()).unwrap()
        })
        .collect();
    for lock in &mut locks {
        assert!(lock.acquire(Duration::ZERO).unwrap());
    }
    let mut master = redis::Client::open(group.master.url())
        .and_then(|c| c.get_connection())
        .unwrap();
    let acked: i64 = redis::cmd("WAIT")
        .arg(1)
        .arg(2000)
        .query(&mut master)
        .unwrap();
    assert_eq!(acked, 1, "the replica has the locks");
    swap_roles(&group);
    // Three leases: held only if the renewals reached the new master.
    std::thread::sleep(Duration::from_millis(6000));
    for lock in &mut locks {
        let key = lock.key().to_vec();
        assert!(
            exists(&group, &group.replica, &key),
            "renewed on the new master"
        );
        assert!(lock.is_acquired().unwrap(), "renewed past three leases");
        assert!(lock.release().unwrap());
    }
}

#[test]
fn sentinels_and_master_over_tls() {
    let certs = common::fresh_dir("certs");
    common::make_certificates(&certs);
    let master = RedisServer::start_tls_with(&["--repl-diskless-sync-delay", "0"], &certs);
    let port = master.port.to_string();
    let _replica = RedisServer::start_tls_with(
        &[
            "--replicaof",
            "127.0.0.1",
            &port,
            "--tls-replication",
            "yes",
        ],
        &certs,
    );
    let sentinels: Vec<RedisServer> = (0..3)
        .map(|_| RedisServer::start_tls_sentinel(master.port, NAME, 2, &certs))
        .collect();
    let ca = certs.join("ca.crt").to_str().unwrap().to_owned();
    let urls: Vec<String> = sentinels
        .iter()
        .map(|s| format!("rediss://127.0.0.1:{}", s.port))
        .collect();
    let key = unique_key("sentinel-tls");
    let mut options = sentinel_options(&[("tls_ca", &ca)]);
    // Generous: a TLS handshake took over 2 s on a very busy machine.
    options
        .set("connect_timeout", OptionValue::Number(10.0))
        .unwrap();
    let mut lock = Lock::new(key.clone(), 10.0, &urls, options.clone()).unwrap();
    assert!(lock.acquire(Duration::ZERO).unwrap());
    // The key is on the master, reached straight over TLS.
    let mut direct_options = LockOptions::default();
    direct_options
        .set("tls_ca", OptionValue::Text(ca.clone().into_bytes()))
        .unwrap();
    direct_options
        .set("connect_timeout", OptionValue::Number(10.0))
        .unwrap();
    let mut direct = Lock::new(
        key.clone(),
        10.0,
        &[format!("rediss://127.0.0.1:{}", master.port)],
        direct_options,
    )
    .unwrap();
    assert!(
        !direct.acquire(Duration::ZERO).unwrap(),
        "held on the master"
    );
    assert!(lock.release().unwrap());
    assert!(direct.acquire(Duration::ZERO).unwrap());
    assert!(direct.release().unwrap());
    // Without the CA, the Sentinels' certificate is refused.
    let mut unverified = Lock::new(key, 10.0, &urls, sentinel_options(&[])).unwrap();
    let err = unverified.acquire(Duration::ZERO).unwrap_err();
    assert!(
        err.to_string().contains("no Sentinel named the master"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&certs);
}

/// A fork while the renewal thread asks the Sentinels for the master leaves
/// no child deadlocked on a lock that thread held (the registry of servers
/// is per process).
#[test]
fn forks_while_renewing_leave_no_child_hung() {
    let group = Group::start(None);
    let hung = common::forks_hung_while_renewing(&group.urls(None), &sentinel_options(&[]), 150);
    assert_eq!(hung, 0, "children hung after fork");
}

/// A Sentinel given as a plain server: the error says so and what to write
/// instead, not that the server "refuses EVALSHA".
#[test]
fn a_sentinel_named_as_a_server_says_so() {
    let group = Group::start(None);
    let url = group.urls(None)[0].clone();
    let mut lock = Lock::new(
        unique_key("sentinel-as-server"),
        5.0,
        &[url],
        LockOptions::default(),
    )
    .unwrap();
    let err = lock.acquire(Duration::ZERO).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("this is a Sentinel") && msg.contains("option \"sentinel\""),
        "{msg}"
    );
}
