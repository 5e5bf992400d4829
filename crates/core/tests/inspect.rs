//! `Lock::inspect()` (`RedisLock::inspect()`) of every primitive of a
//! name: a write hold, read holds (readers' tokens, bounded, and their
//! count), waiters of both kinds, and the semaphore of the same name;
//! reads only, bounded however many readers died, and nothing of a
//! semaphore over Redlock.

mod common;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::{RedisServer, semaphore, unique_key, wait_until};
use redislock_core::{HoldMode, Lock, LockOptions, OptionValue};

const NOW: Duration = Duration::ZERO;

/// A lock object of its own (not reentrant: objects of one test stand for
/// processes).
fn lock(servers: &[String], key: &[u8], ttl: f64) -> Lock {
    let mut options = LockOptions::default();
    options.set("reentrant", OptionValue::Bool(false)).unwrap();
    Lock::new(key.to_vec(), ttl, servers, options).unwrap()
}

fn text(key: &[u8]) -> String {
    String::from_utf8(key.to_vec()).unwrap()
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// Writes made on `server` since it started (reads leave it alone).
fn dirty(server: &RedisServer) -> i64 {
    let info: String = server.cmd(&["INFO", "persistence"]);
    info.lines()
        .find_map(|l| l.strip_prefix("rdb_changes_since_last_save:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn a_writer_readers_and_a_free_lock() {
    let server = RedisServer::start();
    let urls = [server.url()];
    let key = unique_key("inspect-modes");
    let look = lock(&urls, &key, 10.0);

    let free = look.inspect().unwrap();
    assert!(!free.held && free.mode.is_none() && free.owners.is_empty());
    assert_eq!((free.readers, free.ttl, free.semaphore), (0, None, None));

    let mut writer = lock(&urls, &key, 10.0);
    assert!(writer.acquire(NOW).unwrap());
    let seen = look.inspect().unwrap();
    assert_eq!(seen.mode, Some(HoldMode::Write));
    assert_eq!(seen.owners, [writer.token().unwrap()]);
    assert_eq!(seen.readers, 0);
    assert!(writer.release().unwrap());

    let mut readers: Vec<Lock> = (0..3).map(|_| lock(&urls, &key, 10.0)).collect();
    for reader in &mut readers {
        assert!(reader.acquire_read(NOW).unwrap());
    }
    let before = dirty(&server);
    let seen = look.inspect().unwrap();
    assert_eq!(dirty(&server), before, "a look wrote");
    assert!(seen.held);
    assert_eq!(seen.mode, Some(HoldMode::Read));
    assert_eq!((seen.readers, seen.owners.len(), seen.fence), (3, 3, None));
    assert!(
        !seen.owners.iter().any(|o| o == b"~~read"),
        "the read mark is no owner"
    );
    let ttl = seen.ttl.unwrap();
    assert!(ttl > 9.0 && ttl <= 10.0, "{ttl}");

    // A writer waits behind the readers; the last reader's release lets it in.
    let mut waiting_writer = lock(&urls, &key, 10.0);
    let writer = std::thread::spawn(move || {
        let got = waiting_writer.acquire(Duration::from_secs(10));
        (waiting_writer, got)
    });
    wait_until("the writer waits", Duration::from_secs(5), || {
        look.inspect().unwrap().waiting == 1
    });
    let seen = look.inspect().unwrap();
    assert_eq!((seen.mode, seen.readers), (Some(HoldMode::Read), 3));
    for reader in &mut readers {
        assert!(reader.release().unwrap());
    }
    let (mut waiting_writer, got) = writer.join().unwrap();
    assert!(got.unwrap());
    let seen = look.inspect().unwrap();
    assert_eq!(seen.mode, Some(HoldMode::Write));
    assert_eq!(seen.owners, [waiting_writer.token().unwrap()]);
    assert_eq!((seen.readers, seen.waiting), (0, 0));

    // A reader waits behind the writer.
    let mut waiting_reader = lock(&urls, &key, 10.0);
    let reader = std::thread::spawn(move || {
        let got = waiting_reader.acquire_read(Duration::from_secs(10));
        (waiting_reader, got)
    });
    wait_until("the reader waits", Duration::from_secs(5), || {
        look.inspect().unwrap().waiting == 1
    });
    assert!(waiting_writer.release().unwrap());
    let (mut waiting_reader, got) = reader.join().unwrap();
    assert!(got.unwrap());
    let seen = look.inspect().unwrap();
    assert_eq!((seen.mode, seen.readers), (Some(HoldMode::Read), 1));
    assert!(waiting_reader.release().unwrap());
    assert!(look.inspect().unwrap().mode.is_none());
}

/// Readers written by hand: 100,000 whose lease ended and 100 live ones.
/// The look lists 64 live tokens and counts all 100, skipping the dead by
/// score (no call over the 100 ms SLOWLOG backstop of bounded_scripts.rs).
#[test]
fn many_readers_are_counted_and_a_bounded_few_listed() {
    let server = RedisServer::start();
    let key = unique_key("inspect-many");
    let (name, set) = (text(&key), format!("{}~~r", text(&key)));
    let mut con = server.client();
    for batch in 0..10 {
        let mut zadd = redis::cmd("ZADD");
        zadd.arg(&set);
        for i in batch * 10_000..(batch + 1) * 10_000 {
            zadd.arg(i).arg(format!("dead-{i}"));
        }
        let _: i64 = zadd.query(&mut con).unwrap();
    }
    let end = now_ms() + 20_000;
    let mut zadd = redis::cmd("ZADD");
    zadd.arg(&set);
    for i in 0..100u64 {
        zadd.arg(end + i).arg(format!("live-{i}"));
    }
    let _: i64 = zadd.query(&mut con).unwrap();
    let _: () = server.cmd(&["SET", &name, "~~read", "PX", "30000"]);
    let _: () = server.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "100000"]);
    let _: () = server.cmd(&["SLOWLOG", "RESET"]);

    let seen = lock(&[server.url()], &key, 10.0).inspect().unwrap();
    assert_eq!(seen.mode, Some(HoldMode::Read));
    assert_eq!((seen.readers, seen.owners.len()), (100, 64));
    assert_eq!(seen.owners[0], b"live-0", "soonest lease end first");
    let ttl = seen.ttl.unwrap();
    assert!(ttl > 19.0 && ttl <= 20.2, "the longest lease: {ttl}");
    let slow: i64 = server.cmd(&["SLOWLOG", "LEN"]);
    assert_eq!(slow, 0, "a look stalled Redis");
    let dead: i64 = server.cmd(&["ZCOUNT", &set, "-inf", "100000"]);
    assert_eq!(dead, 100_000, "a look dropped dead readers: it wrote");
}

#[test]
fn a_semaphore_of_the_same_name_beside_its_lock() {
    let server = RedisServer::start();
    let key = unique_key("inspect-sem");
    let look = lock(&[server.url()], &key, 10.0);
    let mut a = semaphore(&server, &key, 2, 10.0);
    let mut b = semaphore(&server, &key, 2, 10.0);
    assert!(a.acquire(NOW).unwrap() && b.acquire(NOW).unwrap());

    let seen = look.inspect().unwrap();
    assert!(!seen.held, "the semaphore is not the lock");
    let sem = seen.semaphore.unwrap();
    assert!(sem.held);
    assert_eq!(
        (sem.permits, sem.holders, sem.owners.len()),
        (Some(2), 2, 2)
    );
    let ttl = sem.ttl.unwrap();
    assert!(ttl > 9.0 && ttl <= 10.0, "{ttl}");
    assert_eq!(sem.waiting, 0);

    // A third waits for a permit; the lock of that name is held too.
    let mut c = semaphore(&server, &key, 2, 10.0);
    let waiter = std::thread::spawn(move || {
        let got = c.acquire(Duration::from_secs(10));
        (c, got)
    });
    wait_until("the third waits", Duration::from_secs(5), || {
        look.inspect().unwrap().semaphore.unwrap().waiting == 1
    });
    let mut writer = lock(&[server.url()], &key, 10.0);
    assert!(writer.acquire(NOW).unwrap());
    let seen = look.inspect().unwrap();
    assert_eq!(seen.owners, [writer.token().unwrap()]);
    assert_eq!(seen.waiting, 0, "the lock's queue is its own");
    assert_eq!(seen.semaphore.unwrap().holders, 2);
    assert!(writer.release().unwrap());

    assert!(a.release().unwrap());
    let (mut c, got) = waiter.join().unwrap();
    assert!(got.unwrap());
    let sem = look.inspect().unwrap().semaphore.unwrap();
    assert_eq!((sem.holders, sem.waiting), (2, 0));
    assert!(b.release().unwrap() && c.release().unwrap());
    // Nobody holds or waits; its number of permits stays until the last
    // lease set would have ended.
    let sem = look.inspect().unwrap().semaphore.unwrap();
    assert_eq!((sem.held, sem.holders, sem.waiting), (false, 0, 0));
}

/// Over Redlock semaphores and read holds do not run: a look reports the
/// lock as the quorum sees it and no semaphore, whatever a master keeps.
#[test]
fn over_redlock_a_look_reports_no_semaphore() {
    let servers: Vec<RedisServer> = (0..3).map(|_| RedisServer::start()).collect();
    let urls: Vec<String> = servers.iter().map(RedisServer::url).collect();
    let key = unique_key("inspect-redlock");
    let holders = format!("{}~~s", text(&key));
    let end = (now_ms() + 10_000).to_string();
    for server in &servers {
        let _: i64 = server.cmd(&["ZADD", &holders, &end, "by-hand"]);
        let _: () = server.cmd(&["SET", &format!("{holders}~~n"), "1"]);
    }
    let mut writer = lock(&urls, &key, 10.0);
    assert!(writer.acquire(NOW).unwrap());
    let seen = lock(&urls, &key, 10.0).inspect().unwrap();
    assert_eq!(seen.mode, Some(HoldMode::Write));
    assert_eq!(seen.owners, [writer.token().unwrap()]);
    assert_eq!(seen.semaphore, None);
    assert!(writer.release().unwrap());
}
