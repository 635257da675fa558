//! The store itself: the catalog behind its one lock, and what every
//! operation shares beside it (the clock, the store-wide LSN, the wakeups of
//! the background tasks, the journal with `--data-dir`, the named
//! snapshots). Reads take the lock shared; a write takes it exclusively
//! through [`CatalogWrite`], which commits the operation's records to the
//! journal as it is released.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};

use tokio::sync::Notify;

use super::catalog::Catalog;
use super::durable::Durable;
use super::log::DEFAULT_RETENTION_SECONDS;
use super::snapshot::Snapshots;
use crate::data::clock::Clock;
use crate::protocol::error::ApiResult;

/// The account's databases, containers and items, behind one lock.
pub struct Store {
    pub(super) catalog: RwLock<Catalog>,
    pub clock: Clock,
    /// Wakes the purge task: time moved, or an earlier expiry appeared.
    pub(super) purge_wakeup: Notify,
    /// Wakes the index transformation task: a policy change began one.
    pub(super) reindex_wakeup: Notify,
    /// The instant the purge task is sleeping towards (`i64::MAX`: none).
    pub(super) next_purge_at: AtomicI64,
    /// Logical sequence number of the last write to any resource: the
    /// account's progress, which read regions replicate (session tokens
    /// name a container's own LSN, see `operations/session.rs`).
    pub(super) lsn: AtomicU64,
    /// How long a container's change log keeps entries, emulator-clock seconds.
    pub(super) change_feed_retention: i64,
    /// The least number of partition key ranges a new container gets.
    pub(super) min_ranges_per_container: usize,
    /// A serverless account (`--serverless`): no offers, and 5,000 RU/s per
    /// partition when throttling (`budgets.rs`).
    pub(super) serverless: bool,
    /// With `--data-dir`: the journal changes are written ahead to, and
    /// what compacting it needs (`durable/`).
    pub(super) durable: Option<Durable>,
    /// Named in-memory snapshots of the whole account (`snapshot.rs`),
    /// taken and restored by `account.rs`.
    pub(super) snapshots: Snapshots,
}

/// The catalog under the store's write lock. When it is released, the
/// operation's records (if any) are committed to the journal as one frame.
pub(super) struct CatalogWrite<'a> {
    guard: RwLockWriteGuard<'a, Catalog>,
    store: &'a Store,
    /// The operation changed metadata: its catalog record goes with it.
    meta_changed: bool,
}

impl CatalogWrite<'_> {
    /// Marks a change to databases, containers' settings, offers or users.
    pub(super) fn meta_changed(&mut self) {
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
            change_feed_retention: DEFAULT_RETENTION_SECONDS,
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

    pub(super) fn read(&self) -> RwLockReadGuard<'_, Catalog> {
        self.catalog.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The catalog for a change; refused once the data directory could
    /// not be written (nothing more is acknowledged that is not kept).
    pub(super) fn write(&self) -> ApiResult<CatalogWrite<'_>> {
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

    pub(super) fn wrote(&self) {
        self.lsn.fetch_add(1, Ordering::AcqRel);
    }
}
