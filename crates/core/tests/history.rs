//! The history checker: worker processes take one lock (or one semaphore,
//! or one lock's read and write holds), hold it and let it go, while the
//! controller (this process) pauses them (SIGSTOP/SIGCONT), kills them
//! (SIGKILL, then starts a new one), cuts replies in flight, holds back
//! chosen replies, refuses renewals and releases for a while, drops every
//! connection while a fresh worker is in its first wait (a fault proxy in
//! front of Redis), puts batches of departed waiters at the head of the
//! queue, and lets leases run out (holds longer than the lease, pauses
//! longer than the lease); workers also fork children that take it
//! themselves. Every worker records what it was told, on the machine's
//! monotonic clock, which every process shares:
//!
//! - a grant: `acquire()` (`acquireRead()`, a promotion, a demotion)
//!   returned true, with the time before the call and the time after it
//!   returned, the fencing token and the ttl: the hold became ours at some
//!   moment between the two;
//! - a check: `is_acquired()`, `refresh()`, `remaining_ttl()` or
//!   `release()`, with the times before and after the call and what it
//!   said; one that said the hold was ours is an assertion: it was ours at
//!   some moment during the call, so (a hold being one piece) it was ours
//!   from the grant's return until then;
//! - an intent, logged before a call that changes the lease or ends the
//!   hold (`refresh($ttl)`, `release()`, a promotion or demotion), so that
//!   a worker killed during the call leaves it on record.
//!
//! A grant's belief interval runs from its return to its last assertion
//! (empty without one). Measured this way, every belief interval lies
//! inside the hold's real ownership whatever pauses hit the worker, if the
//! lock tells the truth (**truth**). The return itself counts as an
//! assertion unless the process was paused (or the machine stalled)
//! during the call: an acquire says true only on a reply read within the
//! lease it proves. A write grant's key is also read on a direct
//! connection just after its return: it must not name another holder
//! (truth, with the same excuse). And **the ttl is the pause
//! tolerance**: Redis keeps a hold for its whole ttl from the call that
//! won it (less [`SLACK`]), or from a `refresh($ttl)` sent later if that is
//! shorter, until the holder's first call that ends it; so within that
//! *kept interval* no check may say the hold is not ours (**lease kept**;
//! **pause tolerance** when the controller paused the holder in between,
//! choosing pauses that end within the kept interval where it can), and
//! the kept intervals must obey the scenario's rules as the belief
//! intervals do (**tolerance**: no other grant meanwhile). Further:
//!
//! - **renewal**: an auto-renewed hold of the long ttl is never found lost
//!   if, once its renewal was due (2/3 of the ttl before), there was a
//!   stretch of 0.4 s in which nothing kept its renewals from Redis (its
//!   process paused, renewals refused, replies held back, requests held
//!   up): one without an answer is sent again within 0.1 s. A third of
//!   the long auto-renewed holds keep their whole ttl for 3.2-4.5 s, and
//!   the controller refuses a lock's renewals (by its token) from 0.8 s to
//!   2.1 s after its grant: two renewals fail, and each must be sent again
//!   soon;
//! - **pending release**: a write hold's release that got no answer stays
//!   pending and is sent again: a direct connection watches the key, which
//!   must not hold the token once the process has run 1 s (its pauses not
//!   counted) after the server answers again (the refusal over), + 0.3 s;
//! - **first wait**: a fresh worker's first acquire (a long wait) during
//!   which the controller dropped every connection (at a random moment of
//!   its first 0.3 s: during the first try or blocked in the queue; not in
//!   its last 100 ms, which leave no time to send a step again)
//!   returns no error, unless requests were held up or refused or the
//!   worker paused meanwhile.
//!
//! The controller also puts batches of [`DEPARTED`] departed waiters
//! (queue entries an hour old, without a mark) at the head of every queue
//! now and then; every check above runs with them there.
//!
//! Three shapes of the third review (issue 36) are made on purpose, in the
//! `lock` history: a handed waiter's top-up whose reply comes after the
//! lease it set (half the workers wait with a `retry_delay` over a quarter
//! of the ttl, so their wins are topped up; the reply of such a top-up is
//! held back 0.32-0.45 s while another waits); a fixed owner's release
//! held up in flight past its read timeout (half the workers hold under
//! an `owner` of their own; the release runs 1.2-1.6 s late, resent
//! meanwhile, while the owner holds the lock again); and a token restored
//! with `auto_renew` after its hold ended (a third of the answered
//! releases of `lock` and `long`), asked once whether it is ours.
//!
//! Both waiting modes run side by side (issue 38): half the workers of
//! every scenario barge first (option `starve_after`, 1 ms or 50 ms: a
//! writer's release neither hands it the lock nor wakes it; a reader or a
//! semaphore's waiter is not queued at all until it starves), the others
//! are handed the lock (their permits, their read hold) in arrival order
//! from their first wait.
//!
//! Four scenarios, run side by side, each with its own Redis, proxy and
//! workers; workers of the long ttl ([`LONG_TTL`], `retry_delay`
//! [`LONG_RETRY_DELAY`]: a ttl well above a hand-over mark's life,
//! [`LONG_MARK_LIFE`]) hold for up to 4 s, are paused for up to 3 s
//! (mostly while they hold, for less than what is left of their kept
//! interval), and when auto-renewed call `refresh()` with a shorter ttl
//! now and then, and often just after their first renewal was sent, whose
//! reply the proxy is holding back when it can (it holds back the reply of
//! the next renewal of a whole long ttl, for 0.15-0.95 s, again and
//! again):
//!
//! - `lock`: 5 workers on one fenced lock, ttl [`TTL`]. No two belief
//!   intervals of different grants overlap, no grant's window (call to
//!   return) lies inside another grant's belief interval, and fencing
//!   tokens grow strictly between grants whose order is certain (one
//!   returned before the other was called); a fenced grant without a token
//!   is a violation too.
//! - `long`: the same with 8 workers of the long ttl, on two locks (four
//!   each: long holds leave one lock few grants).
//! - `semaphore`: 7 workers on one semaphore of [`PERMITS`] permits (2 of
//!   them of the long ttl). At no instant do more than [`PERMITS`] belief
//!   intervals overlap (a sweep over them), and no grant without an
//!   assertion was made while [`PERMITS`] others believed they held one
//!   throughout its call.
//! - `rw`: 6 workers on one lock (1 of them of the long ttl), taking it to
//!   write (`acquire()`) or to read (`acquire_read()`), promoting read
//!   holds to write holds and demoting write holds to read holds now and
//!   then. A write belief overlaps no other belief (read or write); read
//!   beliefs may overlap each other; no grant without an assertion was
//!   made while a belief it excludes lasted throughout its call.
//!
//! `cargo test --test history` runs a bounded history (HISTORY_SECONDS, 20
//! by default, every scenario at once; HISTORY_SCENARIOS=lock,long,
//! semaphore,rw picks some); `bash scripts/history.sh` a long one. A
//! scenario with a violation keeps its workers' logs and the controller's
//! (`controller.log`: pauses, drops, refusals, hold-ups, replies held
//! back); HISTORY_KEEP_LOGS keeps them always. A scenario whose run met
//! too few grants or faults to mean anything ([`Report::too_short`]) is
//! run once more; a violation in any run fails. The same binary is the
//! worker (HISTORY_WORKER set).

mod common;

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::proxy::Proxy;
use common::{RedisServer, fresh_dir, unique_key};
use redislock_core::protocol::{keys, scripts};
use redislock_core::semaphore_calls::SemKeys;
use redislock_core::{Lock, LockOptions, OptionValue, Result, Semaphore};

/// The lease of a short hold (short, so that faults outlast it).
const TTL: f64 = 0.3;
/// Its workers' `retry_delay`.
const RETRY_DELAY: f64 = 0.05;
/// The `retry_delay` of half the workers of the short lock: over a quarter
/// of [`TTL`], so that a hold handed to one of them after a long block is
/// topped up (a step sent behind a shorter block never is).
const SLOW_RETRY_DELAY: f64 = 0.2;
/// The lease of a fixed owner's hold taken just after its release got no
/// answer: that release, run late, meets it within its kept interval.
const AFTER_LOST_RELEASE_TTL: f64 = 1.5;
/// How every fixed owner of a history worker begins.
const OWNER_PREFIX: &str = "owner-";
/// The lease of a long hold: well above a hand-over mark's life.
const LONG_TTL: f64 = 3.0;
/// Its workers' `retry_delay`.
const LONG_RETRY_DELAY: f64 = 0.1;
/// How long a long-ttl waiter's mark lives after its last step (`2 x
/// retry_delay + 0.5 s`): what a hand-over gave before the claim extended
/// it to the whole ttl.
const LONG_MARK_LIFE: Duration = Duration::from_millis(700);
/// Taken off every lease the checker counts on: Redis's clock and ours.
const SLACK: u64 = 50 * MS;
/// The semaphore scenario's permits (fewer than its workers).
const PERMITS: usize = 3;
/// Departed waiters put at the head of the queue at a time.
const DEPARTED: usize = 1_000;
/// A millisecond in ns.
const MS: u64 = 1_000_000;

/// What the workers of one history take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scenario {
    /// One fenced lock.
    Lock,
    /// One fenced lock, every worker of the long ttl.
    Long,
    /// One semaphore of [`PERMITS`] permits.
    Semaphore,
    /// One lock's read and write holds.
    ReadWrite,
}

impl Scenario {
    const ALL: [Scenario; 4] = [
        Scenario::Lock,
        Scenario::Long,
        Scenario::Semaphore,
        Scenario::ReadWrite,
    ];

    fn name(self) -> &'static str {
        match self {
            Scenario::Lock => "lock",
            Scenario::Long => "long",
            Scenario::Semaphore => "semaphore",
            Scenario::ReadWrite => "rw",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Worker processes alive at once.
    fn workers(self) -> usize {
        match self {
            Scenario::Lock => 5,
            Scenario::Long => 8,
            Scenario::Semaphore => 7,
            Scenario::ReadWrite => 6,
        }
    }

    /// How many locks its workers share out (slot `i` takes the `i %
    /// keys`-th): long holds leave one lock few grants.
    fn keys(self) -> usize {
        match self {
            Scenario::Long => 2,
            _ => 1,
        }
    }

    /// Whether the worker in slot `i` has the long ttl.
    fn long_slot(self, i: usize) -> bool {
        match self {
            Scenario::Lock => false,
            Scenario::Long => true,
            Scenario::Semaphore => i % 3 == 1,
            // One: long read holds keep writers out.
            Scenario::ReadWrite => i == 1,
        }
    }

    /// Whether it has workers of the long ttl.
    fn has_long(self) -> bool {
        self != Scenario::Lock
    }

    /// One lock's exclusive holds.
    fn exclusive(self) -> bool {
        matches!(self, Scenario::Lock | Scenario::Long)
    }

    /// Its waiters' queue.
    fn queue(self, key: &[u8]) -> Vec<u8> {
        match self {
            Scenario::Semaphore => SemKeys::new(key).queue,
            _ => keys::queue_key(key),
        }
    }

    /// What the requests of a long hold's renewal (or `refresh()` of the
    /// whole ttl) contain: its script's SHA, and the ttl in ms.
    fn renewal_patterns(self) -> Vec<Vec<Vec<u8>>> {
        let ms = format!("$4\r\n{}\r\n", (LONG_TTL * 1000.0) as u64).into_bytes();
        let of = |sha: &str| vec![sha.as_bytes().to_vec(), ms.clone()];
        match self {
            Scenario::Lock => Vec::new(),
            Scenario::Long => vec![of(scripts::REFRESH.hash())],
            Scenario::Semaphore => vec![of(scripts::SEM_REFRESH.hash())],
            Scenario::ReadWrite => vec![
                of(scripts::REFRESH.hash()),
                of(scripts::READ_REFRESH.hash()),
            ],
        }
    }
}

/// What the requests of a short lock hold's top-up (the extension of a
/// win whose wait took a good part of the lease) contain: its script's SHA
/// and the short ttl in ms. A short hold's renewal or `refresh()` of its
/// whole ttl looks the same.
fn short_top_up() -> Vec<Vec<u8>> {
    let ms = format!("$3\r\n{}\r\n", (TTL * 1000.0) as u64);
    vec![scripts::REFRESH.hash().as_bytes().to_vec(), ms.into_bytes()]
}

/// The scripts of renewals, refreshes and releases (and a lock's release
/// sent again, `abandon.lua`): refused for a while.
fn extend_and_release_scripts() -> Vec<Vec<u8>> {
    [
        &scripts::REFRESH,
        &scripts::SEM_REFRESH,
        &scripts::READ_REFRESH,
        &scripts::RELEASE,
        &scripts::SEM_RELEASE,
        &scripts::READ_RELEASE,
        &scripts::ABANDON,
    ]
    .iter()
    .map(|s| s.hash().as_bytes().to_vec())
    .collect()
}

/// The length of a history run in seconds (`HISTORY_SECONDS`, default 20).
fn seconds() -> u64 {
    std::env::var("HISTORY_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20)
}

/// A bounded run (a minute or less, as the test command's): its long holds
/// are all auto-renewed and each takes one of the planned faults, so that
/// a few seconds still meet the aimed events (a shortening with its
/// renewal's reply held back, a kept hold with its renewals refused) that
/// longer runs meet by the dozen.
fn bounded() -> bool {
    seconds() <= 60
}

fn main() {
    if let Ok(spec) = std::env::var("HISTORY_WORKER") {
        worker(&spec);
        return;
    }
    let seconds = seconds();
    let scenarios: Vec<Scenario> = match std::env::var("HISTORY_SCENARIOS") {
        Ok(list) => list
            .split(',')
            .map(|name| {
                Scenario::parse(name.trim())
                    .unwrap_or_else(|| panic!("unknown history scenario {name:?}"))
            })
            .collect(),
        Err(_) => Scenario::ALL.to_vec(),
    };
    let length = Duration::from_secs(seconds);
    // Side by side: the bounded run takes as long as one scenario.
    let reports: Vec<Report> = std::thread::scope(|scope| {
        let runs: Vec<_> = scenarios
            .iter()
            .map(|&scenario| scope.spawn(move || controller(scenario, length)))
            .collect();
        runs.into_iter().map(|run| run.join().unwrap()).collect()
    });
    let mut failed = false;
    for mut report in reports {
        // A run too short to mean anything (its faults or grants fell short
        // of the scenario's aims: one rw run saw 3 writes to 69 reads) is
        // run again once, alone; a violation fails at once, in any run.
        for again in [true, false] {
            println!("{report}");
            let name = report.scenario.name();
            for v in report.violations.iter().take(20) {
                eprintln!("violation ({name}): {v}");
            }
            if report.violations.len() > 20 {
                eprintln!(
                    "violation ({name}): ... and {} more",
                    report.violations.len() - 20
                );
            }
            if !report.violations.is_empty() {
                failed = true;
            } else if let Some(why) = report.too_short() {
                eprintln!("history ({name}) too short to mean anything: {why}");
                if again {
                    eprintln!("history ({name}) runs again");
                    report = controller(report.scenario, length);
                    continue;
                }
                failed = true;
            }
            break;
        }
    }
    if failed {
        std::process::exit(1);
    }
}

/// Nanoseconds on CLOCK_MONOTONIC, the same clock in every process.
fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes the current time into `ts`.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A small random number below `n` (from the OS).
fn below(n: u64) -> u64 {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).expect("randomness");
    u64::from_le_bytes(b) % n.max(1)
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

// ---------------------------------------------------------------- worker

/// What a worker process (and its forked children) needs to know.
struct Worker {
    url: String,
    /// The server itself, not the proxy (to watch a key).
    direct: String,
    key: String,
    renew: bool,
    /// Of the long ttl.
    long: bool,
    /// Short, with the [`SLOW_RETRY_DELAY`].
    slow: bool,
    /// A fixed `owner` for every write hold of this process (a Laravel
    /// lock's), its own: two processes never share one.
    owner: Option<String>,
    /// Option `starve_after` of its holds, for half the workers of every
    /// scenario (1 ms or 50 ms): they barge first, and are handed the
    /// lock (their permits) in arrival order only once they have waited
    /// that long.
    starve_after: Option<f64>,
    /// Its last release got no answer (it may run late): the next hold,
    /// of the same owner, is taken at once (waiting up to 0.6 s), with a
    /// lease of [`AFTER_LOST_RELEASE_TTL`], and kept 1.2 s.
    after_lost_release: Cell<bool>,
    /// When to stop (ns).
    deadline: u64,
    /// Its first acquire is still to come.
    first: Cell<bool>,
    /// A forked child (one cycle, no renewal, no first wait).
    child: Cell<bool>,
}

/// One worker process: takes the lock (semaphore, read or write hold)
/// again and again until its deadline, appending what it was told to its
/// log. `spec` is `scenario|url|direct url|key|log|deadline ns|auto_renew
/// 0/1|long 0/1`.
fn worker(spec: &str) {
    let parts: Vec<&str> = spec.split('|').collect();
    let [scenario, url, direct, key, log, deadline, renew, long] = parts[..] else {
        panic!("bad worker spec {spec}");
    };
    let scenario = Scenario::parse(scenario).expect("a scenario");
    let w = Worker {
        url: url.to_owned(),
        direct: direct.to_owned(),
        key: key.to_owned(),
        renew: renew == "1",
        long: long == "1",
        // Half the workers of the short lock (a lock's top-up is the one
        // engine's, whatever the primitive).
        slow: scenario == Scenario::Lock && below(2) == 0,
        // Half the workers of one short lock hold under a fixed owner: a
        // release of theirs held up in flight must never free their next
        // hold.
        owner: (scenario == Scenario::Lock && below(2) == 0)
            .then(|| format!("{OWNER_PREFIX}{}-{:x}", std::process::id(), below(1 << 32))),
        starve_after: (below(2) == 0).then(|| if below(2) == 0 { 0.001 } else { 0.05 }),
        after_lost_release: Cell::new(false),
        deadline: deadline.parse().unwrap(),
        first: Cell::new(true),
        child: Cell::new(false),
    };
    let mut log = Log::open(Path::new(log));
    if let Some(owner) = &w.owner {
        log.line(&format!("I {} owner {owner}", std::process::id()));
    }
    match scenario {
        Scenario::Lock | Scenario::Long => {
            // Half the workers fenced (a fenced waiter claims a hand-over in
            // a step), half not (an unfenced one enters on the wake-up).
            let fenced = below(2) == 0;
            let mut lock = w.lock(fenced, w.renew);
            while now_ns() < w.deadline {
                if w.after_lost_release.get() {
                    // Of a lease that lasts until the release runs.
                    cycle(&w, &mut w.lock(fenced, false), &mut log, fenced);
                    continue;
                }
                if below(10) == 0 && !w.first.get() {
                    fork_one_cycle(&w, &mut log);
                    continue;
                }
                cycle(&w, &mut lock, &mut log, fenced);
            }
        }
        Scenario::Semaphore => {
            let mut sem = w.semaphore(w.renew);
            while now_ns() < w.deadline {
                semaphore_cycle(&w, &mut sem, &mut log);
            }
        }
        Scenario::ReadWrite => {
            let mut lock = w.lock(false, w.renew);
            while now_ns() < w.deadline {
                rw_cycle(&w, &mut lock, &mut log);
            }
        }
    }
}

fn options(set: &[(&str, OptionValue)], retry_delay: f64, read_timeout: f64) -> LockOptions {
    let mut options = LockOptions::default();
    for (name, value) in set.iter().cloned().chain([
        ("retry_delay", OptionValue::Number(retry_delay)),
        ("read_timeout", OptionValue::Number(read_timeout)),
        ("connect_timeout", OptionValue::Number(0.3)),
    ]) {
        options.set(name, value).unwrap();
    }
    options
}

/// One step of a hold ([`Worker::hold`]).
enum Step {
    /// Check the hold as the scenario does, in these ways.
    Check(Checks),
    /// `refresh()` it with this shorter ttl (ms), now.
    Shorten(u64),
    /// A shortening is planned at this time (ns), or (false) the hold
    /// started then and keeps its whole ttl: log it ([`Log::plan`]).
    Plan(u64, bool),
}

/// The ways a holder checks its hold now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Checks {
    /// `is_acquired()`, `remaining_ttl()`, `refresh()` with the whole ttl
    /// and (auto-renewed long holds) with a shorter one.
    All,
    /// The same without shortening the lease.
    Whole,
    /// `is_acquired()` only (after a planned shortening: nothing changes
    /// the lease, so a late reply is not covered by a later refresh, and
    /// an auto-renewed hold's belief is asked, not Redis).
    Passive,
}

impl Worker {
    fn ttl(&self) -> f64 {
        match (self.long, self.after_lost_release.get()) {
            (true, _) => LONG_TTL,
            (false, true) => AFTER_LOST_RELEASE_TTL,
            (false, false) => TTL,
        }
    }

    fn ttl_ms(&self) -> u64 {
        (self.ttl() * 1000.0) as u64
    }

    fn retry_delay(&self) -> f64 {
        match (self.long, self.slow) {
            (true, _) => LONG_RETRY_DELAY,
            (false, true) => SLOW_RETRY_DELAY,
            (false, false) => RETRY_DELAY,
        }
    }

    /// Its `read_timeout`: 0.5 s, a second for the long ttl (replies held
    /// up for up to 0.3 s do not end its waits, and a short hold's top-up
    /// whose reply is held back past its ttl is answered, late).
    fn read_timeout(&self) -> f64 {
        if self.long { 1.0 } else { 0.5 }
    }

    /// Auto-renewed holds (a forked child renews nothing).
    fn renews(&self) -> bool {
        self.renew && !self.child.get()
    }

    /// Time left until the deadline.
    fn left(&self) -> Duration {
        Duration::from_nanos(self.deadline.saturating_sub(now_ns()))
    }

    /// How long an acquire may wait.
    fn some_wait(&self) -> Duration {
        let choices = match self.long {
            false => [0, 50, 300, 1000],
            true => [0, 300, 1000, 3000],
        };
        ms(choices[below(4) as usize]).min(self.left())
    }

    /// How long a hold lasts. Short: mostly short, one in four up to 1.5
    /// leases, which outlives an unrenewed lease. Long: 40% short, the
    /// rest up to 4 s, much of it past a hand-over mark's life.
    fn some_hold(&self) -> Duration {
        // A fixed owner's hold after a release without an answer lasts
        // until that release, run late, has met it.
        if self.after_lost_release.get() {
            return ms(1200).min(self.left());
        }
        let hold = match (self.long, below(10)) {
            (false, 0..=1) => below(450),
            (false, _) => below(40),
            (true, 0..=3) => below(300),
            (true, 4..=7) => 300 + below(1200),
            (true, _) => 1500 + below(2500),
        };
        ms(hold).min(self.left())
    }

    /// A nap between two checks of a hold.
    fn nap(&self) -> Duration {
        let most = match (self.long, self.after_lost_release.get()) {
            (true, _) => 120,
            (false, true) => 10,
            (false, false) => 25,
        };
        ms(below(most))
    }

    /// A lock object of its own (read holds refuse fencing), under the
    /// worker's owner if it has one (a forked child: never its parent's).
    fn lock(&self, fencing: bool, renew: bool) -> Lock {
        let owner = self.owner.as_ref().filter(|_| !self.child.get());
        let owner = owner.map(|o| ("owner", OptionValue::Text(o.as_bytes().to_vec())));
        let barging = self
            .starve_after
            .map(|s| ("starve_after", OptionValue::Number(s)));
        let options = options(
            &[
                ("fencing", OptionValue::Bool(fencing)),
                ("reentrant", OptionValue::Bool(false)),
                ("auto_renew", OptionValue::Bool(renew)),
            ]
            .into_iter()
            .chain(owner)
            .chain(barging)
            .collect::<Vec<_>>(),
            self.retry_delay(),
            self.read_timeout(),
        );
        Lock::new(
            self.key.as_bytes().to_vec(),
            self.ttl(),
            std::slice::from_ref(&self.url),
            options,
        )
        .unwrap()
    }

    fn semaphore(&self, renew: bool) -> Semaphore {
        let barging = self
            .starve_after
            .map(|s| ("starve_after", OptionValue::Number(s)));
        let options = options(
            &[("auto_renew", OptionValue::Bool(renew))]
                .into_iter()
                .chain(barging)
                .collect::<Vec<_>>(),
            self.retry_delay(),
            self.read_timeout(),
        );
        Semaphore::new(
            self.key.as_bytes().to_vec(),
            PERMITS as i64,
            self.ttl(),
            std::slice::from_ref(&self.url),
            options,
        )
        .unwrap()
    }

    /// One acquire through `acquire(wait)`: `wait` given, or some wait;
    /// the process's first acquire waits long (1 s, 3 s for the long ttl)
    /// and is logged as the first wait (`Q` before, `q` after, which the
    /// controller watches). Returns the time before the call when it won;
    /// one that failed is logged, and the worker pauses before it tries
    /// again.
    fn try_acquire(
        &self,
        log: &mut Log,
        wait: Option<Duration>,
        acquire: impl FnOnce(Duration) -> Result<bool>,
    ) -> Option<u64> {
        let first = self.first.replace(false) && !self.child.get();
        let wait = match (first, wait) {
            (true, _) => ms(if self.long { 3000 } else { 1000 }).min(self.left()),
            (false, Some(wait)) => wait,
            (false, None) => self.some_wait(),
        };
        let pid = std::process::id();
        let called = now_ns();
        if first {
            log.line(&format!("Q {pid} {called} {}", wait.as_millis()));
        }
        let got = acquire(wait);
        if first {
            let said = match &got {
                Ok(true) => "1".to_owned(),
                Ok(false) => "0".to_owned(),
                Err(e) => format!("e {}", one_line(&e.to_string())),
            };
            log.line(&format!("q {pid} {called} {} {said}", now_ns()));
        }
        match got {
            Ok(true) => Some(called),
            Ok(false) => None,
            Err(e) => {
                log.line(&format!("E {}", one_line(&e.to_string())));
                std::thread::sleep(ms(20));
                None
            }
        }
    }

    /// Holds for some time, taking a [`Step`] now and then until one says
    /// to stop (false). An auto-renewed long hold, half of the time,
    /// shortens its lease just after its first renewal was sent (a third
    /// of the ttl after it was won), and then lasts long enough to see
    /// whether a late reply of that renewal undid the shorter lease; a
    /// third of the time it lasts 3.2-4.5 s on its whole ttl (its renewals
    /// must keep it through the faults: the controller refuses a lock's
    /// for a while); else (never in a bounded run) it may shorten it now
    /// and then.
    fn hold(&self, mut step: impl FnMut(Step) -> bool) {
        let started = now_ns();
        let mut hold = self.some_hold();
        let mut planned = None;
        let mut checks = match self.long && self.renews() {
            true => Checks::All,
            false => Checks::Whole,
        };
        if self.long && self.renews() {
            match below(if bounded() { 5 } else { 6 }) {
                0..=2 => {
                    hold = hold.max(ms(2500));
                    let at = started + self.ttl_ms() / 3 * MS + (20 + below(120)) * MS;
                    planned = Some(at);
                    // Nothing else of the hold matches the hold-back.
                    checks = Checks::Passive;
                    step(Step::Plan(at, true));
                }
                3..=4 => {
                    // Past its first ttl: its renewals, refused for a
                    // while, must have been sent again soon.
                    hold = ms(3200 + below(1300));
                    checks = Checks::Passive;
                    step(Step::Plan(started, false));
                }
                _ => {}
            }
            hold = hold.min(self.left());
        }
        let mut end = started + hold.as_nanos() as u64;
        while now_ns() < end {
            let mut nap = self.nap();
            if let Some(at) = planned {
                nap = nap.min(Duration::from_nanos(at.saturating_sub(now_ns())));
            }
            std::thread::sleep(nap);
            let go = match planned {
                Some(at) if now_ns() >= at => {
                    // Held on until well past the shorter lease.
                    let ttl = 300 + below(200);
                    planned = None;
                    checks = Checks::Passive;
                    end = end.max(now_ns() + (ttl + 1000) * MS).min(self.deadline);
                    step(Step::Shorten(ttl))
                }
                _ => step(Step::Check(checks)),
            };
            if !go {
                break;
            }
        }
    }
}

/// `text` on one line, without spaces (a log field).
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join("_")
}

/// What a hold can be asked (a lock's write or read hold, a permit).
trait Held {
    fn is_acquired(&mut self) -> Result<bool>;
    fn remaining(&mut self) -> Result<bool>;
    fn refresh(&mut self, ttl: Option<f64>) -> Result<bool>;
}

impl Held for Lock {
    fn is_acquired(&mut self) -> Result<bool> {
        Lock::is_acquired(self)
    }
    fn remaining(&mut self) -> Result<bool> {
        self.remaining_ttl().map(|left| left.is_some())
    }
    fn refresh(&mut self, ttl: Option<f64>) -> Result<bool> {
        Lock::refresh(self, ttl)
    }
}

impl Held for Semaphore {
    fn is_acquired(&mut self) -> Result<bool> {
        Semaphore::is_acquired(self)
    }
    fn remaining(&mut self) -> Result<bool> {
        self.remaining_ttl().map(|left| left.is_some())
    }
    fn refresh(&mut self, ttl: Option<f64>) -> Result<bool> {
        Semaphore::refresh(self, ttl)
    }
}

/// Runs `call`, which says whether the hold named `grant` is ours, and
/// logs it: an intent `B` first when the call changes the lease or ends
/// the hold (`what` tells which), then `C` with the times before and after
/// and what it said (1, 0, or e for an error). Returns what it said.
fn checked(
    log: &mut Log,
    grant: &str,
    what: &str,
    changes: bool,
    call: impl FnOnce() -> Result<bool>,
) -> Option<bool> {
    let before = now_ns();
    if changes {
        log.intent(grant, before, what);
    }
    let said = call().ok();
    let after = now_ns();
    let r = match said {
        Some(true) => "1",
        Some(false) => "0",
        None => "e",
    };
    log.line(&format!("C {grant} {before} {after} {r} {what}"));
    said
}

/// One check of a hold: `is_acquired()`, or with `mix` one of the ways a
/// holder can check that `checks` allows. True while ours.
fn check_once(
    w: &Worker,
    log: &mut Log,
    grant: &str,
    held: &mut dyn Held,
    mix: bool,
    checks: Checks,
) -> bool {
    let pick = if mix { below(20) } else { 99 };
    let said = match pick {
        0..=2 if checks != Checks::Passive => {
            let what = format!("f{}", w.ttl_ms());
            checked(log, grant, &what, true, || held.refresh(None))
        }
        3..=5 if checks != Checks::Passive => checked(log, grant, "rt", false, || held.remaining()),
        6..=7 if checks == Checks::All => return shorten(log, grant, held, 300 + below(500)),
        _ => checked(log, grant, "is", false, || held.is_acquired()),
    };
    said == Some(true)
}

/// `refresh()` of the hold with a shorter ttl of `ttl_ms`.
fn shorten(log: &mut Log, grant: &str, held: &mut dyn Held, ttl_ms: u64) -> bool {
    let what = format!("f{ttl_ms}");
    checked(log, grant, &what, true, || {
        held.refresh(Some(ttl_ms as f64 / 1000.0))
    }) == Some(true)
}

/// Releases the hold named `grant` (logged as a check); when the release
/// got no answer and `token` is the write hold's, a thread watches the key
/// on the server itself ([`watch_release`]). What the release said.
fn release_logged(
    w: &Worker,
    log: &mut Log,
    grant: &str,
    token: Option<Vec<u8>>,
    release: impl FnOnce() -> Result<bool>,
) -> Option<bool> {
    let said = checked(log, grant, "x", true, release);
    if said.is_none()
        && !w.child.get()
        && let Some(token) = token
    {
        watch_release(w, &log.path, grant, token);
    }
    said
}

/// What Redis says of a write hold just after the acquire that won it
/// returned, on a direct connection (not the proxy's): `O grant before
/// after` and `1` (the key holds its token), `0` (another's) or `-`
/// (nobody's). An acquire says true only for a hold that is ours when it
/// returns; the checker excuses a grant whose process was paused (or the
/// machine stalled) from its call to this look.
fn look_at_return(w: &Worker, log: &mut Log, grant: &str, token: &[u8]) {
    thread_local! {
        /// The direct connection of this process (a forked child opens
        /// its own).
        static DIRECT: std::cell::RefCell<Option<(u32, redis::Connection)>> =
            const { std::cell::RefCell::new(None) };
    }
    let before = now_ns();
    let owner = DIRECT.with(|direct| {
        let mut direct = direct.borrow_mut();
        let pid = std::process::id();
        if direct.as_ref().is_none_or(|(of, _)| *of != pid) {
            let con = redis::Client::open(w.direct.as_str())
                .and_then(|c| c.get_connection_with_timeout(Duration::from_secs(1)))
                .ok()?;
            let _ = con.set_read_timeout(Some(Duration::from_secs(1)));
            *direct = Some((pid, con));
        }
        let (_, con) = direct.as_mut()?;
        redis::cmd("GET")
            .arg(&w.key)
            .query::<Option<Vec<u8>>>(con)
            .ok()
    });
    let Some(owner) = owner else {
        return;
    };
    let said = match owner {
        Some(o) if o == token => "1",
        Some(_) => "0",
        None => "-",
    };
    log.line(&format!("O {grant} {before} {} {said}", now_ns()));
}

/// A write hold that is over (its release was answered: it released the
/// hold, or found it not ours): its token restored with `auto_renew` and
/// asked once whether it is ours, logged as a check of the same grant
/// (`rs`). Nothing may be believed of a restored token before Redis
/// answers: a true here would extend the grant's belief over whoever
/// holds the lock now.
fn restore_check(w: &Worker, log: &mut Log, grant: &str, token: &[u8]) {
    let mut lock = w.lock(false, true);
    if lock.restore(token.to_vec()).is_err() {
        return;
    }
    checked(log, grant, "rs", false, || lock.is_acquired());
}

/// Watches, on a direct connection, the key of a write hold whose release
/// got no answer (it is pending, sent again until the server answers):
/// every 50 ms for up to 5 s, logs `S` (the key still holds `token`, seen
/// after the time logged) until it does not (`K`).
fn watch_release(w: &Worker, path: &Path, grant: &str, token: Vec<u8>) {
    let (direct, key, path, grant) = (
        w.direct.clone(),
        w.key.clone(),
        path.to_owned(),
        grant.to_owned(),
    );
    std::thread::spawn(move || {
        let mut log = Log::open(&path);
        let Ok(client) = redis::Client::open(direct) else {
            return;
        };
        let Ok(mut con) = client.get_connection_with_timeout(Duration::from_secs(1)) else {
            return;
        };
        let _ = con.set_read_timeout(Some(Duration::from_secs(1)));
        let until = now_ns() + 5_000 * MS;
        while now_ns() < until {
            let before = now_ns();
            let Ok(owner) = redis::cmd("GET")
                .arg(&key)
                .query::<Option<Vec<u8>>>(&mut con)
            else {
                return;
            };
            if owner.as_deref() != Some(&token[..]) {
                log.line(&format!("K {grant} {before}"));
                return;
            }
            log.line(&format!("S {grant} {before}"));
            std::thread::sleep(ms(50));
        }
    });
}

/// A grant's name, unique among every process of a history: the pid
/// (forked children have their own) and a random number drawn once per
/// process (a long history outlives the machine's pids: they come again).
fn grant_name() -> String {
    static TAG: AtomicU64 = AtomicU64::new(0);
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let pid = u64::from(std::process::id());
    let mut tag = TAG.load(Ordering::Relaxed);
    if tag >> 32 != pid {
        tag = (pid << 32) | below(1 << 32);
        TAG.store(tag, Ordering::Relaxed);
    }
    format!(
        "{pid}.{:x}.{}",
        tag & 0xffff_ffff,
        SEQ.fetch_add(1, Ordering::Relaxed)
    )
}

/// The kinds of hold a grant gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The lock, or a lock's write hold.
    Write,
    /// A lock's read hold.
    Read,
    /// A semaphore's permit.
    Permit,
}

impl Kind {
    fn letter(self) -> &'static str {
        match self {
            Kind::Write => "W",
            Kind::Read => "R",
            Kind::Permit => "P",
        }
    }

    fn parse(letter: &str) -> Option<Self> {
        [Kind::Write, Kind::Read, Kind::Permit]
            .into_iter()
            .find(|k| k.letter() == letter)
    }
}

/// The fence logged for a grant of an unfenced lock (the fencing order
/// leaves it out; -1 is a fenced grant without a token).
const UNFENCED: i64 = -2;

/// One acquire, hold (checking now and then) and release of the lock,
/// logged. The short lock checks with `is_acquired()` only.
fn cycle(w: &Worker, lock: &mut Lock, log: &mut Log, fenced: bool) {
    let sticky = w.after_lost_release.get();
    let wait = sticky.then(|| ms(600));
    let got = w.try_acquire(log, wait, |wait| lock.acquire(wait));
    let Some(called) = got else {
        w.after_lost_release.set(false);
        return;
    };
    let fence = match fenced {
        true => lock.fencing_token().map_or(-1, |f| f),
        false => UNFENCED,
    };
    let grant = log.grant(w, called, fence, Kind::Write, "acquire");
    let token = lock.token();
    if let Some(token) = &token {
        look_at_return(w, log, &grant, token);
    }
    w.hold(|step| match step {
        Step::Plan(at, shorten) => log.plan(&grant, Kind::Write, token.as_deref(), at, shorten),
        Step::Shorten(ttl_ms) => shorten(log, &grant, lock, ttl_ms),
        Step::Check(checks) => check_once(w, log, &grant, lock, w.long, checks),
    });
    // An owner's token is every hold's of the process: a watch could not
    // tell this hold from its next one.
    let watched = token.clone().filter(|_| w.owner.is_none());
    let said = release_logged(w, log, &grant, watched, || lock.release());
    w.after_lost_release
        .set(said.is_none() && w.owner.is_some() && !w.child.get());
    // Once the hold is surely over (the release answered: released, or
    // not ours any more), now and then its token restored.
    if said.is_some()
        && below(3) == 0
        && let Some(token) = token
    {
        restore_check(w, log, &grant, &token);
    }
}

/// Forks a child that first checks it holds nothing of its parent's, then
/// runs one cycle of its own (as its own process) and exits.
fn fork_one_cycle(w: &Worker, log: &mut Log) {
    in_child(w, log, |w, log| {
        let mut lock = w.lock(true, false);
        if lock.token().is_some() {
            log.line("V a forked child believed it held its parent's lock");
        }
        cycle(w, &mut lock, log, true);
    });
}

/// Runs `body` in a forked child (with a log of its own on the same file)
/// and waits for it.
fn in_child(w: &Worker, log: &mut Log, body: impl FnOnce(&Worker, &mut Log)) {
    // SAFETY: the child runs the lock code (fork-safe: per-process state)
    // and leaves with _exit, whatever happens in `body`.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        w.child.set(true);
        w.first.set(false);
        let mut own = Log::open(&log.path);
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(w, &mut own)));
        unsafe { libc::_exit(0) };
    }
    if pid > 0 {
        log.line("F");
        let mut status = 0;
        // SAFETY: our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
    }
}

/// One acquire of a permit, hold (checking now and then in the ways a
/// holder can, forking a child now and then) and release, logged. A
/// forked child's cycle tries once, and forks nothing.
fn semaphore_cycle(w: &Worker, sem: &mut Semaphore, log: &mut Log) {
    let child = w.child.get();
    let wait = child.then_some(Duration::ZERO);
    let Some(called) = w.try_acquire(log, wait, |wait| sem.acquire(wait)) else {
        return;
    };
    let grant = log.grant(w, called, -1, Kind::Permit, "acquire");
    w.hold(|step| match step {
        Step::Plan(at, shorten) => log.plan(&grant, Kind::Permit, None, at, shorten),
        Step::Shorten(ttl_ms) => shorten(log, &grant, sem, ttl_ms),
        Step::Check(_) if !child && below(15) == 0 => {
            // While this process holds a permit: the child holds none of
            // it, and takes one of its own beside it.
            in_child(w, log, |w, log| {
                if !matches!(sem.is_acquired(), Ok(false)) {
                    log.line("V a forked child believed it held its parent's permit");
                }
                let mut own = w.semaphore(false);
                semaphore_cycle(w, &mut own, log);
            });
            true
        }
        Step::Check(checks) => check_once(w, log, &grant, sem, true, checks),
    });
    release_logged(w, log, &grant, None, || sem.release());
}

/// One acquire to read or to write, hold (checking now and then, promoting
/// a read hold or demoting a write hold now and then, forking a child now
/// and then) and release, logged. A promotion or demotion that succeeds is
/// a new grant: the hold before it ends at its last assertion (and is kept
/// until the intent logged before the call). A forked child's cycle tries
/// once, and forks nothing.
fn rw_cycle(w: &Worker, lock: &mut Lock, log: &mut Log) {
    let child = w.child.get();
    let wait = child.then_some(Duration::ZERO);
    let read = below(2) == 0;
    let acquired = w.try_acquire(log, wait, |wait| match read {
        true => lock.acquire_read(wait),
        false => lock.acquire(wait),
    });
    let Some(called) = acquired else {
        return;
    };
    let mut kind = if read { Kind::Read } else { Kind::Write };
    let mut grant = log.grant(w, called, -1, kind, "acquire");
    w.hold(|step| {
        let (check, checks) = match step {
            Step::Plan(at, shorten) => {
                let token = if kind == Kind::Write {
                    lock.token()
                } else {
                    None
                };
                return log.plan(&grant, kind, token.as_deref(), at, shorten);
            }
            Step::Shorten(ttl_ms) => return shorten(log, &grant, lock, ttl_ms),
            Step::Check(checks) => (below(12), checks),
        };
        match check {
            0..=1 if kind == Kind::Read && checks != Checks::Passive => {
                // Promotion: true once no other reader holds the lock; false
                // leaves the read hold (or finds it gone). Counted as a
                // promotion even when this process had already found its
                // read hold gone (then it is a plain write acquire): either
                // way a new grant, the read hold ending at its last
                // assertion.
                let wait = ms([0, 50, 300][below(3) as usize]);
                log.intent(&grant, now_ns(), "p");
                let called = now_ns();
                match lock.acquire(wait) {
                    Ok(true) => {
                        grant = log.grant(w, called, -1, Kind::Write, "promote");
                        kind = Kind::Write;
                    }
                    Ok(false) => log.line("N promote"),
                    Err(_) => {
                        log.line("E promote");
                        return false;
                    }
                }
                true
            }
            2 if kind == Kind::Write && checks != Checks::Passive => {
                // Demotion: at once; false when the write hold was lost (a
                // lost one found so before is a plain read acquire here,
                // counted as a demotion all the same).
                log.intent(&grant, now_ns(), "d");
                let called = now_ns();
                match lock.acquire_read(Duration::ZERO) {
                    Ok(true) => {
                        grant = log.grant(w, called, -1, Kind::Read, "demote");
                        kind = Kind::Read;
                        true
                    }
                    Ok(false) => {
                        log.line("N demote");
                        false
                    }
                    Err(_) => {
                        log.line("E demote");
                        false
                    }
                }
            }
            3 if !child => {
                in_child(w, log, |w, log| {
                    if !matches!(lock.is_acquired(), Ok(false)) {
                        log.line("V a forked child believed it held its parent's hold");
                    }
                    let mut own = w.lock(false, false);
                    rw_cycle(w, &mut own, log);
                });
                true
            }
            _ => check_once(w, log, &grant, lock, true, checks),
        }
    });
    let token = if kind == Kind::Write {
        lock.token()
    } else {
        None
    };
    release_logged(w, log, &grant, token, || lock.release());
}

/// A worker's log: one line per event, each written with one `write`, so
/// lines of a process, its threads and its children never interleave.
struct Log {
    path: PathBuf,
    file: std::fs::File,
}

impl Log {
    fn open(path: &Path) -> Self {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        Self {
            path: path.to_owned(),
            file,
        }
    }

    fn line(&mut self, text: &str) {
        let _ = self.file.write_all(format!("{text}\n").as_bytes());
    }

    /// Logs a grant of a call made at `called` that returned just now,
    /// with the hold's ttl, whether this process renews it and its key;
    /// returns its name.
    fn grant(&mut self, w: &Worker, called: u64, fence: i64, kind: Kind, how: &str) -> String {
        let at = now_ns();
        let grant = grant_name();
        self.line(&format!(
            "G {grant} {called} {at} {fence} {} {how} {} {} {}",
            kind.letter(),
            w.ttl_ms(),
            u8::from(w.renews()),
            w.key,
        ));
        grant
    }

    /// Logs that `grant` (of `kind`, with `token` when known) plans to
    /// shorten its lease at `at` (ns), just after its first renewal was
    /// sent: the controller holds back that renewal's reply when it can;
    /// or (not `shorten`) that it started at `at` and keeps its whole ttl
    /// past it: the controller refuses its renewals for a while.
    fn plan(
        &mut self,
        grant: &str,
        kind: Kind,
        token: Option<&[u8]>,
        at: u64,
        shorten: bool,
    ) -> bool {
        let token = token.map_or("-".to_owned(), |t| String::from_utf8_lossy(t).into_owned());
        let how = if shorten { "s" } else { "k" };
        self.line(&format!("P {grant} {at} {} {token} {how}", kind.letter()));
        true
    }

    /// Logs, before the call, a call that changes the lease of `grant` or
    /// ends it: `f<ms>` a refresh, `x` a release, `p` / `d` a promotion
    /// or demotion.
    fn intent(&mut self, grant: &str, before: u64, what: &str) {
        self.line(&format!("B {grant} {before} {what}"));
    }
}

// ------------------------------------------------------------ controller

/// What a history run did and found.
#[derive(Debug)]
struct Report {
    scenario: Scenario,
    processes: usize,
    forks: usize,
    pauses: usize,
    kills: usize,
    cuts: u32,
    /// Times requests or replies were held up in flight.
    delays: usize,
    /// Replies held back (renewals and refreshes of the long ttl).
    held: u32,
    /// Windows in which renewals, refreshes and releases were refused,
    /// and the requests refused.
    refusals: usize,
    refused: u32,
    /// Long holds whose renewals were refused for a while.
    renewals_refused: usize,
    /// Times a short hold's top-up (or renewal) reply was armed to be held
    /// back past its ttl.
    short_holds: usize,
    /// Times a release request was armed to be held up in flight past the
    /// releaser's read timeout (lock).
    late_releases: usize,
    /// Tokens of holds found not ours at their release, restored with
    /// `auto_renew` and asked about.
    restore_checks: usize,
    /// Write grants whose key was read on a direct connection at their
    /// return.
    looked: usize,
    /// Stretches the machine was too busy to run the probe thread
    /// ([`Faults::stalls`]).
    stalls: usize,
    /// Every connection dropped while a fresh worker was in its first
    /// wait; first waits found to span such a drop.
    drops: usize,
    first_wait_drops: usize,
    /// Batches of [`DEPARTED`] departed waiters put at the queue's head.
    departed: usize,
    grants: usize,
    /// Grants of the long ttl; those checked ours past a hand-over mark's
    /// life.
    long_grants: usize,
    long_past_mark: usize,
    reads: usize,
    writes: usize,
    promotions: usize,
    demotions: usize,
    /// Promotions and demotions tried that returned false.
    refused_promotions: usize,
    refused_demotions: usize,
    assertions: usize,
    /// Checks that fell within the hold's kept interval, and pauses of a
    /// holder whose next check did.
    kept_checks: usize,
    pauses_checked: usize,
    /// `refresh()` calls with a ttl shorter than the hold's.
    shortened: usize,
    /// Auto-renewed long holds checked after their first ttl.
    renewed_past_ttl: usize,
    /// Releases without an answer whose key was watched.
    watched_releases: usize,
    /// Most belief intervals overlapping at once (semaphore: holders; rw:
    /// readers).
    most_at_once: usize,
    errors: usize,
    violations: Vec<String>,
}

impl Report {
    fn new(scenario: Scenario) -> Self {
        Self {
            scenario,
            processes: 0,
            forks: 0,
            pauses: 0,
            kills: 0,
            cuts: 0,
            delays: 0,
            held: 0,
            refusals: 0,
            refused: 0,
            renewals_refused: 0,
            short_holds: 0,
            late_releases: 0,
            restore_checks: 0,
            looked: 0,
            stalls: 0,
            drops: 0,
            first_wait_drops: 0,
            departed: 0,
            grants: 0,
            long_grants: 0,
            long_past_mark: 0,
            reads: 0,
            writes: 0,
            promotions: 0,
            demotions: 0,
            refused_promotions: 0,
            refused_demotions: 0,
            assertions: 0,
            kept_checks: 0,
            pauses_checked: 0,
            shortened: 0,
            renewed_past_ttl: 0,
            watched_releases: 0,
            most_at_once: 0,
            errors: 0,
            violations: Vec::new(),
        }
    }

    fn faults(&self) -> usize {
        self.pauses
            + self.kills
            + self.cuts as usize
            + self.delays
            + self.held as usize
            + self.refusals
            + self.renewals_refused
            + self.short_holds
            + self.late_releases
            + self.drops
            + self.departed
    }

    /// Why the history was too short to mean anything, if it was.
    fn too_short(&self) -> Option<String> {
        let least = if self.scenario == Scenario::Long {
            10
        } else {
            20
        };
        if self.grants < least || self.faults() < 10 {
            return Some(format!("{} grants, {} faults", self.grants, self.faults()));
        }
        if self.scenario == Scenario::Long && self.long_past_mark < 3 {
            return Some(format!(
                "{} holds checked past a hand-over mark's life",
                self.long_past_mark
            ));
        }
        match self.scenario {
            Scenario::Lock | Scenario::Long => None,
            Scenario::Semaphore if self.most_at_once < 2 => Some(format!(
                "never more than {} holder at once",
                self.most_at_once
            )),
            Scenario::ReadWrite if self.reads < 5 || self.writes < 5 || self.most_at_once < 2 => {
                Some(format!(
                    "{} reads, {} writes, at most {} readers at once",
                    self.reads, self.writes, self.most_at_once
                ))
            }
            _ => None,
        }
    }
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = match self.scenario {
            Scenario::Lock => "lock".to_owned(),
            Scenario::Long => format!("lock, ttl {LONG_TTL} s"),
            Scenario::Semaphore => format!("semaphore, {PERMITS} permits"),
            Scenario::ReadWrite => "read/write".to_owned(),
        };
        write!(
            f,
            "history ({name}): {} worker processes ({} at a time) and {} forked children, \
             {} pauses, {} kills, {} cut replies, {} times requests or replies held up, \
             {} replies held back, {} requests refused in {} windows, {} connection drops \
             in first waits ({} first waits hit), {} batches of {DEPARTED} departed waiters, \
             {} machine stalls",
            self.processes,
            self.scenario.workers(),
            self.forks,
            self.pauses,
            self.kills,
            self.cuts,
            self.delays,
            self.held,
            self.refused,
            self.refusals,
            self.drops,
            self.first_wait_drops,
            self.departed,
            self.stalls,
        )?;
        write!(f, "; {} grants", self.grants)?;
        if self.scenario == Scenario::ReadWrite {
            write!(
                f,
                " ({} reads, {} writes; {} of {} promotions and {} of {} demotions tried)",
                self.reads,
                self.writes,
                self.promotions,
                self.promotions + self.refused_promotions,
                self.demotions,
                self.demotions + self.refused_demotions,
            )?;
        }
        if self.scenario.has_long() {
            write!(
                f,
                ", {} of the long ttl ({} checked past a hand-over mark's life, {} auto-renewed \
                 ones past their ttl, {} with their renewals refused for 1.3 s), {} refreshes \
                 to a shorter ttl",
                self.long_grants,
                self.long_past_mark,
                self.renewed_past_ttl,
                self.renewals_refused,
                self.shortened
            )?;
        }
        if self.scenario == Scenario::Lock {
            write!(
                f,
                ", {} top-up replies armed to come after their ttl, {} releases armed to \
                 run late (half the workers under a fixed owner)",
                self.short_holds, self.late_releases
            )?;
        }
        if self.scenario.exclusive() {
            write!(
                f,
                ", {} restored tokens asked about, {} keys read at a grant's return",
                self.restore_checks, self.looked
            )?;
        }
        write!(
            f,
            ", {} assertions, {} intervals checked, {} checks within the pause tolerance, \
             {} pauses checked for it, {} unanswered releases watched",
            self.assertions,
            self.grants,
            self.kept_checks,
            self.pauses_checked,
            self.watched_releases
        )?;
        match self.scenario {
            Scenario::Lock | Scenario::Long => {}
            Scenario::Semaphore => write!(f, ", at most {} holders at once", self.most_at_once)?,
            Scenario::ReadWrite => write!(f, ", at most {} readers at once", self.most_at_once)?,
        }
        write!(
            f,
            ", {} calls failed; {} violations",
            self.errors,
            self.violations.len()
        )?;
        // By check, in the order of the checks.
        let mut by_check: Vec<(&str, usize)> = Vec::new();
        for v in &self.violations {
            let check = CHECKS
                .iter()
                .find(|c| v.starts_with(*c))
                .copied()
                .unwrap_or("other");
            match by_check.iter_mut().find(|(c, _)| *c == check) {
                Some((_, n)) => *n += 1,
                None => by_check.push((check, 1)),
            }
        }
        if !by_check.is_empty() {
            let list: Vec<String> = by_check.iter().map(|(c, n)| format!("{n} {c}")).collect();
            write!(f, " ({})", list.join(", "))?;
        }
        Ok(())
    }
}

/// The checks, as violations name them first.
const CHECKS: [&str; 7] = [
    "truth",
    "tolerance",
    "lease kept",
    "pause tolerance",
    "renewal",
    "pending release",
    "first wait",
];

/// When the long holds of `slots` that keep their whole ttl started (ns),
/// in a bounded run (none otherwise): each gets a quiet stretch after its
/// refused renewals ([`quiet_for`]).
fn kept_holds(slots: &[Slot]) -> Vec<u64> {
    if !bounded() {
        return Vec::new();
    }
    slots
        .iter()
        .filter(|s| s.long)
        .flat_map(|s| plans(&s.log, s.pid))
        .filter(|p| !p.shortens)
        .map(|p| p.at)
        .collect()
}

/// Whether a fault of everyone's requests lasting `lasting` ns, started
/// at `t`, would reach into a quiet stretch: a long hold that keeps its
/// whole ttl through its refused renewals, started at one of `kept`
/// ([`kept_holds`]), gets one after them (0.7 s from 2.1 s after its
/// grant), so that its renewals, sent again then, are the only thing that
/// can keep it (the renewal check needs 0.4 s free of faults: without it,
/// a run of 20 s seldom had one).
fn quiet_for(kept: &[u64], t: u64, lasting: u64) -> bool {
    kept.iter()
        .any(|&at| t + lasting > at + 2100 * MS && t < at + 2800 * MS)
}

#[allow(clippy::too_many_arguments)]
fn spawn_worker(
    scenario: Scenario,
    url: &str,
    direct: &str,
    key: &str,
    log: &Path,
    deadline: u64,
    renew: bool,
    long: bool,
) -> Child {
    let spec = format!(
        "{}|{url}|{direct}|{key}|{}|{deadline}|{}|{}",
        scenario.name(),
        log.display(),
        u8::from(renew),
        u8::from(long),
    );
    Command::new(std::env::current_exe().unwrap())
        .env("HISTORY_WORKER", spec)
        .spawn()
        .unwrap()
}

fn signal(child: &Child, sig: libc::c_int) {
    let pid = child.id() as libc::pid_t;
    assert!(pid > 1);
    // SAFETY: a child of ours, by the pid we started it with.
    unsafe { libc::kill(pid, sig) };
}

/// A thread that sleeps 5 ms at a time and notes when it wakes more
/// than 25 ms late: the machine was too busy to run it ([`Faults::stalls`]).
struct StallProbe {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<Vec<(u64, u64)>>,
}

impl StallProbe {
    fn start() -> Self {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut stalls = vec![];
            while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                let due = now_ns() + 5 * MS;
                std::thread::sleep(ms(5));
                let woke = now_ns();
                if woke > due + 25 * MS {
                    stalls.push((due, woke));
                }
            }
            stalls
        });
        StallProbe { stop, thread }
    }

    /// Stops the probe; the stalls it saw.
    fn stop(self) -> Vec<(u64, u64)> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.join().unwrap_or_default()
    }
}

/// What the controller did to one scenario, on the shared monotonic clock
/// (ns), for the checks that excuse or expect something of it.
#[derive(Debug, Default)]
struct Faults {
    /// Worker processes (not their forked children).
    workers: HashSet<u32>,
    /// Pauses: pid, SIGSTOP sent, SIGCONT sent (or the kill).
    pauses: Vec<(u32, u64, u64)>,
    /// Every connection dropped during a fresh worker's first wait.
    drops: Vec<u64>,
    /// Renewals, refreshes and releases refused: from, to.
    refusals: Vec<(u64, u64)>,
    /// The renewals of one process's hold refused: pid, from, to.
    renewals_refused: Vec<(u32, u64, u64)>,
    /// Requests or replies held up: from, to (the hold-up included).
    slowdowns: Vec<(u64, u64)>,
    /// Replies held back: from, to.
    held: Vec<(u64, u64)>,
    /// Stretches in which the machine did not run the controller's probe
    /// thread (a 5 ms sleep woke more than 25 ms late): from the wake-up
    /// due to the one seen. A machine that busy (the flake proof runs two
    /// more copies of the suite beside this one) may not run a renewal
    /// either: such a stretch is not free.
    stalls: Vec<(u64, u64)>,
}

impl Faults {
    /// The pauses of process `pid`.
    fn pauses_of(&self, pid: u32) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.pauses
            .iter()
            .filter(move |p| p.0 == pid)
            .map(|&(_, from, to)| (from, to))
    }

    /// The longest stretch from `from` to `to` (its start and length) in
    /// which process `pid` ran and nothing kept the requests of its holds
    /// from Redis: no pause, refusal, reply held back or request held up.
    fn free_stretch(&self, pid: u32, from: u64, to: u64) -> (u64, u64) {
        let own_refused = self
            .renewals_refused
            .iter()
            .filter(move |r| r.0 == pid)
            .map(|&(_, from, to)| (from, to));
        let mut windows: Vec<(u64, u64)> = self
            .pauses_of(pid)
            .chain(own_refused)
            .chain(self.refusals.iter().copied())
            .chain(self.held.iter().copied())
            .chain(self.slowdowns.iter().copied())
            .chain(self.stalls.iter().copied())
            .collect();
        windows.sort_unstable();
        let (mut best, mut at) = ((from, 0), from);
        for (a, b) in windows.into_iter().chain([(to, to)]) {
            if at >= to {
                break;
            }
            let a = a.clamp(at, to);
            if a - at > best.1 {
                best = (at, a - at);
            }
            at = at.max(b);
        }
        best
    }

    /// Writes what the controller did, one line each (kept beside the
    /// workers' logs): `pause pid from to`, `drop at`, `renewals pid from
    /// to` (one hold's renewals refused), `refused from to`, `slow from
    /// to`, `held from to`.
    fn write(&self, path: &Path) {
        let mut lines = vec![];
        for &(pid, from, to) in &self.pauses {
            lines.push((from, format!("pause {pid} {from} {to}")));
        }
        for &at in &self.drops {
            lines.push((at, format!("drop {at}")));
        }
        for &(pid, from, to) in &self.renewals_refused {
            lines.push((from, format!("renewals {pid} {from} {to}")));
        }
        for (what, windows) in [
            ("refused", &self.refusals),
            ("slow", &self.slowdowns),
            ("held", &self.held),
            ("stall", &self.stalls),
        ] {
            for &(from, to) in windows {
                lines.push((from, format!("{what} {from} {to}")));
            }
        }
        lines.sort();
        let text: String = lines.into_iter().map(|(_, l)| l + "\n").collect();
        let _ = std::fs::write(path, text);
    }

    /// How long process `pid` was paused from `from` to `to`.
    fn paused(&self, pid: u32, from: u64, to: u64) -> u64 {
        self.pauses_of(pid)
            .map(|(a, b)| b.min(to).saturating_sub(a.max(from)))
            .sum()
    }

    /// When process `pid` has run (not paused) for `run` ns since `from`.
    fn having_run(&self, pid: u32, from: u64, run: u64) -> u64 {
        let mut pauses: Vec<(u64, u64)> = self.pauses_of(pid).filter(|p| p.1 > from).collect();
        pauses.sort_unstable();
        let (mut at, mut left) = (from, run);
        for (a, b) in pauses {
            let a = a.max(at);
            if a >= at + left {
                break;
            }
            left -= a - at;
            at = b.max(at);
        }
        at + left
    }
}

/// The last `bytes` of a worker's log, from a line's start.
fn tail(path: &Path, bytes: u64) -> String {
    let Ok(mut file) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = file.metadata().map_or(0, |m| m.len());
    let from = len.saturating_sub(bytes);
    let _ = file.seek(SeekFrom::Start(from));
    let mut text = String::new();
    let _ = file.read_to_string(&mut text);
    match (from, text.find('\n')) {
        (0, _) => text,
        (_, Some(at)) => text[at + 1..].to_owned(),
        (_, None) => String::new(),
    }
}

/// Until when (ns) the hold that worker `pid` holds now is kept by Redis
/// for sure (its kept interval, as [`check`] counts it), from its log;
/// `None` when it holds nothing.
fn holding_until(log: &Path, pid: u32) -> Option<u64> {
    let text = tail(log, 16 * 1024);
    let own = format!("G {pid}.");
    let mut kept: Option<(String, u64)> = None;
    for line in text.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        match fields[..] {
            ["G", grant, called, _, _, _, _, ttl, _, _] if line.starts_with(&own) => {
                let (Ok(called), Ok(ttl)) = (called.parse::<u64>(), ttl.parse::<u64>()) else {
                    continue;
                };
                kept = Some((grant.to_owned(), called + ttl * MS));
            }
            ["B", grant, before, what] if kept.as_ref().is_some_and(|k| k.0 == grant) => {
                match (what.strip_prefix('f'), before.parse::<u64>()) {
                    (Some(ttl), Ok(before)) => {
                        if let (Some(k), Ok(ttl)) = (kept.as_mut(), ttl.parse::<u64>()) {
                            k.1 = k.1.min(before + ttl * MS);
                        }
                    }
                    _ => kept = None,
                }
            }
            _ => {}
        }
    }
    kept.map(|(_, until)| until.saturating_sub(SLACK))
}

/// A long hold's plan (a `P` line of its worker's log).
struct Plan {
    grant: String,
    /// When it shortens its lease, or when it started (ns).
    at: u64,
    kind: Kind,
    /// Its token, when known.
    token: Option<String>,
    /// It shortens its lease (else it keeps its whole ttl).
    shortens: bool,
}

/// The plans of worker `pid`'s long holds, from its log.
fn plans(log: &Path, pid: u32) -> Vec<Plan> {
    let own = format!("P {pid}.");
    tail(log, 8 * 1024)
        .lines()
        .filter(|l| l.starts_with(&own))
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            let ["P", grant, at, kind, token, how] = fields[..] else {
                return None;
            };
            Some(Plan {
                grant: grant.to_owned(),
                at: at.parse().ok()?,
                kind: Kind::parse(kind)?,
                token: (token != "-").then(|| token.to_owned()),
                shortens: how == "s",
            })
        })
        .collect()
}

/// The parts of the requests of a long hold's renewal (or `refresh()` of
/// the whole ttl): its script's SHA and the ttl in ms, and its token when
/// known.
fn renewal_of(kind: Kind, token: Option<&str>) -> Vec<Vec<u8>> {
    let sha = match kind {
        Kind::Write => scripts::REFRESH.hash(),
        Kind::Read => scripts::READ_REFRESH.hash(),
        Kind::Permit => scripts::SEM_REFRESH.hash(),
    };
    let ms = format!("$4\r\n{}\r\n", (LONG_TTL * 1000.0) as u64);
    [Some(sha), token, Some(ms.as_str())]
        .into_iter()
        .flatten()
        .map(|p| p.as_bytes().to_vec())
        .collect()
}

/// Where worker `pid`'s first acquire is, from its log.
enum FirstWait {
    NotYet,
    /// Waiting since then (ns).
    Since(u64),
    Over,
}

fn first_wait(log: &Path, pid: u32) -> FirstWait {
    let text = tail(log, 64 * 1024);
    let (began, ended) = (format!("Q {pid} "), format!("q {pid} "));
    let mut state = FirstWait::NotYet;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix(&began) {
            let since = rest.split(' ').next().and_then(|t| t.parse().ok());
            state = since.map_or(FirstWait::Over, FirstWait::Since);
        } else if line.starts_with(&ended) {
            return FirstWait::Over;
        }
    }
    state
}

/// Puts [`DEPARTED`] departed waiters at the head of `queue`: entries that
/// arrived an hour ago (µs since the Unix epoch), with no mark.
fn departed_batch(server: &RedisServer, queue: &[u8], batch: usize) {
    let now_us = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_micros() as u64;
    let first = now_us - 3_600_000_000;
    let mut zadd = redis::cmd("ZADD");
    zadd.arg(queue);
    for i in 0..DEPARTED {
        zadd.arg(first + i as u64)
            .arg(format!("departed-{batch}-{i}"));
    }
    let _: i64 = zadd.query(&mut server.client()).unwrap();
}

/// A worker process the controller runs in one slot.
struct Slot {
    child: Child,
    pid: u32,
    log: PathBuf,
    long: bool,
    /// Its holds are auto-renewed.
    renew: bool,
    /// Its first wait is still to be hit by a dropped connection, this
    /// long (ns) after it began: early, during the first try, or later,
    /// blocked in the queue.
    fresh: Option<u64>,
    /// Paused: until when, and since when (ns).
    paused: Option<(Instant, u64)>,
}

/// Whether worker `pid` had a release without an answer less than 3 s
/// before `t`, from its log: a fixed owner's next hold is to meet that
/// release, run late ([`Worker::after_lost_release`]).
fn lost_release_lately(log: &Path, pid: u32, t: u64) -> bool {
    let own = format!("C {pid}.");
    tail(log, 4 * 1024)
        .lines()
        .filter(|l| l.starts_with(&own) && l.ends_with(" e x"))
        .filter_map(|l| l.split(' ').nth(3)?.parse::<u64>().ok())
        .any(|after| t < after + 3000 * MS)
}

/// Whether two or more wait in `queue` and one of them has waited over
/// 100 ms (less than 10 s: not a departed waiter of a batch): handed the
/// lock, it tops its win up (its wait took more than a quarter of a short
/// lease).
fn long_waiter(server: &RedisServer, queue: &[u8]) -> bool {
    let queue = String::from_utf8_lossy(queue).into_owned();
    let now_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64);
    let (from, to) = (now_us - 10_000_000, now_us - 100_000);
    let waited: Vec<String> = server.cmd(&[
        "ZRANGEBYSCORE",
        &queue,
        &from.to_string(),
        &to.to_string(),
        "LIMIT",
        "0",
        "1",
    ]);
    !waited.is_empty() && server.cmd::<i64>(&["ZCOUNT", &queue, &from.to_string(), "+inf"]) >= 2
}

/// How long to pause the worker in `slot`: when it holds, often a pause
/// that ends within its kept interval (leaving it time for a check: with
/// the long ttl between a hand-over mark's life and what is left);
/// otherwise up to two short leases, or (long ttl) up to a long one.
fn pause_length(slot: &Slot) -> Duration {
    if let Some(kept) = holding_until(&slot.log, slot.pid) {
        let next_check = if slot.long { 250 } else { 40 };
        let room = kept.saturating_sub(now_ns() + next_check * MS) / MS;
        if slot.long && room > 750 && below(3) != 0 {
            return ms(700 + below(room - 700));
        }
        if !slot.long && room > 10 && below(2) == 0 {
            return ms(below(room));
        }
    }
    if slot.long && below(5) == 0 {
        ms(700 + below(2300))
    } else {
        ms(below(600))
    }
}

fn controller(scenario: Scenario, length: Duration) -> Report {
    let server = RedisServer::start();
    let proxy = Proxy::start(&server);
    // The proxy's instants on the shared clock.
    let (base, base_ns) = (Instant::now(), now_ns());
    let on_clock = |at: Instant| base_ns + at.saturating_duration_since(base).as_nanos() as u64;
    let dir = fresh_dir(&format!("history-{}", scenario.name()));
    let names: Vec<String> = (0..scenario.keys())
        .map(|_| String::from_utf8(unique_key(&format!("history-{}", scenario.name()))).unwrap())
        .collect();
    let queues: Vec<Vec<u8>> = names.iter().map(|k| scenario.queue(k.as_bytes())).collect();
    let url = proxy.url();
    let direct = server.url();
    let end = now_ns() + length.as_nanos() as u64;
    let workers_at_once = scenario.workers();
    let mut report = Report::new(scenario);
    let mut faults = Faults::default();
    let stalls = StallProbe::start();
    let mut logs = Vec::new();
    let start = |i: usize, report: &mut Report, logs: &mut Vec<PathBuf>| {
        let n = logs.len();
        let log = dir.join(format!("worker-{n}.log"));
        logs.push(log.clone());
        report.processes += 1;
        let long = scenario.long_slot(i);
        // A third of the short workers renew, three quarters of the long
        // ones (all of them in a bounded run).
        let renew = match long {
            false => n.is_multiple_of(3),
            true => !n.is_multiple_of(4) || bounded(),
        };
        let key = &names[i % names.len()];
        let child = spawn_worker(scenario, &url, &direct, key, &log, end, renew, long);
        Slot {
            pid: child.id(),
            child,
            log,
            long,
            renew,
            // Half the fresh workers' first waits see every connection
            // dropped.
            fresh: (below(2) == 0).then(|| below(300) * MS),
            paused: None,
        }
    };
    let mut slots: Vec<Slot> = (0..workers_at_once)
        .map(|i| start(i, &mut report, &mut logs))
        .collect();
    faults.workers.extend(slots.iter().map(|s| s.pid));
    let refused_scripts = extend_and_release_scripts();
    let refused: Vec<&[u8]> = refused_scripts.iter().map(Vec::as_slice).collect();
    let renewals = scenario.renewal_patterns();
    // Planned shortenings already aimed at, and until when (ns) the hold
    // armed for one is left alone.
    let mut aimed: HashSet<String> = HashSet::new();
    let mut aiming_until = 0;
    // When requests pass again after a hold-up; the next batch of departed
    // waiters; the next refusal window.
    let mut delayed: Option<Instant> = None;
    let mut next_departed = now_ns() + (1000 + below(1500)) * MS;
    let mut next_refusal = now_ns() + (2000 + below(2000)) * MS;
    // In the short lock's history, now and then: a short hold's top-up
    // reply held back past its ttl; a release request held up in flight
    // past the releaser's read timeout.
    let short_top_up = short_top_up();
    let mut next_short = now_ns() + (500 + below(1000)) * MS;
    let mut next_late_release = now_ns() + (700 + below(1000)) * MS;
    while now_ns() < end {
        std::thread::sleep(ms(20 + below(80)));
        let now = Instant::now();
        for slot in &mut slots {
            if let Some((until, since)) = slot.paused
                && now >= until
            {
                signal(&slot.child, libc::SIGCONT);
                faults.pauses.push((slot.pid, since, now_ns()));
                slot.paused = None;
            }
        }
        if delayed.is_some_and(|until| now >= until) {
            proxy.pass();
            delayed = None;
        }
        let t = now_ns();
        if t >= next_departed {
            let queue = &queues[report.departed % queues.len()];
            departed_batch(&server, queue, report.departed);
            report.departed += 1;
            next_departed = t + (1500 + below(2000)) * MS;
        }
        // Renewals, refreshes and releases refused for a while (never
        // while a reply is held back).
        let refusing = faults.refusals.last().is_some_and(|&(_, to)| t < to);
        let kept_since = kept_holds(&slots);
        if t >= next_refusal && !proxy.holding_reply() && !quiet_for(&kept_since, t, 1500 * MS) {
            // Long ones (renewals due twice meanwhile: each must be sent
            // again soon) and short ones (a release refused then is sent
            // again while the lease would still keep the key).
            let lasting = match faults.refusals.len() % 2 {
                0 => 1300 + below(200),
                _ => 300 + below(300),
            };
            proxy.cancel_hold();
            proxy.refuse_requests_with(&refused, ms(lasting));
            faults.refusals.push((t, t + lasting * MS));
            report.refusals += 1;
            next_refusal = t + (lasting + 2000 + below(1500)) * MS;
        } else if !renewals.is_empty() && !refusing {
            // A planned shortening just after a long hold's first renewal:
            // that renewal's reply held back (by its token when known, or
            // armed just before it is due).
            if !proxy.holding_reply() {
                for slot in slots.iter().filter(|s| s.long && s.paused.is_none()) {
                    let shortenings = plans(&slot.log, slot.pid)
                        .into_iter()
                        .filter(|p| p.shortens);
                    for Plan {
                        grant,
                        at,
                        kind,
                        token,
                        ..
                    } in shortenings
                    {
                        let soon = token.is_some() || t + 300 * MS >= at;
                        if soon && t < at && aimed.insert(grant) {
                            let parts = renewal_of(kind, token.as_deref());
                            let parts: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
                            // Back after the shortening's reply, before
                            // its shorter lease ends.
                            proxy.hold_reply_to_all(&parts, ms(200 + below(250)));
                            aiming_until = at + 300 * MS;
                        }
                    }
                }
            }
            // Else the reply of some long hold's renewal (or refresh of
            // the whole ttl) held back: it comes late, after replies sent
            // later.
            if !proxy.holding_reply() && t >= aiming_until && !quiet_for(&kept_since, t, 950 * MS) {
                let parts = &renewals[below(renewals.len() as u64) as usize];
                let parts: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
                proxy.hold_reply_to_all(&parts, ms(150 + below(800)));
            }
        } else if refusing {
            proxy.cancel_hold();
        }
        // A short hold's top-up (or renewal) whose reply comes after the
        // lease it set ended: a win whose only proof it is must not count
        // (a waiter handed the lock returns false, or goes on waiting).
        // Armed while one waiter has waited long and another waits too,
        // and the holder renews nothing (its renewals look the same): the
        // first is handed the lock, tops its win up, and the other takes
        // it when that late lease ends.
        let renewing = || {
            slots
                .iter()
                .any(|s| s.renew && holding_until(&s.log, s.pid).is_some())
        };
        if scenario == Scenario::Lock
            && !refusing
            && t >= next_short
            && !proxy.holding_reply()
            && !renewing()
            && long_waiter(&server, &queues[0])
        {
            let parts: Vec<&[u8]> = short_top_up.iter().map(Vec::as_slice).collect();
            proxy.hold_reply_to_all(&parts, ms(320 + below(130)));
            next_short = t + (400 + below(600)) * MS;
            report.short_holds += 1;
        }
        // A fixed owner's release held up in flight past the releaser's
        // read timeout (0.5 s): it is resent (answered) and runs late,
        // while the owner holds the lock again (taken after the timeout,
        // kept 1.2 s of a 1.5 s lease).
        if scenario == Scenario::Lock && t >= next_late_release && !proxy.delay_armed() {
            let release = scripts::RELEASE.hash().as_bytes();
            proxy.delay_request_to_all(&[release, OWNER_PREFIX.as_bytes()], ms(1200 + below(400)));
            next_late_release = t + (600 + below(800)) * MS;
            report.late_releases += 1;
        }
        // A long lock hold that keeps its whole ttl: its renewals refused
        // from 0.8 s to 2.1 s after its grant, two renewals due meanwhile
        // (about 1 s and 2 s after the request that won it): each must be
        // sent again soon (within 0.1 s), which keeps it, with 0.7 s to
        // spare. It is not paused until 3.5 s after its grant.
        for slot in slots.iter().filter(|s| s.long) {
            let kept = plans(&slot.log, slot.pid)
                .into_iter()
                .filter(|p| !p.shortens);
            for Plan {
                grant, at, token, ..
            } in kept
            {
                let (from, to) = (at + 800 * MS, at + 2100 * MS);
                let Some(token) = token.filter(|_| t >= from && t < to) else {
                    continue;
                };
                if aimed.insert(grant) {
                    // Its renewals only (the script and its token), not
                    // every process's renewals nor its release.
                    let parts = [scripts::REFRESH.hash().as_bytes(), token.as_bytes()];
                    proxy.refuse_requests_with_all(&parts, Duration::from_nanos(to - t));
                    faults.renewals_refused.push((slot.pid, t, to));
                    report.renewals_refused += 1;
                }
            }
        }
        // Every connection dropped while a fresh worker is in its first
        // wait (blocked in acquire).
        for slot in slots.iter_mut().filter(|s| s.paused.is_none()) {
            let Some(after) = slot.fresh else {
                continue;
            };
            match first_wait(&slot.log, slot.pid) {
                FirstWait::Since(since) if t >= since + after => {
                    proxy.drop_all();
                    faults.drops.push(now_ns());
                    report.drops += 1;
                    slot.fresh = None;
                    break;
                }
                FirstWait::Over => slot.fresh = None,
                _ => {}
            }
        }
        match below(10) {
            0..=3 => {
                // Two pauses in three hit a holder when there is one (the
                // pause tolerance is checked on holders).
                let holders: Vec<usize> = (0..workers_at_once)
                    .filter(|&i| holding_until(&slots[i].log, slots[i].pid).is_some())
                    .collect();
                let i = match holders.is_empty() || below(3) == 0 {
                    true => below(workers_at_once as u64) as usize,
                    false => holders[below(holders.len() as u64) as usize],
                };
                // Long workers mostly while they hold (a paused long
                // waiter is mostly a long wait for the others), and not
                // while their renewals are refused on purpose.
                let slot = &slots[i];
                let idle =
                    slot.long && holding_until(&slot.log, slot.pid).is_none() && below(3) != 0;
                let spared = slot.long
                    && plans(&slot.log, slot.pid)
                        .iter()
                        .any(|p| !p.shortens && t < p.at + 3500 * MS);
                // Nor a fixed owner just after its release got no answer:
                // its next hold is the one that release, run late, meets.
                let spared = spared || lost_release_lately(&slot.log, slot.pid, t);
                if slots[i].paused.is_none() && !idle && !spared {
                    let lasting = pause_length(&slots[i]);
                    let since = now_ns();
                    signal(&slots[i].child, libc::SIGSTOP);
                    slots[i].paused = Some((now + lasting, since));
                    report.pauses += 1;
                }
            }
            4 => {
                let i = below(workers_at_once as u64) as usize;
                // Long workers a quarter as often, holders seldom: a killed
                // holder holds the lock for its whole lease (a killed long
                // waiter is a departed one).
                let holds = holding_until(&slots[i].log, slots[i].pid).is_some();
                if slots[i].long && (below(4) != 0 || (holds && below(4) != 0)) {
                    continue;
                }
                if lost_release_lately(&slots[i].log, slots[i].pid, t) {
                    continue;
                }
                signal(&slots[i].child, libc::SIGKILL);
                let _ = slots[i].child.wait();
                if let Some((_, since)) = slots[i].paused {
                    faults.pauses.push((slots[i].pid, since, now_ns()));
                }
                report.kills += 1;
                slots[i] = start(i, &mut report, &mut logs);
                faults.workers.insert(slots[i].pid);
            }
            5..=6 => proxy.cut_mid_reply(),
            // Requests held up in flight (the server runs them later than
            // their senders built them: the semaphore's and read holds'
            // scripts judge leases by the clock reading in the request),
            // or replies (they come late), for a while.
            7 if delayed.is_none() && !quiet_for(&kept_since, t, 400 * MS) => {
                let by = 50 + below(250);
                let lasting = below(100);
                match scenario.exclusive() || below(2) == 0 {
                    true => proxy.delay(ms(by)),
                    false => proxy.delay_requests(ms(by)),
                }
                delayed = Some(now + ms(lasting));
                faults.slowdowns.push((t, t + (lasting + by + 20) * MS));
                report.delays += 1;
            }
            _ => {}
        }
    }
    for slot in &slots {
        if let Some((_, since)) = slot.paused {
            signal(&slot.child, libc::SIGCONT);
            faults.pauses.push((slot.pid, since, now_ns()));
        }
    }
    proxy.pass();
    proxy.cancel_hold();
    // Workers stop at the deadline, after their current cycle.
    let grace = Instant::now() + Duration::from_secs(10);
    for slot in &mut slots {
        while slot.child.try_wait().unwrap().is_none() {
            if Instant::now() >= grace {
                signal(&slot.child, libc::SIGKILL);
                let _ = slot.child.wait();
                break;
            }
            std::thread::sleep(ms(10));
        }
    }
    report.cuts = proxy.cuts();
    report.held = proxy.replies_held();
    report.refused = proxy.refused();
    faults.held = proxy
        .holds()
        .into_iter()
        .map(|(at, by)| (on_clock(at), on_clock(at + by)))
        .collect();
    faults.stalls = stalls.stop();
    report.stalls = faults.stalls.len();
    faults.write(&dir.join("controller.log"));
    check(&logs, &faults, &mut report);
    // The workers' logs are kept only when they show a violation (or
    // HISTORY_KEEP_LOGS is set).
    if report.violations.is_empty() && std::env::var_os("HISTORY_KEEP_LOGS").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        println!(
            "history ({}): the workers' logs are in {}",
            scenario.name(),
            dir.display()
        );
    }
    report
}

// --------------------------------------------------------------- checker

/// One grant and what was asserted of it (times in ns).
#[derive(Debug, Clone)]
struct Belief {
    grant: String,
    kind: Kind,
    /// Before the call that granted it.
    called: u64,
    /// After it returned true.
    start: u64,
    /// The last assertion (`start` when there was none).
    end: u64,
    fence: i64,
}

impl Belief {
    /// Believed during a time of its own (asserted after its grant).
    fn lasted(&self) -> bool {
        self.end > self.start
    }
}

impl std::fmt::Display for Belief {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.kind {
            Kind::Write => "write",
            Kind::Read => "read",
            Kind::Permit => "permit",
        };
        write!(
            f,
            "{} ({kind}, called at {}, believed from {} to {})",
            self.grant, self.called, self.start, self.end
        )
    }
}

/// A call that said whether a hold was ours.
#[derive(Debug)]
struct Said {
    before: u64,
    after: u64,
    /// None: an error.
    ours: Option<bool>,
    what: String,
}

/// A grant with everything logged of it.
#[derive(Debug)]
struct Hold {
    belief: Belief,
    pid: u32,
    /// The lock's (or semaphore's) name.
    key: String,
    /// Its lease (ns).
    ttl: u64,
    renewed: bool,
    /// Intents: before, what.
    intents: Vec<(u64, String)>,
    said: Vec<Said>,
    /// A watched key: times it still held the token.
    seen: Vec<u64>,
    watched: bool,
    /// Redis's owner of the key just after the acquire returned
    /// ([`look_at_return`]): when it was read, and whether another holder.
    looked: Option<(u64, bool)>,
}

impl Hold {
    fn long(&self) -> bool {
        self.ttl >= (LONG_TTL * 1000.0) as u64 * MS
    }

    /// The first call that ends the hold (release, promotion, demotion),
    /// by its intent.
    fn ending(&self) -> u64 {
        self.intents
            .iter()
            .filter(|(_, what)| !what.starts_with('f'))
            .map(|&(at, _)| at)
            .min()
            .unwrap_or(u64::MAX)
    }

    /// Until when Redis keeps the hold for sure, as of `at`: its ttl from
    /// the call that won it, or a `refresh($ttl)` sent by `at` (the call at
    /// `at` included: a refresh that shortens the lease may find it over
    /// when its reply comes late) from its send if that ends sooner, less
    /// [`SLACK`].
    fn kept_until(&self, at: u64) -> u64 {
        self.intents
            .iter()
            .filter(|&&(before, _)| before <= at)
            .filter_map(|(before, what)| {
                Some(before + what.strip_prefix('f')?.parse::<u64>().ok()? * MS)
            })
            .fold(self.belief.called + self.ttl, u64::min)
            .saturating_sub(SLACK)
    }

    /// The kept interval's end: kept until then, unless ended before.
    fn kept_end(&self) -> u64 {
        self.kept_until(u64::MAX).min(self.ending())
    }

    /// The calls that said whether it was ours, up to the first that ends
    /// it.
    fn statements(&self) -> impl Iterator<Item = &Said> {
        let ending = self.ending();
        self.said.iter().filter(move |s| s.before <= ending)
    }
}

/// A first acquire: called, its wait (ms), and when it returned with what.
#[derive(Debug, Default)]
struct First {
    called: u64,
    /// Its wait (ns).
    wait: u64,
    returned: Option<(u64, String)>,
}

fn ms_between(from: u64, to: u64) -> i64 {
    (to as i64 - from as i64) / MS as i64
}

/// Reads the logs and checks the beliefs and kept intervals as the
/// scenario requires, and what the controller's faults must not break.
fn check(logs: &[PathBuf], faults: &Faults, report: &mut Report) {
    let mut holds: HashMap<String, Hold> = HashMap::new();
    let mut firsts: HashMap<u32, First> = HashMap::new();
    for log in logs {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        for line in text.lines() {
            parse_line(line, &mut holds, &mut firsts, report);
        }
    }
    report.grants = holds.len();
    for hold in holds.values_mut() {
        hold.said.sort_by_key(|s| s.before);
        hold.intents.sort_unstable();
    }
    let mut by_start: Vec<&Hold> = holds.values().collect();
    by_start.sort_by_key(|h| h.belief.start);
    let mut keys: Vec<&str> = by_start.iter().map(|h| h.key.as_str()).collect();
    keys.sort_unstable();
    keys.dedup();
    for key in keys {
        let of_key: Vec<&Hold> = by_start.iter().copied().filter(|h| h.key == key).collect();
        check_rules(&of_key, faults, report);
    }
    for hold in &by_start {
        returned_ours(hold, faults, report);
        lease_kept(hold, faults, report);
        renewal_kept(hold, faults, report);
        release_finished(hold, faults, report);
        if hold.long()
            && hold.said.iter().any(|s| {
                s.ours == Some(true)
                    && s.before > hold.belief.start + LONG_MARK_LIFE.as_nanos() as u64
            })
        {
            report.long_past_mark += 1;
        }
    }
    report.long_grants = by_start.iter().filter(|h| h.long()).count();
    pauses_checked(&by_start, faults, report);
    first_waits(&firsts, faults, report);
}

/// Truth and tolerance for the holds of one lock (semaphore), in order of
/// their grants' return: the belief intervals (a grant's return counted
/// as an assertion: [`with_return`]), and the kept intervals, obey the
/// scenario's rules.
fn check_rules(holds: &[&Hold], faults: &Faults, report: &mut Report) {
    let beliefs: Vec<Belief> = holds.iter().map(|h| with_return(h, faults)).collect();
    let mut truth = Vec::new();
    let most = match report.scenario {
        Scenario::Lock | Scenario::Long => {
            overlaps(&beliefs, &mut truth);
            fencing_order(&beliefs, &mut truth);
            0
        }
        Scenario::Semaphore => at_most(&beliefs, PERMITS, &mut truth),
        Scenario::ReadWrite => writers_alone(&beliefs, &mut truth),
    };
    report.most_at_once = report.most_at_once.max(most);
    report
        .violations
        .extend(truth.into_iter().map(|v| format!("truth: {v}")));
    let kept: Vec<Belief> = holds
        .iter()
        .zip(&beliefs)
        .map(|(h, b)| {
            let mut b = b.clone();
            b.end = b.end.max(h.kept_end());
            b
        })
        .collect();
    let mut tolerance = Vec::new();
    match report.scenario {
        Scenario::Lock | Scenario::Long => overlaps(&kept, &mut tolerance),
        Scenario::Semaphore => {
            at_most(&kept, PERMITS, &mut tolerance);
        }
        Scenario::ReadWrite => {
            writers_alone(&kept, &mut tolerance);
        }
    }
    report.violations.extend(
        tolerance
            .into_iter()
            .map(|v| format!("tolerance (kept intervals, believed to = kept to): {v}")),
    );
}

/// A grant's belief, its return counted as an assertion: `acquire()` says
/// true only for a hold that is ours when the reply that proves it is read
/// (a reply read after the lease it proves ended never counts), and it
/// returns a moment later, so the hold was ours at its return (a belief
/// of one nanosecond there, at least). Unless its process was paused, or
/// the machine stalled, between the call and the return: the lease may
/// have ended between the reply and the return. (A waiter handed the lock
/// whose top-up reply came after the lease it set: at da6b638 its
/// `acquire()` returned true while another held the lock.)
fn with_return(hold: &Hold, faults: &Faults) -> Belief {
    let mut b = hold.belief.clone();
    let (from, to) = (b.called, b.start);
    let stalled = faults.stalls.iter().any(|&(a, z)| a < to && z > from);
    if faults.paused(hold.pid, from, to) == 0 && !stalled {
        b.end = b.end.max(b.start + 1);
    }
    b
}

/// Reads one log line into `holds`, `firsts` and the report's counts.
fn parse_line(
    line: &str,
    holds: &mut HashMap<String, Hold>,
    firsts: &mut HashMap<u32, First>,
    report: &mut Report,
) {
    let fields: Vec<&str> = line.split(' ').collect();
    let num = |s: &str| s.parse::<u64>().ok();
    match fields[..] {
        ["G", grant, called, at, fence, kind, how, ttl, renewed, key] => {
            let (Some(called), Some(at), Ok(fence), Some(kind), Some(ttl)) = (
                num(called),
                num(at),
                fence.parse::<i64>(),
                Kind::parse(kind),
                num(ttl),
            ) else {
                return;
            };
            match kind {
                Kind::Read => report.reads += 1,
                Kind::Write => report.writes += 1,
                Kind::Permit => {}
            }
            match how {
                "promote" => report.promotions += 1,
                "demote" => report.demotions += 1,
                _ => {}
            }
            let pid = grant
                .split('.')
                .next()
                .and_then(|p| p.parse().ok())
                .unwrap_or(0);
            holds.insert(
                grant.to_owned(),
                Hold {
                    belief: Belief {
                        grant: grant.to_owned(),
                        kind,
                        called,
                        start: at,
                        end: at,
                        fence,
                    },
                    pid,
                    key: key.to_owned(),
                    ttl: ttl * MS,
                    renewed: renewed == "1",
                    intents: Vec::new(),
                    said: Vec::new(),
                    seen: Vec::new(),
                    watched: false,
                    looked: None,
                },
            );
        }
        ["B", grant, before, what] => {
            if let (Some(hold), Some(before)) = (holds.get_mut(grant), num(before)) {
                if let Some(ttl) = what.strip_prefix('f').and_then(num)
                    && ttl * MS < hold.ttl
                {
                    report.shortened += 1;
                }
                hold.intents.push((before, what.to_owned()));
            }
        }
        ["C", grant, before, after, said, what] => {
            let (Some(hold), Some(before), Some(after)) =
                (holds.get_mut(grant), num(before), num(after))
            else {
                return;
            };
            let ours = match said {
                "1" => Some(true),
                "0" => Some(false),
                _ => None,
            };
            if ours == Some(true) {
                report.assertions += 1;
                hold.belief.end = hold.belief.end.max(before);
            }
            if what == "rs" {
                report.restore_checks += 1;
            }
            hold.said.push(Said {
                before,
                after,
                ours,
                what: what.to_owned(),
            });
        }
        ["O", grant, _, after, said] => {
            if let (Some(hold), Some(after)) = (holds.get_mut(grant), num(after)) {
                report.looked += 1;
                hold.looked = Some((after, said == "0"));
            }
        }
        ["S", grant, at] => {
            if let (Some(hold), Some(at)) = (holds.get_mut(grant), num(at)) {
                hold.watched = true;
                hold.seen.push(at);
            }
        }
        ["K", grant, _] => {
            if let Some(hold) = holds.get_mut(grant) {
                hold.watched = true;
            }
        }
        ["Q", pid, called, wait] => {
            if let (Some(pid), Some(called), Some(wait)) =
                (pid.parse().ok(), num(called), num(wait))
            {
                let first = firsts.entry(pid).or_default();
                first.called = called;
                first.wait = wait * MS;
            }
        }
        ["q", pid, _, after, ..] => {
            if let (Some(pid), Some(after)) = (pid.parse().ok(), num(after)) {
                let said = fields[4..].join(" ");
                firsts.entry(pid).or_default().returned = Some((after, said));
            }
        }
        ["N", "promote"] => report.refused_promotions += 1,
        ["N", "demote"] => report.refused_demotions += 1,
        ["F"] => report.forks += 1,
        ["E", ..] => report.errors += 1,
        ["V", ..] => report.violations.push(line[2..].to_owned()),
        _ => {}
    }
}

/// Truth at a grant's return: the key read on a direct connection just
/// after the acquire returned ([`look_at_return`]) names no other holder,
/// unless the process was paused, or the machine stalled, from the call
/// to that read (the lease may have ended after the reply that proved it).
fn returned_ours(hold: &Hold, faults: &Faults, report: &mut Report) {
    let Some((read, other)) = hold.looked else {
        return;
    };
    let (from, to) = (hold.belief.called, read);
    let stalled = faults.stalls.iter().any(|&(a, z)| a < to && z > from);
    if other && faults.paused(hold.pid, from, to) == 0 && !stalled {
        report.violations.push(format!(
            "truth: {} returned true, and Redis named another holder when read at {read}",
            hold.belief
        ));
    }
}

/// Lease kept / pause tolerance: within its kept interval, no call says a
/// hold is not ours.
fn lease_kept(hold: &Hold, faults: &Faults, report: &mut Report) {
    let b = &hold.belief;
    for said in hold.statements() {
        let kept = hold.kept_until(said.before);
        if said.after > kept {
            continue;
        }
        report.kept_checks += 1;
        if said.ours != Some(false) {
            continue;
        }
        let paused: Vec<String> = faults
            .pauses_of(hold.pid)
            .filter(|&(from, to)| from >= b.start && to <= said.before)
            .map(|(from, to)| format!("{from} to {to}"))
            .collect();
        let check = if paused.is_empty() {
            "lease kept".to_owned()
        } else {
            format!("pause tolerance (paused {})", paused.join(", "))
        };
        report.violations.push(format!(
            "{check}: {b}, ttl {} ms: `{}` called at {} said the hold was not ours \
             {} ms before its kept interval ended (at {kept})",
            hold.ttl / MS,
            said.what,
            said.before,
            ms_between(said.after, kept),
        ));
        return;
    }
}

/// Pauses of a holder that ended within its kept interval, whose next call
/// about the hold came within it too (and so was checked by
/// [`lease_kept`]).
fn pauses_checked(holds: &[&Hold], faults: &Faults, report: &mut Report) {
    let mut by_pid: HashMap<u32, Vec<&Hold>> = HashMap::new();
    for hold in holds {
        by_pid.entry(hold.pid).or_default().push(hold);
    }
    for &(pid, from, to) in &faults.pauses {
        let Some(mine) = by_pid.get(&pid) else {
            continue;
        };
        let Some(hold) = mine
            .iter()
            .find(|h| h.belief.start <= from && from < h.kept_end() && to < h.kept_until(to))
        else {
            continue;
        };
        let next = hold.statements().find(|s| s.before >= to);
        if next.is_some_and(|s| s.ours.is_some() && s.after <= hold.kept_until(s.before)) {
            report.pauses_checked += 1;
        }
    }
}

/// Renewal: an auto-renewed hold of the long ttl is not found lost while
/// its renewals could reach Redis (once due: 0.4 s in which nothing kept
/// them from it).
fn renewal_kept(hold: &Hold, faults: &Faults, report: &mut Report) {
    if !(hold.renewed && hold.long() && faults.workers.contains(&hold.pid)) {
        return;
    }
    let b = &hold.belief;
    let past_ttl = |s: &Said| s.after > hold.kept_until(s.before);
    if hold
        .statements()
        .any(|s| s.ours == Some(true) && past_ttl(s))
    {
        report.renewed_past_ttl += 1;
    }
    let Some(lost) = hold
        .statements()
        .find(|s| s.ours == Some(false) && past_ttl(s))
    else {
        return;
    };
    // A shorter lease set by the holder: renewals keep that one, which
    // faults outlast.
    if hold
        .intents
        .iter()
        .filter(|(at, _)| *at <= lost.before)
        .filter_map(|(_, what)| what.strip_prefix('f')?.parse::<u64>().ok())
        .any(|ttl| ttl * MS < hold.ttl)
    {
        return;
    }
    // The lease ended between the last call that said it was ours and
    // this one; two thirds of the ttl before, its renewal was due, and one
    // without an answer is sent again within 0.1 s: a stretch of 0.4 s in
    // which nothing kept them from Redis renews it.
    let last_ours = hold
        .statements()
        .filter(|s| s.ours == Some(true) && s.before < lost.before)
        .map(|s| s.before)
        .max()
        .unwrap_or(b.start);
    let from = lost.after.saturating_sub(hold.ttl * 2 / 3);
    let to = last_ours.saturating_sub(200 * MS);
    let (free_from, free) = faults.free_stretch(hold.pid, from, to);
    if free >= 400 * MS {
        report.violations.push(format!(
            "renewal: {b}, ttl {} ms, auto-renewed: `{}` called at {} said the hold was not \
             ours, though its renewals were due and nothing kept them from Redis for {} ms \
             from {free_from} (the last call that said it was ours: at {last_ours})",
            hold.ttl / MS,
            lost.what,
            lost.before,
            free / MS,
        ));
    }
}

/// Pending release: the key of a write hold whose release got no answer
/// is gone within 1 s of the server answering again (of the process's own
/// time: not counting its pauses), plus 0.3 s for requests held up.
fn release_finished(hold: &Hold, faults: &Faults, report: &mut Report) {
    if !hold.watched {
        return;
    }
    report.watched_releases += 1;
    let Some(release) = hold.said.iter().find(|s| s.what == "x" && s.ours.is_none()) else {
        return;
    };
    for &seen in &hold.seen {
        // The server answers again once the refusals are over; the
        // process then has a second of its own time (and requests held up
        // in flight 0.3 s at most) to send the release again.
        let answering = faults
            .refusals
            .iter()
            .filter(|&&(from, to)| from < seen && to > release.before)
            .map(|&(_, to)| to)
            .fold(release.after, u64::max);
        let due = faults.having_run(hold.pid, answering, 1000 * MS) + 300 * MS;
        if seen > due {
            let last = hold.seen.iter().copied().max().unwrap_or(seen);
            report.violations.push(format!(
                "pending release: {}: its release called at {} got no answer, and the key \
                 still held its token at {seen}, {} ms after the server answered again \
                 (at {answering}; the process paused {} ms meanwhile), and last at {last} \
                 ({} ms after)",
                hold.belief,
                release.before,
                ms_between(answering, seen),
                faults.paused(hold.pid, answering, seen) / MS,
                ms_between(answering, last),
            ));
            return;
        }
    }
}

/// First wait: a fresh worker's first acquire during which every
/// connection was dropped returns without an error, unless requests were
/// held up or refused or the worker paused meanwhile.
fn first_waits(firsts: &HashMap<u32, First>, faults: &Faults, report: &mut Report) {
    for (&pid, first) in firsts {
        let Some((returned, said)) = &first.returned else {
            continue;
        };
        // A drop in the wait's last 100 ms leaves no time to send its
        // last step again: not counted.
        let last = (first.called + first.wait).saturating_sub(100 * MS);
        let Some(&dropped) = faults
            .drops
            .iter()
            .find(|&&d| d > first.called && d < *returned && d < last)
        else {
            continue;
        };
        report.first_wait_drops += 1;
        // Requests held up, or scripts refused (a wait's top-up and
        // clean-up run the refresh and release scripts).
        let excused = faults
            .slowdowns
            .iter()
            .chain(&faults.refusals)
            .any(|&(from, to)| from < *returned && to > first.called)
            || faults.paused(pid, first.called, *returned) > 0;
        if said.starts_with('e') && !excused {
            report.violations.push(format!(
                "first wait: process {pid}'s first acquire, called at {}, failed at {returned} \
                 ({said}); every connection was dropped at {dropped}, {} ms after the call",
                first.called,
                ms_between(first.called, dropped),
            ));
        }
    }
}

/// Belief intervals of different grants that overlap, and grant windows
/// inside another grant's belief interval.
fn overlaps(beliefs: &[Belief], violations: &mut Vec<String>) {
    // The belief reaching furthest among those that started earlier.
    let mut reach: Option<&Belief> = None;
    for b in beliefs {
        if let Some(r) = reach {
            let inside = b.called > r.start && b.start < r.end;
            if b.start < r.end && (b.end > b.start || inside) {
                violations.push(format!(
                    "{} (called at {}, returned at {}) believed held during {}'s belief ({} to {})",
                    b.grant, b.called, b.start, r.grant, r.start, r.end
                ));
            }
        }
        if reach.is_none_or(|r| b.end > r.end) {
            reach = Some(b);
        }
    }
}

/// Fencing tokens of fenced grants whose order is certain (the earlier
/// returned before the later was called) that do not grow, and fenced
/// grants without one.
fn fencing_order(beliefs: &[Belief], violations: &mut Vec<String>) {
    let fenced: Vec<&Belief> = beliefs.iter().filter(|b| b.fence != UNFENCED).collect();
    let mut by_call = fenced.clone();
    by_call.sort_by_key(|b| b.called);
    // `beliefs` is sorted by return time: walk it as calls come.
    let mut returned = fenced.iter().copied().peekable();
    let mut highest: Option<&Belief> = None;
    for b in by_call {
        while let Some(earlier) = returned.next_if(|e| e.start <= b.called) {
            if highest.is_none_or(|h| earlier.fence > h.fence) {
                highest = Some(earlier);
            }
        }
        if b.fence < 0 {
            violations.push(format!("{} was granted without a fencing token", b.grant));
        }
        if let Some(h) = highest
            && b.fence <= h.fence
        {
            violations.push(format!(
                "{} got fencing token {} after {} had got {}",
                b.grant, b.fence, h.grant, h.fence
            ));
        }
    }
}

/// The sweep line over the belief intervals (open: a belief ending when
/// another starts does not overlap it): every start and end in time order,
/// ends first at equal times.
struct Sweep<'a> {
    beliefs: &'a [Belief],
    events: Vec<(u64, bool, usize)>,
}

impl<'a> Sweep<'a> {
    fn new(beliefs: &'a [Belief]) -> Self {
        let mut events = Vec::new();
        for (i, b) in beliefs.iter().enumerate().filter(|(_, b)| b.lasted()) {
            events.push((b.start, true, i));
            events.push((b.end, false, i));
        }
        events.sort_unstable();
        Self { beliefs, events }
    }

    /// Walks the events: `on_start` sees each starting belief and those in
    /// force just before it; after every event, `count` says how many of
    /// the beliefs in force matter, a sample kept for [`Samples::least`].
    fn run(
        &self,
        mut on_start: impl FnMut(&Belief, &[usize]),
        count: impl Fn(&[usize]) -> usize,
    ) -> Samples {
        let mut active: Vec<usize> = Vec::new();
        let mut samples = Vec::with_capacity(self.events.len());
        for &(at, starts, i) in &self.events {
            if starts {
                on_start(&self.beliefs[i], &active);
                active.push(i);
            } else {
                active.retain(|&j| j != i);
            }
            samples.push((at, count(&active)));
        }
        Samples(samples)
    }

    fn names(&self, active: &[usize]) -> String {
        active
            .iter()
            .map(|&i| self.beliefs[i].to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A count over time: its value after each event.
struct Samples(Vec<(u64, usize)>);

impl Samples {
    /// The least the count was at any moment from `from` to `to` (taking
    /// every value it passed through at an instant, so never more).
    fn least(&self, from: u64, to: u64) -> usize {
        let first = self.0.partition_point(|&(at, _)| at < from);
        let mut least = if first == 0 { 0 } else { self.0[first - 1].1 };
        for &(at, n) in &self.0[first..] {
            if at > to {
                break;
            }
            least = least.min(n);
        }
        least
    }

    fn most(&self) -> usize {
        self.0.iter().map(|&(_, n)| n).max().unwrap_or(0)
    }
}

/// More than `permits` belief intervals overlapping at some instant, and
/// grants without an assertion made while `permits` others believed they
/// held a permit throughout the call (that grant's permit was theirs at
/// some moment of it). Returns the most intervals overlapping at once.
fn at_most(beliefs: &[Belief], permits: usize, violations: &mut Vec<String>) -> usize {
    let sweep = Sweep::new(beliefs);
    let holders = sweep.run(
        |b, active| {
            if active.len() >= permits {
                violations.push(format!(
                    "{} believed it held a permit while {} others did ({permits} permits): {}",
                    b,
                    active.len(),
                    sweep.names(active)
                ));
            }
        },
        <[usize]>::len,
    );
    for b in beliefs.iter().filter(|b| !b.lasted()) {
        let others = holders.least(b.called, b.start);
        if others >= permits {
            violations.push(format!(
                "{b} was granted a permit while {others} others believed they held one \
                 throughout its call ({permits} permits)"
            ));
        }
    }
    holders.most()
}

/// Write belief intervals overlapping any other belief interval (read or
/// write), and grants without an assertion made while a hold they exclude
/// was believed throughout the call (a write grant: any other; a read
/// grant: a write). Returns the most read intervals overlapping at once.
fn writers_alone(beliefs: &[Belief], violations: &mut Vec<String>) -> usize {
    let sweep = Sweep::new(beliefs);
    let is_write = |i: &usize| beliefs[*i].kind == Kind::Write;
    let any = sweep.run(
        |b, active| {
            let excluded: Vec<usize> = active
                .iter()
                .copied()
                .filter(|i| b.kind == Kind::Write || is_write(i))
                .collect();
            if !excluded.is_empty() {
                violations.push(format!("{b} overlaps {}", sweep.names(&excluded)));
            }
        },
        <[usize]>::len,
    );
    let writers = sweep.run(
        |_, _| {},
        |active| active.iter().filter(|i| is_write(i)).count(),
    );
    let readers = sweep.run(
        |_, _| {},
        |active| active.iter().filter(|i| !is_write(i)).count(),
    );
    for b in beliefs.iter().filter(|b| !b.lasted()) {
        let (excluding, what) = match b.kind {
            Kind::Write => (any.least(b.called, b.start), "a hold"),
            _ => (writers.least(b.called, b.start), "the write hold"),
        };
        if excluding > 0 {
            violations.push(format!(
                "{b} was granted while others believed they held {what} throughout its call"
            ));
        }
    }
    readers.most()
}
