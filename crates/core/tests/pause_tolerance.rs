//! The ttl is every hold's pause tolerance (issue 28): from the moment an
//! acquire returns true, Redis keeps that hold for at least the ttl minus
//! the time since the winning request was sent, however it was won (a free
//! lock, a hand-over by a release, a claim after a wait). A holder paused
//! (SIGSTOP, GC, a descheduled VM) or cut off from Redis for less than that
//! keeps its hold.
//!
//! The lock's hand-over broke this: the waiter entered on what its queue
//! mark had left (at most 2 x retry_delay + 0.5 s) and claimed the rest of
//! its ttl in the background, so a pause or a connection blip after the
//! entry lost a hold whose ttl had seconds to go. A permit handed to a
//! waiter and a read hold entered after a writer's release are claimed in
//! the waiter's own step (a whole ttl): kept here as guards.
//!
//! Every competitor is its own object with `reentrant => false` (a
//! process, as far as the holds table can tell), or another process.

mod common;

use std::time::{Duration, Instant};

use common::child::Child;
use common::proxy::Proxy;
use common::{RedisServer, unique_key, wait_until};
use redislock_core::testing::protocol::keys;
use redislock_core::testing::semaphore_calls::{SemKeys, now_ms};
use redislock_core::{Lock, LockOptions, OptionValue, Semaphore};

/// The ttl of every hold here, in seconds.
const TTL: f64 = 10.0;
/// What the check of a lease allows for the round trips around it.
const SLACK_MS: i64 = 100;

/// Options of an object that competes like another process, with `set`.
fn options(set: &[(&str, OptionValue)]) -> LockOptions {
    let mut options = LockOptions::default();
    options.set("reentrant", OptionValue::Bool(false)).unwrap();
    for (name, value) in set {
        options.set(name, value.clone()).unwrap();
    }
    options
}

fn lock_at(url: &str, key: &[u8], set: &[(&str, OptionValue)]) -> Lock {
    Lock::new(key.to_vec(), TTL, &[url.to_owned()], options(set)).unwrap()
}

fn semaphore_at(url: &str, name: &[u8]) -> Semaphore {
    Semaphore::new(name.to_vec(), 1, TTL, &[url.to_owned()], options(&[])).unwrap()
}

/// Entries in the sorted set `key` (a queue).
fn zcard(server: &RedisServer, key: &[u8]) -> i64 {
    redis::cmd("ZCARD")
        .arg(key)
        .query(&mut server.client())
        .unwrap()
}

fn connect(url: &str) -> redis::Connection {
    redis::Client::open(url).unwrap().get_connection().unwrap()
}

/// What a waiter saw when its acquire returned: whether it got the hold,
/// how long the acquire took, and what Redis said right then (through a
/// connection opened before).
struct Entered<T, H> {
    got: bool,
    took: Duration,
    seen: T,
    hold: H,
}

/// Runs `acquire` on a thread, then `look` at once on a connection of its
/// own to `url`.
fn enter<T: Send + 'static, H: Send + 'static>(
    url: &str,
    make: impl FnOnce() -> H + Send + 'static,
    acquire: impl FnOnce(&mut H) -> bool + Send + 'static,
    look: impl FnOnce(&mut redis::Connection) -> T + Send + 'static,
) -> std::thread::JoinHandle<Entered<T, H>> {
    let url = url.to_owned();
    std::thread::spawn(move || {
        let mut con = connect(&url);
        let mut hold = make();
        let called = Instant::now();
        let got = acquire(&mut hold);
        let seen = look(&mut con);
        Entered {
            got,
            took: called.elapsed(),
            seen,
            hold,
        }
    })
}

/// The least a hold entered `took` after its acquire was called may have
/// left in Redis, in ms.
fn floor_ms(took: Duration) -> i64 {
    (TTL * 1000.0) as i64 - took.as_millis() as i64 - SLACK_MS
}

#[test]
fn a_handed_lock_keeps_its_whole_ttl() {
    let server = RedisServer::start();
    let key = unique_key("handed-ttl");
    let url = server.url();
    let mut a = lock_at(&url, &key, &[]);
    assert!(a.acquire(Duration::ZERO).unwrap());
    let (u, k, name) = (url.clone(), key.clone(), key.clone());
    let waiter = enter(
        &url,
        move || lock_at(&u, &k, &[]),
        |b| b.acquire(Duration::from_secs(5)).unwrap(),
        move |con| -> i64 { redis::cmd("PTTL").arg(&name).query(con).unwrap() },
    );
    wait_until("B queues", Duration::from_secs(5), || {
        zcard(&server, &keys::queue_key(&key)) == 1
    });
    std::thread::sleep(Duration::from_millis(100));
    assert!(a.release().unwrap());
    let mut b = waiter.join().unwrap();
    assert!(b.got, "B was not handed the lock");
    let (pttl, floor) = (b.seen, floor_ms(b.took));
    println!(
        "handed lock: PTTL at entry {pttl} ms, {:?} after the acquire was called",
        b.took
    );
    assert!(
        pttl >= floor,
        "PTTL at entry {pttl} ms: a handed lock must keep its ttl ({floor} ms or more, \
         {:?} after the acquire was called)",
        b.took
    );
    assert!(b.hold.release().unwrap());
}

/// A guard (passes on e6359a3): a permit handed to a waiter is claimed in
/// the waiter's own step, for its whole ttl.
#[test]
fn a_handed_permit_keeps_its_whole_ttl() {
    let server = RedisServer::start();
    let name = unique_key("handed-permit");
    let sem = SemKeys::new(&name);
    let url = server.url();
    let mut a = semaphore_at(&url, &name);
    assert!(a.acquire(Duration::ZERO).unwrap());
    let (u, n, holders) = (url.clone(), name.clone(), sem.holders.clone());
    let waiter = enter(
        &url,
        move || semaphore_at(&u, &n),
        |b| b.acquire(Duration::from_secs(5)).unwrap(),
        move |con| -> (Vec<(String, f64)>, u64) {
            // The holders (a live lease's score is a time, not the number
            // of permits the semaphore keeps as the member ~~n, scored -N).
            let holders = redis::cmd("ZRANGEBYSCORE")
                .arg(&holders)
                .arg("(0")
                .arg("+inf")
                .arg("WITHSCORES")
                .query(con)
                .unwrap();
            (holders, now_ms())
        },
    );
    wait_until("B queues", Duration::from_secs(5), || {
        zcard(&server, &sem.queue) == 1
    });
    std::thread::sleep(Duration::from_millis(100));
    assert!(a.release().unwrap());
    let mut b = waiter.join().unwrap();
    assert!(b.got, "B was not handed the permit");
    let (holders, now) = b.seen;
    assert_eq!(holders.len(), 1, "one holder, B: {holders:?}");
    let left = holders[0].1 as i64 - now as i64;
    println!(
        "handed permit: lease left at entry {left} ms, {:?} after the acquire was called",
        b.took
    );
    assert!(
        left >= floor_ms(b.took),
        "lease left at entry {left} ms: a handed permit must keep its ttl ({} ms or more)",
        floor_ms(b.took)
    );
    assert!(b.hold.release().unwrap());
}

/// A guard (passes on e6359a3): a reader woken by a writer's release
/// enters in its own step, for its whole ttl.
#[test]
fn a_read_hold_entered_after_a_writer_keeps_its_whole_ttl() {
    let server = RedisServer::start();
    let key = unique_key("handed-read");
    let url = server.url();
    let mut a = lock_at(&url, &key, &[]);
    assert!(a.acquire(Duration::ZERO).unwrap());
    let (u, k, readers) = (url.clone(), key.clone(), keys::readers_key(&key));
    let waiter = enter(
        &url,
        move || lock_at(&u, &k, &[]),
        |b| b.acquire_read(Duration::from_secs(5)).unwrap(),
        move |con| -> (Vec<(String, f64)>, u64) {
            let readers = redis::cmd("ZRANGE")
                .arg(&readers)
                .arg(0)
                .arg(-1)
                .arg("WITHSCORES")
                .query(con)
                .unwrap();
            (readers, now_ms())
        },
    );
    wait_until("B queues", Duration::from_secs(5), || {
        zcard(&server, &keys::queue_key(&key)) == 1
    });
    std::thread::sleep(Duration::from_millis(100));
    assert!(a.release().unwrap());
    let mut b = waiter.join().unwrap();
    assert!(b.got, "B did not enter to read");
    let (readers, now) = b.seen;
    assert_eq!(readers.len(), 1, "one reader, B: {readers:?}");
    let left = readers[0].1 as i64 - now as i64;
    println!(
        "read hold: lease left at entry {left} ms, {:?} after the acquire was called",
        b.took
    );
    assert!(
        left >= floor_ms(b.took),
        "lease left at entry {left} ms: a read hold must keep its ttl ({} ms or more)",
        floor_ms(b.took)
    );
    assert!(b.hold.release().unwrap());
}

/// How long B is frozen: longer than a queue mark lives (2 x 0.5 s +
/// 0.5 s), far shorter than the ttl.
const PAUSE: Duration = Duration::from_millis(1_600);
/// How long the newcomer C waits meanwhile.
const C_WAIT: Duration = Duration::from_millis(2_500);

/// B, in a process of its own, takes the lock (`handed`: on a hand-over by
/// A's release; otherwise free) and is frozen for [`PAUSE`] right after
/// its acquire returned true, while a newcomer C waits [`C_WAIT`]. C must
/// not get it; B, running again, must still hold it.
fn survives_a_pause(handed: bool) {
    let server = RedisServer::start();
    let key = unique_key(if handed {
        "paused-handed"
    } else {
        "paused-free"
    });
    let url = server.url();
    let mut a = lock_at(&url, &key, &[]);
    if handed {
        assert!(a.acquire(Duration::ZERO).unwrap());
    }
    let (u, k) = (url.clone(), key.clone());
    let mut b = Child::fork(move |parent| {
        let mut b = lock_at(&u, &k, &[]);
        let got = b.acquire(Duration::from_secs(5));
        parent.send(format!("{got:?}").as_bytes());
        if !matches!(got, Ok(true)) {
            return 1;
        }
        let Some(_) = parent.recv(Duration::from_secs(30)) else {
            return 2;
        };
        parent.send(format!("{:?}", b.is_acquired()).as_bytes());
        let Some(_) = parent.recv(Duration::from_secs(30)) else {
            return 2;
        };
        parent.send(format!("{:?}", b.release()).as_bytes());
        0
    });
    if handed {
        wait_until("B queues", Duration::from_secs(5), || {
            zcard(&server, &keys::queue_key(&key)) == 1
        });
        std::thread::sleep(Duration::from_millis(100));
        assert!(a.release().unwrap());
    }
    let got = b
        .recv(Duration::from_secs(10))
        .expect("B's acquire returned");
    b.stop();
    let stopped = Instant::now();
    assert_eq!(String::from_utf8_lossy(&got), "Ok(true)", "B's acquire");
    let (u, k) = (url.clone(), key.clone());
    let c = std::thread::spawn(move || {
        let mut c = lock_at(&u, &k, &[]);
        let got = c.acquire(C_WAIT).unwrap();
        (got, stopped.elapsed(), c)
    });
    std::thread::sleep(PAUSE.saturating_sub(stopped.elapsed()));
    b.resume();
    b.send(b"check");
    let held = b.recv(Duration::from_secs(10)).expect("B's is_acquired");
    let held = String::from_utf8_lossy(&held).into_owned();
    let (c_got, c_at, c) = c.join().unwrap();
    b.send(b"release");
    let released = b.recv(Duration::from_secs(10)).expect("B's release");
    let released = String::from_utf8_lossy(&released).into_owned();
    drop(c);
    println!(
        "{} lock, B frozen {PAUSE:?}: C got it {c_got} ({c_at:?} after B was frozen), \
         then B's is_acquired {held}, its release {released}",
        if handed { "handed" } else { "free" }
    );
    assert!(
        !c_got,
        "C got the lock {c_at:?} after B, holding it with a {TTL} s ttl, was frozen"
    );
    assert_eq!(held, "Ok(true)", "B's is_acquired after its pause");
    assert_eq!(released, "Ok(true)", "B's release after its pause");
    assert_eq!(b.wait(Duration::from_secs(5)), Some(0), "B's exit");
}

#[test]
fn a_handed_lock_survives_a_pause_shorter_than_its_ttl() {
    survives_a_pause(true);
}

/// The control (passes on e6359a3): a lock taken free keeps its ttl.
#[test]
fn a_free_lock_survives_a_pause_shorter_than_its_ttl() {
    survives_a_pause(false);
}

/// When the proxy black-holes B's requests, after B entered.
const BLIP_FROM: Duration = Duration::from_millis(300);
/// When it drops every connection and lets traffic pass again.
const BLIP_UNTIL: Duration = Duration::from_millis(1_000);
/// How long B keeps the lock.
const KEPT: Duration = Duration::from_secs(3);

/// B, in a process of its own (its renewal thread renews nothing of
/// another test's), reaches Redis through a proxy and takes the lock (`handed`: on a
/// hand-over by A's release; otherwise free); from [`BLIP_FROM`] to
/// [`BLIP_UNTIL`] after its entry the proxy black-holes its requests, then
/// drops every connection (Redis itself stays healthy). B keeps the lock
/// [`KEPT`]: Redis names B the owner throughout, a competitor waiting
/// meanwhile never gets it, and B's release finds it B's.
fn survives_a_blip(handed: bool, auto_renew: bool) {
    let server = RedisServer::start();
    let proxy = Proxy::start(&server);
    let key = unique_key(&format!("blip-{handed}-{auto_renew}"));
    let mut a = lock_at(&server.url(), &key, &[]);
    if handed {
        assert!(a.acquire(Duration::ZERO).unwrap());
    }
    let (u, k) = (proxy.url(), key.clone());
    let mut b = Child::fork(move |parent| {
        let mut b = lock_at(&u, &k, &[("auto_renew", OptionValue::Bool(auto_renew))]);
        match b.acquire(Duration::from_secs(5)) {
            Ok(true) => parent.send(&b.token().unwrap_or_default()),
            other => {
                parent.send(format!("not acquired: {other:?}").as_bytes());
                return 1;
            }
        }
        let Some(_) = parent.recv(Duration::from_secs(30)) else {
            return 2;
        };
        parent.send(format!("{:?}", b.release()).as_bytes());
        0
    });
    if handed {
        wait_until("B queues", Duration::from_secs(5), || {
            zcard(&server, &keys::queue_key(&key)) == 1
        });
        std::thread::sleep(Duration::from_millis(100));
        assert!(a.release().unwrap());
    }
    let token = b
        .recv(Duration::from_secs(10))
        .expect("B's acquire returned");
    let entered = Instant::now();
    assert!(
        !token.starts_with(b"not acquired"),
        "B: {}",
        String::from_utf8_lossy(&token)
    );
    let (u, k) = (server.url(), key.clone());
    let c = std::thread::spawn(move || {
        let mut c = lock_at(&u, &k, &[]);
        let got = c.acquire(KEPT - Duration::from_millis(500)).unwrap();
        (got, entered.elapsed(), c)
    });
    let mut observer = server.client();
    let mut not_b = Vec::new();
    let (mut cut, mut restored) = (false, false);
    while entered.elapsed() < KEPT {
        let at = entered.elapsed();
        if !cut && at >= BLIP_FROM {
            proxy.black_hole();
            cut = true;
        }
        if !restored && at >= BLIP_UNTIL {
            proxy.drop_all();
            proxy.pass();
            restored = true;
        }
        let owner: Option<Vec<u8>> = redis::cmd("GET").arg(&key).query(&mut observer).unwrap();
        if owner.as_deref() != Some(&token[..]) {
            not_b.push((at, owner.map(|o| String::from_utf8_lossy(&o).into_owned())));
        }
        let next = [BLIP_FROM, BLIP_UNTIL, KEPT]
            .into_iter()
            .filter(|&t| t > at)
            .min()
            .unwrap_or(KEPT);
        let now = entered.elapsed();
        std::thread::sleep(Duration::from_millis(50).min(next.saturating_sub(now)));
    }
    b.send(b"release");
    let released = b.recv(Duration::from_secs(10)).expect("B's release");
    let released = String::from_utf8_lossy(&released).into_owned();
    let (c_got, c_at, c) = c.join().unwrap();
    drop(c);
    println!(
        "{} lock, blip (auto_renew {auto_renew}): {} of the samples not B's, the first \
         {:?}; C got it {c_got} ({c_at:?} after B entered); B's release {released}",
        if handed { "handed" } else { "free" },
        not_b.len(),
        not_b.first()
    );
    assert!(
        not_b.is_empty(),
        "Redis named another owner than B in {} of the samples while B held the lock, \
         from {:?} to {:?} after B entered (first and last: {:?}, {:?})",
        not_b.len(),
        not_b[0].0,
        not_b[not_b.len() - 1].0,
        not_b[0].1,
        not_b[not_b.len() - 1].1
    );
    assert!(!c_got, "C got the lock {c_at:?} after B entered");
    assert_eq!(released, "Ok(true)", "B's release after the blip");
    assert_eq!(b.wait(Duration::from_secs(5)), Some(0), "B's exit");
}

#[test]
fn a_handed_lock_survives_a_connection_blip() {
    survives_a_blip(true, false);
}

#[test]
fn a_handed_lock_survives_a_connection_blip_with_auto_renew() {
    survives_a_blip(true, true);
}

/// The control (passes on e6359a3): a lock taken free keeps its ttl
/// through the blip.
#[test]
fn a_free_lock_survives_a_connection_blip() {
    survives_a_blip(false, false);
}

/// A lone reader holds the lock key itself; a second reader moves it into
/// `K~~r`. That second reader read its clock, then paused 1.5 s before its
/// step reached Redis: the lone reader keeps the lease end it wrote itself
/// (a lease end counted from the stale clock would be 1.5 s short), so when
/// the second reader leaves, `K` is not cut below the lone reader's lease.
#[test]
fn a_paused_second_reader_does_not_cut_a_lone_readers_lease() {
    use redislock_core::testing::protocol::scripts::{READ_ACQUIRE, READ_RELEASE};
    let server = RedisServer::start();
    let key = unique_key("paused-joiner");
    let (readers, queue) = (keys::readers_key(&key), keys::queue_key(&key));
    let mut a = lock_at(&server.url(), &key, &[]);
    let called = Instant::now();
    assert!(a.acquire_read(Duration::ZERO).unwrap());
    let mut con = server.client();
    let step = |con: &mut redis::Connection, now: u64| -> Vec<i64> {
        redis::cmd("EVALSHA")
            .arg(READ_ACQUIRE.hash())
            .arg(3)
            .arg(&readers)
            .arg(&queue)
            .arg(&key)
            .arg("b-token")
            .arg(now)
            .arg(3_000)
            .arg("0")
            .arg(1_000)
            .arg(now * 1_000)
            .arg(500)
            .query(con)
            .unwrap()
    };
    assert_eq!(step(&mut con, now_ms() - 1_500), [1], "B joins");
    let released: i64 = redis::cmd("EVALSHA")
        .arg(READ_RELEASE.hash())
        .arg(3)
        .arg(&readers)
        .arg(&queue)
        .arg(&key)
        .arg("b-token")
        .arg(now_ms())
        .arg(500)
        .arg("0")
        .query(&mut con)
        .unwrap();
    assert_eq!(released, 1, "B leaves");
    // A's lease, counted as it counts it: from its call, on its clock.
    let believed = TTL * 1_000.0 - called.elapsed().as_secs_f64() * 1_000.0;
    let pttl: i64 = redis::cmd("PTTL").arg(&key).query(&mut con).unwrap();
    println!("A counts {believed:.0} ms left; the lock key lives {pttl} ms");
    assert!(
        pttl as f64 >= believed - SLACK_MS as f64,
        "the lock key lives {pttl} ms, A counts {believed:.0} ms more of its read hold"
    );
    assert!(a.release().unwrap());
}

/// Which primitive a late top-up case takes.
#[derive(Debug, Clone, Copy)]
enum Held {
    Lock,
    Read,
    Permit,
}

/// The waiter's ttl in the late top-up cases: short, so that a reply held
/// back outlasts the lease its top-up set.
const SHORT_TTL: f64 = 1.0;
/// When the first holder releases, after the waiter began to wait: more
/// than a quarter of [`SHORT_TTL`], so the waiter's win is topped up.
const HAND_AFTER: Duration = Duration::from_millis(600);
/// How long the top-up's reply is held back: past the lease it set.
const TOP_UP_HELD: Duration = Duration::from_millis(1_500);

/// A hold of one of the three primitives, acquired and released alike.
enum Holder {
    Lock(Lock),
    Read(Lock),
    Permit(Semaphore),
}

impl Holder {
    fn new(held: Held, url: &str, name: &[u8], ttl: f64, set: &[(&str, OptionValue)]) -> Self {
        let servers = [url.to_owned()];
        match held {
            Held::Lock => {
                Holder::Lock(Lock::new(name.to_vec(), ttl, &servers, options(set)).unwrap())
            }
            Held::Read => {
                Holder::Read(Lock::new(name.to_vec(), ttl, &servers, options(set)).unwrap())
            }
            Held::Permit => Holder::Permit(
                Semaphore::new(name.to_vec(), 1, ttl, &servers, options(set)).unwrap(),
            ),
        }
    }

    fn acquire(&mut self, wait: Duration) -> redislock_core::Result<bool> {
        match self {
            Holder::Lock(l) => l.acquire(wait),
            Holder::Read(l) => l.acquire_read(wait),
            Holder::Permit(s) => s.acquire(wait),
        }
    }

    fn release(&mut self) -> redislock_core::Result<bool> {
        match self {
            Holder::Lock(l) | Holder::Read(l) => l.release(),
            Holder::Permit(s) => s.release(),
        }
    }

    fn remaining_ttl(&mut self) -> redislock_core::Result<Option<f64>> {
        match self {
            Holder::Lock(l) | Holder::Read(l) => l.remaining_ttl(),
            Holder::Permit(s) => s.remaining_ttl(),
        }
    }
}

/// The queue the waiter of `held` joins.
fn queue_of(held: Held, name: &[u8]) -> Vec<u8> {
    match held {
        Held::Permit => SemKeys::new(name).queue,
        Held::Lock | Held::Read => keys::queue_key(name),
    }
}

/// The script that tops a won hold of `held` up.
fn top_up_script(held: Held) -> Vec<u8> {
    use redislock_core::testing::protocol::scripts::{READ_REFRESH, REFRESH, SEM_REFRESH};
    let script = match held {
        Held::Lock => &REFRESH,
        Held::Read => &READ_REFRESH,
        Held::Permit => &SEM_REFRESH,
    };
    script.hash().as_bytes().to_vec()
}

/// A first holder H takes the hold (a writer for the lock and the read
/// hold, the one permit of the semaphore) with a long ttl. A waiter W
/// (ttl [`SHORT_TTL`], `retry_delay` 5 s, through a proxy, `read_timeout`
/// `w_read_timeout`) waits; H releases [`HAND_AFTER`] later, handing the
/// hold to W, whose wait took more than a quarter of its ttl, so W tops
/// its win up; the proxy holds that top-up's reply back [`TOP_UP_HELD`],
/// past the lease it set. A competitor C (a writer for the lock and the
/// read hold), waiting directly since H's release, gets the hold when W's
/// lease ends. W's acquire must then not return true: its only proof is a
/// reply read after the lease ended (or none). At da6b638 it returned true
/// while C held the hold.
fn a_late_top_up_never_wins(held: Held, w_read_timeout: f64) {
    let server = RedisServer::start();
    let proxy = Proxy::start(&server);
    let name = unique_key(&format!("late-top-up-{held:?}-{w_read_timeout}"));
    let url = server.url();
    let first = match held {
        Held::Permit => Held::Permit,
        Held::Lock | Held::Read => Held::Lock,
    };
    let mut h = Holder::new(first, &url, &name, TTL, &[]);
    assert!(h.acquire(Duration::ZERO).unwrap(), "H takes the hold");
    let (u, n) = (proxy.url(), name.clone());
    let began = Instant::now();
    let waiter = std::thread::spawn(move || {
        let mut w = Holder::new(
            held,
            &u,
            &n,
            SHORT_TTL,
            &[
                ("retry_delay", OptionValue::Number(5.0)),
                ("read_timeout", OptionValue::Number(w_read_timeout)),
                ("auto_renew", OptionValue::Bool(false)),
            ],
        );
        let got = w.acquire(Duration::from_secs(3));
        let at = began.elapsed();
        // What W counts on right after its acquire said true.
        let left = match got {
            Ok(true) => w.remaining_ttl().ok().flatten(),
            _ => None,
        };
        (got, at, left, w)
    });
    wait_until("W queues", Duration::from_secs(5), || {
        zcard(&server, &queue_of(held, &name)) == 1
    });
    std::thread::sleep(HAND_AFTER.saturating_sub(began.elapsed()));
    proxy.hold_reply_to(&top_up_script(held), TOP_UP_HELD);
    assert!(h.release().unwrap(), "H's release");
    let (u, n) = (url.clone(), name.clone());
    let competitor = std::thread::spawn(move || {
        let mut c = Holder::new(first, &u, &n, TTL, &[]);
        let got = c.acquire(Duration::from_secs(4)).unwrap();
        (got, began.elapsed(), c)
    });
    let (w_got, w_at, w_left, mut w) = waiter.join().unwrap();
    let (c_got, c_at, mut c) = competitor.join().unwrap();
    println!(
        "{held:?}, W's read_timeout {w_read_timeout} s: {} top-up reply held back; W's acquire \
         {w_got:?} at {w_at:?} ({w_left:?} s left by then); C's {c_got} at {c_at:?}",
        proxy.holds().len()
    );
    assert_eq!(proxy.holds().len(), 1, "W's top-up reply was held back");
    assert!(c_got, "C got the hold once W's lease ended");
    if matches!(w_got, Ok(true)) {
        assert!(
            w_at < c_at,
            "W's acquire returned true at {w_at:?}, after C got the hold at {c_at:?}: two \
             holders of a {held:?} (W's only proof a top-up reply read after its lease ended)"
        );
        // A true must come with about the whole ttl (the pause tolerance),
        // not with a lease counted from a request long past.
        assert!(
            w_left.is_some_and(|left| left >= SHORT_TTL / 2.0),
            "W's acquire returned true at {w_at:?} with {w_left:?} s left of a {SHORT_TTL} s \
             ttl: a win counted from the wake-up step's send, its top-up unanswered"
        );
    }
    assert!(c.release().unwrap(), "C's release");
    let _ = w.release();
}

#[test]
fn a_late_top_up_reply_never_wins_a_lock() {
    a_late_top_up_never_wins(Held::Lock, 2.0);
}

#[test]
fn a_late_top_up_reply_never_wins_a_read_hold() {
    a_late_top_up_never_wins(Held::Read, 2.0);
}

#[test]
fn a_late_top_up_reply_never_wins_a_permit() {
    a_late_top_up_never_wins(Held::Permit, 2.0);
}

#[test]
fn an_unanswered_top_up_never_wins_a_lock() {
    a_late_top_up_never_wins(Held::Lock, 0.5);
}

#[test]
fn an_unanswered_top_up_never_wins_a_read_hold() {
    a_late_top_up_never_wins(Held::Read, 0.5);
}

#[test]
fn an_unanswered_top_up_never_wins_a_permit() {
    a_late_top_up_never_wins(Held::Permit, 0.5);
}

/// A waiter's first wait (its joining step, its `BLPOP` and the claim
/// behind it, one request) whose replies come after the lease the claim
/// set never wins: W (ttl 1 s) is handed the lock at the release, but the
/// replies are held 1.5 s in the network; C, waiting directly, gets the
/// lock when W's lease ends, and W's acquire does not return true while C
/// holds it. The win counts from the request's send, not from its reply.
#[test]
fn a_late_first_wait_reply_never_wins() {
    use redislock_core::testing::protocol::scripts::WAIT;
    let server = RedisServer::start();
    let proxy = Proxy::start(&server);
    let key = unique_key("late-first-wait");
    let mut holder = lock_at(&server.url(), &key, &[]);
    assert!(holder.acquire(Duration::ZERO).unwrap());
    // The first request of W that runs wait.lua is its first wait.
    proxy.hold_reply_to(WAIT.hash().as_bytes(), Duration::from_millis(1500));
    let began = Instant::now();
    let (url, k) = (proxy.url(), key.clone());
    let waiter = std::thread::spawn(move || {
        let mut w = Lock::new(k, 1.0, &[url], options(&[])).unwrap();
        let got = w.acquire(Duration::from_secs(3));
        (got, began.elapsed(), w)
    });
    let queue = keys::queue_key(&key);
    wait_until("W is queued", Duration::from_secs(5), || {
        zcard(&server, &queue) == 1
    });
    assert!(holder.release().unwrap(), "handed to W");
    let mut c = lock_at(&server.url(), &key, &[]);
    let c_got = c.acquire(Duration::from_secs(4)).unwrap();
    let c_at = began.elapsed();
    let (w_got, w_at, mut w) = waiter.join().unwrap();
    assert_eq!(
        proxy.holds().len(),
        1,
        "W's first wait's replies were held back"
    );
    assert!(c_got, "C got the lock once W's lease ended");
    if matches!(w_got, Ok(true)) {
        assert!(
            w_at < c_at,
            "W's acquire returned true at {w_at:?}, after C got the lock at {c_at:?}: its only \
             proof a reply read after its lease ended"
        );
    }
    assert!(c.release().unwrap());
    let _ = w.release();
}
