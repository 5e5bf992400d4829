//! The history checker: worker processes take one lock (or one semaphore,
//! or one lock's read and write holds), hold it and let it go, while the
//! controller (this process) pauses them (SIGSTOP/SIGCONT), kills them
//! (SIGKILL, then starts a new one), cuts replies in flight (a fault proxy
//! in front of Redis), and lets leases run out (holds longer than the
//! lease, pauses longer than the lease); workers also fork children that
//! take it themselves. Every worker records what it was told, on the
//! machine's monotonic clock, which every process shares:
//!
//! - a grant: `acquire()` (`acquireRead()`, a promotion, a demotion)
//!   returned true, with the time before the call and the time after it
//!   returned, and the fencing token: the hold became ours at some moment
//!   between the two;
//! - an assertion: `is_acquired()`, `refresh()`, `remaining_ttl()` or
//!   `release()` said the hold was ours, with the time before the call:
//!   it was ours at some moment during the call, so (a hold being one
//!   piece) it was ours from the grant's return until then.
//!
//! A grant's belief interval runs from its return to its last assertion
//! (empty without one). Measured this way, every belief interval lies
//! inside the hold's real ownership whatever pauses hit the worker, if the
//! lock tells the truth. Three scenarios, run side by side, each with its
//! own Redis, proxy and workers:
//!
//! - `lock`: 5 workers on one fenced lock. No two belief intervals of
//!   different grants overlap, no grant's window (call to return) lies
//!   inside another grant's belief interval, and fencing tokens grow
//!   strictly between grants whose order is certain (one returned before
//!   the other was called); a fenced grant without a token is a violation
//!   too.
//! - `semaphore`: 7 workers on one semaphore of [`PERMITS`] permits. At no
//!   instant do more than [`PERMITS`] belief intervals overlap (a sweep
//!   over them), and no grant without an assertion was made while
//!   [`PERMITS`] others believed they held one throughout its call.
//! - `rw`: 6 workers on one lock, taking it to write (`acquire()`) or to
//!   read (`acquire_read()`), promoting read holds to write holds and
//!   demoting write holds to read holds now and then. A write belief
//!   overlaps no other belief (read or write); read beliefs may overlap
//!   each other; no grant without an assertion was made while a belief it
//!   excludes lasted throughout its call.
//!
//! `cargo test --test history` runs a bounded history (HISTORY_SECONDS, 20
//! by default, every scenario at once; HISTORY_SCENARIOS=lock,semaphore,rw
//! picks some); `bash scripts/history.sh` a long one. The same binary is
//! the worker (HISTORY_WORKER set).

mod common;

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::proxy::Proxy;
use common::{RedisServer, fresh_dir, never, unique_key};
use redislock_core::{Lock, LockOptions, OptionValue, Result, Semaphore};

/// The lease of every hold (short, so that faults outlast it).
const TTL: f64 = 0.3;
/// The semaphore scenario's permits (fewer than its workers).
const PERMITS: usize = 3;

/// What the workers of one history take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scenario {
    /// One fenced lock.
    Lock,
    /// One semaphore of [`PERMITS`] permits.
    Semaphore,
    /// One lock's read and write holds.
    ReadWrite,
}

impl Scenario {
    const ALL: [Scenario; 3] = [Scenario::Lock, Scenario::Semaphore, Scenario::ReadWrite];

    fn name(self) -> &'static str {
        match self {
            Scenario::Lock => "lock",
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
            Scenario::Semaphore => 7,
            Scenario::ReadWrite => 6,
        }
    }
}

fn main() {
    if let Ok(spec) = std::env::var("HISTORY_WORKER") {
        worker(&spec);
        return;
    }
    let seconds: u64 = std::env::var("HISTORY_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
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
    for report in &reports {
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
            failed = true;
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

/// How long an acquire may wait.
fn some_wait() -> Duration {
    Duration::from_millis([0, 50, 300, 1000][below(4) as usize])
}

/// How long a hold lasts: mostly short, one in four up to 1.5 leases,
/// which outlives an unrenewed lease.
fn some_hold() -> Duration {
    Duration::from_millis(if below(4) == 0 { below(450) } else { below(40) })
}

// ---------------------------------------------------------------- worker

/// What a worker process (and its forked children) needs to know.
struct Worker {
    url: String,
    key: String,
    renew: bool,
}

/// One worker process: takes the lock (semaphore, read or write hold)
/// again and again until its deadline, appending what it was told to its
/// log. `spec` is `scenario|url|key|log|deadline ns|auto_renew 0/1`.
fn worker(spec: &str) {
    let parts: Vec<&str> = spec.split('|').collect();
    let [scenario, url, key, log, deadline, renew] = parts[..] else {
        panic!("bad worker spec {spec}");
    };
    let scenario = Scenario::parse(scenario).expect("a scenario");
    let deadline: u64 = deadline.parse().unwrap();
    let w = Worker {
        url: url.to_owned(),
        key: key.to_owned(),
        renew: renew == "1",
    };
    let mut log = Log::open(Path::new(log));
    match scenario {
        Scenario::Lock => {
            // Half the workers fenced (a fenced waiter claims a hand-over in
            // a step), half not (an unfenced one enters on the wake-up).
            let fenced = below(2) == 0;
            let mut lock = w.lock(fenced, w.renew);
            while now_ns() < deadline {
                if below(10) == 0 {
                    fork_one_cycle(&w, &mut log);
                    continue;
                }
                cycle(&mut lock, &mut log, fenced);
            }
        }
        Scenario::Semaphore => {
            let mut sem = w.semaphore(w.renew);
            while now_ns() < deadline {
                semaphore_cycle(&w, &mut sem, &mut log, false);
            }
        }
        Scenario::ReadWrite => {
            let mut lock = w.lock(false, w.renew);
            while now_ns() < deadline {
                rw_cycle(&w, &mut lock, &mut log, false);
            }
        }
    }
}

fn options(set: &[(&str, OptionValue)]) -> LockOptions {
    let mut options = LockOptions::default();
    for (name, value) in set.iter().cloned().chain([
        ("retry_delay", OptionValue::Number(0.05)),
        ("read_timeout", OptionValue::Number(0.3)),
        ("connect_timeout", OptionValue::Number(0.3)),
    ]) {
        options.set(name, value).unwrap();
    }
    options
}

impl Worker {
    /// A lock object of its own (read holds refuse fencing).
    fn lock(&self, fencing: bool, renew: bool) -> Lock {
        let options = options(&[
            ("fencing", OptionValue::Bool(fencing)),
            ("reentrant", OptionValue::Bool(false)),
            ("auto_renew", OptionValue::Bool(renew)),
        ]);
        Lock::new(
            self.key.as_bytes().to_vec(),
            TTL,
            std::slice::from_ref(&self.url),
            options,
        )
        .unwrap()
    }

    fn semaphore(&self, renew: bool) -> Semaphore {
        let options = options(&[("auto_renew", OptionValue::Bool(renew))]);
        Semaphore::new(
            self.key.as_bytes().to_vec(),
            PERMITS as i64,
            TTL,
            std::slice::from_ref(&self.url),
            options,
        )
        .unwrap()
    }
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
/// logged.
fn cycle(lock: &mut Lock, log: &mut Log, fenced: bool) {
    let called = now_ns();
    if !won(log, lock.acquire(some_wait(), &never)) {
        return;
    }
    let fence = match fenced {
        true => lock.fencing_token().map_or(-1, |f| f),
        false => UNFENCED,
    };
    let grant = log.grant(called, fence, Kind::Write, "acquire");
    let hold = some_hold();
    let started = Instant::now();
    while started.elapsed() < hold {
        std::thread::sleep(Duration::from_millis(below(25)));
        if !asserted_if(log, &grant, || lock.is_acquired()) {
            break;
        }
    }
    asserted_if(log, &grant, || lock.release());
}

/// Whether an acquire won; one that failed is logged, and the worker
/// pauses before it tries again.
fn won(log: &mut Log, got: Result<bool>) -> bool {
    got.unwrap_or_else(|_| {
        log.line("E");
        std::thread::sleep(Duration::from_millis(20));
        false
    })
}

/// Runs `call` (a check or a release of the hold named `grant`) and logs
/// the assertion, timed from before it, when it says the hold was ours.
fn asserted_if(log: &mut Log, grant: &str, call: impl FnOnce() -> Result<bool>) -> bool {
    let before = now_ns();
    let ours = matches!(call(), Ok(true));
    if ours {
        log.asserted(grant, before);
    }
    ours
}

/// Forks a child that first checks it holds nothing of its parent's, then
/// runs one cycle of its own (as its own process) and exits.
fn fork_one_cycle(w: &Worker, log: &mut Log) {
    in_child(log, |log| {
        let mut lock = w.lock(true, false);
        if lock.token().is_some() {
            log.line("V a forked child believed it held its parent's lock");
        }
        cycle(&mut lock, log, true);
    });
}

/// Runs `body` in a forked child (with a log of its own on the same file)
/// and waits for it.
fn in_child(log: &mut Log, body: impl FnOnce(&mut Log)) {
    // SAFETY: the child runs the lock code (fork-safe: per-process state)
    // and leaves with _exit, whatever happens in `body`.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let mut own = Log::open(&log.path);
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(&mut own)));
        unsafe { libc::_exit(0) };
    }
    if pid > 0 {
        log.line("F");
        let mut status = 0;
        // SAFETY: our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
    }
}

/// One acquire of a permit, hold (checking now and then in the three ways
/// a holder can, forking a child now and then) and release, logged. A
/// forked child's cycle tries once, and forks nothing.
fn semaphore_cycle(w: &Worker, sem: &mut Semaphore, log: &mut Log, child: bool) {
    let wait = if child { Duration::ZERO } else { some_wait() };
    let called = now_ns();
    if !won(log, sem.acquire(wait, &never)) {
        return;
    }
    let grant = log.grant(called, -1, Kind::Permit, "acquire");
    let hold = some_hold();
    let started = Instant::now();
    while started.elapsed() < hold {
        std::thread::sleep(Duration::from_millis(below(25)));
        if !child && below(15) == 0 {
            // While this process holds a permit: the child holds none of
            // it, and takes one of its own beside it.
            in_child(log, |log| {
                if !matches!(sem.is_acquired(), Ok(false)) {
                    log.line("V a forked child believed it held its parent's permit");
                }
                let mut own = w.semaphore(false);
                semaphore_cycle(w, &mut own, log, true);
            });
            continue;
        }
        // One of the three ways a holder can check.
        let ours = asserted_if(log, &grant, || match below(6) {
            0 => sem.refresh(None),
            1 => sem.remaining_ttl().map(|left| left.is_some()),
            _ => sem.is_acquired(),
        });
        if !ours {
            break;
        }
    }
    asserted_if(log, &grant, || sem.release());
}

/// One acquire to read or to write, hold (checking now and then, promoting
/// a read hold or demoting a write hold now and then, forking a child now
/// and then) and release, logged. A promotion or demotion that succeeds is
/// a new grant: the hold before it ends at its last assertion. A forked
/// child's cycle tries once, and forks nothing.
fn rw_cycle(w: &Worker, lock: &mut Lock, log: &mut Log, child: bool) {
    let wait = if child { Duration::ZERO } else { some_wait() };
    let read = below(2) == 0;
    let called = now_ns();
    let got = if read {
        lock.acquire_read(wait, &never)
    } else {
        lock.acquire(wait, &never)
    };
    if !won(log, got) {
        return;
    }
    let mut kind = if read { Kind::Read } else { Kind::Write };
    let mut grant = log.grant(called, -1, kind, "acquire");
    let hold = some_hold();
    let started = Instant::now();
    while started.elapsed() < hold {
        std::thread::sleep(Duration::from_millis(below(25)));
        match below(12) {
            0..=1 if kind == Kind::Read => {
                // Promotion: true once no other reader holds the lock; false
                // leaves the read hold (or finds it gone). Counted as a
                // promotion even when this process had already found its
                // read hold gone (then it is a plain write acquire): either
                // way a new grant, the read hold ending at its last
                // assertion.
                let wait = Duration::from_millis([0, 50, 300][below(3) as usize]);
                let called = now_ns();
                match lock.acquire(wait, &never) {
                    Ok(true) => {
                        grant = log.grant(called, -1, Kind::Write, "promote");
                        kind = Kind::Write;
                    }
                    Ok(false) => log.line("N promote"),
                    Err(_) => {
                        log.line("E");
                        break;
                    }
                }
            }
            2 if kind == Kind::Write => {
                // Demotion: at once; false when the write hold was lost (a
                // lost one found so before is a plain read acquire here,
                // counted as a demotion all the same).
                let called = now_ns();
                match lock.acquire_read(Duration::ZERO, &never) {
                    Ok(true) => {
                        grant = log.grant(called, -1, Kind::Read, "demote");
                        kind = Kind::Read;
                    }
                    Ok(false) => {
                        log.line("N demote");
                        break;
                    }
                    Err(_) => {
                        log.line("E");
                        break;
                    }
                }
            }
            3 if !child => {
                in_child(log, |log| {
                    if !matches!(lock.is_acquired(), Ok(false)) {
                        log.line("V a forked child believed it held its parent's hold");
                    }
                    let mut own = w.lock(false, false);
                    rw_cycle(w, &mut own, log, true);
                });
            }
            _ => {
                let ours = asserted_if(log, &grant, || match below(6) {
                    0 => lock.refresh(None),
                    1 => lock.remaining_ttl().map(|left| left.is_some()),
                    _ => lock.is_acquired(),
                });
                if !ours {
                    break;
                }
            }
        }
    }
    asserted_if(log, &grant, || lock.release());
}

/// A worker's log: one line per event, each written with one `write`, so
/// lines of a process and its children never interleave.
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

    /// Logs a grant of a call made at `called` that returned just now;
    /// returns its name.
    fn grant(&mut self, called: u64, fence: i64, kind: Kind, how: &str) -> String {
        let at = now_ns();
        let grant = grant_name();
        self.line(&format!(
            "G {grant} {called} {at} {fence} {} {how}",
            kind.letter()
        ));
        grant
    }

    /// Logs that `grant`'s hold was ours at some moment after `before`.
    fn asserted(&mut self, grant: &str, before: u64) {
        self.line(&format!("A {grant} {before}"));
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
    /// Times requests were held up in flight.
    delays: usize,
    grants: usize,
    reads: usize,
    writes: usize,
    promotions: usize,
    demotions: usize,
    /// Promotions and demotions tried that returned false.
    refused_promotions: usize,
    refused_demotions: usize,
    assertions: usize,
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
            grants: 0,
            reads: 0,
            writes: 0,
            promotions: 0,
            demotions: 0,
            refused_promotions: 0,
            refused_demotions: 0,
            assertions: 0,
            most_at_once: 0,
            errors: 0,
            violations: Vec::new(),
        }
    }

    fn faults(&self) -> usize {
        self.pauses + self.kills + self.cuts as usize + self.delays
    }

    /// Why the history was too short to mean anything, if it was.
    fn too_short(&self) -> Option<String> {
        if self.grants < 20 || self.faults() < 10 {
            return Some(format!("{} grants, {} faults", self.grants, self.faults()));
        }
        match self.scenario {
            Scenario::Lock => None,
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
            Scenario::Semaphore => format!("semaphore, {PERMITS} permits"),
            Scenario::ReadWrite => "read/write".to_owned(),
        };
        write!(
            f,
            "history ({name}): {} worker processes ({} at a time) and {} forked children, \
             {} pauses, {} kills, {} cut replies",
            self.processes,
            self.scenario.workers(),
            self.forks,
            self.pauses,
            self.kills,
            self.cuts,
        )?;
        if self.scenario != Scenario::Lock {
            write!(f, ", {} times requests held up", self.delays)?;
        }
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
        write!(
            f,
            ", {} assertions, {} intervals checked",
            self.assertions, self.grants
        )?;
        match self.scenario {
            Scenario::Lock => {}
            Scenario::Semaphore => write!(f, ", at most {} holders at once", self.most_at_once)?,
            Scenario::ReadWrite => write!(f, ", at most {} readers at once", self.most_at_once)?,
        }
        write!(
            f,
            ", {} calls failed; {} violations",
            self.errors,
            self.violations.len()
        )
    }
}

fn spawn_worker(
    scenario: Scenario,
    url: &str,
    key: &str,
    log: &Path,
    deadline: u64,
    renew: bool,
) -> Child {
    let spec = format!(
        "{}|{url}|{key}|{}|{deadline}|{}",
        scenario.name(),
        log.display(),
        u8::from(renew)
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

fn controller(scenario: Scenario, length: Duration) -> Report {
    let server = RedisServer::start();
    let proxy = Proxy::start(&server);
    let dir = fresh_dir(&format!("history-{}", scenario.name()));
    let key = String::from_utf8(unique_key(&format!("history-{}", scenario.name()))).unwrap();
    let url = proxy.url();
    let end = now_ns() + length.as_nanos() as u64;
    let workers_at_once = scenario.workers();
    let mut report = Report::new(scenario);
    let mut logs = Vec::new();
    let mut workers: Vec<Child> = Vec::new();
    let start = |report: &mut Report, logs: &mut Vec<PathBuf>| {
        let n = logs.len();
        let log = dir.join(format!("worker-{n}.log"));
        logs.push(log.clone());
        report.processes += 1;
        spawn_worker(scenario, &url, &key, &log, end, n.is_multiple_of(3))
    };
    for _ in 0..workers_at_once {
        let child = start(&mut report, &mut logs);
        workers.push(child);
    }
    // Paused workers and when they go on; when requests pass again.
    let mut paused: Vec<(usize, Instant)> = Vec::new();
    let mut delayed: Option<Instant> = None;
    while now_ns() < end {
        std::thread::sleep(Duration::from_millis(20 + below(80)));
        let now = Instant::now();
        paused.retain(|&(i, until)| {
            if now >= until {
                signal(&workers[i], libc::SIGCONT);
                false
            } else {
                true
            }
        });
        if delayed.is_some_and(|until| now >= until) {
            proxy.pass();
            delayed = None;
        }
        match below(10) {
            0..=3 => {
                let i = below(workers_at_once as u64) as usize;
                if !paused.iter().any(|&(p, _)| p == i) {
                    signal(&workers[i], libc::SIGSTOP);
                    // Up to two leases: some pauses outlast the lease.
                    paused.push((i, now + Duration::from_millis(below(600))));
                    report.pauses += 1;
                }
            }
            4 => {
                let i = below(workers_at_once as u64) as usize;
                signal(&workers[i], libc::SIGKILL);
                let _ = workers[i].wait();
                paused.retain(|&(p, _)| p != i);
                report.kills += 1;
                workers[i] = start(&mut report, &mut logs);
            }
            5..=6 => proxy.cut_mid_reply(),
            // Requests held up in flight (the server runs them later than
            // their senders built them) for a while: the semaphore's and
            // read holds' scripts judge leases by the clock reading in the
            // request.
            7 if scenario != Scenario::Lock && delayed.is_none() => {
                proxy.delay_requests(Duration::from_millis(50 + below(250)));
                delayed = Some(now + Duration::from_millis(below(100)));
                report.delays += 1;
            }
            _ => {}
        }
    }
    for &(i, _) in &paused {
        signal(&workers[i], libc::SIGCONT);
    }
    // Workers stop at the deadline, after their current cycle.
    let grace = Instant::now() + Duration::from_secs(10);
    for child in &mut workers {
        while child.try_wait().unwrap().is_none() {
            if Instant::now() >= grace {
                signal(child, libc::SIGKILL);
                let _ = child.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    report.cuts = proxy.cuts();
    check(&logs, &mut report);
    // The workers' logs are kept only when they show a violation.
    if report.violations.is_empty() {
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

/// One grant and what was asserted of it (times in ns).
#[derive(Debug)]
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

/// Reads the logs and checks the beliefs as the scenario requires.
fn check(logs: &[PathBuf], report: &mut Report) {
    let mut beliefs: HashMap<String, Belief> = HashMap::new();
    for log in logs {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        for line in text.lines() {
            let fields: Vec<&str> = line.split(' ').collect();
            match fields[..] {
                ["G", grant, called, at, fence, kind, how] => {
                    let at = at.parse().unwrap();
                    let kind = Kind::parse(kind).expect("a kind of hold");
                    match (kind, how) {
                        (Kind::Read, _) => report.reads += 1,
                        (Kind::Write, _) => report.writes += 1,
                        _ => {}
                    }
                    match how {
                        "promote" => report.promotions += 1,
                        "demote" => report.demotions += 1,
                        _ => {}
                    }
                    beliefs.insert(
                        grant.to_owned(),
                        Belief {
                            grant: grant.to_owned(),
                            kind,
                            called: called.parse().unwrap(),
                            start: at,
                            end: at,
                            fence: fence.parse().unwrap(),
                        },
                    );
                }
                ["A", grant, at] => {
                    report.assertions += 1;
                    if let Some(b) = beliefs.get_mut(grant) {
                        b.end = b.end.max(at.parse().unwrap());
                    }
                }
                ["N", "promote"] => report.refused_promotions += 1,
                ["N", "demote"] => report.refused_demotions += 1,
                ["F"] => report.forks += 1,
                ["E"] => report.errors += 1,
                ["V", ..] => report.violations.push(line[2..].to_owned()),
                _ => {}
            }
        }
    }
    let mut beliefs: Vec<Belief> = beliefs.into_values().collect();
    report.grants = beliefs.len();
    beliefs.sort_by_key(|b| b.start);
    match report.scenario {
        Scenario::Lock => {
            overlaps(&beliefs, &mut report.violations);
            fencing_order(&beliefs, &mut report.violations);
        }
        Scenario::Semaphore => {
            report.most_at_once = at_most(&beliefs, PERMITS, &mut report.violations);
        }
        Scenario::ReadWrite => {
            report.most_at_once = writers_alone(&beliefs, &mut report.violations);
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
