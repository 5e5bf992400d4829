//! Read holds of a lock (`acquireRead()`): many readers at once, a writer
//! excluding them all, a waiting writer keeping new readers out.
//!
//! A read hold is driven by the semaphore's engine on the lock's readers
//! (`K~~r`, [`SemKeys::readers`]): the same leases by the client's clock,
//! FIFO queue (the lock's own, shared with writers), `BLPOP` wake-ups,
//! renewal, request end and fork handling. While readers hold the lock, its
//! key holds the read mark, so a writer's plain `SET NX PX` fails as it
//! does against another writer and the write path costs nothing more
//! (docs/protocol.md "Read holds").
//!
//! Symfony's `SharedLockInterface` semantics: `acquire()` on an object
//! holding a read hold promotes it (once no other reader holds the lock),
//! `acquireRead()` on one holding the write hold demotes it.

use std::time::Duration;

use crate::config::options::OnLost;
use crate::error::{LockError, Result};
use crate::lock::{Lock, holds};
use crate::semaphore::Semaphore;

impl Lock {
    /// Takes a read hold, waiting up to `wait` while a writer holds the
    /// lock or waits for it. On an object that holds the write hold, turns
    /// it into a read hold (demotion; at once, never waits); on one that
    /// holds a read hold, extends its lease. True when this object now
    /// holds a read hold.
    pub fn acquire_read(&mut self, wait: Duration, stop: &dyn Fn() -> bool) -> Result<bool> {
        self.check_read_options()?;
        if let Some(readers) = self.read_hold()
            && readers.refresh(None)?
        {
            return Ok(true);
        }
        if let Some(entry) = self.live_entry() {
            if entry.restored {
                return Err(LockError::Unsupported(format!(
                    "acquireRead() on lock \"{}\": this object's hold was taken over with \
                     restore(), which adopts write holds only; release it, or read with \
                     another object; no read hold was taken",
                    String::from_utf8_lossy(&self.key)
                )));
            }
            if entry.count != 1 || self.share.map_or(0, |s| s.own) != 1 {
                return Err(LockError::Unsupported(format!(
                    "lock \"{}\" is held more than once in this process (reentrant acquires, or \
                     other objects on the same key): release those first; only a single write \
                     hold can turn into a read hold",
                    String::from_utf8_lossy(&self.key)
                )));
            }
            let token = entry.token.clone();
            let demoted = self
                .readers()
                .acquire_as(token, Duration::ZERO, &|| false)?;
            // The write hold is now a read hold (or was lost): forget it
            // here without a release.
            if let Some(entry) = holds::remove(entry.id) {
                entry.lease.stop();
                if !demoted {
                    entry.lease.found_lost();
                }
            }
            self.share = None;
            if demoted {
                return Ok(true);
            }
        }
        let token = crate::protocol::token::new_token()?.into_bytes();
        self.readers().acquire_as(token, wait, stop)
    }

    /// When this object holds a read hold: turns it into the write hold
    /// once no other reader holds the lock, waiting up to `wait`
    /// ([`Lock::acquire`] on a read-holding object). `None` when it holds
    /// no read hold.
    pub(super) fn promote(
        &mut self,
        wait: Duration,
        stop: &dyn Fn() -> bool,
    ) -> Option<Result<bool>> {
        let keys = self.keys.clone();
        let promoted = self.read_hold()?.promote(&keys, wait, stop);
        Some(promoted.map(|won| match won {
            Some((token, sent)) => {
                self.adopt(token, None, sent);
                true
            }
            None => false,
        }))
    }

    /// This object's read holds, built on first use.
    fn readers(&mut self) -> &mut Semaphore {
        self.readers.get_or_insert_with(|| {
            Semaphore::readers_of(
                self.key.clone(),
                &self.keys,
                self.ttl_ms,
                self.topology.clone(),
                self.options.clone(),
            )
        })
    }

    /// The read holds, when this object holds one.
    pub(super) fn read_hold(&mut self) -> Option<&mut Semaphore> {
        let readers = self.readers.as_mut()?;
        if readers.holds() { Some(readers) } else { None }
    }

    /// Refuses what read holds do not do, before anything is sent.
    fn check_read_options(&self) -> Result<()> {
        let refused = |what: &str| {
            Err(LockError::Unsupported(format!(
                "acquireRead() on lock \"{}\": {what}; no read hold was taken",
                String::from_utf8_lossy(&self.key)
            )))
        };
        if self.topology.servers_per_key() > 1 {
            return refused(
                "read holds do not run over several independent servers (Redlock): counting \
                 readers needs one server that decides; use one server, Sentinel or Cluster",
            );
        }
        if self.options.fencing {
            return refused(
                "option \"fencing\" is for exclusive holds (a fencing token orders writers; \
                 readers share one state); use a lock object without \"fencing\" to read",
            );
        }
        if self.options.owner.is_some() {
            return refused(
                "option \"owner\" names one holder, and every reader needs a token of its own",
            );
        }
        if self.options.replicas > 0 {
            return refused("option \"replicas\" is not supported for read holds yet");
        }
        if self.options.on_lost == OnLost::Interrupt {
            return refused(
                "option \"on_lost\" => \"interrupt\" is for exclusive holds; check isAcquired() \
                 while reading",
            );
        }
        if self.topology.scriptless(&self.keys.lock).is_some() {
            return refused(
                "the server refuses Lua scripts, and read holds need them (only the exclusive \
                 lock works without scripts)",
            );
        }
        Ok(())
    }
}
