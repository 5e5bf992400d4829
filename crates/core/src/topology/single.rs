//! One Redis server holds every lock.

use std::sync::Arc;

use crate::net::connection::ServerConfig;

/// A single server.
#[derive(Debug, PartialEq)]
pub struct Single {
    server: Arc<ServerConfig>,
}

impl Single {
    /// The topology of one (interned) server.
    pub fn new(server: Arc<ServerConfig>) -> Self {
        Self { server }
    }

    /// The server.
    pub fn server(&self) -> &Arc<ServerConfig> {
        &self.server
    }
}
