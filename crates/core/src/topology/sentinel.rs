//! Sentinel: the URLs name Sentinels, which know the current master of a
//! named group. The master is asked for by name
//! (`SENTINEL get-master-addr-by-name`), checked with `ROLE`, and cached per
//! process for at most [`RECHECK`]: after `SENTINEL FAILOVER` the old master
//! stays a writable master for seconds, so waiting for its `READONLY` would
//! let two processes hold one lock on two masters. A `READONLY` reply or a
//! lost master drops the cache at once.
//!
//! Failover: a call that finds the master read-only or gone makes the
//! Sentinels be asked again; when they name another master, the call is
//! replayed there once ([`Route::on_error`]): the first try may have run
//! and been replicated.
//!
//! Credentials: the URLs' user, password and database are the master's;
//! options `sentinel_user` / `sentinel_password` are the Sentinels'. TLS
//! (`rediss://`) is used for both.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use redis::Value;

use super::route::{Next, Route, Servers, Tried};
use crate::config::options::TopologyOptions;
use crate::config::url::{Endpoint, ServerUrl};
use crate::error::{ConnectionFailure, LockError, Redirect, Result};
use crate::net::connection::{self, ServerConfig};
use crate::net::exchange;
use crate::net::pool::Role;
use crate::process::PerProcess;
use crate::protocol::call::Call;
use crate::protocol::command::Command;

/// Longest a known master is used without asking the Sentinels again.
pub const RECHECK: Duration = Duration::from_secs(1);

/// The master this process last found, and when.
type Known = Option<(Arc<ServerConfig>, Instant)>;

/// A master group watched by Sentinels.
pub(crate) struct Sentinel {
    name: String,
    sentinels: Vec<Arc<ServerConfig>>,
    /// The master's settings (credentials, db, TLS, timeouts); its address
    /// is the Sentinels' answer.
    template: ServerConfig,
    known: PerProcess<Mutex<Known>>,
}

impl std::fmt::Debug for Sentinel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sentinel")
            .field("name", &self.name)
            .field("sentinels", &self.sentinels.len())
            .finish_non_exhaustive()
    }
}

impl PartialEq for Sentinel {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.template == other.template
            && self.sentinels.len() == other.sentinels.len()
            && self
                .sentinels
                .iter()
                .zip(&other.sentinels)
                .all(|(a, b)| Arc::ptr_eq(a, b))
    }
}

/// Option `sentinel`: the URLs are Sentinels ([`super::TOPOLOGIES`]).
pub(crate) fn build(
    urls: &[ServerUrl],
    options: &TopologyOptions,
) -> Result<Option<Box<dyn Route>>> {
    let Some(name) = &options.sentinel else {
        return Ok(None);
    };
    Ok(Some(Box::new(Sentinel::new(name, urls.to_vec(), options))))
}

impl Sentinel {
    /// The group `name` behind the Sentinels at `urls`.
    pub(crate) fn new(name: &str, urls: Vec<ServerUrl>, options: &TopologyOptions) -> Self {
        let template = ServerConfig::new(urls[0].clone(), &options.connection);
        let sentinels = urls
            .into_iter()
            .map(|url| {
                let url = ServerUrl {
                    username: options.sentinel_user.clone(),
                    password: options.sentinel_password.as_ref().map(|p| p.0.clone()),
                    db: 0,
                    ..url
                };
                connection::intern(ServerConfig::new(url, &options.connection))
            })
            .collect();
        Self {
            name: name.to_owned(),
            sentinels,
            template,
            known: PerProcess::new(|| Mutex::new(None)),
        }
    }

    fn known(&self) -> MutexGuard<'_, Known> {
        self.known
            .get()
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The current master: the one found less than [`RECHECK`] ago, else
    /// the Sentinels' answer (checked with `ROLE` when it changed).
    pub(crate) fn master(&self) -> Result<Arc<ServerConfig>> {
        if let Some((master, at)) = &*self.known()
            && at.elapsed() < RECHECK
        {
            return Ok(master.clone());
        }
        let previous = self.known().as_ref().map(|(m, _)| m.clone());
        let master = self.ask_sentinels()?;
        if previous.is_none_or(|p| !Arc::ptr_eq(&p, &master)) {
            self.check_role(&master)?;
        }
        *self.known() = Some((master.clone(), Instant::now()));
        Ok(master)
    }

    /// Forgets `master` (it answered READONLY or could not be reached), so
    /// the next call asks the Sentinels.
    pub(crate) fn forget(&self, master: &Arc<ServerConfig>) {
        let mut known = self.known();
        if known.as_ref().is_some_and(|(m, _)| Arc::ptr_eq(m, master)) {
            *known = None;
        }
    }

    /// Asks each Sentinel in turn for the master's address.
    fn ask_sentinels(&self) -> Result<Arc<ServerConfig>> {
        let mut failures = Vec::new();
        for sentinel in &self.sentinels {
            let name = self.name.clone();
            let asked = exchange::run_one(sentinel, Role::Command, &|_| {
                let cmd = Command::of(&[b"SENTINEL", b"get-master-addr-by-name", name.as_bytes()]);
                Call::new(vec![cmd], parse_address)
            });
            match asked {
                Ok(Some((host, port))) => return Ok(self.master_at(host, port)),
                Ok(None) => failures.push(format!(
                    "{}: does not know master \"{}\"",
                    sentinel.name(),
                    self.name
                )),
                Err(e) => failures.push(e.to_string()),
            }
        }
        Err(LockError::Connection {
            server: format!("Sentinel master \"{}\"", self.name),
            kind: ConnectionFailure::Unreachable,
            detail: format!("no Sentinel named the master ({})", failures.join("; ")),
        })
    }

    fn master_at(&self, host: String, port: u16) -> Arc<ServerConfig> {
        let tls = matches!(self.template.url.endpoint, Endpoint::Tcp { tls: true, .. });
        let mut config = self.template.clone();
        config.url.endpoint = Endpoint::Tcp { host, port, tls };
        connection::intern(config)
    }

    /// The master's replicas as the first Sentinel that answers lists them
    /// (`SENTINEL REPLICAS`): the servers a failover promotes. Empty when
    /// no Sentinel answers.
    fn replicas(&self) -> Vec<Arc<ServerConfig>> {
        for sentinel in &self.sentinels {
            let name = self.name.clone();
            let asked = exchange::run_one(sentinel, Role::Command, &|_| {
                let cmd = Command::of(&[b"SENTINEL", b"REPLICAS", name.as_bytes()]);
                Call::new(vec![cmd], parse_replicas)
            });
            if let Ok(addresses) = asked {
                return addresses
                    .into_iter()
                    .map(|(host, port)| self.master_at(host, port))
                    .collect();
            }
        }
        Vec::new()
    }

    /// `ROLE` on the master: a Sentinel may still name a demoted master.
    fn check_role(&self, master: &Arc<ServerConfig>) -> Result<()> {
        let role = exchange::run_one(master, Role::Command, &|_| {
            Call::new(vec![Command::of(&[b"ROLE"])], parse_role)
        })?;
        if role == "master" {
            return Ok(());
        }
        Err(LockError::Connection {
            server: master.name(),
            kind: ConnectionFailure::Other,
            detail: format!(
                "the Sentinels name it master of \"{}\" but its ROLE is {role}; \
                 a failover is probably under way, try again",
                self.name
            ),
        })
    }
}

impl Route for Sentinel {
    /// The current master ([`Sentinel::master`]).
    fn servers(&self, _key: &[u8]) -> Result<Servers<'_>> {
        self.master().map(Servers::Found)
    }

    /// The master, then its replicas (a failover makes one of them the
    /// master, with what it has).
    fn nodes(&self) -> Result<Vec<Arc<ServerConfig>>> {
        let mut nodes = vec![self.master()?];
        for replica in self.replicas() {
            if !nodes.iter().any(|known| Arc::ptr_eq(known, &replica)) {
                nodes.push(replica);
            }
        }
        Ok(nodes)
    }

    /// A master found read-only or gone is forgotten and the Sentinels
    /// asked again; when they name another master, the call is replayed
    /// there, once.
    fn on_error(&self, tried: &Tried<'_>, err: &LockError) -> Next {
        if tried.replay || !master_moved(err) {
            return Next::Done;
        }
        self.forget(tried.server);
        match self.master() {
            Ok(master) if !Arc::ptr_eq(&master, tried.server) => Next::Replay(master),
            _ => Next::Done,
        }
    }

    /// The keyspace: the master group, by name and Sentinels.
    fn scope(&self) -> String {
        let spaces: Vec<String> = self.sentinels.iter().map(|s| s.url.keyspace()).collect();
        format!(
            "sentinel({}@{})/{}",
            self.name,
            spaces.join(","),
            self.template.url.db
        )
    }

    /// The Sentinels, for messages.
    fn names(&self) -> Vec<String> {
        vec![format!(
            "master \"{}\" via Sentinel {}",
            self.name,
            self.sentinels
                .iter()
                .map(|s| s.name())
                .collect::<Vec<_>>()
                .join(", ")
        )]
    }
}

fn parse_address(replies: Vec<Value>) -> redis::RedisResult<Option<(String, u16)>> {
    let reply = replies.into_iter().next().unwrap_or(Value::Nil);
    let address: Option<(String, String)> = redis::from_redis_value(reply.extract_error()?)?;
    Ok(address.and_then(|(host, port)| Some((host, port.parse().ok()?))))
}

/// The `ip` and `port` of each entry of `SENTINEL REPLICAS` (a list of
/// field/value lists, or maps).
fn parse_replicas(replies: Vec<Value>) -> redis::RedisResult<Vec<(String, u16)>> {
    let reply = replies.into_iter().next().unwrap_or(Value::Nil);
    let entries: Vec<Value> = redis::from_redis_value(reply.extract_error()?)?;
    let mut found = Vec::new();
    for entry in entries {
        let fields: Vec<(String, String)> = match entry {
            Value::Map(pairs) => pairs
                .into_iter()
                .filter_map(|(k, v)| {
                    Some((
                        redis::from_redis_value(k).ok()?,
                        redis::from_redis_value(v).ok()?,
                    ))
                })
                .collect(),
            other => {
                let flat: Vec<String> = redis::from_redis_value(other)?;
                flat.chunks_exact(2)
                    .map(|pair| (pair[0].clone(), pair[1].clone()))
                    .collect()
            }
        };
        let field = |name: &str| fields.iter().find(|(k, _)| k == name).map(|(_, v)| v);
        if let (Some(ip), Some(port)) = (field("ip"), field("port").and_then(|p| p.parse().ok())) {
            found.push((ip.clone(), port));
        }
    }
    Ok(found)
}

fn parse_role(replies: Vec<Value>) -> redis::RedisResult<String> {
    let reply = replies.into_iter().next().unwrap_or(Value::Nil);
    let role: Vec<Value> = redis::from_redis_value(reply.extract_error()?)?;
    let first = role.into_iter().next().unwrap_or(Value::Nil);
    Ok(redis::from_redis_value(first)?)
}

/// True when `err` says the master moved: it is read-only now (demoted) or
/// gone.
pub(crate) fn master_moved(err: &LockError) -> bool {
    match err {
        LockError::Redirected {
            redirect: Redirect::ReadOnly,
            ..
        } => true,
        err => err.is_connection_error(),
    }
}
