//! One Redis server holds every lock: the defaults of [`Route`].

use std::sync::Arc;

use super::route::{Route, Servers};
use crate::config::options::TopologyOptions;
use crate::config::url::ServerUrl;
use crate::error::Result;
use crate::net::connection::{self, ServerConfig};

/// A single server.
#[derive(Debug, PartialEq)]
pub(crate) struct Single {
    server: Arc<ServerConfig>,
}

/// One URL: a single server ([`super::TOPOLOGIES`]).
pub(crate) fn build(
    urls: &[ServerUrl],
    options: &TopologyOptions,
) -> Result<Option<Box<dyn Route>>> {
    let [url] = urls else {
        return Ok(None);
    };
    let server = connection::intern(ServerConfig::new(url.clone(), &options.connection));
    Ok(Some(Box::new(Single::new(server))))
}

impl Single {
    /// The topology of one (interned) server.
    pub(crate) fn new(server: Arc<ServerConfig>) -> Self {
        Self { server }
    }
}

impl Route for Single {
    fn servers(&self, _key: &[u8]) -> Result<Servers<'_>> {
        Ok(Servers::Kept(std::slice::from_ref(&self.server)))
    }

    fn scope(&self) -> String {
        self.server.url.keyspace()
    }

    fn names(&self) -> Vec<String> {
        vec![self.server.name()]
    }
}
