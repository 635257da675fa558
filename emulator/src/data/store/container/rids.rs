//! Items by RID, numbered as the service numbers them: per physical
//! partition (`rid::item_document`). A create takes the next counter of
//! its range's `ridPrefix` (the range's id); the RID keeps the counter and
//! the prefix, so a split's children keep their items' RIDs and number
//! their new items under their own prefixes. The RID order is not the
//! write order across a container (the item number, `scan.rs`, is):
//! what it decides is which of equally ranked items the SDKs' hybrid
//! search keeps, as they sort drained results by `_rid` (`docs/src/search.md`).
//!
//! One [`NumberedKeys`] per prefix, keyed by counter: counters only grow
//! within a prefix, so each is appended in order.

use std::collections::HashMap;

use crate::data::store::numbered::NumberedKeys;
use crate::protocol::item_key::ItemKey;
use crate::protocol::rid;

#[derive(Debug, Default)]
pub(super) struct RidIndex {
    prefixes: HashMap<u32, Counted>,
}

/// One prefix's items by counter, and the highest counter it gave.
#[derive(Debug, Default)]
struct Counted {
    last: u64,
    keys: NumberedKeys,
}

impl RidIndex {
    /// The document part (`rid::item_document`) a new item of the range
    /// whose `ridPrefix` is `prefix` takes.
    pub(super) fn next(&self, prefix: u32) -> u64 {
        let last = self.prefixes.get(&prefix).map_or(0, |c| c.last);
        rid::item_document(prefix, last + 1)
    }

    /// Records the item at `key` under its RID's document part: the
    /// highest of its prefix so far (a restore inserts in order).
    pub(super) fn insert(&mut self, document: u64, key: ItemKey) {
        let (prefix, counter) = rid::split_item_document(document);
        let counted = self.prefixes.entry(prefix).or_default();
        counted.last = counted.last.max(counter);
        counted.keys.insert(counter, key);
    }

    /// Forgets the item at `key` (the counter stays given).
    pub(super) fn remove(&mut self, document: u64, key: &ItemKey) {
        let (prefix, counter) = rid::split_item_document(document);
        if let Some(counted) = self.prefixes.get_mut(&prefix) {
            counted.keys.remove(counter, key);
        }
    }

    /// The live key under the RID's document part.
    pub(super) fn get(&self, document: u64) -> Option<&ItemKey> {
        let (prefix, counter) = rid::split_item_document(document);
        self.prefixes.get(&prefix)?.keys.get(counter)
    }

    /// Builds the index from `items` in any order: (document part, key).
    pub(super) fn restore(&mut self, mut items: Vec<(u64, ItemKey)>) {
        items.sort_unstable_by_key(|(document, _)| rid::split_item_document(*document));
        for (document, key) in items {
            self.insert(document, key);
        }
    }

    /// Each prefix's highest counter given, deleted items' too: what a
    /// snapshot keeps, so that no RID is given twice.
    pub(super) fn counters(&self) -> Vec<(u32, u64)> {
        let mut counters: Vec<(u32, u64)> = self
            .prefixes
            .iter()
            .map(|(prefix, counted)| (*prefix, counted.last))
            .collect();
        counters.sort_unstable();
        counters
    }

    /// Counters only grow: takes `counters` where they are higher.
    pub(super) fn keep_growing(&mut self, counters: &[(u32, u64)]) {
        for (prefix, last) in counters {
            let mine = self.prefixes.entry(*prefix).or_default();
            mine.last = mine.last.max(*last);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: &str) -> ItemKey {
        ItemKey::new("[\"p\"]", id)
    }

    #[test]
    fn each_prefix_counts_its_own_items() {
        let mut index = RidIndex::default();
        let a = index.next(0);
        index.insert(a, key("a"));
        let b = index.next(1);
        index.insert(b, key("b"));
        let c = index.next(0);
        index.insert(c, key("c"));
        assert_eq!(rid::split_item_document(a), (0, 1));
        assert_eq!(rid::split_item_document(b), (1, 1));
        assert_eq!(rid::split_item_document(c), (0, 2));
        assert_eq!(index.get(b), Some(&key("b")));
        index.remove(c, &key("c"));
        assert_eq!(index.get(c), None);
        // A removed item's counter is not given again.
        assert_eq!(rid::split_item_document(index.next(0)), (0, 3));
    }

    #[test]
    fn a_restore_takes_items_in_any_order() {
        let mut index = RidIndex::default();
        let docs = [
            rid::item_document(1, 2),
            rid::item_document(0, 7),
            rid::item_document(1, 1),
            rid::item_document(0, 3),
        ];
        index.restore(
            docs.iter()
                .enumerate()
                .map(|(i, d)| (*d, key(&i.to_string())))
                .collect(),
        );
        for (i, d) in docs.iter().enumerate() {
            assert_eq!(index.get(*d), Some(&key(&i.to_string())));
        }
        assert_eq!(rid::split_item_document(index.next(0)), (0, 8));
        assert_eq!(rid::split_item_document(index.next(1)), (1, 3));
        index.keep_growing(&[(1, 9), (0, 2), (5, 4)]);
        assert_eq!(rid::split_item_document(index.next(1)), (1, 10));
        assert_eq!(rid::split_item_document(index.next(0)), (0, 8));
        assert_eq!(index.counters(), [(0, 7), (1, 9), (5, 4)]);
    }
}
