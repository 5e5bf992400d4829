//! Faults between a lock and its server: replies delayed past the read
//! timeout, a reply cut midway, a black hole, a frozen server (SIGSTOP and
//! `DEBUG SLEEP`), killed client connections, a restarted server and dead
//! holders. Network faults come from a TCP proxy the tests own
//! ([`common::proxy`]).
//!
//! For each fault: every call returns or fails within its timeouts, the
//! error has the right class, a later call recovers once the fault is
//! removed. Then several threads, each with its own non-reentrant lock (so
//! they compete like processes), run critical sections on one key while
//! the faults are injected on a schedule: no two sections may overlap.
//!
//! Two tests are ignored: each shows a bug of the core (see its comment).

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use common::proxy::Proxy;
use common::{RedisServer, exists, unique_key, wait_until};
use redislock_core::testing::protocol::keys;
use redislock_core::{ConnectionFailure, Lock, LockError, LockOptions, OptionValue};

const CONNECT_TIMEOUT: f64 = 0.5;
const READ_TIMEOUT: f64 = 0.3;
const RETRY_DELAY: f64 = 0.1;

fn options() -> LockOptions {
    let mut options = LockOptions::default();
    for (name, value) in [
        ("connect_timeout", CONNECT_TIMEOUT),
        ("read_timeout", READ_TIMEOUT),
        ("retry_delay", RETRY_DELAY),
    ] {
        options.set(name, OptionValue::Number(value)).unwrap();
    }
    // Threads of one process compete like processes.
    options.set("reentrant", OptionValue::Bool(false)).unwrap();
    options
}

fn lock_at(url: &str, key: &[u8], ttl: f64) -> Lock {
    Lock::new(key.to_vec(), ttl, &[url.to_owned()], options()).unwrap()
}

/// A lock whose calls are given 2 s to answer, for tests of faults that
/// end calls at once (cut replies, dropped connections, a dead server):
/// their calls before and after the fault must not time out on a busy
/// machine (with 0.3 s they did, at load 20).
fn patient_lock_at(url: &str, key: &[u8], ttl: f64) -> Lock {
    let mut options = options();
    options
        .set("read_timeout", OptionValue::Number(2.0))
        .unwrap();
    Lock::new(key.to_vec(), ttl, &[url.to_owned()], options).unwrap()
}

/// A private server, a proxy in front of it that the test controls, and a
/// fresh key named after `name`.
fn behind_proxy(name: &str) -> (RedisServer, Proxy, Vec<u8>) {
    let server = RedisServer::start();
    let proxy = Proxy::start(&server);
    (server, proxy, unique_key(name))
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

/// The longest a call may take: its `wait`, three times a connect plus a
/// read timeout (a dropped pooled connection is replaced and the command
/// replayed; an acquire may clean up an earlier one first), and a margin
/// for a loaded machine.
fn bound(wait: Duration) -> Duration {
    wait + secs(3.0 * (CONNECT_TIMEOUT + READ_TIMEOUT)) + Duration::from_millis(500)
}

/// Times this process did not run (a loaded or swapping machine): a
/// thread that sleeps 5 ms at a time records every wake-up more than 20 ms
/// late. Calls are judged by their time minus these stalls, so that only
/// the core, not the machine, can make them late.
fn stalls() -> &'static Mutex<Vec<(Instant, Instant)>> {
    static STALLS: OnceLock<Mutex<Vec<(Instant, Instant)>>> = OnceLock::new();
    STALLS.get_or_init(|| {
        // Runs until the test process exits.
        std::thread::spawn(|| {
            let tick = Duration::from_millis(5);
            loop {
                let asleep = Instant::now();
                std::thread::sleep(tick);
                let woke = Instant::now();
                if woke - asleep > tick + Duration::from_millis(20) {
                    let mut stalls = stalls().lock().unwrap();
                    stalls.push((asleep + tick, woke));
                }
            }
        });
        Mutex::new(Vec::new())
    })
}

/// How long `from..to` took, less the stalls of the process within it.
fn net(from: Instant, to: Instant) -> Duration {
    let stalled: Duration = stalls()
        .lock()
        .unwrap()
        .iter()
        .map(|&(a, b)| b.min(to).saturating_duration_since(a.max(from)))
        .sum();
    (to - from).saturating_sub(stalled)
}

/// Asserts that `from..to` (less stalls) is within [`bound`]`(wait)`.
fn assert_bounded(what: &str, wait: Duration, from: Instant, to: Instant) {
    let took = net(from, to);
    println!("{what}: {took:?} ({:?} with stalls)", to - from);
    assert!(took <= bound(wait), "{what} took {took:?}");
}

/// Runs `call` and asserts that it ended within [`bound`]`(wait)`.
fn within<T>(what: &str, wait: Duration, call: impl FnOnce() -> T) -> T {
    stalls();
    let started = Instant::now();
    let result = call();
    assert_bounded(what, wait, started, Instant::now());
    result
}

/// The class of a connection error; panics on anything else.
fn failure<T: std::fmt::Debug>(what: &str, result: Result<T, LockError>) -> ConnectionFailure {
    match result {
        Err(LockError::Connection { kind, .. }) => kind,
        other => panic!("{what}: expected a connection error, got {other:?}"),
    }
}

fn queued(server: &RedisServer, key: &[u8]) -> i64 {
    redis::cmd("ZCARD")
        .arg(keys::queue_key(key))
        .query(&mut server.client())
        .unwrap()
}

/// Kills every client connection but the one asking, by address.
fn kill_clients_by_addr(server: &RedisServer) -> usize {
    let mut c = server.client();
    let me: i64 = redis::cmd("CLIENT").arg("ID").query(&mut c).unwrap();
    let list: String = redis::cmd("CLIENT").arg("LIST").query(&mut c).unwrap();
    let field = |line: &str, name: &str| {
        line.split(' ')
            .find_map(|f| f.strip_prefix(name))
            .map(str::to_owned)
    };
    let mut killed = 0;
    for line in list.lines() {
        if field(line, "id=").and_then(|id| id.parse().ok()) == Some(me) {
            continue;
        }
        if let Some(addr) = field(line, "addr=") {
            let r: redis::RedisResult<()> = redis::cmd("CLIENT")
                .arg("KILL")
                .arg("ADDR")
                .arg(&addr)
                .query(&mut c);
            killed += usize::from(r.is_ok());
        }
    }
    killed
}

/// Whether the server answers a PING with PONG within 100 ms (not when it
/// is asleep, frozen, or loading its data).
fn answers_ping(port: u16) -> bool {
    use std::io::{Read, Write};
    let timeout = Duration::from_millis(100);
    let Ok(mut c) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    c.set_read_timeout(Some(timeout)).unwrap();
    let mut reply = [0; 7];
    c.write_all(b"PING\r\n").is_ok() && c.read_exact(&mut reply).is_ok() && &reply == b"+PONG\r\n"
}

#[test]
fn replies_delayed_past_the_read_timeout_time_out_then_recover() {
    let (server, proxy, key) = behind_proxy("delay");
    let mut a = lock_at(&proxy.url(), &key, 5.0);
    assert!(a.acquire(Duration::ZERO).unwrap());

    // Below the read timeout: slow, but fine.
    proxy.delay(Duration::from_millis(100));
    assert!(within("refresh, 0.1 s late", Duration::ZERO, || a.refresh(None)).unwrap());

    proxy.delay(secs(5.0 * READ_TIMEOUT));
    let result = within("refresh, replies late", Duration::ZERO, || a.refresh(None));
    assert_eq!(failure("refresh", result), ConnectionFailure::TimedOut);
    let result = within("is_acquired, replies late", Duration::ZERO, || {
        a.is_acquired()
    });
    assert_eq!(failure("is_acquired", result), ConnectionFailure::TimedOut);
    let result = within("release, replies late", Duration::ZERO, || a.release());
    assert_eq!(failure("release", result), ConnectionFailure::TimedOut);
    // The release ran (only its reply was late): the key is free.
    wait_until("the late release", Duration::from_secs(5), || {
        !exists(&server, &key)
    });
    // The next acquire of the key first sends the unanswered release again,
    // which is not answered either: nothing else is sent.
    let result = within("acquire, replies late", Duration::ZERO, || {
        a.acquire(Duration::ZERO)
    });
    assert_eq!(failure("acquire", result), ConnectionFailure::TimedOut);
    // Another key's acquire: its SET runs, only its reply is late.
    let other = unique_key("delay-other");
    let mut b = lock_at(&proxy.url(), &other, 5.0);
    let result = within("acquire, replies late", Duration::ZERO, || {
        b.acquire(Duration::ZERO)
    });
    assert_eq!(failure("acquire", result), ConnectionFailure::TimedOut);
    wait_until("the late SET", Duration::from_secs(5), || {
        exists(&server, &other)
    });

    proxy.pass();
    // The timed-out acquire's SET is cleaned up first, then taken anew.
    for (lock, key) in [(&mut a, &key), (&mut b, &other)] {
        assert!(
            within("acquire after", Duration::ZERO, || lock
                .acquire(Duration::ZERO))
            .unwrap()
        );
        assert!(lock.release().unwrap());
        assert!(!exists(&server, key));
    }
}

#[test]
fn a_reply_cut_midway_is_replayed_once_then_reported_as_dropped() {
    let (server, proxy, key) = behind_proxy("cut");
    let mut a = patient_lock_at(&proxy.url(), &key, 5.0);
    assert!(a.acquire(Duration::ZERO).unwrap());
    assert!(a.release().unwrap());

    // On a pooled connection: replayed on a new one, unnoticed.
    proxy.cut_mid_reply();
    assert!(
        within("acquire, reply cut", Duration::ZERO, || a
            .acquire(Duration::ZERO))
        .unwrap()
    );
    assert_eq!(proxy.cuts(), 1);
    proxy.cut_mid_reply();
    assert!(within("is_acquired, reply cut", Duration::ZERO, || a.is_acquired()).unwrap());
    assert_eq!(proxy.cuts(), 2);

    // The pooled connection is dead and the replay's reply is cut too.
    proxy.drop_all();
    proxy.cut_mid_reply();
    let result = within("is_acquired, twice cut", Duration::ZERO, || a.is_acquired());
    assert_eq!(failure("is_acquired", result), ConnectionFailure::Dropped);
    assert_eq!(proxy.cuts(), 3);

    // Recovered.
    assert!(within("is_acquired after", Duration::ZERO, || a.is_acquired()).unwrap());
    assert!(a.release().unwrap());
    assert!(!exists(&server, &key));
}

#[test]
fn a_black_hole_times_out_then_recovers() {
    let (_server, proxy, key) = behind_proxy("blackhole");
    let mut a = lock_at(&proxy.url(), &key, 5.0);
    assert!(a.acquire(Duration::ZERO).unwrap());
    assert!(a.release().unwrap());

    proxy.black_hole();
    let result = within("acquire, pooled", Duration::ZERO, || {
        a.acquire(Duration::ZERO)
    });
    assert_eq!(failure("acquire", result), ConnectionFailure::TimedOut);
    // The timed-out connection was closed: a new one is accepted, then
    // never answered.
    let accepted = proxy.accepted();
    let wait = Duration::from_secs(1);
    let result = within("acquire(1 s), new connection", wait, || a.acquire(wait));
    assert_eq!(failure("acquire", result), ConnectionFailure::TimedOut);
    assert!(proxy.accepted() > accepted, "a new connection");

    proxy.pass();
    assert!(
        within("acquire after", Duration::ZERO, || a
            .acquire(Duration::ZERO))
        .unwrap()
    );
    assert!(a.release().unwrap());
}

#[test]
fn a_black_hole_ends_a_blocked_wait_within_its_timeouts() {
    let (server, proxy, key) = behind_proxy("blackhole-wait");
    let mut holder = lock_at(&server.url(), &key, 10.0);
    assert!(holder.acquire(Duration::ZERO).unwrap());
    let (url, k) = (proxy.url(), key.clone());
    let waiter = std::thread::spawn(move || {
        let mut w = lock_at(&url, &k, 5.0);
        let result = w.acquire(Duration::from_secs(8));
        (result, Instant::now(), w)
    });
    wait_until("the waiter to queue", Duration::from_secs(5), || {
        queued(&server, &key) == 1
    });
    proxy.black_hole();
    let cut = Instant::now();
    let (result, ended, mut w) = waiter.join().unwrap();
    println!("blocked wait after the black hole: {result:?}");
    assert_bounded("blocked wait, black hole", Duration::ZERO, cut, ended);
    assert_eq!(failure("waiter", result), ConnectionFailure::TimedOut);

    proxy.pass();
    assert!(holder.release().unwrap());
    // The departed waiter's turn lapses within its alive window.
    let wait = Duration::from_secs(3);
    assert!(within("acquire(3 s) after", wait, || w.acquire(wait)).unwrap());
    assert!(w.release().unwrap());
}

#[test]
fn a_frozen_server_times_out_then_recovers() {
    let server = RedisServer::start();
    let key = unique_key("sigstop");
    let mut a = lock_at(&server.url(), &key, 5.0);
    assert!(a.acquire(Duration::ZERO).unwrap());

    server.pause();
    let result = within("refresh, SIGSTOP", Duration::ZERO, || a.refresh(None));
    let kind = failure("refresh", result);
    let mut b = lock_at(&server.url(), &unique_key("sigstop-b"), 5.0);
    let wait = Duration::from_secs(1);
    let result = within("acquire(1 s), SIGSTOP", wait, || b.acquire(wait));
    let kind_b = failure("acquire", result);
    server.resume();
    assert_eq!(kind, ConnectionFailure::TimedOut);
    assert_eq!(kind_b, ConnectionFailure::TimedOut);

    assert!(within("refresh after", Duration::ZERO, || a.refresh(None)).unwrap());
    assert!(
        within("acquire after", Duration::ZERO, || b
            .acquire(Duration::ZERO))
        .unwrap()
    );
    assert!(a.release().unwrap());
    assert!(b.release().unwrap());
}

#[test]
fn debug_sleep_times_out_then_recovers() {
    let server = RedisServer::start_with(&["--enable-debug-command", "yes"]);
    let key = unique_key("debugsleep");
    let mut a = lock_at(&server.url(), &key, 5.0);
    assert!(a.acquire(Duration::ZERO).unwrap());
    assert!(a.release().unwrap());

    let port = server.port;
    let sleeper = std::thread::spawn(move || {
        let mut c = redis::Client::open(format!("redis://127.0.0.1:{port}"))
            .unwrap()
            .get_connection()
            .unwrap();
        let _: () = redis::cmd("DEBUG")
            .arg("SLEEP")
            .arg(2)
            .query(&mut c)
            .unwrap();
    });
    // Asleep: a PING goes unanswered (on a raw socket: a client's own
    // connection setup would wait for the end of the sleep).
    wait_until("DEBUG SLEEP to begin", Duration::from_secs(5), || {
        !answers_ping(server.port)
    });
    let result = within("acquire, DEBUG SLEEP", Duration::ZERO, || {
        a.acquire(Duration::ZERO)
    });
    assert_eq!(failure("acquire", result), ConnectionFailure::TimedOut);
    sleeper.join().unwrap();

    assert!(
        within("acquire after", Duration::ZERO, || a
            .acquire(Duration::ZERO))
        .unwrap()
    );
    assert!(a.release().unwrap());
}

#[test]
fn killed_client_connections_are_replaced() {
    let server = RedisServer::start();
    let key = unique_key("clientkill");
    let mut a = lock_at(&server.url(), &key, 5.0);
    assert!(a.acquire(Duration::ZERO).unwrap());

    let _: i64 = server.cmd(&["CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"]);
    assert!(
        within("refresh, killed by TYPE", Duration::ZERO, || a
            .refresh(None))
        .unwrap()
    );
    assert!(kill_clients_by_addr(&server) >= 1);
    assert!(
        within("is_acquired, killed by ADDR", Duration::ZERO, || a
            .is_acquired())
        .unwrap()
    );
    assert!(kill_clients_by_addr(&server) >= 1);
    assert!(within("release, killed by ADDR", Duration::ZERO, || a.release()).unwrap());
    assert!(!exists(&server, &key));

    // Killed in the middle of a blocked wait.
    let mut holder = lock_at(&server.url(), &key, 10.0);
    assert!(holder.acquire(Duration::ZERO).unwrap());
    let (url, k) = (server.url(), key.clone());
    let waiter = std::thread::spawn(move || {
        let mut w = lock_at(&url, &k, 5.0);
        let result = w.acquire(Duration::from_secs(5));
        (result, Instant::now(), w)
    });
    wait_until("the waiter to queue", Duration::from_secs(5), || {
        queued(&server, &key) == 1
    });
    // Let it block in BLPOP, then kill it there.
    std::thread::sleep(Duration::from_millis(30));
    let killed_at = Instant::now();
    let _: i64 = server.cmd(&["CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"]);
    std::thread::sleep(Duration::from_millis(50));
    assert!(holder.release().unwrap());
    let (result, ended, mut w) = waiter.join().unwrap();
    println!("blocked wait killed: {result:?}");
    assert_bounded("blocked wait, killed", Duration::ZERO, killed_at, ended);
    match result {
        Ok(true) => assert!(w.release().unwrap()),
        other => {
            assert_eq!(failure("waiter", other), ConnectionFailure::Dropped);
            let wait = Duration::from_secs(3);
            assert!(within("acquire(3 s) after", wait, || w.acquire(wait)).unwrap());
            assert!(w.release().unwrap());
        }
    }
}

#[test]
fn a_dead_holder_blocks_for_its_ttl_only() {
    let server = RedisServer::start();
    let key = unique_key("deadholder");
    let ttl = 0.5;
    let mut options = options();
    options
        .set("auto_release", OptionValue::Bool(false))
        .unwrap();
    let mut dead = Lock::new(key.clone(), ttl, &[server.url()], options).unwrap();
    stalls();
    let taken = Instant::now();
    assert!(dead.acquire(Duration::ZERO).unwrap());
    drop(dead); // never released: the lease runs out
    assert!(exists(&server, &key));
    let mut b = lock_at(&server.url(), &key, 5.0);
    let wait = Duration::from_secs(3);
    assert!(
        within("acquire(3 s) behind a dead holder", wait, || b
            .acquire(wait))
        .unwrap()
    );
    let after = taken.elapsed();
    println!("a dead holder's lock was taken {after:?} after it was acquired");
    assert!(after >= secs(ttl - 0.01), "{after:?}");
    let lease_end = taken + secs(ttl);
    assert_bounded(
        "past the dead lease",
        secs(RETRY_DELAY),
        lease_end,
        Instant::now(),
    );
    assert!(b.release().unwrap());
}

/// Lease of the contending threads' holds, in seconds.
const WORKER_TTL: f64 = 2.0;
/// How long a contending thread waits for its turn.
const WORKER_WAIT: Duration = Duration::from_secs(1);

/// One critical section as its holder saw it.
#[derive(Debug, Clone, Copy)]
struct Section {
    enter: Instant,
    exit: Instant,
    /// The earliest its lease can end (the acquire call's start + ttl).
    lease_end: Instant,
    holder: usize,
}

/// What the contending threads saw.
#[derive(Debug, Default)]
struct Tally {
    sections: Vec<Section>,
    /// Failed calls by class ("acquire: timed out", ...).
    errors: BTreeMap<String, u64>,
    /// Acquires whose wait ran out.
    waits_out: u64,
    /// Releases that found the lease no longer ours.
    lost_at_release: u64,
    /// Calls that took longer than [`bound`] (with stalls): what, its
    /// wait, when it started and ended.
    late: Vec<(String, Duration, Instant, Instant)>,
    /// The call that took longest beyond its wait (with stalls).
    slowest: Option<(Duration, String, Instant, Instant)>,
}

/// Threads competing for one key, each with its own lock, each running
/// critical sections on a counter that is not atomic (read, sleep 1 ms,
/// write) until told to stop.
struct Contention {
    stop: Arc<AtomicBool>,
    counter: Arc<AtomicU64>,
    tally: Arc<Mutex<Tally>>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Contention {
    fn start(url: &str, key: &[u8], threads: usize) -> Self {
        stalls();
        let stop = Arc::new(AtomicBool::new(false));
        let counter = Arc::new(AtomicU64::new(0));
        let tally = Arc::new(Mutex::new(Tally::default()));
        let threads = (0..threads)
            .map(|holder| {
                let (url, key) = (url.to_owned(), key.to_vec());
                let (stop, counter, tally) = (stop.clone(), counter.clone(), tally.clone());
                std::thread::spawn(move || {
                    let mut lock = lock_at(&url, &key, WORKER_TTL);
                    while !stop.load(Ordering::Relaxed) {
                        work(&mut lock, holder, &counter, &tally);
                    }
                })
            })
            .collect();
        Self {
            stop,
            counter,
            tally,
            threads,
        }
    }

    /// Waits until every thread completed `n` more sections (at most 10 s).
    fn progress(&self, n: usize) -> bool {
        let done = |holder| {
            let tally = self.tally.lock().unwrap();
            tally.sections.iter().filter(|s| s.holder == holder).count()
        };
        let before: Vec<usize> = (0..self.threads.len()).map(done).collect();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if (0..self.threads.len()).all(|h| done(h) >= before[h] + n) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    /// Stops the threads; the counter and what they saw.
    fn finish(self) -> (u64, Tally) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads {
            t.join().unwrap();
        }
        let tally = std::mem::take(&mut *self.tally.lock().unwrap());
        (self.counter.load(Ordering::Relaxed), tally)
    }
}

/// One try at a critical section.
fn work(lock: &mut Lock, holder: usize, counter: &AtomicU64, tally: &Mutex<Tally>) {
    let timed = |tally: &Mutex<Tally>, what: &str, wait: Duration, started: Instant| {
        let ended = Instant::now();
        let mut tally = tally.lock().unwrap();
        let beyond = (ended - started).saturating_sub(wait);
        if tally.slowest.as_ref().is_none_or(|s| beyond > s.0) {
            tally.slowest = Some((beyond, what.to_owned(), started, ended));
        }
        if ended - started > bound(wait) {
            tally.late.push((what.to_owned(), wait, started, ended));
        }
    };
    let failed = |tally: &Mutex<Tally>, what: &str, err: LockError| {
        let class = match err {
            LockError::Connection { kind, .. } => format!("{what}: {kind}"),
            // See a_server_loading_its_dataset_is_a_connection_error.
            LockError::Server { detail, .. } if detail.contains("loading") => {
                format!("{what}: {LOADING}")
            }
            other => format!("{what}: UNEXPECTED {other}"),
        };
        *tally.lock().unwrap().errors.entry(class).or_default() += 1;
    };
    let started = Instant::now();
    let acquired = lock.acquire(WORKER_WAIT);
    timed(tally, "acquire", WORKER_WAIT, started);
    match acquired {
        Ok(true) => {
            let enter = Instant::now();
            let n = counter.load(Ordering::Relaxed);
            std::thread::sleep(Duration::from_millis(1));
            counter.store(n + 1, Ordering::Relaxed);
            let exit = Instant::now();
            tally.lock().unwrap().sections.push(Section {
                enter,
                exit,
                lease_end: started + secs(WORKER_TTL),
                holder,
            });
            let released_at = Instant::now();
            let released = lock.release();
            timed(tally, "release", Duration::ZERO, released_at);
            match released {
                Ok(true) => {}
                Ok(false) => tally.lock().unwrap().lost_at_release += 1,
                Err(e) => failed(tally, "release", e),
            }
        }
        Ok(false) => tally.lock().unwrap().waits_out += 1,
        Err(e) => {
            failed(tally, "acquire", e);
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Sections that overlap another while both were within their lease, and
/// sections that ran past their lease (a thread stalled longer than the
/// ttl: the documented limit of leases, not counted as a violation).
fn violations(sections: &[Section]) -> (Vec<String>, usize) {
    let mut sorted = sections.to_vec();
    sorted.sort_by_key(|s| s.enter);
    let overran = sorted.iter().filter(|s| s.exit > s.lease_end).count();
    let mut found = Vec::new();
    for (i, a) in sorted.iter().enumerate() {
        for b in sorted[i + 1..].iter().take_while(|b| b.enter < a.exit) {
            if a.exit <= a.lease_end && b.exit <= b.lease_end {
                found.push(format!("{a:?} overlaps {b:?}"));
            }
        }
    }
    (found, overran)
}

/// Prints the numbers and asserts mutual exclusion, bounded calls and
/// error classes (only timeouts, lost and refused connections).
fn verdict(name: &str, faults: usize, counter: u64, tally: &Tally) {
    let (found, overran) = violations(&tally.sections);
    let late: Vec<String> = tally
        .late
        .iter()
        .filter(|(_, wait, from, to)| net(*from, *to) > bound(*wait))
        .map(|(what, wait, from, to)| {
            let (took, net) = (*to - *from, net(*from, *to));
            format!("{what} (wait {wait:?}) took {took:?}, {net:?} less stalls")
        })
        .collect();
    let slowest = match &tally.slowest {
        Some((beyond, what, from, to)) => format!(
            "{what}, {beyond:?} beyond its wait ({:?} less stalls)",
            beyond.saturating_sub((*to - *from) - net(*from, *to))
        ),
        None => "none".to_owned(),
    };
    println!(
        "{name}: {faults} faults injected, {} critical sections, {} violations, \
         {overran} past their lease, {} waits ran out, {} releases found the lease gone \
         (see a_release_whose_reply_is_cut_still_reports_true), {} calls late only \
         because the process stalled, slowest call: {slowest}; errors: {:?}",
        tally.sections.len(),
        found.len(),
        tally.waits_out,
        tally.lost_at_release,
        tally.late.len() - late.len(),
        tally.errors
    );
    assert!(
        found.is_empty(),
        "{name}: mutual exclusion broken: {found:#?}"
    );
    let counted = tally.sections.iter().filter(|s| s.holder != DEAD).count();
    assert_eq!(counter, counted as u64, "{name}: lost updates");
    assert!(
        late.is_empty(),
        "{name}: calls past their timeouts: {late:#?}"
    );
    for class in tally.errors.keys() {
        let expected = ["timed out", "connection lost", "unreachable", LOADING]
            .iter()
            .any(|kind| class.ends_with(kind));
        assert!(expected, "{name}: unexpected error class {class}");
    }
}

/// The class a restarted server's `LOADING` reply gets (a known bug).
const LOADING: &str = "server error LOADING";

/// Waits until a restarted server has loaded its data.
fn wait_loaded(server: &RedisServer) {
    wait_until("the data to load", Duration::from_secs(5), || {
        answers_ping(server.port)
    });
}

/// Keeps keys across restarts, as a server that locks must: without
/// persistence a restart forgets every lease (docs/operations.md, "Safety
/// limits, stated plainly").
const PERSISTENT: [&str; 4] = ["--appendonly", "yes", "--appendfsync", "always"];

#[test]
fn a_restart_under_contended_load_keeps_mutual_exclusion() {
    let mut server = RedisServer::start_with(&PERSISTENT);
    let key = unique_key("restart");
    let mut a = patient_lock_at(&server.url(), &key, 5.0);
    assert!(a.acquire(Duration::ZERO).unwrap());
    server.kill();
    let result = within("refresh, server down", Duration::ZERO, || a.refresh(None));
    assert_eq!(failure("refresh", result), ConnectionFailure::Unreachable);
    server.restart();
    wait_loaded(&server);
    assert!(within("refresh after", Duration::ZERO, || a.refresh(None)).unwrap());
    assert!(a.release().unwrap());

    let run = Contention::start(&server.url(), &key, 4);
    let mut faults = 0;
    for _ in 0..3 {
        assert!(run.progress(2), "no progress before restart {faults}");
        server.restart();
        faults += 1;
    }
    assert!(run.progress(3), "no progress after the last restart");
    let (counter, tally) = run.finish();
    verdict("restarts", faults, counter, &tally);
}

/// A server that is loading its data after a restart answers every command
/// with `-LOADING`: the command did not run, and the server cannot be used
/// yet, so it is `LockError::Connection` (PHP `ConnectionException`, kind
/// unreachable) like an unavailable server (it was `LockError::Server`,
/// a `LockException`, until the fault tests found it).
#[test]
fn a_server_loading_its_dataset_is_a_connection_error() {
    let mut server = RedisServer::start_with(&[
        "--enable-debug-command",
        "yes",
        // 100 µs per key: 20,000 keys load in 2 s, answering -LOADING.
        "--key-load-delay",
        "100",
        "--loading-process-events-interval-bytes",
        "1024",
    ]);
    let _: () = server.cmd(&["DEBUG", "POPULATE", "20000"]);
    let _: () = server.cmd(&["SAVE"]);
    let key = unique_key("loading");
    let mut a = lock_at(&server.url(), &key, 5.0);
    server.restart();
    let result = within("acquire while loading", Duration::ZERO, || {
        a.acquire(Duration::ZERO)
    });
    println!("acquire while loading: {result:?}");
    let kind = failure("acquire", result);
    println!("class: {kind}");
    assert_eq!(kind, ConnectionFailure::Unreachable);
}

/// The `holder` of a dead holder's section (it counts nothing).
const DEAD: usize = usize::MAX;

/// A holder that dies: takes the lock (waiting up to 2 s) with a short
/// lease and never releases it. Its lease, from when it got the lock to
/// the earliest the lease can end, counts as a critical section.
fn dead_holder(url: &str, key: &[u8], tally: &Mutex<Tally>) -> bool {
    const TTL: f64 = 0.4;
    let mut options = options();
    options
        .set("auto_release", OptionValue::Bool(false))
        .unwrap();
    let mut lock = Lock::new(key.to_vec(), TTL, &[url.to_owned()], options).unwrap();
    let started = Instant::now();
    let got = matches!(lock.acquire(Duration::from_secs(2)), Ok(true));
    if got {
        let lease_end = started + secs(TTL);
        tally.lock().unwrap().sections.push(Section {
            enter: Instant::now(),
            // Redis counts the lease in whole ms from when it ran the SET.
            exit: lease_end - Duration::from_millis(10),
            lease_end,
            holder: DEAD,
        });
    }
    drop(lock); // dead: no release
    got
}

#[test]
fn mutual_exclusion_holds_under_scheduled_faults() {
    let extra = [&PERSISTENT[..], &["--enable-debug-command", "yes"]].concat();
    let mut server = RedisServer::start_with(&extra);
    let proxy = Proxy::start(&server);
    let key = unique_key("schedule");
    let url = proxy.url();
    let run = Contention::start(&url, &key, 4);
    let mut faults = 0;
    // Each fault, then a pause with none (the holders recover).
    let mut inject = |name: &str, fault: &mut dyn FnMut()| {
        let started = Instant::now();
        fault();
        proxy.pass();
        faults += 1;
        println!("fault {faults}: {name} ({:?})", started.elapsed());
        std::thread::sleep(Duration::from_millis(400));
    };
    let hold = |d: f64| std::thread::sleep(secs(d));
    assert!(run.progress(2), "no progress before the faults");
    for round in 0..2 {
        inject("replies 2x the read timeout late", &mut || {
            proxy.delay(secs(2.0 * READ_TIMEOUT));
            hold(0.8);
        });
        inject("replies 0.1 s late", &mut || {
            proxy.delay(Duration::from_millis(100));
            hold(0.5);
        });
        inject("3 replies cut midway", &mut || {
            for _ in 0..3 {
                proxy.cut_mid_reply();
                hold(0.1);
            }
        });
        inject("black hole", &mut || {
            proxy.black_hole();
            hold(0.8);
        });
        inject("every connection dropped", &mut || proxy.drop_all());
        inject("SIGSTOP", &mut || {
            server.pause();
            hold(0.8);
            server.resume();
        });
        inject("DEBUG SLEEP", &mut || {
            let _: () = server.cmd(&["DEBUG", "SLEEP", "0.8"]);
        });
        inject("CLIENT KILL TYPE normal", &mut || {
            let _: i64 = server.cmd(&["CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"]);
        });
        inject("CLIENT KILL ADDR", &mut || {
            kill_clients_by_addr(&server);
        });
        inject("restart", &mut || server.restart());
        inject("dead holder", &mut || {
            let got = dead_holder(&url, &key, &run.tally);
            println!("  round {round}: the dead holder got the lock: {got}");
        });
    }
    assert!(run.progress(3), "no progress after the faults");
    let (counter, tally) = run.finish();
    verdict("scheduled faults", faults, counter, &tally);
}

/// When the reply to a release is lost after the release ran (the
/// connection drops midway), the release is replayed on a new connection
/// and finds the key gone: the released token the first try left says it
/// was ours (without it, `withLock()` threw `LockLostException` for a section
/// that held the lock throughout).
#[test]
fn a_release_whose_reply_is_cut_still_reports_true() {
    let (server, proxy, key) = behind_proxy("cut-release");
    let mut a = patient_lock_at(&proxy.url(), &key, 5.0);
    assert!(a.acquire(Duration::ZERO).unwrap());
    proxy.cut_mid_reply();
    let released = within("release, reply cut", Duration::ZERO, || a.release());
    assert_eq!(proxy.cuts(), 1);
    assert!(!exists(&server, &key), "the release ran");
    assert!(released.unwrap(), "we held it and it is now free");
}
