//! The hottest names: a fixed-size table of the names whose acquires were
//! contended, with how often and how long they waited, so memory stays
//! bounded whatever names users make.
//!
//! Only contended acquires come here. A name already in the table is
//! counted with relaxed atomic additions, lock-free. A new name needs a
//! slot: one process at a time changes the table (a try-lock word holding
//! its pid and when it took it, stolen when older than
//! [`STALE_WRITER_SECS`], so a process killed while changing the table
//! does not freeze it); a process that finds it taken does not wait, it
//! counts the acquire as untracked. The new name takes an empty slot, or
//! else the slot of the coldest name (least wait time and contention),
//! whose figures start again from zero: a name's figures are counted since
//! it (last) entered the table. An acquire counted while its slot changes
//! hands may land on the new name (one acquire, rarely).
//!
//! A name is shown ([`NameFigures::label`]) as itself when it is valid
//! UTF-8 and kept whole; a longer one, or one that is not valid UTF-8, as
//! its kept bytes (invalid ones as U+FFFD) followed by `~~` and its key in
//! the table (a hash of the whole name and primitive) in 16 hex digits: so
//! every name in the table has a label of its own (slots never share a
//! key), no label is another name (no name may contain `~~`), and every
//! label is valid UTF-8 (`json_encode()`, Prometheus).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::Primitive;

/// Names kept.
pub(super) const SLOTS: usize = 64;
/// Bytes of a name kept (longer names are cut).
const NAME_BYTES: usize = 96;
const NAME_WORDS: usize = NAME_BYTES / 8;
/// A writer holding the table this long is taken to be dead.
const STALE_WRITER_SECS: u64 = 2;
/// Weight of one contended acquire in µs of wait, when ranking names.
const CONTENDED_WEIGHT_US: u64 = 1_000;

/// One name.
#[repr(C)]
struct Slot {
    /// 0: empty (or changing hands); else the name's key ([`key`]).
    key: AtomicU64,
    /// Whether the name was cut (bit 40), the primitive (bits 32..40) and
    /// the name's length kept (bits 0..32).
    meta: AtomicU64,
    bytes: [AtomicU64; NAME_WORDS],
    contended: AtomicU64,
    timeouts: AtomicU64,
    wait_us: AtomicU64,
}

/// The table (zeroed memory is an empty table).
#[repr(C)]
pub(super) struct NameTable {
    /// 0 when nobody changes the table; else the changer's pid (bits
    /// 32..64) and when it took the table (seconds, bits 0..32).
    writer: AtomicU64,
    untracked: AtomicU64,
    slots: [Slot; SLOTS],
}

/// One name's figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameFigures {
    /// What it names.
    pub primitive: Primitive,
    /// The name as the caller gave it (its first 96 bytes).
    pub name: Vec<u8>,
    /// Whether the name was longer (cut to 96 bytes).
    pub cut: bool,
    /// Its key in the table: a hash of the whole name and the primitive.
    pub key: u64,
    /// Contended acquires of it.
    pub contended: u64,
    /// Those whose wait ran out.
    pub timeouts: u64,
    /// How long they took, in all, µs.
    pub wait_us: u64,
}

impl NameTable {
    /// Counts a contended acquire of `name` that took `took`.
    pub(super) fn record(&self, primitive: Primitive, name: &[u8], took: Duration, timeout: bool) {
        let key = key(primitive, name);
        let took_us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        if let Some(slot) = self.find(key) {
            slot.add(took_us, timeout);
            return;
        }
        let Some(stamp) = self.take_writer() else {
            self.untracked.fetch_add(1, Ordering::Relaxed);
            return;
        };
        let slot = match self.find(key) {
            Some(slot) => slot,
            None => {
                let slot = self.coldest();
                slot.reuse(key, primitive, name);
                slot
            }
        };
        slot.add(took_us, timeout);
        let _ = self
            .writer
            .compare_exchange(stamp, 0, Ordering::Release, Ordering::Relaxed);
    }

    /// The names in the table, most waited first, and the untracked count.
    pub(super) fn read(&self) -> (Vec<NameFigures>, u64) {
        let mut names: Vec<NameFigures> = self.slots.iter().filter_map(Slot::read).collect();
        names.sort_by(|a, b| {
            b.wait_us
                .cmp(&a.wait_us)
                .then(b.contended.cmp(&a.contended))
        });
        (names, self.untracked.load(Ordering::Relaxed))
    }

    fn find(&self, key: u64) -> Option<&Slot> {
        self.slots
            .iter()
            .find(|s| s.key.load(Ordering::Acquire) == key)
    }

    /// An empty slot, else the coldest name's.
    fn coldest(&self) -> &Slot {
        self.slots
            .iter()
            .min_by_key(|s| match s.key.load(Ordering::Acquire) {
                0 => 0,
                _ => 1 + s.score(),
            })
            .expect("the table has slots")
    }

    /// Takes the table for a change; its stamp, or None when another
    /// process (alive, recently) has it.
    fn take_writer(&self) -> Option<u64> {
        let now = now_secs();
        let stamp = (u64::from(std::process::id()) << 32) | now;
        let current = self.writer.load(Ordering::Acquire);
        if current != 0 && now.wrapping_sub(current & 0xFFFF_FFFF) & 0xFFFF_FFFF < STALE_WRITER_SECS
        {
            return None;
        }
        self.writer
            .compare_exchange(current, stamp, Ordering::Acquire, Ordering::Relaxed)
            .ok()
            .map(|_| stamp)
    }
}

impl Slot {
    fn add(&self, took_us: u64, timeout: bool) {
        self.contended.fetch_add(1, Ordering::Relaxed);
        self.wait_us.fetch_add(took_us, Ordering::Relaxed);
        if timeout {
            self.timeouts.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn score(&self) -> u64 {
        self.wait_us
            .load(Ordering::Relaxed)
            .saturating_add(self.contended.load(Ordering::Relaxed) * CONTENDED_WEIGHT_US)
    }

    /// Gives the slot to `name` (the table taken), its figures at zero.
    fn reuse(&self, key: u64, primitive: Primitive, name: &[u8]) {
        self.key.store(0, Ordering::Release);
        self.contended.store(0, Ordering::Relaxed);
        self.timeouts.store(0, Ordering::Relaxed);
        self.wait_us.store(0, Ordering::Relaxed);
        let kept = &name[..name.len().min(NAME_BYTES)];
        for (i, word) in self.bytes.iter().enumerate() {
            let mut buf = [0u8; 8];
            let from = (i * 8).min(kept.len());
            let to = (from + 8).min(kept.len());
            buf[..to - from].copy_from_slice(&kept[from..to]);
            word.store(u64::from_le_bytes(buf), Ordering::Relaxed);
        }
        let cut = u64::from(kept.len() < name.len()) << CUT_BIT;
        self.meta.store(
            cut | ((primitive as u64) << 32) | kept.len() as u64,
            Ordering::Relaxed,
        );
        self.key.store(key, Ordering::Release);
    }

    /// Its figures, unless empty or changing hands while read.
    fn read(&self) -> Option<NameFigures> {
        let key = self.key.load(Ordering::Acquire);
        if key == 0 {
            return None;
        }
        let meta = self.meta.load(Ordering::Relaxed);
        let len = ((meta & 0xFFFF_FFFF) as usize).min(NAME_BYTES);
        let primitive = Primitive::from_index((meta >> 32) as u8)?;
        let cut = meta >> CUT_BIT & 1 == 1;
        let mut name: Vec<u8> = self
            .bytes
            .iter()
            .flat_map(|w| w.load(Ordering::Relaxed).to_le_bytes())
            .collect();
        name.truncate(len);
        let figures = NameFigures {
            primitive,
            name,
            cut,
            key,
            contended: self.contended.load(Ordering::Relaxed),
            timeouts: self.timeouts.load(Ordering::Relaxed),
            wait_us: self.wait_us.load(Ordering::Relaxed),
        };
        (self.key.load(Ordering::Acquire) == key).then_some(figures)
    }
}

impl NameFigures {
    /// The name as text: itself when valid UTF-8 and kept whole, else its
    /// kept bytes (invalid ones as U+FFFD) and `~~` and its key in 16 hex
    /// digits (see the module documentation). Valid UTF-8, and unique among
    /// the names of one primitive in the table.
    pub fn label(&self) -> String {
        match std::str::from_utf8(&self.name) {
            Ok(name) if !self.cut => name.to_owned(),
            _ => format!("{}~~{:016x}", String::from_utf8_lossy(&self.name), self.key),
        }
    }
}

/// The bit of a slot's meta word that says the name was cut.
const CUT_BIT: u32 = 40;

/// The table's key of a name: FNV-1a of the primitive and the name, never
/// 0.
fn key(primitive: Primitive, name: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in std::iter::once(primitive as u8).chain(name.iter().copied()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash.max(1)
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
        & 0xFFFF_FFFF
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_valid_utf8_and_one_per_name() {
        let t = table();
        let mut common = vec![b'A'; 95];
        common.push(0xc3);
        // Two names alike in their first 96 bytes (the last one half of
        // an 'é'), two alike but for an invalid byte, and plain ones.
        let names: Vec<Vec<u8>> = vec![
            [&common[..], "\u{e9}-one".as_bytes()].concat(),
            [&common[..], "\u{e9}-two".as_bytes()].concat(),
            b"inv\xffx".to_vec(),
            b"inv\xfex".to_vec(),
            "caf\u{e9}".as_bytes().to_vec(),
            b"orders".to_vec(),
        ];
        for name in &names {
            t.record(Primitive::Lock, name, MS, false);
        }
        let (read, _) = t.read();
        let mut labels: Vec<String> = read.iter().map(NameFigures::label).collect();
        assert!(labels.contains(&"caf\u{e9}".to_owned()), "{labels:?}");
        assert!(labels.contains(&"orders".to_owned()));
        for label in &labels {
            assert!(
                label == "caf\u{e9}" || label == "orders" || label.contains("~~"),
                "{label}"
            );
        }
        labels.sort();
        labels.dedup();
        assert_eq!(labels.len(), names.len(), "one label per name");
    }

    fn table() -> Box<NameTable> {
        crate::stats::block::zeroed_box()
    }

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn names_are_counted_apart_per_primitive() {
        let t = table();
        t.record(Primitive::Lock, b"orders", 3 * MS, false);
        t.record(Primitive::Lock, b"orders", 2 * MS, true);
        t.record(Primitive::Permit, b"orders", MS, false);
        let (names, untracked) = t.read();
        assert_eq!(untracked, 0);
        assert_eq!(names.len(), 2);
        assert_eq!(names[0].primitive, Primitive::Lock);
        assert_eq!(names[0].name, b"orders");
        assert_eq!(
            (names[0].contended, names[0].timeouts, names[0].wait_us),
            (2, 1, 5_000)
        );
        assert_eq!(names[1].primitive, Primitive::Permit);
    }

    #[test]
    fn a_full_table_keeps_the_hottest_names() {
        let t = table();
        for _ in 0..10 {
            t.record(Primitive::Lock, b"hot", 50 * MS, false);
        }
        for i in 0..1_000 {
            t.record(Primitive::Lock, format!("cold-{i}").as_bytes(), MS, false);
        }
        let (names, _) = t.read();
        assert_eq!(names.len(), SLOTS);
        assert_eq!(names[0].name, b"hot");
        assert_eq!(names[0].contended, 10);
        assert!(
            names.iter().any(|n| n.name == b"cold-999"),
            "the newest name entered"
        );
    }

    #[test]
    fn long_names_are_cut_and_a_stale_writer_is_taken_over() {
        let t = table();
        let long = vec![b'x'; 300];
        t.writer
            .store((1 << 32) | now_secs().wrapping_sub(10), Ordering::Relaxed);
        t.record(Primitive::Read, &long, MS, false);
        let (names, untracked) = t.read();
        assert_eq!(untracked, 0);
        assert_eq!(names[0].name.len(), NAME_BYTES);
        assert!(names[0].cut);
        // A live writer: a new name is untracked, a known one still counts.
        t.writer.store((1 << 32) | now_secs(), Ordering::Relaxed);
        t.record(Primitive::Read, b"new", MS, false);
        t.record(Primitive::Read, &long, MS, false);
        let (names, untracked) = t.read();
        assert_eq!(untracked, 1);
        assert_eq!(names.len(), 1);
        assert_eq!(names[0].contended, 2);
    }
}
