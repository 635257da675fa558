//! Item keys under numbers that only grow, in order: a container keeps two.
//! - Live items by the LSN of their last write (`by_lsn`): what the
//!   latest-version change feed reads, in order, from any LSN.
//! - Items by their number, the last part of their RID (`by_number`), for
//!   RID-based paths: a create takes the next number.
//!
//! A write appends its key at the back (the numbers only increase); a
//! rewrite or a delete leaves a tombstone where the old number was, found
//! from a guess or by binary search,
//! instead of rebalancing a tree or a hash table: a purge removes items in
//! write order (see `expiry.rs`), so it walks both front to back, where a
//! hash table took a cache miss or two per item at random. Tombstones at the front are dropped at once; the
//! rest are swept once they outnumber the live entries, so the index stays
//! within twice the live items.

use super::sequence::{Sequence, Sequenced};
use crate::protocol::item_key::ItemKey;

#[derive(Debug, Default)]
pub struct NumberedKeys {
    /// (number, key), `None` once rewritten or removed.
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

impl NumberedKeys {
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
    /// The live key under `number`, the first if several share it.
    pub fn get(&self, number: u64) -> Option<&ItemKey> {
        self.entries.at(number).find_map(|(_, key)| key.as_ref())
    }

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

    fn ids(index: &NumberedKeys, after: u64) -> Vec<String> {
        index.after(after).map(|(_, k)| k.id().to_owned()).collect()
    }

    #[test]
    fn a_rewrite_moves_the_key_to_its_new_lsn() {
        let mut index = NumberedKeys::default();
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
    fn a_number_finds_its_live_key() {
        let mut index = NumberedKeys::default();
        for n in 1..=3000 {
            index.insert(n, key(&n.to_string()));
        }
        assert_eq!(index.get(1234), Some(&key("1234")));
        index.remove(1234, &key("1234"));
        assert_eq!(index.get(1234), None);
        assert_eq!(index.get(1), Some(&key("1")));
        assert_eq!(index.get(3000), Some(&key("3000")));
        assert_eq!(index.get(0), None);
        assert_eq!(index.get(3001), None);
    }

    #[test]
    fn keys_sharing_an_lsn_are_removed_one_by_one() {
        let mut index = NumberedKeys::default();
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
        let mut index = NumberedKeys::default();
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
