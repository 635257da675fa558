//! The in-memory store: databases, containers, items, behind one lock.
//!
//! Reads take the lock shared; writes and purge batches take it exclusively
//! and briefly. All operations read time from the one [`Clock`].

mod account;
mod batch;
mod checks;
mod client_encryption_keys;
mod container;
mod durable;
mod encryption_policy;
mod expiry;
mod image;
mod item;
mod item_ops;
mod lifetimes;
mod log;
mod numbered;
mod offers;
mod ranges;
mod records;
mod reindex;
mod scripts;
mod sequence;
mod transaction;
mod unique_keys;
mod usage;
mod users;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};

use serde_json::{Map, Value};
use tokio::sync::Notify;

use crate::item_key::ItemKey;
pub use account::{SnapshotSummary, MAX_SNAPSHOT_NAME};
pub use batch::{Action, BatchMode, Edit, Operation, Outcome};
use checks::{checked_partition_key, checked_write, edited};
pub use container::{Container, ContainerSettings, Owner, ScopedView};
pub use durable::{unavailable, Compaction, COMPACT_AT_LEAST};
pub use item::{
    check_nesting, strip_system_properties, too_deep, validate_id, validate_name, with_lsn, Etag,
    Item, MAX_ITEM_BYTES,
};
pub use lifetimes::LifetimeCursor;
pub use log::{
    Change, ChangeKind, ChangeLog,
    DEFAULT_RETENTION_SECONDS as DEFAULT_CHANGE_FEED_RETENTION_SECONDS,
};
pub use offers::{Migration, Throughput};
pub use ranges::{parse_id as parse_range_id, Range, RangeMap, SplitRefusal};
pub use scripts::{Script, ScriptCounts, ScriptKind, ScriptView, TriggerOperation, TriggerType};
pub use transaction::{Committed, Conflict, ContainerNames, Transaction};
pub use usage::ContainerStats;
pub use users::{CreateMode, Grant, PermissionMode, PermissionView, ScriptGrant};

use crate::clock::Clock;
use crate::error::{ApiError, ApiResult};
use crate::persist::Journal;
use crate::query::search::policy::check_vector_indexes_kept;
use crate::query::DocumentPath;
use crate::rid;

#[derive(Debug)]
pub struct Database {
    pub id: String,
    pub rid: String,
    number: u32,
    pub ts: i64,
    pub etag: String,
    containers: BTreeMap<String, Container>,
    next_container: u32,
    users: BTreeMap<String, users::User>,
    next_user: u32,
    client_encryption_keys: BTreeMap<String, client_encryption_keys::ClientEncryptionKey>,
    next_client_encryption_key: u32,
}

impl Database {
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "id": self.id,
            "_rid": self.rid,
            "_self": format!("dbs/{}/", self.rid),
            "_etag": self.etag,
            "_colls": "colls/",
            "_users": "users/",
            "_ts": self.ts,
        })
    }

    pub fn containers(&self) -> impl Iterator<Item = &Container> {
        self.containers.values()
    }

    /// A container by name, or by RID for RID-based paths.
    pub fn container(&self, id: &str) -> ApiResult<&Container> {
        by_name_or_rid(&self.containers, id, |c| &c.rid, "container")
    }

    fn container_mut(&mut self, id: &str) -> ApiResult<&mut Container> {
        by_name_or_rid_mut(&mut self.containers, id, |c| &c.rid, "container")
    }

    fn resolve_container(&self, id: &str) -> ApiResult<String> {
        self.container(id).map(|c| c.id.clone())
    }
}

#[derive(Debug, Default)]
struct Catalog {
    databases: BTreeMap<String, Database>,
    next_database: u32,
    offers: offers::Offers,
}

impl Catalog {
    fn database(&self, id: &str) -> ApiResult<&Database> {
        by_name_or_rid(&self.databases, id, |d| &d.rid, "database")
    }

    fn database_mut(&mut self, id: &str) -> ApiResult<&mut Database> {
        by_name_or_rid_mut(&mut self.databases, id, |d| &d.rid, "database")
    }
}

/// A resource of a map keyed by name: by its name, or by its RID for
/// RID-based paths (rare, so a scan).
fn by_name_or_rid<'a, T>(
    map: &'a BTreeMap<String, T>,
    id: &str,
    rid: impl Fn(&T) -> &str,
    kind: &str,
) -> ApiResult<&'a T> {
    map.get(id)
        .or_else(|| map.values().find(|v| rid(v) == id))
        .ok_or_else(|| not_found(kind, id))
}

fn by_name_or_rid_mut<'a, T>(
    map: &'a mut BTreeMap<String, T>,
    id: &str,
    rid: impl Fn(&T) -> &str,
    kind: &str,
) -> ApiResult<&'a mut T> {
    if map.contains_key(id) {
        return Ok(map.get_mut(id).expect("just checked"));
    }
    map.values_mut()
        .find(|v| rid(v) == id)
        .ok_or_else(|| not_found(kind, id))
}

fn not_found(kind: &str, id: &str) -> ApiError {
    ApiError::not_found().with_message(format!(
        "Resource Not Found: the {kind} '{id}' does not exist. Entity with the specified id does not exist in the system."
    ))
}

/// An item request's container, for the response headers and the checks
/// of `x-ms-cosmos-intended-collection-rid` and `x-ms-session-token`.
#[derive(Debug, Clone)]
pub struct ContainerContext {
    pub owner: Owner,
    /// The last LSN of the container's change log.
    pub lsn: u64,
    /// The partition key range the response names (the item's range for
    /// an item request): its `x-ms-documentdb-partitionkeyrangeid` and the
    /// range of its session token.
    pub range: u32,
}

/// What kind of item write a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    Create,
    Upsert,
    /// Replace the item whose id is in the URL.
    Replace,
}

/// Which item a point request addresses, and its precondition.
#[derive(Debug, Clone, Copy)]
pub struct ItemAddress<'a> {
    pub database: &'a str,
    pub container: &'a str,
    pub partition_key: Option<&'a str>,
    pub id: &'a str,
    pub if_match: Option<&'a str>,
}

/// An item write, validated up to what needs the container.
pub struct ItemWrite<'a> {
    pub mode: WriteMode,
    /// For `Replace`, the id in the URL.
    pub url_id: Option<&'a str>,
    pub partition_key_header: Option<&'a str>,
    pub if_match: Option<&'a str>,
    pub body: Map<String, Value>,
}

pub struct Store {
    catalog: RwLock<Catalog>,
    pub clock: Clock,
    /// Wakes the purge task: time moved, or an earlier expiry appeared.
    purge_wakeup: Notify,
    /// Wakes the index transformation task: a policy change began one.
    reindex_wakeup: Notify,
    /// The instant the purge task is sleeping towards (`i64::MAX`: none).
    next_purge_at: AtomicI64,
    /// Logical sequence number of the last write, for session tokens.
    lsn: AtomicU64,
    /// How long a container's change log keeps entries, emulator-clock seconds.
    change_feed_retention: i64,
    /// The least number of partition key ranges a new container gets.
    min_ranges_per_container: usize,
    /// With `--data-dir`: where changes are written ahead (`durable.rs`).
    journal: Option<Arc<Journal>>,
    /// The size of the last snapshot (the log is compacted past it).
    snapshot_bytes: AtomicU64,
    /// The least log size compacted (`durable::COMPACT_AT_LEAST`).
    compact_at_least: u64,
    /// Held while a compaction runs.
    compacting: Mutex<()>,
    /// The metadata the journal holds, to journal only what changes.
    written_meta: Mutex<durable::meta::WrittenMeta>,
    /// Named in-memory snapshots of the whole account (`account.rs`).
    snapshots: account::Snapshots,
}

/// The catalog under the store's write lock. When it is released, the
/// operation's records (if any) are committed to the journal as one frame.
struct CatalogWrite<'a> {
    guard: RwLockWriteGuard<'a, Catalog>,
    store: &'a Store,
    /// The operation changed metadata: its catalog record goes with it.
    meta_changed: bool,
}

impl CatalogWrite<'_> {
    /// Marks a change to databases, containers' settings, offers or users.
    fn meta_changed(&mut self) {
        self.meta_changed = true;
    }
}

impl std::ops::Deref for CatalogWrite<'_> {
    type Target = Catalog;
    fn deref(&self) -> &Catalog {
        &self.guard
    }
}

impl std::ops::DerefMut for CatalogWrite<'_> {
    fn deref_mut(&mut self) -> &mut Catalog {
        &mut self.guard
    }
}

impl Drop for CatalogWrite<'_> {
    fn drop(&mut self) {
        let Some(journal) = &self.store.journal else {
            return;
        };
        if self.meta_changed {
            let pieces = self.guard.meta_pieces();
            let changed = self
                .store
                .written_meta
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .diff(pieces);
            for record in changed {
                journal.record(|out| record.encode(out));
            }
        }
        // The session LSN this operation brings the store to (or more).
        journal.commit(&(self.store.session_lsn() + 1).to_le_bytes());
    }
}

impl Store {
    pub fn new(clock: Clock) -> Self {
        Store {
            catalog: RwLock::new(Catalog::default()),
            clock,
            purge_wakeup: Notify::new(),
            reindex_wakeup: Notify::new(),
            next_purge_at: AtomicI64::new(i64::MAX),
            lsn: AtomicU64::new(1),
            change_feed_retention: log::DEFAULT_RETENTION_SECONDS,
            min_ranges_per_container: 1,
            journal: None,
            snapshot_bytes: AtomicU64::new(0),
            compact_at_least: durable::COMPACT_AT_LEAST,
            compacting: Mutex::new(()),
            written_meta: Mutex::default(),
            snapshots: Mutex::default(),
        }
    }

    /// Gives every new container at least `count` partition key ranges.
    pub fn with_min_ranges_per_container(mut self, count: usize) -> Self {
        self.min_ranges_per_container = count.max(1);
        self
    }

    /// Keeps change log entries for `seconds` of emulator-clock time.
    pub fn with_change_feed_retention(mut self, seconds: i64) -> Self {
        self.change_feed_retention = seconds;
        self
    }

    fn read(&self) -> RwLockReadGuard<'_, Catalog> {
        self.catalog.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The catalog for a change; refused once the data directory could
    /// not be written (nothing more is acknowledged that is not kept).
    fn write(&self) -> ApiResult<CatalogWrite<'_>> {
        if let Some(journal) = self.journal.as_ref().filter(|j| j.has_failed()) {
            return Err(durable::unavailable(&format!(
                "a write to {} failed",
                journal.dir().path().display()
            )));
        }
        Ok(CatalogWrite {
            guard: self.catalog.write().unwrap_or_else(|e| e.into_inner()),
            store: self,
            meta_changed: false,
        })
    }

    /// The store-wide LSN of session tokens: it grows with every write to
    /// any resource, so that a token from any response names a state every
    /// later read has reached, whichever container it was kept for.
    pub fn session_lsn(&self) -> u64 {
        self.lsn.load(Ordering::Acquire)
    }

    fn wrote(&self) {
        self.lsn.fetch_add(1, Ordering::AcqRel);
    }

    // ---- databases -------------------------------------------------------

    /// Creates a database, with the shared throughput the request asks for.
    pub fn create_database(
        &self,
        body: &Map<String, Value>,
        throughput: Option<Throughput>,
    ) -> ApiResult<Value> {
        let id = validate_name(body.get("id"))?.to_string();
        let now = self.clock.now();
        let mut catalog = self.write()?;
        if catalog.databases.contains_key(&id) {
            return Err(ApiError::conflict());
        }
        catalog.next_database += 1;
        let number = catalog.next_database;
        let database = Database {
            rid: rid::database(number),
            id: id.clone(),
            number,
            ts: now,
            etag: item::new_etag(),
            containers: BTreeMap::new(),
            next_container: 0,
            users: BTreeMap::new(),
            next_user: 0,
            client_encryption_keys: BTreeMap::new(),
            next_client_encryption_key: 0,
        };
        let json = database.to_json();
        if let Some(throughput) = throughput {
            let (link, rid) = (format!("dbs/{}/", database.rid), database.rid.clone());
            catalog.offers.create(link, rid, throughput, now);
        }
        catalog.databases.insert(id, database);
        catalog.meta_changed();
        drop(catalog);
        self.wrote();
        Ok(json)
    }

    pub fn database(&self, id: &str) -> ApiResult<Value> {
        Ok(self.read().database(id)?.to_json())
    }

    pub fn databases(&self) -> Vec<Value> {
        self.read()
            .databases
            .values()
            .map(Database::to_json)
            .collect()
    }

    pub fn delete_database(&self, id: &str) -> ApiResult<()> {
        let mut catalog = self.write()?;
        let (name, rid) = {
            let db = catalog.database(id)?;
            (db.id.clone(), db.rid.clone())
        };
        catalog.databases.remove(&name);
        // Its offer and its containers' offers go with it.
        catalog.offers.remove_under(&format!("dbs/{rid}/"));
        catalog.meta_changed();
        drop(catalog);
        self.wrote();
        Ok(())
    }

    // ---- containers ------------------------------------------------------

    /// Creates a container with the dedicated throughput the request asks
    /// for; without any, 400 RU/s of its own unless its database shares
    /// throughput (see `offers.rs`).
    pub fn create_container(
        &self,
        database: &str,
        body: &Map<String, Value>,
        throughput: Option<Throughput>,
    ) -> ApiResult<Value> {
        let id = validate_name(body.get("id"))?.to_string();
        let now = self.clock.now();
        let mut catalog = self.write()?;
        // The keys a clientEncryptionPolicy names must exist, a check the
        // service makes before the policy's other rules.
        catalog
            .database(database)?
            .check_keys_exist(&encryption_policy::key_ids(
                body.get("clientEncryptionPolicy"),
            ))?;
        let settings = ContainerSettings::parse(body)?;
        let shared = catalog.offers.has_offer(&catalog.database(database)?.rid);
        let throughput =
            throughput.or((!shared).then_some(Throughput::Manual(offers::MIN_MANUAL_THROUGHPUT)));
        let db = catalog.database_mut(database)?;
        if db.containers.contains_key(&id) {
            return Err(ApiError::conflict());
        }
        db.next_container += 1;
        let mut container = Container::new(
            id.clone(),
            &db.id,
            db.number,
            db.next_container,
            settings,
            now,
            self.change_feed_retention,
        );
        // As many physical ranges as the container's own throughput takes
        // (a container sharing its database's throughput gets one), or
        // more if the emulator was started with --ranges-per-container.
        let count = throughput
            .as_ref()
            .map_or(1, |t| {
                RangeMap::count_for_throughput(
                    t.provisioned(),
                    matches!(t, Throughput::Autoscale { .. }),
                )
            })
            .max(self.min_ranges_per_container);
        container.set_ranges(RangeMap::even(container.partition_key(), count));
        container.attach(self.journal.clone());
        let json = container.to_json(&db.rid);
        let (link, rid) = (
            format!("dbs/{}/colls/{}/", db.rid, container.rid),
            container.rid.clone(),
        );
        db.containers.insert(id, container);
        if let Some(throughput) = throughput {
            catalog.offers.create(link, rid, throughput, now);
        }
        catalog.meta_changed();
        drop(catalog);
        self.wrote();
        Ok(json)
    }

    /// The container resource and its live item count (for `x-ms-resource-usage`).
    pub fn container(&self, database: &str, id: &str) -> ApiResult<(Value, usize)> {
        let now = self.clock.now();
        let catalog = self.read();
        let db = catalog.database(database)?;
        let container = db.container(id)?;
        Ok((container.to_json(&db.rid), container.live_count(now)))
    }

    pub fn containers(&self, database: &str) -> ApiResult<Vec<Value>> {
        let catalog = self.read();
        let db = catalog.database(database)?;
        Ok(db.containers().map(|c| c.to_json(&db.rid)).collect())
    }

    pub fn replace_container(
        &self,
        database: &str,
        id: &str,
        body: &Map<String, Value>,
        if_match: Option<&str>,
    ) -> ApiResult<Value> {
        let body_id = validate_name(body.get("id"))?;
        let now = self.clock.now();
        let mut catalog = self.write()?;
        let db = catalog.database_mut(database)?;
        let db_rid = db.rid.clone();
        let container = db.container_mut(id)?;
        // The service judges a changed vector index against the container
        // before the body's own policies (a replace that sends only the
        // indexing policy hears that its index cannot change, as
        // @azure/cosmos's vector tests record).
        check_vector_indexes_kept(
            &container.settings.indexing_policy,
            body.get("indexingPolicy").unwrap_or(&Value::Null),
        )?;
        let settings = ContainerSettings::parse(body)?;
        if body_id != container.id {
            return Err(ApiError::bad_request(format!(
                "The id '{body_id}' in the body does not match the container '{}' addressed by the URL.",
                container.id
            )));
        }
        check_if_match(if_match, &container.etag)?;
        let reindex = container.replace_settings(settings, now, self.change_feed_retention)?;
        let json = container.to_json(&db_rid);
        catalog.meta_changed();
        self.wrote();
        drop(catalog);
        // The default may have moved expiry instants earlier.
        self.purge_wakeup.notify_one();
        if reindex {
            self.reindex_wakeup.notify_one();
        }
        Ok(json)
    }

    pub fn delete_container(&self, database: &str, id: &str) -> ApiResult<()> {
        let mut catalog = self.write()?;
        let db = catalog.database_mut(database)?;
        let name = db.resolve_container(id)?;
        let link = format!("dbs/{}/colls/{}/", db.rid, db.containers[&name].rid);
        db.containers.remove(&name);
        catalog.offers.remove_under(&link);
        catalog.meta_changed();
        drop(catalog);
        self.wrote();
        Ok(())
    }

    // ---- items -----------------------------------------------------------

    /// The container an item request addresses, as its responses name it,
    /// with its change log's last LSN: the state a read from now on sees
    /// at least (the session token).
    pub fn container_context(
        &self,
        database: &str,
        container: &str,
    ) -> ApiResult<ContainerContext> {
        self.with_container(database, container, |c, _| {
            Ok(ContainerContext {
                owner: c.owner.clone(),
                lsn: c.log().last_lsn(),
                range: c.ranges().ranges()[0].id,
            })
        })
    }

    /// Runs `f` on a container under the shared lock.
    pub fn with_container<T>(
        &self,
        database: &str,
        container: &str,
        f: impl FnOnce(&Container, i64) -> ApiResult<T>,
    ) -> ApiResult<T> {
        let now = self.clock.now();
        let catalog = self.read();
        f(catalog.database(database)?.container(container)?, now)
    }

    /// Builds a container's indexes of `paths` (`query/index/`) under the
    /// write lock, those it lacks; queries then read them under the read
    /// lock. Nothing is built if the store cannot be written (a failed
    /// data directory): the query scans.
    pub fn ensure_indexes(&self, database: &str, container: &str, paths: &[DocumentPath]) {
        if paths.is_empty() {
            return;
        }
        let Ok(mut catalog) = self.write() else {
            return;
        };
        if let Ok(c) = catalog
            .database_mut(database)
            .and_then(|d| d.container_mut(container))
        {
            for path in paths {
                c.build_index(path.clone());
            }
        }
    }

    /// Splits a container's range in two (`POST /_emulator/split`); returns
    /// the children. The items stay; requests naming the parent are 410.
    pub fn split_range(
        &self,
        database: &str,
        container: &str,
        range: &str,
    ) -> ApiResult<[Range; 2]> {
        let mut catalog = self.write()?;
        let c = catalog.database_mut(database)?.container_mut(container)?;
        let split = c.split_range(range);
        if split.is_ok() {
            catalog.meta_changed();
        }
        split.map_err(|refusal| match refusal {
            SplitRefusal::Unknown => ApiError::not_found().with_message(format!(
                "The partition key range '{range}' does not exist in container '{container}': \
                 send the id of one of its current ranges (GET .../pkranges)."
            )),
            SplitRefusal::TooNarrow => ApiError::bad_request(format!(
                "The partition key range '{range}' cannot be split: it spans a single hash value."
            )),
            SplitRefusal::TooMany => ApiError::bad_request(format!(
                "The partition key range '{range}' cannot be split: the container has {} ranges, \
                 the most this emulator keeps.",
                ranges::MAX_RANGES
            )),
        })
    }

    // ---- expiry ----------------------------------------------------------

    /// After an item write (lock released): a new session LSN, and the purge
    /// task told about the item's expiry instant if it is earlier than the
    /// one it sleeps towards (mini-redis's rule).
    fn item_written(&self, expires_at: Option<i64>) {
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
fn live_or_discard(c: &mut Container, key: &ItemKey, now: i64) -> Option<Etag> {
    if let Some(item) = c.get(key, now) {
        return Some(item.etag);
    }
    // Expired (or absent): its one TTL delete is logged as it goes.
    c.remove(key, now, true);
    None
}

/// `If-Match`: absent or `*` always matches; otherwise the current etag must.
fn check_if_match(if_match: Option<&str>, etag: impl std::fmt::Display) -> ApiResult<()> {
    match if_match {
        Some(expected) if expected != "*" && expected != etag.to_string() => {
            Err(ApiError::precondition_failed())
        }
        _ => Ok(()),
    }
}
