//! The ordered expiry index of one container (after mini-redis; see
//! `docs/src/architecture.md#time-and-expiry`).
//!
//! Two ordered sets, so that a purge pops exactly the items that are due and
//! a change of the container's `defaultTtl` rewrites nothing:
//! - `own`: items with their own `ttl = n > 0`, by `_ts + n`;
//! - `inheriting`: items without a `ttl`, by `_ts`. Under a default of `d`
//!   they expire at `_ts + d`; the order is the same for every `d`.
//!
//! Within one instant, entries are in write order (the LSN of the version):
//! a purge then walks the change log's LSN indexes front to back instead of
//! in key order, all over them (a third of a million-item purge), the TTL
//! deletes come in the order the items were written, and ordering an entry
//! compares two integers instead of following the key to its text.
//!
//! Items with `ttl = -1` never expire (while TTL is on) and are in neither.
//! Under a container without TTL (R8) neither set is consulted, but the
//! entries stay so that re-enabling TTL applies them again (L6).

use std::collections::BTreeSet;

use crate::data::ttl::Ttl;
use crate::protocol::item_key::ItemKey;

#[derive(Debug, Default)]
pub struct ExpiryIndex {
    own: BTreeSet<(i64, u64, ItemKey)>,
    inheriting: BTreeSet<(i64, u64, ItemKey)>,
}

impl ExpiryIndex {
    pub fn insert(&mut self, key: &ItemKey, item_ttl: Option<Ttl>, ts: i64, lsn: u64) {
        match item_ttl {
            None => self.inheriting.insert((ts, lsn, key.clone())),
            Some(Ttl::Seconds(n)) => self.own.insert((ts.saturating_add(n), lsn, key.clone())),
            Some(Ttl::Never) => false,
        };
    }

    pub fn remove(&mut self, key: &ItemKey, item_ttl: Option<Ttl>, ts: i64, lsn: u64) {
        match item_ttl {
            None => self.inheriting.remove(&(ts, lsn, key.clone())),
            Some(Ttl::Seconds(n)) => self.own.remove(&(ts.saturating_add(n), lsn, key.clone())),
            Some(Ttl::Never) => false,
        };
    }

    /// The earliest instant at which some item expires under `default`.
    pub fn next_expiry(&self, default: Option<Ttl>) -> Option<i64> {
        let own = self.own.first().map(|(at, ..)| *at);
        let inherited = match default? {
            Ttl::Seconds(d) => self.inheriting.first().map(|(ts, ..)| ts.saturating_add(d)),
            Ttl::Never => None,
        };
        own.into_iter().chain(inherited).min()
    }

    /// The earliest instant after `now` at which some item expires under
    /// `default`: the next expiry of a live item (what the data explorer's
    /// "next expiry" jumps to). O(k) for the k items due and not yet purged.
    pub fn next_expiry_after(&self, default: Option<Ttl>, now: i64) -> Option<i64> {
        let own = self.own.iter().map(|(at, ..)| *at).find(|&at| at > now);
        let inherited = match default? {
            Ttl::Seconds(d) => self
                .inheriting
                .iter()
                .map(|(ts, ..)| ts.saturating_add(d))
                .find(|&at| at > now),
            Ttl::Never => None,
        };
        own.into_iter().chain(inherited).min()
    }

    /// Takes out of the index up to `limit` items that are due at `now` under
    /// `default` and returns their keys: O(k log n) for k items.
    pub fn pop_due(&mut self, default: Option<Ttl>, now: i64, limit: usize) -> Vec<ItemKey> {
        let Some(default) = default else {
            return Vec::new();
        };
        let mut due = Vec::new();
        while due.len() < limit && self.own.first().is_some_and(|(at, ..)| *at <= now) {
            due.push(self.own.pop_first().expect("checked non-empty").2);
        }
        if let Ttl::Seconds(d) = default {
            while due.len() < limit
                && self
                    .inheriting
                    .first()
                    .is_some_and(|(ts, ..)| ts.saturating_add(d) <= now)
            {
                due.push(self.inheriting.pop_first().expect("checked non-empty").2);
            }
        }
        due
    }

    /// How many items are due at `now` (expired but not yet purged): O(k).
    pub fn count_due(&self, default: Option<Ttl>, now: i64) -> usize {
        let Some(default) = default else { return 0 };
        let own = self.own.iter().take_while(|(at, ..)| *at <= now).count();
        let inherited = match default {
            Ttl::Seconds(d) => self
                .inheriting
                .iter()
                .take_while(|(ts, ..)| ts.saturating_add(d) <= now)
                .count(),
            Ttl::Never => 0,
        };
        own + inherited
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: &str) -> ItemKey {
        ItemKey::new("[\"p\"]", id)
    }

    #[test]
    fn pops_only_due_items_in_order_and_follows_the_default() {
        let mut index = ExpiryIndex::default();
        let (a, b, c, d) = (key("a"), key("b"), key("c"), key("d"));
        index.insert(&a, Some(Ttl::Seconds(10)), 100, 1); // at 110
        index.insert(&b, None, 100, 2); // at 100 + default
        index.insert(&c, Some(Ttl::Never), 100, 3); // never
        index.insert(&d, None, 200, 4);

        // TTL off: nothing is due, whatever the time.
        assert!(index.pop_due(None, 10_000, 100).is_empty());
        assert_eq!(index.next_expiry(Some(Ttl::Never)), Some(110));
        assert_eq!(index.next_expiry(Some(Ttl::Seconds(5))), Some(105));
        assert_eq!(index.count_due(Some(Ttl::Seconds(5)), 109), 1);

        assert_eq!(
            index.next_expiry_after(Some(Ttl::Seconds(5)), 105),
            Some(110)
        );
        assert_eq!(
            index.next_expiry_after(Some(Ttl::Seconds(5)), 110),
            Some(205)
        );
        assert_eq!(index.next_expiry_after(None, 0), None);
        let due = index.pop_due(Some(Ttl::Seconds(5)), 110, 100);
        assert_eq!(due, vec![a.clone(), b.clone()]);
        assert_eq!(index.next_expiry(Some(Ttl::Seconds(5))), Some(205));
        assert!(index.pop_due(Some(Ttl::Never), 1_000_000, 100).is_empty());
    }

    #[test]
    fn removal_and_limit() {
        let mut index = ExpiryIndex::default();
        let keys: Vec<_> = (0..10).map(|i| key(&i.to_string())).collect();
        for (i, k) in keys.iter().enumerate() {
            index.insert(k, Some(Ttl::Seconds(1)), i as i64, i as u64 + 1);
        }
        index.remove(&keys[0], Some(Ttl::Seconds(1)), 0, 1);
        let first = index.pop_due(Some(Ttl::Never), 100, 4);
        assert_eq!(first, keys[1..5].to_vec());
        assert_eq!(index.pop_due(Some(Ttl::Never), 100, 100).len(), 5);
    }

    #[test]
    fn items_due_at_one_instant_come_in_write_order() {
        let mut index = ExpiryIndex::default();
        // Written z, a, m (LSNs 1, 2, 3) at one instant: key order would be a, m, z.
        let (z, a, m) = (key("z"), key("a"), key("m"));
        index.insert(&z, Some(Ttl::Seconds(5)), 100, 1);
        index.insert(&a, None, 100, 2);
        index.insert(&m, Some(Ttl::Seconds(5)), 100, 3);
        let due = index.pop_due(Some(Ttl::Seconds(5)), 105, 10);
        // Own TTLs first, then inherited ones, each in write order.
        assert_eq!(due, vec![z.clone(), m.clone(), a.clone()]);
        // A removal names the version's LSN: another LSN removes nothing.
        index.insert(&z, Some(Ttl::Seconds(5)), 100, 7);
        index.remove(&z, Some(Ttl::Seconds(5)), 100, 6);
        assert_eq!(index.count_due(Some(Ttl::Never), 105), 1);
        index.remove(&z, Some(Ttl::Seconds(5)), 100, 7);
        assert_eq!(index.count_due(Some(Ttl::Never), 105), 0);
    }
}
