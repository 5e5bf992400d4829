//! Opening one connection to one server with its timeouts and TLS settings.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use redis::{
    ClientTlsConfig, Connection, ConnectionAddr, IntoConnectionInfo, RedisConnectionInfo,
    TlsCertificates, io::tcp::TcpSettings,
};

use crate::error::{ConnectionFailure, LockError, Result};
use crate::options::{LockOptions, TlsOptions};
use crate::url::{Endpoint, ServerUrl};

/// The one shared instance of `config`: equal configs (several lock
/// objects on one server) get the same `Arc`, so the pool can key
/// connections by its address. The registry keeps every distinct config of
/// the process (a handful).
pub fn intern(config: ServerConfig) -> Arc<ServerConfig> {
    static REGISTRY: Mutex<Vec<Arc<ServerConfig>>> = Mutex::new(Vec::new());
    let mut registry = REGISTRY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(known) = registry.iter().find(|known| ***known == config) {
        return known.clone();
    }
    let config = Arc::new(config);
    registry.push(config.clone());
    config
}

/// Everything needed to open a connection to one server. Two locks with equal
/// configs share one pooled connection.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ServerConfig {
    /// Address, credentials and database.
    pub url: ServerUrl,
    /// TCP/TLS connect timeout.
    pub connect_timeout: Duration,
    /// Read and write timeout of every command.
    pub read_timeout: Duration,
    /// TLS settings (used for `rediss://` only).
    pub tls: TlsOptions,
}

impl ServerConfig {
    /// Combines a parsed URL with the connection-related options.
    pub fn new(url: ServerUrl, options: &LockOptions) -> Self {
        let tls = match url.endpoint {
            Endpoint::Tcp { tls: true, .. } => options.tls.clone(),
            _ => TlsOptions::default(),
        };
        Self {
            url,
            connect_timeout: options.connect_timeout,
            read_timeout: options.read_timeout,
            tls,
        }
    }

    /// The server as shown in messages: its URL with the password masked.
    pub fn name(&self) -> String {
        self.url.redacted()
    }

    /// Opens a new connection, authenticates, selects the database and sets
    /// the read/write timeouts. The whole setup is bounded by the connect
    /// timeout.
    pub fn open(&self) -> Result<Connection> {
        let fail = |e: &redis::RedisError| LockError::from_redis(&self.name(), e);
        let client = self.client()?;
        let con = if matches!(self.url.endpoint, Endpoint::Tcp { tls: true, .. }) {
            self.open_tls(client)?
        } else {
            client
                .get_connection_with_timeout(self.connect_timeout)
                .map_err(|e| fail(&e))?
        };
        con.set_read_timeout(Some(self.read_timeout))
            .map_err(|e| fail(&e))?;
        con.set_write_timeout(Some(self.read_timeout))
            .map_err(|e| fail(&e))?;
        Ok(con)
    }

    /// redis-rs bounds the TCP connect but not the TLS handshake that
    /// follows (a peer that never answers it would block PHP forever), so a
    /// TLS connection is opened on a helper thread and abandoned when the
    /// connect timeout passes; the thread ends when the peer gives up.
    fn open_tls(&self, client: redis::Client) -> Result<Connection> {
        let (sender, receiver) = std::sync::mpsc::channel();
        let timeout = self.connect_timeout;
        std::thread::Builder::new()
            .name("redislock-tls-connect".into())
            .spawn(move || {
                let _ = sender.send(client.get_connection_with_timeout(timeout));
            })
            .map_err(|e| self.failure(ConnectionFailure::Other, e.to_string()))?;
        match receiver.recv_timeout(timeout) {
            Ok(Ok(con)) => Ok(con),
            Ok(Err(e)) => Err(LockError::from_redis(&self.name(), &e)),
            Err(_) => Err(self.failure(
                ConnectionFailure::TimedOut,
                format!(
                    "no TLS handshake within the connect timeout ({} s)",
                    timeout.as_secs_f64()
                ),
            )),
        }
    }

    fn failure(&self, kind: ConnectionFailure, detail: String) -> LockError {
        LockError::Connection {
            server: self.name(),
            kind,
            detail,
        }
    }

    fn client(&self) -> Result<redis::Client> {
        let addr = match &self.url.endpoint {
            Endpoint::Tcp {
                host,
                port,
                tls: false,
            } => ConnectionAddr::Tcp(host.clone(), *port),
            Endpoint::Tcp {
                host,
                port,
                tls: true,
            } => ConnectionAddr::TcpTls {
                host: host.clone(),
                port: *port,
                insecure: !self.tls.verify,
                tls_params: None,
            },
            Endpoint::Unix { path } => ConnectionAddr::Unix(path.clone()),
        };
        // No CLIENT SETINFO: redis-rs ignores its errors but waits for each
        // reply with the whole connect timeout, doubling the time a frozen
        // server costs (and Redis < 7.2 rejects it anyway).
        let mut redis = RedisConnectionInfo::default()
            .set_db(self.url.db)
            .set_skip_set_lib_name();
        if let Some(user) = &self.url.username {
            redis = redis.set_username(user);
        }
        if let Some(password) = &self.url.password {
            redis = redis.set_password(password);
        }
        let info = addr
            .into_connection_info()
            .map_err(|e| LockError::from_redis(&self.name(), &e))?
            .set_tcp_settings(TcpSettings::default().set_nodelay(true))
            .set_redis_settings(redis);
        let custom_certs = self.tls.ca.is_some() || self.tls.cert.is_some();
        let is_tls = matches!(self.url.endpoint, Endpoint::Tcp { tls: true, .. });
        let built = if is_tls && custom_certs && self.tls.verify {
            redis::Client::build_with_tls(info, self.certificates()?)
        } else {
            redis::Client::open(info)
        };
        built.map_err(|e| LockError::from_redis(&self.name(), &e))
    }

    fn certificates(&self) -> Result<TlsCertificates> {
        let read = |path: &std::path::Path| {
            std::fs::read(path).map_err(|e| {
                self.failure(
                    ConnectionFailure::Tls,
                    format!("cannot read {}: {e}", path.display()),
                )
            })
        };
        let root_cert = self.tls.ca.as_deref().map(read).transpose()?;
        let client_tls = match (&self.tls.cert, &self.tls.key) {
            (Some(cert), Some(key)) => Some(ClientTlsConfig {
                client_cert: read(cert)?,
                client_key: read(key)?,
            }),
            _ => None,
        };
        Ok(TlsCertificates {
            client_tls,
            root_cert,
        })
    }
}
