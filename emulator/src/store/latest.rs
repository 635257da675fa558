//! Live items by the LSN of their last write: what the latest-version
//! change feed reads, in order, from any LSN.
//!
//! A write appends its key at the back (LSNs only increase); a rewrite or a
//! delete leaves a tombstone where the old LSN was, found by binary search,
//! instead of rebalancing a tree: removing a million purged items stays a
//! few cache misses each. Tombstones at the front are dropped at once; the
//! rest are swept once they outnumber the live entries, so the index stays
//! within twice the live items.

use super::sequence::{Sequence, Sequenced};
use super::ItemKey;

#[derive(Debug, Default)]
pub struct LatestWrites {
    /// (LSN of the last write, key), `None` once rewritten or removed.
    entries: Sequence<(u64, Option<ItemKey>)>,
    tombstones: usize,
}

impl Sequenced for (u64, Option<ItemKey>) {
    fn lsn(&self) -> u64 {
        self.0
    }
}

/// Sweeps wait until there are at least this many tombstones.
const SWEEP_AT_LEAST: usize = 4096;

impl LatestWrites {
    /// Records the write of `key` under `lsn` (at least every earlier one).
    pub fn insert(&mut self, lsn: u64, key: ItemKey) {
        self.entries.push((lsn, Some(key)));
    }

    /// Forgets the write of `key` under `lsn`: the item was rewritten or removed.
    pub fn remove(&mut self, lsn: u64, key: &ItemKey) {
        let Some(slot) = self
            .entries
            .at_mut(lsn)
            .find(|(_, k)| k.as_ref() == Some(key))
        else {
            debug_assert!(false, "{key:?} was not indexed under {lsn}");
            return;
        };
        slot.1 = None;
        self.tombstones += 1;
        while self.entries.front().is_some_and(|(_, k)| k.is_none()) {
            self.entries.pop_front();
            self.tombstones -= 1;
        }
        if self.tombstones >= SWEEP_AT_LEAST && self.tombstones > self.live() {
            self.entries.retain(|(_, k)| k.is_some());
            self.tombstones = 0;
        }
    }

    /// The live keys written after `lsn`, in LSN order.
    pub fn after(&self, lsn: u64) -> impl Iterator<Item = (u64, &ItemKey)> {
        self.entries
            .after(lsn)
            .filter_map(|(lsn, key)| Some((*lsn, key.as_ref()?)))
    }

    fn live(&self) -> usize {
        self.entries.len() - self.tombstones
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: &str) -> ItemKey {
        ItemKey::new("[\"p\"]", id)
    }

    fn ids(index: &LatestWrites, after: u64) -> Vec<String> {
        index.after(after).map(|(_, k)| k.id().to_owned()).collect()
    }

    #[test]
    fn a_rewrite_moves_the_key_to_its_new_lsn() {
        let mut index = LatestWrites::default();
        index.insert(1, key("a"));
        index.insert(2, key("b"));
        index.insert(3, key("c"));
        index.remove(1, &key("a"));
        index.insert(4, key("a"));
        assert_eq!(ids(&index, 0), ["b", "c", "a"]);
        assert_eq!(ids(&index, 2), ["c", "a"]);
        index.remove(3, &key("c"));
        assert_eq!(ids(&index, 0), ["b", "a"]);
    }

    #[test]
    fn keys_sharing_an_lsn_are_removed_one_by_one() {
        let mut index = LatestWrites::default();
        index.insert(1, key("x"));
        for id in ["a", "b", "c"] {
            index.insert(7, key(id));
        }
        index.remove(7, &key("b"));
        assert_eq!(ids(&index, 0), ["x", "a", "c"]);
        assert_eq!(ids(&index, 6), ["a", "c"]);
        assert!(ids(&index, 7).is_empty());
    }

    #[test]
    fn tombstones_are_swept_and_the_front_is_dropped() {
        let mut index = LatestWrites::default();
        let n = 4 * SWEEP_AT_LEAST as u64;
        index.insert(1, key("kept"));
        for lsn in 2..=n {
            index.insert(lsn, key(&lsn.to_string()));
        }
        // Remove all but the first: tombstones never reach the front.
        for lsn in 2..=n {
            index.remove(lsn, &key(&lsn.to_string()));
        }
        assert_eq!(ids(&index, 0), ["kept"]);
        assert!(
            index.entries.len() <= 2 * SWEEP_AT_LEAST,
            "swept: {} entries",
            index.entries.len()
        );
        index.remove(1, &key("kept"));
        assert_eq!((index.entries.len(), index.tombstones), (0, 0));
        index.insert(n + 1, key("new"));
        assert_eq!(ids(&index, 0), ["new"]);
    }
}
