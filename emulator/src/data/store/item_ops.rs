//! The item operations of the store: point reads, writes, patches and
//! deletes of one item, delete by partition key, and RID-based addressing.
//! Each holds the catalog lock once; the caller gets the item and the id of
//! the range holding it (for the response's range and session token).

use serde_json::{Map, Value};

use super::checks::{check_if_match, checked_partition_key, checked_write, edited};
use super::purging::live_or_discard;
use super::{
    Container, ContainerContext, Deleted, Item, ItemAddress, ItemWrite, Store, WriteMode, Written,
};
use crate::data::ttl;
use crate::protocol::error::{ApiError, ApiResult};
use crate::protocol::item_key::ItemKey;
use crate::protocol::partition_key::KeyScope;
use crate::protocol::rid;

impl Store {
    /// The key an item request addresses: the partition key header (required
    /// when the container is partitioned) and the id.
    pub(super) fn key_from_header(
        container: &Container,
        header: Option<&str>,
        id: &str,
    ) -> ApiResult<ItemKey> {
        let pk = match header {
            Some(h) => container.partition_key().key_from_header(h)?,
            None if container.partition_key().wire.is_null() => "[]".to_string(),
            None => {
                return Err(ApiError::bad_request(
                    "PartitionKey value must be supplied for this operation: send the x-ms-documentdb-partitionkey header, e.g. [\"value\"].",
                ))
            }
        };
        Ok(ItemKey::new(&pk, id))
    }

    pub fn read_item(
        &self,
        database: &str,
        container: &str,
        partition_key: Option<&str>,
        id: &str,
    ) -> ApiResult<Item> {
        self.read_item_in_context(database, container, partition_key, id)?
            .1
    }

    /// A point read with its container's context, under one hold of the
    /// lock: the context comes back whether or not the item is found, so
    /// that the caller checks the request against the container first.
    pub fn read_item_in_context(
        &self,
        database: &str,
        container: &str,
        partition_key: Option<&str>,
        id: &str,
    ) -> ApiResult<(ContainerContext, ApiResult<Item>)> {
        self.with_container(database, container, |c, now| {
            let first = c.ranges().ranges()[0].id;
            let mut context = ContainerContext {
                owner: c.owner.clone(),
                lsn: c.range_lsn(first),
                range: first,
                indexes_writes: c.indexes_writes(),
            };
            let found = Self::key_from_header(c, partition_key, id).and_then(|key| {
                context.range = c.range_of(key.pk());
                context.lsn = c.range_lsn(context.range);
                c.get(&key, now).cloned().ok_or_else(ApiError::not_found)
            });
            Ok((context, found))
        })
    }

    /// Create, upsert or replace. Returns what it did (created the item or
    /// replaced one), the item and the id of the range holding it.
    pub fn write_item(
        &self,
        database: &str,
        container: &str,
        mut write: ItemWrite<'_>,
    ) -> ApiResult<(Written, Item, u32)> {
        let (id, item_ttl) = checked_write(&mut write.body)?;
        let now = self.clock.now();
        let mut catalog = self.write()?;
        let c = catalog.database_mut(database)?.container_mut(container)?;
        let pk = checked_partition_key(c, &write.body, write.partition_key_header)?;
        let key = ItemKey::new(&pk, &id);
        if let Some(old_id) = write.url_id.filter(|url_id| *url_id != id) {
            let from = ItemKey::new(&pk, old_id);
            let etag = live_or_discard(c, &from, now).ok_or_else(ApiError::not_found)?;
            check_if_match(write.if_match, etag)?;
            if live_or_discard(c, &key, now).is_some() {
                return Err(ApiError::conflict());
            }
            c.check_unique_replacing(&key, &from, &write.body, now)?;
            let (item, range) = c.rename(&from, key, write.body, item_ttl, now)?;
            let expires = ttl::expires_at(c.default_ttl(), item_ttl, now);
            drop(catalog);
            self.item_written(expires);
            return Ok((Written::Replaced, item, range));
        }
        let existing = live_or_discard(c, &key, now);
        let written = match (write.mode, existing) {
            (WriteMode::Create, Some(_)) => return Err(ApiError::conflict()),
            (WriteMode::Replace, None) => return Err(ApiError::not_found()),
            (_, Some(etag)) => {
                check_if_match(write.if_match, etag)?;
                Written::Replaced
            }
            (_, None) => Written::Created,
        };
        c.check_unique(&key, &write.body, now)?;
        let (item, range, expires) = write_and_expiry(c, key, write.body, item_ttl, now)?;
        drop(catalog);
        self.item_written(expires);
        Ok((written, item, range))
    }

    /// Runs `f` on the live item that a request addresses, under the write
    /// lock, once `If-Match` holds; an absent or expired item is a 404 (R5).
    fn with_live_item<T>(
        &self,
        address: ItemAddress<'_>,
        f: impl FnOnce(&mut Container, ItemKey, i64) -> ApiResult<T>,
    ) -> ApiResult<T> {
        let now = self.clock.now();
        let mut catalog = self.write()?;
        let c = catalog
            .database_mut(address.database)?
            .container_mut(address.container)?;
        let key = Self::key_from_header(c, address.partition_key, address.id)?;
        let etag = live_or_discard(c, &key, now).ok_or_else(ApiError::not_found)?;
        check_if_match(address.if_match, etag)?;
        f(c, key, now)
    }

    /// Applies `edit` to the live item's body, then stores the result as a
    /// write (used by patch). `edit` returns the new body. Returns the item
    /// and the id of the range holding it.
    pub fn edit_item(
        &self,
        address: ItemAddress<'_>,
        edit: impl FnOnce(Map<String, Value>) -> ApiResult<Map<String, Value>>,
    ) -> ApiResult<(Item, u32)> {
        let id = address.id;
        let (item, expires, range) = self.with_live_item(address, |c, key, now| {
            let current = c.get(&key, now).expect("live");
            let (body, item_ttl) = edited(c, &key, id, current, edit)?;
            c.check_unique(&key, &body, now)?;
            let (item, range, expires) = write_and_expiry(c, key, body, item_ttl, now)?;
            Ok((item, expires, range))
        })?;
        self.item_written(expires);
        Ok((item, range))
    }

    /// Deletes the live item; returns the LSN of its delete and the id of
    /// the range that held it.
    pub fn delete_item(&self, address: ItemAddress<'_>) -> ApiResult<Deleted> {
        let deleted = self.with_live_item(address, |c, key, now| {
            let bytes = c.remove(&key, now, false).map_or(0, |item| item.body.len());
            let range = c.range_of(key.pk());
            Ok(Deleted {
                lsn: c.range_lsn(range),
                range,
                bytes,
            })
        })?;
        self.wrote();
        Ok(deleted)
    }

    /// Deletes every item of the logical partition the header names, or of
    /// every partition under a hierarchical key's prefix: gone at once from
    /// every path, each logged as a delete (see [`Container::remove_scope`]).
    /// Returns how many items went.
    pub fn delete_partition(
        &self,
        database: &str,
        container: &str,
        header: Option<&str>,
    ) -> ApiResult<usize> {
        let now = self.clock.now();
        let mut catalog = self.write()?;
        let c = catalog.database_mut(database)?.container_mut(container)?;
        let scope = match header {
            Some(h) => c.partition_key().scope_from_header(h)?,
            None if c.partition_key().wire.is_null() => KeyScope::Exact("[]".into()),
            None => {
                return Err(ApiError::bad_request(
                    "PartitionKey value must be supplied for this operation: send the \
                     x-ms-documentdb-partitionkey header with the key whose items to delete, \
                     e.g. [\"value\"].",
                ))
            }
        };
        let removed = c.remove_scope(&scope, now);
        drop(catalog);
        self.wrote();
        // Freed here, outside the lock.
        Ok(removed.len())
    }

    /// For a RID-based path (`/dbs/{dbRid}/colls/{collRid}/docs/{docRid}`,
    /// as .NET sends), the (partition key header, id) of the addressed item;
    /// `None` for a name-based path. A RID that names no item is a 404.
    ///
    /// A partition key header sent with it must be the item's whole key: a
    /// prefix or a malformed one is refused as for a name-based path (400,
    /// substatus 1001), another whole key names no item here (404).
    pub fn item_by_rid(
        &self,
        database: &str,
        container: &str,
        item: &str,
        partition_key_header: Option<&str>,
    ) -> ApiResult<Option<(String, String)>> {
        let catalog = self.read();
        let db = catalog.database(database)?;
        if db.id == database || !rid::looks_like_database_rid(database) {
            return Ok(None);
        }
        let c = db.container(container)?;
        let key = c.key_by_rid(item).ok_or_else(|| {
            ApiError::not_found()
                .with_message(format!("Resource Not Found: no item has the RID '{item}'."))
        })?;
        if let Some(header) = partition_key_header {
            if c.partition_key().key_from_header(header)? != key.pk() {
                return Err(ApiError::not_found());
            }
        }
        Ok(Some((key.pk().to_string(), key.id().to_string())))
    }
}

/// Stores an item version; returns it with the id of its range and the
/// instant it will expire.
fn write_and_expiry(
    c: &mut Container,
    key: ItemKey,
    body: Map<String, Value>,
    item_ttl: Option<ttl::Ttl>,
    now: i64,
) -> ApiResult<(Item, u32, Option<i64>)> {
    let (item, range) = c.write(key, body, item_ttl, now)?;
    Ok((item, range, ttl::expires_at(c.default_ttl(), item_ttl, now)))
}
