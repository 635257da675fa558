//! The purge's side in the store: an item write tells the purge task of an
//! earlier expiry (`crate::data::purge` sleeps until the next one), and a purge
//! batch deletes due items under one short hold of the write lock; a write
//! that meets an expired item removes it on the spot instead.

use std::sync::atomic::Ordering;

use super::{Container, Etag, Store};
use crate::protocol::item_key::ItemKey;

impl Store {
    /// After an item write (lock released): a new session LSN, and the purge
    /// task told about the item's expiry instant if it is earlier than the
    /// one it sleeps towards (mini-redis's rule).
    pub(super) fn item_written(&self, expires_at: Option<i64>) {
        self.wrote();
        if let Some(at) = expires_at {
            if self.next_purge_at.fetch_min(at, Ordering::AcqRel) > at {
                self.purge_wakeup.notify_one();
            }
        }
    }

    /// Called when the manual clock moved.
    pub fn time_moved(&self) {
        self.purge_wakeup.notify_one();
    }

    pub(crate) async fn purge_wakeup(&self) {
        self.purge_wakeup.notified().await
    }

    /// Physically deletes up to `limit` due items, across containers, in one
    /// hold of the lock; their memory is freed after the lock is released.
    /// Returns how many, and when fewer than `limit`, the next instant at
    /// which anything expires.
    pub fn purge_batch(&self, limit: usize) -> (usize, Option<i64>) {
        let now = self.clock.now();
        let mut purged = Vec::with_capacity(limit.min(4096));
        let Ok(mut catalog) = self.write() else {
            // The data directory failed: nothing is deleted that cannot be kept deleted.
            return (0, None);
        };
        let mut count = 0;
        for c in catalog
            .databases
            .values_mut()
            .flat_map(|db| db.containers.values_mut())
        {
            count += c.purge_due(now, limit - count, &mut purged);
            if count == limit {
                drop(catalog);
                drop(purged);
                return (count, Some(now));
            }
        }
        // This pass is done: give back what the purge left oversized, and
        // the change log entries past their retention (otherwise dropped
        // only when the container is written again).
        for c in catalog
            .databases
            .values_mut()
            .flat_map(|db| db.containers.values_mut())
        {
            c.shrink_after_purge();
            c.expire_log(now);
        }
        let next = catalog
            .databases
            .values()
            .flat_map(|db| db.containers())
            .filter_map(Container::next_expiry)
            .min();
        self.next_purge_at
            .store(next.unwrap_or(i64::MAX), Ordering::Release);
        drop(catalog);
        drop(purged);
        (count, next)
    }
}

/// The etag of the live item at `key`; an expired one is removed on the spot
/// so that its id can be reused (L10).
pub(super) fn live_or_discard(c: &mut Container, key: &ItemKey, now: i64) -> Option<Etag> {
    if let Some(item) = c.get(key, now) {
        return Some(item.etag);
    }
    // Expired (or absent): its one TTL delete is logged as it goes.
    c.remove(key, now, true);
    None
}
