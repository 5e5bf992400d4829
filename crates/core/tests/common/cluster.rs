//! Test fixture: a local Redis Cluster of masters and replicas, built with
//! `redis-cli --cluster create`, ready when every node agrees on the slots
//! and every replica is in sync.

#![allow(dead_code)]

use std::process::Command;
use std::time::{Duration, Instant};

use redis::Value;

use super::RedisServer;

/// Node timeout of the fixture's clusters: short, so a killed master is
/// replaced within seconds, but not so short that a busy machine's late
/// cluster-bus pings fail healthy nodes (with 1 s, a cluster answered
/// CLUSTERDOWN for over a second at load 20).
pub const NODE_TIMEOUT_MS: u32 = 3000;

/// How long a cluster gets to form or to settle after a failover.
const SETTLE: Duration = Duration::from_secs(30);

/// A running cluster; nodes are stopped when it is dropped.
pub struct RedisCluster {
    /// Every node, masters first as `redis-cli` assigned them.
    pub nodes: Vec<RedisServer>,
}

impl RedisCluster {
    /// Starts `masters` masters with `replicas` replicas each.
    pub fn start(masters: usize, replicas: usize) -> Self {
        let nodes: Vec<RedisServer> = (0..masters * (1 + replicas))
            .map(|_| RedisServer::start_cluster_node(NODE_TIMEOUT_MS))
            .collect();
        let mut create = Command::new("redis-cli");
        create.arg("--cluster").arg("create");
        for node in &nodes {
            create.arg(format!("127.0.0.1:{}", node.port));
        }
        let out = create
            .args(["--cluster-replicas", &replicas.to_string(), "--cluster-yes"])
            .output()
            .expect("redis-cli must be installed");
        assert!(
            out.status.success(),
            "redis-cli --cluster create failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let cluster = Self { nodes };
        cluster.wait_until("the cluster is formed", || {
            cluster.settled(masters, masters * replicas)
        });
        cluster
    }

    /// A seed URL (the first node's).
    pub fn seed(&self) -> String {
        self.nodes[0].url()
    }

    /// True when every running node reports `cluster_state:ok`, sees
    /// `masters` masters serving all 16384 slots and `replicas` replicas
    /// in total, and every replica's link to its master is up.
    pub fn settled(&self, masters: usize, replicas: usize) -> bool {
        self.running().all(|node| {
            let info: String = query(node, &["CLUSTER", "INFO"]).unwrap_or_default();
            let nodes: String = query(node, &["CLUSTER", "NODES"]).unwrap_or_default();
            let live = |role: &str| {
                nodes
                    .lines()
                    .filter(|l| l.split(' ').nth(2).is_some_and(|f| f.contains(role)))
                    .filter(|l| !l.contains("fail"))
                    .count()
            };
            let in_sync = match role(node).as_deref() {
                Some("slave") => query::<String>(node, &["INFO", "replication"])
                    .unwrap_or_default()
                    .contains("master_link_status:up"),
                Some("master") => true,
                _ => false,
            };
            info.contains("cluster_state:ok")
                && info.contains("cluster_slots_ok:16384")
                && live("master") == masters
                && live("slave") == replicas
                && in_sync
        })
    }

    /// The running nodes.
    pub fn running(&self) -> impl Iterator<Item = &RedisServer> {
        self.nodes.iter().filter(|n| n.is_running())
    }

    /// The node that serves `slot` as master, as `node` sees it.
    pub fn master_of(&self, slot: u16) -> &RedisServer {
        let asked = self.running().next().expect("a running node");
        let slots: Vec<Vec<Value>> = query(asked, &["CLUSTER", "SLOTS"]).unwrap();
        for range in slots {
            let first: u16 = redis::from_redis_value(range[0].clone()).unwrap();
            let last: u16 = redis::from_redis_value(range[1].clone()).unwrap();
            if (first..=last).contains(&slot) {
                let master: Vec<Value> = redis::from_redis_value(range[2].clone()).unwrap();
                let port: u16 = redis::from_redis_value(master[1].clone()).unwrap();
                return self.by_port(port);
            }
        }
        panic!("no master serves slot {slot}");
    }

    /// The replicas of the master `master`.
    pub fn replicas_of(&self, master: &RedisServer) -> Vec<&RedisServer> {
        let id = node_id(master);
        self.running()
            .filter(|n| {
                query::<String>(n, &["CLUSTER", "NODES"])
                    .unwrap_or_default()
                    .lines()
                    .any(|l| l.contains("myself") && l.contains(&format!("slave {id}")))
            })
            .collect()
    }

    /// The node listening on `port`.
    pub fn by_port(&self, port: u16) -> &RedisServer {
        self.nodes
            .iter()
            .find(|n| n.port == port)
            .unwrap_or_else(|| panic!("no node on port {port}"))
    }

    /// The slot of `key`, as the cluster computes it.
    pub fn slot(&self, key: &[u8]) -> u16 {
        let node = self.running().next().unwrap();
        let mut c = node.client();
        redis::cmd("CLUSTER")
            .arg("KEYSLOT")
            .arg(key)
            .query::<i64>(&mut c)
            .unwrap() as u16
    }

    /// Promotes `replica` with `CLUSTER FAILOVER` and waits until it is a
    /// master. Redis abandons a manual failover that the old master does not
    /// complete within its 5 s manual-failover timeout (seen at load 20 and
    /// more), so a replica still a replica 10 s later is asked again, up to
    /// twice [`SETTLE`] in all.
    pub fn fail_over_to(&self, replica: &RedisServer) {
        let deadline = Instant::now() + 2 * SETTLE;
        loop {
            let ok: String = query(replica, &["CLUSTER", "FAILOVER"]).unwrap();
            assert_eq!(ok, "OK");
            if super::poll_until(Duration::from_secs(10), || {
                role(replica).as_deref() == Some("master")
            }) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting until the replica on port {} is master",
                replica.port
            );
        }
    }

    /// Polls `done`; panics after [`SETTLE`].
    pub fn wait_until(&self, what: &str, done: impl Fn() -> bool) {
        super::wait_until(what, SETTLE, done);
    }
}

/// `ROLE`'s first field on `node`.
pub fn role(node: &RedisServer) -> Option<String> {
    let role: Vec<Value> = query(node, &["ROLE"]).ok()?;
    redis::from_redis_value(role.into_iter().next()?).ok()
}

/// The cluster node id of `node`.
pub fn node_id(node: &RedisServer) -> String {
    query(node, &["CLUSTER", "MYID"]).unwrap()
}

/// One command on a fresh connection to `node`.
pub fn query<T: redis::FromRedisValue>(node: &RedisServer, args: &[&str]) -> redis::RedisResult<T> {
    let mut c =
        redis::Client::open(node.url())?.get_connection_with_timeout(Duration::from_secs(2))?;
    c.set_read_timeout(Some(Duration::from_secs(2)))?;
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    cmd.query(&mut c)
}
