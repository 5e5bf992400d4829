//! Talking to servers: one connection ([`wire`], parsing replies with
//! [`resp`]), how to open it ([`connection`]), the per-process pool
//! ([`pool`]), sending a call to one or several servers at once
//! ([`exchange`]), and what a server is ([`facts`]).

pub mod connection;
pub mod exchange;
pub mod facts;
pub mod pool;
pub(crate) mod resp;
pub mod wire;
