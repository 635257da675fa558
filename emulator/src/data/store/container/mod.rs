//! One container: its properties, its items, and their expiry index.
//!
//! Every lookup here takes `now` and treats an expired item as absent (R5),
//! whether or not the background purge has removed it yet.
//!
//! This file is the container and its properties; its parts are `impl
//! Container` blocks by concept: `writes.rs` (an item's versions in and
//! out, and the purge), `changes.rs` (the change log and its LSNs),
//! `scan.rs` (write order), `rids.rs`, `index.rs`, `unique.rs`,
//! `vectors.rs` (the indexes beside the items), `settings.rs` (what it is
//! created with), `view.rs` (the query engine's view of it) and
//! `restore.rs` (the data directory's side).

mod changes;
mod index;
mod restore;
mod rids;
mod scan;
mod settings;
mod unique;
mod vectors;
mod view;
mod writes;

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::{json, Map, Value};

use super::encryption_policy;
use super::expiry::ExpiryIndex;
use super::item::{new_etag, Item};
use super::log::ChangeLog;
use super::numbered::NumberedKeys;
use super::ranges::{Range, RangeMap, SplitRefusal};
use super::records::ContainerNumbers;
use super::script::Scripts;
use super::unique_keys::UniqueIndex;
use crate::data::index::search_policy::{check_embeddings_kept, check_vector_indexes_kept};
use crate::data::index::vectors::VectorColumns;
use crate::data::index::PathIndexes;
use crate::data::persist::Journal;
use crate::data::query::spatial_column::SpatialColumns;
use crate::data::ttl::{self, Ttl};
use crate::protocol::error::{ApiError, ApiResult};
use crate::protocol::item_key::ItemKey;
use crate::protocol::partition_key::PartitionKeyDefinition;
use crate::protocol::rid;

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
    /// (`data/query/spatial_column.rs`); empty without `spatialIndexes`.
    spatial: SpatialColumns,
    /// The physical partition key ranges (`pkranges`): set at creation,
    /// changed by splits.
    ranges: RangeMap,
    /// The container's RID and name path, built once: every item response
    /// names them (`x-ms-content-path`, `x-ms-alt-content-path`).
    pub owner: Owner,
    /// With `--data-dir`: where every change is written ahead (`durable/`).
    journal: Option<Arc<Journal>>,
    /// Its stored procedures, triggers and user-defined functions
    /// (`script.rs`): metadata, journaled with its settings.
    pub(in crate::data::store) scripts: Scripts,
}

/// The container that owns an item, as every item response names it:
/// its RID and its path by name, built once and shared (a clone copies no
/// bytes). `http/response.rs` writes them as headers.
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
    crate::protocol::epk::effective_partition_key(definition, &components)
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
    /// as they are (`data/index/search_policy.rs` says which additions are allowed).
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
                crate::protocol::partition_key::system_key_definition()
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

    /// The key of the item with this RID, if it is one of this container's.
    pub fn key_by_rid(&self, item_rid: &str) -> Option<&ItemKey> {
        let (db, container, document) = rid::parse_item(item_rid)?;
        if (db, container) != (self.database_number, self.number) {
            return None;
        }
        self.by_rid.get(document)
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
