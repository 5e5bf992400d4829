//! The script check (`permitted.lua`): before this process's first
//! acquire of a kind on a server, whether the server runs our scripts and
//! whether its ACL lets this user run every command that kind's scripts
//! run on its keys (Redis 7.0+). Fails with the server's refusal, before
//! anything is taken; reads and writes nothing. One check per kind, since
//! one kind's says nothing of another's commands or keys.

use crate::protocol::call::Call;
use crate::protocol::counted::{Counted, SemKeys};
use crate::protocol::keys::LockKeys;
use crate::protocol::reply::{one, value};
use crate::protocol::scripts;

/// What is checked: a lock's commands, a semaphore's permits' or a lock's
/// read holds'.
#[derive(Debug, Clone, Copy)]
pub enum Permitted<'a> {
    /// A lock's (acquire, release, the queue, fencing). Every key of the
    /// lock is declared: a Redis Cluster node taken for a plain server then
    /// refuses the call (CROSSSLOT) before the acquire, instead of the
    /// release refusing it after.
    Lock(&'a LockKeys),
    /// A semaphore's permits' or a lock's read holds' (their keys say
    /// which).
    Counted(&'a SemKeys),
}

/// The kinds of check, each remembered on its own per server
/// (`net::connection::ScriptsChecked`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckKind {
    /// [`Permitted::Lock`].
    Lock,
    /// [`Permitted::Counted`] of a semaphore.
    Permits,
    /// [`Permitted::Counted`] of a lock's read holds.
    Readers,
}

impl Permitted<'_> {
    /// Which kind of check this is.
    pub fn kind(&self) -> CheckKind {
        match self {
            Permitted::Lock(_) => CheckKind::Lock,
            Permitted::Counted(keys) => match keys.counted {
                Counted::Permits => CheckKind::Permits,
                Counted::Readers(_) => CheckKind::Readers,
            },
        }
    }

    /// The check's call.
    pub fn call(&self) -> Call<()> {
        let cmd = match self {
            Permitted::Lock(keys) => scripts::PERMITTED
                .evalsha(&[&keys.lock, &keys.queue, &keys.fence, &keys.counter], &[]),
            Permitted::Counted(keys) => match &keys.counted {
                Counted::Permits => {
                    scripts::PERMITTED.evalsha(&[&keys.holders, &keys.queue], &["semaphore".into()])
                }
                Counted::Readers(lock) => scripts::PERMITTED.evalsha(
                    &[&keys.holders, &keys.queue, &lock.lock],
                    &["readers".into()],
                ),
            },
        };
        Call::one(cmd, |r| value::<i64>(one(r)?).map(drop))
    }
}
