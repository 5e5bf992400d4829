//! The read holds of a lock as commands (`lib/readers.lua`): a lone
//! reader that found `K` free holds `K` as a writer would, with
//! `"~~read:<token>:<lease end>"` ([`READ_MARK`], `:`, its token, `:`, the
//! end of its lease by its clock, as its score in `K~~r` would be) and
//! `K`'s expiry as its lease; once others read too, `K` holds
//! [`READ_MARK`] and the readers are the sorted set `K~~r`, scored by the
//! end of each reader's lease. Either way a writer's plain `SET NX` fails
//! as against another writer. Readers and writers wait in `K`'s one
//! queue. The engine that drives these calls is the semaphore's
//! ([`crate::protocol::semaphore`] with
//! [`Counted::Readers`](crate::protocol::counted::Counted::Readers)).

use crate::protocol::call::Call;
use crate::protocol::command::Command;
use crate::protocol::counted::{SemKeys, grace_ms, now_ms};
use crate::protocol::keys::LockKeys;
use crate::protocol::lock_calls;
use crate::protocol::reply::{one, unexpected, value};
use crate::protocol::scripts::{self, Lua};
use crate::protocol::step::{Mode, Step};

/// What the lock key holds while readers hold it (a lone reader's `K`:
/// this, `:` and its token). No owner token may start with it
/// ([`crate::protocol::token::validate_token`]); the scripts spell it out
/// as `'~~read'`.
pub(crate) const READ_MARK: &[u8] = b"~~read";

/// A read acquire, a waiter's step or a give-up (`mode` "0", "1", "2"),
/// or a promotion's ([`promote`]) with `script`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn acquire_command(
    script: &Lua,
    keys: &SemKeys,
    lock: &LockKeys,
    token: &[u8],
    ttl_ms: u64,
    mode: &[u8],
    alive_ms: u64,
    arrival_us: u64,
) -> Command {
    script.evalsha(
        &[&keys.holders, &keys.queue, &lock.lock],
        &[
            token.into(),
            now_ms().into(),
            ttl_ms.into(),
            mode.into(),
            alive_ms.into(),
            arrival_us.into(),
            grace_ms().into(),
        ],
    )
}

/// A read hold's plain try on a free lock, as a writer's: `SET K
/// ~~read:<token>:<lease end> NX PX ttl` (a lone reader, `K`'s expiry its
/// lease). [`Step::WON`] when it took `K`; [`Step::Again`] when `K` is
/// held (by a writer or by readers): the caller goes on with
/// `read_acquire.lua`, which joins readers. Only a first attempt: a replay
/// sends `read_acquire.lua`, which finds its own lone reader in `K`.
pub(crate) fn lone_try(lock: &LockKeys, token: &[u8], ttl_ms: u64) -> Call<Step> {
    let ends = (now_ms() + ttl_ms).to_string();
    let mut held = Vec::with_capacity(READ_MARK.len() + token.len() + ends.len() + 2);
    held.extend_from_slice(READ_MARK);
    held.push(b':');
    held.extend_from_slice(token);
    held.push(b':');
    held.extend_from_slice(ends.as_bytes());
    Call::one(lock_calls::set_nx(lock, &held, ttl_ms), |r| {
        Ok(match value::<Option<String>>(one(r)?)? {
            Some(_) => Step::WON,
            None => Step::Again,
        })
    })
}

/// A reader gives its hold back (or, with `abandon` "1", also leaves the
/// queue).
pub(crate) fn release_command(
    keys: &SemKeys,
    lock: &LockKeys,
    token: &[u8],
    abandon: &str,
) -> Command {
    scripts::READ_RELEASE.evalsha(
        &[&keys.holders, &keys.queue, &lock.lock],
        &[
            token.into(),
            now_ms().into(),
            grace_ms().into(),
            abandon.into(),
        ],
    )
}

/// A step of turning `token`'s read hold into the write hold
/// (`read_promote.lua`): [`Step::Won`] once promoted, [`Step::Waiting`]
/// while other readers hold the lock, [`Step::Gone`] when the read hold is
/// gone.
pub(crate) fn promote(
    keys: &SemKeys,
    lock: &LockKeys,
    token: &[u8],
    ttl_ms: u64,
    mode: Mode,
    alive_ms: u64,
    arrival_us: u64,
) -> Call<Step> {
    let cmd = acquire_command(
        &scripts::READ_PROMOTE,
        keys,
        lock,
        token,
        ttl_ms,
        mode.arg(),
        alive_ms,
        arrival_us,
    );
    Call::one(cmd, |r| {
        let reply: Vec<i64> = value(one(r)?)?;
        match reply[..] {
            [-3] => Ok(Step::Gone),
            _ => step(reply).ok_or_else(|| unexpected("read_promote")),
        }
    })
}

/// Reads what a read acquire answered (readers have no number to
/// disagree about).
pub(crate) fn step(reply: Vec<i64>) -> Option<Step> {
    match reply[..] {
        [1] => Some(Step::WON),
        [0, ms] => Some(Step::waiting(ms)),
        [2] => Some(Step::GaveUp),
        [3] => Some(Step::Again),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::keys;

    #[test]
    fn the_scripts_spell_the_read_mark_as_the_core_does() {
        let mark = format!("'{}'", String::from_utf8_lossy(READ_MARK));
        for code in [
            include_str!("../../scripts/lib/readers.lua"),
            include_str!("../../scripts/read_acquire.lua"),
            include_str!("../../scripts/read_release.lua"),
            include_str!("../../scripts/read_refresh.lua"),
        ] {
            assert!(code.contains(&mark), "{mark} missing");
        }
    }

    #[test]
    fn readers_share_the_lock_slot_and_queue() {
        let lock = LockKeys::new(b"app:{7}:job".to_vec(), b"app:~~fence".to_vec());
        let k = SemKeys::readers(&lock);
        assert_eq!(k.holders, b"app:{7}:job~~r");
        assert_eq!(k.queue, lock.queue);
        assert_eq!(k.wake(b"t"), lock.wake(b"t"));
        assert_eq!(keys::hash_slot(&k.holders), keys::hash_slot(&lock.lock));
    }
}
