//! Where the primitives meet (issue 28, item 8, the core's part):
//!
//! - a hold taken over with `restore()` is a write hold only:
//!   `acquire_read()` on it must neither create a read hold under the
//!   restored token (e6359a3 minted one for a made-up token) nor join the
//!   read hold of the reader whose token it is (e6359a3 joined it, and the
//!   restored object's release ended that reader's hold);
//! - a semaphore holder that shortened its lease and died does not keep
//!   the semaphore's number of permits past that lease (e6359a3 kept it for
//!   the first lease, 100 s here, refusing any other number);
//! - a permit handed to a waiter that died comes back within a mark's life
//!   (2 x retry_delay + 0.5 s) of the release (e6359a3: about 1.8 s).
//!
//! The Fiber and `withLock()` parts of item 8 are PHP's (phpt).

mod common;

use std::time::{Duration, Instant};

use common::child::Child;
use common::{RedisServer, unique_key, wait_until};
use redislock_core::testing::protocol::keys;
use redislock_core::testing::semaphore_calls::SemKeys;
use redislock_core::{Lock, LockOptions, Semaphore};

fn lock_at(server: &RedisServer, key: &[u8]) -> Lock {
    Lock::new(key.to_vec(), 10.0, &[server.url()], LockOptions::default()).unwrap()
}

/// The score of `member` in the sorted set `key`.
fn zscore(server: &RedisServer, key: &[u8], member: &[u8]) -> Option<f64> {
    redis::cmd("ZSCORE")
        .arg(key)
        .arg(member)
        .query(&mut server.client())
        .unwrap()
}

fn get(server: &RedisServer, key: &[u8]) -> Option<String> {
    redis::cmd("GET")
        .arg(key)
        .query(&mut server.client())
        .unwrap()
}

#[test]
fn restore_cannot_mint_a_read_hold() {
    let server = RedisServer::start();
    let key = unique_key("restore-mint");
    let token = b"0123456789abcdef0123456789abcdef".to_vec();
    let mut x = lock_at(&server, &key);
    x.restore(token.clone()).unwrap();
    let read = x.acquire_read(Duration::ZERO);
    let minted = zscore(&server, &keys::readers_key(&key), &token);
    let value = get(&server, &key);
    println!(
        "acquire_read(0) on a restored made-up token: {read:?}; its read hold in Redis: \
         {minted:?}; the lock key: {value:?}"
    );
    let released = x.release();
    println!("then the restored object's release: {released:?}");
    assert!(
        minted.is_none(),
        "acquire_read(0) on a hold restored from a made-up token returned {read:?} and \
         created a read hold under that token (lease end {minted:?}; the lock key {value:?})"
    );
}

#[test]
fn restore_cannot_join_another_readers_hold() {
    let server = RedisServer::start();
    let key = unique_key("restore-join");
    let mut r = lock_at(&server, &key);
    assert!(r.acquire_read(Duration::ZERO).unwrap());
    let members = common::reader_tokens(&mut server.client(), &key);
    assert_eq!(members.len(), 1, "R's read hold");
    let token = members[0].clone();
    let mut x = lock_at(&server, &key);
    x.restore(token.clone()).unwrap();
    let read = x.acquire_read(Duration::ZERO);
    let released = x.release();
    let kept = common::reader_tokens(&mut server.client(), &key).contains(&token);
    let value = get(&server, &key);
    println!(
        "acquire_read(0) on a hold restored from R's reader token: {read:?}, then its \
         release {released:?}; R's read hold in Redis: {kept:?}, the lock key {value:?}"
    );
    assert!(
        kept && value.as_deref().is_some_and(|v| v.starts_with("~~read")),
        "the restored object (acquire_read {read:?}, release {released:?}) ended R's read \
         hold: R's entry {kept:?}, the lock key {value:?}"
    );
    assert!(r.is_acquired().unwrap(), "R still reads");
    assert!(r.release().unwrap(), "R's release");
}

#[test]
fn a_shortened_and_killed_semaphore_holder_does_not_pin_the_permit_count() {
    let server = RedisServer::start();
    let name = unique_key("shortened-killed");
    let url = server.url();
    let (u, n) = (url.clone(), name.clone());
    let mut holder = Child::fork(move |parent| {
        let mut s = Semaphore::new(n, 2, 100.0, &[u], LockOptions::default()).unwrap();
        let got = s.acquire(Duration::ZERO);
        let refreshed = s.refresh(Some(0.5));
        parent.send(format!("{got:?} {refreshed:?}").as_bytes());
        // Until killed.
        let _ = parent.recv(Duration::from_secs(60));
        0
    });
    let said = holder
        .recv(Duration::from_secs(10))
        .expect("the holder's report");
    holder.kill();
    let killed = Instant::now();
    assert_eq!(
        String::from_utf8_lossy(&said),
        "Ok(true) Ok(true)",
        "the holder's acquire and refresh(0.5)"
    );
    std::thread::sleep(Duration::from_millis(1_600).saturating_sub(killed.elapsed()));
    let mut three = Semaphore::new(name.clone(), 3, 5.0, &[url], LockOptions::default()).unwrap();
    let got = three.acquire(Duration::ZERO);
    let holders = SemKeys::new(&name).holders;
    let pttl: i64 = server.cmd(&["PTTL", &String::from_utf8_lossy(&holders)]);
    println!(
        "{:?} after the holder of a 2-permit semaphore shortened its lease to 0.5 s and was \
         killed, a 3-permit acquire(0): {got:?} (the holders key's PTTL {pttl} ms)",
        killed.elapsed()
    );
    assert!(
        matches!(got, Ok(true)),
        "acquire(0) with 3 permits, {:?} after the only holder (2 permits, its lease \
         shortened to 0.5 s) was killed: {got:?}",
        killed.elapsed()
    );
    assert!(three.release().unwrap());
}

/// The default `retry_delay`'s mark life (2 x 0.5 s + 0.5 s), plus 0.1 s.
const MARK_BOUND: Duration = Duration::from_millis(1_600);

#[test]
fn a_killed_waiters_handed_permit_comes_back_within_the_bound() {
    let server = RedisServer::start();
    let name = unique_key("killed-waiter-permit");
    let queue = SemKeys::new(&name).queue;
    let url = server.url();
    let semaphore = |url: &str| {
        Semaphore::new(
            name.clone(),
            1,
            30.0,
            &[url.to_owned()],
            LockOptions::default(),
        )
        .unwrap()
    };
    let mut holder = semaphore(&url);
    assert!(holder.acquire(Duration::ZERO).unwrap());
    let u = url.clone();
    let mut dead = Child::fork(|_| {
        let got = semaphore(&u).acquire(Duration::from_secs(5));
        i32::from(!matches!(got, Ok(true)))
    });
    let zcard = || -> i64 {
        redis::cmd("ZCARD")
            .arg(&queue)
            .query(&mut server.client())
            .unwrap()
    };
    wait_until("the doomed waiter queues", Duration::from_secs(5), || {
        zcard() == 1
    });
    let mut third = semaphore(&url);
    let waiter = std::thread::spawn(move || {
        let got = third.acquire(Duration::from_secs(10));
        let at = Instant::now();
        if matches!(got, Ok(true)) {
            assert!(third.release().unwrap());
        }
        (got, at)
    });
    wait_until(
        "the third user queues behind it",
        Duration::from_secs(5),
        || zcard() == 2,
    );
    dead.kill();
    let released = Instant::now();
    assert!(holder.release().unwrap());
    let (got, at) = waiter.join().unwrap();
    let took = at - released;
    println!(
        "a permit released to a killed waiter: the third user got it {got:?} {took:?} after \
         the release"
    );
    assert!(matches!(got, Ok(true)), "the third user: {got:?}");
    assert!(
        took <= MARK_BOUND,
        "the third user got the permit {took:?} after the release that handed it to a killed \
         waiter (at most {MARK_BOUND:?})"
    );
}
