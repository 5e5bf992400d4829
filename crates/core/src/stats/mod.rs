//! Lock statistics: what `RedisLock::stats()`, `RedisLock::metrics()` and
//! `phpinfo()` show.
//!
//! Every event is counted per primitive ([`Primitive`]: a lock's write
//! hold, a read hold, a semaphore's permits) in up to two blocks of
//! relaxed atomics (`block`):
//!
//! - the **process** block: this process since it started (a forked child
//!   starts from zero);
//! - the **pool** block (`shared`): memory mapped shared by the process
//!   that called [`init`] with [`Mode::Pool`] (PHP's module startup: the
//!   PHP-FPM master, Apache's parent) before it forked, so every worker it
//!   forks (and, in a thread-safe PHP, every thread) counts into the same
//!   block, and the pool's totals survive worker recycling.
//!
//! [`Mode::Off`] counts nothing. Counting is a few relaxed atomic
//! additions per acquire; only an acquire that found its lock taken (or
//! its semaphore full) also touches the table of the hottest names
//! (`names`), whose size is fixed.
//!
//! An acquire is counted once, when it returns (`Tally`); what happens
//! deep inside it (it queued, it was handed the hold) is marked on the
//! calling thread meanwhile (`contended`, `handed`). A PHP thread runs
//! one acquire at a time (waits inside coroutines are refused), so the
//! marks belong to the acquire in progress.

mod block;
pub mod exposition;
mod histogram;
mod names;
pub mod servers;
mod shared;

use std::cell::Cell;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use crate::process::PerProcess;
pub use block::Figures;
use block::{Block, Event};
pub use names::NameFigures;

/// What kind of hold an event is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Primitive {
    /// A lock's write hold (`RedisLock::acquire()`).
    Lock = 0,
    /// A lock's read hold (`acquireRead()`).
    Read = 1,
    /// A semaphore's permits (`Semaphore::acquire()`).
    Permit = 2,
}

impl Primitive {
    /// Every primitive, in the order shown.
    pub const ALL: [Primitive; 3] = [Primitive::Lock, Primitive::Read, Primitive::Permit];

    /// The name shown (`lock`, `read`, `permit`).
    pub fn name(self) -> &'static str {
        match self {
            Primitive::Lock => "lock",
            Primitive::Read => "read",
            Primitive::Permit => "permit",
        }
    }

    fn from_index(index: u8) -> Option<Primitive> {
        Primitive::ALL.get(usize::from(index)).copied()
    }
}

/// What is counted (php.ini `redislock.stats`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// This process and the pool it belongs to.
    Pool = 0,
    /// This process only.
    Process = 1,
    /// Nothing.
    Off = 2,
}

impl Mode {
    /// The mode a setting's text names (`pool`, `process`, `off`; any
    /// case, surrounding blanks ignored). PHP's ini parser turns an
    /// unquoted `off` (or `no`, `false`, `none`) into an empty text, so an
    /// empty text, or `0`, is off too.
    pub fn parse(text: &str) -> Option<Mode> {
        match text.trim().to_ascii_lowercase().as_str() {
            "pool" => Some(Mode::Pool),
            "process" => Some(Mode::Process),
            "off" | "" | "0" => Some(Mode::Off),
            _ => None,
        }
    }

    /// The mode stored as `mode as u8` (anything above is off).
    pub fn from_u8(value: u8) -> Mode {
        match value {
            0 => Mode::Pool,
            1 => Mode::Process,
            _ => Mode::Off,
        }
    }

    /// The setting's word for it.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Pool => "pool",
            Mode::Process => "process",
            Mode::Off => "off",
        }
    }
}

/// Which figures are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every process forked from the one that loaded the extension.
    Pool,
    /// This process.
    Process,
}

impl Scope {
    /// The name shown (`pool`, `process`).
    pub fn name(self) -> &'static str {
        match self {
            Scope::Pool => "pool",
            Scope::Process => "process",
        }
    }

    /// The scope a caller names (`pool`, `process`; exact words).
    pub fn parse(text: &[u8]) -> Option<Scope> {
        match text {
            b"pool" => Some(Scope::Pool),
            b"process" => Some(Scope::Process),
            _ => None,
        }
    }
}

/// The mode in force; [`Mode::Process`] until [`init`] says otherwise
/// (the core's own tests, a program without PHP).
static MODE: AtomicU8 = AtomicU8::new(Mode::Process as u8);

static PROCESS: PerProcess<Box<Block>> = PerProcess::new(Block::boxed);

/// Sets the mode, once, before the process forks workers (PHP's module
/// startup). [`Mode::Pool`] maps the pool's block; when that fails (no
/// memory to map), the process counts as with [`Mode::Process`] and the
/// mode in force says so ([`mode`]).
pub fn init(mode: Mode) -> Mode {
    let mode = match mode {
        Mode::Pool if shared::map().is_none() => Mode::Process,
        other => other,
    };
    MODE.store(mode as u8, Ordering::Relaxed);
    mode
}

/// The mode in force.
pub fn mode() -> Mode {
    Mode::from_u8(MODE.load(Ordering::Relaxed))
}

/// The scope figures are read from when the caller names none: the pool
/// with [`Mode::Pool`], else this process.
pub fn default_scope() -> Scope {
    match mode() {
        Mode::Pool => Scope::Pool,
        _ => Scope::Process,
    }
}

/// Runs `count` on every block the mode counts into.
fn each(count: impl Fn(&Block)) {
    match mode() {
        Mode::Off => {}
        Mode::Process => count(PROCESS.get()),
        Mode::Pool => {
            count(PROCESS.get());
            if let Some(pool) = shared::block() {
                count(pool);
            }
        }
    }
}

thread_local! {
    /// Marks of the acquire in progress on this thread: (contended, handed).
    static MARKS: Cell<(bool, bool)> = const { Cell::new((false, false)) };
}

/// Marks the acquire in progress as contended: it found the hold taken at
/// its first try (it queued, or a quorum refused it).
pub(crate) fn contended() {
    MARKS.with(|m| m.set((true, m.get().1)));
}

/// Marks the acquire in progress as handed its hold in the queue (by a
/// release, or a lease that ended, while it waited).
pub(crate) fn handed() {
    MARKS.with(|m| m.set((m.get().0, true)));
}

/// One acquire being counted: started when it is called, finished with
/// its result.
pub(crate) struct Tally {
    primitive: Primitive,
    started: Instant,
}

impl Tally {
    /// Starts counting an acquire of `primitive`.
    pub(crate) fn start(primitive: Primitive) -> Tally {
        MARKS.with(|m| m.set((false, false)));
        Tally {
            primitive,
            started: Instant::now(),
        }
    }

    /// Counts the acquire of `name` that asked to wait `wait` and returned
    /// `result`. A false result is a timeout when it waited, else busy;
    /// either was contended. An error is counted as such.
    pub(crate) fn finish(self, name: &[u8], wait: Duration, result: &crate::error::Result<bool>) {
        if mode() == Mode::Off {
            return;
        }
        let (marked, handed) = MARKS.with(Cell::get);
        let took = self.started.elapsed();
        let outcome = match result {
            Ok(true) => Event::Acquired,
            Ok(_) if wait.is_zero() => Event::Busy,
            Ok(_) => Event::Timeout,
            Err(_) => Event::Error,
        };
        let contended = marked || matches!(outcome, Event::Busy | Event::Timeout);
        let primitive = self.primitive;
        each(|block| {
            let figures = block.primitive(primitive);
            figures.add(outcome);
            if contended {
                figures.add(Event::Contended);
            }
            if outcome == Event::Acquired {
                figures.waited(took);
                if handed {
                    figures.add(Event::Handovers);
                }
            }
            if contended {
                block
                    .names
                    .record(primitive, name, took, outcome == Event::Timeout);
            }
        });
    }
}

/// Counts a hold released in Redis (the last release of a hold, ours).
pub(crate) fn released(primitive: Primitive) {
    each(|b| b.primitive(primitive).add(Event::Releases));
}

/// Counts a lease found lost.
pub(crate) fn lost(primitive: Primitive) {
    each(|b| b.primitive(primitive).add(Event::LostLeases));
}

/// Counts a lease extended by the renewal thread.
pub(crate) fn renewed(primitive: Primitive) {
    each(|b| b.primitive(primitive).add(Event::Renewals));
}

/// Counts a connection opened to replace one that broke.
pub(crate) fn reconnected() {
    each(Block::reconnected);
}

/// The figures of one scope, read now.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// Which figures these are.
    pub scope: Scope,
    /// False when the mode in force does not count this scope (its
    /// figures are then all zero).
    pub enabled: bool,
    /// Per primitive, in [`Primitive::ALL`]'s order.
    pub primitives: [Figures; 3],
    /// Connections opened to replace a broken one.
    pub reconnects: u64,
    /// The hottest names (contended acquires), most waited first.
    pub names: Vec<NameFigures>,
    /// Contended acquires whose name could not be counted in the table
    /// (another process was changing it at that moment).
    pub names_untracked: u64,
    /// The servers this process found able to lose a held lock by
    /// themselves (whatever the scope: found per process).
    pub unsafe_servers: Vec<servers::UnsafeServer>,
}

impl Snapshot {
    /// The figures of one primitive.
    pub fn primitive(&self, primitive: Primitive) -> &Figures {
        &self.primitives[primitive as usize]
    }

    /// Every primitive's figures added up.
    pub fn total(&self) -> Figures {
        let mut total = Figures::default();
        for figures in &self.primitives {
            total.merge(figures);
        }
        total
    }
}

/// Reads the figures of `scope`.
pub fn snapshot(scope: Scope) -> Snapshot {
    let mode = mode();
    let block = match scope {
        Scope::Process if mode != Mode::Off => Some(PROCESS.get().as_ref()),
        Scope::Pool if mode == Mode::Pool => shared::block(),
        _ => None,
    };
    match block {
        Some(block) => {
            let (names, names_untracked) = block.names.read();
            Snapshot {
                scope,
                enabled: true,
                primitives: Primitive::ALL.map(|p| block.primitive(p).read()),
                reconnects: block.reconnects(),
                names,
                names_untracked,
                unsafe_servers: servers::list(),
            }
        }
        None => Snapshot {
            scope,
            enabled: false,
            primitives: Default::default(),
            reconnects: 0,
            names: Vec::new(),
            names_untracked: 0,
            unsafe_servers: servers::list(),
        },
    }
}
