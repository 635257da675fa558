//! Snapshots that bound the log: when it outgrows the last snapshot (its
//! size, and over [`COMPACT_AT_LEAST`]), or on `POST /_emulator/compact`,
//! the state is captured under the write lock, a new log generation
//! starts, and the snapshot is written beside, outside the lock.
//!
//! [`COMPACT_AT_LEAST`]: super::journal::COMPACT_AT_LEAST

use std::sync::atomic::Ordering;
use std::time::Instant;

use serde::Serialize;

use super::super::image::Image;
use super::super::Store;
use super::journal::{unavailable, Durable};
use crate::protocol::error::{ApiError, ApiResult};

/// What `POST /_emulator/compact` reports.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Compaction {
    pub generation: u64,
    pub snapshot_bytes: u64,
    pub log_bytes_before: u64,
    /// The whole compaction (mostly writing and syncing the snapshot).
    pub millis: f64,
    /// The part under the store's write lock (capturing the state), during
    /// which requests wait.
    pub locked_millis: f64,
}

impl Store {
    /// Compacts logs from `bytes` on (tests; see `COMPACT_AT_LEAST`),
    /// after [`Self::open_data_dir`]; without a data directory there is
    /// nothing to compact, and this changes nothing.
    pub fn with_compaction_at_least(mut self, bytes: u64) -> Self {
        if let Some(durable) = self.durable.as_mut() {
            durable.compact_at_least = bytes;
        }
        self
    }

    /// Writes the state as a snapshot and starts a new log generation.
    pub fn compact(&self) -> ApiResult<Compaction> {
        let Some(durable) = &self.durable else {
            return Err(ApiError::bad_request(
                "There is nothing to compact: the emulator was started without --data-dir.",
            ));
        };
        let journal = &durable.journal;
        let _one_at_a_time = durable.compacting.lock().unwrap_or_else(|e| e.into_inner());
        let started = Instant::now();
        journal.sync_log().map_err(|e| unavailable(&e))?;
        let locking = Instant::now();
        let (generation, log_bytes_before, locked, image) = {
            let catalog = self.write()?;
            let (_, log_bytes_before) = journal.log_size();
            let image = Image::capture(&catalog, self.clock.is_manual().then(|| self.clock.now()));
            let generation = journal.start_generation().map_err(|e| unavailable(&e))?;
            drop(catalog);
            let locked = locking.elapsed();
            (generation, log_bytes_before, locked, image)
        };
        let session = self.session_lsn() + 1;
        let snapshot_bytes = journal
            .write_snapshot(generation, |out| image.write(session, out))
            .map_err(|e| unavailable(&e))?;
        durable
            .snapshot_bytes
            .store(snapshot_bytes, Ordering::Release);
        let report = Compaction {
            generation,
            snapshot_bytes,
            log_bytes_before,
            millis: started.elapsed().as_secs_f64() * 1e3,
            locked_millis: locked.as_secs_f64() * 1e3,
        };
        tracing::info!(?report, "compacted the data directory");
        Ok(report)
    }

    /// Whether the log has outgrown the last snapshot (see the module comment).
    pub fn compaction_due(&self) -> bool {
        self.durable.as_ref().is_some_and(Durable::compaction_due)
    }

    /// Compacts if [`Self::compaction_due`] and no compaction runs: called
    /// after requests, off the request's thread.
    pub fn compact_if_due(&self) {
        let Some(durable) = &self.durable else {
            return;
        };
        // Busy means a compaction runs; a lock poisoned by one that
        // panicked is free, as everywhere (`compact` recovers it too).
        let running = matches!(
            durable.compacting.try_lock(),
            Err(std::sync::TryLockError::WouldBlock)
        );
        if !durable.compaction_due() || running {
            return;
        }
        if let Err(e) = self.compact() {
            tracing::error!(error = %e.message, "the automatic compaction failed");
        }
    }
}
