//! Test fixture: another process for the tests that need one (to SIGSTOP,
//! SIGCONT or SIGKILL it): a forked child that runs a closure and talks to
//! its parent through two pipes, in messages of bytes.
//!
//! The child runs only the lock code and the closure (fork-safe by design:
//! per-process state is rebuilt in a child) and leaves with `_exit`,
//! running no destructor of its parent's (the parent's servers stay up).
//! What is built once per program is built before the fork (the scripts,
//! as the binding does at startup; the fork handler of the per-process
//! state): another test's thread building one at that moment left the
//! child waiting forever for a build that no thread of it runs.
//! The parent kills a child still running when its [`Child`] is dropped.

use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// One end of the pipes between a parent and its child: messages out, and
/// messages in.
pub struct Channel {
    read: RawFd,
    write: RawFd,
}

impl Channel {
    /// Sends one message (its length, then its bytes).
    pub fn send(&self, message: &[u8]) {
        let len = (message.len() as u32).to_le_bytes();
        write_all(self.write, &len);
        write_all(self.write, message);
    }

    /// The next message, or `None` when none came within `within` (or the
    /// other side closed its end).
    pub fn recv(&self, within: Duration) -> Option<Vec<u8>> {
        let deadline = Instant::now() + within;
        let mut len = [0u8; 4];
        read_exact(self.read, &mut len, deadline)?;
        let mut message = vec![0u8; u32::from_le_bytes(len) as usize];
        read_exact(self.read, &mut message, deadline)?;
        Some(message)
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        // SAFETY: our own descriptors, closed once.
        unsafe {
            libc::close(self.read);
            libc::close(self.write);
        }
    }
}

/// Writes all of `bytes` to `fd` (a child that cannot talk to its parent
/// has nothing left to do: it exits).
fn write_all(fd: RawFd, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: writing from a live buffer of that length.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        assert!(n > 0, "the pipe to the other process is closed");
        bytes = &bytes[n as usize..];
    }
}

/// Fills `buf` from `fd` by `deadline`; `None` when it could not.
fn read_exact(fd: RawFd, buf: &mut [u8], deadline: Instant) -> Option<()> {
    let mut at = 0;
    while at < buf.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        let mut poll = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = left.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: one pollfd, ours.
        let ready = unsafe { libc::poll(&mut poll, 1, ms) };
        if ready == 0 {
            return None;
        }
        if ready < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return None;
        }
        // SAFETY: reading into the unfilled part of `buf`.
        let n = unsafe { libc::read(fd, buf[at..].as_mut_ptr().cast(), buf.len() - at) };
        if n <= 0 {
            return None;
        }
        at += n as usize;
    }
    Some(())
}

/// Two pipes: (parent's end, child's end).
fn channels() -> (Channel, Channel) {
    let pipe = || {
        let mut fds = [0; 2];
        // SAFETY: a two-element array for pipe2 to fill.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        (fds[0], fds[1])
    };
    let (down_read, down_write) = pipe();
    let (up_read, up_write) = pipe();
    (
        Channel {
            read: up_read,
            write: down_write,
        },
        Channel {
            read: down_read,
            write: up_write,
        },
    )
}

/// A forked child process running a closure.
pub struct Child {
    /// Its process id.
    pub pid: libc::pid_t,
    channel: Channel,
    /// Set once it was waited for: its `waitpid` status.
    status: Option<i32>,
}

impl Child {
    /// Forks a child that runs `body` with its end of the pipes and exits
    /// with the code `body` returns (101 when it panics).
    pub fn fork(body: impl FnOnce(&Channel) -> i32) -> Self {
        let (parent, child) = channels();
        // Each waits for a build under way on another thread.
        redislock_core::testing::protocol::scripts::prepare();
        redislock_core::idle_connections();
        // SAFETY: the child runs `body` and leaves with _exit, running no
        // destructor of the parent's state.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            drop(parent);
            let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(&child)))
                .unwrap_or(101);
            // SAFETY: leaving the child without unwinding into the parent's
            // frames.
            unsafe { libc::_exit(code) };
        }
        drop(child);
        Self {
            pid,
            channel: parent,
            status: None,
        }
    }

    /// Sends the child a message.
    pub fn send(&self, message: &[u8]) {
        self.channel.send(message);
    }

    /// The child's next message, or `None` when none came within `within`.
    pub fn recv(&self, within: Duration) -> Option<Vec<u8>> {
        self.channel.recv(within)
    }

    /// Sends the child `signal`.
    pub fn signal(&self, signal: libc::c_int) {
        assert!(self.pid > 0 && self.status.is_none());
        // SAFETY: our own child, not yet waited for.
        assert_eq!(unsafe { libc::kill(self.pid, signal) }, 0);
    }

    /// Freezes the child (SIGSTOP).
    pub fn stop(&self) {
        self.signal(libc::SIGSTOP);
    }

    /// Lets a frozen child run again (SIGCONT).
    pub fn resume(&self) {
        self.signal(libc::SIGCONT);
    }

    /// Kills the child (SIGKILL) and waits for it.
    pub fn kill(&mut self) {
        if self.status.is_none() {
            self.signal(libc::SIGKILL);
            self.wait(Duration::from_secs(10));
        }
    }

    /// Waits up to `within` for the child to end; its exit code (`None`
    /// when it is still running, or was killed by a signal).
    pub fn wait(&mut self, within: Duration) -> Option<i32> {
        let deadline = Instant::now() + within;
        while self.status.is_none() {
            let mut status = 0;
            // SAFETY: waiting for our own child.
            let done = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
            if done == self.pid {
                self.status = Some(status);
            } else if Instant::now() >= deadline {
                return None;
            } else {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        let status = self.status?;
        libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status))
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if self.status.is_none() {
            // A stopped child dies of SIGKILL all the same.
            self.kill();
        }
    }
}
