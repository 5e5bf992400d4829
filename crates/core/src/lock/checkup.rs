//! A checkup of every server under a lock (`RedisLock::diagnose()`, the
//! command line's `doctor`): what each server is (`INFO`), whether it can
//! lose a held lock by itself, its round trip, and whether it has what the
//! lock protocol uses (scripts, `TIME` in scripts, `CLIENT UNBLOCK`, a
//! compare-and-delete command, the ACL of docs/protocol.md). Reads and
//! writes no key.

use std::time::{Duration, Instant};

use crate::error::{LockError, Result};
use crate::protocol::call::Call;
use crate::protocol::checkup as probes;
use crate::protocol::permitted::Permitted;
use crate::protocol::scriptless::{self, CompareDelete};
use crate::topology::{Node, ServerFacts};

use super::Lock;

/// How grave a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// The server can lose a held lock by itself.
    Unsafe,
    /// Whether it can is not known (`INFO` refused, no answer).
    Unknown,
    /// Worth knowing; no lock is lost by it alone.
    Note,
}

impl Severity {
    /// How PHP spells it: `unsafe`, `unknown` or `note`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Unsafe => "unsafe",
            Severity::Unknown => "unknown",
            Severity::Note => "note",
        }
    }
}

/// One finding about a server: what it is, what it does to a lock, and
/// the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// How grave it is.
    pub severity: Severity,
    /// A short name (`eviction`, `no_aof`, `info_refused`, `unreachable`,
    /// `replica`, `replicas`).
    pub reason: &'static str,
    /// Its consequence and fix, in a sentence or two.
    pub detail: String,
}

/// Whether a server has something the lock protocol uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Capability {
    /// It has (with what, when it says more).
    Yes(String),
    /// It refused: the server's words.
    No(String),
    /// Not known: no answer.
    Unknown(String),
}

impl Capability {
    /// `yes`, `no` or `unknown`.
    pub fn name(&self) -> &'static str {
        match self {
            Capability::Yes(_) => "yes",
            Capability::No(_) => "no",
            Capability::Unknown(_) => "unknown",
        }
    }

    /// What it says beside.
    pub fn detail(&self) -> &str {
        match self {
            Capability::Yes(d) | Capability::No(d) | Capability::Unknown(d) => d,
        }
    }

    fn of(result: Result<()>, yes: &str) -> Self {
        match result {
            Ok(()) => Capability::Yes(yes.to_owned()),
            Err(e @ LockError::Server { .. }) => Capability::No(e.to_string()),
            Err(e) => Capability::Unknown(e.to_string()),
        }
    }
}

/// The checkup of one server.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeCheckup {
    /// The server, as messages show it (no password).
    pub server: String,
    /// The round trip of a `PING` (the least of three); `None` when the
    /// server did not answer.
    pub round_trip: Option<Duration>,
    /// `redis_version` (or `valkey <version>`).
    pub version: Option<String>,
    /// `role`: `master` or `slave`.
    pub role: Option<String>,
    /// `connected_slaves`.
    pub replicas: Option<u32>,
    /// `cluster_enabled`.
    pub cluster: Option<bool>,
    /// `maxmemory` in bytes (0: no limit).
    pub maxmemory: Option<u64>,
    /// `maxmemory_policy`.
    pub maxmemory_policy: Option<String>,
    /// `aof_enabled`.
    pub aof: Option<bool>,
    /// `appendfsync` (`always`, `everysec`, `no`), where `CONFIG GET` is
    /// allowed.
    pub appendfsync: Option<String>,
    /// What was found, gravest first.
    pub findings: Vec<Finding>,
    /// Scripts run (`EVAL`).
    pub scripts: Capability,
    /// Scripts may read the clock (`TIME`); the lock's scripts do not
    /// need it.
    pub time_in_scripts: Capability,
    /// This user may end another connection's wait (`CLIENT UNBLOCK`).
    pub client_unblock: Capability,
    /// A compare-and-delete command (`DELIFEQ`, `DELEX`), for a server
    /// without scripts.
    pub compare_delete: Capability,
    /// The ACL lets this user run every command of the lock's scripts on
    /// its keys (the check each process makes before its first acquire).
    pub acl: Capability,
}

impl NodeCheckup {
    /// `safe` (known, nothing unsafe), `unsafe`, or `unknown`.
    pub fn verdict(&self) -> Severity {
        if self.findings.iter().any(|f| f.severity == Severity::Unsafe) {
            Severity::Unsafe
        } else if self
            .findings
            .iter()
            .any(|f| f.severity == Severity::Unknown)
        {
            Severity::Unknown
        } else {
            Severity::Note
        }
    }
}

impl Lock {
    /// Checks every server that holds locks of this lock's topology, or
    /// may after a failover (Redlock's masters, a Sentinel group's master
    /// and replicas, every Cluster node, masters first), one
    /// after the other; what `INFO` says is also kept for later acquires
    /// (option `unsafe_server`). Fails only when the servers cannot be
    /// found (a Sentinel or Cluster that does not answer); a server that
    /// does not answer is a finding.
    pub fn checkup(&self) -> Result<Vec<NodeCheckup>> {
        let nodes = self.topology.nodes()?;
        Ok(nodes.iter().map(|node| self.check_node(node)).collect())
    }

    fn check_node(&self, node: &Node) -> NodeCheckup {
        let on = |call: &dyn Fn() -> Call<()>| node.run(call);
        let mut report = NodeCheckup {
            server: node.name(),
            round_trip: None,
            version: None,
            role: None,
            replicas: None,
            cluster: None,
            maxmemory: None,
            maxmemory_policy: None,
            aof: None,
            appendfsync: None,
            findings: Vec::new(),
            scripts: Capability::Unknown(String::new()),
            time_in_scripts: Capability::Unknown(String::new()),
            client_unblock: Capability::Unknown(String::new()),
            compare_delete: Capability::Unknown(String::new()),
            acl: Capability::Unknown(String::new()),
        };
        // The first PING opens the connection; the next three time it.
        if let Err(e) = on(&probes::ping) {
            let why = e.to_string();
            report.findings.push(Finding {
                severity: Severity::Unknown,
                reason: "unreachable",
                detail: format!("no answer ({why}): nothing is known of this server"),
            });
            for capability in [
                &mut report.scripts,
                &mut report.time_in_scripts,
                &mut report.client_unblock,
                &mut report.compare_delete,
                &mut report.acl,
            ] {
                *capability = Capability::Unknown("no answer".into());
            }
            return report;
        }
        report.round_trip = (0..3)
            .filter_map(|_| {
                let sent = Instant::now();
                on(&probes::ping).ok().map(|()| sent.elapsed())
            })
            .min();
        match node.read_facts() {
            Ok(facts) => read_facts(&facts, &mut report),
            Err(e) => {
                let refused = matches!(e, LockError::Server { .. });
                report.findings.push(Finding {
                    severity: Severity::Unknown,
                    reason: "info_refused",
                    detail: format!(
                        "INFO {} ({e}): whether this server can evict or forget a held lock is \
                         unknown; allow +info for this user, or check maxmemory-policy \
                         (noeviction) and appendonly (yes) by hand",
                        if refused {
                            "was refused"
                        } else {
                            "got no answer"
                        }
                    ),
                });
            }
        }
        if report.aof == Some(true) {
            let fsync = node.run(&|| probes::config_get(b"appendfsync"));
            report.appendfsync = fsync.ok().flatten();
            let lost = match report.appendfsync.as_deref() {
                Some("everysec") => Some("second"),
                Some("no") => Some("30 seconds or so (the kernel's flush)"),
                _ => None,
            };
            if let (Some(lost), Some(fsync)) = (lost, &report.appendfsync) {
                report.findings.push(Finding {
                    severity: Severity::Note,
                    reason: "appendfsync",
                    detail: format!(
                        "appendfsync {fsync}: a restart of the server loses no lock, but a crash \
                         of its machine loses those taken in its last {lost}; appendfsync \
                         always loses none"
                    ),
                });
            }
        }
        report.scripts = Capability::of(on(&probes::script), "");
        report.time_in_scripts = Capability::of(on(&probes::time_in_script), "");
        report.client_unblock = Capability::of(
            on(&probes::client_unblock),
            "a release wakes a blocked waiter at once",
        );
        report.compare_delete = match node.run(&scriptless::probe) {
            Ok(probe) => match probe.how {
                Some(CompareDelete::DelIfEq) => Capability::Yes("DELIFEQ".into()),
                Some(CompareDelete::DelEx) => Capability::Yes("DELEX IFEQ".into()),
                None => Capability::No(
                    "neither DELIFEQ (Valkey 9) nor DELEX (Redis 8.4): scripts are needed".into(),
                ),
            },
            Err(e) => Capability::of(Err(e), ""),
        };
        let keys = &*self.keys;
        report.acl = Capability::of(
            node.run(&|| Permitted::Lock(keys).call()),
            "the lock's commands on its keys",
        );
        report.findings.sort_by_key(|f| f.severity as u8);
        report
    }
}

/// Copies `facts` into `report`, with what they mean.
fn read_facts(facts: &ServerFacts, report: &mut NodeCheckup) {
    report.version = facts.version.clone();
    report.role = facts.role.clone();
    report.replicas = facts.replicas;
    report.cluster = facts.cluster;
    report.maxmemory = facts.maxmemory;
    report.maxmemory_policy = facts.policy.clone();
    report.aof = facts.aof;
    for hazard in facts.hazards() {
        report.findings.push(Finding {
            severity: Severity::Unsafe,
            reason: hazard.reason(),
            detail: hazard.explain(),
        });
    }
    match (facts.role.as_deref(), facts.replicas) {
        (Some("slave"), _) => report.findings.push(Finding {
            severity: Severity::Note,
            reason: "replica",
            detail: "a replica: locks are taken on its master; a failover makes it the \
                     master with what it was sent, so a lock taken just before may be \
                     missing (option replicas => N makes each acquire wait until N \
                     replicas have it)"
                .into(),
        }),
        (Some("master"), Some(1..)) => report.findings.push(Finding {
            severity: Severity::Note,
            reason: "replicas",
            detail: format!(
                "{} replica(s): a failover to one that did not get a lock's write yet \
                 forgets the lock; option replicas => N makes each acquire wait until N \
                 replicas have it (WAIT)",
                facts.replicas.unwrap_or(0)
            ),
        }),
        _ => {}
    }
}
