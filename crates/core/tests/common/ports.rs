//! Port claims shared by every launcher of private redis-servers (these
//! tests, `php-tests/config.inc`, `scripts/redis.sh`): one file per port in
//! [`CLAIMS`], locked with `flock` by the process whose server uses the
//! port, for as long as that server's fixture lives, kill and restart
//! included. A test that kills a server expects nobody to answer on its
//! port; without the claim, a server of a suite running beside it (or of
//! another test of this one) could start there and take the test's calls.
//! The pid check of `RedisServer::spawn` still guards against processes
//! that claim nothing.

use std::fs::{File, OpenOptions, Permissions};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::io::AsRawFd;

/// The directory of claim files (world-writable and sticky, like /tmp).
pub const CLAIMS: &str = "/tmp/redislock-test-ports";

/// What claiming a port found.
pub enum Claim {
    /// Ours until dropped.
    Held(File),
    /// Claimed by a live process (another suite's server, or one of ours).
    Taken,
    /// Claims cannot be made here (no writable directory): go on unclaimed.
    Unavailable,
}

/// Claims `port` without waiting.
pub fn claim(port: u16) -> Claim {
    if std::fs::create_dir_all(CLAIMS).is_ok() {
        let _ = std::fs::set_permissions(CLAIMS, Permissions::from_mode(0o1777));
    }
    let path = format!("{CLAIMS}/{port}");
    let Ok(file) = OpenOptions::new().create(true).append(true).open(path) else {
        return Claim::Unavailable;
    };
    // SAFETY: flock on a file descriptor we own for the call's duration.
    let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
    if locked {
        Claim::Held(file)
    } else {
        Claim::Taken
    }
}
