//! Waits survive dropped connections and keep their deadline (issue 28):
//!
//! - a blocked acquire whose connection the server drops (`CLIENT KILL`)
//!   goes on waiting on a new one: at e6359a3 a first wait threw
//!   "connection lost";
//! - a small `$wait` is kept to within a few ms: at e6359a3 it lasted about
//!   100 ms, because Redis answers a `BLPOP` whose timeout ran out at its
//!   next timer tick (`hz 10`, the default);
//! - a small `retry_delay` is kept the same way: a waiter whose holder's
//!   key is deleted without a wake-up steps again within about
//!   `retry_delay`.
//!
//! For a lock and for a semaphore of 1 permit.

mod common;

use std::time::{Duration, Instant};

use common::{RedisServer, command_stats, release_as, unique_key, wait_until};
use redislock_core::testing::protocol::keys;
use redislock_core::testing::protocol::lock_calls::Successor;
use redislock_core::testing::semaphore_calls::SemKeys;
use redislock_core::{Lock, LockError, LockOptions, OptionValue, Semaphore};
use redislock_fixture::lag::SchedulerLag;

/// Options of an object that competes like another process, with
/// `retry_delay` when given.
fn options(retry_delay: Option<f64>) -> LockOptions {
    let mut options = LockOptions::default();
    options.set("reentrant", OptionValue::Bool(false)).unwrap();
    if let Some(delay) = retry_delay {
        options
            .set("retry_delay", OptionValue::Number(delay))
            .unwrap();
    }
    options
}

fn lock_at(url: &str, key: &[u8], retry_delay: Option<f64>) -> Lock {
    Lock::new(key.to_vec(), 5.0, &[url.to_owned()], options(retry_delay)).unwrap()
}

fn semaphore_at(url: &str, name: &[u8], retry_delay: Option<f64>) -> Semaphore {
    Semaphore::new(
        name.to_vec(),
        1,
        5.0,
        &[url.to_owned()],
        options(retry_delay),
    )
    .unwrap()
}

/// Takes `key` for `token` as another process would, for `ms`.
fn hold(server: &RedisServer, key: &[u8], token: &str, ms: u64) {
    let _: () = redis::cmd("SET")
        .arg(key)
        .arg(token)
        .arg("PX")
        .arg(ms)
        .query(&mut server.client())
        .unwrap();
}

fn zcard(server: &RedisServer, key: &[u8]) -> i64 {
    redis::cmd("ZCARD")
        .arg(key)
        .query(&mut server.client())
        .unwrap()
}

/// How many wait at once.
const WAITERS: usize = 3;
/// When the server drops every client connection, after they began.
const KILL_AFTER: Duration = Duration::from_millis(300);

/// What one waiter's acquire returned, and when.
type Outcome = (Result<bool, LockError>, Instant);

/// [`WAITERS`] threads each block in their first `acquire(5)` of what
/// `spawn` gives them; the server drops every client connection
/// [`KILL_AFTER`] in; then `release` lets the holder go. Every waiter must
/// get it in turn (each releases at once), none returns an error.
fn first_waits_survive(
    what: &str,
    server: &RedisServer,
    queue: &[u8],
    spawn: impl Fn() -> std::thread::JoinHandle<Outcome>,
    release: impl FnOnce(),
) {
    let started = Instant::now();
    let waiters: Vec<_> = (0..WAITERS).map(|_| spawn()).collect();
    wait_until("every waiter queues", Duration::from_secs(5), || {
        zcard(server, queue) == WAITERS as i64
    });
    std::thread::sleep(KILL_AFTER.saturating_sub(started.elapsed()));
    let killed: i64 = server.cmd(&["CLIENT", "KILL", "TYPE", "normal"]);
    let killed_at = started.elapsed();
    std::thread::sleep(Duration::from_millis(100));
    release();
    let outcomes: Vec<(Result<bool, LockError>, Duration)> = waiters
        .into_iter()
        .map(|w| {
            let (result, at) = w.join().unwrap();
            (result, at - started)
        })
        .collect();
    println!(
        "{what}: {killed} connections killed {killed_at:?} in; the waiters' acquires \
         returned {outcomes:?}"
    );
    for (result, at) in &outcomes {
        assert!(
            matches!(result, Ok(true)),
            "{what}: a first wait whose connection was dropped {killed_at:?} in returned \
             {result:?} {at:?} in (all: {outcomes:?})"
        );
    }
}

#[test]
fn a_first_wait_survives_a_dropped_connection() {
    let server = RedisServer::start();
    let key = unique_key("killed-first-wait");
    hold(&server, &key, "raw-holder", 3_000);
    let url = server.url();
    first_waits_survive(
        "lock",
        &server,
        &keys::queue_key(&key),
        || {
            let (url, key) = (url.clone(), key.clone());
            std::thread::spawn(move || {
                let mut l = lock_at(&url, &key, None);
                let got = l.acquire(Duration::from_secs(5));
                let at = Instant::now();
                if matches!(got, Ok(true)) {
                    assert!(l.release().unwrap());
                }
                (got, at)
            })
        },
        || {
            assert!(release_as(
                &server,
                &key,
                b"raw-holder",
                Successor::HandOver
            ))
        },
    );
}

#[test]
fn a_first_permit_wait_survives_a_dropped_connection() {
    let server = RedisServer::start();
    let name = unique_key("killed-first-permit-wait");
    let url = server.url();
    let mut holder = semaphore_at(&url, &name, None);
    assert!(holder.acquire(Duration::ZERO).unwrap());
    first_waits_survive(
        "permit",
        &server,
        &SemKeys::new(&name).queue,
        || {
            let (url, name) = (url.clone(), name.clone());
            std::thread::spawn(move || {
                let mut s = semaphore_at(&url, &name, None);
                let got = s.acquire(Duration::from_secs(5));
                let at = Instant::now();
                if matches!(got, Ok(true)) {
                    assert!(s.release().unwrap());
                }
                (got, at)
            })
        },
        || {
            let released = holder.release();
            assert!(
                matches!(released, Ok(true)),
                "the holder's release: {released:?}"
            );
        },
    );
}

/// The small waits, and how late each may return.
const SMALL_WAITS: [Duration; 3] = [
    Duration::from_millis(10),
    Duration::from_millis(20),
    Duration::from_millis(50),
];
const LATE: Duration = Duration::from_millis(20);

/// Runs `acquire(wait)` for each of [`SMALL_WAITS`] on something held: each
/// must return false, no sooner than its wait and no later than [`LATE`]
/// after it (plus the lag of this process's threads meanwhile, when the
/// machine is busy: [`SchedulerLag`]). `acquire(0)` first, untimed: the
/// first use of a server costs a check (and loading the scripts) once.
/// Timed, so one round of three within the bound is enough (a machine
/// busy with other suites can make any one late); a wait held to the
/// server's timer (about 100 ms at `hz 10`) is late in every round.
fn small_waits(what: &str, mut acquire: impl FnMut(Duration) -> bool) {
    assert!(!acquire(Duration::ZERO), "{what}: held by another");
    let mut rounds = Vec::new();
    for _ in 0..3 {
        let lag = SchedulerLag::start();
        let took: Vec<(Duration, Duration)> = SMALL_WAITS
            .iter()
            .map(|&wait| {
                let started = Instant::now();
                assert!(!acquire(wait), "{what}: held by another");
                (wait, started.elapsed())
            })
            .collect();
        let lag = lag.stop();
        println!("{what}: (wait, took) {took:?}, scheduler lag {lag:?}");
        for &(wait, after) in &took {
            assert!(
                after >= wait,
                "{what}: acquire({wait:?}) returned after {after:?}"
            );
        }
        if took.iter().all(|&(wait, after)| after <= wait + LATE + lag) {
            return;
        }
        rounds.push((took, lag));
    }
    panic!(
        "{what}: an acquire returned more than {LATE:?} (plus the scheduler lag) after its wait \
         in each of 3 rounds: ((wait, took), lag) {rounds:?}"
    );
}

#[test]
fn small_waits_are_kept() {
    let server = RedisServer::start();
    let key = unique_key("small-waits");
    hold(&server, &key, "raw-holder", 10_000);
    let mut l = lock_at(&server.url(), &key, None);
    small_waits("lock", |wait| l.acquire(wait).unwrap());
}

#[test]
fn small_permit_waits_are_kept() {
    let server = RedisServer::start();
    let name = unique_key("small-permit-waits");
    let mut holder = semaphore_at(&server.url(), &name, None);
    assert!(holder.acquire(Duration::ZERO).unwrap());
    let mut s = semaphore_at(&server.url(), &name, None);
    small_waits("permit", |wait| s.acquire(wait).unwrap());
    assert!(holder.release().unwrap());
}

/// The `retry_delay` of the waiters below, in seconds.
const RETRY_DELAY: f64 = 0.02;
/// The fewest blocks a waiter with [`RETRY_DELAY`] must end in a second
/// (about 40 when each ends at its time; 10 when each waits for the
/// server's next timer tick at `hz 10`).
const BLOCKS_PER_SECOND: u64 = 20;

/// A waiter that no wake-up reaches steps every `retry_delay`, not at the
/// server's next timer tick: counted over a second (how many blocks it
/// ended), not timed once, so a busy machine does not make it fail and a
/// waiter held to the timer fails every time.
#[test]
fn retry_delay_is_kept() {
    let server = RedisServer::start();
    let key = unique_key("retry-delay");
    hold(&server, &key, "raw-holder", 10_000);
    let (url, k) = (server.url(), key.clone());
    let waiter = std::thread::spawn(move || {
        let mut l = lock_at(&url, &k, Some(RETRY_DELAY));
        let got = l.acquire(Duration::from_secs(5)).unwrap();
        if got {
            assert!(l.release().unwrap());
        }
        got
    });
    wait_until("the waiter queues", Duration::from_secs(5), || {
        zcard(&server, &keys::queue_key(&key)) == 1
    });
    std::thread::sleep(Duration::from_millis(100));
    let before = command_stats(&server, "blpop").0;
    std::thread::sleep(Duration::from_secs(1));
    let blocks = command_stats(&server, "blpop").0 - before;
    // No wake-up: a plain DEL, as an expiry or another tool would.
    let _: i64 = server.cmd(&["DEL", &String::from_utf8_lossy(&key)]);
    assert!(waiter.join().unwrap(), "the waiter never got it");
    println!("retry_delay {RETRY_DELAY} s: {blocks} blocks ended in a second");
    assert!(
        blocks >= BLOCKS_PER_SECOND,
        "retry_delay {RETRY_DELAY} s: only {blocks} blocks ended in a second (at least \
         {BLOCKS_PER_SECOND})"
    );
}
