//! The background purge (R5: physical deletion happens later, in the
//! background). Like mini-redis's purge task: delete what is due, then sleep
//! until the next expiry instant or until woken by a write with an earlier
//! one, or by the manual clock moving.
//!
//! Deleting is blocking work under the store's write lock, so it runs on
//! tokio's blocking pool, never on one of the (few) threads that serve
//! requests; it goes in small batches with a pause between them, because
//! the store's lock prefers writers and readers waiting on it must get in
//! between two batches. Reads stay fast while a million items are purged.

use std::sync::Arc;
use std::time::Duration;

use crate::data::store::Store;

/// Items deleted per hold of the store's lock (well under a millisecond).
pub const BATCH: usize = 512;

/// The pause between two batches, in which waiting requests take the lock.
const PAUSE: Duration = Duration::from_micros(50);

pub async fn run(store: Arc<Store>) {
    loop {
        let worker = store.clone();
        let next = match tokio::task::spawn_blocking(move || purge_due(&worker)).await {
            Ok(next) => next,
            Err(e) if e.is_panic() => {
                // A bug, not a reason to stop deleting expired items for good:
                // log it and try again shortly (reads hide expired items meanwhile).
                tracing::error!(error = %e, "the background purge panicked; retrying in a second");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
            Err(_) => return, // the runtime is shutting down
        };
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

/// Deletes everything due now, batch by batch; returns the next expiry instant.
fn purge_due(store: &Store) -> Option<i64> {
    let mut total = 0;
    loop {
        let (purged, next) = store.purge_batch(BATCH);
        total += purged;
        if purged < BATCH {
            if total > 0 {
                tracing::debug!(purged = total, "purged expired items");
            }
            return next;
        }
        std::thread::sleep(PAUSE);
    }
}
