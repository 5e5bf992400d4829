//! What one step of an acquire answers, for every primitive (a lock's
//! writers, its readers and promotions, a semaphore's permits): each
//! script's reply is read into a [`Step`], so one queue-wait loop drives
//! them all.

/// A fencing token: strictly greater than every earlier one of the key.
/// `None` when the acquirer did not ask for one.
pub type Fence = Option<i64>;

/// What a try, or a step of a blocked acquire, found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The hold is ours: its fencing token (a lock with `fencing`), and,
    /// when it was ours already (a permit handed over, a replay that finds
    /// its first try's), what it had left by the clock reading in the
    /// request: it counts only if the reply comes within that (a request
    /// held up in flight may find it counted ended and given away
    /// meanwhile).
    Won {
        /// The fencing token, if asked for.
        fence: Fence,
        /// Left by the request's clock reading, in ms.
        left_ms: Option<u64>,
    },
    /// Not ours yet (queued, unless a plain try). Nothing may change
    /// before `hint_ms` ms (the holder's lease, or the first lease that
    /// may end); `None` when unknown.
    Waiting {
        /// The hint, in ms.
        hint_ms: Option<u64>,
    },
    /// The waiter left the queue.
    GaveUp,
    /// A semaphore has this many permits, not the number asked for.
    Mismatch(i64),
    /// A promotion found its read hold gone.
    Gone,
    /// The call looked at as many departed waiters as one call may (it
    /// dropped them), with more behind them, before it could decide: it
    /// is sent again at once.
    Again,
}

impl Step {
    /// A win without a fencing token or a lease left.
    pub const WON: Step = Step::Won {
        fence: None,
        left_ms: None,
    };

    /// True when the hold is ours.
    pub fn is_won(&self) -> bool {
        matches!(self, Step::Won { .. })
    }

    /// [`Step::Waiting`] with a hint read from a reply (negative: unknown,
    /// as `PTTL` says -1 for a key without expiry, -2 for none).
    pub fn waiting(hint_ms: i64) -> Step {
        Step::Waiting {
            hint_ms: u64::try_from(hint_ms).ok(),
        }
    }
}

/// How an acquire call runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One try: a free hold or nothing.
    Try,
    /// A waiter's step: a free (or handed) hold, else join (stay in) the
    /// queue.
    Wait,
    /// A waiter gives up (unless a hold was handed to it).
    GiveUp,
}

impl Mode {
    /// How the scripts take it.
    pub fn arg(self) -> &'static [u8] {
        match self {
            Mode::Try => b"0",
            Mode::Wait => b"1",
            Mode::GiveUp => b"2",
        }
    }
}
