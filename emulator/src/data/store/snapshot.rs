//! A named in-memory snapshot of the whole account: what it holds (the
//! account's image, as the data directory's snapshots hold it) and what the
//! control API reports of it. Taking and restoring one are `account.rs`'s.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use super::image::Image;

/// What a snapshot holds, as the control API reports it.
#[derive(Debug, Clone, Serialize)]
pub struct SnapshotSummary {
    pub name: String,
    pub databases: usize,
    pub containers: usize,
    pub items: usize,
    /// The emulator's clock when it was taken.
    pub now: i64,
}

/// A named snapshot.
#[derive(Debug)]
pub struct Snapshot {
    pub(super) image: Image,
    pub(super) summary: SnapshotSummary,
}

/// The longest snapshot name.
pub const MAX_SNAPSHOT_NAME: usize = 128;

/// The named snapshots the store keeps, by name.
pub type Snapshots = std::sync::Mutex<BTreeMap<String, Arc<Snapshot>>>;
