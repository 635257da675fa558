//! The store's side of the index transformation (`crate::data::reindex`): a new
//! indexing policy rebuilds a container's path indexes in chunks, each
//! under one short hold of the write lock.

use super::Store;
use crate::protocol::error::ApiResult;

impl Store {
    /// Indexes the next `chunk` items of the first container with a
    /// rebuild under way; returns whether any rebuild goes on. Nothing is
    /// done once the data directory failed (queries scan meanwhile).
    pub fn reindex_chunk(&self, chunk: usize) -> bool {
        let Ok(mut catalog) = self.write() else {
            return false;
        };
        catalog
            .databases
            .values_mut()
            .flat_map(|db| db.containers.values_mut())
            .any(|c| c.reindex_chunk(chunk))
    }

    /// Resolves when a policy change has started a rebuild.
    pub(crate) async fn reindex_wakeup(&self) {
        self.reindex_wakeup.notified().await
    }

    /// The container's index transformation progress, in percent.
    pub fn index_transformation_progress(&self, database: &str, container: &str) -> ApiResult<u8> {
        self.with_container(database, container, |c, _| {
            Ok(c.index_transformation_progress())
        })
    }
}
