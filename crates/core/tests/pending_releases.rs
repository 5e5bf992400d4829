//! Unanswered releases are finished (issue 28): a release whose reply is
//! lost stays pending process-wide and is sent again until Redis answers;
//! the hold is gone from Redis within a second after the server answers
//! again, without any further call by the user. The object then holds
//! nothing (`is_acquired()` false, `release()` false), and its next
//! `acquire()` succeeds (it finishes the pending release first).
//!
//! The release is lost with `CLIENT PAUSE 500 ALL`: the release's request
//! waits in the server, the client times out (`read_timeout` 0.2 s) and
//! closes its connection, and the server drops the request with the
//! connection. At e6359a3 the hold then stayed in Redis for its whole
//! lease (30 s here), and the object's next acquire found it taken by its
//! own forgotten hold.
//!
//! For a lock's write hold, a read hold (`acquire_read()`) and a permit of
//! a semaphore of 1.

mod common;

use std::time::{Duration, Instant};

use common::{RedisServer, unique_key};
use redislock_core::testing::protocol::keys;
use redislock_core::testing::semaphore_calls::SemKeys;
use redislock_core::{Lock, LockError, LockOptions, OptionValue, Semaphore};

/// The lease of every hold, in seconds: far longer than the test.
const TTL: f64 = 30.0;
/// How long the server pauses every client, in ms.
const PAUSE_MS: u64 = 500;
/// How soon after the server answers again the hold must be gone.
const GONE_WITHIN: Duration = Duration::from_millis(1_500);

/// What is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Write,
    Read,
    Permit,
}

/// One object of [`Kind`], holding or not.
enum Held {
    Lock(Box<Lock>),
    Permit(Box<Semaphore>),
}

fn options(read_timeout: f64) -> LockOptions {
    let mut options = LockOptions::default();
    options.set("reentrant", OptionValue::Bool(false)).unwrap();
    options
        .set("read_timeout", OptionValue::Number(read_timeout))
        .unwrap();
    options
}

impl Held {
    /// An object of `kind` on `name` with `read_timeout` 0.2 s.
    fn new(kind: Kind, server: &RedisServer, name: &[u8]) -> Self {
        Self::with(kind, server, name, 0.2)
    }

    fn with(kind: Kind, server: &RedisServer, name: &[u8], read_timeout: f64) -> Self {
        let (url, options) = (server.url(), options(read_timeout));
        match kind {
            Kind::Write | Kind::Read => Self::Lock(Box::new(
                Lock::new(name.to_vec(), TTL, &[url], options).unwrap(),
            )),
            Kind::Permit => Self::Permit(Box::new(
                Semaphore::new(name.to_vec(), 1, TTL, &[url], options).unwrap(),
            )),
        }
    }

    /// Takes the hold of `kind` without waiting.
    fn take(&mut self, kind: Kind) -> Result<bool, LockError> {
        match (self, kind) {
            (Self::Lock(l), Kind::Read) => l.acquire_read(Duration::ZERO),
            (Self::Lock(l), _) => l.acquire(Duration::ZERO),
            (Self::Permit(s), _) => s.acquire(Duration::ZERO),
        }
    }

    /// `acquire(0)`: the write hold of a lock (also on an object that
    /// read), a permit.
    fn acquire(&mut self) -> Result<bool, LockError> {
        match self {
            Self::Lock(l) => l.acquire(Duration::ZERO),
            Self::Permit(s) => s.acquire(Duration::ZERO),
        }
    }

    fn release(&mut self) -> Result<bool, LockError> {
        match self {
            Self::Lock(l) => l.release(),
            Self::Permit(s) => s.release(),
        }
    }

    fn is_acquired(&mut self) -> Result<bool, LockError> {
        match self {
            Self::Lock(l) => l.is_acquired(),
            Self::Permit(s) => s.is_acquired(),
        }
    }
}

/// The sorted set that holds `kind`'s holders of `name`, if any.
fn holders_key(kind: Kind, name: &[u8]) -> Option<Vec<u8>> {
    match kind {
        Kind::Write => None,
        Kind::Read => Some(keys::readers_key(name)),
        Kind::Permit => Some(SemKeys::new(name).holders),
    }
}

/// The only holder's token in the sorted set `key`.
fn only_member(con: &mut redis::Connection, key: &[u8]) -> Vec<u8> {
    let members: Vec<Vec<u8>> = redis::cmd("ZRANGE")
        .arg(key)
        .arg(0)
        .arg(-1)
        .query(con)
        .unwrap();
    // (A semaphore keeps its number of permits as the member ~~n.)
    let members: Vec<Vec<u8>> = members
        .into_iter()
        .filter(|m| !m.starts_with(b"~~"))
        .collect();
    assert_eq!(members.len(), 1, "one holder");
    members[0].clone()
}

/// What Redis still keeps of the hold of `token`, if anything.
fn kept(con: &mut redis::Connection, kind: Kind, name: &[u8], token: &[u8]) -> Option<String> {
    let lock: Option<Vec<u8>> = match kind {
        Kind::Write | Kind::Read => redis::cmd("GET").arg(name).query(con).unwrap(),
        Kind::Permit => None,
    };
    if let Some(value) = lock {
        return Some(format!(
            "the lock key holds {:?}",
            String::from_utf8_lossy(&value)
        ));
    }
    let holders = holders_key(kind, name)?;
    let score: Option<f64> = redis::cmd("ZSCORE")
        .arg(&holders)
        .arg(token)
        .query(con)
        .unwrap();
    score.map(|s| format!("the holders hold it, lease end {s}"))
}

/// A hold of `kind` whose release is lost in a paused server: the object,
/// the hold's token, an observer connection, and when the server answered
/// again (a connection made before the pause got its reply).
struct Lost {
    held: Held,
    token: Vec<u8>,
    observer: redis::Connection,
    resumed: Instant,
}

fn lose_a_release(kind: Kind, server: &RedisServer, name: &[u8]) -> Lost {
    let mut held = Held::new(kind, server, name);
    assert!(held.take(kind).unwrap(), "the {kind:?} hold");
    let mut observer = server.client();
    let mut pinger = server.client();
    let token = match (&mut held, holders_key(kind, name)) {
        (Held::Lock(l), None) => l.token().expect("held"),
        (_, Some(_)) if kind == Kind::Read => {
            let mut tokens = common::reader_tokens(&mut observer, name);
            assert_eq!(tokens.len(), 1, "one reader");
            tokens.remove(0)
        }
        (_, Some(holders)) => only_member(&mut observer, &holders),
        _ => unreachable!(),
    };
    let _: () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(PAUSE_MS)
        .arg("ALL")
        .query(&mut observer)
        .unwrap();
    let paused = Instant::now();
    let released = held.release();
    let took = paused.elapsed();
    println!("{kind:?}: release during the pause: {released:?} after {took:?}");
    assert!(
        matches!(released, Err(LockError::Connection { .. })),
        "the release during the pause: {released:?} after {took:?} (a connection error)"
    );
    assert!(
        took < Duration::from_millis(PAUSE_MS),
        "the release failed after the pause ended ({took:?}): the test needs a longer pause"
    );
    assert!(
        !held.is_acquired().unwrap(),
        "is_acquired after the lost release"
    );
    assert!(!held.release().unwrap(), "release after the lost release");
    // Answered once the pause is over.
    let _: String = redis::cmd("PING").query(&mut pinger).unwrap();
    Lost {
        held,
        token,
        observer,
        resumed: Instant::now(),
    }
}

/// The release is finished without a further call: gone from Redis within
/// [`GONE_WITHIN`] of the server answering again, and another process gets
/// the hold then.
fn an_unanswered_release_is_resent(kind: Kind) {
    let server = RedisServer::start();
    let name = unique_key(&format!("pending-{kind:?}"));
    let mut lost = lose_a_release(kind, &server, &name);
    let mut last = None;
    let gone = loop {
        let now = kept(&mut lost.observer, kind, &name, &lost.token);
        if now.is_none() {
            break Some(lost.resumed.elapsed());
        }
        last = now;
        if lost.resumed.elapsed() > GONE_WITHIN {
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    // The lease that holds it there: the lock key's, or the holders'.
    let lease = holders_key(kind, &name).filter(|_| kind == Kind::Permit);
    let pttl: i64 = redis::cmd("PTTL")
        .arg(lease.as_deref().unwrap_or(&name))
        .query(&mut lost.observer)
        .unwrap();
    println!("{kind:?}: gone from Redis {gone:?} after the pause (else {last:?}, PTTL {pttl} ms)");
    assert!(
        gone.is_some(),
        "{kind:?}: {GONE_WITHIN:?} after the server answered again, {} (its key's PTTL \
         {pttl} ms)",
        last.unwrap_or_default()
    );
    let mut other = Held::with(kind, &server, &name, 2.0);
    assert!(
        other.take(kind).unwrap(),
        "{kind:?}: another process takes it"
    );
    assert!(other.release().unwrap());
}

/// The object's next `acquire()`, right after the server answers again,
/// finishes the pending release and succeeds.
fn the_next_acquire_finishes_an_unanswered_release(kind: Kind) {
    let server = RedisServer::start();
    let name = unique_key(&format!("pending-next-{kind:?}"));
    let mut lost = lose_a_release(kind, &server, &name);
    let acquired = lost.held.acquire();
    let kept = kept(&mut lost.observer, kind, &name, &lost.token);
    println!(
        "{kind:?}: acquire(0) on the same object {:?} after the pause: {acquired:?} \
         (the lost hold in Redis: {kept:?})",
        lost.resumed.elapsed()
    );
    assert!(
        matches!(acquired, Ok(true)),
        "{kind:?}: acquire(0) on the object whose release was lost: {acquired:?} (the lost \
         hold in Redis: {kept:?})"
    );
    assert!(lost.held.release().unwrap());
}

#[test]
fn an_unanswered_lock_release_is_resent() {
    an_unanswered_release_is_resent(Kind::Write);
}

#[test]
fn an_unanswered_read_release_is_resent() {
    an_unanswered_release_is_resent(Kind::Read);
}

#[test]
fn an_unanswered_permit_release_is_resent() {
    an_unanswered_release_is_resent(Kind::Permit);
}

#[test]
fn the_next_acquire_finishes_an_unanswered_lock_release() {
    the_next_acquire_finishes_an_unanswered_release(Kind::Write);
}

/// `acquire()` (the write hold) on an object whose read release was lost.
#[test]
fn the_next_acquire_finishes_an_unanswered_read_release() {
    the_next_acquire_finishes_an_unanswered_release(Kind::Read);
}

#[test]
fn the_next_acquire_finishes_an_unanswered_permit_release() {
    the_next_acquire_finishes_an_unanswered_release(Kind::Permit);
}

/// A release refused for 0.5 s stays pending; acquires of its key meanwhile
/// flush it (and fail) while the lease thread looks: the thread skips work
/// an acquire is sending, and must not sleep past it. Once the refusals
/// end and the acquires stop, the key goes within the pending work's
/// pauses (at most 500 ms), not at the end of the 5 s lease.
#[test]
fn a_release_flushed_in_vain_is_still_resent() {
    use common::proxy::Proxy;
    use redislock_core::testing::protocol::scripts;
    for round in 0..6 {
        let server = RedisServer::start();
        let proxy = Proxy::start(&server);
        let key = unique_key("flushed-in-vain");
        let mut options = LockOptions::default();
        options.set("reentrant", OptionValue::Bool(false)).unwrap();
        let mut held = Lock::new(key.clone(), 5.0, &[proxy.url()], options.clone()).unwrap();
        assert!(held.acquire(Duration::ZERO).unwrap());
        proxy.refuse_requests_with(
            &[
                scripts::RELEASE.hash().as_bytes(),
                scripts::ABANDON.hash().as_bytes(),
            ],
            Duration::from_millis(500),
        );
        let start = Instant::now();
        assert!(held.release().is_err(), "the release is refused");
        let mut other = Lock::new(key.clone(), 5.0, &[proxy.url()], options).unwrap();
        while start.elapsed() < Duration::from_millis(200) {
            let _ = other.acquire(Duration::ZERO);
        }
        let gone = loop {
            if !common::exists(&server, &key) {
                break Some(start.elapsed());
            }
            if start.elapsed() > Duration::from_secs(2) {
                break None;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        println!("round {round}: key gone after {gone:?}");
        assert!(
            gone.is_some(),
            "round {round}: the refused release was still not sent 2 s later (lease 5 s)"
        );
    }
}

/// Pending work never holds up a renewal: the lease thread's resend of a
/// release whose reply is held back 3 s (past the 2 s read timeout) must
/// not keep an auto-renewed 1.5 s lease of another lock from its renewals.
#[test]
fn a_stalled_resend_does_not_hold_up_renewals() {
    use common::proxy::Proxy;
    use redislock_core::testing::protocol::scripts;
    let server = RedisServer::start();
    let proxy = Proxy::start(&server);
    let (renewed_key, released_key) = (unique_key("kept-renewed"), unique_key("stalled-release"));
    let mut options = LockOptions::default();
    options.set("reentrant", OptionValue::Bool(false)).unwrap();
    let mut released = Lock::new(released_key, 10.0, &[proxy.url()], options.clone()).unwrap();
    options.set("auto_renew", OptionValue::Bool(true)).unwrap();
    let mut renewed = Lock::new(renewed_key.clone(), 1.5, &[proxy.url()], options).unwrap();
    assert!(renewed.acquire(Duration::ZERO).unwrap());
    assert!(released.acquire(Duration::ZERO).unwrap());
    let token = released.token().expect("held");
    proxy.refuse_requests_with(
        &[
            scripts::RELEASE.hash().as_bytes(),
            scripts::ABANDON.hash().as_bytes(),
        ],
        Duration::from_millis(100),
    );
    assert!(released.release().is_err(), "the release is refused");
    // Its first resend that passes (`abandon.lua`: a release whose
    // outcome is unknown) has its reply held back 3 s.
    proxy.hold_reply_to_all(
        &[scripts::ABANDON.hash().as_bytes(), &token],
        Duration::from_secs(3),
    );
    let start = Instant::now();
    let mut lost_at = None;
    while start.elapsed() < Duration::from_secs(3) {
        if !common::exists(&server, &renewed_key) {
            lost_at = Some(start.elapsed());
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    println!(
        "replies held back: {:?}; the renewed lock's key gone at {lost_at:?}",
        proxy.holds()
    );
    assert!(
        !proxy.holds().is_empty() || proxy.holding_reply(),
        "a resend was held back"
    );
    assert_eq!(
        lost_at, None,
        "the renewed lease ran out while a resend stalled"
    );
    assert!(renewed.release().unwrap());
}
