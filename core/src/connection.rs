//! Opening one connection to one server with its timeouts and TLS settings.

use std::time::Duration;

use redis::{
    ClientTlsConfig, Connection, ConnectionAddr, IntoConnectionInfo, RedisConnectionInfo,
    TlsCertificates, io::tcp::TcpSettings,
};

use crate::error::{ConnectionFailure, LockError, Result};
use crate::options::{LockOptions, TlsOptions};
use crate::url::{Endpoint, ServerUrl};

/// Name reported to Redis in `CLIENT SETINFO lib-name`.
const LIB_NAME: &str = "redislock";

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
    /// the read/write timeouts.
    pub fn open(&self) -> Result<Connection> {
        let fail = |e: &redis::RedisError| LockError::from_redis(&self.name(), e);
        let client = self.client()?;
        let con = client
            .get_connection_with_timeout(self.connect_timeout)
            .map_err(|e| fail(&e))?;
        con.set_read_timeout(Some(self.read_timeout))
            .map_err(|e| fail(&e))?;
        con.set_write_timeout(Some(self.read_timeout))
            .map_err(|e| fail(&e))?;
        Ok(con)
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
        let mut redis = RedisConnectionInfo::default()
            .set_db(self.url.db)
            .set_lib_name(LIB_NAME, env!("CARGO_PKG_VERSION"));
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
            std::fs::read(path).map_err(|e| LockError::Connection {
                server: self.name(),
                kind: ConnectionFailure::Tls,
                detail: format!("cannot read {}: {e}", path.display()),
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
