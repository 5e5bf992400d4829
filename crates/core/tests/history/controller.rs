//! The controller of the history checker: starts the workers, pauses, kills and cuts them off (the faults), and reports what a run did.

use super::*;

/// What a history run did and found.
#[derive(Debug)]
pub(crate) struct Report {
    pub(crate) scenario: Scenario,
    pub(crate) processes: usize,
    pub(crate) forks: usize,
    pub(crate) pauses: usize,
    pub(crate) kills: usize,
    pub(crate) cuts: u32,
    /// Times requests or replies were held up in flight.
    pub(crate) delays: usize,
    /// Replies held back (renewals and refreshes of the long ttl).
    pub(crate) held: u32,
    /// Windows in which renewals, refreshes and releases were refused,
    /// and the requests refused.
    pub(crate) refusals: usize,
    pub(crate) refused: u32,
    /// Long holds whose renewals were refused for a while.
    pub(crate) renewals_refused: usize,
    /// Times a short hold's top-up (or renewal) reply was armed to be held
    /// back past its ttl.
    pub(crate) short_holds: usize,
    /// Times a release request was armed to be held up in flight past the
    /// releaser's read timeout (lock).
    pub(crate) late_releases: usize,
    /// Tokens of holds found not ours at their release, restored with
    /// `auto_renew` and asked about.
    pub(crate) restore_checks: usize,
    /// Write grants whose key was read on a direct connection at their
    /// return.
    pub(crate) looked: usize,
    /// Stretches the machine was too busy to run the probe thread
    /// ([`Faults::stalls`]).
    pub(crate) stalls: usize,
    /// Every connection dropped while a fresh worker was in its first
    /// wait; first waits found to span such a drop.
    pub(crate) drops: usize,
    pub(crate) first_wait_drops: usize,
    /// Batches of [`DEPARTED`] departed waiters put at the queue's head.
    pub(crate) departed: usize,
    pub(crate) grants: usize,
    /// Grants of the long ttl; those checked ours past a hand-over mark's
    /// life.
    pub(crate) long_grants: usize,
    pub(crate) long_past_mark: usize,
    pub(crate) reads: usize,
    pub(crate) writes: usize,
    pub(crate) promotions: usize,
    pub(crate) demotions: usize,
    /// Promotions and demotions tried that returned false.
    pub(crate) refused_promotions: usize,
    pub(crate) refused_demotions: usize,
    pub(crate) assertions: usize,
    /// Checks that fell within the hold's kept interval, and pauses of a
    /// holder whose next check did.
    pub(crate) kept_checks: usize,
    pub(crate) pauses_checked: usize,
    /// `refresh()` calls with a ttl shorter than the hold's.
    pub(crate) shortened: usize,
    /// Auto-renewed long holds checked after their first ttl.
    pub(crate) renewed_past_ttl: usize,
    /// Releases without an answer whose key was watched.
    pub(crate) watched_releases: usize,
    /// Most belief intervals overlapping at once (semaphore: holders; rw:
    /// readers).
    pub(crate) most_at_once: usize,
    pub(crate) errors: usize,
    pub(crate) violations: Vec<String>,
}

impl Report {
    pub(crate) fn new(scenario: Scenario) -> Self {
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

    pub(crate) fn faults(&self) -> usize {
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
    pub(crate) fn too_short(&self) -> Option<String> {
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
pub(crate) const CHECKS: [&str; 7] = [
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
pub(crate) fn kept_holds(slots: &[Slot]) -> Vec<u64> {
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
pub(crate) fn quiet_for(kept: &[u64], t: u64, lasting: u64) -> bool {
    kept.iter()
        .any(|&at| t + lasting > at + 2100 * MS && t < at + 2800 * MS)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn spawn_worker(
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

pub(crate) fn signal(child: &Child, sig: libc::c_int) {
    let pid = child.id() as libc::pid_t;
    assert!(pid > 1);
    // SAFETY: a child of ours, by the pid we started it with.
    unsafe { libc::kill(pid, sig) };
}

/// A thread that sleeps 5 ms at a time and notes when it wakes more
/// than 25 ms late: the machine was too busy to run it ([`Faults::stalls`]).
pub(crate) struct StallProbe {
    pub(crate) stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    pub(crate) thread: std::thread::JoinHandle<Vec<(u64, u64)>>,
}

impl StallProbe {
    pub(crate) fn start() -> Self {
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
    pub(crate) fn stop(self) -> Vec<(u64, u64)> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.join().unwrap_or_default()
    }
}

/// What the controller did to one scenario, on the shared monotonic clock
/// (ns), for the checks that excuse or expect something of it.
#[derive(Debug, Default)]
pub(crate) struct Faults {
    /// Worker processes (not their forked children).
    pub(crate) workers: HashSet<u32>,
    /// Pauses: pid, SIGSTOP sent, SIGCONT sent (or the kill).
    pub(crate) pauses: Vec<(u32, u64, u64)>,
    /// Every connection dropped during a fresh worker's first wait.
    pub(crate) drops: Vec<u64>,
    /// Renewals, refreshes and releases refused: from, to.
    pub(crate) refusals: Vec<(u64, u64)>,
    /// The renewals of one process's hold refused: pid, from, to.
    pub(crate) renewals_refused: Vec<(u32, u64, u64)>,
    /// Requests or replies held up: from, to (the hold-up included).
    pub(crate) slowdowns: Vec<(u64, u64)>,
    /// Replies held back: from, to.
    pub(crate) held: Vec<(u64, u64)>,
    /// Stretches in which the machine did not run the controller's probe
    /// thread (a 5 ms sleep woke more than 25 ms late): from the wake-up
    /// due to the one seen. A machine that busy (the flake proof runs two
    /// more copies of the suite beside this one) may not run a renewal
    /// either: such a stretch is not free.
    pub(crate) stalls: Vec<(u64, u64)>,
}

impl Faults {
    /// The pauses of process `pid`.
    pub(crate) fn pauses_of(&self, pid: u32) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.pauses
            .iter()
            .filter(move |p| p.0 == pid)
            .map(|&(_, from, to)| (from, to))
    }

    /// The longest stretch from `from` to `to` (its start and length) in
    /// which process `pid` ran and nothing kept the requests of its holds
    /// from Redis: no pause, refusal, reply held back or request held up.
    pub(crate) fn free_stretch(&self, pid: u32, from: u64, to: u64) -> (u64, u64) {
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
    pub(crate) fn write(&self, path: &Path) {
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
    pub(crate) fn paused(&self, pid: u32, from: u64, to: u64) -> u64 {
        self.pauses_of(pid)
            .map(|(a, b)| b.min(to).saturating_sub(a.max(from)))
            .sum()
    }

    /// When process `pid` has run (not paused) for `run` ns since `from`.
    pub(crate) fn having_run(&self, pid: u32, from: u64, run: u64) -> u64 {
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
pub(crate) fn tail(path: &Path, bytes: u64) -> String {
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
pub(crate) fn holding_until(log: &Path, pid: u32) -> Option<u64> {
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
pub(crate) struct Plan {
    pub(crate) grant: String,
    /// When it shortens its lease, or when it started (ns).
    pub(crate) at: u64,
    pub(crate) kind: Kind,
    /// Its token, when known.
    pub(crate) token: Option<String>,
    /// It shortens its lease (else it keeps its whole ttl).
    pub(crate) shortens: bool,
}

/// The plans of worker `pid`'s long holds, from its log.
pub(crate) fn plans(log: &Path, pid: u32) -> Vec<Plan> {
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
pub(crate) fn renewal_of(kind: Kind, token: Option<&str>) -> Vec<Vec<u8>> {
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
pub(crate) enum FirstWait {
    NotYet,
    /// Waiting since then (ns).
    Since(u64),
    Over,
}

pub(crate) fn first_wait(log: &Path, pid: u32) -> FirstWait {
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
pub(crate) fn departed_batch(server: &RedisServer, queue: &[u8], batch: usize) {
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
pub(crate) struct Slot {
    pub(crate) child: Child,
    pub(crate) pid: u32,
    pub(crate) log: PathBuf,
    pub(crate) long: bool,
    /// Its holds are auto-renewed.
    pub(crate) renew: bool,
    /// Its first wait is still to be hit by a dropped connection, this
    /// long (ns) after it began: early, during the first try, or later,
    /// blocked in the queue.
    pub(crate) fresh: Option<u64>,
    /// Paused: until when, and since when (ns).
    pub(crate) paused: Option<(Instant, u64)>,
}

/// Whether worker `pid` had a release without an answer less than 3 s
/// before `t`, from its log: a fixed owner's next hold is to meet that
/// release, run late ([`Worker::after_lost_release`]).
pub(crate) fn lost_release_lately(log: &Path, pid: u32, t: u64) -> bool {
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
pub(crate) fn long_waiter(server: &RedisServer, queue: &[u8]) -> bool {
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
pub(crate) fn pause_length(slot: &Slot) -> Duration {
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

pub(crate) fn controller(scenario: Scenario, length: Duration) -> Report {
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
