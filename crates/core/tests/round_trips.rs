//! Round trips and server work measured by the server itself (INFO
//! commandstats): an uncontended acquire is one SET, a release one EVALSHA
//! that runs GET, EXISTS and DEL: the recipe it replaces (SET NX PX, then a
//! compare-and-delete script running GET and DEL) plus one cheap read.

mod common;

use std::time::Duration;

use common::{RedisServer, lock, unique_key};
use redislock_core::{Lock, LockOptions, OptionValue};

/// Resets the server's command counts through a connection of the test's
/// own, opened before the reset and returned for [`command_counts`]:
/// opening a connection sends commands too (`CLIENT SETINFO`, twice, on
/// Redis 7.2+ and Valkey), which are the test's, not the lock's.
fn reset_counts(server: &RedisServer) -> redis::Connection {
    let mut admin = server.client();
    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query(&mut admin)
        .unwrap();
    admin
}

/// The server's command counts since [`reset_counts`] (commands run inside
/// scripts included), without `INFO` and the reset itself.
fn command_counts(admin: &mut redis::Connection) -> Vec<(String, u64)> {
    let stats: String = redis::cmd("INFO").arg("commandstats").query(admin).unwrap();
    let mut seen: Vec<(String, u64)> = stats
        .lines()
        .filter_map(|l| l.strip_prefix("cmdstat_"))
        .map(|l| {
            let (name, rest) = l.split_once(":calls=").unwrap();
            (
                name.to_owned(),
                rest.split(',').next().unwrap().parse().unwrap(),
            )
        })
        .filter(|(name, _)| name != "info" && name != "config|resetstat")
        .collect();
    seen.sort();
    seen
}

/// Requests the server read since [`reset_counts`] (`total_reads_processed`,
/// one per request of a client that waits for each reply), without the
/// `INFO` that reads it: called before [`command_counts`].
fn requests(admin: &mut redis::Connection) -> u64 {
    let stats: String = redis::cmd("INFO").arg("stats").query(admin).unwrap();
    let reads: u64 = stats
        .lines()
        .find_map(|l| l.strip_prefix("total_reads_processed:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    reads - 1
}

fn counts(expected: &[(&str, u64)]) -> Vec<(String, u64)> {
    expected.iter().map(|(n, c)| (n.to_string(), *c)).collect()
}

/// A refresh is one EVALSHA: `GET` and `PEXPIRE` for an unfenced hold (no
/// more than before the hold's fencing key followed its lease), one more
/// `PEXPIRE` (of `K~~f`) for a fenced one.
#[test]
fn a_refresh_costs_an_unfenced_hold_nothing_for_fencing() {
    let server = RedisServer::start();
    for (fencing, pexpires) in [(false, 1), (true, 2)] {
        let mut options = LockOptions::default();
        options.set("fencing", OptionValue::Bool(fencing)).unwrap();
        let key = unique_key("rtrefresh");
        let mut a = Lock::new(key, 10.0, &[server.url()], options).unwrap();
        assert!(a.acquire(Duration::ZERO).unwrap());
        assert!(a.refresh(None).unwrap());
        let mut admin = reset_counts(&server);
        const N: u64 = 50;
        for _ in 0..N {
            assert!(a.refresh(None).unwrap());
        }
        assert_eq!(
            command_counts(&mut admin),
            counts(&[("evalsha", N), ("get", N), ("pexpire", pexpires * N)]),
            "fencing {fencing}"
        );
        assert!(a.release().unwrap());
    }
}

#[test]
fn acquire_is_one_set_and_release_one_evalsha() {
    let server = RedisServer::start();
    let key = unique_key("rt");
    let mut a = lock(&server, &key, 10.0);
    // Warm up: the connection is opened and the script loaded once.
    assert!(a.acquire(Duration::ZERO).unwrap());
    assert!(a.release().unwrap());
    let mut admin = reset_counts(&server);
    const N: u64 = 100;
    for _ in 0..N {
        assert!(a.acquire(Duration::ZERO).unwrap());
        assert!(a.release().unwrap());
    }
    // commandstats also counts the commands that run inside the release
    // script (GET, EXISTS of the waiter queue, DEL); anything else would be
    // an extra round trip or extra server work.
    let seen = command_counts(&mut admin);
    let expected = counts(&[
        ("del", N),
        ("evalsha", N),
        ("exists", N),
        ("get", N),
        ("set", N),
    ]);
    assert_eq!(
        seen, expected,
        "SET per acquire, EVALSHA (GET, EXISTS, DEL inside) per release"
    );
}

/// An uncontended read cycle costs what a lock's does: the acquire a
/// `SET K ~~read:<token>:<lease end> NX PX ttl` (a lone reader), the
/// release one `EVALSHA` (`GET`, `EXISTS` of the queue, `DEL`): 5 commands
/// in 2 round trips.
#[test]
fn a_read_cycle_is_a_set_and_an_evalsha() {
    let server = RedisServer::start();
    let key = unique_key("rt-read");
    let mut a = lock(&server, &key, 10.0);
    assert!(a.acquire_read(Duration::ZERO).unwrap());
    assert!(a.release().unwrap());
    let mut admin = reset_counts(&server);
    const N: u64 = 100;
    for _ in 0..N {
        assert!(a.acquire_read(Duration::ZERO).unwrap());
        assert!(a.release().unwrap());
    }
    let expected = counts(&[
        ("del", N),
        ("evalsha", N),
        ("exists", N),
        ("get", N),
        ("set", N),
    ]);
    assert_eq!(command_counts(&mut admin), expected);
}

/// An uncontended permit cycle: the acquire one `EVALSHA` (`ZCOUNT` the
/// live permits, `EXISTS` the queue, `ZADD`, `PEXPIRE`), the release no
/// script (`ZREM`, `EXISTS` the queue, in one write; the script that hands
/// permits on only when someone waits): 7 commands in 2 round trips, one
/// script. One acquire in 16 also drops up to 8 ended leases (a
/// `ZRANGEBYSCORE`; its token ends in 0), so the counts allow that many.
#[test]
fn a_permit_cycle_is_one_evalsha_of_seven_commands() {
    let server = RedisServer::start();
    let name = unique_key("rt-permit");
    let mut s = common::semaphore(&server, &name, 3, 10.0);
    assert!(s.acquire(Duration::ZERO).unwrap());
    assert!(s.release().unwrap());
    let mut admin = reset_counts(&server);
    const N: u64 = 100;
    for _ in 0..N {
        assert!(s.acquire(Duration::ZERO).unwrap());
        assert!(s.release().unwrap());
    }
    let mut seen = command_counts(&mut admin);
    let sweeps = seen
        .iter()
        .position(|(name, _)| name == "zrangebyscore")
        .map_or(0, |i| seen.remove(i).1);
    assert!(sweeps < N / 4, "{sweeps} sweeps in {N} acquires");
    let expected = counts(&[
        ("evalsha", N),
        ("exists", 2 * N),
        ("pexpire", N),
        ("zadd", N),
        ("zcount", N),
        ("zrem", N),
    ]);
    assert_eq!(seen, expected);
}

/// A contended permit section, counted from the holder's acquire to the
/// waiter's win: the waiter's join, the release that hands it the permit
/// and its claim run one `PTTL` in all (the claim's, which keeps the
/// holders' set alive for its lease). A grant reads the end of the
/// waiter's mark from the mark itself, and a join skips the holders'
/// set's `PTTL` while a live lease outlives its mark (each `PTTL` cost a
/// command of every contended section).
#[test]
fn a_handed_permit_costs_one_pttl() {
    let server = RedisServer::start();
    let name = unique_key("rt-permit-handed");
    let new_semaphore = || {
        let url = server.url().replace("127.0.0.1", "localhost");
        redislock_core::Semaphore::new(name.clone(), 1, 10.0, &[url], LockOptions::default())
            .unwrap()
    };
    let mut holder = common::semaphore(&server, &name, 1, 10.0);
    let mut waiter = new_semaphore();
    // Warm up: scripts loaded, connections open.
    assert!(waiter.acquire(Duration::ZERO).unwrap());
    assert!(waiter.release().unwrap());
    assert!(holder.acquire(Duration::ZERO).unwrap());
    let mut admin = reset_counts(&server);
    let waiting = std::thread::spawn(move || {
        let got = waiter.acquire(Duration::from_secs(5)).unwrap();
        (got, waiter)
    });
    let queue = redislock_core::testing::semaphore_calls::SemKeys::new(&name).queue;
    common::wait_until("the waiter is queued", Duration::from_secs(5), || {
        server.cmd::<i64>(&["ZCARD", std::str::from_utf8(&queue).unwrap()]) == 1
    });
    assert!(holder.release().unwrap());
    let (got, mut waiter) = waiting.join().unwrap();
    assert!(got);
    let seen = command_counts(&mut admin);
    let pttl = seen
        .iter()
        .find(|(n, _)| n == "pttl")
        .map_or(0, |(_, c)| *c);
    assert_eq!(pttl, 1, "{seen:?}");
    assert!(waiter.release().unwrap());
}

/// The server's command counts for one `acquire(wait)` of `waiter` on the
/// lock `holder` holds (the wait runs out), without `CLIENT` commands
/// (`CLIENT UNBLOCK` ends the `BLPOP` when Redis's timer is late, and
/// comes or not by timing).
fn counts_of_a_wait_on_a_held_lock(
    server: &RedisServer,
    holder: &mut Lock,
    waiter: &mut Lock,
) -> Vec<(String, u64)> {
    counts_and_requests_of_a_wait_on_a_held_lock(server, holder, waiter).0
}

/// [`counts_of_a_wait_on_a_held_lock`], and the waiter's requests (the
/// `CLIENT UNBLOCK`s, sent on a connection of their own, left out).
fn counts_and_requests_of_a_wait_on_a_held_lock(
    server: &RedisServer,
    holder: &mut Lock,
    waiter: &mut Lock,
) -> (Vec<(String, u64)>, u64) {
    assert!(holder.acquire(Duration::ZERO).unwrap());
    let mut admin = reset_counts(server);
    assert!(!waiter.acquire(Duration::from_millis(30)).unwrap());
    let requests = requests(&mut admin);
    let mut seen = command_counts(&mut admin);
    let unblocks = seen
        .iter()
        .filter(|(name, _)| name == "client|unblock")
        .map(|(_, c)| *c)
        .sum::<u64>();
    let requests = requests - unblocks;
    seen.retain(|(name, _)| !name.starts_with("client|"));
    assert!(holder.release().unwrap());
    (seen, requests)
}

/// The scripts and `BLPOP`s of one `acquire(wait)` of a free lock (after
/// a queued wait: no plain `SET`, the queue's first wait takes it), released
/// after, and the requests they took.
fn one_wait_on_a_free_lock(server: &RedisServer, waiter: &mut Lock) -> (u64, u64) {
    let mut admin = reset_counts(server);
    assert!(waiter.acquire(Duration::from_secs(1)).unwrap());
    let requests = requests(&mut admin);
    let seen = command_counts(&mut admin);
    assert!(waiter.release().unwrap());
    let commands = seen
        .iter()
        .filter(|(n, _)| n == "evalsha" || n == "blpop")
        .map(|(_, c)| *c)
        .sum::<u64>();
    (commands, requests)
}

/// `counts` without one `SET` (the plain try's).
fn without_one_set(counts: &[(String, u64)]) -> Vec<(String, u64)> {
    counts
        .iter()
        .map(|(n, c)| (n.clone(), if n == "set" { c - 1 } else { *c }))
        .filter(|(_, c)| *c > 0)
        .collect()
}

/// While this process's last wait for a key had to queue, a waiting
/// acquire of that key starts with the queue's first wait (its step, the
/// `BLPOP` and the step behind it, in one request, which would take a free
/// lock as well): the plain `SET NX PX` that would only find the lock held
/// again is skipped, a round trip less per contended section; the rest of
/// the wait is the same. A wait whose first step finds the lock free ends
/// that: the next starts with the plain try again, as an uncontended
/// acquire costs the recipe's `SET`.
#[test]
fn after_a_queued_wait_the_next_wait_starts_in_the_queue() {
    let server = RedisServer::start();
    let key = unique_key("rt-queued");
    let mut options = LockOptions::default();
    options.set("reentrant", OptionValue::Bool(false)).unwrap();
    let new_lock = || Lock::new(key.clone(), 10.0, &[server.url()], options.clone()).unwrap();
    let (mut holder, mut waiter) = (new_lock(), new_lock());
    // Warm up (connections opened, scripts loaded, the connection's id
    // learnt) with a wait that queues; then a wait that finds the lock free
    // at its first step ends the hint.
    counts_of_a_wait_on_a_held_lock(&server, &mut holder, &mut waiter);
    let free = one_wait_on_a_free_lock(&server, &mut waiter);
    assert_eq!(
        free,
        (3, 1),
        "one request: the step took the free lock, its BLPOP ended at once, the replay claimed it"
    );
    let first = counts_of_a_wait_on_a_held_lock(&server, &mut holder, &mut waiter);
    assert!(
        first.contains(&("set".to_owned(), 2)),
        "the plain try, then the waiter's mark: {first:?}"
    );
    // That wait queued: the next starts in the queue, and so on while
    // waits queue.
    for _ in 0..3 {
        let hinted = counts_of_a_wait_on_a_held_lock(&server, &mut holder, &mut waiter);
        assert_eq!(
            hinted,
            without_one_set(&first),
            "after a queued wait: the same wait without the plain SET (first: {first:?})"
        );
    }
    // A wait whose first step finds the lock free takes it there (one
    // round trip) and ends the hint.
    assert_eq!(one_wait_on_a_free_lock(&server, &mut waiter), (3, 1));
    assert_eq!(
        counts_of_a_wait_on_a_held_lock(&server, &mut holder, &mut waiter),
        first,
        "the plain try again"
    );
}

/// A waiter that finds the lock held sends its first step (it joins the
/// queue), its first `BLPOP` and the step behind it in one request: a wait
/// that runs out after one block is one request after the plain try, and,
/// while the process's last wait had to queue, one request in all (two
/// before the first wait went with its step).
#[test]
fn a_first_wait_goes_with_the_first_step() {
    let server = RedisServer::start();
    let key = unique_key("rt-first-wait");
    let mut options = LockOptions::default();
    options.set("reentrant", OptionValue::Bool(false)).unwrap();
    let new_lock = || Lock::new(key.clone(), 10.0, &[server.url()], options.clone()).unwrap();
    let (mut holder, mut waiter) = (new_lock(), new_lock());
    // Warm up: connections opened, scripts loaded, the connection's id
    // learnt, the server's facts read.
    counts_of_a_wait_on_a_held_lock(&server, &mut holder, &mut waiter);
    let (seen, hinted) =
        counts_and_requests_of_a_wait_on_a_held_lock(&server, &mut holder, &mut waiter);
    assert_eq!(
        hinted, 1,
        "the first step and its wait in one request (commands: {seen:?})"
    );
    // A wait that takes the lock free ends the hint: the plain try first.
    assert_eq!(one_wait_on_a_free_lock(&server, &mut waiter).1, 1);
    let (_, plain) =
        counts_and_requests_of_a_wait_on_a_held_lock(&server, &mut holder, &mut waiter);
    assert_eq!(plain, 2, "the plain try, then the first step with its wait");
}
