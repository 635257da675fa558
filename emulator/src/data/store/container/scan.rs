//! What a scan reads, in the order the service returns it: within a
//! physical partition, the order items were first written (their `_rid`),
//! not by partition key and id (the Go SDK's `TestCrossPartitionQuery`
//! expects two partitions written in turn back in turn: `0, 10, 1, 11, ...`).
//!
//! An item's number (the last part of its RID) is that order: a create
//! takes the next one; a replace, upsert or patch keeps it, so the item
//! keeps its place; a delete and a new create, or a replace that renames
//! the item, take a new one, at the end. Two indexes give it:
//! - every item by number (`Container::by_number`), for a scan of the whole
//!   container or of a range of it (the caller filters the range);
//! - [`PartitionOrder`], each logical partition's items by number, for a
//!   scan of one partition that reads no other.
//!
//! A page resumes after the number of the last item it read: an item
//! written meanwhile comes after it (a new number), one replaced keeps its
//! place, and one deleted leaves no hole to lose the position in.

use std::cmp::Ordering;
use std::collections::BTreeSet;

use super::Container;
use crate::data::store::item::Item;
use crate::protocol::item_key::ItemKey;
use crate::protocol::partition_key::KeyScope;

/// Each logical partition's items in write order: (partition key, number).
#[derive(Debug, Default)]
pub(super) struct PartitionOrder {
    slots: BTreeSet<Slot>,
}

/// An item's place: ordered by its partition key, then its number (the
/// id plays no part: numbers are unique within a container).
#[derive(Debug, Clone)]
struct Slot {
    key: ItemKey,
    number: u64,
}

impl Ord for Slot {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key
            .pk()
            .cmp(other.key.pk())
            .then(self.number.cmp(&other.number))
    }
}

impl PartialOrd for Slot {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Slot {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Slot {}

impl PartitionOrder {
    pub(super) fn insert(&mut self, number: u64, key: ItemKey) {
        self.slots.insert(Slot { key, number });
    }

    pub(super) fn remove(&mut self, number: u64, key: &ItemKey) {
        self.slots.remove(&Slot {
            key: key.clone(),
            number,
        });
    }

    /// The items in `scope` numbered after `after`, in write order. One
    /// partition is one run of the set; a hierarchical key's prefix holds
    /// several, merged by number.
    pub(super) fn in_scope<'a>(
        &'a self,
        scope: &'a KeyScope,
        after: u64,
    ) -> Box<dyn Iterator<Item = (u64, &'a ItemKey)> + 'a> {
        let start = |number| Slot {
            key: ItemKey::scope_start(scope),
            number,
        };
        match scope {
            KeyScope::Exact(pk) => Box::new(
                self.slots
                    .range(start(after.saturating_add(1))..)
                    .take_while(move |slot| slot.key.pk() == pk)
                    .map(|slot| (slot.number, &slot.key)),
            ),
            KeyScope::Prefix { .. } => {
                let mut items: Vec<(u64, &ItemKey)> = self
                    .slots
                    .range(start(0)..)
                    .take_while(|slot| scope.contains(slot.key.pk()))
                    .filter(|slot| slot.number > after)
                    .map(|slot| (slot.number, &slot.key))
                    .collect();
                items.sort_unstable_by_key(|(number, _)| *number);
                Box::new(items.into_iter())
            }
        }
    }
}

/// A scan's item: its number, key and stored version.
pub type Scanned<'a> = (u64, &'a ItemKey, &'a Item);

impl Container {
    /// Live items in write order, optionally within one partition (or a
    /// hierarchical key's prefix), numbered after `after` (a resumed
    /// page). Expired items are skipped (R5).
    pub fn live_items<'a>(
        &'a self,
        scope: Option<&'a KeyScope>,
        after: Option<u64>,
        now: i64,
    ) -> impl Iterator<Item = Scanned<'a>> + 'a {
        let after = after.unwrap_or(0);
        let numbered: Box<dyn Iterator<Item = (u64, &'a ItemKey)> + 'a> = match scope {
            Some(scope) => self.by_partition.in_scope(scope, after),
            None => Box::new(self.by_number.after(after)),
        };
        numbered
            .map(|(number, key)| (number, key, &self.items[key]))
            .filter(move |(_, _, item)| self.is_live(item, now))
    }

    /// Up to `limit` stored items in key order (partition key, then id)
    /// after `after`, expired or not: the explorer's listing, which sorts
    /// them (no scan of the service reads in that order).
    pub fn stored_in_key_order(
        &self,
        after: Option<&ItemKey>,
        limit: usize,
    ) -> Vec<(&ItemKey, &Item)> {
        let mut keys: Vec<&ItemKey> = self
            .items
            .keys()
            .filter(|key| after.is_none_or(|after| *key > after))
            .collect();
        if keys.len() > limit {
            keys.select_nth_unstable(limit);
            keys.truncate(limit);
        }
        keys.sort_unstable();
        keys.into_iter()
            .map(|key| (key, &self.items[key]))
            .collect()
    }

    /// Every stored item, expired or not, in no particular order.
    pub fn stored_items(&self) -> impl Iterator<Item = (&ItemKey, &Item)> {
        self.items.iter()
    }

    /// Deletes every item in `scope` at `now` (delete by partition key), each
    /// logged as a delete, in write order; an expired item not yet purged is
    /// logged as its one TTL delete, as the purge would have. Returns the
    /// removed items, for the caller to free once the lock is released.
    pub fn remove_scope(&mut self, scope: &KeyScope, now: i64) -> Vec<Item> {
        let keys: Vec<ItemKey> = self
            .by_partition
            .in_scope(scope, 0)
            .map(|(_, key)| key.clone())
            .collect();
        keys.iter()
            .filter_map(|key| {
                let expired = !self.is_live(&self.items[key], now);
                self.remove(key, now, expired)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(order: &PartitionOrder, scope: &KeyScope, after: u64) -> Vec<String> {
        order
            .in_scope(scope, after)
            .map(|(_, key)| key.id().to_owned())
            .collect()
    }

    #[test]
    fn a_partition_reads_in_number_order_not_by_id() {
        let mut order = PartitionOrder::default();
        for (number, pk, id) in [
            (2, "[\"b\"]", "z"),
            (3, "[\"a\"]", "y"),
            (4, "[\"b\"]", "a"),
            (5, "[\"a\"]", "b"),
            (6, "[\"b\"]", "m"),
        ] {
            order.insert(number, ItemKey::new(pk, id));
        }
        let b = KeyScope::Exact("[\"b\"]".into());
        assert_eq!(ids(&order, &b, 0), ["z", "a", "m"]);
        assert_eq!(ids(&order, &b, 2), ["a", "m"]);
        assert_eq!(ids(&order, &b, 4), ["m"]);
        assert!(ids(&order, &b, 6).is_empty());
        order.remove(4, &ItemKey::new("[\"b\"]", "a"));
        assert_eq!(ids(&order, &b, 0), ["z", "m"]);
        let a = KeyScope::Exact("[\"a\"]".into());
        assert_eq!(ids(&order, &a, 0), ["y", "b"]);
    }

    #[test]
    fn a_prefix_merges_its_partitions_by_number() {
        let mut order = PartitionOrder::default();
        for (number, pk, id) in [
            (2, r#"["t","u2"]"#, "1"),
            (3, r#"["t","u1"]"#, "2"),
            (4, r#"["s","u1"]"#, "3"),
            (5, r#"["t","u2"]"#, "4"),
            (6, r#"["u","u0"]"#, "5"),
        ] {
            order.insert(number, ItemKey::new(pk, id));
        }
        let t = KeyScope::Prefix {
            text: r#"["t","#.into(),
            components: 1,
        };
        assert_eq!(ids(&order, &t, 0), ["1", "2", "4"]);
        assert_eq!(ids(&order, &t, 2), ["2", "4"]);
        assert!(ids(&order, &t, 5).is_empty());
    }
}
