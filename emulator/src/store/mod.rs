//! The in-memory store: databases, containers, items, behind one lock.
//!
//! Reads take the lock shared; writes and purge batches take it exclusively
//! and briefly. All operations read time from the one [`Clock`]. This file
//! is the store and its lock; what the lock guards is `catalog.rs`, and the
//! operations are `impl Store` blocks in the files named for what they do.

mod account;
mod batch;
mod budgets;
mod catalog;
mod checks;
mod client_encryption_key;
mod client_encryption_keys;
mod container;
mod containers;
mod durable;
mod encryption_policy;
mod expiry;
mod feed_position;
mod image;
mod item;
mod item_ops;
mod item_request;
mod lifetimes;
mod log;
mod lookup;
mod numbered;
mod offers;
mod purging;
mod query_source;
mod range_lsns;
mod range_walk;
mod ranges;
mod records;
mod reindex;
mod scope;
mod scripts;
mod sequence;
mod transaction;
mod unique_keys;
mod usage;
mod user;
mod users;
mod written;

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};

use tokio::sync::Notify;

pub use account::{SnapshotSummary, MAX_SNAPSHOT_NAME};
pub use batch::{Action, BatchMode, Edit, Operation, Outcome};
pub use budgets::PartitionBudget;
use catalog::Catalog;
pub use catalog::Database;
pub use container::{Container, ContainerSettings, Owner, ScopedView};
use durable::Durable;
pub use durable::{unavailable, Compaction, COMPACT_AT_LEAST};
pub use feed_position::FeedPosition;
pub use item::{
    check_nesting, strip_system_properties, too_deep, validate_id, validate_name, with_lsn, Etag,
    Item, MAX_ITEM_BYTES,
};
pub use item_request::{ContainerContext, Deleted, ItemAddress, ItemWrite, WriteMode};
pub use lifetimes::LifetimeCursor;
pub use log::{
    Change, ChangeKind, ChangeLog,
    DEFAULT_RETENTION_SECONDS as DEFAULT_CHANGE_FEED_RETENTION_SECONDS,
};
pub use offers::{serverless_offers, Migration, Throughput};
pub use query_source::{check_cross_partition_enabled, QuerySource};
pub use ranges::{
    parse_id as parse_range_id, Range, RangeMap, SplitRefusal, RU_PER_NEW_PHYSICAL_PARTITION,
    RU_PER_PHYSICAL_PARTITION,
};
pub use scope::{range_gone, FeedScope, ScopeRequest, PARTITION_KEY_RANGE_GONE};
pub use scripts::{Script, ScriptCounts, ScriptKind, ScriptView, TriggerOperation, TriggerType};
pub use transaction::{Committed, Conflict, ContainerNames, ScriptWork, Transaction};
pub use usage::ContainerStats;
pub use user::{Grant, PermissionMode, PermissionView, ScriptGrant};
pub use written::{CreateMode, Written};

use crate::clock::Clock;
use crate::error::ApiResult;

pub struct Store {
    catalog: RwLock<Catalog>,
    pub clock: Clock,
    /// Wakes the purge task: time moved, or an earlier expiry appeared.
    purge_wakeup: Notify,
    /// Wakes the index transformation task: a policy change began one.
    reindex_wakeup: Notify,
    /// The instant the purge task is sleeping towards (`i64::MAX`: none).
    next_purge_at: AtomicI64,
    /// Logical sequence number of the last write to any resource: the
    /// account's progress, which read regions replicate (session tokens
    /// name a container's own LSN, see `http/container_context.rs`).
    lsn: AtomicU64,
    /// How long a container's change log keeps entries, emulator-clock seconds.
    change_feed_retention: i64,
    /// The least number of partition key ranges a new container gets.
    min_ranges_per_container: usize,
    /// A serverless account (`--serverless`): no offers, and 5,000 RU/s per
    /// partition when throttling (`budgets.rs`).
    serverless: bool,
    /// With `--data-dir`: the journal changes are written ahead to, and
    /// what compacting it needs (`durable/`).
    durable: Option<Durable>,
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
        if let Some(durable) = &self.store.durable {
            // The session LSN this operation brings the store to (or more).
            let session = self.store.session_lsn() + 1;
            durable.commit(&self.guard, self.meta_changed, session);
        }
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
            serverless: false,
            durable: None,
            snapshots: Mutex::default(),
        }
    }

    /// Gives every new container at least `count` partition key ranges.
    pub fn with_min_ranges_per_container(mut self, count: usize) -> Self {
        self.min_ranges_per_container = count.max(1);
        self
    }

    /// Makes the account serverless: throughput can be neither set nor read.
    pub fn with_serverless(mut self, serverless: bool) -> Self {
        self.serverless = serverless;
        self
    }

    pub fn serverless(&self) -> bool {
        self.serverless
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
        if let Some(durable) = &self.durable {
            durable.check_writable()?;
        }
        Ok(CatalogWrite {
            guard: self.catalog.write().unwrap_or_else(|e| e.into_inner()),
            store: self,
            meta_changed: false,
        })
    }

    /// The store-wide LSN: it grows with every write to any resource. A
    /// read region's replica has applied the store up to one of its values
    /// (`regions.rs`), which says how far it has applied each container.
    pub fn session_lsn(&self) -> u64 {
        self.lsn.load(Ordering::Acquire)
    }

    fn wrote(&self) {
        self.lsn.fetch_add(1, Ordering::AcqRel);
    }
}
