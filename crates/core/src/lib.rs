//! The PHP-agnostic core of the `redislock` extension.
//!
//! Nothing here knows about PHP: the binding in the parent crate turns PHP
//! values into calls on [`Lock`] and [`LockError`]s into PHP exceptions.
//!
//! - [`token`]: owner tokens from the OS CSPRNG
//! - `scripts` / [`commands`] / [`call`]: the lock protocol on one server
//!   (`SET NX PX`, the Lua scripts), as calls a topology can send anywhere
//! - [`topology`]: where a lock's keys live (single server, Redlock), the
//!   only module that knows how many servers there are; `exchange` sends a
//!   call to several servers at once
//! - [`url`], [`connection`], [`wire`], [`pool`]: servers, signal-safe
//!   connections, and the per-process pool
//! - [`signals`]: how blocking waits hear PHP's signals
//! - [`keys`]: the key names of a lock (the lock, its waiter queue, ...)
//! - [`holds`]: the process-wide table of held locks (reentrancy, request
//!   end, fork)
//! - `lock`: one lock object ([`Lock`]): acquire (with the waiter queue),
//!   release, refresh, restore
//! - [`renewal`]: the lease renewal thread (`auto_renew`)
//! - `process`: per-process state that a `fork()` replaces
//! - [`options`], [`duration`], [`settings`], [`numeric`]: validation of
//!   what callers pass in, with PHP's rules where they matter

#![warn(missing_docs)]

pub mod call;
pub mod commands;
pub mod connection;
pub mod context;
pub mod duration;
pub mod error;
mod exchange;
pub mod holds;
pub mod keys;
mod lock;
pub mod numeric;
pub mod options;
pub mod pool;
mod process;
pub mod renewal;
mod resp;
mod scripts;
pub mod settings;
pub mod signals;
pub mod stats;
pub mod token;
pub mod topology;
pub mod url;
pub mod wire;

pub use error::{ConnectionFailure, LockError, Redirect, Result};
pub use lock::{Lock, LockInfo, release_all};
pub use options::{LockOptions, OptionKind, OptionValue};

/// Version of the core (and of the extension).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
