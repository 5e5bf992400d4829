//! Read holds of a lock (`acquireRead()`): many readers at once, a writer
//! excluding them all, a waiting writer keeping new readers out.
//!
//! A read hold is a counted hold of the lease engine
//! ([`crate::lease::counted`]) on the lock's readers (`K~~r`,
//! [`SemKeys::readers`]): leases by the client's clock, the lock's own FIFO
//! queue (shared with writers), `BLPOP` wake-ups with the step behind them,
//! renewal, request end and fork handling, in the process's one table of
//! holds. While readers hold the lock, its key holds the read mark, so a
//! writer's plain `SET NX PX` fails as it does against another writer and
//! the write path costs nothing more (docs/protocol.md "Read holds").
//!
//! Symfony's `SharedLockInterface` semantics: `acquire()` on an object
//! holding a read hold promotes it (once no other reader holds the lock),
//! `acquireRead()` on one holding the write hold demotes it. Both only for
//! the hold of the calling Fiber: another Fiber competes as another
//! process would.

use std::sync::Arc;
use std::time::Duration;

use super::{Claim, Held, Lock};
use crate::config::options::OnLost;
use crate::error::{LockError, Result};
use crate::lease::counted::{Counter, Promoted, Taken};
use crate::lease::hold;
use crate::lease::table::{self, Entry};
use crate::protocol::counted::SemKeys;
use crate::stats::{Primitive, Tally};

impl Lock {
    /// Takes a read hold, waiting up to `wait` while a writer holds the
    /// lock or waits for it. On an object that holds the write hold (in
    /// this Fiber), turns it into a read hold (demotion; at once, never
    /// waits); on one that holds a read hold, extends its lease. True when
    /// this object now holds a read hold.
    pub fn acquire_read(&mut self, wait: Duration) -> Result<bool> {
        let tally = Tally::start(Primitive::Read);
        let result = self.acquire_read_uncounted(wait);
        tally.finish(&self.key, wait, &result);
        result
    }

    /// [`Lock::acquire_read`], uncounted.
    fn acquire_read_uncounted(&mut self, wait: Duration) -> Result<bool> {
        self.check_read_options()?;
        let keys = Arc::new(SemKeys::readers(&self.keys));
        match self.entry() {
            Some(entry) if !entry.is_write() => {
                if hold::extend(&entry, self.ttl_ms)? {
                    return Ok(true);
                }
                // Lost: taken anew below.
                table::remove(entry.id);
                self.held = Held::None;
            }
            Some(entry) if self.demote(&entry, &keys)? => return Ok(true),
            _ => {}
        }
        let token = crate::protocol::token::new_token()?.into_bytes();
        let taken = self.readers(&keys).acquire(&token, 1, wait)?;
        match taken {
            Taken::Won(sent) => {
                let id = self.readers(&keys).adopt(token, 1, sent);
                self.held = Held::Read { id };
                Ok(true)
            }
            Taken::Out | Taken::Mismatch(_) => Ok(false),
        }
    }

    /// Turns this object's write hold `entry` into a read hold under the
    /// same token. False when the write hold was lost meanwhile (it is
    /// forgotten, and the caller takes a read hold anew).
    fn demote(&mut self, entry: &Entry, keys: &Arc<SemKeys>) -> Result<bool> {
        if entry.restored {
            return Err(LockError::Unsupported(format!(
                "acquireRead() on lock \"{}\": this object's hold was taken over with \
                 restore(), which adopts write holds only; release it, or read with \
                 another object; no read hold was taken",
                String::from_utf8_lossy(&self.key)
            )));
        }
        let own = match self.held {
            Held::Write { own, .. } => own,
            _ => 0,
        };
        if entry.count != 1 || own != 1 {
            return Err(LockError::Unsupported(format!(
                "lock \"{}\" is held more than once in this process (reentrant acquires, or \
                 other objects on the same key): release those first; only a single write \
                 hold can turn into a read hold",
                String::from_utf8_lossy(&self.key)
            )));
        }
        let demoted = self
            .readers(keys)
            .acquire(&entry.token, 1, Duration::ZERO)?;
        // The write hold is now a read hold (or was lost): forgotten here
        // without a release.
        if let Some(write) = table::remove(entry.id)
            && demoted == Taken::Out
        {
            write.lease.found_lost();
        }
        self.held = Held::None;
        let Taken::Won(sent) = demoted else {
            return Ok(false);
        };
        let id = self.readers(keys).adopt(entry.token.clone(), 1, sent);
        self.held = Held::Read { id };
        Ok(true)
    }

    /// Turns this object's read hold `read` into the write hold once no
    /// other reader holds the lock, waiting up to `wait` ([`Lock::acquire`]
    /// on a read-holding object). A read hold found gone is forgotten.
    pub(super) fn promote(&mut self, read: &Entry, wait: Duration) -> Result<Promoted> {
        let keys = Arc::new(SemKeys::readers(&self.keys));
        let promoted = self.readers(&keys).promote(&self.keys, &read.token, wait)?;
        match promoted {
            Promoted::Won(sent) => {
                table::remove(read.id);
                // A reader's token is its own (no `owner` for reads).
                let claim = Claim {
                    token: read.token.clone(),
                    nonce: None,
                };
                self.adopt(claim, None, sent);
            }
            Promoted::Gone => {
                read.lease.found_lost();
                table::remove(read.id);
                self.held = Held::None;
            }
            // Still a reader, unless the lease ended meanwhile.
            Promoted::Out if read.lease.valid_for().is_zero() => {
                read.lease.found_lost();
                table::remove(read.id);
                self.held = Held::None;
                return Ok(Promoted::Gone);
            }
            Promoted::Out => {}
        }
        Ok(promoted)
    }

    /// How this lock's read holds are taken: no number of permits, the
    /// lock's ttl, topology and options (checked for read holds first).
    fn readers<'a>(&'a self, keys: &'a Arc<SemKeys>) -> Counter<'a> {
        Counter {
            keys,
            permits: 0,
            ttl_ms: self.ttl_ms,
            topology: &self.topology,
            options: &self.options,
        }
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
