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
//!   worker paused meanwhile, or another drop came in its last 100 ms or
//!   after its end while its last step was on its way.
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
//!
//! The program's files: this one (the scenarios, the run, what every part
//! shares), `worker.rs` (the worker processes and their cycles),
//! `controller.rs` (the faults, the workers' lives, the report) and
//! `checks.rs` (every grant of the logs against the rules).

mod checks;
#[path = "../common/mod.rs"]
mod common;
mod controller;
mod worker;

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
use redislock_core::testing::protocol::{keys, scripts};
use redislock_core::testing::semaphore_calls::SemKeys;
use redislock_core::{Lock, LockOptions, OptionValue, Result, Semaphore};

use checks::*;
use controller::*;
use worker::*;

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
