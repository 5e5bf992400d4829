//! Departed waiters are bounded (issue 28): a waiter that leaves
//! (SIGKILL, exit, an exception) delays the waiters behind it by at most
//! 2 x retry_delay + 0.5 s, however many departed before it; nobody passes
//! a live waiter; no script call does more than a small constant amount of
//! work.
//!
//! Departed waiters are put at the head of the queue by hand: entries
//! scored by an arrival older than now, without the mark a live waiter
//! keeps (what a dead waiter leaves once its mark expired). At e6359a3 a
//! release looked at the first 8 entries only, found no live waiter among
//! them and freed the lock for anyone, so a process that took it back
//! again and again passed the live waiter behind them until the releases
//! had dropped the dead entries 8 at a time (1,000 dead: ~126 sections
//! passed it; 10,000: ~1,250).
//!
//! For a lock, a semaphore of 1 permit and read holds (writers taking the
//! lock back again and again, a reader waiting; see
//! [`without_departed_waiters_nobody_passes_a_reader`] for what fails
//! there with nobody departed), and 100,000 departed waiters under a 1 ms
//! SLOWLOG threshold (`bounded_scripts.rs` keeps a 100 ms backstop).

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{RedisServer, command_stats, unique_key, wait_until};
use redislock_core::testing::protocol::keys;
use redislock_core::testing::semaphore_calls::{SemKeys, now_us};
use redislock_core::{Lock, LockOptions, OptionValue, Semaphore};

/// The default `retry_delay`, in seconds.
const RETRY_DELAY: f64 = 0.5;
/// The longest a live waiter may wait for the departed ones ahead of it:
/// a mark's life (2 x retry_delay + 0.5 s) plus 1 s of slack.
const BOUND: Duration = Duration::from_millis((2.0 * RETRY_DELAY * 1000.0) as u64 + 500 + 1_000);
/// How long the re-taker holds each time.
const SECTION: Duration = Duration::from_millis(20);

/// What the waiters wait for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A lock: the re-taker and the waiter write.
    Lock,
    /// A semaphore of 1 permit.
    Permit,
    /// A lock that the re-taker writes and the waiter reads.
    Read,
}

impl Kind {
    /// The queue its waiters join.
    fn queue(self, name: &[u8]) -> Vec<u8> {
        match self {
            Kind::Lock | Kind::Read => keys::queue_key(name),
            Kind::Permit => SemKeys::new(name).queue,
        }
    }
}

/// One user of `name`: a lock object (not reentrant: a process of its
/// own) or a semaphore object.
enum User {
    Lock(Box<Lock>),
    Permit(Box<Semaphore>),
}

impl User {
    fn new(kind: Kind, url: &str, name: &[u8]) -> Self {
        let mut options = LockOptions::default();
        options.set("reentrant", OptionValue::Bool(false)).unwrap();
        let servers = [url.to_owned()];
        match kind {
            Kind::Lock | Kind::Read => Self::Lock(Box::new(
                Lock::new(name.to_vec(), 10.0, &servers, options).unwrap(),
            )),
            Kind::Permit => Self::Permit(Box::new(
                Semaphore::new(name.to_vec(), 1, 10.0, &servers, options).unwrap(),
            )),
        }
    }

    /// Takes it, waiting up to `wait` (`read`: a read hold).
    fn acquire(&mut self, wait: Duration, read: bool) -> bool {
        match self {
            Self::Lock(l) if read => l.acquire_read(wait).unwrap(),
            Self::Lock(l) => l.acquire(wait).unwrap(),
            Self::Permit(s) => s.acquire(wait).unwrap(),
        }
    }

    fn release(&mut self) -> bool {
        match self {
            Self::Lock(l) => l.release().unwrap(),
            Self::Permit(s) => s.release().unwrap(),
        }
    }
}

/// Puts `dead` departed waiters at the head of `queue`: arrivals a minute
/// ago (µs since the Unix epoch), no marks.
fn bury(server: &RedisServer, queue: &[u8], dead: usize) {
    let mut con = server.client();
    let first = now_us() - 60_000_000;
    for batch in (0..dead).collect::<Vec<_>>().chunks(10_000) {
        let mut zadd = redis::cmd("ZADD");
        zadd.arg(queue);
        for &i in batch {
            zadd.arg(first + i as u64).arg(format!("dead-{i}"));
        }
        let _: i64 = zadd.query(&mut con).unwrap();
    }
    let _: i64 = redis::cmd("PEXPIRE")
        .arg(queue)
        .arg(60_000)
        .query(&mut con)
        .unwrap();
}

/// Other clients of the server: SET and GET on keys of their own, until
/// dropped.
struct Traffic {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<u64>>,
}

impl Traffic {
    fn start(server: &RedisServer) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let mut con = server.client();
        let s = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut n = 0u64;
            while !s.load(Ordering::Relaxed) {
                let key = format!("traffic:{}", n % 100);
                let _: () = redis::cmd("SET").arg(&key).arg(n).query(&mut con).unwrap();
                let _: Option<u64> = redis::cmd("GET").arg(&key).query(&mut con).unwrap();
                n += 1;
                std::thread::sleep(Duration::from_millis(1));
            }
            n
        });
        Self {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Traffic {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// `dead` departed waiters at the head of `kind`'s queue; a re-taker
/// takes it (waiting up to 5 s), holds it [`SECTION`], lets it go and
/// takes it again, while another client keeps the server busy; one live
/// waiter W calls `acquire(10)` while the re-taker holds it. W must enter
/// within [`BOUND`], and the re-taker may complete at most the section it
/// was in when W called.
fn nobody_passes_a_live_waiter(kind: Kind, dead: usize) {
    let server = RedisServer::start();
    let name = unique_key(&format!("dead-{kind:?}-{dead}"));
    bury(&server, &kind.queue(&name), dead);
    let _traffic = Traffic::start(&server);
    let url = server.url();
    let stop = Arc::new(AtomicBool::new(false));
    let holding = Arc::new(AtomicBool::new(false));
    let sections = Arc::new(Mutex::new(Vec::<(Instant, Instant)>::new()));
    let retaker = {
        let (url, name) = (url.clone(), name.clone());
        let (stop, holding, sections) = (stop.clone(), holding.clone(), sections.clone());
        std::thread::spawn(move || {
            let mut user = User::new(kind, &url, &name);
            while !stop.load(Ordering::Relaxed) {
                if !user.acquire(Duration::from_secs(5), false) {
                    continue;
                }
                let entered = Instant::now();
                holding.store(true, Ordering::Release);
                std::thread::sleep(SECTION);
                holding.store(false, Ordering::Release);
                let left = Instant::now();
                assert!(user.release(), "the re-taker's release");
                sections.lock().unwrap().push((entered, left));
            }
        })
    };
    wait_until("the re-taker holds it", Duration::from_secs(5), || {
        holding.load(Ordering::Acquire)
    });
    let (called, got, entered) = {
        let mut w = User::new(kind, &url, &name);
        let called = Instant::now();
        let got = w.acquire(Duration::from_secs(10), kind == Kind::Read);
        let entered = Instant::now();
        if got {
            assert!(w.release(), "W's release");
        }
        (called, got, entered)
    };
    stop.store(true, Ordering::Relaxed);
    retaker.join().unwrap();
    let sections = sections.lock().unwrap();
    let passed = sections
        .iter()
        .filter(|(enter, left)| *left > called && *enter < entered)
        .count();
    let waited = entered - called;
    println!(
        "{kind:?}, {dead} departed waiters ahead: W got it {got} after {waited:?}; the \
         re-taker completed {passed} sections meanwhile ({} in all)",
        sections.len()
    );
    assert!(
        got,
        "W never got it in 10 s (the re-taker passed it {passed} times)"
    );
    assert!(
        waited <= BOUND,
        "W waited {waited:?} behind {dead} departed waiters (at most {BOUND:?})"
    );
    assert!(
        passed <= 1,
        "the re-taker completed {passed} sections while W waited (at most the one it was in)"
    );
}

/// The controls (pass on e6359a3): with nobody departed, the release
/// hands over to the live waiter at once.
#[test]
fn without_departed_waiters_nobody_passes_a_lock_waiter() {
    nobody_passes_a_live_waiter(Kind::Lock, 0);
}

#[test]
fn without_departed_waiters_nobody_passes_a_permit_waiter() {
    nobody_passes_a_live_waiter(Kind::Permit, 0);
}

/// Not a control: a writer's release wakes a waiting reader rather than
/// handing it the lock (docs/protocol.md, "Read holds"), and a writer that
/// takes the free lock before the woken reader's step goes first. At
/// e6359a3 the re-taker passed the reader 2 or 3 times in 2 runs of 3, with
/// nobody departed: the reader tests here fail for that too, until readers
/// are not passed by writers that come after them.
#[test]
fn without_departed_waiters_nobody_passes_a_reader() {
    nobody_passes_a_live_waiter(Kind::Read, 0);
}

#[test]
fn a_thousand_departed_waiters_delay_a_lock_waiter_by_a_mark_life() {
    nobody_passes_a_live_waiter(Kind::Lock, 1_000);
}

#[test]
fn ten_thousand_departed_waiters_delay_a_lock_waiter_by_a_mark_life() {
    nobody_passes_a_live_waiter(Kind::Lock, 10_000);
}

#[test]
fn a_thousand_departed_waiters_delay_a_permit_waiter_by_a_mark_life() {
    nobody_passes_a_live_waiter(Kind::Permit, 1_000);
}

#[test]
fn ten_thousand_departed_waiters_delay_a_permit_waiter_by_a_mark_life() {
    nobody_passes_a_live_waiter(Kind::Permit, 10_000);
}

#[test]
fn a_thousand_departed_waiters_delay_a_reader_by_a_mark_life() {
    nobody_passes_a_live_waiter(Kind::Read, 1_000);
}

#[test]
fn ten_thousand_departed_waiters_delay_a_reader_by_a_mark_life() {
    nobody_passes_a_live_waiter(Kind::Read, 10_000);
}

/// The bound on a call, in microseconds (1 ms; `bounded_scripts.rs`
/// keeps a 100 ms backstop).
const SLOWLOG_US: &str = "1000";

/// A call logged over [`SLOWLOG_US`] on a machine busy with the rest of
/// the suite is the scheduler, not the script: a script call of 0.1 ms
/// was seen logged at 1-3 ms beside a second copy of the suite (24 of
/// 1,570 calls once). So a few of the calls (1 in 40) may be logged; their
/// scripts' average must stay far below the bound, and none may reach the
/// backstop (100 ms: a ZREM of 64 entries was logged at 23 ms there; the
/// unbounded script of an early version took 460 ms). When the scheduler
/// also shows on calls that do no work to speak of (a `SET`, the test's
/// own `ZREM`s: 63 logged of 1,569 once, a `SET` among them at 1.5 ms),
/// each such call allows [`NOISE_ALLOWANCE`] more: on a quiet machine
/// none is logged and the 1-in-40 allowance stands alone.
const BACKSTOP_US: i64 = 100_000;
/// Script calls allowed over [`SLOWLOG_US`] per logged call that is not a
/// script's.
const NOISE_ALLOWANCE: u64 = 4;
/// The average time of a script call accepted, in microseconds.
const AVERAGE_US: f64 = 300.0;

/// The 100,000-entry tests run one at a time: each loads its server (and
/// the machine) while it buries them.
static HEAVY: Mutex<()> = Mutex::new(());

/// 100,000 departed waiters at the head of `kind`'s queue: a free take and
/// its release, then a take, a blocked acquire behind it and the release
/// that lets it in: no command in SLOWLOG over 1 ms.
fn no_call_is_slow(kind: Kind) {
    let _one_at_a_time = HEAVY.lock().unwrap_or_else(|p| p.into_inner());
    let server = RedisServer::start();
    let name = unique_key(&format!("dead-slowlog-{kind:?}"));
    let queue = kind.queue(&name);
    bury(&server, &queue, 100_000);
    let _: () = server.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", SLOWLOG_US]);
    let _: () = server.cmd(&["SLOWLOG", "RESET"]);
    let _: () = server.cmd(&["CONFIG", "RESETSTAT"]);
    let url = server.url();
    let mut holder = User::new(kind, &url, &name);
    assert!(holder.acquire(Duration::ZERO, false), "a free take");
    assert!(holder.release());
    assert!(holder.acquire(Duration::ZERO, false), "a second take");
    let waiter = {
        let (url, name) = (url.clone(), name.clone());
        std::thread::spawn(move || {
            let mut w = User::new(kind, &url, &name);
            let got = w.acquire(Duration::from_secs(5), kind == Kind::Read);
            let at = Instant::now();
            if got {
                assert!(w.release());
            }
            (got, at)
        })
    };
    // W arrives last: the newest entry of the queue.
    let mut con = server.client();
    wait_until("W queues", Duration::from_secs(5), || {
        let last: Vec<String> = redis::cmd("ZRANGE")
            .arg(&queue)
            .arg(-1)
            .arg(-1)
            .query(&mut con)
            .unwrap();
        last.first().is_some_and(|t| !t.starts_with("dead-"))
    });
    let released = Instant::now();
    assert!(holder.release());
    let (got, at) = waiter.join().unwrap();
    assert!(got, "the blocked acquire got it");
    let slow: Vec<(i64, i64, i64, Vec<Vec<u8>>)> = redis::cmd("SLOWLOG")
        .arg("GET")
        .arg(-1)
        .query(&mut con)
        .map(|entries: Vec<redis::Value>| {
            entries
                .into_iter()
                .filter_map(|e| match e {
                    redis::Value::Array(f) if f.len() >= 4 => Some((
                        redis::from_redis_value(f[0].clone()).ok()?,
                        redis::from_redis_value(f[1].clone()).ok()?,
                        redis::from_redis_value(f[2].clone()).ok()?,
                        redis::from_redis_value(f[3].clone()).ok()?,
                    )),
                    _ => None,
                })
                .collect()
        })
        .unwrap();
    let (calls, average_us) = command_stats(&server, "evalsha");
    let longest = slow.iter().map(|e| e.2).max().unwrap_or(0);
    println!(
        "{kind:?}, 100,000 departed waiters: the blocked acquire got it {:?} after the \
         release; {calls} script calls, {average_us} us each on average; {} logged over \
         {SLOWLOG_US} us (longest {longest} us)",
        at - released,
        slow.len()
    );
    assert!(
        calls >= 100_000 / 64,
        "the departed waiters were not all dropped: {calls} calls"
    );
    assert!(
        average_us <= AVERAGE_US,
        "script calls took {average_us} us on average"
    );
    let is_script = |e: &(i64, i64, i64, Vec<Vec<u8>>)| {
        e.3.first()
            .is_some_and(|c| c.eq_ignore_ascii_case(b"EVALSHA") || c.eq_ignore_ascii_case(b"EVAL"))
    };
    let scripts = slow.iter().filter(|e| is_script(e)).count() as u64;
    let noise = slow.len() as u64 - scripts;
    assert!(
        longest < BACKSTOP_US && scripts <= (calls / 40).max(2) + NOISE_ALLOWANCE * noise,
        "{scripts} script calls over {SLOWLOG_US} us ({noise} other calls): {slow:?}"
    );
    assert!(
        at - released <= BOUND,
        "the blocked acquire got it {:?} after the release (at most {BOUND:?})",
        at - released
    );
}

#[test]
fn a_hundred_thousand_departed_lock_waiters_slow_no_call() {
    no_call_is_slow(Kind::Lock);
}

#[test]
fn a_hundred_thousand_departed_permit_waiters_slow_no_call() {
    no_call_is_slow(Kind::Permit);
}

#[test]
fn a_hundred_thousand_departed_waiters_slow_no_read_call() {
    no_call_is_slow(Kind::Read);
}
