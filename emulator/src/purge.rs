//! The background purge (R5: physical deletion happens later, in the
//! background). Like mini-redis's purge task: delete what is due, then sleep
//! until the next expiry instant or until woken by a write with an earlier
//! one, or by the manual clock moving. Deletion goes in small batches so
//! that reads keep flowing while a million items are purged.

use std::sync::Arc;
use std::time::Duration;

use crate::store::Store;

/// Items deleted per hold of the store's lock.
pub const BATCH: usize = 1024;

pub async fn run(store: Arc<Store>) {
    loop {
        let (purged, next) = store.purge_batch(BATCH);
        if purged == BATCH {
            tokio::task::yield_now().await;
            continue;
        }
        if purged > 0 {
            tracing::debug!(purged, "purged expired items");
        }
        match next.and_then(|at| store.clock.wall_time_until(at)) {
            // `_ts` is whole seconds: wake just after the due second begins.
            Some(wait) => {
                tokio::select! {
                    _ = store.purge_wakeup() => {}
                    _ = tokio::time::sleep(wait + Duration::from_millis(1)) => {}
                }
            }
            None => store.purge_wakeup().await,
        }
    }
}
