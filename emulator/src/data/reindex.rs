//! The index transformation task: after a container's indexing policy
//! changes, its path indexes in use are rebuilt in the background, as the
//! service re-indexes in the background and reports its progress in
//! `x-ms-documentdb-collection-index-transformation-progress`.
//!
//! Like the purge (`purge.rs`): blocking work under the store's write
//! lock, on tokio's blocking pool, in chunks with a pause between them so
//! that waiting requests take the lock. Queries scan the paths being
//! rebuilt meanwhile, with the same answers.

use std::sync::Arc;
use std::time::Duration;

use crate::data::store::Store;

/// Items indexed per hold of the store's lock (well under a millisecond
/// for the few paths a container's queries use).
pub const CHUNK: usize = 2048;

/// The pause between two chunks, in which waiting requests take the lock.
const PAUSE: Duration = Duration::from_micros(50);

pub async fn run(store: Arc<Store>) {
    loop {
        store.reindex_wakeup().await;
        loop {
            let worker = store.clone();
            match tokio::task::spawn_blocking(move || worker.reindex_chunk(CHUNK)).await {
                Ok(true) => tokio::time::sleep(PAUSE).await,
                Ok(false) => break,
                Err(e) if e.is_panic() => {
                    // A bug: log it and go on serving (queries scan the paths).
                    tracing::error!(error = %e, "the index transformation panicked");
                    break;
                }
                Err(_) => return, // the runtime is shutting down
            }
        }
    }
}
