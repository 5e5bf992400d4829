//! Redis Cluster: 3 masters + 3 replicas started here. Locks on many slots
//! through one seed node, a lock's keys in one slot while a waiter is
//! queued, renewal across masters and across a failover, a slot being
//! migrated (ASK), a manual `CLUSTER FAILOVER` and a killed master.

mod common;

use std::time::{Duration, Instant};

use common::cluster::{NODE_TIMEOUT_MS, RedisCluster, node_id, query, role};
use common::{RedisServer, release_as, unique_key};
use redislock_core::testing::protocol::lock_calls::Successor;
use redislock_core::{Lock, LockError, LockOptions, OptionValue};

fn cluster_options() -> LockOptions {
    let mut options = LockOptions::default();
    options.set("cluster", OptionValue::Bool(true)).unwrap();
    options
}

fn cluster_lock(cluster: &RedisCluster, key: &[u8], ttl: f64) -> Lock {
    Lock::new(key.to_vec(), ttl, &[cluster.seed()], cluster_options()).unwrap()
}

/// The key as stored in Redis.
fn stored(lock: &mut Lock) -> String {
    String::from_utf8(lock.info().redis_key).unwrap()
}

/// Keys on `node` that start with `prefix`.
fn keys_on(node: &RedisServer, prefix: &str) -> Vec<String> {
    let mut keys: Vec<String> = query(node, &["KEYS", &format!("{prefix}*")]).unwrap();
    keys.sort();
    keys
}

#[test]
fn locks_on_many_slots_go_to_their_masters_through_one_seed() {
    let cluster = RedisCluster::start(3, 1);
    let mut masters_used = std::collections::HashSet::new();
    for i in 0..60 {
        let key = unique_key(&format!("cluster-many-{i}"));
        let mut lock = cluster_lock(&cluster, &key, 10.0);
        assert!(lock.acquire(Duration::ZERO).unwrap());
        let name = stored(&mut lock);
        assert!(
            name.starts_with("{test:") && name.ends_with('}'),
            "the key is wrapped in a hash tag: {name}"
        );
        let master = cluster.master_of(cluster.slot(name.as_bytes()));
        let token = String::from_utf8(lock.token().unwrap()).unwrap();
        let held: Option<String> = query(master, &["GET", &name]).unwrap();
        assert_eq!(
            held.as_deref(),
            Some(token.as_str()),
            "{name} on its master"
        );
        masters_used.insert(master.port);
        assert!(lock.is_acquired().unwrap());
        assert!(lock.refresh(Some(20.0)).unwrap());
        assert!(lock.release().unwrap());
        let exists: i64 = query(master, &["EXISTS", &name]).unwrap();
        assert_eq!(exists, 0);
    }
    assert_eq!(masters_used.len(), 3, "60 keys reach all three masters");

    // replicas => 1: the token is on the slot's replica when acquire returns.
    let mut opts = cluster_options();
    opts.set("replicas", OptionValue::Number(1.0)).unwrap();
    for i in 0..10 {
        let key = unique_key(&format!("cluster-replicas-{i}"));
        let mut lock = Lock::new(key, 10.0, &[cluster.seed()], opts.clone()).unwrap();
        assert!(lock.acquire(Duration::ZERO).unwrap());
        let name = stored(&mut lock);
        let master = cluster.master_of(cluster.slot(name.as_bytes()));
        let replica = cluster.replicas_of(master)[0];
        let token = String::from_utf8(lock.token().unwrap()).unwrap();
        let mut c = replica.client();
        let on_replica: (Option<String>,) = redis::pipe()
            .cmd("READONLY")
            .ignore()
            .cmd("GET")
            .arg(&name)
            .query(&mut c)
            .unwrap();
        assert_eq!(
            on_replica.0.as_deref(),
            Some(token.as_str()),
            "{name} on the replica"
        );
        assert!(lock.release().unwrap());
    }
}

#[test]
fn a_lock_with_its_own_hash_tag_keeps_it_and_a_prefix_stays_first() {
    let cluster = RedisCluster::start(3, 1);
    let mut options = cluster_options();
    options
        .set("prefix", OptionValue::Text(b"app:".to_vec()))
        .unwrap();
    let mut tagged = Lock::new(
        b"{tenant7}:job".to_vec(),
        10.0,
        &[cluster.seed()],
        options.clone(),
    )
    .unwrap();
    assert_eq!(stored(&mut tagged), "app:{tenant7}:job");
    let mut plain = Lock::new(b"job".to_vec(), 10.0, &[cluster.seed()], options).unwrap();
    assert_eq!(stored(&mut plain), "app:{job}");
    assert!(tagged.acquire(Duration::ZERO).unwrap());
    assert!(plain.acquire(Duration::ZERO).unwrap());
    assert!(tagged.release().unwrap());
    assert!(plain.release().unwrap());
}

#[test]
fn a_queued_waiter_keeps_every_key_of_the_lock_in_one_slot_and_is_woken() {
    let cluster = RedisCluster::start(3, 1);
    let key = unique_key("cluster-wait");
    let name = stored(&mut cluster_lock(&cluster, &key, 30.0));
    let slot = cluster.slot(name.as_bytes());
    let master = cluster.master_of(slot);
    // Another process holds it.
    let held: Option<String> =
        query(master, &["SET", &name, "holder", "NX", "PX", "30000"]).unwrap();
    assert!(held.is_some());

    let seed = cluster.seed();
    let k = key.clone();
    let mut opts = cluster_options();
    opts.set("retry_delay", OptionValue::Number(5.0)).unwrap();
    let waiter = std::thread::spawn(move || {
        let mut l = Lock::new(k, 10.0, &[seed], opts).unwrap();
        let got = l.acquire(Duration::from_secs(10)).unwrap();
        (got, Instant::now(), l)
    });
    let queue = format!("{name}~~q");
    let deadline = Instant::now() + Duration::from_secs(5);
    while query::<i64>(master, &["ZCARD", &queue]).unwrap() == 0 {
        assert!(Instant::now() < deadline, "the waiter never queued");
        std::thread::sleep(Duration::from_millis(5));
    }
    // Every key of the lock: on the slot's master, all in the lock's slot.
    let prefix = name.clone();
    let keys = keys_on(master, &prefix);
    println!("keys of one lock while a waiter is queued: {keys:?}");
    assert!(keys.len() >= 3, "lock, queue and waiter keys: {keys:?}");
    for k in &keys {
        assert_eq!(
            cluster.slot(k.as_bytes()),
            slot,
            "{k} shares the lock's slot"
        );
    }
    for node in cluster.running().filter(|n| n.port != master.port) {
        let role = role(node).unwrap();
        if role == "master" {
            assert!(
                keys_on(node, &prefix).is_empty(),
                "no key of the lock elsewhere"
            );
        }
    }
    std::thread::sleep(Duration::from_millis(50));
    let released = Instant::now();
    assert!(release_as(
        master,
        name.as_bytes(),
        b"holder",
        Successor::HandOver
    ));
    let (got, at, mut l) = waiter.join().unwrap();
    assert!(got);
    let after = at - released;
    println!("Cluster waiter acquired {after:?} after the release (retry_delay 5 s)");
    assert!(after < Duration::from_secs(1), "{after:?}");
    assert!(l.release().unwrap());
    // Nothing left.
    let left = keys_on(master, &prefix);
    assert!(left.is_empty(), "nothing left: {left:?}");
}

#[test]
fn auto_renew_keeps_leases_on_every_master() {
    let cluster = RedisCluster::start(3, 1);
    let mut opts = cluster_options();
    opts.set("auto_renew", OptionValue::Bool(true)).unwrap();
    let mut locks: Vec<Lock> = (0..12)
        .map(|i| {
            let key = unique_key(&format!("cluster-renew-{i}"));
            // 1 s leases renewed every third of a second: a renewal may be
            // late by more than half a lease on a very busy machine (seen
            // with 0.5 s leases at load 20+).
            Lock::new(key, 1.0, &[cluster.seed()], opts.clone()).unwrap()
        })
        .collect();
    let mut masters = std::collections::HashSet::new();
    for lock in &mut locks {
        assert!(lock.acquire(Duration::ZERO).unwrap());
        let name = stored(lock);
        masters.insert(cluster.master_of(cluster.slot(name.as_bytes())).port);
    }
    assert!(masters.len() > 1, "the locks span several masters");
    std::thread::sleep(Duration::from_millis(3000));
    for lock in &mut locks {
        assert!(lock.is_acquired().unwrap(), "renewed past three leases");
        assert!(lock.release().unwrap());
    }
}

#[test]
fn auto_renew_follows_a_manual_failover() {
    let cluster = RedisCluster::start(3, 1);
    let mut opts = cluster_options();
    opts.set("auto_renew", OptionValue::Bool(true)).unwrap();
    // 2 s leases renewed about every 0.7 s: the failover and the renewal
    // that follows it fit in one lease even on a busy machine.
    let mut locks: Vec<Lock> = (0..12)
        .map(|i| {
            let key = unique_key(&format!("cluster-renew-failover-{i}"));
            Lock::new(key, 2.0, &[cluster.seed()], opts.clone()).unwrap()
        })
        .collect();
    for lock in &mut locks {
        assert!(lock.acquire(Duration::ZERO).unwrap());
    }
    let first = stored(&mut locks[0]);
    let slot = cluster.slot(first.as_bytes());
    let old = cluster.master_of(slot).port;
    let replica = cluster.replicas_of(cluster.by_port(old))[0];
    let moved: Vec<usize> = (0..locks.len())
        .filter(|&i| {
            cluster
                .master_of(cluster.slot(stored(&mut locks[i]).as_bytes()))
                .port
                == old
        })
        .collect();
    assert!(moved.len() < locks.len(), "the locks span several masters");
    cluster.fail_over_to(replica);
    cluster.wait_until("the cluster settles after the failover", || {
        cluster.settled(3, 3)
    });
    // Three leases: held only if the renewal found the new master.
    std::thread::sleep(Duration::from_millis(6000));
    for &i in &moved {
        let name = stored(&mut locks[i]);
        let token = String::from_utf8(locks[i].token().unwrap()).unwrap();
        let held: Option<String> = query(replica, &["GET", &name]).unwrap();
        assert_eq!(
            held.as_deref(),
            Some(token.as_str()),
            "renewed on the new master"
        );
    }
    for lock in &mut locks {
        assert!(lock.is_acquired().unwrap(), "renewed past three leases");
        assert!(lock.release().unwrap());
    }
}

#[test]
fn a_slot_being_migrated_is_followed_with_asking() {
    let cluster = RedisCluster::start(3, 0);
    let key = unique_key("cluster-ask");
    let mut lock = cluster_lock(&cluster, &key, 10.0);
    // Learn the map before the migration starts.
    assert!(lock.acquire(Duration::ZERO).unwrap());
    assert!(lock.release().unwrap());
    let name = stored(&mut lock);
    let slot = cluster.slot(name.as_bytes()).to_string();
    let source = cluster.master_of(cluster.slot(name.as_bytes()));
    let target = cluster.running().find(|n| n.port != source.port).unwrap();
    let (source_id, target_id) = (node_id(source), node_id(target));
    let ok: String = query(
        target,
        &["CLUSTER", "SETSLOT", &slot, "IMPORTING", &source_id],
    )
    .unwrap();
    assert_eq!(ok, "OK");
    let ok: String = query(
        source,
        &["CLUSTER", "SETSLOT", &slot, "MIGRATING", &target_id],
    )
    .unwrap();
    assert_eq!(ok, "OK");
    // The key is not on the source: it answers ASK, the target takes it.
    assert!(lock.acquire(Duration::ZERO).unwrap());
    let token = String::from_utf8(lock.token().unwrap()).unwrap();
    let on_target: Option<String> = {
        let mut c = target.client();
        redis::pipe()
            .cmd("ASKING")
            .ignore()
            .cmd("GET")
            .arg(&name)
            .query::<(Option<String>,)>(&mut c)
            .unwrap()
            .0
    };
    assert_eq!(
        on_target.as_deref(),
        Some(token.as_str()),
        "taken on the importing node"
    );
    // The migration ends: what the source still holds of the slot moves as
    // a reshard would move it, then the
    // next calls meet MOVED on the source and follow it.
    let rest: Vec<String> = query(source, &["CLUSTER", "GETKEYSINSLOT", &slot, "100"]).unwrap();
    if !rest.is_empty() {
        let port = target.port.to_string();
        let args = ["MIGRATE", "127.0.0.1", &port, "", "0", "5000", "KEYS"];
        let args: Vec<&str> = args
            .into_iter()
            .chain(rest.iter().map(String::as_str))
            .collect();
        let ok: String = query(source, &args).unwrap();
        assert_eq!(ok, "OK");
    }
    for node in cluster.running() {
        let ok: String = query(node, &["CLUSTER", "SETSLOT", &slot, "NODE", &target_id]).unwrap();
        assert_eq!(ok, "OK");
    }
    assert!(lock.is_acquired().unwrap());
    assert!(lock.refresh(None).unwrap());
    assert!(lock.release().unwrap());
    let left: i64 = query(target, &["EXISTS", &name]).unwrap();
    assert_eq!(left, 0);
}

#[test]
fn a_manual_failover_is_followed_by_locks_built_before_and_after_it() {
    let cluster = RedisCluster::start(3, 1);
    let key = unique_key("cluster-failover");
    let mut before = cluster_lock(&cluster, &key, 10.0);
    assert!(before.acquire(Duration::ZERO).unwrap());
    assert!(before.release().unwrap());
    let name = stored(&mut before);
    let slot = cluster.slot(name.as_bytes());
    let old = cluster.master_of(slot);
    let replica = cluster.replicas_of(old)[0];
    cluster.fail_over_to(replica);
    cluster.wait_until("the cluster settles after the failover", || {
        cluster.settled(3, 3)
    });
    assert_eq!(cluster.master_of(slot).port, replica.port);
    let started = Instant::now();
    assert!(before.acquire(Duration::ZERO).unwrap());
    println!(
        "first acquire after CLUSTER FAILOVER (stale slot map) took {:?}",
        started.elapsed()
    );
    let token = String::from_utf8(before.token().unwrap()).unwrap();
    let held: Option<String> = query(replica, &["GET", &name]).unwrap();
    assert_eq!(
        held.as_deref(),
        Some(token.as_str()),
        "held on the new master"
    );
    assert!(before.release().unwrap());
    let other = unique_key("cluster-failover-new");
    let mut after = cluster_lock(&cluster, &other, 10.0);
    assert!(after.acquire(Duration::ZERO).unwrap());
    assert!(after.release().unwrap());
}

#[test]
fn a_killed_master_is_replaced_by_its_replica_and_locks_work_again() {
    let mut cluster = RedisCluster::start(3, 1);
    let key = unique_key("cluster-kill");
    let mut lock = cluster_lock(&cluster, &key, 10.0);
    assert!(lock.acquire(Duration::ZERO).unwrap());
    assert!(lock.release().unwrap());
    let name = stored(&mut lock);
    let slot = cluster.slot(name.as_bytes());
    let old = cluster.master_of(slot).port;
    let replica = cluster.replicas_of(cluster.by_port(old))[0].port;
    let killed_at = Instant::now();
    cluster
        .nodes
        .iter_mut()
        .find(|n| n.port == old)
        .unwrap()
        .kill();
    // Until the cluster promotes the replica, calls fail with a clear error.
    let mut errors = 0;
    // A failed election is retried after twice the failover timeout (2 x
    // 2 x the node timeout): generous for a busy machine.
    let deadline = killed_at + Duration::from_secs(60);
    loop {
        match lock.acquire(Duration::ZERO) {
            Ok(true) => break,
            Ok(false) => panic!("nobody else holds the lock"),
            Err(e @ (LockError::Connection { .. } | LockError::Redirected { .. })) => {
                errors += 1;
                assert!(Instant::now() < deadline, "never recovered: {e}");
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => panic!("unexpected error: {e:?}"),
        }
    }
    println!(
        "acquired again {:?} after SIGKILL of the master ({errors} failed tries, node timeout {NODE_TIMEOUT_MS} ms)",
        killed_at.elapsed()
    );
    let token = String::from_utf8(lock.token().unwrap()).unwrap();
    let held: Option<String> = query(cluster.by_port(replica), &["GET", &name]).unwrap();
    assert_eq!(
        held.as_deref(),
        Some(token.as_str()),
        "held on the promoted replica"
    );
    assert!(lock.release().unwrap());
}

#[test]
fn a_cluster_node_used_as_a_single_server_says_to_set_cluster() {
    let cluster = RedisCluster::start(3, 0);
    let mut errors = Vec::new();
    for i in 0..10 {
        let key = unique_key(&format!("cluster-misused-{i}"));
        let mut lock = Lock::new(key, 10.0, &[cluster.seed()], LockOptions::default()).unwrap();
        match lock.acquire(Duration::ZERO) {
            Ok(true) => assert!(lock.release().unwrap()),
            Ok(false) => panic!("nobody holds it"),
            Err(e) => errors.push(e),
        }
    }
    assert!(!errors.is_empty(), "most keys live on other nodes");
    for e in errors {
        assert!(
            matches!(e, LockError::Redirected { .. } | LockError::Server { .. }),
            "{e:?}"
        );
        assert!(e.to_string().contains("\"cluster\" => true"), "{e}");
    }
}

#[test]
fn cluster_options_are_checked_before_anything_is_sent() {
    let err = Lock::new(
        b"k".to_vec(),
        1.0,
        &["redis://127.0.0.1:1/2".into()],
        cluster_options(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("only database 0"), "{err}");
    let err = Lock::new(
        b"k".to_vec(),
        1.0,
        &["unix:///tmp/x.sock".into()],
        cluster_options(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("unix socket"), "{err}");
    let err = Lock::new(
        b"}k".to_vec(),
        1.0,
        &["redis://127.0.0.1:1".into()],
        cluster_options(),
    )
    .unwrap_err();
    assert!(matches!(err, LockError::InvalidArgument { .. }), "{err:?}");
}

/// A fork while the renewal thread follows the Cluster's slot map leaves no
/// child deadlocked on a lock that thread held.
#[test]
fn forks_while_renewing_leave_no_child_hung() {
    let cluster = RedisCluster::start(3, 0);
    let hung = common::forks_hung_while_renewing(&[cluster.seed()], &cluster_options(), 150);
    assert_eq!(hung, 0, "children hung after fork");
}
