//! A semaphore's protocol steps as [`Call`]s (one round trip each, safe to
//! replay): the scripts `sem_acquire.lua`, `sem_release.lua` and
//! `sem_refresh.lua` on its keys.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::protocol::call::Call;
use crate::protocol::command::Command;
use crate::protocol::keys;
use crate::protocol::reply::{one, unexpected, value};
use crate::protocol::scripts;

/// How far the clocks of a semaphore's clients may differ: a holder counts
/// as live until its lease end (by its own clock) plus this, by the clock
/// of whoever looks. A crashed holder's permit comes back this much after
/// its lease.
pub const GRACE: Duration = Duration::from_millis(500);

/// The key names of one semaphore `S` (see `lib/semaphore.lua`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SemKeys {
    /// `S~~s`: the holders (sorted set: token -> lease end, ms).
    pub holders: Vec<u8>,
    /// `S~~s~~q`: the waiters in arrival order.
    pub queue: Vec<u8>,
    /// `S~~s~~n`: the number of permits.
    pub permits: Vec<u8>,
}

impl SemKeys {
    /// The keys of the semaphore whose name (prefix included, with its hash
    /// tag on Cluster) is `name`.
    pub fn new(name: &[u8]) -> Self {
        let holders = keys::helper_key(name, "s");
        Self {
            queue: keys::helper_key(&holders, "q"),
            permits: keys::helper_key(&holders, "n"),
            holders,
        }
    }

    /// The wake-up list of the waiter holding `token`.
    pub fn wake(&self, token: &[u8]) -> Vec<u8> {
        [&keys::helper_key(&self.holders, "w~")[..], token].concat()
    }
}

/// Now by this client's clock, in ms since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Now by this client's clock, in µs since the Unix epoch (a waiter's
/// arrival).
pub fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// What an acquire (or a waiter's step) found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// A permit is ours.
    Acquired,
    /// No permit is free; the first live lease may end in this many ms
    /// (`None`: unknown).
    Full(Option<u64>),
    /// The waiter left the queue.
    GaveUp,
    /// The semaphore has this many permits, not the number asked for.
    Mismatch(i64),
}

/// How an acquire call runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One try: a free permit or nothing.
    Try,
    /// A waiter's step: a free (or handed) permit, else join the queue.
    Wait,
    /// A waiter gives up (unless a permit was handed to it).
    GiveUp,
}

/// An acquire, or a step of a blocking acquire, of `token`.
#[allow(clippy::too_many_arguments)]
pub fn acquire(
    keys: &SemKeys,
    token: &[u8],
    permits: u32,
    ttl_ms: u64,
    mode: Mode,
    alive_ms: u64,
    arrival_us: u64,
) -> Call<Step> {
    let mode: &[u8] = match mode {
        Mode::Try => b"0",
        Mode::Wait => b"1",
        Mode::GiveUp => b"2",
    };
    let cmd = scripts::SEM_ACQUIRE.evalsha(
        &[&keys.holders, &keys.queue, &keys.permits],
        &[
            token.into(),
            u64::from(permits).into(),
            now_ms().into(),
            ttl_ms.into(),
            mode.into(),
            alive_ms.into(),
            arrival_us.into(),
            (GRACE.as_millis() as u64).into(),
        ],
    );
    Call::one(cmd, |r| {
        let reply: Vec<i64> = value(one(r)?)?;
        match reply[..] {
            [1] => Ok(Step::Acquired),
            [0, ms] => Ok(Step::Full(u64::try_from(ms).ok())),
            [2] => Ok(Step::GaveUp),
            [-1, n] => Ok(Step::Mismatch(n)),
            _ => Err(unexpected("sem_acquire")),
        }
    })
}

/// Gives `token`'s permit back and hands freed permits to the first
/// waiters; with `abandon` it also leaves the queue (a wait that ended, an
/// acquire whose reply was lost). True when the token held a permit.
pub fn release(keys: &SemKeys, token: &[u8], abandon: bool) -> Call<bool> {
    let cmd = scripts::SEM_RELEASE.evalsha(
        &[&keys.holders, &keys.queue, &keys.permits],
        &[
            token.into(),
            now_ms().into(),
            (GRACE.as_millis() as u64).into(),
            (if abandon { "1" } else { "0" }).into(),
        ],
    );
    Call::one(cmd, |r| Ok(value::<i64>(one(r)?)? == 1))
}

/// Sets `token`'s lease to `ttl_ms` from now, or with `ttl_ms` 0 only reads
/// it: the lease left in ms, `None` when the permit is not ours.
pub fn lease(keys: &SemKeys, token: &[u8], ttl_ms: u64) -> Call<Option<u64>> {
    let cmd = lease_command(&keys.holders, &keys.permits, token, ttl_ms);
    Call::one(cmd, |r| Ok(u64::try_from(value::<i64>(one(r)?)?).ok()))
}

/// The command of a [`lease`] on the semaphore whose holders are `holders`
/// (`S~~s`) and permits `permits` (`S~~s~~n`): `sem_refresh.lua`, which
/// answers the lease left in ms (after an extension: `ttl_ms`), or -3 when
/// the permit is not ours. The renewal thread sends it for an auto-renewed
/// permit.
pub fn lease_command(holders: &[u8], permits: &[u8], token: &[u8], ttl_ms: u64) -> Command {
    scripts::SEM_REFRESH.evalsha(
        &[holders, permits],
        &[
            token.into(),
            now_ms().into(),
            ttl_ms.into(),
            (GRACE.as_millis() as u64).into(),
        ],
    )
}

/// Asks the server, before this process's first semaphore acquire there,
/// whether it runs our scripts and whether its ACL lets this user run every
/// command the semaphore's scripts run on its keys (Redis 7.0+;
/// `permitted.lua`). Fails with the server's refusal, before any permit is
/// taken. Reads and writes nothing.
pub fn check_scripts(keys: &SemKeys) -> Call<()> {
    let cmd = scripts::PERMITTED.evalsha(
        &[&keys.holders, &keys.queue, &keys.permits],
        &["semaphore".into()],
    );
    Call::one(cmd, |r| value::<i64>(one(r)?).map(drop))
}

/// Blocks up to `timeout` for the wake-up of the waiter holding `token`.
/// True when woken.
pub fn wait_for_wake(keys: &SemKeys, token: &[u8], timeout: Duration) -> Call<bool> {
    let seconds = format!("{:.3}", timeout.as_secs_f64().max(0.001));
    let cmd = Command::of(&[b"BLPOP", &keys.wake(token), seconds.as_bytes()]);
    Call::blocking(timeout, vec![cmd], |r| {
        Ok(value::<Option<(Vec<u8>, Vec<u8>)>>(one(r)?)?.is_some())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_share_the_slot_and_never_name_a_lock_key() {
        for name in [&b"app:{jobs}"[..], b"{42}", b"t{7}:x"] {
            let k = SemKeys::new(name);
            for key in [&k.holders, &k.queue, &k.permits, &k.wake(b"ab")] {
                assert_eq!(keys::hash_slot(key), keys::hash_slot(name));
                // A lock name has no "~~"; a lock's helper keys have one,
                // followed by q, f, a~ or w~ (never "s").
                assert!(key.starts_with(&[name, &b"~~s"[..]].concat()));
            }
        }
        let k = SemKeys::new(b"jobs");
        assert_eq!(k.holders, b"jobs~~s");
        assert_eq!(k.queue, b"jobs~~s~~q");
        assert_eq!(k.permits, b"jobs~~s~~n");
        assert_eq!(k.wake(b"t1"), b"jobs~~s~~w~t1");
    }
}
