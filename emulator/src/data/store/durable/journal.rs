//! What the store keeps only with a data directory: the journal an
//! operation's records are written ahead to, one frame as its write lock is
//! released, and what compacting the journal needs (`compaction.rs`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::super::catalog::Catalog;
use super::super::image::Image;
use super::super::records::Record;
use super::meta::WrittenMeta;
use crate::data::persist::Journal;
use crate::protocol::error::{ApiError, ApiResult, Status};

/// The log is compacted once it is larger than the last snapshot and at
/// least this big: start-up then reads at most about twice the live data
/// (a rewrite of the live data per its size in new log, as the price).
pub const COMPACT_AT_LEAST: u64 = 64 << 20;

/// What the store keeps only with a data directory: the journal, and what
/// compacting it and journaling only changed metadata need. The store holds
/// one (`Store::durable`) once `Store::open_data_dir` (`recovery.rs`) has read the
/// directory back; without one it keeps everything in memory only.
pub(in crate::data::store) struct Durable {
    /// Where changes are written ahead.
    pub(super) journal: Arc<Journal>,
    /// The size of the last snapshot (the log is compacted past it).
    pub(super) snapshot_bytes: AtomicU64,
    /// The least log size compacted ([`COMPACT_AT_LEAST`]).
    pub(super) compact_at_least: u64,
    /// Held while a compaction runs.
    pub(super) compacting: Mutex<()>,
    /// The metadata the journal holds, to journal only what changes.
    pub(super) written_meta: Mutex<WrittenMeta>,
}

impl Durable {
    pub(in crate::data::store) fn journal(&self) -> &Arc<Journal> {
        &self.journal
    }

    /// Refuses a change once the data directory could not be written:
    /// nothing more is acknowledged that is not kept.
    pub(in crate::data::store) fn check_writable(&self) -> ApiResult<()> {
        if self.journal.has_failed() {
            return Err(unavailable(&format!(
                "a write to {} failed",
                self.journal.dir().path().display()
            )));
        }
        Ok(())
    }

    /// Commits an operation's records as one frame (as its write lock is
    /// released), with the pieces of `catalog`'s metadata that changed if
    /// the operation changed any; `session` is the session LSN it brings
    /// the store to (or more).
    pub(in crate::data::store) fn commit(
        &self,
        catalog: &Catalog,
        meta_changed: bool,
        session: u64,
    ) {
        if meta_changed {
            let pieces = catalog.meta_pieces();
            let changed = self
                .written_meta
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .diff(pieces);
            for record in changed {
                self.journal.record(|out| record.encode(out));
            }
        }
        self.journal.commit(&session.to_le_bytes());
    }

    /// Writes ahead that the account became `fresh` (a reset or a restore,
    /// `account.rs`): a reset, then the image of the catalog as it now is,
    /// and the metadata the journal holds is exactly that image's.
    pub(in crate::data::store) fn reset_to(&self, fresh: &Catalog, clock: Option<i64>) {
        let written = Image::capture(fresh, None);
        self.journal
            .record(|out| Record::Reset { clock }.encode(out));
        for record in written.records() {
            self.journal.record(|out| record.encode(out));
        }
        let mut held = self.written_meta.lock().unwrap_or_else(|e| e.into_inner());
        *held = WrittenMeta::default();
        held.diff(written.meta);
    }

    /// Whether the log has outgrown the last snapshot (see the module comment).
    pub(super) fn compaction_due(&self) -> bool {
        let log_bytes = self.journal.log_bytes();
        log_bytes >= self.compact_at_least
            && log_bytes > self.snapshot_bytes.load(Ordering::Acquire)
    }
}

/// The answer to a request when the data directory cannot be written.
pub fn unavailable(e: &dyn std::fmt::Display) -> ApiError {
    ApiError::new(
        Status::SERVICE_UNAVAILABLE,
        format!(
            "The emulator cannot write to its data directory ({e}); it refuses writes until it is \
             restarted, so that nothing is acknowledged that is not kept. See its log."
        ),
    )
}
