//! The history checker: several worker processes take one lock, hold it
//! and let it go, while the controller (this process) pauses them
//! (SIGSTOP/SIGCONT), kills them (SIGKILL, then starts a new one), cuts
//! replies in flight (a fault proxy in front of Redis), and lets leases run
//! out (holds longer than the lease, pauses longer than the lease); workers
//! also fork children that take the lock themselves. Every worker records
//! what the lock told it, on the machine's monotonic clock, which every
//! process shares:
//!
//! - a grant: `acquire()` returned true, with the time before the call and
//!   the time after it returned, and the fencing token: the lock became
//!   ours at some moment between the two;
//! - an assertion: `is_acquired()` or `release()` returned true, with the
//!   time before the call: the lock was ours at some moment during the
//!   call, so (a hold being one piece) it was ours from the grant's return
//!   until then.
//!
//! A grant's belief interval runs from its return to its last assertion
//! (empty without one). Measured this way, every belief interval lies
//! inside the hold's real ownership whatever pauses hit the worker, if the
//! lock tells the truth. The check: no two belief intervals of different
//! grants overlap, no grant's window (call to return) lies inside another
//! grant's belief interval, and fencing tokens grow strictly between grants
//! whose order is certain (one returned before the other was called); a
//! fenced grant without a token is a violation too.
//!
//! `cargo test --test history` runs a bounded history (HISTORY_SECONDS, 20
//! by default); `bash scripts/history.sh` a long one. The same binary is
//! the worker (HISTORY_WORKER set).

mod common;

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use common::proxy::Proxy;
use common::{RedisServer, fresh_dir, never, unique_key};
use redislock_core::{Lock, LockOptions, OptionValue};

/// The lease of every hold (short, so that faults outlast it).
const TTL: f64 = 0.3;
/// Worker processes alive at once.
const WORKERS: usize = 5;

fn main() {
    if let Ok(spec) = std::env::var("HISTORY_WORKER") {
        worker(&spec);
        return;
    }
    let seconds: u64 = std::env::var("HISTORY_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let report = controller(Duration::from_secs(seconds));
    println!("{report}");
    if !report.violations.is_empty() {
        for v in &report.violations {
            eprintln!("violation: {v}");
        }
        std::process::exit(1);
    }
    if report.grants < 20 || report.faults() < 10 {
        eprintln!("history too short to mean anything");
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

// ---------------------------------------------------------------- worker

/// One worker process: takes the lock again and again until its deadline,
/// appending what the lock told it to its log. `spec` is
/// `url|key|log|deadline ns|auto_renew 0/1`.
fn worker(spec: &str) {
    let parts: Vec<&str> = spec.split('|').collect();
    let [url, key, log, deadline, renew] = parts[..] else {
        panic!("bad worker spec {spec}");
    };
    let deadline: u64 = deadline.parse().unwrap();
    let renew = renew == "1";
    let mut log = Log::open(Path::new(log));
    let mut lock = new_lock(url, key, renew);
    let mut seq = 0u64;
    while now_ns() < deadline {
        seq += 1;
        if below(10) == 0 {
            fork_one_cycle(url, key, &mut log, seq);
            continue;
        }
        cycle(&mut lock, &mut log, seq);
    }
}

fn new_lock(url: &str, key: &str, renew: bool) -> Lock {
    let mut options = LockOptions::default();
    for (name, value) in [
        ("fencing", OptionValue::Bool(true)),
        ("reentrant", OptionValue::Bool(false)),
        ("auto_renew", OptionValue::Bool(renew)),
        ("retry_delay", OptionValue::Number(0.05)),
        ("read_timeout", OptionValue::Number(0.3)),
        ("connect_timeout", OptionValue::Number(0.3)),
    ] {
        options.set(name, value).unwrap();
    }
    Lock::new(key.as_bytes().to_vec(), TTL, &[url.to_owned()], options).unwrap()
}

/// One acquire, hold (checking now and then) and release, logged.
fn cycle(lock: &mut Lock, log: &mut Log, seq: u64) {
    let wait = [0, 50, 300, 1000][below(4) as usize];
    let grant = format!("{}.{seq}", std::process::id());
    let called = now_ns();
    match lock.acquire(Duration::from_millis(wait), &never) {
        Ok(true) => {
            let at = now_ns();
            let fence = lock.fencing_token().map_or(-1, |f| f);
            log.line(&format!("G {grant} {called} {at} {fence}"));
        }
        Ok(false) => return,
        Err(_) => {
            log.line("E");
            std::thread::sleep(Duration::from_millis(20));
            return;
        }
    }
    // Mostly short holds; one in four up to 1.5 leases, which outlives an
    // unrenewed lease.
    let hold = Duration::from_millis(if below(4) == 0 { below(450) } else { below(40) });
    let started = Instant::now();
    while started.elapsed() < hold {
        std::thread::sleep(Duration::from_millis(below(25)));
        let before = now_ns();
        match lock.is_acquired() {
            Ok(true) => log.line(&format!("A {grant} {before}")),
            _ => break,
        }
    }
    let before = now_ns();
    if let Ok(true) = lock.release() {
        log.line(&format!("A {grant} {before}"));
    }
}

/// Forks a child that first checks it holds nothing of its parent's, then
/// runs one cycle of its own (as its own process) and exits.
fn fork_one_cycle(url: &str, key: &str, log: &mut Log, seq: u64) {
    // SAFETY: the child runs the lock code (fork-safe: per-process state)
    // and leaves with _exit.
    let pid = unsafe { libc::fork() };
    if pid > 0 {
        log.line("F");
    }
    if pid == 0 {
        let mut log = Log::open(&log.path);
        let mut lock = new_lock(url, key, false);
        if lock.token().is_some() {
            log.line("V a forked child believed it held its parent's lock");
        }
        cycle(&mut lock, &mut log, seq);
        unsafe { libc::_exit(0) };
    }
    if pid > 0 {
        let mut status = 0;
        // SAFETY: our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
    }
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
}

// ------------------------------------------------------------ controller

/// What a history run did and found.
#[derive(Debug, Default)]
struct Report {
    processes: usize,
    forks: usize,
    pauses: usize,
    kills: usize,
    cuts: u32,
    grants: usize,
    assertions: usize,
    errors: usize,
    violations: Vec<String>,
}

impl Report {
    fn faults(&self) -> usize {
        self.pauses + self.kills + self.cuts as usize
    }
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "history: {} worker processes and {} forked children, {} pauses, {} kills, \
             {} cut replies; {} grants, {} assertions, {} intervals checked, {} calls failed; \
             {} violations",
            self.processes,
            self.forks,
            self.pauses,
            self.kills,
            self.cuts,
            self.grants,
            self.assertions,
            self.grants,
            self.errors,
            self.violations.len()
        )
    }
}

fn spawn_worker(url: &str, key: &str, log: &Path, deadline: u64, renew: bool) -> Child {
    let spec = format!(
        "{url}|{key}|{}|{deadline}|{}",
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

fn controller(length: Duration) -> Report {
    let server = RedisServer::start();
    let proxy = Proxy::start(&server);
    let dir = fresh_dir("history");
    let key = String::from_utf8(unique_key("history")).unwrap();
    let url = proxy.url();
    let end = now_ns() + length.as_nanos() as u64;
    let mut report = Report::default();
    let mut logs = Vec::new();
    let mut workers: Vec<Child> = Vec::new();
    let start = |report: &mut Report, logs: &mut Vec<PathBuf>| {
        let n = logs.len();
        let log = dir.join(format!("worker-{n}.log"));
        logs.push(log.clone());
        report.processes += 1;
        spawn_worker(&url, &key, &log, end, n.is_multiple_of(3))
    };
    for _ in 0..WORKERS {
        let child = start(&mut report, &mut logs);
        workers.push(child);
    }
    // Paused workers and when they go on.
    let mut paused: Vec<(usize, Instant)> = Vec::new();
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
        match below(10) {
            0..=3 => {
                let i = below(WORKERS as u64) as usize;
                if !paused.iter().any(|&(p, _)| p == i) {
                    signal(&workers[i], libc::SIGSTOP);
                    // Up to two leases: some pauses outlast the lease.
                    paused.push((i, now + Duration::from_millis(below(600))));
                    report.pauses += 1;
                }
            }
            4 => {
                let i = below(WORKERS as u64) as usize;
                signal(&workers[i], libc::SIGKILL);
                let _ = workers[i].wait();
                paused.retain(|&(p, _)| p != i);
                report.kills += 1;
                workers[i] = start(&mut report, &mut logs);
            }
            5..=6 => proxy.cut_mid_reply(),
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
        println!("history: the workers' logs are in {}", dir.display());
    }
    report
}

/// One grant and what was asserted of it (times in ns).
#[derive(Debug)]
struct Belief {
    grant: String,
    /// Before `acquire()` was called.
    called: u64,
    /// After it returned true.
    start: u64,
    /// The last assertion (`start` when there was none).
    end: u64,
    fence: i64,
}

/// Reads the logs and checks the beliefs against each other and the
/// fencing tokens.
fn check(logs: &[PathBuf], report: &mut Report) {
    let mut beliefs: HashMap<String, Belief> = HashMap::new();
    for log in logs {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        for line in text.lines() {
            let fields: Vec<&str> = line.split(' ').collect();
            match fields[..] {
                ["G", grant, called, at, fence] => {
                    let at = at.parse().unwrap();
                    beliefs.insert(
                        grant.to_owned(),
                        Belief {
                            grant: grant.to_owned(),
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
    overlaps(&beliefs, &mut report.violations);
    fencing_order(&beliefs, &mut report.violations);
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

/// Fencing tokens of grants whose order is certain (the earlier returned
/// before the later was called) that do not grow, and grants without one.
fn fencing_order(beliefs: &[Belief], violations: &mut Vec<String>) {
    let mut by_call: Vec<&Belief> = beliefs.iter().collect();
    by_call.sort_by_key(|b| b.called);
    // `beliefs` is sorted by return time: walk it as calls come.
    let mut returned = beliefs.iter().peekable();
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
