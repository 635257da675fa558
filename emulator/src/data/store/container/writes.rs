//! An item's versions going in and out of the container: a write (a new
//! version built, stamped with its LSNs, installed in every index), a
//! rename, a removal by a client, and the purge of expired items. Each is
//! written ahead to the journal (with `--data-dir`) and logged as a change
//! (`changes.rs`): `install` and `forget` are the change log's two doors.

use std::num::NonZeroU64;

use bytes::Bytes;
use serde_json::{Map, Value};

use super::Container;
use crate::data::store::item::{Etag, Item, Lsns, MAX_ITEM_BYTES};
use crate::data::store::log::{Change, ChangeKind};
use crate::data::store::records;
use crate::data::ttl::Ttl;
use crate::protocol::error::{ApiError, ApiResult};
use crate::protocol::item_key::ItemKey;
use crate::protocol::rid;

impl Container {
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
    pub(super) fn forget(
        &mut self,
        key: &ItemKey,
        item: &Item,
        now: i64,
        ttl_expired: bool,
        lsns: Lsns,
    ) {
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
}
