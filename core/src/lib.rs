//! The PHP-agnostic core of the `redislock` extension.
//!
//! Nothing here knows about PHP: the binding in the parent crate turns PHP
//! values into calls on [`Lock`] and [`LockError`]s into PHP exceptions.
//!
//! - [`token`]: owner tokens from the OS CSPRNG
//! - [`scripts`] / [`commands`]: the lock protocol (`SET NX PX`, Lua
//!   compare-and-delete, compare-and-pexpire)
//! - [`url`], [`connection`], [`wire`], [`pool`]: servers, signal-safe
//!   connections, and the per-process pool
//! - [`signals`]: how blocking waits hear PHP's signals
//! - [`keys`]: the key names of a lock (the lock, its waiter queue, ...)
//! - [`holds`]: the process-wide table of held locks (reentrancy, request
//!   end, fork)
//! - [`lock`]: one lock object: acquire (with the waiter queue), release,
//!   refresh, restore
//! - [`renewal`]: the lease renewal thread (`auto_renew`)
//! - [`process`]: per-process state that a `fork()` replaces
//! - [`options`], [`duration`], [`settings`], [`numeric`]: validation of
//!   what callers pass in, with PHP's rules where they matter

#![warn(missing_docs)]

pub mod commands;
pub mod connection;
pub mod duration;
pub mod error;
pub mod holds;
pub mod keys;
pub mod lock;
pub mod numeric;
pub mod options;
pub mod pool;
pub mod process;
pub mod renewal;
pub mod scripts;
pub mod settings;
pub mod signals;
pub mod token;
pub mod url;
pub mod wire;

pub use error::{ConnectionFailure, LockError, Result};
pub use lock::{Lock, LockInfo, release_all};
pub use options::{LockOptions, OptionKind, OptionValue};

/// Version of the core (and of the extension).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
