//! The lock protocol on one server, as data: the key names of a lock, the
//! Lua scripts, and each step as a [`call::Call`] (commands in RESP and how
//! to read their replies) that a topology can send to any server. Nothing
//! here opens a connection.

pub mod call;
pub(crate) mod checkup;
pub mod command;
pub mod counted;
pub(crate) mod inspect;
pub mod keys;
pub mod lock_calls;
pub mod permitted;
pub(crate) mod readers;
pub(crate) mod reply;
pub(crate) mod scriptless;
pub mod scripts;
pub mod semaphore;
pub mod step;
pub mod token;
