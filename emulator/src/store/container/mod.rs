//! One container: its properties, its items, and their expiry index.
//!
//! Every lookup here takes `now` and treats an expired item as absent (R5),
//! whether or not the background purge has removed it yet.

use std::collections::HashMap;
use std::num::NonZeroU64;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::{json, Map, Value};

use super::encryption_policy;
use super::expiry::ExpiryIndex;
use super::item::{new_etag, Etag, Item, Lsns, MAX_ITEM_BYTES};
use super::log::{Change, ChangeKind, ChangeLog};
use super::numbered::NumberedKeys;
use super::ranges::{Range, RangeMap, SplitRefusal};
use super::records::{self, ContainerNumbers};
use super::script::Scripts;
use super::unique_keys::UniqueIndex;
use crate::index::search_policy::{check_embeddings_kept, check_vector_indexes_kept};
use crate::index::vectors::VectorColumns;
use crate::index::PathIndexes;
use crate::item_key::ItemKey;
use crate::query::spatial_column::SpatialColumns;

mod index;
mod restore;
mod rids;
mod scan;
mod settings;
mod unique;
mod vectors;
mod view;
use crate::error::{ApiError, ApiResult};
use crate::partition_key::PartitionKeyDefinition;
use crate::persist::Journal;
use crate::rid;
use crate::ttl::{self, Ttl};
pub use settings::ContainerSettings;
pub use view::ScopedView;

#[derive(Debug)]
pub struct Container {
    pub id: String,
    pub rid: String,
    database_number: u32,
    number: u32,
    pub ts: i64,
    pub etag: String,
    pub settings: ContainerSettings,
    /// The items, for point operations.
    items: FastMap<ItemKey, Item>,
    /// Each partition's keys in write order (`scan.rs`), for scans of one.
    by_partition: scan::PartitionOrder,
    expiry: ExpiryIndex,
    /// Item number to key, in write order for scans of the whole
    /// container (`scan.rs`).
    by_number: NumberedKeys,
    /// The last part of an item's RID to key, for RID-based paths; each
    /// physical partition numbers its own (`rids.rs`).
    by_rid: rids::RidIndex,
    next_item: u64,
    /// Every change, for the all-versions-and-deletes feed (see `log.rs`).
    log: ChangeLog,
    /// Live items by the LSN of their last write: the latest-version feed.
    by_lsn: NumberedKeys,
    /// Which item holds each unique key value (`unique_keys.rs`); `None`
    /// without a unique key policy.
    unique: Option<Box<UniqueIndex>>,
    /// The vectors at each embedding path as float32 (`vectors.rs`); empty
    /// without an embedding policy.
    vectors: VectorColumns,
    /// Each item's value at the paths queries have filtered or sorted on
    /// (`index/`): built on demand, then kept on every write.
    indexes: PathIndexes,
    /// What each item's geography is at the policy's spatial index paths
    /// (`query/spatial_column.rs`); empty without `spatialIndexes`.
    spatial: SpatialColumns,
    /// The physical partition key ranges (`pkranges`): set at creation,
    /// changed by splits.
    ranges: RangeMap,
    /// The container's RID and name path, built once: every item response
    /// names them (`x-ms-content-path`, `x-ms-alt-content-path`).
    pub owner: Owner,
    /// With `--data-dir`: where every change is written ahead (`durable.rs`).
    journal: Option<Arc<Journal>>,
    /// Its stored procedures, triggers and user-defined functions
    /// (`scripts.rs`): metadata, journaled with its settings.
    pub(in crate::store) scripts: Scripts,
}

/// The container that owns an item, as every item response names it:
/// its RID and its path by name, built once and shared (a clone copies no
/// bytes). `http/container_context.rs` writes them as headers.
#[derive(Debug, Clone)]
pub struct Owner {
    /// The container's RID (`x-ms-content-path`).
    pub rid: Bytes,
    /// `dbs/{db}/colls/{coll}` by name (`x-ms-alt-content-path`).
    pub path: Bytes,
}

impl Owner {
    fn new(rid: &str, database_id: &str, id: &str) -> Self {
        Owner {
            rid: Bytes::copy_from_slice(rid.as_bytes()),
            path: Bytes::from(format!("dbs/{database_id}/colls/{id}")),
        }
    }
}

/// The effective partition key of the canonical key text `pk` under `definition`.
fn epk_of(definition: &PartitionKeyDefinition, pk: &str) -> String {
    let components: Value = serde_json::from_str(pk).unwrap_or_default();
    crate::epk::effective_partition_key(definition, &components)
}

/// The hash maps of a container: foldhash (hashbrown's own default) instead
/// of SipHash, which was a tenth of a purge's time. Keys are chosen by the
/// emulator's own clients, so resistance to hash flooding is not needed.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

impl Container {
    pub fn new(
        id: String,
        database_id: &str,
        database_number: u32,
        number: u32,
        settings: ContainerSettings,
        now: i64,
        default_retention: i64,
    ) -> Self {
        let retention = settings.change_feed_retention.unwrap_or(default_retention);
        let rid = rid::container(database_number, number);
        let ranges = RangeMap::even(&settings.partition_key, 1);
        let unique = UniqueIndex::for_policy(&settings.unique_keys);
        let vectors = VectorColumns::for_policy(&settings.vector_embeddings);
        let spatial = SpatialColumns::for_policy(&settings.indexing_policy);
        Container {
            owner: Owner::new(&rid, database_id, &id),
            id,
            rid,
            database_number,
            number,
            ts: now,
            etag: new_etag(),
            settings,
            items: FastMap::default(),
            by_partition: scan::PartitionOrder::default(),
            expiry: ExpiryIndex::default(),
            by_number: NumberedKeys::default(),
            by_rid: rids::RidIndex::default(),
            next_item: 1,
            log: ChangeLog::new(retention),
            by_lsn: NumberedKeys::default(),
            unique,
            vectors,
            spatial,
            indexes: PathIndexes::default(),
            ranges,
            journal: None,
            scripts: Scripts::default(),
        }
    }

    /// The numbers of its RID, which name it in the data directory.
    pub fn numbers(&self) -> ContainerNumbers {
        (self.database_number, self.number)
    }

    /// From now on, writes every change ahead into `journal`.
    pub fn attach(&mut self, journal: Option<Arc<Journal>>) {
        self.journal = journal;
    }

    /// The container's physical partition key ranges.
    pub fn ranges(&self) -> &RangeMap {
        &self.ranges
    }

    pub fn set_ranges(&mut self, ranges: RangeMap) {
        self.ranges = ranges;
    }

    /// Splits the range `id` in two (`POST /_emulator/split`): items stay
    /// where they are, only the map changes.
    pub fn split_range(&mut self, id: &str) -> Result<[Range; 2], SplitRefusal> {
        self.ranges.split(id)
    }

    /// The id of the range holding the items of the canonical partition key
    /// `pk`: for the pkrangeid and session token of an item's responses.
    pub fn range_of(&self, pk: &str) -> u32 {
        self.ranges.ranges()[self.range_index(pk)].id
    }

    /// The index (in its range map) of the range holding `pk`: hashed only
    /// when there are several ranges.
    fn range_index(&self, pk: &str) -> usize {
        self.ranges.index_of(|| self.epk(pk))
    }

    /// The effective partition key of `pk` (a partition key's components,
    /// as JSON text).
    pub fn epk(&self, pk: &str) -> String {
        epk_of(self.partition_key(), pk)
    }

    pub fn default_ttl(&self) -> Option<Ttl> {
        self.settings.default_ttl
    }

    /// Whether writes index items (the indexing mode is not `none`).
    pub fn indexes_writes(&self) -> bool {
        self.settings.indexes_writes
    }

    pub fn partition_key(&self) -> &PartitionKeyDefinition {
        &self.settings.partition_key
    }

    /// Replaces the container's settings. Items that are expired under the
    /// current settings are purged first, so that no later setting can bring
    /// them back (L11); the others keep their index entries (L6, L7).
    /// `default_retention` is the change log's retention for a container
    /// without a change feed policy. The partition key, unique keys,
    /// client encryption policy, vector embeddings and vector indexes stay
    /// as they are (`index/search_policy.rs` says which additions are allowed).
    /// Returns whether a new indexing policy began rebuilding the path
    /// indexes in use (`reindex.rs`).
    pub fn replace_settings(
        &mut self,
        settings: ContainerSettings,
        now: i64,
        default_retention: i64,
    ) -> ApiResult<bool> {
        if settings.partition_key.wire != self.settings.partition_key.wire
            && !settings.partition_key.wire.is_null()
        {
            return Err(ApiError::bad_request(
                "The partition key of a container cannot be changed: send the container's current partitionKey definition.",
            ));
        }
        Self::check_same_unique_keys(&self.settings.unique_keys, &settings.unique_keys)?;
        check_embeddings_kept(
            &self.settings.vector_embeddings,
            &settings.vector_embeddings,
        )?;
        check_vector_indexes_kept(&self.settings.indexing_policy, &settings.indexing_policy)?;
        encryption_policy::check_unchanged(
            self.settings.encryption_policy.as_ref(),
            settings.encryption_policy.as_ref(),
        )?;
        // The same policy, perhaps in another order: the current one stays.
        let mut settings = settings;
        if let Some(current) = &self.settings.encryption_policy {
            settings
                .extra
                .insert("clientEncryptionPolicy".into(), current.to_json());
            settings.encryption_policy = Some(current.clone());
        }
        self.purge_due(now, usize::MAX, &mut Vec::new());
        self.log
            .set_retention(settings.change_feed_retention.unwrap_or(default_retention));
        let partition_key = self.settings.partition_key.clone();
        let embeddings_changed = self.settings.vector_embeddings != settings.vector_embeddings;
        let indexing_changed = self.settings.indexing_policy != settings.indexing_policy;
        self.settings = ContainerSettings {
            partition_key,
            ..settings
        };
        if embeddings_changed {
            self.rebuild_vectors();
        }
        let reindex = indexing_changed && self.start_reindex();
        if indexing_changed {
            self.rebuild_spatial();
        }
        self.ts = now;
        self.etag = new_etag();
        Ok(reindex)
    }

    /// The container resource as served.
    pub fn to_json(&self, database_rid: &str) -> Value {
        let mut body = Map::new();
        body.insert("id".into(), Value::from(self.id.clone()));
        body.insert(
            "indexingPolicy".into(),
            self.settings.indexing_policy.clone(),
        );
        let partition_key = &self.settings.partition_key.wire;
        body.insert(
            "partitionKey".into(),
            if partition_key.is_null() {
                // A container made without one (an API version before
                // 2018-12-31): what the service shows of it since. The
                // SDKs send the empty key for items without _partitionKey
                // (the JavaScript SDK's bulk on a non-partitioned container
                // needs it) and an item's _partitionKey for the others
                // (`partition_key.rs`).
                crate::partition_key::system_key_definition()
            } else {
                partition_key.clone()
            },
        );
        if let Some(ttl) = self.settings.default_ttl {
            body.insert("defaultTtl".into(), Value::from(ttl.to_i64()));
        }
        for (k, v) in &self.settings.extra {
            body.insert(k.clone(), v.clone());
        }
        body.entry("conflictResolutionPolicy").or_insert_with(|| {
            json!({"mode": "LastWriterWins", "conflictResolutionPath": "/_ts", "conflictResolutionProcedure": ""})
        });
        body.entry("geospatialConfig")
            .or_insert_with(|| json!({"type": "Geography"}));
        body.insert("_rid".into(), Value::from(self.rid.clone()));
        body.insert("_ts".into(), Value::from(self.ts));
        body.insert(
            "_self".into(),
            Value::from(format!("dbs/{database_rid}/colls/{}/", self.rid)),
        );
        body.insert("_etag".into(), Value::from(self.etag.clone()));
        for (k, v) in [
            ("_docs", "docs/"),
            ("_sprocs", "sprocs/"),
            ("_triggers", "triggers/"),
            ("_udfs", "udfs/"),
            ("_conflicts", "conflicts/"),
        ] {
            body.insert(k.into(), Value::from(v));
        }
        Value::Object(body)
    }

    fn is_live(&self, item: &Item, now: i64) -> bool {
        !ttl::is_expired(self.settings.default_ttl, item.ttl, item.ts, now)
    }

    /// The item at `key`, unless it is absent or expired (R5).
    pub fn get(&self, key: &ItemKey, now: i64) -> Option<&Item> {
        self.items.get(key).filter(|item| self.is_live(item, now))
    }

    /// How many items are visible now: stored minus expired-but-not-purged.
    pub fn live_count(&self, now: i64) -> usize {
        self.items.len() - self.expiry.count_due(self.settings.default_ttl, now)
    }

    /// How many items are physically stored, expired or not (for tests and stats).
    pub fn stored_count(&self) -> usize {
        self.items.len()
    }

    /// Stores `body` at `key` as the item's new version, written at `now`;
    /// returns it with the id of its range. The caller has validated the
    /// body and decided that the write may happen.
    pub fn write(
        &mut self,
        key: ItemKey,
        body: Map<String, Value>,
        item_ttl: Option<Ttl>,
        now: i64,
    ) -> ApiResult<(Item, u32)> {
        let range = self.range_index(key.pk());
        let range_id = self.ranges.ranges()[range].id;
        let (number, rid) = match self.items.get(&key) {
            Some(old) => (old.number, old.rid),
            None => (self.next_number(), self.by_rid.next(range_id)),
        };
        let mut item = self.version((number, rid), body, item_ttl, now)?;
        item.stamp(self.next_lsn_at(range));
        self.install(key, item.clone());
        Ok((item, range_id))
    }

    /// A replace that names a new id: the item at `from` leaves (logged as a
    /// delete) and comes back at `to` with the new body (logged as a
    /// create), so that a change feed reader sees the old id go and the new
    /// one arrive. It takes a new RID: the RID index only grows (see
    /// `numbered.rs`). The caller has checked that `from` is live and `to`
    /// free.
    pub fn rename(
        &mut self,
        from: &ItemKey,
        to: ItemKey,
        body: Map<String, Value>,
        item_ttl: Option<Ttl>,
        now: i64,
    ) -> ApiResult<(Item, u32)> {
        // Built first: a body over the size limit changes nothing.
        let range = self.range_index(to.pk());
        let range_id = self.ranges.ranges()[range].id;
        let numbers = (self.next_number(), self.by_rid.next(range_id));
        let mut item = self.version(numbers, body, item_ttl, now)?;
        self.remove(from, now, false);
        item.stamp(self.next_lsn_at(range));
        self.install(to, item.clone());
        Ok((item, range_id))
    }

    /// The number a new item would get (its place in write order).
    pub fn next_number(&self) -> u64 {
        self.next_item + 1
    }

    /// The last part of the RID a new item at `key` would get: the next
    /// of its physical partition's (`rids.rs`).
    pub fn next_rid(&self, key: &ItemKey) -> u64 {
        self.by_rid.next(self.range_of(key.pk()))
    }

    /// Builds an item version numbered `number` whose RID ends in `rid`
    /// (from [`Self::next_number`] and [`Self::next_rid`], or the
    /// version it replaces), written at `now`, without storing it (its
    /// LSNs are 0 until it is stamped): the system properties are added
    /// and the stored size is checked.
    pub fn version(
        &self,
        (number, document): (u64, u64),
        mut body: Map<String, Value>,
        item_ttl: Option<Ttl>,
        now: i64,
    ) -> ApiResult<Item> {
        let etag = Etag::new();
        let rid = rid::item(self.database_number, self.number, document);
        let database_rid = rid::database(self.database_number);
        body.insert(
            "_self".into(),
            Value::from(format!("dbs/{database_rid}/colls/{}/docs/{rid}/", self.rid)),
        );
        body.insert("_rid".into(), Value::from(rid));
        body.insert("_etag".into(), Value::from(etag.to_string()));
        body.insert("_attachments".into(), Value::from("attachments/"));
        body.insert("_ts".into(), Value::from(now));
        let bytes = serde_json::to_vec(&body).expect("a JSON map serialises");
        if bytes.len() > MAX_ITEM_BYTES {
            return Err(ApiError::too_large(format!(
                "Request size is too large: the item is {} bytes; an item may be at most {MAX_ITEM_BYTES} bytes (2 MB).",
                bytes.len()
            )));
        }
        // The serialiser's buffer grows by doubling, and allocators may keep
        // a block whole when it shrinks: store an exact-size copy.
        let body = Bytes::copy_from_slice(&bytes);
        Ok(Item {
            body,
            ts: now,
            ttl: item_ttl,
            etag,
            number,
            rid: document,
            lsn: 0,
            range_lsn: 0,
        })
    }

    /// Stores a version built by [`Self::version`] at `key`, under its
    /// LSNs (from [`Self::next_lsn`]), and logs it as a create or a replace.
    pub fn install(&mut self, key: ItemKey, item: Item) {
        if let Some(journal) = &self.journal {
            let numbers = (self.database_number, self.number);
            journal.record(|out| records::encode_install(out, numbers, &key, &item));
        }
        self.next_item = self.next_item.max(item.number);
        let (lsn, range_lsn) = (item.lsn, item.range_lsn);
        let (number, rid, ttl, ts) = (item.number, item.rid, item.ttl, item.ts);
        let body = item.body.clone();
        let previous_lsn = match self.items.insert(key.clone(), item) {
            Some(old) => {
                self.indexes.put(number, &key, Some(&old.body), &body);
                self.expiry.remove(&key, old.ttl, old.ts, old.lsn);
                self.by_lsn.remove(old.lsn, &key);
                NonZeroU64::new(old.range_lsn)
            }
            None => {
                self.indexes.put(number, &key, None, &body);
                self.by_partition.insert(number, key.clone());
                self.by_number.insert(number, key.clone());
                self.by_rid.insert(rid, key.clone());
                None
            }
        };
        if let Some(unique) = &mut self.unique {
            unique.insert(&key, &body);
        }
        self.vectors.put(number, &key, &body);
        self.spatial.put(number, &key, &body);
        self.expiry.insert(&key, ttl, ts, lsn);
        self.by_lsn.insert(lsn, key.clone());
        self.log_change(Change {
            lsn,
            range_lsn,
            crts: ts,
            key,
            kind: match previous_lsn {
                Some(_) => ChangeKind::Replace,
                None => ChangeKind::Create,
            },
            body,
            previous_lsn,
        });
    }

    /// Gives out the next LSNs of a write in the partition `pk` (canonical
    /// key text): the change log's and its range's. One per change, or one
    /// for a whole transactional batch.
    pub fn next_lsn(&mut self, pk: &str) -> Lsns {
        let range = self.range_index(pk);
        self.next_lsn_at(range)
    }

    /// [`Self::next_lsn`] in the range at `index` of the range map.
    fn next_lsn_at(&mut self, index: usize) -> Lsns {
        let log = self.log.next_lsn();
        let range = self.ranges.lsns_mut(index).next(log);
        Lsns { log, range }
    }

    /// The LSN of the range `id` (the partition's LSN a response names);
    /// the highest of the container's ranges for a range it does not have.
    pub fn range_lsn(&self, id: u32) -> u64 {
        self.ranges
            .by_number(id)
            .map_or_else(|| self.ranges.highest_lsn(), |r| r.lsns.last())
    }

    /// Appends a change to the log, and notes in each range the newest of
    /// its changes the log dropped.
    fn log_change(&mut self, change: Change) {
        let dropped = self.log.append(change);
        self.note_dropped(dropped);
    }

    fn note_dropped(&mut self, dropped: Vec<Change>) {
        let definition = &self.settings.partition_key;
        for change in dropped {
            self.ranges
                .lsns_at(|| epk_of(definition, change.key.pk()))
                .dropped_from_log(change.range_lsn);
        }
    }

    /// Removes an item from storage and from every index, logging its
    /// delete at `now`: by a client, or (`ttl_expired`) because it expired.
    pub fn remove(&mut self, key: &ItemKey, now: i64, ttl_expired: bool) -> Option<Item> {
        let item = self.items.remove(key)?;
        self.expiry.remove(key, item.ttl, item.ts, item.lsn);
        let lsns = self.next_lsn(key.pk());
        self.forget(key, &item, now, ttl_expired, lsns);
        Some(item)
    }

    /// Removes an item deleted by a client, logging the delete under `lsns`
    /// (a transactional batch's one LSN).
    pub fn remove_under(&mut self, key: &ItemKey, now: i64, lsns: Lsns) -> Option<Item> {
        let item = self.items.remove(key)?;
        self.expiry.remove(key, item.ttl, item.ts, item.lsn);
        self.forget(key, &item, now, false, lsns);
        Some(item)
    }

    /// Drops a removed item from the other indexes and logs its delete.
    /// The delete keeps no image of the item: a purge of a million items
    /// logs a million deletes of a few dozen bytes each, and frees the items.
    fn forget(&mut self, key: &ItemKey, item: &Item, now: i64, ttl_expired: bool, lsns: Lsns) {
        if let Some(journal) = &self.journal {
            let numbers = (self.database_number, self.number);
            journal.record(|out| records::encode_remove(out, numbers, key, lsns, now, ttl_expired));
        }
        self.by_partition.remove(item.number, key);
        if let Some(unique) = &mut self.unique {
            unique.remove(key);
        }
        self.vectors.remove(key);
        self.spatial.remove(key);
        self.indexes.remove(item.number, key, &item.body);
        self.by_number.remove(item.number, key);
        self.by_rid.remove(item.rid, key);
        self.by_lsn.remove(item.lsn, key);
        self.log_change(Change {
            lsn: lsns.log,
            range_lsn: lsns.range,
            crts: now,
            key: key.clone(),
            kind: ChangeKind::Delete { ttl_expired },
            body: Bytes::new(),
            previous_lsn: NonZeroU64::new(item.range_lsn),
        });
    }

    /// Takes out of storage up to `limit` items that are due at `now`, and
    /// appends them to `purged`, so that the caller can free their memory
    /// after releasing the lock.
    pub fn purge_due(&mut self, now: i64, limit: usize, purged: &mut Vec<Item>) -> usize {
        // In write order (see `expiry.rs`): the LSN indexes are walked
        // front to back.
        let due = self.expiry.pop_due(self.settings.default_ttl, now, limit);
        for key in &due {
            if let Some(item) = self.items.remove(key) {
                // One TTL delete per expired item, logged when it is purged.
                let lsns = self.next_lsn(key.pk());
                self.forget(key, &item, now, true, lsns);
                purged.push(item);
            }
        }
        due.len()
    }

    /// Gives back hash table memory after a purge emptied most of a container
    /// (tables keep their largest size otherwise).
    pub fn shrink_after_purge(&mut self) {
        if self.items.capacity() > 4 * self.items.len() + 1024 {
            self.items.shrink_to_fit();
        }
    }

    /// The key of the item with this RID, if it is one of this container's.
    pub fn key_by_rid(&self, item_rid: &str) -> Option<&ItemKey> {
        let (db, container, document) = rid::parse_item(item_rid)?;
        if (db, container) != (self.database_number, self.number) {
            return None;
        }
        self.by_rid.get(document)
    }

    /// The live items changed after `lsn`, in the order of their last write
    /// (the latest-version change feed): expired items are skipped.
    pub fn latest_changes<'a>(
        &'a self,
        after: u64,
        now: i64,
    ) -> impl Iterator<Item = (&'a ItemKey, &'a Item)> + 'a {
        self.by_lsn
            .after(after)
            .map(|(_, key)| (key, &self.items[key]))
            .filter(move |(_, item)| self.is_live(item, now))
    }

    /// The log of changes (the all-versions-and-deletes feed).
    pub fn log(&self) -> &ChangeLog {
        &self.log
    }

    /// Drops log entries past the retention at `now`.
    pub fn expire_log(&mut self, now: i64) {
        let dropped = self.log.expire(now);
        self.note_dropped(dropped);
    }

    /// The next instant at which an item expires under the current settings.
    pub fn next_expiry(&self) -> Option<i64> {
        self.expiry.next_expiry(self.settings.default_ttl)
    }

    /// The next instant after `now` at which a live item expires.
    pub fn next_expiry_after(&self, now: i64) -> Option<i64> {
        self.expiry
            .next_expiry_after(self.settings.default_ttl, now)
    }
}
