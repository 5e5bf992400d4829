//! The worker process of the history checker (and its forked children): takes the lock, semaphore or read and write holds again and again, logging what it was told.

use super::*;

/// What a worker process (and its forked children) needs to know.
pub(crate) struct Worker {
    pub(crate) url: String,
    /// The server itself, not the proxy (to watch a key).
    pub(crate) direct: String,
    pub(crate) key: String,
    pub(crate) renew: bool,
    /// Of the long ttl.
    pub(crate) long: bool,
    /// Short, with the [`SLOW_RETRY_DELAY`].
    pub(crate) slow: bool,
    /// A fixed `owner` for every write hold of this process (a Laravel
    /// lock's), its own: two processes never share one.
    pub(crate) owner: Option<String>,
    /// Option `starve_after` of its holds, for half the workers of every
    /// scenario (1 ms or 50 ms): they barge first, and are handed the
    /// lock (their permits) in arrival order only once they have waited
    /// that long.
    pub(crate) starve_after: Option<f64>,
    /// Its last release got no answer (it may run late): the next hold,
    /// of the same owner, is taken at once (waiting up to 0.6 s), with a
    /// lease of [`AFTER_LOST_RELEASE_TTL`], and kept 1.2 s.
    pub(crate) after_lost_release: Cell<bool>,
    /// When to stop (ns).
    pub(crate) deadline: u64,
    /// Its first acquire is still to come.
    pub(crate) first: Cell<bool>,
    /// A forked child (one cycle, no renewal, no first wait).
    pub(crate) child: Cell<bool>,
}

/// One worker process: takes the lock (semaphore, read or write hold)
/// again and again until its deadline, appending what it was told to its
/// log. `spec` is `scenario|url|direct url|key|log|deadline ns|auto_renew
/// 0/1|long 0/1`.
pub(crate) fn worker(spec: &str) {
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

pub(crate) fn options(
    set: &[(&str, OptionValue)],
    retry_delay: f64,
    read_timeout: f64,
) -> LockOptions {
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
pub(crate) enum Step {
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
pub(crate) enum Checks {
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
    pub(crate) fn ttl(&self) -> f64 {
        match (self.long, self.after_lost_release.get()) {
            (true, _) => LONG_TTL,
            (false, true) => AFTER_LOST_RELEASE_TTL,
            (false, false) => TTL,
        }
    }

    pub(crate) fn ttl_ms(&self) -> u64 {
        (self.ttl() * 1000.0) as u64
    }

    pub(crate) fn retry_delay(&self) -> f64 {
        match (self.long, self.slow) {
            (true, _) => LONG_RETRY_DELAY,
            (false, true) => SLOW_RETRY_DELAY,
            (false, false) => RETRY_DELAY,
        }
    }

    /// Its `read_timeout`: 0.5 s, a second for the long ttl (replies held
    /// up for up to 0.3 s do not end its waits, and a short hold's top-up
    /// whose reply is held back past its ttl is answered, late).
    pub(crate) fn read_timeout(&self) -> f64 {
        if self.long { 1.0 } else { 0.5 }
    }

    /// Auto-renewed holds (a forked child renews nothing).
    pub(crate) fn renews(&self) -> bool {
        self.renew && !self.child.get()
    }

    /// Time left until the deadline.
    pub(crate) fn left(&self) -> Duration {
        Duration::from_nanos(self.deadline.saturating_sub(now_ns()))
    }

    /// How long an acquire may wait.
    pub(crate) fn some_wait(&self) -> Duration {
        let choices = match self.long {
            false => [0, 50, 300, 1000],
            true => [0, 300, 1000, 3000],
        };
        ms(choices[below(4) as usize]).min(self.left())
    }

    /// How long a hold lasts. Short: mostly short, one in four up to 1.5
    /// leases, which outlives an unrenewed lease. Long: 40% short, the
    /// rest up to 4 s, much of it past a hand-over mark's life.
    pub(crate) fn some_hold(&self) -> Duration {
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
    pub(crate) fn nap(&self) -> Duration {
        let most = match (self.long, self.after_lost_release.get()) {
            (true, _) => 120,
            (false, true) => 10,
            (false, false) => 25,
        };
        ms(below(most))
    }

    /// A lock object of its own (read holds refuse fencing), under the
    /// worker's owner if it has one (a forked child: never its parent's).
    pub(crate) fn lock(&self, fencing: bool, renew: bool) -> Lock {
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

    pub(crate) fn semaphore(&self, renew: bool) -> Semaphore {
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
    pub(crate) fn try_acquire(
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
    pub(crate) fn hold(&self, mut step: impl FnMut(Step) -> bool) {
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
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join("_")
}

/// What a hold can be asked (a lock's write or read hold, a permit).
pub(crate) trait Held {
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
pub(crate) fn checked(
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
pub(crate) fn check_once(
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
pub(crate) fn shorten(log: &mut Log, grant: &str, held: &mut dyn Held, ttl_ms: u64) -> bool {
    let what = format!("f{ttl_ms}");
    checked(log, grant, &what, true, || {
        held.refresh(Some(ttl_ms as f64 / 1000.0))
    }) == Some(true)
}

/// Releases the hold named `grant` (logged as a check); when the release
/// got no answer and `token` is the write hold's, a thread watches the key
/// on the server itself ([`watch_release`]). What the release said.
pub(crate) fn release_logged(
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
pub(crate) fn look_at_return(w: &Worker, log: &mut Log, grant: &str, token: &[u8]) {
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
pub(crate) fn restore_check(w: &Worker, log: &mut Log, grant: &str, token: &[u8]) {
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
pub(crate) fn watch_release(w: &Worker, path: &Path, grant: &str, token: Vec<u8>) {
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
pub(crate) fn grant_name() -> String {
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
pub(crate) enum Kind {
    /// The lock, or a lock's write hold.
    Write,
    /// A lock's read hold.
    Read,
    /// A semaphore's permit.
    Permit,
}

impl Kind {
    pub(crate) fn letter(self) -> &'static str {
        match self {
            Kind::Write => "W",
            Kind::Read => "R",
            Kind::Permit => "P",
        }
    }

    pub(crate) fn parse(letter: &str) -> Option<Self> {
        [Kind::Write, Kind::Read, Kind::Permit]
            .into_iter()
            .find(|k| k.letter() == letter)
    }
}

/// The fence logged for a grant of an unfenced lock (the fencing order
/// leaves it out; -1 is a fenced grant without a token).
pub(crate) const UNFENCED: i64 = -2;

/// One acquire, hold (checking now and then) and release of the lock,
/// logged. The short lock checks with `is_acquired()` only.
pub(crate) fn cycle(w: &Worker, lock: &mut Lock, log: &mut Log, fenced: bool) {
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
pub(crate) fn fork_one_cycle(w: &Worker, log: &mut Log) {
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
pub(crate) fn in_child(w: &Worker, log: &mut Log, body: impl FnOnce(&Worker, &mut Log)) {
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
pub(crate) fn semaphore_cycle(w: &Worker, sem: &mut Semaphore, log: &mut Log) {
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
pub(crate) fn rw_cycle(w: &Worker, lock: &mut Lock, log: &mut Log) {
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
pub(crate) struct Log {
    pub(crate) path: PathBuf,
    pub(crate) file: std::fs::File,
}

impl Log {
    pub(crate) fn open(path: &Path) -> Self {
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

    pub(crate) fn line(&mut self, text: &str) {
        let _ = self.file.write_all(format!("{text}\n").as_bytes());
    }

    /// Logs a grant of a call made at `called` that returned just now,
    /// with the hold's ttl, whether this process renews it and its key;
    /// returns its name.
    pub(crate) fn grant(
        &mut self,
        w: &Worker,
        called: u64,
        fence: i64,
        kind: Kind,
        how: &str,
    ) -> String {
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
    pub(crate) fn plan(
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
    pub(crate) fn intent(&mut self, grant: &str, before: u64, what: &str) {
        self.line(&format!("B {grant} {before} {what}"));
    }
}
