//! One server of a topology on its own, for a look at each server (the
//! doctor, `lock/checkup.rs`): its name, calls run on it alone (no
//! following a redirect or a failover: the server asked is the server
//! answering), and its `INFO` facts, kept for later acquires.

use std::sync::Arc;

use crate::error::{LockError, Result};
use crate::net::connection::{Known, ServerConfig};
use crate::net::exchange;
use crate::net::facts::ServerFacts;
use crate::net::pool::Role;
use crate::protocol::call::Call;
use crate::protocol::lock_calls;

/// One server of a topology ([`super::Topology::nodes`]).
pub(crate) struct Node(Arc<ServerConfig>);

impl Node {
    pub(super) fn new(server: Arc<ServerConfig>) -> Self {
        Self(server)
    }

    /// The server's name (`host:port`, as errors name it).
    pub(crate) fn name(&self) -> String {
        self.0.name()
    }

    /// Runs `build`'s call on this server alone, on its command connection.
    pub(crate) fn run<T>(&self, build: &dyn Fn() -> Call<T>) -> Result<T> {
        exchange::run_one(&self.0, Role::Command, &|_| build())
    }

    /// Reads the server's facts (`INFO`) and keeps them for later acquires
    /// of this process (option `unsafe_server`), a refusal too (then the
    /// server is unknown, never unsafe).
    pub(crate) fn read_facts(&self) -> Result<ServerFacts> {
        match self.run(&lock_calls::info) {
            Ok(text) => {
                let facts = ServerFacts::parse(&text);
                self.0.facts.set(Known::Facts(facts.clone()));
                Ok(facts)
            }
            Err(e) => {
                if matches!(e, LockError::Server { .. }) {
                    self.0.facts.set(Known::Refused(e.to_string()));
                }
                Err(e)
            }
        }
    }
}
