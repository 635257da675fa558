//! One container: its properties, its items, and their expiry index.
//!
//! Every lookup here takes `now` and treats an expired item as absent (R5),
//! whether or not the background purge has removed it yet.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Bound;

use axum::http::HeaderValue;
use bytes::Bytes;
use serde_json::{json, Map, Value};

use super::expiry::ExpiryIndex;
use super::indexing;
use super::item::{new_etag, Etag, Item, ItemKey, MAX_ITEM_BYTES};
use super::log::{Change, ChangeKind, ChangeLog};
use crate::error::{ApiError, ApiResult};
use crate::partition_key::PartitionKeyDefinition;
use crate::rid;
use crate::ttl::{self, Ttl};

/// A container's settings as a client sets them (create and replace).
#[derive(Debug, Clone)]
pub struct ContainerSettings {
    pub partition_key: PartitionKeyDefinition,
    pub default_ttl: Option<Ttl>,
    pub indexing_policy: Value,
    /// Other client properties, echoed back unchanged (e.g. `uniqueKeyPolicy`).
    pub extra: Map<String, Value>,
}

impl ContainerSettings {
    /// Reads and validates a container body (R2, R9, R10).
    pub fn parse(body: &Map<String, Value>) -> ApiResult<Self> {
        let partition_key = PartitionKeyDefinition::parse(body.get("partitionKey"))?;
        let default_ttl = ttl::container_default_ttl(body.get("defaultTtl"))?;
        let indexing_policy = indexing::parse(body.get("indexingPolicy"))?;
        if indexing::is_mode_none(&indexing_policy) && default_ttl.is_some() {
            return Err(ApiError::bad_request(
                "The container cannot have a defaultTtl while its indexing policy has indexingMode 'none': \
                 time to live needs indexing mode 'consistent' or 'lazy' (R10). Remove defaultTtl or change the indexing mode.",
            ));
        }
        let mut extra = body.clone();
        for owned in ["id", "partitionKey", "defaultTtl", "indexingPolicy"] {
            extra.remove(owned);
        }
        for system in [
            "_rid",
            "_self",
            "_etag",
            "_ts",
            "_docs",
            "_sprocs",
            "_triggers",
            "_udfs",
            "_conflicts",
        ] {
            extra.remove(system);
        }
        Ok(ContainerSettings {
            partition_key,
            default_ttl,
            indexing_policy,
            extra,
        })
    }
}

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
    items: HashMap<ItemKey, Item>,
    /// Their keys in order, for feeds and queries that page by key.
    order: BTreeSet<ItemKey>,
    expiry: ExpiryIndex,
    /// Item number (the last part of an item's RID) to key, for RID-based paths.
    by_number: HashMap<u64, ItemKey>,
    next_item: u64,
    /// Every change, for the all-versions-and-deletes feed (see `log.rs`).
    log: ChangeLog,
    /// Live items by the LSN of their last write: the latest-version feed.
    by_lsn: BTreeMap<u64, ItemKey>,
    /// The container's RID and name path as response headers, built once:
    /// every item response carries them (`x-ms-content-path`,
    /// `x-ms-alt-content-path`), and a clone shares the bytes.
    pub owner: OwnerHeaders,
}

/// The headers naming the container that owns an item.
#[derive(Debug, Clone)]
pub struct OwnerHeaders {
    /// The container's RID (`x-ms-content-path`).
    pub rid: HeaderValue,
    /// `dbs/{db}/colls/{coll}` by name (`x-ms-alt-content-path`).
    pub path: HeaderValue,
}

impl OwnerHeaders {
    fn new(rid: &str, database_id: &str, id: &str) -> Self {
        let path = format!("dbs/{database_id}/colls/{id}");
        OwnerHeaders {
            rid: HeaderValue::from_str(rid).expect("a RID is base64"),
            // Names travel raw (UTF-8 is allowed in header bytes); one with a
            // control character, which no header may hold, percent-encoded.
            path: HeaderValue::from_bytes(path.as_bytes()).unwrap_or_else(|_| {
                let encoded =
                    percent_encoding::utf8_percent_encode(&path, percent_encoding::CONTROLS)
                        .to_string();
                HeaderValue::from_str(&encoded).expect("percent-encoded")
            }),
        }
    }
}

impl Container {
    pub fn new(
        id: String,
        database_id: &str,
        database_number: u32,
        number: u32,
        settings: ContainerSettings,
        now: i64,
        change_feed_retention: i64,
    ) -> Self {
        let rid = rid::container(database_number, number);
        Container {
            owner: OwnerHeaders::new(&rid, database_id, &id),
            id,
            rid,
            database_number,
            number,
            ts: now,
            etag: new_etag(),
            settings,
            items: HashMap::new(),
            order: BTreeSet::new(),
            expiry: ExpiryIndex::default(),
            by_number: HashMap::new(),
            next_item: 1,
            log: ChangeLog::new(change_feed_retention),
            by_lsn: BTreeMap::new(),
        }
    }

    pub fn default_ttl(&self) -> Option<Ttl> {
        self.settings.default_ttl
    }

    pub fn partition_key(&self) -> &PartitionKeyDefinition {
        &self.settings.partition_key
    }

    /// Replaces the container's settings. Items that are expired under the
    /// current settings are purged first, so that no later setting can bring
    /// them back (L11); the others keep their index entries (L6, L7).
    pub fn replace_settings(&mut self, settings: ContainerSettings, now: i64) -> ApiResult<()> {
        if settings.partition_key.wire != self.settings.partition_key.wire
            && !settings.partition_key.wire.is_null()
        {
            return Err(ApiError::bad_request(
                "The partition key of a container cannot be changed: send the container's current partitionKey definition.",
            ));
        }
        self.purge_due(now, usize::MAX, &mut Vec::new());
        let partition_key = self.settings.partition_key.clone();
        self.settings = ContainerSettings {
            partition_key,
            ..settings
        };
        self.ts = now;
        self.etag = new_etag();
        Ok(())
    }

    /// The container resource as served.
    pub fn to_json(&self, database_rid: &str) -> Value {
        let mut body = Map::new();
        body.insert("id".into(), Value::from(self.id.clone()));
        body.insert(
            "indexingPolicy".into(),
            self.settings.indexing_policy.clone(),
        );
        if !self.settings.partition_key.wire.is_null() {
            body.insert(
                "partitionKey".into(),
                self.settings.partition_key.wire.clone(),
            );
        }
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

    /// Live items in key order, optionally within one partition and after a
    /// key (for paging). Expired items are skipped (R5).
    pub fn live_items<'a>(
        &'a self,
        partition: Option<&'a str>,
        after: Option<&ItemKey>,
        now: i64,
    ) -> impl Iterator<Item = (&'a ItemKey, &'a Item)> + 'a {
        let lower = match (after, partition) {
            (Some(after), _) => Bound::Excluded(after.clone()),
            (None, Some(pk)) => Bound::Included(ItemKey::partition_start(pk)),
            (None, None) => Bound::Unbounded,
        };
        self.order
            .range((lower, Bound::Unbounded))
            .take_while(move |key| partition.is_none_or(|pk| key.pk() == pk))
            .map(|key| (key, &self.items[key]))
            .filter(move |(_, item)| self.is_live(item, now))
    }

    /// How many items are visible now: stored minus expired-but-not-purged.
    pub fn live_count(&self, now: i64) -> usize {
        self.items.len() - self.expiry.count_due(self.settings.default_ttl, now)
    }

    /// How many items are physically stored, expired or not (for tests and stats).
    pub fn stored_count(&self) -> usize {
        self.items.len()
    }

    /// Stores `body` at `key` as the item's new version, written at `now`.
    /// The caller has validated the body and decided that the write may happen.
    pub fn write(
        &mut self,
        key: ItemKey,
        mut body: Map<String, Value>,
        item_ttl: Option<Ttl>,
        now: i64,
    ) -> ApiResult<Item> {
        let number = match self.items.get(&key) {
            Some(old) => old.number,
            None => {
                self.next_item += 1;
                self.next_item
            }
        };
        let etag = Etag::new();
        let rid = rid::item(self.database_number, self.number, number);
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
        let lsn = self.log.next_lsn();
        let item = Item {
            body,
            ts: now,
            ttl: item_ttl,
            etag,
            number,
            lsn,
        };
        let previous_lsn = match self.items.insert(key.clone(), item.clone()) {
            Some(old) => {
                self.expiry.remove(&key, old.ttl, old.ts);
                self.by_lsn.remove(&old.lsn);
                Some(old.lsn)
            }
            None => {
                self.order.insert(key.clone());
                self.by_number.insert(number, key.clone());
                None
            }
        };
        self.expiry.insert(&key, item.ttl, item.ts);
        self.by_lsn.insert(lsn, key.clone());
        self.log.append(Change {
            lsn,
            crts: now,
            key,
            kind: match previous_lsn {
                Some(_) => ChangeKind::Replace,
                None => ChangeKind::Create,
            },
            body: item.body.clone(),
            previous_lsn,
        });
        Ok(item)
    }

    /// Removes an item from storage and from every index, logging its
    /// delete at `now`: by a client, or (`ttl_expired`) because it expired.
    pub fn remove(&mut self, key: &ItemKey, now: i64, ttl_expired: bool) -> Option<Item> {
        let item = self.items.remove(key)?;
        self.expiry.remove(key, item.ttl, item.ts);
        self.forget(key, &item, now, ttl_expired);
        Some(item)
    }

    /// Drops a removed item from the other indexes and logs its delete.
    /// The delete keeps no image of the item: a purge of a million items
    /// logs a million deletes of a few dozen bytes each, and frees the items.
    fn forget(&mut self, key: &ItemKey, item: &Item, now: i64, ttl_expired: bool) {
        self.order.remove(key);
        self.by_number.remove(&item.number);
        self.by_lsn.remove(&item.lsn);
        let lsn = self.log.next_lsn();
        self.log.append(Change {
            lsn,
            crts: now,
            key: key.clone(),
            kind: ChangeKind::Delete { ttl_expired },
            body: Bytes::new(),
            previous_lsn: Some(item.lsn),
        });
    }

    /// Takes out of storage up to `limit` items that are due at `now`, and
    /// appends them to `purged`, so that the caller can free their memory
    /// after releasing the lock.
    pub fn purge_due(&mut self, now: i64, limit: usize, purged: &mut Vec<Item>) -> usize {
        let due = self.expiry.pop_due(self.settings.default_ttl, now, limit);
        for key in &due {
            if let Some(item) = self.items.remove(key) {
                // One TTL delete per expired item, logged when it is purged.
                self.forget(key, &item, now, true);
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
            self.by_number.shrink_to_fit();
        }
    }

    /// The key of the item with this RID, if it is one of this container's.
    pub fn key_by_rid(&self, item_rid: &str) -> Option<&ItemKey> {
        let (db, container, number) = rid::parse_item(item_rid)?;
        if (db, container) != (self.database_number, self.number) {
            return None;
        }
        self.by_number.get(&number)
    }

    /// The live items changed after `lsn`, in the order of their last write
    /// (the latest-version change feed): expired items are skipped.
    pub fn latest_changes<'a>(
        &'a self,
        after: u64,
        now: i64,
    ) -> impl Iterator<Item = (&'a ItemKey, &'a Item)> + 'a {
        self.by_lsn
            .range(after.saturating_add(1)..)
            .map(|(_, key)| (key, &self.items[key]))
            .filter(move |(_, item)| self.is_live(item, now))
    }

    /// The log of changes (the all-versions-and-deletes feed).
    pub fn log(&self) -> &ChangeLog {
        &self.log
    }

    /// Drops log entries past the retention at `now`.
    pub fn expire_log(&mut self, now: i64) {
        self.log.expire(now);
    }

    /// The next instant at which an item expires under the current settings.
    pub fn next_expiry(&self) -> Option<i64> {
        self.expiry.next_expiry(self.settings.default_ttl)
    }
}
