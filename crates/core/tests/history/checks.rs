//! The checks of the history checker: every grant in the workers' logs held against the faults and the rules of docs/protocol.md.

use super::*;

/// One grant and what was asserted of it (times in ns).
#[derive(Debug, Clone)]
pub(crate) struct Belief {
    pub(crate) grant: String,
    pub(crate) kind: Kind,
    /// Before the call that granted it.
    pub(crate) called: u64,
    /// After it returned true.
    pub(crate) start: u64,
    /// The last assertion (`start` when there was none).
    pub(crate) end: u64,
    pub(crate) fence: i64,
}

impl Belief {
    /// Believed during a time of its own (asserted after its grant).
    pub(crate) fn lasted(&self) -> bool {
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
pub(crate) struct Said {
    pub(crate) before: u64,
    pub(crate) after: u64,
    /// None: an error.
    pub(crate) ours: Option<bool>,
    pub(crate) what: String,
}

/// A grant with everything logged of it.
#[derive(Debug)]
pub(crate) struct Hold {
    pub(crate) belief: Belief,
    pub(crate) pid: u32,
    /// The lock's (or semaphore's) name.
    pub(crate) key: String,
    /// Its lease (ns).
    pub(crate) ttl: u64,
    pub(crate) renewed: bool,
    /// Intents: before, what.
    pub(crate) intents: Vec<(u64, String)>,
    pub(crate) said: Vec<Said>,
    /// A watched key: times it still held the token.
    pub(crate) seen: Vec<u64>,
    pub(crate) watched: bool,
    /// Redis's owner of the key just after the acquire returned
    /// ([`look_at_return`]): when it was read, and whether another holder.
    pub(crate) looked: Option<(u64, bool)>,
}

impl Hold {
    pub(crate) fn long(&self) -> bool {
        self.ttl >= (LONG_TTL * 1000.0) as u64 * MS
    }

    /// The first call that ends the hold (release, promotion, demotion),
    /// by its intent.
    pub(crate) fn ending(&self) -> u64 {
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
    pub(crate) fn kept_until(&self, at: u64) -> u64 {
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
    pub(crate) fn kept_end(&self) -> u64 {
        self.kept_until(u64::MAX).min(self.ending())
    }

    /// The calls that said whether it was ours, up to the first that ends
    /// it.
    pub(crate) fn statements(&self) -> impl Iterator<Item = &Said> {
        let ending = self.ending();
        self.said.iter().filter(move |s| s.before <= ending)
    }
}

/// A first acquire: called, its wait (ms), and when it returned with what.
#[derive(Debug, Default)]
pub(crate) struct First {
    pub(crate) called: u64,
    /// Its wait (ns).
    pub(crate) wait: u64,
    pub(crate) returned: Option<(u64, String)>,
}

pub(crate) fn ms_between(from: u64, to: u64) -> i64 {
    (to as i64 - from as i64) / MS as i64
}

/// Reads the logs and checks the beliefs and kept intervals as the
/// scenario requires, and what the controller's faults must not break.
pub(crate) fn check(logs: &[PathBuf], faults: &Faults, report: &mut Report) {
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
pub(crate) fn check_rules(holds: &[&Hold], faults: &Faults, report: &mut Report) {
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
pub(crate) fn with_return(hold: &Hold, faults: &Faults) -> Belief {
    let mut b = hold.belief.clone();
    let (from, to) = (b.called, b.start);
    let stalled = faults.stalls.iter().any(|&(a, z)| a < to && z > from);
    if faults.paused(hold.pid, from, to) == 0 && !stalled {
        b.end = b.end.max(b.start + 1);
    }
    b
}

/// Reads one log line into `holds`, `firsts` and the report's counts.
pub(crate) fn parse_line(
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
pub(crate) fn returned_ours(hold: &Hold, faults: &Faults, report: &mut Report) {
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
pub(crate) fn lease_kept(hold: &Hold, faults: &Faults, report: &mut Report) {
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
pub(crate) fn pauses_checked(holds: &[&Hold], faults: &Faults, report: &mut Report) {
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
pub(crate) fn renewal_kept(hold: &Hold, faults: &Faults, report: &mut Report) {
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
pub(crate) fn release_finished(hold: &Hold, faults: &Faults, report: &mut Report) {
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
pub(crate) fn first_waits(firsts: &HashMap<u32, First>, faults: &Faults, report: &mut Report) {
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
        // clean-up run the refresh and release scripts); or another drop
        // in the last 100 ms or after the wait's end, while its last step
        // was on its way (the failure is that drop's: no time to send the
        // step again).
        let excused = faults
            .slowdowns
            .iter()
            .chain(&faults.refusals)
            .any(|&(from, to)| from < *returned && to > first.called)
            || faults.paused(pid, first.called, *returned) > 0
            || faults.drops.iter().any(|&d| d >= last && d < *returned);
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
pub(crate) fn overlaps(beliefs: &[Belief], violations: &mut Vec<String>) {
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
pub(crate) fn fencing_order(beliefs: &[Belief], violations: &mut Vec<String>) {
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
pub(crate) struct Sweep<'a> {
    pub(crate) beliefs: &'a [Belief],
    pub(crate) events: Vec<(u64, bool, usize)>,
}

impl<'a> Sweep<'a> {
    pub(crate) fn new(beliefs: &'a [Belief]) -> Self {
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
    pub(crate) fn run(
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

    pub(crate) fn names(&self, active: &[usize]) -> String {
        active
            .iter()
            .map(|&i| self.beliefs[i].to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A count over time: its value after each event.
pub(crate) struct Samples(Vec<(u64, usize)>);

impl Samples {
    /// The least the count was at any moment from `from` to `to` (taking
    /// every value it passed through at an instant, so never more).
    pub(crate) fn least(&self, from: u64, to: u64) -> usize {
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

    pub(crate) fn most(&self) -> usize {
        self.0.iter().map(|&(_, n)| n).max().unwrap_or(0)
    }
}

/// More than `permits` belief intervals overlapping at some instant, and
/// grants without an assertion made while `permits` others believed they
/// held a permit throughout the call (that grant's permit was theirs at
/// some moment of it). Returns the most intervals overlapping at once.
pub(crate) fn at_most(beliefs: &[Belief], permits: usize, violations: &mut Vec<String>) -> usize {
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
pub(crate) fn writers_alone(beliefs: &[Belief], violations: &mut Vec<String>) -> usize {
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
