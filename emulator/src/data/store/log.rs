//! A container's change log: every change to its items, in the order of a
//! log sequence number (LSN), kept for a bounded time.
//!
//! This is the one structure the change feed, the transactional batch and
//! persistence build on (see `docs/src/architecture.md`, "One change log
//! per container"):
//!
//! - Every create, replace (upserts and patches of an existing item), delete
//!   and TTL purge appends one [`Change`] with the next LSN. A transactional
//!   batch takes one LSN ([`ChangeLog::next_lsn`]) and appends each of its
//!   operations under it, as the service's `_lsn` "is a batch ID" (see
//!   `batch.rs`); feeds never end a page inside one LSN.
//! - The latest-version change feed reads the live items in the order of the
//!   LSN of their last write (the container's `by_lsn` index); the
//!   all-versions-and-deletes feed reads this log ([`ChangeLog::after`]).
//! - Persistence (`--data-dir`, `durable.rs`) writes each change ahead as it
//!   is logged here (the container's `install` and `forget`), replays them
//!   on start, and keeps the retained entries in its snapshots.
//!
//! An entry shares its item's JSON (`Bytes` is reference-counted), so a log
//! entry costs a few dozen bytes while its version is the live one; an
//! older version stays in memory as long as its entry is retained. Entries
//! older than the retention (in emulator-clock seconds) are dropped as new
//! ones arrive, and so are the oldest once the entries' JSON passes
//! [`MAX_CHANGE_LOG_BYTES`] (a busy container cannot hold an hour of
//! versions in memory); reading from before the retained start is refused.

use std::num::NonZeroU64;

use bytes::Bytes;

use super::sequence::{Sequence, Sequenced};
use crate::protocol::item_key::ItemKey;
pub use crate::protocol::limits::MAX_CHANGE_LOG_BYTES;

/// The retention when `--change-feed-retention` is not given: an hour of
/// emulator-clock time.
pub const DEFAULT_RETENTION_SECONDS: i64 = 3600;

/// What a change did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Create,
    Replace,
    /// `ttl_expired`: the purge removed an expired item (or a write found it
    /// expired and took its id), rather than a client deleting it.
    Delete {
        ttl_expired: bool,
    },
}

/// One logged change.
#[derive(Debug, Clone)]
pub struct Change {
    /// Its place in the container's log (see `item.rs`'s `Lsns`).
    pub lsn: u64,
    /// Its range's LSN, as the feed serves it (`metadata.lsn`).
    pub range_lsn: u64,
    /// When it was logged, emulator-clock epoch seconds (`crts`).
    pub crts: i64,
    pub key: ItemKey,
    pub kind: ChangeKind,
    /// The item after the change (create, replace); empty for a delete.
    pub body: Bytes,
    /// The range LSN of the item's version this change replaced or deleted
    /// (`previousImageLSN`; LSNs start at 1: the niche keeps an entry at 88
    /// bytes).
    pub previous_lsn: Option<NonZeroU64>,
}

impl Sequenced for Change {
    fn lsn(&self) -> u64 {
        self.lsn
    }
}

#[derive(Debug)]
pub struct ChangeLog {
    /// The entries in LSN order.
    entries: Sequence<Change>,
    /// The last LSN given out; 0 before the first change.
    last_lsn: u64,
    /// How long entries are kept, emulator-clock seconds.
    retention: i64,
    /// The LSN of the newest entry ever dropped (0: none): a reader that
    /// continues from before it has missed changes.
    dropped_through: u64,
    /// The JSON bytes the retained entries reference (shared or not).
    bytes: usize,
    max_bytes: usize,
}

impl ChangeLog {
    pub fn new(retention: i64) -> Self {
        ChangeLog {
            entries: Sequence::default(),
            last_lsn: 0,
            retention,
            dropped_through: 0,
            bytes: 0,
            max_bytes: MAX_CHANGE_LOG_BYTES,
        }
    }

    /// Keeps entries for `seconds` from now on (a container's change feed
    /// policy changed); entries already older go at the next append or purge.
    pub fn set_retention(&mut self, seconds: i64) {
        self.retention = seconds;
    }

    /// Gives out the next LSN (one per change, or one per batch).
    pub fn next_lsn(&mut self) -> u64 {
        self.last_lsn += 1;
        self.last_lsn
    }

    /// Replaying the data directory: LSNs up to `lsn` have been given out.
    pub fn restore_last_lsn(&mut self, lsn: u64) {
        self.last_lsn = self.last_lsn.max(lsn);
    }

    /// Restoring a snapshot: a retained entry, as it was (no expiry here).
    pub fn restore_entry(&mut self, change: Change) {
        self.restore_last_lsn(change.lsn);
        self.bytes += change.body.len();
        self.entries.push(change);
    }

    /// The LSN of the newest entry ever dropped (for snapshots).
    pub fn dropped_through(&self) -> u64 {
        self.dropped_through
    }

    pub fn restore_dropped_through(&mut self, lsn: u64) {
        self.dropped_through = self.dropped_through.max(lsn);
    }

    /// Every retained entry, in LSN order (for snapshots).
    pub fn retained(&self) -> impl Iterator<Item = &Change> {
        self.entries.after(0)
    }

    /// The last LSN given out (the container's "now" in the feed).
    pub fn last_lsn(&self) -> u64 {
        self.last_lsn
    }

    /// Appends a change logged at `crts` under `lsn` (from
    /// [`Self::next_lsn`]), dropping what has outlived the retention;
    /// returns what it dropped (the caller notes each range's).
    #[must_use]
    pub fn append(&mut self, change: Change) -> Vec<Change> {
        self.bytes += change.body.len();
        let crts = change.crts;
        self.entries.push(change);
        self.expire_at(crts)
    }

    /// Drops the entries older than the retention at `now`; returns them.
    #[must_use]
    pub fn expire(&mut self, now: i64) -> Vec<Change> {
        self.expire_at(now)
    }

    fn expire_at(&mut self, now: i64) -> Vec<Change> {
        let oldest_kept = now.saturating_sub(self.retention);
        let mut dropped = Vec::new();
        while let Some(front) = self.entries.front() {
            if front.crts >= oldest_kept && self.bytes <= self.max_bytes {
                break;
            }
            self.dropped_through = front.lsn;
            self.bytes -= front.body.len();
            dropped.extend(self.entries.pop_front());
        }
        dropped
    }

    /// The entries after `lsn`, in order; `Err` with the oldest LSN still
    /// readable when some entries after `lsn` were dropped already.
    pub fn after(&self, lsn: u64) -> Result<impl Iterator<Item = &Change>, u64> {
        if lsn < self.dropped_through {
            return Err(self.dropped_through);
        }
        Ok(self.entries.after(lsn))
    }

    /// The retained entries after `lsn`, in order, whether or not some
    /// after it were dropped (the caller checks what it needed was kept).
    pub fn retained_after(&self, lsn: u64) -> impl Iterator<Item = &Change> {
        self.entries.after(lsn)
    }

    /// How many entries are retained (for tests and stats).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::store::sequence::CHUNK;

    fn change(log: &mut ChangeLog, id: &str, crts: i64) -> u64 {
        let lsn = log.next_lsn();
        let _ = log.append(Change {
            lsn,
            range_lsn: lsn,
            crts,
            key: ItemKey::new("[\"p\"]", id),
            kind: ChangeKind::Create,
            body: Bytes::from_static(b"{}"),
            previous_lsn: None,
        });
        lsn
    }

    #[test]
    fn entries_come_in_lsn_order_after_a_point() {
        let mut log = ChangeLog::new(100);
        for (i, id) in ["a", "b", "c"].iter().enumerate() {
            assert_eq!(change(&mut log, id, 10), i as u64 + 1);
        }
        let ids: Vec<&str> = log.after(1).unwrap().map(|c| c.key.id()).collect();
        assert_eq!(ids, ["b", "c"]);
        assert_eq!(log.after(3).unwrap().count(), 0);
        assert_eq!(log.last_lsn(), 3);
    }

    #[test]
    fn entries_span_chunks_in_order() {
        let mut log = ChangeLog::new(1_000_000);
        for i in 0..(3 * CHUNK + 5) {
            change(&mut log, &format!("i{i}"), i as i64);
        }
        assert_eq!(log.len(), 3 * CHUNK + 5);
        for after in [0, 1, CHUNK as u64 - 1, CHUNK as u64, 2 * CHUNK as u64 + 7] {
            let lsns: Vec<u64> = log.after(after).unwrap().map(|c| c.lsn).collect();
            let expected: Vec<u64> = (after + 1..=3 * CHUNK as u64 + 5).collect();
            assert_eq!(lsns, expected, "after {after}");
        }
        // Retention drops whole and partial chunks from the front.
        let _ = log.expire(1_000_000 + CHUNK as i64 + 10);
        assert_eq!(log.len(), 3 * CHUNK + 5 - (CHUNK + 10));
        assert_eq!(
            log.after(CHUNK as u64 + 10).unwrap().next().unwrap().lsn,
            CHUNK as u64 + 11
        );
        assert!(log.after(CHUNK as u64 + 9).is_err());
    }

    #[test]
    fn the_oldest_entries_go_once_their_json_passes_the_bound() {
        let mut log = ChangeLog::new(1000);
        log.max_bytes = 10;
        for id in ["a", "b", "c"] {
            let lsn = log.next_lsn();
            let _ = log.append(Change {
                lsn,
                range_lsn: lsn,
                crts: 1,
                key: ItemKey::new("[\"p\"]", id),
                kind: ChangeKind::Create,
                body: Bytes::from_static(b"{\"x\":1}"),
                previous_lsn: None,
            });
        }
        // 7 bytes each: only the last fits 10.
        let ids: Vec<&str> = log.after(2).unwrap().map(|c| c.key.id()).collect();
        assert_eq!(ids, ["c"]);
        assert_eq!(log.after(1).err(), Some(2));
    }

    #[test]
    fn entries_past_the_retention_are_dropped_and_reading_before_them_is_refused() {
        let mut log = ChangeLog::new(100);
        change(&mut log, "old", 0);
        change(&mut log, "kept", 50);
        change(&mut log, "new", 101);
        assert_eq!(log.len(), 2, "the entry of 0 is older than 101 - 100");
        assert_eq!(log.after(0).err(), Some(1), "LSN 1 was dropped");
        let ids: Vec<&str> = log.after(1).unwrap().map(|c| c.key.id()).collect();
        assert_eq!(ids, ["kept", "new"]);
        let _ = log.expire(1000);
        assert_eq!(log.len(), 0);
        assert!(log.after(3).unwrap().next().is_none());
        assert!(log.after(2).is_err());
    }
}
