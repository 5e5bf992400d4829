//! A semaphore's protocol steps as [`Call`]s (one round trip each, safe to
//! replay): the scripts `sem_acquire.lua`, `sem_release.lua` and
//! `sem_refresh.lua` on its keys. The read holds of a lock are the same
//! engine on other keys and scripts ([`Counted::Readers`],
//! `crate::protocol::readers`): every call here takes the keys and sends
//! what they are keys of.

use crate::protocol::call::Call;
use crate::protocol::command::Command;
pub use crate::protocol::counted::{Counted, SemKeys, grace_ms, now_ms};
pub use crate::protocol::counted::{GRACE, now_us};
use crate::protocol::readers;
use crate::protocol::reply::{one, unexpected, value};
use crate::protocol::scripts;
use crate::protocol::step::{Mode, Step};

/// What an acquire asks for: of a semaphore of `permits` (0 for a lock's
/// read holds), `count` of them (1 for a read hold), for `ttl_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ask {
    /// The semaphore's number of permits (0: read holds).
    pub permits: u32,
    /// How many are asked for.
    pub count: u32,
    /// The lease asked for, in ms.
    pub ttl_ms: u64,
}

/// An acquire, or a step of a blocking acquire, of `token`; `replay` when
/// the first try's reply was lost; `fresh` for a wait's first step under a
/// token that was never queued nor sent (a semaphore's script then skips
/// looking for permits handed to it and for a queue entry to leave).
#[allow(clippy::too_many_arguments)]
pub fn acquire(
    keys: &SemKeys,
    token: &[u8],
    ask: Ask,
    mode: Mode,
    alive_ms: u64,
    arrival_us: u64,
    replay: bool,
    fresh: bool,
) -> Call<Step> {
    let mode = mode.arg();
    let ttl_ms = ask.ttl_ms;
    let cmd = match &keys.counted {
        Counted::Permits => scripts::SEM_ACQUIRE.evalsha(
            &[&keys.holders, &keys.queue],
            &[
                token.into(),
                u64::from(ask.permits).into(),
                now_ms().into(),
                ttl_ms.into(),
                mode.into(),
                alive_ms.into(),
                arrival_us.into(),
                grace_ms().into(),
                u64::from(ask.count).into(),
                (if replay { "1" } else { "0" }).into(),
                (if fresh { "1" } else { "0" }).into(),
            ],
        ),
        Counted::Readers(lock) => readers::acquire_command(
            &scripts::READ_ACQUIRE,
            keys,
            lock,
            token,
            ttl_ms,
            mode,
            alive_ms,
            arrival_us,
        ),
    };
    if matches!(keys.counted, Counted::Readers(_)) {
        return Call::one(cmd, |r| {
            readers::step(value(one(r)?)?).ok_or_else(|| unexpected("read_acquire"))
        });
    }
    Call::one(cmd, |r| {
        let reply: Vec<i64> = value(one(r)?)?;
        match reply[..] {
            [1] => Ok(Step::WON),
            [1, ms] => Ok(Step::Won {
                fence: None,
                left_ms: Some(u64::try_from(ms).unwrap_or(0)),
            }),
            [0, ms] => Ok(Step::waiting(ms)),
            [2] => Ok(Step::GaveUp),
            [-1, n] => Ok(Step::Mismatch(n)),
            [3] => Ok(Step::Again),
            _ => Err(unexpected("sem_acquire")),
        }
    })
}

/// A permit holder's plain give-back, no script: `ZREM S~~s <its members>`
/// and `EXISTS S~~s~~q` in one write. Its result: whether the token held
/// them, and whether anyone waits; then (and only then) the caller sends
/// [`release`], which hands the freed permits on. No waiter is missed: one
/// whose script ran before the `ZREM` found the permits taken and joined
/// the queue in that same script, so the `EXISTS` after the `ZREM` sees
/// it; one whose script runs after finds them free. A read hold's is
/// always its script's. A `replayed` give-back (the first one's reply was
/// lost, the first removed the permits) counts them as held.
pub fn give_back(keys: &SemKeys, token: &[u8], count: u32, replayed: bool) -> Call<(bool, bool)> {
    let mut zrem: Vec<Vec<u8>> = vec![b"ZREM".to_vec(), keys.holders.clone(), token.to_vec()];
    for i in 2..=count {
        let mut member = token.to_vec();
        member.push(b'#');
        member.extend_from_slice(i.to_string().as_bytes());
        zrem.push(member);
    }
    let zrem: Vec<&[u8]> = zrem.iter().map(Vec::as_slice).collect();
    let exists = Command::of(&[b"EXISTS", &keys.queue]);
    let parse: fn(Vec<redis::Value>) -> redis::RedisResult<(bool, bool)> = match replayed {
        true => |r| gave_back(r).map(|(_, queued)| (true, queued)),
        false => gave_back,
    };
    Call::new(vec![Command::of(&zrem), exists], parse)
}

/// The replies of a [`give_back`]: (whether the token held the permits,
/// whether anyone waits).
fn gave_back(replies: Vec<redis::Value>) -> redis::RedisResult<(bool, bool)> {
    match replies.as_slice() {
        [held, queued] => Ok((
            value::<i64>(held.clone())? > 0,
            value::<i64>(queued.clone())? > 0,
        )),
        _ => Err(unexpected("ZREM, EXISTS")),
    }
}

/// Gives `token`'s `count` permits back and hands freed permits to the
/// first waiters; with `abandon` it also leaves the queue (a wait that
/// ended, an acquire whose reply was lost). True when the token held them.
pub fn release(keys: &SemKeys, token: &[u8], abandon: bool, count: u32) -> Call<bool> {
    let abandon = if abandon { "1" } else { "0" };
    let cmd = release_command(keys, token, abandon, count);
    Call::one(cmd, |r| Ok(value::<i64>(one(r)?)? & 1 == 1)).until_done()
}

/// The command of a [`release`] (`abandon` "1" or "0").
fn release_command(keys: &SemKeys, token: &[u8], abandon: &str, count: u32) -> Command {
    match &keys.counted {
        Counted::Permits => scripts::SEM_RELEASE.evalsha(
            &[&keys.holders, &keys.queue],
            &[
                token.into(),
                now_ms().into(),
                grace_ms().into(),
                abandon.into(),
                u64::from(count).into(),
            ],
        ),
        Counted::Readers(lock) => readers::release_command(keys, lock, token, abandon),
    }
}

/// [`release`] of a permit holder's `count` permits that also says whether
/// anyone waited: (whether the token held them, whether anyone waited). A
/// `replayed` one counts them as held, as [`give_back`].
pub fn hand_on(keys: &SemKeys, token: &[u8], count: u32, replayed: bool) -> Call<(bool, bool)> {
    let parse: fn(Vec<redis::Value>) -> redis::RedisResult<(bool, bool)> = match replayed {
        true => |r| handed_on(r).map(|(_, waited)| (true, waited)),
        false => handed_on,
    };
    Call::one(release_command(keys, token, "0", count), parse).until_done()
}

/// The reply of a [`hand_on`]: bit 1 held, bit 4 nobody waited.
fn handed_on(replies: Vec<redis::Value>) -> redis::RedisResult<(bool, bool)> {
    let n = value::<i64>(one(replies)?)?;
    Ok((n & 1 == 1, n & 4 == 0))
}

/// Sets the lease of `token`'s `count` permits to `ttl_ms` from now, or
/// with `ttl_ms` 0 only reads it: the lease left in ms, `None` when the
/// permits are not ours.
pub fn lease(keys: &SemKeys, token: &[u8], ttl_ms: u64, count: u32) -> Call<Option<u64>> {
    let cmd = lease_command(keys, token, ttl_ms, count);
    Call::one(cmd, |r| Ok(u64::try_from(value::<i64>(one(r)?)?).ok()))
}

/// Sets the lease of `token`'s `count` permits to `ttl_ms` from now; true
/// when they (the read hold) were ours.
pub fn extend(keys: &SemKeys, token: &[u8], ttl_ms: u64, count: u32) -> Call<bool> {
    let cmd = lease_command(keys, token, ttl_ms, count);
    Call::one(cmd, |r| Ok(value::<i64>(one(r)?)? > 0))
}

/// The command of a [`lease`]: `sem_refresh.lua` on a semaphore's holders
/// and permits (`read_refresh.lua` on a lock's readers and the lock), which
/// answers the lease left in ms (after an extension: `ttl_ms`), or -3 when
/// the permit (read hold) is not ours. The renewal thread sends it for an
/// auto-renewed permit or read hold.
pub fn lease_command(keys: &SemKeys, token: &[u8], ttl_ms: u64, count: u32) -> Command {
    let args = [
        token.into(),
        now_ms().into(),
        ttl_ms.into(),
        grace_ms().into(),
        u64::from(count).into(),
    ];
    match &keys.counted {
        Counted::Permits => scripts::SEM_REFRESH.evalsha(&[&keys.holders], &args),
        Counted::Readers(lock) => {
            scripts::READ_REFRESH.evalsha(&[&keys.holders, &lock.lock], &args[..4])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::keys;

    #[test]
    fn keys_share_the_slot_and_never_name_a_lock_key() {
        for name in [&b"app:{jobs}"[..], b"{42}", b"t{7}:x"] {
            let k = SemKeys::new(name);
            let wake = k.wake(b"ab");
            for key in [&k.holders[..], &k.queue, &wake] {
                assert_eq!(keys::hash_slot(key), keys::hash_slot(name));
                // A lock name has no "~~"; a lock's helper keys have one,
                // followed by q, f, r, a~ or w~ (never "s").
                assert!(key.starts_with(&[name, &b"~~s"[..]].concat()));
            }
        }
        let k = SemKeys::new(b"jobs");
        assert_eq!(k.holders, b"jobs~~s");
        assert_eq!(k.queue, b"jobs~~s~~q");
        assert_eq!(k.wake(b"t1"), b"jobs~~s~~w~t1");
    }
}
