//! What a server is, as `INFO` tells it (readable on managed services
//! where `CONFIG` is refused), and what in it can break a lock behind the
//! lock's back ([`Hazard`]): a `maxmemory` with any eviction policy (a held
//! lock's key has a ttl, so `volatile-*` policies evict it too), and no
//! append-only file (a restart forgets the locks taken since the last
//! snapshot, or all of them without one).

/// The facts of one server that bear on locks; `None` where `INFO` did not
/// say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerFacts {
    /// `redis_version` (Valkey says `valkey_version` too).
    pub version: Option<String>,
    /// `maxmemory` in bytes (0: no limit).
    pub maxmemory: Option<u64>,
    /// `maxmemory_policy`.
    pub policy: Option<String>,
    /// `aof_enabled`.
    pub aof: Option<bool>,
    /// `role` (`master`, `slave`).
    pub role: Option<String>,
    /// `connected_slaves`.
    pub replicas: Option<u32>,
    /// `cluster_enabled`.
    pub cluster: Option<bool>,
}

/// A way the server can lose a held lock by itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hazard {
    /// `maxmemory` is set and the policy evicts keys: a full server may
    /// evict a held lock, and a second process takes it.
    Eviction {
        /// The policy (`allkeys-lru`, `volatile-lru`, ...).
        policy: String,
        /// The limit, in bytes.
        maxmemory: u64,
    },
    /// No append-only file: a restart forgets the locks taken since the
    /// last RDB snapshot (all of them without snapshots), and others take
    /// them while their holders believe.
    Restart,
}

impl Hazard {
    /// A short name (the `reason` label of `redislock_server_unsafe`).
    pub fn reason(&self) -> &'static str {
        match self {
            Hazard::Eviction { .. } => "eviction",
            Hazard::Restart => "no_aof",
        }
    }

    /// What it does to a lock, and the fix.
    pub fn explain(&self) -> String {
        match self {
            Hazard::Eviction { policy, maxmemory } => format!(
                "maxmemory {maxmemory} with maxmemory-policy {policy}: when the server is full it \
                 evicts keys, a held lock's among them (it has a ttl, so volatile-* policies evict \
                 it too), and a second process takes the lock while its holder believes it holds \
                 it; set maxmemory-policy noeviction, or keep locks on a Redis of their own"
            ),
            Hazard::Restart => "no append-only file (aof_enabled:0): a restart forgets the locks \
                 taken since the last RDB snapshot (all of them without snapshots), and other \
                 processes take them while their holders believe they hold them; set appendonly \
                 yes (appendfsync always or everysec), or delay the server's start by the \
                 longest lock ttl"
                .to_owned(),
        }
    }
}

impl ServerFacts {
    /// Reads the fields of an `INFO` reply (`name:value` lines; others
    /// ignored).
    pub fn parse(info: &str) -> Self {
        let mut facts = Self::default();
        for line in info.lines() {
            let Some((name, value)) = line.trim_end_matches('\r').split_once(':') else {
                continue;
            };
            match name {
                "redis_version" if facts.version.is_none() => {
                    facts.version = Some(value.to_owned())
                }
                "valkey_version" => facts.version = Some(format!("valkey {value}")),
                "maxmemory" => facts.maxmemory = value.parse().ok(),
                "maxmemory_policy" => facts.policy = Some(value.to_owned()),
                "aof_enabled" => facts.aof = Some(value == "1"),
                "role" => facts.role = Some(value.to_owned()),
                "connected_slaves" => facts.replicas = value.parse().ok(),
                "cluster_enabled" => facts.cluster = Some(value == "1"),
                _ => {}
            }
        }
        facts
    }

    /// The ways this server can lose a held lock by itself, as far as its
    /// facts tell (an unknown fact claims nothing).
    pub fn hazards(&self) -> Vec<Hazard> {
        let mut hazards = Vec::new();
        if let (Some(maxmemory @ 1..), Some(policy)) = (self.maxmemory, &self.policy)
            && policy != "noeviction"
        {
            hazards.push(Hazard::Eviction {
                policy: policy.clone(),
                maxmemory,
            });
        }
        if self.aof == Some(false) {
            hazards.push(Hazard::Restart);
        }
        hazards
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INFO: &str = "# Server\r\nredis_version:7.0.15\r\nrole:master\r\n# Memory\r\n\
                        maxmemory:4194304\r\nmaxmemory_policy:volatile-lru\r\n# Persistence\r\n\
                        aof_enabled:0\r\n# Replication\r\nconnected_slaves:1\r\n# Cluster\r\n\
                        cluster_enabled:0\r\n";

    #[test]
    fn info_is_read_and_its_hazards_named() {
        let facts = ServerFacts::parse(INFO);
        assert_eq!(facts.version.as_deref(), Some("7.0.15"));
        assert_eq!(facts.maxmemory, Some(4_194_304));
        assert_eq!(facts.replicas, Some(1));
        assert_eq!(facts.cluster, Some(false));
        let reasons: Vec<&str> = facts.hazards().iter().map(Hazard::reason).collect();
        assert_eq!(reasons, ["eviction", "no_aof"]);
    }

    #[test]
    fn noeviction_no_limit_and_aof_are_safe_and_unknown_claims_nothing() {
        for info in [
            "maxmemory:4194304\nmaxmemory_policy:noeviction\naof_enabled:1\n",
            "maxmemory:0\nmaxmemory_policy:allkeys-lru\naof_enabled:1\n",
            "",
        ] {
            assert_eq!(ServerFacts::parse(info).hazards(), [], "{info:?}");
        }
        let valkey = ServerFacts::parse("redis_version:7.2.4\nvalkey_version:9.1.2\n");
        assert_eq!(valkey.version.as_deref(), Some("valkey 9.1.2"));
    }
}
