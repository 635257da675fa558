//! A container in the data directory (`data/store/durable/mod.rs`): what its
//! catalog record keeps, and putting it back from snapshots and journals.

use serde_json::Map;

use super::{Container, ContainerSettings};
use crate::data::store::durable::meta::ContainerMeta;
use crate::data::store::item::{Item, Lsns};
use crate::data::store::log::Change;
use crate::protocol::error::ApiResult;
use crate::protocol::item_key::ItemKey;

impl Container {
    /// What the metadata records keep of the container (not its items):
    /// its settings, ranges and scripts.
    pub fn meta(&self, database_rid: &str) -> ContainerMeta {
        ContainerMeta {
            id: self.id.clone(),
            rid: self.rid.clone(),
            number: self.number,
            ts: self.ts,
            etag: self.etag.clone(),
            resource: self.to_json(database_rid),
            ranges: self.ranges.clone(),
            scripts: self.scripts.clone(),
        }
    }

    /// (next item number, last LSN, LSN of the newest dropped log entry):
    /// what a snapshot keeps beside the items.
    pub fn counters(&self) -> (u64, u64, u64) {
        (
            self.next_item,
            self.log.last_lsn(),
            self.log.dropped_through(),
        )
    }

    /// Once the data directory is read: if it was written while LSNs were
    /// the container's, each range continues past the container's last.
    pub fn settle_container_lsns(&mut self) {
        self.ranges.settle_container_lsns(self.log.last_lsn());
    }

    /// Keeps the RIDs it gives beyond `other`'s: RIDs are not reused (a
    /// restored snapshot replacing the account's current container).
    pub fn keep_rids_growing(&mut self, other: &Container) {
        self.by_rid.keep_growing(&other.by_rid.counters());
    }

    /// Each physical partition's (`ridPrefix`, highest RID counter given):
    /// what a snapshot keeps beside the items (`rids.rs`).
    pub fn rid_counters(&self) -> Vec<(u32, u64)> {
        self.by_rid.counters()
    }

    /// Takes a snapshot's RID counters (they only grow).
    pub fn restore_rid_counters(&mut self, counters: &[(u32, u64)]) {
        self.by_rid.keep_growing(counters);
    }

    /// Takes a snapshot's counters (they only grow).
    pub fn restore_counters(&mut self, next_item: u64, last_lsn: u64, dropped_through: u64) {
        self.next_item = self.next_item.max(next_item);
        self.log.restore_last_lsn(last_lsn);
        self.log.restore_dropped_through(dropped_through);
    }

    /// A container as a metadata record describes it, without items yet.
    pub fn from_meta(
        meta: &ContainerMeta,
        database_id: &str,
        database_number: u32,
        default_retention: i64,
    ) -> ApiResult<Self> {
        let settings =
            ContainerSettings::parse_stored(meta.resource.as_object().unwrap_or(&Map::new()))?;
        let mut container = Container::new(
            meta.id.clone(),
            database_id,
            database_number,
            meta.number,
            settings,
            meta.ts,
            default_retention,
        );
        container.update_from_meta(meta, default_retention)?;
        Ok(container)
    }

    /// Takes a metadata record's settings, ranges and scripts.
    pub fn update_from_meta(
        &mut self,
        meta: &ContainerMeta,
        default_retention: i64,
    ) -> ApiResult<()> {
        let settings =
            ContainerSettings::parse_stored(meta.resource.as_object().unwrap_or(&Map::new()))?;
        self.log
            .set_retention(settings.change_feed_retention.unwrap_or(default_retention));
        let policy_changed = !self.settings.unique_keys.same_as(&settings.unique_keys);
        let embeddings_changed = self.settings.vector_embeddings != settings.vector_embeddings;
        let indexing_changed = self.settings.indexing_policy != settings.indexing_policy;
        if indexing_changed {
            self.drop_indexes();
        }
        self.settings = settings;
        if indexing_changed {
            self.rebuild_spatial();
        }
        if policy_changed {
            self.rebuild_unique();
        }
        if embeddings_changed {
            self.rebuild_vectors();
        }
        self.ts = meta.ts;
        self.etag = meta.etag.clone();
        // A split's record carries its children's LSNs; the items replayed
        // since may have raised the ranges' further.
        let mut ranges = meta.ranges.clone();
        ranges.carry_lsns(&self.ranges);
        self.ranges = ranges;
        self.scripts = meta.scripts.clone();
        Ok(())
    }

    /// The stored item at `key`, expired or not.
    pub fn stored(&self, key: &ItemKey) -> Option<&Item> {
        self.items.get(key)
    }

    /// Every stored item (expired or not), in the order of its last write.
    pub fn stored_in_lsn_order(&self) -> impl Iterator<Item = (&ItemKey, &Item)> {
        self.by_lsn.after(0).map(|(_, key)| (key, &self.items[key]))
    }

    /// Restores a snapshot's items, given in the order of their last write,
    /// into every index (the unique key index too: a later holder of a value
    /// replaces an earlier, expired one), logging nothing.
    pub fn restore_items(&mut self, items: Vec<(ItemKey, Item)>) {
        let mut by_number: Vec<(u64, ItemKey)> = Vec::with_capacity(items.len());
        let mut by_rid: Vec<(u64, ItemKey)> = Vec::with_capacity(items.len());
        self.drop_indexes();
        for (key, item) in items {
            self.next_item = self.next_item.max(item.number);
            self.expiry.insert(&key, item.ttl, item.ts, item.lsn);
            self.by_lsn.insert(item.lsn, key.clone());
            self.restore_range_lsn(&key, item.range_lsn, item.lsn);
            self.by_partition.insert(item.number, key.clone());
            by_number.push((item.number, key.clone()));
            by_rid.push((item.rid, key.clone()));
            self.restore_unique(&key, &item.body);
            self.vectors.put(item.number, &key, &item.body);
            self.spatial.put(item.number, &key, &item.body);
            self.items.insert(key, item);
        }
        by_number.sort_unstable_by_key(|(number, _)| *number);
        for (number, key) in by_number {
            self.by_number.insert(number, key);
        }
        self.by_rid.restore(by_rid);
    }

    /// Restores a snapshot's log entry; `body_is_current`: its body is the
    /// stored item's.
    pub fn restore_change(&mut self, mut change: Change, body_is_current: bool) {
        if body_is_current {
            if let Some(item) = self.items.get(&change.key) {
                change.body = item.body.clone();
            }
        }
        self.restore_range_lsn(&change.key.clone(), change.range_lsn, change.lsn);
        self.log.restore_entry(change);
    }

    /// Replays a journal's install: as it happened, logged again.
    pub fn replay_install(&mut self, key: ItemKey, item: Item) {
        self.log.restore_last_lsn(item.lsn);
        self.restore_range_lsn(&key, item.range_lsn, item.lsn);
        self.install(key, item);
    }

    /// Replays a journal's delete; `false` if the item was not there.
    pub fn replay_remove(
        &mut self,
        key: &ItemKey,
        lsns: Lsns,
        crts: i64,
        ttl_expired: bool,
    ) -> bool {
        self.log.restore_last_lsn(lsns.log);
        self.restore_range_lsn(key, lsns.range, lsns.log);
        let Some(item) = self.items.remove(key) else {
            return false;
        };
        self.expiry.remove(key, item.ttl, item.ts, item.lsn);
        self.forget(key, &item, crts, ttl_expired, lsns);
        true
    }

    /// A write in the range of `key` took the range LSN `lsn` under the
    /// log LSN `log`.
    fn restore_range_lsn(&mut self, key: &ItemKey, lsn: u64, log: u64) {
        let definition = &self.settings.partition_key;
        self.ranges
            .lsns_at(|| super::epk_of(definition, key.pk()))
            .restore(lsn, log);
    }
}
