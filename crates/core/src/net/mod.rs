//! Talking to servers: one connection ([`wire`], parsing replies with
//! [`resp`]), how to open it ([`connection`]), the per-process pool
//! ([`pool`]), and sending a call to one or several servers at once
//! ([`exchange`]).

pub mod connection;
pub mod exchange;
pub mod pool;
pub(crate) mod resp;
pub mod wire;
