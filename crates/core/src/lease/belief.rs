//! What this process believes of one hold's lease ([`Lease`]), on its own
//! monotonic clock, and the rule that keeps that belief inside what Redis
//! gives: **beliefs follow the last command sent**.
//!
//! Every command that changes a hold's lease in Redis (an acquire's claim,
//! a renewal, `refresh()`, a reentrant acquire, a release) is numbered when
//! it is sent ([`Lease::send`]). Its reply changes the belief only if no
//! later command for that hold was sent meanwhile ([`Lease::answered`]):
//! the reply of the last one decides, however the replies of the others
//! are ordered (the renewal thread and PHP's thread send on connections of
//! their own). And since two commands on two connections may also *run* in
//! either order, an extension that sets the lease (`PEXPIRE ttl`, which
//! may shorten it) and was sent before the last one but not answered by
//! then may run after it: the belief is then never longer than the
//! shortest lease such an extension sets, counted from the last command's
//! send (when it runs after, it runs after that send). One whose reply
//! is lost may run at any later time: the shortest lease such lost
//! extensions set bounds every later belief of the hold.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use crate::stats::{self, Primitive};

/// What a command does to the lease in Redis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Sets it to this many ms from when it runs, if still ours (a claim,
    /// a renewal, `refresh()`): it may shorten it.
    Sets(u64),
    /// Makes it last at least this many ms from when it runs, if still
    /// ours (a reentrant acquire): it never shortens it.
    AtLeast(u64),
    /// Ends the hold (a release; a promotion or demotion, which turn it
    /// into another).
    Ends,
}

/// A command sent for a hold: what its reply applies to.
#[derive(Debug, Clone, Copy)]
pub struct Sent {
    seq: u64,
    /// When it was sent: a lease it sets counts from then.
    pub at: Instant,
    effect: Effect,
    /// The shortest lease set by an extension that may run after this
    /// command (sent before it and not answered when it was sent, or lost).
    cap_ms: u64,
}

/// What a reply did to the belief.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// Ours, but a later command was sent: its reply decides.
    Superseded,
    /// The lease is ours and believed to last as the command set it.
    Ours,
    /// The lease is not ours (the caller marks it lost), whatever was sent
    /// later.
    NotOurs,
}

/// The commands of one hold in flight.
#[derive(Debug, Default)]
struct Log {
    /// The sequence number of the last command sent.
    last: u64,
    /// Extensions that set the lease, sent and not answered: (seq, ms).
    in_flight: Vec<(u64, u64)>,
    /// The shortest lease set by an extension whose reply was lost (it may
    /// still run); `u64::MAX` when none.
    lost_min_ms: u64,
}

/// What this process knows of one hold's lease, on its own monotonic
/// clock: until when it lasts (counted from the send of the request that
/// won or last extended it, minus the topology's drift), whether it was
/// found lost, and when the renewal thread renews it next. Every hold has
/// one; with `auto_renew` the renewal thread keeps it up to date.
///
/// A lost lease (`stats()` `lost_leases`, the lost-lease hook) is one this
/// process held and lost: Redis said it was ours once (an acquire won it,
/// or a refresh, renewal, check or reentrant acquire found it ours). A
/// hold taken over from a token (`restore()`) that Redis never confirmed
/// is found not ours without counting: the token may have never been ours
/// at all.
#[derive(Debug)]
pub struct Lease {
    lost: AtomicBool,
    stopped: AtomicBool,
    /// Redis said the lease was ours at least once.
    held: AtomicBool,
    /// The lease end is counted from a request whose answer said the
    /// lease was set (an acquire's win, an extension answered in time);
    /// false for a hold taken over from a token until an extension is
    /// answered: its end is then a guess, and only Redis knows.
    counted: AtomicBool,
    /// Microseconds on [`clock_us`] until which the lease lasts.
    valid_until_us: AtomicU64,
    /// The lease each renewal sets (the hold's ttl, or the last
    /// `refresh($ttl)`).
    ttl_ms: AtomicU64,
    /// Microseconds on [`clock_us`] when the renewal thread renews next.
    renew_at_us: AtomicU64,
    /// Raise the lost-lease hook when the renewal thread finds this lease
    /// lost.
    notify: bool,
    /// What kind of hold it is (for [`stats`]).
    primitive: Primitive,
    log: Mutex<Log>,
}

impl Lease {
    /// The lease of a hold of `ttl_ms` won by a request sent at `sent` (it
    /// lasts `ttl_ms` from then, less `drift`); `notify` raises the
    /// lost-lease hook when the renewal thread finds it lost. `held`:
    /// Redis said it is ours (an acquire won it); false for a hold taken
    /// over from a token, until [`Lease::confirmed`]. `primitive`: what
    /// kind of hold it is.
    pub fn new(
        ttl_ms: u64,
        sent: Instant,
        drift: Duration,
        notify: bool,
        held: bool,
        primitive: Primitive,
    ) -> Arc<Self> {
        let valid_until = lease_end(sent, ttl_ms, drift);
        Arc::new(Self {
            lost: AtomicBool::new(false),
            stopped: AtomicBool::new(false),
            held: AtomicBool::new(held),
            counted: AtomicBool::new(held),
            valid_until_us: AtomicU64::new(valid_until),
            ttl_ms: AtomicU64::new(ttl_ms),
            renew_at_us: AtomicU64::new(clock_us(sent) + ttl_ms * 1000 / 3),
            notify,
            primitive,
            log: Mutex::new(Log {
                lost_min_ms: u64::MAX,
                ..Log::default()
            }),
        })
    }

    fn log(&self) -> MutexGuard<'_, Log> {
        self.log.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records a command for this hold about to be sent now. An extension
    /// that sets the lease may run at any moment from now on: the belief
    /// is at once no longer than what it sets.
    pub fn send(&self, effect: Effect, drift: Duration) -> Sent {
        let at = Instant::now();
        let mut log = self.log();
        log.last += 1;
        let cap_ms = log
            .in_flight
            .iter()
            .map(|&(_, ms)| ms)
            .min()
            .unwrap_or(u64::MAX)
            .min(log.lost_min_ms);
        if let Effect::Sets(ms) = effect {
            let seq = log.last;
            log.in_flight.push((seq, ms));
            self.valid_until_us
                .fetch_min(lease_end(at, ms, drift), Ordering::AcqRel);
        }
        Sent {
            seq: log.last,
            at,
            effect,
            cap_ms,
        }
    }

    /// Applies the reply of `sent`: `ours` is what Redis said; `drift`
    /// gives the topology's drift for a lease length. Only the reply of
    /// the last command sent extends the belief, counted from its send (a
    /// reply read after that lease ended leaves it over). A hold found not
    /// ours is not ours whatever was sent later: its token is never
    /// written again, so the caller marks it lost.
    pub fn answered(&self, sent: &Sent, ours: bool, drift: &dyn Fn(u64) -> Duration) -> Applied {
        let mut log = self.log();
        log.in_flight.retain(|&(seq, _)| seq != sent.seq);
        if !ours {
            return Applied::NotOurs;
        }
        if sent.seq != log.last {
            return Applied::Superseded;
        }
        drop(log);
        self.confirmed();
        let end = |ms: u64| {
            let ms = ms.min(sent.cap_ms);
            lease_end(sent.at, ms, drift(ms))
        };
        match sent.effect {
            Effect::Sets(ms) => {
                self.ttl_ms.store(ms, Ordering::Release);
                self.valid_until_us.store(end(ms), Ordering::Release);
                self.counted.store(true, Ordering::Release);
            }
            Effect::AtLeast(ms) => {
                // (It never shortens the lease, so it counts only from a
                // lease that was counted already.)
                let at_least = end(ms);
                let now = self.valid_until_us.load(Ordering::Acquire);
                let cap = end(u64::MAX);
                self.valid_until_us
                    .store(now.max(at_least).min(cap), Ordering::Release);
            }
            Effect::Ends => {}
        }
        self.schedule();
        Applied::Ours
    }

    /// `sent` got no reply (the connection failed or the reply came too
    /// late to be read): an extension that sets the lease may still run at
    /// any time, so it bounds every later belief.
    pub fn unanswered(&self, sent: &Sent) {
        let mut log = self.log();
        if let Some(pos) = log.in_flight.iter().position(|&(seq, _)| seq == sent.seq) {
            let (_, ms) = log.in_flight.swap_remove(pos);
            log.lost_min_ms = log.lost_min_ms.min(ms);
        }
    }

    /// Renews next at a third of what is left of the lease.
    fn schedule(&self) {
        let now = clock_us(Instant::now());
        let until = self.valid_until_us.load(Ordering::Acquire);
        self.renew_at_us
            .store(now + until.saturating_sub(now) / 3, Ordering::Release);
    }

    /// Asks the renewal thread to try again `after` this long (a renewal
    /// got no answer).
    pub fn renew_after(&self, after: Duration) {
        let at = clock_us(Instant::now() + after);
        self.renew_at_us.store(at, Ordering::Release);
    }

    /// When the renewal thread renews this lease next.
    pub fn renew_at(&self) -> Instant {
        let at = self.renew_at_us.load(Ordering::Acquire);
        match at.checked_sub(BEFORE_EPOCH_US) {
            Some(after) => epoch() + Duration::from_micros(after),
            // Due before the clock's first use: due now.
            None => epoch(),
        }
    }

    /// The lease each renewal sets.
    pub fn ttl_ms(&self) -> u64 {
        self.ttl_ms.load(Ordering::Acquire)
    }

    /// True once the lease was found gone, or ran out unrenewed.
    pub fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    /// True once renewal of this hold was stopped.
    pub fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }

    /// How long the lease lasts from now by this process's clock (zero when
    /// lost or run out).
    pub fn valid_for(&self) -> Duration {
        if self.is_lost() {
            return Duration::ZERO;
        }
        let until = self.valid_until_us.load(Ordering::Acquire);
        Duration::from_micros(until.saturating_sub(clock_us(Instant::now())))
    }

    /// Records that Redis said the lease is ours: from now on, finding it
    /// not ours is a lost lease.
    pub fn confirmed(&self) {
        self.held.store(true, Ordering::Release);
    }

    /// True when the lease end is counted from an answer that set it (an
    /// acquire's win, or an extension answered in time): false for a hold
    /// taken over from a token (`restore()`) until then. Only a counted
    /// lease may be believed without asking Redis.
    pub fn is_counted(&self) -> bool {
        self.counted.load(Ordering::Acquire)
    }

    /// [`Lease::confirmed`] when `ours` (what Redis said of a read, which
    /// changes no lease); returns `ours`.
    pub fn confirmed_if(&self, ours: bool) -> bool {
        if ours {
            self.confirmed();
        }
        ours
    }

    /// Ends renewal of this hold (released, destroyed, request end); called
    /// before a release is sent, so a round on its way finds it stopped.
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::Release);
    }

    /// Marks the lease lost, found so by PHP's thread (a release, refresh
    /// or check that found the lock no longer ours, or its time over).
    /// Counted once per lease in [`stats`], if it was held.
    pub fn found_lost(&self) {
        if !self.lost.swap(true, Ordering::AcqRel) && self.held.load(Ordering::Acquire) {
            stats::lost(self.primitive);
        }
    }

    /// What kind of hold it is.
    pub fn primitive(&self) -> Primitive {
        self.primitive
    }

    /// Marks the lease lost, found so by the renewal thread: also raises the
    /// lost-lease hook when asked to. Not a lease whose renewal was stopped
    /// (released on purpose, request end): a round on its way at the
    /// release finds the key gone because of that release, and the holder
    /// stops renewing before it sends a release. Nor one that was never
    /// held (counted and raised nothing: marked lost only).
    pub fn mark_lost(&self) {
        if self.stopped.load(Ordering::Acquire)
            || self.lost.swap(true, Ordering::AcqRel)
            || !self.held.load(Ordering::Acquire)
        {
            return;
        }
        stats::lost(self.primitive);
        if self.notify {
            crate::host::lease_lost();
        }
    }
}

/// The lease clock's epoch: a second before its first use in the process.
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(|| {
        let now = Instant::now();
        now.checked_sub(Duration::from_secs(1)).unwrap_or(now)
    })
}

/// How long before [`epoch`] the lease clock's zero lies, in µs (about
/// 12.7 days).
const BEFORE_EPOCH_US: u64 = 1 << 40;

/// The lease clock's reading at `at`, in µs (rounded up, so a lease
/// counted from it never lasts too long). Its zero lies
/// [`BEFORE_EPOCH_US`] before [`epoch`], so an instant from before the
/// clock's first use reads as itself: a process's first hold is often
/// that first use, and the request that won it may have been sent long
/// before its reply was read (a pause, a reply held up); counted from the
/// epoch instead, its lease would last longer than Redis keeps it.
pub fn clock_us(at: Instant) -> u64 {
    let epoch = epoch();
    match at.checked_duration_since(epoch) {
        Some(since) => {
            BEFORE_EPOCH_US
                + since.as_micros() as u64
                + u64::from(!since.subsec_nanos().is_multiple_of(1000))
        }
        // The gap rounded down: the reading rounded up.
        None => BEFORE_EPOCH_US.saturating_sub((epoch - at).as_micros() as u64),
    }
}

/// The end of a lease of `ttl_ms` won or extended by a request sent at
/// `sent`, with `drift` (the clock drift the topology allows) taken off,
/// on [`clock_us`].
pub fn lease_end(sent: Instant, ttl_ms: u64, drift: Duration) -> u64 {
    (clock_us(sent).saturating_add(ttl_ms.saturating_mul(1000)))
        .saturating_sub(drift.as_micros() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_drift(_: u64) -> Duration {
        Duration::ZERO
    }

    fn lease(ttl_ms: u64) -> Arc<Lease> {
        Lease::new(
            ttl_ms,
            Instant::now(),
            Duration::ZERO,
            false,
            true,
            Primitive::Lock,
        )
    }

    fn secs(lease: &Lease) -> f64 {
        lease.valid_for().as_secs_f64()
    }

    #[test]
    fn a_late_renewal_reply_never_undoes_a_later_shorter_refresh() {
        let lease = lease(10_000);
        let renewal = lease.send(Effect::Sets(10_000), Duration::ZERO);
        let refresh = lease.send(Effect::Sets(1_000), Duration::ZERO);
        assert!(secs(&lease) <= 1.0, "capped at the refresh's send");
        assert_eq!(lease.answered(&refresh, true, &no_drift), Applied::Ours);
        assert_eq!(
            lease.answered(&renewal, true, &no_drift),
            Applied::Superseded
        );
        assert!(secs(&lease) <= 1.0);
        assert_eq!(lease.ttl_ms(), 1_000, "renewals keep the refreshed length");
    }

    #[test]
    fn an_earlier_shorter_extension_in_flight_caps_a_later_longer_one() {
        // It may run after the later one: Redis then has its lease.
        let lease = lease(1_000);
        let renewal = lease.send(Effect::Sets(1_000), Duration::ZERO);
        let refresh = lease.send(Effect::Sets(10_000), Duration::ZERO);
        lease.answered(&renewal, true, &no_drift);
        assert_eq!(lease.answered(&refresh, true, &no_drift), Applied::Ours);
        assert!(secs(&lease) <= 1.0);
        // A later extension, sent once both were answered, is not capped.
        let next = lease.send(Effect::Sets(10_000), Duration::ZERO);
        lease.answered(&next, true, &no_drift);
        assert!(secs(&lease) > 9.0);
    }

    #[test]
    fn a_lost_shorter_extension_bounds_every_later_belief() {
        let lease = lease(10_000);
        let lost = lease.send(Effect::Sets(2_000), Duration::ZERO);
        lease.unanswered(&lost);
        let next = lease.send(Effect::Sets(10_000), Duration::ZERO);
        lease.answered(&next, true, &no_drift);
        assert!(secs(&lease) <= 2.0);
    }

    #[test]
    fn a_stale_ours_changes_nothing_and_not_ours_is_final() {
        let lease = lease(5_000);
        let old = lease.send(Effect::Sets(5_000), Duration::ZERO);
        let release = lease.send(Effect::Ends, Duration::ZERO);
        assert_eq!(lease.answered(&old, true, &no_drift), Applied::Superseded);
        assert_eq!(lease.answered(&release, true, &no_drift), Applied::Ours);
        // Not ours is final, later commands or not.
        let check = lease.send(Effect::Sets(5_000), Duration::ZERO);
        let _later = lease.send(Effect::Sets(5_000), Duration::ZERO);
        assert_eq!(lease.answered(&check, false, &no_drift), Applied::NotOurs);
    }

    #[test]
    fn at_least_never_shortens_but_is_capped_by_extensions_in_flight() {
        let lease = lease(10_000);
        let reenter = lease.send(Effect::AtLeast(1_000), Duration::ZERO);
        lease.answered(&reenter, true, &no_drift);
        assert!(secs(&lease) > 9.0);
        let renewal = lease.send(Effect::Sets(2_000), Duration::ZERO);
        let reenter = lease.send(Effect::AtLeast(10_000), Duration::ZERO);
        lease.answered(&reenter, true, &no_drift);
        assert!(secs(&lease) <= 2.0);
        lease.answered(&renewal, true, &no_drift);
        assert!(secs(&lease) <= 2.0);
    }

    #[test]
    fn renewal_is_scheduled_at_a_third_of_what_is_left() {
        let lease = lease(9_000);
        let left = lease.renew_at() - Instant::now();
        assert!(left <= Duration::from_millis(3_001) && left > Duration::from_millis(2_900));
        let refresh = lease.send(Effect::Sets(3_000), Duration::ZERO);
        lease.answered(&refresh, true, &no_drift);
        let left = lease.renew_at().saturating_duration_since(Instant::now());
        assert!(left <= Duration::from_millis(1_001), "{left:?}");
    }
}
