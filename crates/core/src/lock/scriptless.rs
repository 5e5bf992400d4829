//! The lock on a server that refuses scripts but compares and deletes in
//! one command ([`crate::protocol::scriptless`]): found once per server and
//! process, before the first acquire, by the refusal of the permission
//! check's script and a look at the server's commands (never a write).
//!
//! Only where one server decides ([`Waiting::HandOver`]: a single server,
//! Sentinel, Cluster). A blocked acquire waits on the lease engine's one
//! wait ([`crate::lease::queue`]) with steps that try `SET NX`, each sent
//! behind a `BLPOP` on the shared wake-up list that a release pushes to:
//! no queue, no FIFO, no hand-over. Fencing and `owner` are refused.

use std::time::Instant;

use super::{Claim, Lock, Won};
use crate::error::{LockError, Result};
use crate::lease::deadline::Deadline;
use crate::lease::queue::{self, Policy, Steps, Waited, alive_window};
use crate::protocol::call::Call;
use crate::protocol::scriptless::{self, CompareDelete};
use crate::protocol::step::{Mode, Step};
use crate::topology::{Role, Waiting};

/// What the permission check's refusal says when the server refuses
/// scripts themselves (see [`LockError::from_redis`]), as opposed to a
/// script that ran and found a command refused by the ACL.
const SCRIPTS_REFUSED: &str = "redislock needs EVAL/EVALSHA";

impl Lock {
    /// How this lock's server compares and deletes without scripts, if it
    /// was found to refuse them.
    pub(super) fn scriptless(&self) -> Option<CompareDelete> {
        self.topology.scriptless(&self.keys.lock)
    }

    /// After the permission check was `refused`: when the refusal is of
    /// scripts themselves, the key lives on one server that decides, and
    /// that server has a compare-and-delete command (and, where the ACL
    /// says, lets this user run every command of the script-less lock),
    /// records the server as script-less and returns how it deletes.
    /// `Ok(None)`: not such a server (the caller reports `refused`).
    pub(super) fn detect_scriptless(&self, refused: &LockError) -> Result<Option<CompareDelete>> {
        let scripts_refused =
            matches!(refused, LockError::Server { detail, .. } if detail.contains(SCRIPTS_REFUSED));
        if !scripts_refused
            || self.topology.servers_per_key() != 1
            || !matches!(self.topology.waiting(), Waiting::HandOver)
        {
            return Ok(None);
        }
        let key = &self.keys.lock;
        let Ok(probe) = self
            .topology
            .run_on(0, Role::Command, key, &|_| scriptless::probe())
        else {
            return Ok(None);
        };
        let Some(how) = probe.how else {
            return Ok(None);
        };
        if let Some(user) = &probe.user {
            let keys = &*self.keys;
            let check = self.topology.run_on(0, Role::Command, key, &|_| {
                scriptless::permitted(user, keys, how)
            });
            if let Ok(Some(denied)) = check {
                let LockError::Server { server, .. } = refused else {
                    return Ok(None);
                };
                return Err(LockError::Server {
                    server: server.clone(),
                    detail: format!(
                        "the server refuses scripts, and its ACL refuses a command that \
                         redislock's lock without scripts needs ({denied}), so this call changed \
                         nothing in Redis"
                    ),
                });
            }
        }
        self.topology.mark_scriptless(key, how);
        Ok(Some(how))
    }

    /// A fencing token needs an atomic counter-and-SET: refused without
    /// scripts, before anything is taken.
    pub(super) fn fencing_refused(&self) -> LockError {
        LockError::Unsupported(format!(
            "option \"fencing\" cannot be used with {}: the server refuses Lua scripts, and \
             without a script no command takes the next fencing token and the lock in one \
             atomic step; no lock was taken (turn \"fencing\" off, or allow EVAL/EVALSHA)",
            self.topology.names().join(", ")
        ))
    }

    /// A fixed owner's hold is told from the same owner's others by a nonce
    /// that every release compares with the token in one script: refused
    /// without scripts, before anything is taken (a release of an older
    /// hold of the owner, held up in flight, would delete a newer one).
    pub(super) fn owner_refused(&self) -> LockError {
        LockError::Unsupported(format!(
            "option \"owner\" cannot be used with {}: the server refuses Lua scripts, and \
             without a script a release compares the owner alone, so a delayed release of \
             an earlier hold of the same owner could delete the next one; no lock was taken \
             (leave \"owner\" unset, or allow EVAL/EVALSHA)",
            self.topology.names().join(", ")
        ))
    }

    /// An acquire without scripts (the server deletes with `how`): one
    /// `SET NX PX`; when the lock is held and the `deadline` waits, the lease engine's wait
    /// ([`queue::wait_in_queue`]) with a poller's steps ([`Poller`]).
    pub(super) fn acquire_scriptless(
        &mut self,
        claim: &Claim,
        deadline: &Deadline,
        how: CompareDelete,
    ) -> Result<Option<Won>> {
        let token = &claim.token[..];
        let keys = &*self.keys;
        let ttl_ms = self.ttl_ms;
        let sent = Instant::now();
        let (set, owner) = self
            .topology
            .run_on(0, Role::Command, &keys.lock, &|attempt| {
                self.acked(scriptless::acquire(keys, token, ttl_ms, attempt), |r| r.0)
            })?;
        if set || owner.as_deref() == Some(token) {
            if self.topology.validity(ttl_ms, sent.elapsed()).is_some() {
                return Ok(Some(Won { fence: None, sent }));
            }
            // Won too late: undone. An undo that got no answer stays
            // pending and would delete what the wait takes with this
            // token: then the acquire ends with its failure.
            if let Some(err) = self.undo(claim)
                && deadline.waits()
            {
                return Err(err);
            }
        }
        if !deadline.waits() {
            return Ok(None);
        }
        let poller = Poller {
            lock: self,
            token,
            how,
            alive_ms: alive_window(self.options.retry_delay),
        };
        let waited = queue::wait_in_queue(
            &queue::Wait {
                topology: &self.topology,
                ttl_ms,
                deadline,
                unknown: false,
                first_wait: None,
            },
            &poller,
        )?;
        Ok(match waited {
            Waited::Won { sent, .. } => Some(Won { fence: None, sent }),
            _ => None,
        })
    }
}

/// A blocked acquire's steps on a server without scripts, on the lease
/// engine's wait: each step marks that someone waits and tries `SET NX`
/// ([`scriptless::wait_step`]); between steps the waiter blocks on the
/// shared wake-up list with its next step behind the `BLPOP`, so Redis
/// tries for it the moment a release wakes it. No queue: whoever's
/// `SET NX` comes first wins. A win too late, or a wait that PHP ended, is
/// given back with the compare-and-delete (it deletes only this token's
/// hold).
struct Poller<'a> {
    lock: &'a Lock,
    token: &'a [u8],
    how: CompareDelete,
    alive_ms: u64,
}

impl Steps for Poller<'_> {
    fn key(&self) -> &[u8] {
        &self.lock.keys.lock
    }

    fn wake_list(&self) -> Vec<u8> {
        scriptless::wake_list(&self.lock.keys.lock)
    }

    fn step(&self, _mode: Mode, _replay: bool) -> Call<Step> {
        // Every step is a try, the last one too, and safe to replay (a
        // lock that holds the token already is set again, from this send).
        let keys = &self.lock.keys;
        let call = scriptless::wait_step(keys, self.token, self.lock.ttl_ms, self.alive_ms);
        self.lock.acked(call, Step::is_won)
    }

    fn top_up(&self) -> Call<bool> {
        let call = scriptless::refresh(&self.lock.keys.lock, self.token, self.lock.ttl_ms);
        self.lock.acked(call, |ours| *ours)
    }

    fn give_back(&self, _answered: bool) -> Call<bool> {
        scriptless::abandon(&self.lock.keys, self.token, self.how)
    }
}

impl Policy for Poller<'_> {
    fn hands_over(&self) -> bool {
        false
    }
}
